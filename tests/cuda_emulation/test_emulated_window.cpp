// The CUDA pooling and pad kernels' own source on host threads (emulation.h) against the CPU
// backend. The windows and source maps the infer steps hand the kernels are written out here
// for the cases tested (window_ops.cpp only fetches them to the device): 3x3 stride 2 pad 1
// max and average pooling over NHWC (the packed channels-last kernel, with and without
// indices) and NCHW, nearest and bilinear upsampling, and constant padding of an NHWC tensor.
#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include <layoutguard/layoutguard.h>

#include "cuda/geometry.h"
#include "cuda/kernels/launch.h"
#include "support/op_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;
namespace kernels = lg::cuda::kernels;
using lg::cuda::detail::view5;

// Windows of kernel k, stride s, padding p over n positions: [begin, end) clamped to the input,
// and the count of the window clipped to the padded input (count_include_pad).
struct Windows {
  std::vector<int64_t> begin, end, count;
};
Windows windows(int64_t n, int64_t k, int64_t s, int64_t p) {
  Windows w;
  const int64_t outputs = (n + 2 * p - k) / s + 1;
  for (int64_t o = 0; o < outputs; ++o) {
    const int64_t start = o * s - p, stop = start + k;
    w.begin.push_back(std::max<int64_t>(start, 0));
    w.end.push_back(std::min<int64_t>(stop, n));
    w.count.push_back(std::min<int64_t>(stop, n + p) - start);
  }
  return w;
}

}  // namespace

TEST_SUITE("cuda-emulation") {

TEST_CASE("emulated max and average pooling equal the CPU's, NHWC packed and NCHW") {
  for (MemoryFormat fmt : {MemoryFormat::ChannelsLast, MemoryFormat::Contiguous})
    for (lg::DType dt : {lg::kFloat32, lg::kFloat16})
      for (bool max : {true, false})
        for (bool with_indices : {false, true}) {
          if (!max && with_indices) continue;
          CAPTURE(fmt);
          CAPTURE(dt);
          CAPTURE(max);
          CAPTURE(with_indices);
          const Tensor x = noise_in({2, 16, 9, 11}, fmt, lg::kFloat32, 61).to(dt);
          Tensor want, want_indices;
          if (max && with_indices) std::tie(want, want_indices) = lg::max_pool2d_with_indices(x, {3}, {2}, {1});
          else if (max) want = lg::max_pool2d(x, {3}, {2}, {1});
          else want = lg::avg_pool2d(x, {3}, {2}, {1});
          const Tensor out = lg::empty_like(want);
          const Tensor indices = with_indices ? lg::empty_like(want_indices) : Tensor();
          const Windows depth{{0}, {1}, {1}}, rows = windows(9, 3, 2, 1), cols = windows(11, 3, 2, 1);
          kernels::PoolArgs a;
          a.out = view5(out.unsqueeze(2));
          a.in = view5(x.unsqueeze(2));
          a.out_data = static_cast<char*>(out.data_ptr());
          a.in_data = static_cast<const char*>(x.data_ptr());
          if (with_indices) {
            a.idx = view5(indices.unsqueeze(2));
            a.indices = static_cast<int64_t*>(indices.data_ptr());
          }
          const Windows* per_dim[3] = {&depth, &rows, &cols};
          for (int i = 0; i < 3; ++i) {
            a.begin[i] = per_dim[i]->begin.data();
            a.end[i] = per_dim[i]->end.data();
            a.count[i] = max ? nullptr : per_dim[i]->count.data();
          }
          a.max = max;
          REQUIRE(kernels::pool(a, lg::cuda::detail::scalar_type(dt), nullptr) == cudaSuccess);
          check_close(values(out), values(want), tol_for(dt));
          if (with_indices) CHECK(values(indices) == values(want_indices));
        }
}

TEST_CASE("emulated nearest and bilinear upsampling equal the CPU's, NHWC and NCHW") {
  // Per output position of each dim, the taps the infer step would hand the kernel: nearest
  // floor(o * in / out); bilinear (align_corners false) the two neighbours of
  // (o + 0.5) * in / out - 0.5, clamped at 0, weighted by distance.
  struct Taps {
    int taps = 1;
    std::vector<int64_t> index;
    std::vector<double> weight;
  };
  const auto taps_for = [](int64_t in, int64_t out, bool linear) {
    Taps t;
    t.taps = linear ? 2 : 1;
    const double scale = static_cast<double>(in) / static_cast<double>(out);
    for (int64_t o = 0; o < out; ++o) {
      if (!linear) {
        t.index.push_back(std::min<int64_t>(static_cast<int64_t>(static_cast<double>(o) * scale), in - 1));
        t.weight.push_back(1.0);
        continue;
      }
      const double src = std::max(0.0, (static_cast<double>(o) + 0.5) * scale - 0.5);
      const int64_t i0 = std::min<int64_t>(static_cast<int64_t>(src), in - 1), i1 = std::min<int64_t>(i0 + 1, in - 1);
      const double w1 = src - static_cast<double>(i0);
      t.index.insert(t.index.end(), {i0, i1});
      t.weight.insert(t.weight.end(), {1.0 - w1, w1});
    }
    return t;
  };
  for (MemoryFormat fmt : {MemoryFormat::ChannelsLast, MemoryFormat::Contiguous})
    for (bool linear : {false, true}) {
      CAPTURE(fmt);
      CAPTURE(linear);
      const Tensor x = noise_in({2, 6, 5, 7}, fmt, lg::kFloat32, 63);
      const Tensor want = linear ? lg::upsample_bilinear2d(x, {9, 16}, false) : lg::upsample_nearest2d(x, {9, 16});
      const Tensor out = lg::empty_like(want);
      const Taps depth{1, {0}, {1.0}}, rows = taps_for(5, 9, linear), cols = taps_for(7, 16, linear);
      kernels::InterpArgs a;
      a.out = view5(out.unsqueeze(2));
      a.in = view5(x.unsqueeze(2));
      a.out_data = static_cast<char*>(out.data_ptr());
      a.in_data = static_cast<const char*>(x.data_ptr());
      const Taps* per_dim[3] = {&depth, &rows, &cols};
      for (int i = 0; i < 3; ++i) {
        a.taps[i] = per_dim[i]->taps;
        a.index[i] = per_dim[i]->index.data();
        a.weight[i] = per_dim[i]->weight.data();
      }
      REQUIRE(kernels::upsample(a, kernels::ScalarType::Float32, nullptr) == cudaSuccess);
      check_close(values(out), values(want), tol_for(lg::kFloat32));
    }
}

TEST_CASE("emulated constant pad of an NHWC tensor equals the CPU's") {
  const Tensor x = noise_in({2, 5, 4, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 62);
  const Tensor want = lg::pad(x, {1, 2, 3, 0}, "constant", 0.5);  // W: 1 left, 2 right; H: 3 top
  const Tensor out = lg::empty_like(want);
  kernels::PadArgs a;
  a.rank = 4;
  a.numel = out.numel();
  a.out_data = static_cast<char*>(out.data_ptr());
  a.in_data = static_cast<const char*>(x.data_ptr());
  const int64_t before[4] = {0, 0, 3, 1};
  std::vector<std::vector<int64_t>> source(4);
  for (int d = 0; d < 4; ++d) {
    a.out_size[d] = out.size(d);
    a.out_stride[d] = out.stride(d);
    a.in_stride[d] = x.stride(d);
    for (int64_t o = 0; o < out.size(d); ++o) {
      const int64_t i = o - before[d];
      source[static_cast<size_t>(d)].push_back(i >= 0 && i < x.size(d) ? i : -1);
    }
    a.source[d] = source[static_cast<size_t>(d)].data();
  }
  const float fill = 0.5f;
  std::memcpy(&a.fill_bits, &fill, sizeof(fill));
  REQUIRE(kernels::pad(a, 4, nullptr) == cudaSuccess);
  CHECK(values(out) == values(want));
}

}  // TEST_SUITE

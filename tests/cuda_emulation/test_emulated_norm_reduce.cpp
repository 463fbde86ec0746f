// The CUDA reduction, softmax and batch-norm kernels' own source on host threads (emulation.h)
// against the CPU backend. Reductions and softmax take their arguments from the builders the
// device path uses (cuda/geometry.cpp); the norms' are built as src/cuda/norm_ops.cpp builds
// them (that file needs the CUDA runtime, so it is not compiled here); the batch-norm case runs
// the device path's launch sequence: channel sums, squared deviations, statistics with the
// running-stat update, affine map.
#include <cmath>
#include <string>
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

// The dims of x before `outer` index the groups, the rest a group's elements, as norm_ops.cpp
// splits them; the output is empty_like(x), so it has x's strides.
// The view norm_ops.cpp builds: dims before `outer` index the groups; `out` (x itself when
// undefined) gives the output strides.
kernels::GroupedView grouped_view(const Tensor& x, int outer, const Tensor& out = Tensor()) {
  const Tensor& y = out.defined() ? out : x;
  kernels::GroupedView v;
  v.groups = 1;
  v.inner_count = 1;
  for (int d = 0; d < static_cast<int>(x.dim()); ++d) {
    const bool inner = d >= outer;
    int& dims = inner ? v.inner_dims : v.outer_dims;
    (inner ? v.inner_size : v.outer_size)[dims] = x.size(d);
    (inner ? v.inner_stride : v.outer_stride)[dims] = x.stride(d);
    (inner ? v.inner_out_stride : v.outer_out_stride)[dims] = y.stride(d);
    ++dims;
    (inner ? v.inner_count : v.groups) *= x.size(d);
  }
  return v;
}

}  // namespace

TEST_SUITE("cuda-emulation") {

TEST_CASE("emulated sum, mean, amax and amin over NHWC and NCHW inputs equal the CPU's") {
  for (MemoryFormat fmt : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast})
    for (lg::DType dt : {lg::kFloat32, lg::kFloat16})
      for (const std::vector<int64_t>& dims : {std::vector<int64_t>{2, 3}, {1}, {0, 2}, {0, 1, 2, 3}}) {
        CAPTURE(fmt);
        CAPTURE(dt);
        CAPTURE(lg::to_string(dims));
        const Tensor x = noise_in({3, 10, 6, 5}, fmt, lg::kFloat32, 51).to(dt);
        const std::vector<std::pair<kernels::ReduceOp, Tensor>> cases{
            {kernels::ReduceOp::Sum, lg::sum(x, dims, true)},
            {kernels::ReduceOp::Mean, lg::mean(x, dims, true)},
            {kernels::ReduceOp::Max, lg::amax(x, dims, true)},
            {kernels::ReduceOp::Min, lg::amin(x, dims, true)}};
        for (const auto& [op, want] : cases) {
          const Tensor out = lg::empty_like(want);
          kernels::ReduceArgs a = lg::cuda::detail::reduce_args(out, x);
          a.op = op;
          REQUIRE(kernels::reduce(a, lg::cuda::detail::scalar_type(dt), nullptr) == cudaSuccess);
          check_close(values(out), values(want), tol_for(dt));
        }
      }
}

TEST_CASE("emulated reductions to few outputs over many elements (one block per output) equal the CPU's") {
  // 1,920 elements per output when everything but C is reduced; 7,680 for a full reduction;
  // integers and a NaN too (it wins max and min, as on the CPU).
  for (MemoryFormat fmt : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast})
    for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kInt64, lg::kInt32})
      for (const std::vector<int64_t>& dims : {std::vector<int64_t>{0, 2, 3}, {0, 1, 2, 3}, {2, 3}}) {
        CAPTURE(fmt);
        CAPTURE(dt);
        CAPTURE(lg::to_string(dims));
        Tensor x = noise_in({4, 4, 24, 20}, fmt, lg::kFloat32, 52);
        x = lg::is_floating_point(dt) ? x.to(dt) : lg::mul(x, 100).to(dt);
        const bool floating = lg::is_floating_point(dt);
        if (floating && dims.size() == 3) x.select(1, 2).select(1, 7).select(1, 3).fill_(std::nan(""));
        std::vector<std::pair<kernels::ReduceOp, Tensor>> cases{{kernels::ReduceOp::Sum, lg::sum(x, dims, true)},
                                                                {kernels::ReduceOp::Max, lg::amax(x, dims, true)},
                                                                {kernels::ReduceOp::Min, lg::amin(x, dims, true)}};
        if (floating) cases.emplace_back(kernels::ReduceOp::Mean, lg::mean(x, dims, true));
        for (const auto& [op, want] : cases) {
          CAPTURE(static_cast<int>(op));
          // As the op does: the kernel reads the output's dtype (an integer sum is int64).
          const Tensor in = x.to(want.dtype()), out = lg::empty_like(want);
          kernels::ReduceArgs a = lg::cuda::detail::reduce_args(out, in);
          REQUIRE(a.count >= 256);  // the block-per-output path
          a.op = op;
          REQUIRE(kernels::reduce(a, lg::cuda::detail::scalar_type(in.dtype()), nullptr) == cudaSuccess);
          const std::vector<double> got = values(out), expected = values(want);
          REQUIRE(got.size() == expected.size());
          for (size_t i = 0; i < got.size(); ++i) {
            CAPTURE(i);
            if (std::isnan(expected[i])) CHECK(std::isnan(got[i]));
            else if (floating) CHECK(std::abs(got[i] - expected[i]) <= 2e-2 * (1 + std::abs(expected[i])));
            else CHECK(got[i] == expected[i]);
          }
        }
      }
}

TEST_CASE("emulated softmax and log_softmax along every dim of an NHWC tensor equal the CPU's") {
  const Tensor x = lg::mul(noise_in({2, 7, 4, 5}, MemoryFormat::ChannelsLast, lg::kFloat32, 52), 4.0);
  for (int64_t dim = 0; dim < 4; ++dim)
    for (bool log : {false, true}) {
      CAPTURE(dim);
      CAPTURE(log);
      const Tensor want = log ? lg::log_softmax(x, dim) : lg::softmax(x, dim);
      const Tensor out = lg::empty_like(want);
      REQUIRE(kernels::softmax(lg::cuda::detail::softmax_args(out, x, dim, log), kernels::ScalarType::Float32, nullptr) ==
              cudaSuccess);
      check_close(values(out), values(want), tol_for(lg::kFloat32));
    }
}

TEST_CASE("emulated training batch norm (sums, squares, statistics, affine) equals the CPU's, NHWC and NCHW") {
  for (MemoryFormat fmt : {MemoryFormat::ChannelsLast, MemoryFormat::Contiguous})
    for (lg::DType dt : {lg::kFloat32, lg::kFloat16}) {
      CAPTURE(fmt);
      CAPTURE(dt);
      // 40 channels: a partial 32-channel block in the channels-innermost sums kernel.
      const Tensor x = lg::add(noise_in({3, 40, 9, 7}, fmt, lg::kFloat32, 53), 2.0).to(dt);
      const Tensor w = lg::rand({40}), b = lg::randn({40});
      Tensor rm_cpu = lg::randn({40}), rv_cpu = lg::add(lg::rand({40}), 0.5);
      Tensor rm = rm_cpu.clone(), rv = rv_cpu.clone();
      const Tensor want = lg::batch_norm(x, w, b, rm_cpu, rv_cpu, true, 0.1, 1e-5);

      kernels::ChannelAffine a;
      a.numel = x.numel();
      a.channels = 40;
      a.channels_innermost = fmt == MemoryFormat::ChannelsLast;
      a.inner = 9 * 7;
      const Tensor out = lg::empty_like(x);
      const Tensor sums = lg::zeros({2, 40}, lg::kFloat64), coefficients = lg::empty({2, 40});
      double* sum = static_cast<double*>(sums.data_ptr());
      const char* in = static_cast<const char*>(x.data_ptr());
      const kernels::ScalarType type = lg::cuda::detail::scalar_type(dt);
      const double count = static_cast<double>(x.numel() / 40);
      REQUIRE(kernels::channel_sums(a, in, type, nullptr, 0.0, 1, sum, nullptr) == cudaSuccess);
      REQUIRE(kernels::channel_sums(a, in, type, sum, 1.0 / count, 2, sum + 40, nullptr) == cudaSuccess);
      kernels::BatchStatistics st;
      st.channels = 40;
      st.count = count;
      st.sums = sum;
      st.squares = sum + 40;
      st.running_mean = rm.data_ptr();
      st.running_var = rv.data_ptr();
      st.w = w.data_ptr();
      st.b = b.data_ptr();
      st.scale = static_cast<float*>(coefficients.data_ptr());
      st.shift = st.scale + 40;
      REQUIRE(kernels::batch_statistics(st, kernels::ScalarType::Float32, nullptr) == cudaSuccess);
      REQUIRE(kernels::channel_affine(a, in, static_cast<char*>(out.data_ptr()), type, st.scale, st.shift, nullptr) ==
              cudaSuccess);
      check_close(values(out), values(want), tol_for(dt));
      check_close(values(rm), values(rm_cpu), tol_for(lg::kFloat32));
      check_close(values(rv), values(rv_cpu), tol_for(lg::kFloat32));
    }
}

TEST_CASE("emulated group moments and group affine give group_norm and layer_norm of an NHWC tensor") {
  // As norm_ops.cpp runs them: sums, squared deviations from the mean, then the affine map with
  // the statistics made on the host. Outer dims are the groups, inner dims a group's elements.
  const Tensor x = lg::add(noise_in({2, 6, 5, 7}, MemoryFormat::ChannelsLast, lg::kFloat32, 55), 1.5);
  for (int outer : {2, 1}) {  // (N, C) groups: instance statistics; (N) groups: layer statistics
    CAPTURE(outer);
    const kernels::GroupedView v = grouped_view(x, outer);
    const char* in = static_cast<const char*>(x.data_ptr());
    std::vector<double> sums(static_cast<size_t>(v.groups)), squares(sums.size()), scale(sums.size());
    REQUIRE(kernels::group_moments(v, in, kernels::ScalarType::Float32, nullptr, 1, sums.data(), nullptr) == cudaSuccess);
    std::vector<double> mean(sums.size());
    for (size_t g = 0; g < sums.size(); ++g) mean[g] = sums[g] / static_cast<double>(v.inner_count);
    REQUIRE(kernels::group_moments(v, in, kernels::ScalarType::Float32, mean.data(), 2, squares.data(), nullptr) ==
            cudaSuccess);
    for (size_t g = 0; g < sums.size(); ++g)
      scale[g] = 1.0 / std::sqrt(squares[g] / static_cast<double>(v.inner_count) + 1e-5);
    const Tensor out = lg::empty_like(x);
    Tensor want;
    std::vector<double> w, b;
    if (outer == 2) {
      want = lg::group_norm(x, 6);
    } else {
      const Tensor weight = lg::rand({6, 5, 7}), bias = lg::randn({6, 5, 7});
      want = lg::layer_norm(x, {6, 5, 7}, weight, bias);
      w = values(weight);  // the inner elements in row-major (C, H, W) order, as the kernel reads j
      b = values(bias);
    }
    REQUIRE(kernels::group_affine(v, in, static_cast<char*>(out.data_ptr()), kernels::ScalarType::Float32, mean.data(),
                                  scale.data(), nullptr, w.empty() ? nullptr : w.data(), b.empty() ? nullptr : b.data(),
                                  nullptr) == cudaSuccess);
    check_close(values(out), values(want), tol_for(lg::kFloat32));
  }
}

TEST_CASE("emulated group_normalize: group_norm, instance_norm and layer_norm entirely on the device") {
  // The three launches norm_ops.cpp makes for these ops, with host buffers for device ones: in
  // NDHWC (lanes over adjacent channels) and NCDHW (lanes over a plane's elements), with maps
  // small enough for one chunk per plane and large enough for several, into an output of the
  // input's layout and of the other one. The (1, 6, 1, 64, 40) map in NDHWC gives group norm
  // with one group 20 chunks of 6 planes, more partial sums than a thread per statistic takes.
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{2, 6, 1, 5, 7}, {2, 6, 1, 40, 7}, {1, 6, 1, 64, 40}})
    for (MemoryFormat fmt : {MemoryFormat::ChannelsLast3d, MemoryFormat::Contiguous})
      for (bool other_out : {false, true}) {
        const std::string shape_text = lg::to_string(shape);
        CAPTURE(shape_text);
        CAPTURE(fmt);
        CAPTURE(other_out);
        const std::vector<int64_t> per_sample(shape.begin() + 1, shape.end());
        const Tensor x = lg::add(noise_in(shape, fmt, lg::kFloat32, 56), 0.5);
        const Tensor w = lg::rand({6}), b = lg::randn({6});
        struct Case {
          std::string name;
          int outer;
          int64_t per_stat;
          Tensor want;
        };
        const Tensor x4 = x.squeeze(2);
        const Tensor lw = lg::rand(per_sample), lb = lg::randn(per_sample);
        const Tensor aw = lg::rand(shape), ab = lg::randn(shape);
        const std::vector<Case> cases{
            {"group_norm, 1 group", 2, 6, lg::group_norm(x4, 1, w, b).unsqueeze(2)},
            {"group_norm, 2 groups", 2, 3, lg::group_norm(x4, 2, w, b).unsqueeze(2)},
            {"instance_norm", 2, 1, lg::group_norm(x4, 6, w, b).unsqueeze(2)},
            {"layer_norm", 1, 1, lg::layer_norm(x, per_sample, lw, lb)},
            {"layer_norm over every dim (no plane dims)", 0, 1, lg::layer_norm(x, shape, aw, ab)},
        };
        const MemoryFormat out_fmt =
            other_out == (fmt == MemoryFormat::Contiguous) ? MemoryFormat::ChannelsLast3d : MemoryFormat::Contiguous;
        for (const Case& c : cases) {
          CAPTURE(c.name);
          const Tensor out = lg::empty(x.sizes(), lg::TensorOptions(), out_fmt);
          const kernels::GroupedView v = grouped_view(x, c.outer, out);
          const bool layer = c.outer <= 1;
          const std::vector<double> pw = values(w), pb = values(b);
          const std::vector<double> iw = values(c.outer == 0 ? aw : lw), ib = values(c.outer == 0 ? ab : lb);
          kernels::GroupNormArgs a;
          a.per_stat = c.per_stat;
          a.channels = layer ? 1 : 6;
          a.plane_w = layer ? nullptr : pw.data();
          a.plane_b = layer ? nullptr : pb.data();
          a.inner_w = layer ? iw.data() : nullptr;
          a.inner_b = layer ? ib.data() : nullptr;
          std::vector<double> workspace(static_cast<size_t>(kernels::group_normalize_workspace(v, a)));
          REQUIRE(workspace.size() >= static_cast<size_t>(v.groups + 2 * v.groups / c.per_stat));
          a.workspace = workspace.data();
          a.workspace_doubles = static_cast<int64_t>(workspace.size());
          REQUIRE(kernels::group_normalize(v, static_cast<const char*>(x.data_ptr()), static_cast<char*>(out.data_ptr()),
                                           kernels::ScalarType::Float32, a, nullptr) == cudaSuccess);
          check_close(values(out), values(c.want), tol_for(lg::kFloat32));
        }
      }
  // A statistic that does not divide the planes is refused, not read past.
  kernels::GroupNormArgs bad;
  bad.per_stat = 4;
  kernels::GroupedView v;
  v.groups = 6;
  v.inner_count = 1;
  CHECK(kernels::group_normalize(v, nullptr, nullptr, kernels::ScalarType::Float32, bad, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(kernels::group_normalize_workspace(v, bad) == 0);
  CHECK(kernels::group_normalize_lane_width(v, bad, kernels::ScalarType::Float32, nullptr, nullptr) == 0);
  // So is a missing workspace.
  kernels::GroupNormArgs no_workspace;
  CHECK(kernels::group_normalize(v, nullptr, nullptr, kernels::ScalarType::Float32, no_workspace, nullptr) ==
        cudaErrorInvalidValue);
}

TEST_CASE("emulated group_normalize with 16-byte lanes, element by element, and far from zero") {
  // Each case names the lane width group_normalize must pick, so a change to the vector rules
  // that silently fell back to single elements would fail here, not only in the benchmarks.
  struct Case {
    std::string name;
    Tensor x;
    int64_t groups;
    int lane_width;
  };
  const Tensor wide = noise_in({2, 17, 6, 5}, MemoryFormat::ChannelsLast, lg::kFloat32, 61);
  const std::vector<Case> cases{
      // 16 channels in NHWC float16: a lane takes 8 adjacent channels (planes) per load.
      {"float16 NHWC, 16 channels", noise_in({3, 16, 5, 6}, MemoryFormat::ChannelsLast, lg::kFloat16, 62), 4, 8},
      // 12 channels: 8 do not divide them, 4 do.
      {"float16 NHWC, 12 channels", noise_in({2, 12, 3, 7}, MemoryFormat::ChannelsLast, lg::kFloat16, 63), 3, 4},
      // NCHW rows of 8 x 4 = 32 elements: a lane takes 8 consecutive elements of a plane.
      {"bfloat16 NCHW, 32-element planes", noise_in({2, 6, 8, 4}, MemoryFormat::Contiguous, lg::kBFloat16, 64), 2, 8},
      {"float32 NHWC, 8 channels", noise_in({2, 8, 9, 5}, MemoryFormat::ChannelsLast, lg::kFloat32, 65), 2, 4},
      // 16 of 17 channels: the view starts 4 bytes past an aligned address, its rows 17 apart.
      {"float32 NHWC view of 16 of 17 channels", wide.narrow(1, 1, 16), 4, 1},
      // Values near 3000 with a spread of about 1: sums of x and x^2 would lose the spread's
      // low digits to the offset; deviations from the first element do not.
      {"float32 NHWC far from zero", lg::add(noise_in({2, 8, 6, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 66), 3000.0),
       2, 4},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Tensor w = lg::rand({c.x.size(1)}), b = lg::randn({c.x.size(1)});
    const Tensor want = lg::group_norm(c.x.to(lg::kFloat64), c.groups, w.to(lg::kFloat64), b.to(lg::kFloat64));
    const Tensor out = lg::empty(c.x.sizes(), lg::TensorOptions().dtype(c.x.dtype()), c.x.suggest_memory_format());
    const kernels::GroupedView v = grouped_view(c.x, 2, out);
    const std::vector<double> pw = values(w), pb = values(b);
    kernels::GroupNormArgs a;
    a.per_stat = c.x.size(1) / c.groups;
    a.channels = c.x.size(1);
    a.plane_w = pw.data();
    a.plane_b = pb.data();
    const auto type = lg::cuda::detail::scalar_type(c.x.dtype());
    const char* in = static_cast<const char*>(c.x.data_ptr());
    CHECK(kernels::group_normalize_lane_width(v, a, type, in, static_cast<const char*>(out.data_ptr())) == c.lane_width);
    // Chunks of every length down to one element per thread, and one chunk per plane.
    for (int64_t min_per_lane : {1, 3, 8, 1000}) {
      CAPTURE(min_per_lane);
      kernels::set_group_normalize_min_per_lane(min_per_lane);
      std::vector<double> workspace(static_cast<size_t>(kernels::group_normalize_workspace(v, a)));
      a.workspace = workspace.data();
      a.workspace_doubles = static_cast<int64_t>(workspace.size());
      REQUIRE(kernels::group_normalize(v, in, static_cast<char*>(out.data_ptr()), type, a, nullptr) == cudaSuccess);
      check_close(values(out), rounded(values(want), c.x.dtype()), tol_for(c.x.dtype()));
    }
    kernels::set_group_normalize_min_per_lane(0);  // the default again
  }
  // A workspace sized for long chunks is refused once the chunks get shorter, not overrun.
  const Tensor x = noise_in({2, 8, 16, 16}, MemoryFormat::ChannelsLast, lg::kFloat32, 67), out = lg::empty_like(x);
  const kernels::GroupedView v = grouped_view(x, 2, out);
  kernels::GroupNormArgs a;
  a.per_stat = 4;
  a.channels = 8;
  kernels::set_group_normalize_min_per_lane(1000);
  std::vector<double> workspace(static_cast<size_t>(kernels::group_normalize_workspace(v, a)));
  a.workspace = workspace.data();
  a.workspace_doubles = static_cast<int64_t>(workspace.size());
  kernels::set_group_normalize_min_per_lane(1);
  CHECK(static_cast<size_t>(kernels::group_normalize_workspace(v, a)) > workspace.size());
  CHECK(kernels::group_normalize(v, static_cast<const char*>(x.data_ptr()), static_cast<char*>(out.data_ptr()),
                                 kernels::ScalarType::Float32, a, nullptr) == cudaErrorInvalidValue);
  kernels::set_group_normalize_min_per_lane(0);
}

TEST_CASE("emulated evaluation batch norm (coefficients, affine) equals the CPU's") {
  const Tensor x = noise_in({2, 24, 5, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 54).to(lg::kFloat16);
  const Tensor w = lg::rand({24}), b = lg::randn({24}), rm = lg::randn({24}), rv = lg::add(lg::rand({24}), 0.5);
  const Tensor want = lg::batch_norm(x, w, b, rm, rv, false, 0.1, 1e-3);
  kernels::ChannelAffine a;
  a.numel = x.numel();
  a.channels = 24;
  a.channels_innermost = true;
  const Tensor coefficients = lg::empty({2, 24}), out = lg::empty_like(x);
  float* scale = static_cast<float*>(coefficients.data_ptr());
  REQUIRE(kernels::channel_coefficients(24, kernels::ScalarType::Float32, rm.data_ptr(), rv.data_ptr(), w.data_ptr(),
                                        b.data_ptr(), 1e-3, scale, scale + 24, nullptr) == cudaSuccess);
  REQUIRE(kernels::channel_affine(a, static_cast<const char*>(x.data_ptr()), static_cast<char*>(out.data_ptr()),
                                  kernels::ScalarType::Float16, scale, scale + 24, nullptr) == cudaSuccess);
  check_close(values(out), values(want), tol_for(lg::kFloat16));
}

}  // TEST_SUITE

// Convolutions on CUDA (cuDNN) against the CPU kernels: same output strides (one infer step),
// values within the dtype's tolerance, over layouts of input and weight, strides, padding
// (numbers and "same"), dilation, groups, depthwise, bias, 2-D, 3-D and transposed; and the
// example of PyTorch's documentation (Conv2d(8, 4, 3), float16, channels_last).
#include <doctest/doctest.h>

#include <string>

#include "cuda/cuda_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

// cuDNN sums in another order than the CPU GEMM, and float32 may run on TF32 tensor cores
// (10-bit mantissa), as PyTorch allows by default.
Tol conv_device_tol(lg::DType dt) {
  switch (dt) {
    case lg::DType::Float64: return {1e-10, 1e-10};
    case lg::DType::Float32: return {2e-2, 1e-2};
    case lg::DType::Float16: return {3e-2, 1e-2};
    default: return {1e-1, 3e-2};
  }
}

using lg::testing::check_same;
void check_same(const Tensor& got_dev, const Tensor& want) {
  lg::testing::check_same(got_dev, want, conv_device_tol(want.dtype()));
}

struct Case {
  std::string name;
  std::vector<int64_t> x, w;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
};

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("conv2d on CUDA equals the CPU's over layouts, dtypes and parameters") {
  const std::vector<Case> cases{
      {"3x3", {2, 8, 9, 10}, {16, 8, 3, 3}, {1}, {1}, {1}, 1},
      {"1x1", {2, 32, 7, 7}, {64, 32, 1, 1}, {1}, {0}, {1}, 1},
      {"7x7 stride 2", {1, 3, 20, 22}, {8, 3, 7, 7}, {2}, {3}, {1}, 1},
      {"dilation 2", {2, 8, 12, 12}, {8, 8, 3, 3}, {1}, {2}, {2}, 1},
      {"groups 4", {2, 16, 8, 8}, {32, 4, 3, 3}, {1}, {1}, {1}, 4},
      {"depthwise", {2, 16, 9, 9}, {16, 1, 3, 3}, {2}, {1}, {1}, 16},
      {"uneven stride", {1, 8, 11, 13}, {8, 8, 3, 2}, {2, 3}, {1, 0}, {1}, 1},
  };
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16, lg::kFloat64})
    for (const Case& c : cases)
      for (MemoryFormat xf : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast})
        for (MemoryFormat wf : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
          CAPTURE(dt);
          CAPTURE(c.name);
          CAPTURE(xf);
          CAPTURE(wf);
          const Tensor x = noise_in(c.x, xf, lg::kFloat32, 1).to(dt);
          const Tensor w = noise_in(c.w, wf, lg::kFloat32, 2).to(dt);
          const Tensor b = noise_in({c.w[0]}, MemoryFormat::Contiguous, lg::kFloat32, 3).to(dt);
          const Tensor want = lg::conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
          check_same(lg::conv2d(x.cuda(), w.cuda(), b.cuda(), c.stride, c.padding, c.dilation, c.groups), want);
        }
}

TEST_CASE("conv2d on CUDA: padding \"same\" with even kernels, non-dense input, unbatched input") {
  const Tensor x = noise_in({2, 8, 10, 10}, MemoryFormat::ChannelsLast, lg::kFloat32, 4);
  const Tensor w = noise_in({8, 8, 4, 4}, MemoryFormat::ChannelsLast, lg::kFloat32, 5);
  check_same(lg::conv2d(x.cuda(), w.cuda(), std::nullopt, {1}, lg::kSame), lg::conv2d(x, w, std::nullopt, {1}, lg::kSame));
  const Tensor slice = noise_in({2, 16, 10, 10}, MemoryFormat::ChannelsLast, lg::kFloat32, 6).slice(1, 0, 16, 2);
  check_same(lg::conv2d(slice.cuda().slice(1, 0, 8), w.cuda()), lg::conv2d(slice, w));
  const Tensor unbatched = noise_in({8, 10, 10}, MemoryFormat::Contiguous, lg::kFloat32, 7);
  check_same(lg::conv2d(unbatched.cuda(), w.cuda()), lg::conv2d(unbatched, w));
}

TEST_CASE("conv2d on CUDA: an input without elements and an output with some gives the bias, as on the CPU") {
  const Tensor b = noise_in({3}, MemoryFormat::Contiguous, lg::kFloat32, 20);
  // No input channels: every output is the bias (cuDNN refuses a zero dim; it must not see one).
  const Tensor no_channels = lg::zeros({1, 0, 4, 4}), w0 = lg::zeros({3, 0, 3, 3});
  check_same(lg::conv2d(no_channels.cuda(), w0.cuda(), b.cuda()), lg::conv2d(no_channels, w0, b));
  // A zero height that padding turns into rows: zeros plus the bias.
  const Tensor flat = lg::zeros({1, 3, 0, 4}), w1 = noise_in({3, 3, 1, 1}, MemoryFormat::Contiguous, lg::kFloat32, 21);
  const Tensor want = lg::conv2d(flat, w1, b, {1}, {1});
  REQUIRE(want.numel() > 0);
  check_same(lg::conv2d(flat.cuda(), w1.cuda(), b.cuda(), {1}, {1}), want);
}

TEST_CASE("conv3d and the transposed convolutions on CUDA equal the CPU's, channels_last_3d included") {
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16}) {
    CAPTURE(dt);
    for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast3d}) {
      CAPTURE(f);
      const Tensor x = noise_in({2, 4, 5, 6, 7}, f, lg::kFloat32, 8).to(dt);
      const Tensor w = noise_in({6, 4, 3, 3, 3}, f, lg::kFloat32, 9).to(dt);
      check_same(lg::conv3d(x.cuda(), w.cuda(), std::nullopt, {1, 2, 2}, {1}), lg::conv3d(x, w, std::nullopt, {1, 2, 2}, {1}));
      const Tensor wt = noise_in({4, 3, 3, 3, 3}, f, lg::kFloat32, 10).to(dt);
      const Tensor bt = noise_in({6}, MemoryFormat::Contiguous, lg::kFloat32, 11).to(dt);
      check_same(lg::conv_transpose3d(x.cuda(), wt.cuda(), bt.cuda(), {2}, {1}, {1}, 2),
                 lg::conv_transpose3d(x, wt, bt, {2}, {1}, {1}, 2));
    }
    for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
      CAPTURE(f);
      const Tensor x = noise_in({2, 6, 7, 8}, f, lg::kFloat32, 12).to(dt);
      const Tensor w = noise_in({6, 4, 3, 3}, f, lg::kFloat32, 13).to(dt);
      check_same(lg::conv_transpose2d(x.cuda(), w.cuda(), std::nullopt, {2}, {1}, {1}),
                 lg::conv_transpose2d(x, w, std::nullopt, {2}, {1}, {1}));
      const Tensor wg = noise_in({6, 2, 3, 3}, f, lg::kFloat32, 16).to(dt);  // groups 2: C_out = 4
      check_same(lg::conv_transpose2d(x.cuda(), wg.cuda(), std::nullopt, {1}, {0}, {0}, 2),
                 lg::conv_transpose2d(x, wg, std::nullopt, {1}, {0}, {0}, 2));
    }
  }
}

TEST_CASE("PyTorch's convert_conv2d_weight_memory_format example on CUDA: Conv2d(8, 4, 3) in float16 is channels_last") {
  const lg::TensorOptions gpu = lg::TensorOptions().device(lg::Device::cuda(0));
  const Tensor weight = lg::randn({4, 8, 3, 3}).to(lg::kFloat16).to(gpu.device()).to(MemoryFormat::ChannelsLast);
  const Tensor bias = lg::randn({4}).to(lg::kFloat16).to(gpu.device());
  const Tensor input = lg::randint(1, 10, {2, 8, 4, 4}, lg::kFloat32).to(gpu.dtype(lg::kFloat16)).to(MemoryFormat::ChannelsLast);
  const Tensor out = lg::conv2d(input, weight, bias);
  CHECK(out.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(ls(out) == "(2,4,2,2)@(16,1,8,4)");
  check_same(out, lg::conv2d(input.cpu(), weight.cpu(), bias.cpu()));
}

TEST_CASE("the guard on CUDA convolutions: channels_last in, channels_last out, no violation") {
  const Tensor x = noise_in({2, 8, 9, 9}, MemoryFormat::ChannelsLast, lg::kFloat32, 14).cuda();
  const Tensor w = noise_in({8, 8, 3, 3}, MemoryFormat::Contiguous, lg::kFloat32, 15).cuda();
  lg::guard::Scope scope(lg::guard::Mode::Throw);
  CHECK_NOTHROW((void)lg::conv2d(x, w, std::nullopt, {1}, {1}));
}

}

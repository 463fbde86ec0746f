// cuBLAS matrix products, cat and the shuffles on CUDA against the CPU: same strides (one infer
// step), values within the dtype's tolerance; the TF32 switch; integer products name the gap.
#include <doctest/doctest.h>

#include <string>

#include "cuda/cuda_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

// Products of up to 64 terms of [-1, 1) values; TF32 keeps 10 mantissa bits.
Tol gemm_device_tol(lg::DType dt, bool tf32) {
  switch (dt) {
    case lg::DType::Float64: return {1e-12, 1e-12};
    case lg::DType::Float32: return tf32 ? Tol{3e-2, 1e-2} : Tol{1e-4, 1e-5};
    case lg::DType::Float16: return {3e-2, 1e-2};
    default: return {2e-1, 3e-2};
  }
}

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("mm, bmm, addmm, linear and matmul on CUDA equal the CPU's, transposed and broadcast operands included") {
  for (bool tf32 : {true, false}) {
    lg::cuda::set_matmul_allow_tf32(tf32);
    for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16, lg::kFloat64}) {
      CAPTURE(tf32);
      CAPTURE(dt);
      const Tol tol = gemm_device_tol(dt, tf32);
      const Tensor a = noise_in({33, 64}, MemoryFormat::Contiguous, lg::kFloat32, 1).to(dt);
      const Tensor b = noise_in({64, 17}, MemoryFormat::Contiguous, lg::kFloat32, 2).to(dt);
      const Tensor bt = noise_in({17, 64}, MemoryFormat::Contiguous, lg::kFloat32, 3).to(dt).transpose(0, 1);
      check_same(lg::mm(a.cuda(), b.cuda()), lg::mm(a, b), tol);
      check_same(lg::mm(a.cuda(), bt.cuda()), lg::mm(a, bt), tol);
      check_same(lg::mm(a.transpose(0, 1).contiguous().cuda().transpose(0, 1), b.cuda()), lg::mm(a, b), tol);
      const Tensor strided = noise_in({33, 128}, MemoryFormat::Contiguous, lg::kFloat32, 4).to(dt).slice(1, 0, 128, 2);
      check_same(lg::mm(strided.cuda(), b.cuda()), lg::mm(strided, b), tol);  // neither dim unit-stride
      const Tensor x3 = noise_in({5, 9, 64}, MemoryFormat::Contiguous, lg::kFloat32, 5).to(dt);
      const Tensor y3 = noise_in({5, 64, 7}, MemoryFormat::Contiguous, lg::kFloat32, 6).to(dt);
      check_same(lg::bmm(x3.cuda(), y3.cuda()), lg::bmm(x3, y3), tol);
      const Tensor bias = noise_in({17}, MemoryFormat::Contiguous, lg::kFloat32, 7).to(dt);
      check_same(lg::addmm(bias.cuda(), a.cuda(), b.cuda(), 0.5, 2.0), lg::addmm(bias, a, b, 0.5, 2.0), tol);
      const Tensor w = noise_in({17, 64}, MemoryFormat::Contiguous, lg::kFloat32, 8).to(dt);
      const Tensor x4 = noise_in({2, 3, 4, 64}, MemoryFormat::ChannelsLast, lg::kFloat32, 9).to(dt);
      check_same(lg::linear(x4.cuda(), w.cuda(), bias.cuda()), lg::linear(x4, w, bias), tol);
      check_same(lg::matmul(x4.cuda(), b.cuda()), lg::matmul(x4, b), tol);
      check_same(lg::matmul(x3.cuda(), y3.slice(0, 0, 1).cuda()), lg::matmul(x3, y3.slice(0, 0, 1)), tol);
      check_same(lg::addmm(bias.cuda(), lg::zeros({3, 0}, dt).cuda(), lg::zeros({0, 17}, dt).cuda(), 2.0),
                 lg::addmm(bias, lg::zeros({3, 0}, dt), lg::zeros({0, 17}, dt), 2.0), tol);
    }
  }
  lg::cuda::set_matmul_allow_tf32(false);  // the default
}

TEST_CASE("integer matrix products on CUDA raise NotImplementedError naming the dtype") {
  const Tensor a = lg::ones({2, 2}, lg::kInt64).cuda();
  CHECK_THROWS_AS((void)lg::mm(a, a), lg::NotImplementedError);
}

TEST_CASE("cat on CUDA: PyTorch's layout vote and the CPU's values, along every dim") {
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kInt64}) {
    const Tensor a = noise_in({2, 3, 4, 5}, MemoryFormat::ChannelsLast, lg::kFloat32, 10).to(dt);
    const Tensor b = noise_in({2, 3, 4, 5}, MemoryFormat::ChannelsLast, lg::kFloat32, 11).to(dt);
    const Tensor c = noise_in({2, 3, 4, 5}, MemoryFormat::Contiguous, lg::kFloat32, 12).to(dt);
    for (int64_t dim = 0; dim < 4; ++dim) {
      CAPTURE(dt);
      CAPTURE(dim);
      check_same(lg::cat({a.cuda(), b.cuda()}, dim), lg::cat({a, b}, dim), {0, 0});
      check_same(lg::cat({a.cuda(), c.cuda(), b.cuda()}, dim), lg::cat({a, c, b}, dim), {0, 0});
    }
  }
}

TEST_CASE("pixel_shuffle, pixel_unshuffle and channel_shuffle on CUDA keep channels_last and the CPU's values") {
  for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
    CAPTURE(f);
    const Tensor x = noise_in({2, 16, 5, 6}, f, lg::kFloat32, 13);
    check_same(lg::pixel_shuffle(x.cuda(), 2), lg::pixel_shuffle(x, 2), {0, 0});
    check_same(lg::pixel_unshuffle(lg::pixel_shuffle(x, 2).cuda(), 2), x.contiguous(x.suggest_memory_format()), {0, 0});
    check_same(lg::channel_shuffle(x.cuda(), 4), lg::channel_shuffle(x, 4), {0, 0});
  }
}

}

// The one comparison every CUDA test makes: a device result against the CPU's for the same
// call -- on the device, with the CPU's sizes, strides and dtype, and values within `tol`.
#pragma once

#include <doctest/doctest.h>

#include <layoutguard/cuda.h>

#include "support/op_testing.h"

namespace lg::testing {

// Batch norm on cuDNN (on) or on layoutguard's kernels (off) for a scope; restores the setting.
class CudnnBatchNorm {
 public:
  explicit CudnnBatchNorm(bool on) : was_(cuda::cudnn_batch_norm()) { cuda::set_cudnn_batch_norm(on); }
  CudnnBatchNorm(const CudnnBatchNorm&) = delete;
  CudnnBatchNorm& operator=(const CudnnBatchNorm&) = delete;
  ~CudnnBatchNorm() { cuda::set_cudnn_batch_norm(was_); }

 private:
  bool was_;
};

// A device kernel that does the CPU kernel's arithmetic in another order (a reduction's tree,
// a window's taps) or with a fused multiply-add where the CPU rounds twice. Relative bounds:
// float32 1e-5 (some 80 ulps: sums of a few thousand terms reordered), float16 and bfloat16
// 2e-3 and 2e-2 (a few roundings of their 11- and 8-bit significands), float64 1e-12; the
// integer dtypes exact.
inline constexpr TolTable kReorderedTol{
    .f64 = {1e-12, 1e-12}, .f32 = {1e-5, 1e-5}, .f16 = {2e-3, 2e-3}, .bf16 = {2e-2, 2e-2}};

inline void check_same(const Tensor& got_dev, const Tensor& want, Tol tol) {
  REQUIRE(got_dev.device() == Device::cuda(0));
  CHECK(ls(got_dev) == ls(want));
  CHECK(got_dev.dtype() == want.dtype());
  check_close(values(got_dev.cpu()), values(want), tol);
}

}  // namespace lg::testing

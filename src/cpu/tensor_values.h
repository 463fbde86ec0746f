// Small parameter tensors (per-channel weights, running stats) as double vectors and back, for
// kernels that combine them once per call rather than per element.
#pragma once

#include <vector>

#include <layoutguard/tensor.h>

#include "cpu/elementwise.h"

namespace lg::cpu {

// The values of a 1-D (or any-rank, row-major) floating tensor.
inline std::vector<double> read_values(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  LG_ASSERT(t.dim() == 1, "read_values takes 1-D tensors");
  // Sizes and strides read once: Tensor::stride() wraps its dim each call, and per element that
  // was a fifth of a batch-1 batch_norm (960 channels at 7x7).
  const int64_t n = t.numel(), step = t.stride(0);
  visit_dtype(t.dtype(), [&]<typename S>(std::type_identity<S>) {
    const S* p = t.data_ptr<S>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(static_cast<ComputeType<S>>(p[i * step]));
  });
  return out;
}

// Writes v into the 1-D tensor t (converted to its dtype).
inline void write_values(const Tensor& t, const std::vector<double>& v) {
  LG_ASSERT(t.dim() == 1 && t.numel() == static_cast<int64_t>(v.size()), "write_values size mismatch");
  const int64_t n = t.numel(), step = t.stride(0);
  visit_dtype(t.dtype(), [&]<typename S>(std::type_identity<S>) {
    S* p = t.data_ptr<S>();
    for (int64_t i = 0; i < n; ++i) p[i * step] = static_cast<S>(static_cast<ComputeType<S>>(v[i]));
  });
}

}  // namespace lg::cpu

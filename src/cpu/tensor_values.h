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
  visit_dtype(t.dtype(), [&]<typename S>(std::type_identity<S>) {
    const S* p = t.data_ptr<S>();
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<double>(static_cast<ComputeType<S>>(p[i * t.stride(0)]));
  });
  return out;
}

// Writes v into the 1-D tensor t (converted to its dtype).
inline void write_values(const Tensor& t, const std::vector<double>& v) {
  LG_ASSERT(t.dim() == 1 && t.numel() == static_cast<int64_t>(v.size()), "write_values size mismatch");
  visit_dtype(t.dtype(), [&]<typename S>(std::type_identity<S>) {
    S* p = t.data_ptr<S>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i * t.stride(0)] = static_cast<S>(static_cast<ComputeType<S>>(v[i]));
  });
}

}  // namespace lg::cpu

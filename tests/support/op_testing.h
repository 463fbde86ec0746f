// Helpers shared by the operator tests: deterministic inputs in any layout, per-dtype
// tolerances and value comparison against float64 references.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/tensor_testing.h"

namespace lg::testing {

// Values -2.95, -2.90, ... (or 0.1, 0.15, ... when positive) in row-major order, as dtype dt.
inline Tensor ramp(IntArrayRef sizes, DType dt, bool positive = false) {
  const int64_t n = layout::checked_numel(sizes, "test");
  Tensor v = mul(arange(n, kFloat64), 0.05);
  v = positive ? add(v, 0.1) : sub(v, 2.95);
  return v.reshape(sizes).to(dt);
}

// A tensor of `sizes` laid out in `fmt` holding ramp values.
inline Tensor ramp_in(IntArrayRef sizes, MemoryFormat fmt, DType dt, bool positive = false) {
  Tensor t = empty(sizes, TensorOptions().dtype(dt), fmt);
  t.copy_(ramp(sizes, dt, positive));
  return t;
}

// Reproducible pseudo-random values in [-1, 1) of `sizes`, laid out in fmt (an LCG, so the
// values do not depend on the library's generator).
inline Tensor noise_in(IntArrayRef sizes, MemoryFormat fmt, DType dt, uint32_t seed) {
  const int64_t n = layout::checked_numel(sizes, "test");
  Tensor v = empty({n}, kFloat64);
  double* p = v.data_ptr<double>();
  uint32_t s = seed * 2654435761u + 1u;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<double>(s >> 8) / static_cast<double>(1u << 23) - 1.0;
  }
  Tensor t = empty(sizes, TensorOptions().dtype(dt), fmt);
  t.copy_(v.reshape(sizes));
  return t;
}

struct Tol {
  double atol, rtol;
};
inline Tol tol_for(DType dt) {
  switch (dt) {
    case DType::Float64: return {1e-12, 1e-12};
    case DType::Float32: return {1e-6, 1e-5};
    case DType::Float16: return {2e-3, 2e-3};
    case DType::BFloat16: return {1e-2, 1e-2};
    default: return {0, 0};
  }
}

inline void check_close(const std::vector<double>& got, const std::vector<double>& want, Tol t) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
      continue;
    }
    if (got[i] != want[i] && !(std::fabs(got[i] - want[i]) <= t.atol + t.rtol * std::fabs(want[i]))) {
      FAIL_CHECK("element " << i << ": got " << got[i] << ", want " << want[i]);
      return;
    }
  }
}
inline void check_close(const std::vector<double>& got, const std::vector<double>& want, DType dt) {
  check_close(got, want, tol_for(dt));
}

// Rounds reference values to dtype dt (the kernel's output is stored in dt).
inline std::vector<double> rounded(const std::vector<double>& v, DType dt) {
  if (v.empty()) return v;
  Tensor t = empty({static_cast<int64_t>(v.size())}, kFloat64);
  double* p = t.data_ptr<double>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
  return values(t.to(dt));
}

}  // namespace lg::testing

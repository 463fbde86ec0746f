// Helpers shared by the operator tests: short names for the memory formats and dtypes,
// deterministic inputs in any layout, per-dtype tolerances and value comparison against float64
// references.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/tensor_testing.h"

namespace lg::testing {

inline constexpr MemoryFormat CF = MemoryFormat::Contiguous;
inline constexpr MemoryFormat CL = MemoryFormat::ChannelsLast;
inline constexpr MemoryFormat CL3 = MemoryFormat::ChannelsLast3d;

inline constexpr DType f64 = kFloat64;
inline constexpr DType f32 = kFloat32;
inline constexpr DType f16 = kFloat16;
inline constexpr DType bf16 = kBFloat16;
inline constexpr DType i64 = kInt64;
inline constexpr DType i32 = kInt32;
inline constexpr DType u8 = kUInt8;
inline constexpr DType b8 = kBool;

inline const std::vector<DType> kFloatTypes{f32, f64, f16, bf16};
inline const std::vector<DType> kAllDTypes{f32, f64, f16, bf16, i32, i64, u8, b8};

// One input layout of a test's list: its name and the tensor.
struct Variant {
  std::string name;
  Tensor t;
};

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

// Values of dtype dt laid out in fmt: noise_in's values for floating dtypes; for the others the
// same values times 10 truncated toward zero, integers in [-9, 9] (uint8: plus 10, [0, 19]),
// bool about half true.
inline Tensor sample_in(IntArrayRef sizes, MemoryFormat fmt, DType dt, uint32_t seed) {
  if (is_floating_point(dt)) return noise_in(sizes, fmt, dt, seed);
  const Tensor v = noise_in(sizes, CF, f64, seed);
  const Tensor src = dt == b8 ? gt(v, 0.0) : dt == u8 ? add(mul(v, 10.0), 10.0) : mul(v, 10.0);
  const Tensor t = empty(sizes, dt, fmt);
  t.copy_(src);  // the cast truncates toward zero
  return t;
}

// These row-major values as dtype dt, laid out in fmt.
inline Tensor tensor_of(const std::vector<double>& v, IntArrayRef sizes, DType dt = f64, MemoryFormat fmt = CF) {
  const Tensor src = empty({static_cast<int64_t>(v.size())}, f64);
  std::copy(v.begin(), v.end(), src.data_ptr<double>());
  const Tensor t = empty(sizes, dt, fmt);
  t.copy_(src.reshape(sizes));
  return t;
}

struct Tol {
  double atol, rtol;
};

// One tolerance per floating dtype, e.g. TolTable{.f64 = {1e-10, 1e-10}, .f32 = ..., .f16 = ...,
// .bf16 = ...}(dt); any other dtype gets `other`, exact unless given.
struct TolTable {
  Tol f64, f32, f16, bf16;
  Tol other{0, 0};
  constexpr Tol operator()(DType dt) const {
    switch (dt) {
      case DType::Float64: return f64;
      case DType::Float32: return f32;
      case DType::Float16: return f16;
      case DType::BFloat16: return bf16;
      default: return other;
    }
  }
};

// The default tolerances: tol_for(dt), and check_close(got, want, dt).
inline constexpr TolTable kDefaultTol{
    .f64 = {1e-12, 1e-12}, .f32 = {1e-6, 1e-5}, .f16 = {2e-3, 2e-3}, .bf16 = {1e-2, 1e-2}};
inline Tol tol_for(DType dt) { return kDefaultTol(dt); }

// The tolerance of a result accumulated from `count` terms: base(dt) with its atol raised by
// growth(dt).atol for each of the count + 1 roundings (growth's rtol is not used).
inline Tol grown_tol(const TolTable& base, const TolTable& growth, DType dt, int64_t count) {
  const Tol b = base(dt);
  return {b.atol + growth(dt).atol * static_cast<double>(count + 1), b.rtol};
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
  return values(tensor_of(v, {static_cast<int64_t>(v.size())}, dt));
}

// A row-major contiguous result: y has dtype dt, exactly these sizes with row-major strides, and
// the reference's values rounded to dt, within tol.
inline void check_result(const Tensor& y, DType dt, const std::vector<int64_t>& sizes, const std::vector<double>& want,
                         Tol tol) {
  CHECK(y.dtype() == dt);
  CHECK(ls(y) == ls(lg::empty(sizes)));
  check_close(values(y), rounded(want, dt), tol);
}

}  // namespace lg::testing

// detail::cached_scalar_operand, the per-device cache of Python-scalar operands: one make()
// per (device, dtype, scalar kind, value), the same tensor after that, values that compare
// equal as numbers but differ as scalars kept apart, and a full cache starting over. The CUDA
// path that uses it runs in tests/cuda (`x + 1.0` against the CPU); here the device is the CPU,
// which the cache treats like any other.
#include <doctest/doctest.h>

#include <layoutguard/layoutguard.h>

#include "ops/scalar_operands.h"

namespace {

using lg::Scalar;
using lg::Tensor;

struct Counted {
  int made = 0;
  Tensor operator()(const Scalar& s, lg::DType dt) {
    return lg::detail::cached_scalar_operand(s, dt, lg::kCPU, [&] {
      ++made;
      return lg::full({}, s, lg::TensorOptions().dtype(dt));
    });
  }
};

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("scalar operands are made once per device, dtype, kind and value, then shared") {
  Counted c;
  const Tensor a = c(2.5, lg::kFloat32);
  const Tensor b = c(2.5, lg::kFloat32);
  CHECK(c.made == 1);
  CHECK(a.is_same(b));
  CHECK(a.dim() == 0);
  CHECK(a.item<float>() == 2.5f);
  // Another dtype, another kind (2 and 2.0), and the two zeros are separate entries.
  const Tensor h = c(2.5, lg::kFloat16);
  CHECK(h.dtype() == lg::kFloat16);
  c(int64_t{2}, lg::kFloat32);
  c(2.0, lg::kFloat32);
  c(0.0, lg::kFloat32);
  const Tensor negative_zero = c(-0.0, lg::kFloat32);
  CHECK(c.made == 6);
  CHECK(std::signbit(negative_zero.item<float>()));
  c(true, lg::kFloat32);
  c(int64_t{1}, lg::kFloat32);
  CHECK(c.made == 8);
}

TEST_CASE("a full scalar-operand cache starts over instead of growing") {
  Counted c;
  const Tensor first = c(-12345.0, lg::kFloat64);
  for (size_t i = 0; i < lg::detail::kMaxCachedScalars; ++i) c(static_cast<int64_t>(i) + 1000000, lg::kInt64);
  const int before = c.made;
  const Tensor again = c(-12345.0, lg::kFloat64);
  CHECK(c.made == before + 1);  // dropped with the rest, made again
  CHECK(!again.is_same(first));
  CHECK(again.item<double>() == -12345.0);
}

}  // TEST_SUITE

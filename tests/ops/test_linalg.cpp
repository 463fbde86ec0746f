// Matrix products against the float64 reference (ops/linalg_reference.h): mm, bmm, addmm, matmul
// and linear in float32, float64, float16, bfloat16, int64 and int32; transposed, sliced, offset
// and expanded operands; zero-size operands (k = 0 gives zeros); addmm's beta and alpha, its
// broadcast self and beta = 0 ignoring NaN; matmul over every rank combination with batch
// broadcasting; linear on 1-D to 4-D input, channels_last included. Every output is row-major
// contiguous whatever its operands' layouts. Bad input names the op.
#include <algorithm>
#include <cmath>
#include <optional>

#include <doctest/doctest.h>

#include <layoutguard/linalg.h>
#include <layoutguard/testing/doctest.h>

#include "ops/linalg_reference.h"
#include "support/op_testing.h"

namespace {

using lg::DType;
using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

// Every dtype the matrix products take (not uint8 or bool).
const std::vector<DType> kMatmulTypes{f32, f64, f16, bf16, i64, i32};

// Operands of `sizes`, row-major contiguous: noise in [-1, 1) for floating dtypes, integers in
// [-9, 9] for integer dtypes (products and their sums stay exact).
Tensor operand(lg::IntArrayRef sizes, DType dt, uint32_t seed) { return sample_in(sizes, CF, dt, seed); }

// The transpose of a matrix (a.t()); of the last two dims for batches (a.mT).
Tensor t(const Tensor& a) { return a.transpose(-2, -1); }

// A product of k terms per output: float32 and float64 accumulate rounding error in k, float16
// and bfloat16 compute in float32 and round once to the output; integers are exact.
constexpr TolTable kMmBase{.f64 = {0, 1e-12}, .f32 = {0, 1e-5}, .f16 = kDefaultTol.f16, .bf16 = kDefaultTol.bf16};
constexpr TolTable kMmGrowth{.f64 = {1e-13, 0}, .f32 = {1e-6, 0}, .f16 = {1e-6, 0}, .bf16 = {1e-6, 0}};
Tol mm_tol(DType dt, int64_t k) { return grown_tol(kMmBase, kMmGrowth, dt, k); }

// As mm_tol for a sum of two terms (addmm, linear with bias) that a float16/bfloat16
// implementation may round separately before adding: the error may then be relative to the
// larger term (term_scale bounds their magnitudes) rather than to the result.
Tol two_term_tol(DType dt, int64_t k, double term_scale) {
  Tol tol = mm_tol(dt, k);
  if (dt == f16 || dt == bf16) tol.atol += tol_for(dt).rtol * term_scale;
  return tol;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::fabs(e));
  return m;
}

void check_mm(const Tensor& a, const Tensor& b) {
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  check_result(lg::mm(a, b), a.dtype(), {n, m}, ref_mm(values(a), values(b), n, k, m), mm_tol(a.dtype(), k));
}

void check_bmm(const Tensor& a, const Tensor& b) {
  const int64_t batch = a.size(0), n = a.size(1), k = a.size(2), m = b.size(2);
  check_result(lg::bmm(a, b), a.dtype(), {batch, n, m}, ref_bmm(values(a), values(b), batch, n, k, m),
               mm_tol(a.dtype(), k));
}

void check_matmul(const Tensor& a, const Tensor& b) {
  const MatmulRef want = ref_matmul(values(a), a.sizes().vec(), values(b), b.sizes().vec());
  check_result(lg::matmul(a, b), a.dtype(), want.sizes, want.out, mm_tol(a.dtype(), a.size(-1)));
}

void check_linear(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias) {
  const int64_t in = w.size(1), out = w.size(0), rows = x.numel() / in;
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.back() = out;
  const std::vector<double> b = bias ? values(*bias) : std::vector<double>{};
  const std::vector<double> want = ref_linear(values(x), rows, in, values(w), out, b);
  check_result(lg::linear(x, w, bias), x.dtype(), sizes, want,
               two_term_tol(x.dtype(), in, max_abs(want) + max_abs(b)));
}

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("mm: values against the reference in every dtype; row-major contiguous output") {
  const std::vector<std::vector<int64_t>> shapes{{3, 4, 5}, {1, 7, 1}, {6, 1, 4}, {5, 64, 3}, {17, 33, 9}};  // n, k, m
  for (DType dt : kMatmulTypes)
    for (const std::vector<int64_t>& s : shapes) {
      CAPTURE(dt);
      CAPTURE(lg::to_string(s));
      check_mm(operand({s[0], s[1]}, dt, 1), operand({s[1], s[2]}, dt, 2));
    }
  // An exact case by hand: [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
  for (DType dt : kMatmulTypes) {
    CAPTURE(dt);
    const Tensor a = lg::arange(1, 5, 1, f64).reshape({2, 2}).to(dt), b = lg::arange(5, 9, 1, f64).reshape({2, 2}).to(dt);
    CHECK(values(lg::mm(a, b)) == std::vector<double>{19, 22, 43, 50});
  }
}

TEST_CASE("mm: transposed, sliced, offset and expanded operands give the same values, row-major output") {
  const int64_t n = 5, k = 6, m = 4;
  for (DType dt : {f32, f64, f16, i64}) {
    const std::vector<std::pair<std::string, std::pair<Tensor, Tensor>>> cases{
        {"a.t()", {t(operand({k, n}, dt, 3)), operand({k, m}, dt, 4)}},
        {"b.t()", {operand({n, k}, dt, 5), t(operand({m, k}, dt, 6))}},
        {"a.t() and b.t()", {t(operand({k, n}, dt, 7)), t(operand({m, k}, dt, 8))}},
        {"a: every other column", {operand({n, 2 * k}, dt, 9).slice(1, 0, 2 * k, 2), operand({k, m}, dt, 10)}},
        {"b: every other row from row 1 (offset)", {operand({n, k}, dt, 11), operand({2 * k + 1, m}, dt, 12).slice(0, 1, 2 * k + 1, 2)}},
        {"b: every third column from column 1", {operand({n, k}, dt, 13), operand({k, 3 * m}, dt, 14).slice(1, 1, 3 * m, 3)}},
        {"a: rows 1..n of a taller matrix", {operand({n + 2, k}, dt, 15).slice(0, 1, n + 1), operand({k, m}, dt, 16)}},
        {"a transposed slice", {t(operand({k, 2 * n}, dt, 17).slice(1, 0, 2 * n, 2)), operand({k, m}, dt, 18)}},
        {"b expanded (column stride 0)", {operand({n, k}, dt, 19), operand({k, 1}, dt, 20).expand({k, m})}},
        {"a expanded (row stride 0)", {operand({1, k}, dt, 21).expand({n, k}), operand({k, m}, dt, 22)}},
        {"b: a row of a batch (select)", {operand({n, k}, dt, 23), operand({3, k, m}, dt, 24).select(0, 1)}},
    };
    for (const auto& [name, ab] : cases) {
      CAPTURE(dt);
      CAPTURE(name);
      const auto& [a, b] = ab;
      REQUIRE(a.sizes() == lg::IntArrayRef{n, k});
      REQUIRE(b.sizes() == lg::IntArrayRef{k, m});
      check_mm(a, b);
      // The same values as with contiguous copies of the operands.
      check_close(values(lg::mm(a, b)), values(lg::mm(a.contiguous(), b.contiguous())), mm_tol(dt, k));
    }
  }
  // Operands are only read.
  const Tensor a = operand({3, 4}, f32, 25), b = t(operand({2, 4}, f32, 26));
  const std::vector<double> va = values(a), vb = values(b);
  (void)lg::mm(a, b);
  CHECK(values(a) == va);
  CHECK(values(b) == vb);
}

TEST_CASE("bmm: values in every dtype with permuted, transposed and expanded batch operands") {
  const int64_t B = 3, n = 4, k = 5, m = 2;
  for (DType dt : kMatmulTypes) {
    const std::vector<std::pair<std::string, std::pair<Tensor, Tensor>>> cases{
        {"contiguous", {operand({B, n, k}, dt, 1), operand({B, k, m}, dt, 2)}},
        {"a.mT", {t(operand({B, k, n}, dt, 3)), operand({B, k, m}, dt, 4)}},
        {"b.mT", {operand({B, n, k}, dt, 5), t(operand({B, m, k}, dt, 6))}},
        {"a batch innermost (permuted)", {operand({n, k, B}, dt, 7).permute({2, 0, 1}), operand({B, k, m}, dt, 8)}},
        {"b batch in the middle (permuted)", {operand({B, n, k}, dt, 9), operand({k, B, m}, dt, 10).permute({1, 0, 2})}},
        {"b batch expanded (stride 0)", {operand({B, n, k}, dt, 11), operand({1, k, m}, dt, 12).expand({B, k, m})}},
        {"a sliced in every dim", {operand({2 * B, n + 1, 2 * k}, dt, 13).slice(0, 0, 2 * B, 2).slice(1, 1, n + 1).slice(2, 1, 2 * k, 2),
                                   operand({B, k, m}, dt, 14)}},
    };
    for (const auto& [name, ab] : cases) {
      CAPTURE(dt);
      CAPTURE(name);
      const auto& [a, b] = ab;
      REQUIRE(a.sizes() == lg::IntArrayRef{B, n, k});
      REQUIRE(b.sizes() == lg::IntArrayRef{B, k, m});
      check_bmm(a, b);
    }
  }
  // Each batch entry is its own mm.
  const Tensor a = operand({2, 3, 4}, f64, 15), b = operand({2, 4, 5}, f64, 16);
  const Tensor y = lg::bmm(a, b);
  for (int64_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    check_close(values(y.select(0, i)), values(lg::mm(a.select(0, i), b.select(0, i))), mm_tol(f64, 4));
  }
}

TEST_CASE("mm, bmm, addmm, matmul, linear: zero-size operands (k = 0 gives zeros, n = 0 or m = 0 is empty)") {
  for (DType dt : {f32, f64, f16, i64, i32}) {
    CAPTURE(dt);
    // k = 0: every output is an empty sum, 0 -- the output must be written, not left as allocated.
    for (int rep = 0; rep < 3; ++rep) {  // fresh allocations may reuse memory holding old values
      const Tensor y = lg::mm(lg::empty({3, 0}, dt), lg::empty({0, 4}, dt));
      CHECK(ls(y) == "(3,4)@(4,1)");
      CHECK(y.dtype() == dt);
      CHECK(values(y) == std::vector<double>(12, 0.0));
    }
    CHECK(ls(lg::mm(lg::empty({0, 5}, dt), operand({5, 4}, dt, 1))) == ls(lg::empty({0, 4})));  // n = 0
    CHECK(ls(lg::mm(operand({3, 5}, dt, 2), lg::empty({5, 0}, dt))) == ls(lg::empty({3, 0})));  // m = 0
    CHECK(ls(lg::mm(lg::empty({0, 0}, dt), lg::empty({0, 0}, dt))) == ls(lg::empty({0, 0})));

    const Tensor yb = lg::bmm(lg::empty({2, 3, 0}, dt), lg::empty({2, 0, 4}, dt));
    CHECK(ls(yb) == "(2,3,4)@(12,4,1)");
    CHECK(values(yb) == std::vector<double>(24, 0.0));
    CHECK(ls(lg::bmm(lg::empty({0, 3, 5}, dt), lg::empty({0, 5, 4}, dt))) == ls(lg::empty({0, 3, 4})));  // no batch
    CHECK(ls(lg::bmm(lg::empty({2, 0, 5}, dt), operand({2, 5, 4}, dt, 3))) == ls(lg::empty({2, 0, 4})));

    // matmul: a dot product of empty vectors is a 0-dim 0; other empty products.
    const Tensor dot = lg::matmul(lg::empty({0}, dt), lg::empty({0}, dt));
    CHECK(dot.dim() == 0);
    CHECK(dot.dtype() == dt);
    CHECK(values(dot) == std::vector<double>{0.0});
    const Tensor mv = lg::matmul(lg::empty({3, 0}, dt), lg::empty({0}, dt));
    CHECK(ls(mv) == "(3)@(1)");
    CHECK(values(mv) == std::vector<double>(3, 0.0));
    CHECK(ls(lg::matmul(lg::empty({2, 0, 3, 5}, dt), operand({5, 4}, dt, 4))) == ls(lg::empty({2, 0, 3, 4})));

    // addmm with k = 0: beta * self alone.
    const Tensor self = operand({3, 4}, dt, 5);
    const Tensor ya = lg::addmm(self, lg::empty({3, 0}, dt), lg::empty({0, 4}, dt), 2, 3);
    CHECK(ls(ya) == "(3,4)@(4,1)");
    std::vector<double> twice = values(self);
    for (double& v : twice) v *= 2;
    check_close(values(ya), rounded(twice, dt), mm_tol(dt, 0));
  }
  // linear with in_features = 0: the bias, broadcast; without bias, zeros.
  const Tensor bias = operand({4}, f32, 6);
  const Tensor y = lg::linear(lg::empty({2, 3, 0}), lg::empty({4, 0}), bias);
  CHECK(ls(y) == "(2,3,4)@(12,4,1)");
  check_close(values(y), values(bias.expand({2, 3, 4})), f32);
  CHECK(values(lg::linear(lg::empty({2, 0}), lg::empty({4, 0}))) == std::vector<double>(8, 0.0));
  CHECK(ls(lg::linear(lg::empty({0, 6}), operand({4, 6}, f32, 7), bias)) == ls(lg::empty({0, 4})));
}

TEST_CASE("addmm: beta and alpha, self broadcast from (m), (1, m), (n, 1) and 0-dim, transposed self") {
  const int64_t n = 4, k = 5, m = 3;
  const std::vector<std::pair<double, double>> float_coefs{{1, 1}, {0.5, 2}, {-1, 0.25}, {0, 1}, {0, -3}, {2, 0}};
  const std::vector<std::pair<int64_t, int64_t>> int_coefs{{1, 1}, {2, 3}, {-1, 2}, {0, 1}, {3, 0}};
  for (DType dt : kMatmulTypes) {
    const std::vector<std::pair<std::string, Tensor>> selves{
        {"(n, m)", operand({n, m}, dt, 1)},
        {"(m) bias", operand({m}, dt, 2)},
        {"(1, m)", operand({1, m}, dt, 3)},
        {"(n, 1)", operand({n, 1}, dt, 4)},
        {"0-dim", operand({}, dt, 5)},
        {"(n, m) transposed", t(operand({m, n}, dt, 6))},
        {"(n, m) column slice", operand({n, 2 * m}, dt, 7).slice(1, 0, 2 * m, 2)},
    };
    const Tensor a = operand({n, k}, dt, 8), b = operand({k, m}, dt, 9);
    const std::vector<double> product = ref_mm(values(a), values(b), n, k, m);
    for (const auto& [name, self] : selves) {
      const std::vector<double> self_nm = values(self.expand({n, m}));
      const auto check = [&](const lg::Scalar& beta, const lg::Scalar& alpha) {
        CAPTURE(dt);
        CAPTURE(name);
        CAPTURE(beta.to_double());
        CAPTURE(alpha.to_double());
        const std::vector<double> want = ref_addmm(self_nm, values(a), values(b), n, k, m, beta.to_double(), alpha.to_double());
        const double scale = std::fabs(beta.to_double()) * max_abs(self_nm) + std::fabs(alpha.to_double()) * max_abs(product);
        check_result(lg::addmm(self, a, b, beta, alpha), dt, {n, m}, want, two_term_tol(dt, k, scale));
      };
      if (lg::is_floating_point(dt))
        for (const auto& [beta, alpha] : float_coefs) check(beta, alpha);
      else
        for (const auto& [beta, alpha] : int_coefs) check(beta, alpha);
    }
  }
  // The defaults are beta = alpha = 1: self + a @ b.
  const Tensor self = operand({n, m}, f64, 10), a = operand({n, k}, f64, 11), b = operand({k, m}, f64, 12);
  check_close(values(lg::addmm(self, a, b)), values(lg::add(self, lg::mm(a, b))), mm_tol(f64, k));
}

TEST_CASE("addmm: beta = 0 ignores self, NaN and inf included; beta != 0 propagates NaN") {
  const int64_t n = 3, k = 4, m = 5;
  for (DType dt : kFloatTypes) {
    CAPTURE(dt);
    const Tensor a = operand({n, k}, dt, 1), b = operand({k, m}, dt, 2);
    const std::vector<double> product = ref_mm(values(a), values(b), n, k, m);
    for (const Tensor& self : {lg::full({n, m}, NAN, dt), lg::full({m}, NAN, dt), lg::full({}, INFINITY, dt),
                               lg::full({n, 1}, -INFINITY, dt)}) {
      CAPTURE(ls(self));
      for (double alpha : {1.0, -2.0}) {
        CAPTURE(alpha);
        std::vector<double> want = product;
        for (double& v : want) v *= alpha;
        const Tensor y = lg::addmm(self, a, b, 0, alpha);
        check_result(y, dt, {n, m}, want, mm_tol(dt, k));
        for (double v : values(y)) CHECK(std::isfinite(v));
      }
    }
    // Beta 0.0 as a floating Scalar is zero as well.
    check_result(lg::addmm(lg::full({n, m}, NAN, dt), a, b, 0.0, 1.0), dt, {n, m}, product, mm_tol(dt, k));
    // A nonzero beta does propagate: NaN in one element of self gives NaN there and only there.
    const Tensor self = lg::zeros({n, m}, dt);
    self.select(0, 1).select(0, 2).fill_(NAN);
    const std::vector<double> got = values(lg::addmm(self, a, b, 1e-3, 1));
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CHECK(std::isnan(got[i]) == (i == static_cast<size_t>(1 * m + 2)));
    }
  }
}

TEST_CASE("matmul: every rank combination, batch broadcasting, 1-D operands dropped from the shape") {
  struct RankCase {
    std::string name;
    std::vector<int64_t> a, b, out;  // out: the expected shape, by hand
  };
  const std::vector<RankCase> cases{
      {"1x1: dot product", {4}, {4}, {}},
      {"1x2: vector @ matrix", {4}, {4, 2}, {2}},
      {"2x1: matrix @ vector", {3, 4}, {4}, {3}},
      {"2x2: mm", {3, 4}, {4, 2}, {3, 2}},
      {"3x2: batch @ matrix", {5, 3, 4}, {4, 2}, {5, 3, 2}},
      {"2x3: matrix @ batch", {3, 4}, {5, 4, 2}, {5, 3, 2}},
      {"1x3: vector @ batch", {4}, {5, 4, 2}, {5, 2}},
      {"3x1: batch @ vector", {5, 3, 4}, {4}, {5, 3}},
      {"3x3: bmm", {5, 3, 4}, {5, 4, 2}, {5, 3, 2}},
      {"3x3: size-1 batch broadcasts", {1, 3, 4}, {5, 4, 2}, {5, 3, 2}},
      {"4x3: (2,1,3,4) @ (5,4,2)", {2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},
      {"4x4: both broadcast", {2, 1, 3, 4}, {1, 5, 4, 2}, {2, 5, 3, 2}},
      {"1x4: vector @ 4-D", {4}, {2, 5, 4, 2}, {2, 5, 2}},
      {"4x1: 4-D @ vector", {2, 5, 3, 4}, {4}, {2, 5, 3}},
      {"4x2: 4-D @ matrix", {2, 5, 3, 4}, {4, 2}, {2, 5, 3, 2}},
      {"5x3: more batch dims", {2, 1, 3, 3, 4}, {3, 4, 2}, {2, 1, 3, 3, 2}},
  };
  for (DType dt : kMatmulTypes)
    for (const RankCase& c : cases)
      for (bool transposed : {false, true}) {
        CAPTURE(dt);
        CAPTURE(c.name);
        CAPTURE(transposed);
        // transposed: matrix operands are views of their transposes (the inner two dims swapped,
        // as permute(0, 2, 1) gives), vectors stay as they are.
        const auto make = [&](std::vector<int64_t> s, uint32_t seed) {
          if (!transposed || s.size() < 2) return operand(s, dt, seed);
          std::swap(s[s.size() - 1], s[s.size() - 2]);
          return t(operand(s, dt, seed));
        };
        const Tensor a = make(c.a, 1), b = make(c.b, 2);
        REQUIRE(a.sizes().vec() == c.a);
        REQUIRE(b.sizes().vec() == c.b);
        const Tensor y = lg::matmul(a, b);
        CHECK(y.sizes().vec() == c.out);
        CHECK(y.dim() == static_cast<int64_t>(c.out.size()));
        check_matmul(a, b);
      }
  // The 2-D case is mm; the 3-D case with equal batches bmm.
  const Tensor a = operand({3, 4}, f32, 3), b = operand({4, 2}, f32, 4);
  check_close(values(lg::matmul(a, b)), values(lg::mm(a, b)), mm_tol(f32, 4));
  const Tensor a3 = operand({5, 3, 4}, f32, 5), b3 = operand({5, 4, 2}, f32, 6);
  check_close(values(lg::matmul(a3, b3)), values(lg::bmm(a3, b3)), mm_tol(f32, 4));
  // Dot product by hand: [1, 2, 3] . [4, 5, 6] = 32, a 0-dim tensor.
  const Tensor d = lg::matmul(lg::arange(1, 4, 1, i64), lg::arange(4, 7, 1, i64));
  CHECK(ls(d) == "()@()");
  CHECK(d.dtype() == i64);
  CHECK(d.item<int64_t>() == 32);
}

TEST_CASE("matmul: channels_last and non-dense 4-D operands; output row-major (2,5,3,2)@(30,6,2,1)") {
  // (N, C, H, W) @ (W, m): the batch dims of a channels_last input are strided in memory.
  const Tensor x = noise_in({2, 3, 4, 5}, CL, f32, 1), w = operand({5, 2}, f32, 2);
  check_matmul(x, w);
  CHECK(ls(lg::matmul(x, w)) == "(2,3,4,2)@(24,8,2,1)");
  const Tensor slice = noise_in({2, 3, 8, 5}, CL, f32, 3).slice(2, 0, 8, 2);
  check_matmul(slice, w);
  check_matmul(x, noise_in({2, 3, 5, 4}, CL, f32, 4));  // batch and batch, both channels_last
  const Tensor y = lg::matmul(operand({2, 1, 3, 4}, f32, 5), operand({5, 4, 2}, f32, 6));
  CHECK(ls(y) == "(2,5,3,2)@(30,6,2,1)");
}

TEST_CASE("linear: with and without bias on 1-D to 4-D input, channels_last input, transposed weight") {
  const int64_t in = 6, out = 4;
  for (DType dt : kFloatTypes) {
    const std::vector<std::pair<std::string, Tensor>> inputs{
        {"1-D", operand({in}, dt, 1)},
        {"2-D", operand({5, in}, dt, 2)},
        {"3-D", operand({2, 5, in}, dt, 3)},
        {"4-D", operand({2, 3, 4, in}, dt, 4)},
        {"4-D channels_last (N, C, H, W) with W the features", noise_in({2, 3, 4, in}, CL, dt, 5)},
        {"4-D channels_last, C = 1 and H = 1", noise_in({3, 1, 1, in}, CL, dt, 6)},
        {"2-D transposed", t(operand({in, 5}, dt, 7))},
        {"3-D non-dense slice", operand({2, 5, 2 * in}, dt, 8).slice(2, 0, 2 * in, 2)},
    };
    const std::vector<std::pair<std::string, Tensor>> weights{
        {"weight contiguous", operand({out, in}, dt, 9)},
        {"weight transposed", t(operand({in, out}, dt, 10))},
    };
    for (const auto& [xname, x] : inputs)
      for (const auto& [wname, w] : weights)
        for (bool with_bias : {false, true}) {
          CAPTURE(dt);
          CAPTURE(xname);
          CAPTURE(wname);
          CAPTURE(with_bias);
          check_linear(x, w, with_bias ? std::optional<Tensor>(operand({out}, dt, 11)) : std::nullopt);
        }
  }
  // As in PyTorch, linear's output is contiguous for channels_last input.
  const Tensor x = noise_in({2, 3, 4, 6}, CL, f32, 12);
  REQUIRE(ls(x) == "(2,3,4,6)@(72,1,18,3)");
  CHECK(ls(lg::linear(x, operand({4, 6}, f32, 13), operand({4}, f32, 14))) == "(2,3,4,4)@(48,16,4,1)");
  CHECK(ls(lg::linear(x, operand({4, 6}, f32, 13))) == "(2,3,4,4)@(48,16,4,1)");
  // linear is matmul with the transposed weight, plus the bias.
  const Tensor w = operand({4, 6}, f64, 15), b = operand({4}, f64, 16);
  check_close(values(lg::linear(x.to(f64), w, b)), values(lg::add(lg::matmul(x.to(f64), t(w)), b)), mm_tol(f64, 6));
  // A non-contiguous bias.
  const Tensor b_slice = operand({8}, f32, 17).slice(0, 0, 8, 2);
  check_linear(operand({5, 6}, f32, 18), operand({4, 6}, f32, 19), b_slice);
}

TEST_CASE("linalg bad input: each raises an lg::Error naming the op") {
  const Tensor m23 = lg::ones({2, 3}), m34 = lg::ones({3, 4}), v3 = lg::ones({3}), s = lg::ones({});
  const Tensor b234 = lg::ones({2, 3, 4}), b245 = lg::ones({2, 4, 5});
  const auto mm = doctest::Contains("[mm]"), bmm = doctest::Contains("[bmm]"), addmm = doctest::Contains("[addmm]");
  const auto matmul = doctest::Contains("[matmul]"), linear = doctest::Contains("[linear]");

  // mm: ranks, inner dims, dtypes, undefined.
  CHECK_THROWS_WITH_AS(lg::mm(v3, m34), mm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::mm(m23, lg::ones({3})), mm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::mm(b234, b245), mm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::mm(s, m34), mm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::mm(m23, lg::ones({4, 5})), mm, lg::ValueError);  // inner 3 vs 4
  CHECK_THROWS_WITH_AS(lg::mm(m23, lg::ones({3, 4}, f64)), mm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::mm(m23.to(i64), m34), mm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::mm(m23, m34.to(f16)), mm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::mm(Tensor(), m34), mm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::mm(m23, Tensor()), mm, lg::ValueError);

  // bmm: ranks, batch and inner dims, dtypes, undefined.
  CHECK_THROWS_WITH_AS(lg::bmm(m23, m34), bmm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::bmm(b234, m34), bmm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::bmm(lg::ones({1, 2, 3, 4}), lg::ones({1, 2, 4, 5})), bmm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::bmm(b234, lg::ones({3, 4, 5})), bmm, lg::ValueError);  // batch 2 vs 3
  CHECK_THROWS_WITH_AS(lg::bmm(b234, lg::ones({1, 4, 5})), bmm, lg::ValueError);  // bmm does not broadcast
  CHECK_THROWS_WITH_AS(lg::bmm(b234, lg::ones({2, 3, 5})), bmm, lg::ValueError);  // inner 4 vs 3
  CHECK_THROWS_WITH_AS(lg::bmm(b234, lg::ones({2, 4, 5}, f64)), bmm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::bmm(Tensor(), b245), bmm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::bmm(b234, Tensor()), bmm, lg::ValueError);

  // addmm: self that does not broadcast to (n, m), matrix ranks, inner dims, dtypes, undefined.
  const Tensor self24 = lg::ones({2, 4});
  CHECK_THROWS_WITH_AS(lg::addmm(lg::ones({3}), m23, m34), addmm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::addmm(lg::ones({3, 4}), m23, m34), addmm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::addmm(self24, v3, m34), addmm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::addmm(self24, m23, lg::ones({2, 3, 4})), addmm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::addmm(self24, m23, lg::ones({2, 4})), addmm, lg::ValueError);  // inner 3 vs 2
  CHECK_THROWS_WITH_AS(lg::addmm(self24, m23, m34.to(f64)), addmm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::addmm(self24.to(f64), m23, m34), addmm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::addmm(Tensor(), m23, m34), addmm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::addmm(self24, Tensor(), m34), addmm, lg::ValueError);
  // Integral products take integral scales (a floating one was truncated: beta 0.5 acted as 0).
  {
    const Tensor i12 = lg::ones({1, 2}, lg::kInt64), i13 = lg::ones({1, 3}, lg::kInt64), i32 = lg::ones({3, 2}, lg::kInt64);
    CHECK_THROWS_WITH_AS(lg::addmm(i12, i13, i32, 0.5, 1),
                         doctest::Contains("[addmm] received the floating beta 0.5 for integral operands"), lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::addmm(i12, i13, i32, 1, 0.5),
                         doctest::Contains("[addmm] received the floating alpha 0.5 for integral operands"), lg::ValueError);
    CHECK(values(lg::addmm(i12, i13, i32, 2, 3)) == std::vector<double>{11, 11});
  }
  CHECK_THROWS_WITH_AS(lg::addmm(self24, m23, Tensor()), addmm, lg::ValueError);

  // matmul: 0-dim operands, inner dims for each rank pair, batch dims that do not broadcast,
  // dtypes, undefined.
  CHECK_THROWS_WITH_AS(lg::matmul(s, m34), matmul, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::matmul(m23, s), matmul, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::matmul(s, s), matmul, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::matmul(v3, lg::ones({4})), matmul, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::matmul(v3, lg::ones({4, 2})), matmul, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::matmul(m34, v3), matmul, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::matmul(m23, lg::ones({4, 5})), matmul, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::matmul(b234, lg::ones({3, 4, 5})), matmul, lg::ValueError);  // batch 2 vs 3
  CHECK_THROWS_WITH_AS(lg::matmul(lg::ones({2, 1, 3, 4}), lg::ones({3, 5, 4, 2})), matmul, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::matmul(m23, lg::ones({2, 4, 5})), matmul, lg::ValueError);  // inner 3 vs 4
  CHECK_THROWS_WITH_AS(lg::matmul(m23, m34.to(f64)), matmul, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::matmul(v3.to(i32), v3), matmul, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::matmul(Tensor(), m34), matmul, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::matmul(m23, Tensor()), matmul, lg::ValueError);

  // linear: weight and bias shapes, input rank, dtypes, undefined.
  const Tensor x = lg::ones({5, 6}), w = lg::ones({4, 6});
  CHECK_THROWS_WITH_AS(lg::linear(x, lg::ones({4, 7})), linear, lg::ValueError);  // in_features 6 vs 7
  CHECK_THROWS_WITH_AS(lg::linear(lg::ones({2, 3, 7}), w), linear, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::linear(x, lg::ones({1, 4, 6})), linear, lg::ValueError);  // 3-D weight
  CHECK_THROWS_WITH_AS(lg::linear(x, w, lg::ones({5})), linear, lg::ValueError);  // bias of 5 for 4 outputs
  CHECK_THROWS_WITH_AS(lg::linear(x, w, lg::ones({3})), linear, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::linear(lg::ones({2, 3, 6}), w, lg::ones({5})), linear, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::linear(s, w), linear, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::linear(x, w.to(f64)), linear, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::linear(x.to(f16), w), linear, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::linear(x, w, lg::ones({4}, f64)), linear, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::linear(Tensor(), w), linear, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::linear(x, Tensor()), linear, lg::ValueError);
}

}  // TEST_SUITE

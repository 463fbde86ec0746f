// Pointwise ops against the float64 reference over the layout variants (contiguous,
// channels_last, permuted, non-dense slice, N1HW, NC11, zero-size, broadcast, 5-D), every float
// dtype, the pointwise layout rows (numbered as in tests/core/test_layout_rows.cpp) with exact
// strides, type promotion, in-place and out= forms, and bad input.
#include <doctest/doctest.h>


#include <layoutguard/testing/doctest.h>

#include "support/guard_testing.h"
#include "support/op_testing.h"
#include "support/pointwise_cases.h"

namespace {

using lg::DType;
using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

std::vector<Variant> variants(DType dt, bool positive = false) {
  return {
      {"contiguous", ramp_in({2, 3, 4, 5}, MemoryFormat::Contiguous, dt, positive)},
      {"channels_last", ramp_in({2, 3, 4, 5}, CL, dt, positive)},
      {"permuted", ramp({2, 3, 5, 4}, dt, positive).transpose(2, 3)},
      {"non-dense channels_last slice", ramp_in({2, 3, 8, 5}, CL, dt, positive).slice(2, 0, 8, 2)},
      {"N1HW channels_last", ramp_in({2, 1, 4, 5}, CL, dt, positive)},
      {"NC11 channels_last", ramp_in({2, 3, 1, 1}, CL, dt, positive)},
      {"zero-size channels_last", lg::empty({2, 0, 4, 5}, lg::TensorOptions().dtype(dt), CL)},
      {"broadcast", ramp({1, 3, 1, 5}, dt, positive).expand({2, 3, 4, 5})},
      {"5-D channels_last_3d", ramp_in({2, 3, 2, 2, 5}, CL3, dt, positive)},
  };
}

// A unary pointwise op's output strides by TensorIterator's rule: the fast path for contiguous and
// channels-last-contiguous inputs (contiguous first), the input's own strides when it is dense,
// otherwise dense strides in the input's dim order.
std::vector<int64_t> expected_unary_strides(const Tensor& x) {
  const auto sizes = x.sizes();
  if (x.is_contiguous()) return lg::layout::contiguous_strides(sizes);
  if (x.dim() == 4 && x.is_contiguous(CL)) return lg::layout::channels_last_strides(sizes);
  if (x.dim() == 5 && x.is_contiguous(CL3)) return lg::layout::channels_last_3d_strides(sizes);
  if (x.is_non_overlapping_and_dense()) return x.strides().vec();
  return lg::layout::infer_dense_strides(sizes, x.strides());
}

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("unary ops: values, dtype and output strides over every layout variant and float dtype") {
  for (DType dt : {lg::kFloat32, lg::kFloat64, lg::kFloat16, lg::kBFloat16}) {
    for (const UnaryCase& c : unary_cases()) {
      for (const Variant& v : variants(dt, c.inputs == Inputs::Positive)) {
        CAPTURE(c.op);
        CAPTURE(dt);
        CAPTURE(v.name);
        // Wide inputs: three times the variant, in its layout (a pointwise mul keeps it).
        const Tensor x = c.inputs == Inputs::Wide ? lg::mul(v.t, 3) : v.t;
        const Tensor y = c.call(x);
        CHECK(y.dtype() == dt);
        CHECK(y.sizes() == v.t.sizes());
        CHECK(lg::to_string(y.strides()) == lg::to_string(lg::IntArrayRef(expected_unary_strides(x))));
        std::vector<double> want;
        for (double e : values(x)) want.push_back(c.reference(static_cast<double>(rounded({e}, dt)[0])));
        check_close(values(y), rounded(want, dt), dt);
      }
    }
  }
}

TEST_CASE("layout rows 29, 37, 40, 42, 50: unary output strides") {
  CHECK(ls(lg::relu(strided({2, 3, 4, 5}, {60, 1, 15, 3}))) == "(2,3,4,5)@(60,1,15,3)");  // 29
  CHECK(ls(lg::relu(strided({2, 3, 1, 1}, {3, 1, 3, 3}))) == "(2,3,1,1)@(3,1,1,1)");      // 37
  CHECK(ls(lg::relu(strided({2, 1, 4, 5}, {20, 1, 5, 1}))) == "(2,1,4,5)@(20,20,5,1)");   // 40
  CHECK(ls(lg::neg(strided({2, 3, 2, 5}, {60, 1, 30, 3}))) == "(2,3,2,5)@(30,1,15,3)");   // 42
  CHECK(ls(lg::neg(lg::empty({2, 0, 4, 5}, {}, CL))) == "(2,0,4,5)@(20,20,5,1)");         // 50
}

TEST_CASE("layout rows 30-36, 38, 39, 41, 43-47: binary output strides (first operand wins)") {
  const Tensor cl = strided({2, 3, 4, 5}, {60, 1, 15, 3}), cf = strided({2, 3, 4, 5}, {60, 20, 5, 1});
  CHECK(ls(cl + cf) == "(2,3,4,5)@(60,1,15,3)");                                                       // 30
  CHECK(ls(cf + cl) == "(2,3,4,5)@(60,20,5,1)");                                                       // 31
  CHECK(ls(cl + strided({3, 1, 1}, {1, 1, 1})) == "(2,3,4,5)@(60,1,15,3)");                            // 32
  CHECK(ls(strided({3, 1, 1}, {1, 1, 1}) + cl) == "(2,3,4,5)@(60,1,15,3)");                            // 33
  CHECK(ls(strided({1, 3, 4, 5}, {60, 20, 5, 1}) + cl) == "(2,3,4,5)@(60,20,5,1)");                    // 34
  CHECK(ls(strided({2, 1, 4, 5}, {20, 20, 5, 1}) + cl) == "(2,3,4,5)@(60,1,15,3)");                    // 35
  CHECK(ls(cf + strided({2, 3, 1, 1}, {3, 1, 3, 3})) == "(2,3,4,5)@(60,20,5,1)");                      // 36
  const Tensor nc11 = strided({2, 3, 1, 1}, {3, 1, 3, 3});
  CHECK(ls(nc11 + 1) == "(2,3,1,1)@(3,1,3,3)");                                                        // 38
  CHECK(ls(nc11 + nc11) == "(2,3,1,1)@(3,1,1,1)");                                                     // 39
  CHECK(ls(strided({2, 1, 4, 5}, {20, 1, 5, 1}) * 2.0) == "(2,1,4,5)@(20,1,5,1)");                     // 41
  CHECK(ls(strided({2, 3, 5, 4}, {60, 20, 1, 5}) + strided({2, 3, 5, 4}, {60, 20, 4, 1})) == "(2,3,5,4)@(60,20,1,5)");  // 43
  CHECK(ls(strided({2, 3, 5, 4}, {60, 20, 4, 1}) + strided({2, 3, 5, 4}, {60, 20, 1, 5})) == "(2,3,5,4)@(60,20,4,1)");  // 44
  CHECK(ls(lg::add(cf, strided({2, 3, 4, 5}, {60, 1, 15, 3}, 0, lg::kFloat32))) == "(2,3,4,5)@(60,20,5,1)");           // 45
  const Tensor cl3 = strided({2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}), cf3 = strided({2, 3, 4, 5, 6}, {360, 120, 30, 6, 1});
  CHECK(ls(cl3 + cf3) == "(2,3,4,5,6)@(360,1,90,18,3)");                                               // 46
  CHECK(ls(cf3 + cl3) == "(2,3,4,5,6)@(360,120,30,6,1)");                                              // 47
}

TEST_CASE("layout rows 48, 49: out= tensors") {
  const Tensor a = strided({2, 3, 4, 5}, {60, 1, 15, 3});
  Tensor out = lg::empty({0}, lg::kFloat64);
  lg::add_out(out, a, a);
  CHECK(ls(out) == "(2,3,4,5)@(60,1,15,3)");  // 48: an empty out takes the computed layout
  Tensor out_cl = lg::empty({2, 3, 4, 5}, lg::kFloat64, CL);
  const Tensor cf = strided({2, 3, 4, 5}, {60, 20, 5, 1});
  Tensor& same = lg::add_out(out_cl, cf, cf);
  CHECK(ls(out_cl) == "(2,3,4,5)@(60,1,15,3)");  // 49: the right size keeps its strides
  CHECK(same.is_same(out_cl));
  CHECK(values(out_cl) == values(lg::mul(cf, 2)));
}

TEST_CASE("binary ops: values against the reference with broadcasting, scalars and layouts") {
  for (DType dt : {lg::kFloat32, lg::kFloat64, lg::kFloat16, lg::kBFloat16}) {
    const std::vector<std::pair<std::string, std::pair<Tensor, Tensor>>> pairs{
        {"cl + cf", {ramp_in({2, 3, 4, 5}, CL, dt), ramp_in({2, 3, 4, 5}, MemoryFormat::Contiguous, dt, true)}},
        {"cf + cl", {ramp_in({2, 3, 4, 5}, MemoryFormat::Contiguous, dt), ramp_in({2, 3, 4, 5}, CL, dt, true)}},
        {"cl + bias", {ramp_in({2, 3, 4, 5}, CL, dt), ramp({3, 1, 1}, dt, true)}},
        {"bias + cl", {ramp({3, 1, 1}, dt), ramp_in({2, 3, 4, 5}, CL, dt, true)}},
        {"slice + cl", {ramp_in({2, 3, 8, 5}, CL, dt).slice(2, 0, 8, 2), ramp_in({2, 3, 4, 5}, CL, dt, true)}},
        {"cl3d + row", {ramp_in({2, 3, 2, 2, 5}, CL3, dt), ramp({5}, dt, true)}},
        {"0-dim", {ramp_in({2, 3, 4, 5}, CL, dt), lg::full({}, 1.25, dt)}},
    };
    for (const BinaryCase& c : binary_cases()) {
      for (const auto& [name, ab] : pairs) {
        CAPTURE(c.op);
        CAPTURE(dt);
        CAPTURE(name);
        // pow's base: |a|, in a's layout.
        const Tensor a = c.positive_first ? lg::abs(ab.first) : ab.first;
        const Tensor& b = ab.second;
        const Tensor y = c.call(a, b);
        CHECK(y.dtype() == (c.returns_bool ? lg::kBool : dt));
        const std::vector<int64_t> shape = lg::layout::broadcast_shapes({a.sizes(), b.sizes()}, "test");
        CHECK(y.sizes().vec() == shape);
        if (a.dim() == y.dim() && (a.is_contiguous(CL) || a.suggest_memory_format() == CL)) LG_CHECK_CHANNELS_LAST(y);
        const std::vector<double> va = values(a.expand(shape)), vb = values(b.expand(shape));
        std::vector<double> want;
        for (size_t i = 0; i < va.size(); ++i) want.push_back(c.reference(va[i], vb[i]));
        check_close(values(y), c.returns_bool ? want : rounded(want, dt), c.returns_bool ? lg::kFloat64 : dt);
      }
    }
  }
}

TEST_CASE("tensor-scalar forms and operators") {
  const Tensor x = ramp_in({2, 3, 4, 5}, CL, lg::kFloat32);
  check_close(values(x + 2), values(lg::add(x, lg::full({}, 2.0))), lg::kFloat32);
  check_close(values(lg::sub(x, 1.5, 2)), values(lg::sub(x, lg::full({}, 3.0))), lg::kFloat32);
  check_close(values(2.0 * x), values(lg::add(x, x)), lg::kFloat32);
  check_close(values(x / 4), values(lg::mul(x, 0.25)), lg::kFloat32);
  check_close(values(-x), values(lg::mul(x, -1)), lg::kFloat32);
  check_close(values(lg::add(x, x, 0.5)), values(lg::mul(x, 1.5)), lg::kFloat32);
  CHECK(values(lg::pow(2, lg::arange(4))) == std::vector<double>{1, 2, 4, 8});
  CHECK(values(lg::pow(lg::arange(4), 2)) == std::vector<double>{0, 1, 4, 9});
  LG_CHECK_CHANNELS_LAST(x * 2.0);
  LG_CHECK_CHANNELS_LAST(1.0 + x);
}

TEST_CASE("type promotion follows PyTorch") {
  using lg::promote_types;
  CHECK(promote_types(lg::kUInt8, lg::kInt32) == lg::kInt32);
  CHECK(promote_types(lg::kFloat16, lg::kBFloat16) == lg::kFloat32);
  CHECK(promote_types(lg::kInt64, lg::kFloat16) == lg::kFloat16);
  CHECK(promote_types(lg::kBool, lg::kUInt8) == lg::kUInt8);
  CHECK(promote_types(lg::kFloat32, lg::kFloat64) == lg::kFloat64);
  const Tensor i32 = lg::arange(4).to(lg::kInt32), i64 = lg::arange(4), u8 = lg::arange(4).to(lg::kUInt8);
  const Tensor f16 = lg::ones({4}, lg::kFloat16), bf16 = lg::ones({4}, lg::kBFloat16), b = lg::ones({4}, lg::kBool);
  CHECK((i32 + 2.5).dtype() == lg::kFloat32);             // float scalar: default float dtype
  CHECK((f16 + 2.5).dtype() == lg::kFloat16);             // a float tensor keeps its type
  CHECK((u8 + 300).dtype() == lg::kUInt8);                // an int scalar does not widen
  CHECK((u8 + i32).dtype() == lg::kInt32);
  CHECK((f16 + bf16).dtype() == lg::kFloat32);
  CHECK((i64 + lg::full({}, 1.5, lg::kFloat64)).dtype() == lg::kFloat64);  // 0-dim of a higher category
  CHECK((lg::ones({4}, lg::kFloat32) + lg::full({}, 1.5, lg::kFloat64)).dtype() == lg::kFloat32);
  CHECK((b + b).dtype() == lg::kBool);
  CHECK((b + 1).dtype() == lg::kInt64);
  CHECK(lg::div(i64, 2).dtype() == lg::kFloat32);
  CHECK(lg::exp(i64).dtype() == lg::kFloat32);
  CHECK(lg::relu(i32).dtype() == lg::kInt32);
  CHECK(values(b + b) == std::vector<double>{1, 1, 1, 1});
  CHECK(values(lg::div(i64, 2)) == std::vector<double>{0, 0.5, 1, 1.5});
  CHECK(lg::can_cast(lg::kInt64, lg::kFloat16));
  CHECK_FALSE(lg::can_cast(lg::kFloat32, lg::kInt64));
  CHECK_FALSE(lg::can_cast(lg::kInt32, lg::kBool));
}

TEST_CASE("integer ops: exact values, wrap-around without UB, integer pow") {
  const Tensor x = lg::sub(lg::arange(7), 3);  // -3..3 int64
  CHECK(values(lg::relu(x)) == std::vector<double>{0, 0, 0, 0, 1, 2, 3});
  CHECK(values(lg::abs(x)) == std::vector<double>{3, 2, 1, 0, 1, 2, 3});
  CHECK(values(lg::clamp(x, -1, 1)) == std::vector<double>{-1, -1, -1, 0, 1, 1, 1});
  CHECK(values(lg::relu6(lg::mul(x, 3))) == std::vector<double>{0, 0, 0, 0, 3, 6, 6});
  CHECK(values(lg::pow(x, lg::full({7}, 3))) == std::vector<double>{-27, -8, -1, 0, 1, 8, 27});
  CHECK(values(lg::pow(lg::full({3}, 2), lg::sub(lg::arange(3), 1))) == std::vector<double>{0, 1, 2});
  const Tensor big = lg::full({1}, INT64_MAX);
  CHECK(values(lg::add(big, 1).to(lg::kFloat64))[0] == static_cast<double>(INT64_MIN));
  const Tensor u8 = lg::full({1}, 250, lg::kUInt8);
  CHECK(values(lg::add(u8, 10))[0] == 4);  // wraps like PyTorch
  CHECK(values(lg::neg(lg::full({1}, 1, lg::kUInt8)))[0] == 255);
}

TEST_CASE("NaN propagates through relu, clamp, maximum and minimum") {
  const Tensor nan = lg::full({2}, NAN);
  CHECK(std::isnan(values(lg::relu(nan))[0]));
  CHECK(std::isnan(values(lg::clamp(nan, 0, 1))[0]));
  CHECK(std::isnan(values(lg::maximum(nan, lg::zeros({2})))[0]));
  CHECK(std::isnan(values(lg::minimum(lg::zeros({2}), nan))[0]));
}

TEST_CASE("gelu tanh approximation, elu parameters, leaky slope") {
  const Tensor x = ramp({9}, lg::kFloat64);
  std::vector<double> want;
  for (double v : values(x))
    want.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  check_close(values(lg::gelu(x, "tanh")), want, lg::kFloat64);
  want.clear();
  for (double v : values(x)) want.push_back(v > 0 ? 2 * v : 2 * 0.5 * (std::exp(v * 3) - 1));
  check_close(values(lg::elu(x, 0.5, 2, 3)), want, lg::kFloat64);
  want.clear();
  for (double v : values(x)) want.push_back(v > 0 ? v : 0.2 * v);
  check_close(values(lg::leaky_relu(x, 0.2)), want, lg::kFloat64);
}

TEST_CASE("where: condition, promotion, scalars and layout") {
  const Tensor a = ramp_in({2, 3, 4, 5}, CL, lg::kFloat32);
  const Tensor cond = lg::gt(a, 0);
  LG_CHECK_CHANNELS_LAST(cond);
  const Tensor y = lg::where(cond, a, 0.0);
  LG_CHECK_CHANNELS_LAST(y);
  check_close(values(y), values(lg::relu(a)), lg::kFloat32);
  CHECK(values(lg::where(cond, 1, a)) == values(lg::where(cond, lg::ones_like(a), a)));
  CHECK(lg::where(cond, lg::ones({1}, lg::kFloat64), a).dtype() == lg::kFloat64);
  CHECK_THROWS_WITH_AS(lg::where(a, a, a), doctest::Contains("[where] the condition has dtype float32; required bool"),
                       lg::TypeError);
}

TEST_CASE("in-place forms keep the tensor and its strides") {
  Tensor x = ramp_in({2, 3, 4, 5}, CL, lg::kFloat32);
  const std::vector<double> before = values(x);
  const auto strides = x.strides().vec();
  const Tensor& r = lg::relu_(x);
  CHECK(r.is_same(x));
  CHECK(x.strides().vec() == strides);
  std::vector<double> want;
  for (double v : before) want.push_back(v > 0 ? v : 0);
  check_close(values(x), want, lg::kFloat32);
  lg::add_(x, ramp({3, 1, 1}, lg::kFloat32), 2);  // broadcast operand
  lg::mul_(x, 0.5);
  lg::clamp_(x, std::nullopt, 1.0);
  CHECK(x.strides().vec() == strides);
  Tensor r6 = lg::mul(ramp_in({2, 3, 4, 5}, CL, lg::kFloat32), 0.2);
  const std::vector<double> want6 = values(lg::relu6(r6));
  CHECK(lg::relu6_(r6).is_same(r6));
  CHECK(values(r6) == want6);
  CHECK(r6.is_contiguous(MemoryFormat::ChannelsLast));
  Tensor i = lg::arange(4);
  lg::add_(i, lg::arange(4).to(lg::kInt32));  // int32 promotes to int64, cast back into self
  CHECK(values(i) == std::vector<double>{0, 2, 4, 6});
  // self overlapping a shifted view of itself: the operand is read before it is overwritten.
  Tensor v = lg::arange(6, lg::kFloat32);
  lg::add_(v.narrow(0, 1, 5), v.narrow(0, 0, 5));
  CHECK(values(v) == std::vector<double>{0, 1, 3, 5, 7, 9});
}

TEST_CASE("bad input: each with an lg::Error naming the op and the mismatch") {
  const Tensor x = lg::zeros({2, 3});
  CHECK_THROWS_WITH_AS(lg::add(x, lg::zeros({4})), doctest::Contains("the size of tensor a (3) must match the size of tensor b (4)"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::neg(lg::ones({2}, lg::kBool)), doctest::Contains("[neg] is not implemented for bool"), lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::sub(lg::ones({2}, lg::kBool), lg::ones({2}, lg::kBool)), doctest::Contains("[sub] subtracting bool"), lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::gelu(lg::arange(3)), doctest::Contains("[gelu] is not implemented for int64"), lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::gelu(x, "fast"), doctest::Contains("approximate='fast'"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::clamp(x, std::nullopt), doctest::Contains("[clamp] received neither min nor max"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::add(lg::arange(3), lg::arange(3), 0.5), doctest::Contains("floating alpha"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pow(lg::arange(3), -1), doctest::Contains("negative integer powers"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::relu(Tensor()), doctest::Contains("[relu]"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::add(x, Tensor()), doctest::Contains("[add]"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::add_(x, lg::zeros({4, 2, 3})), doctest::Contains("[add_] the output of shape (2,3) does not match the broadcast shape (4,2,3)"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::add_(lg::arange(3), 0.5), doctest::Contains("[add_] the result type float32 cannot be cast to self's dtype int64"), lg::TypeError);
  Tensor wrong = lg::zeros({5});
  CHECK_THROWS_WITH_AS(lg::add_out(wrong, x, x), doctest::Contains("[add_out] out has shape (5) but the result has shape (2,3)"), lg::ValueError);
  Tensor int_out = lg::zeros({2, 3}, lg::kInt64);
  CHECK_THROWS_WITH_AS(lg::div_out(int_out, x, x), doctest::Contains("cannot be cast to out's dtype int64"), lg::TypeError);
  Tensor undefined;
  CHECK_THROWS_WITH_AS(lg::mul_out(undefined, x, x), doctest::Contains("[mul_out] received an undefined out tensor"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::add_(lg::zeros({1}).expand({3}), 1), doctest::Contains("[add]"), lg::ValueError);  // stride-0 self
  CHECK_THROWS_WITH_AS(lg::relu6_(lg::zeros({1}).expand({3})), doctest::Contains("[relu6] unsupported operation"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::relu6_(lg::ones({3}, lg::kBool)), doctest::Contains("[relu6] is not implemented for bool"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::relu6_(Tensor()), doctest::Contains("[relu6] received an undefined tensor"), lg::Error);
  // Every op of the test table refuses an undefined operand by name; erf_ cannot write its
  // float result into an integer tensor.
  for (const UnaryCase& c : unary_cases()) {
    CAPTURE(c.op);
    CHECK_THROWS_WITH_AS(c.call(Tensor()), doctest::Contains(("[" + std::string(c.op) + "]").c_str()), lg::ValueError);
  }
  for (const BinaryCase& c : binary_cases()) {
    CAPTURE(c.op);
    CHECK_THROWS_WITH_AS(c.call(x, Tensor()), doctest::Contains(("[" + std::string(c.op) + "]").c_str()), lg::ValueError);
  }
  CHECK_THROWS_WITH_AS(lg::erf_(lg::arange(3)), doctest::Contains("[erf_] the result type float32 cannot be cast to self's dtype int64"), lg::TypeError);
}

TEST_CASE("pointwise ops pass the guard on channels-last data, and shadow agrees") {
  CleanGuard clean;
  lg::guard::set_options(options_with(lg::guard::Mode::Throw, "shadow=1"));
  const Tensor x = ramp_in({2, 3, 4, 5}, CL, lg::kFloat32);
  const Tensor cf = ramp_in({2, 3, 4, 5}, MemoryFormat::Contiguous, lg::kFloat32);
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::relu(x));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::add(x, ramp({3, 1, 1}, lg::kFloat32)));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::where(lg::gt(x, 0), x, cf));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::relu_(x.clone()));
  // In place and not idempotent: the shadow rerun must see self as it was before the op, and
  // the caller's tensor must change once.
  for (const Tensor& t : {x, cf}) {
    Tensor y = t.clone();
    LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::add_(y, 1));
    LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::mul_(y, 2));
    std::vector<double> want;
    for (double v : values(t)) want.push_back((v + 1) * 2);
    check_close(values(y), want, lg::kFloat32);
  }
  // cf + cl: the first operand decides (contiguous), not the channels_last one.
  LG_CHECK_LAYOUT_VIOLATION(lg::add(cf, x), "add");
  LG_CHECK_PRESERVES_LAYOUT([](const Tensor& t) { return lg::silu(t); }, cf);
  std::vector<std::string> kernels;
  lg::hooks::ScopedHook hook([&](const lg::hooks::OpCall& c) {
    if (c.depth == 0) kernels.push_back(std::string(c.op) + ":" + std::string(c.kernel));
  });
  (void)lg::sigmoid(x);
  CHECK(kernels == std::vector<std::string>{"sigmoid:sigmoid_cpu"});
}

TEST_CASE("float16 and bfloat16 rows longer than a block equal float32 math rounded once, bit for bit") {
  // The 16-bit kernels widen rows in blocks of 256 (vector casts), compute in float32 and
  // narrow once: exactly what the same op in float32 followed by .to(dt) gives. Rows of 1003
  // elements cover whole blocks and a ragged tail; the specials cover NaN, infinities, signed
  // zero, subnormals and ties of the rounding.
  std::vector<double> v;
  for (int i = 0; i < 2 * 1003; ++i) v.push_back(std::sin(0.37 * i) * std::pow(2.0, i % 23 - 11));
  const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e-40, -3e-8, 65504.0, 65520.0, 1.00048828125,
                             3.0e38, -1.0 - 1.0 / 512};
  for (size_t k = 0; k < std::size(specials); ++k) v[k * 97] = specials[k];
  std::vector<double> w(v.rbegin(), v.rend());
  const Tensor base = tensor_of(v, {2, 1003}, lg::kFloat32), other = tensor_of(w, {2, 1003}, lg::kFloat32);
  const Tol exact{0, 0};
  for (DType dt : {lg::kFloat16, lg::kBFloat16}) {
    CAPTURE(dt);
    const Tensor a = base.to(dt), b = other.to(dt);
    const Tensor a32 = a.to(lg::kFloat32), b32 = b.to(lg::kFloat32);  // the same values, widened
    // Unary ops: dense rows, and a stride-2 view (the strided widen/narrow).
    for (const UnaryCase& c : unary_cases()) {
      CAPTURE(c.op);
      check_close(values(c.call(a)), values(c.call(a32).to(dt)), exact);
      check_close(values(c.call(a.slice(1, 0, 1003, 2))), values(c.call(a32.slice(1, 0, 1003, 2)).to(dt)), exact);
    }
    // Binary ops: dense, a broadcast row, a broadcast scalar on the left, a transposed operand.
    const Tensor col = a.narrow(1, 5, 1), col32 = a32.narrow(1, 5, 1);
    check_close(values(lg::add(a, b, 0.5)), values(lg::add(a32, b32, 0.5).to(dt)), exact);
    check_close(values(lg::sub(a, col)), values(lg::sub(a32, col32).to(dt)), exact);
    check_close(values(lg::mul(col, a)), values(lg::mul(col32, a32).to(dt)), exact);
    check_close(values(lg::div(a, b)), values(lg::div(a32, b32).to(dt)), exact);
    check_close(values(lg::maximum(a, b)), values(lg::maximum(a32, b32).to(dt)), exact);
    const Tensor at = a.transpose(0, 1).contiguous().transpose(0, 1), at32 = at.to(lg::kFloat32);  // column-major storage
    check_close(values(lg::minimum(at, b)), values(lg::minimum(at32, b32).to(dt)), exact);
    check_close(values(lg::lt(a, b)), values(lg::lt(a32, b32)), exact);
    check_close(values(lg::ge(at, col)), values(lg::ge(at32, col32)), exact);
    // In place: the result block overwrites the block it was read from.
    Tensor self = a.clone();
    lg::add_(self, b, -2);
    check_close(values(self), values(lg::add(a32, b32, -2).to(dt)), exact);
  }
}

TEST_CASE("large tensors take the threaded path with the same values") {
  const Tensor x = ramp_in({4, 16, 32, 32}, CL, lg::kFloat32);  // 65536 elements: above the grain
  const Tensor y = lg::add(x, lg::relu(x));
  LG_CHECK_CHANNELS_LAST(y);
  std::vector<double> want;
  for (double v : values(x)) want.push_back(v + (v > 0 ? v : 0));
  check_close(values(y), want, lg::kFloat32);
  const Tensor row = lg::exp(ramp({70000}, lg::kFloat32));  // one long row split across threads
  std::vector<double> want_row;
  for (double v : values(ramp({70000}, lg::kFloat32))) want_row.push_back(std::exp(v));
  check_close(values(row), rounded(want_row, lg::kFloat32), lg::kFloat32);
}

}  // TEST_SUITE

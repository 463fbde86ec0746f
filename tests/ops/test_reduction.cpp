// Reductions, softmax and dropout against the float64 reference (ops/reduction_reference.h).
// sum, mean, amax, amin: single, several, negative and all dims, keepdim both ways, over every
// layout variant (contiguous, channels_last, channels_last_3d, permuted, non-dense slices,
// expanded, size-1 dims, 1-D, 0-dim) and dtype; the output is contiguous whatever the input
// (layout rows 92, 93, numbered as in tests/core/test_layout_rows.cpp); zero-size inputs; NaN;
// the dtype argument; integer sums in int64.
// softmax, log_softmax: every dim of every layout variant and float dtype; the output keeps the
// input's layout (layout row 94: differs from PyTorch 1.13 on purpose); large values and -inf.
// dropout: identity cases, p = 1, the kept values, seeds, the drop rate, layout. Bad input.
#include <algorithm>
#include <cmath>
#include <optional>

#include <doctest/doctest.h>

#include <layoutguard/reduction.h>
#include <layoutguard/testing/doctest.h>

#include "ops/reduction_reference.h"
#include "support/op_testing.h"

namespace {

using lg::DType;
using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

// Layout variants, 4-D (2, 3, 4, 5) unless named otherwise.
std::vector<Variant> variants(DType dt) {
  return {
      {"contiguous", sample_in({2, 3, 4, 5}, CF, dt, 1)},
      {"channels_last", sample_in({2, 3, 4, 5}, CL, dt, 2)},
      {"permuted (dims 2 and 3 swapped)", sample_in({2, 3, 5, 4}, CF, dt, 3).transpose(2, 3)},
      {"permuted (every dim moved)", sample_in({5, 2, 4, 3}, CF, dt, 4).permute({1, 3, 2, 0})},
      {"non-dense channels_last slice", sample_in({2, 3, 8, 5}, CL, dt, 5).slice(2, 0, 8, 2)},
      {"3-D non-dense slice with an offset", sample_in({3, 4, 10}, CF, dt, 6).slice(2, 1, 10, 3).slice(0, 1, 3)},
      {"expanded (stride 0 in dims 1 and 3)", sample_in({2, 1, 4, 1}, CF, dt, 7).expand({2, 3, 4, 5})},
      {"N1HW channels_last", sample_in({2, 1, 4, 5}, CL, dt, 8)},
      {"NC11 channels_last", sample_in({2, 3, 1, 1}, CL, dt, 9)},
      {"5-D channels_last_3d", sample_in({2, 3, 2, 3, 4}, CL3, dt, 10)},
      {"1-D", sample_in({7}, CF, dt, 11)},
      {"0-dim", sample_in({}, CF, dt, 12)},
  };
}

// Dim lists for a rank: all (empty), each single dim, each pair, negative dims, an unordered
// pair, and every dim listed explicitly.
std::vector<std::vector<int64_t>> dim_lists(int64_t rank) {
  std::vector<std::vector<int64_t>> lists{{}};
  for (int64_t d = 0; d < rank; ++d) lists.push_back({d});
  for (int64_t d = 0; d < rank; ++d)
    for (int64_t e = d + 1; e < rank; ++e) lists.push_back({d, e});
  if (rank >= 1) {
    lists.push_back({-1});
    lists.push_back({-rank});
    std::vector<int64_t> all;
    for (int64_t d = 0; d < rank; ++d) all.push_back(d);
    lists.push_back(all);
  }
  if (rank >= 2) lists.push_back({rank - 1, 0});
  if (rank >= 3) lists.push_back({-1, -3});
  if (rank >= 4) lists.push_back({2, -1, 0});
  return lists;
}

std::vector<int64_t> wrapped(const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(d < 0 ? d + rank : d);
  return out;
}

// How many elements each output reduces.
int64_t reduced_count(const std::vector<int64_t>& sizes, const std::vector<int64_t>& dims) {
  const std::vector<bool> reduced = reduced_dims(sizes.size(), dims);
  int64_t count = 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (reduced[d]) count *= sizes[d];
  return count;
}

// A sum of `count` terms: float32 and float64 accumulate rounding error in count; float16 and
// bfloat16 accumulate in float32 and round once; integers are exact.
constexpr TolTable kSumBase{.f64 = {0, 1e-13}, .f32 = {1e-6, 1e-5}, .f16 = kDefaultTol.f16, .bf16 = kDefaultTol.bf16};
constexpr TolTable kSumGrowth{.f64 = {1e-14, 0}, .f32 = {2e-7, 0}, .f16 = {1e-6, 0}, .bf16 = {1e-6, 0}};
Tol sum_tol(DType dt, int64_t count) { return grown_tol(kSumBase, kSumGrowth, dt, count); }
constexpr Tol kExact{0, 0};  // amax, amin: one of the input values, exactly

// Every reduction of x over dims: sum (int64 for integer and bool input), sum cast to float64
// first, mean (floating input; any input cast to float64 first), amax and amin (x's dtype).
void check_reductions(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  CAPTURE(lg::to_string(dims));
  CAPTURE(keepdim);
  const DType dt = x.dtype();
  const bool floating = lg::is_floating_point(dt);
  const std::vector<int64_t> sizes = x.sizes().vec(), d = wrapped(dims, x.dim());
  const std::vector<int64_t> out_sizes = ref_reduced_sizes(sizes, d, keepdim);
  const int64_t count = reduced_count(sizes, d);
  const std::vector<double> vx = values(x);
  const std::vector<double> sum = ref_reduce(vx, sizes, d, ReduceOp::Sum), mean = ref_reduce(vx, sizes, d, ReduceOp::Mean);
  const DType sum_dt = floating ? dt : i64;
  check_result(lg::sum(x, dims, keepdim), sum_dt, out_sizes, sum, sum_tol(sum_dt, count));
  check_result(lg::sum(x, dims, keepdim, f64), f64, out_sizes, sum, sum_tol(f64, count));
  if (floating) check_result(lg::mean(x, dims, keepdim), dt, out_sizes, mean, sum_tol(dt, count));
  check_result(lg::mean(x, dims, keepdim, f64), f64, out_sizes, mean, sum_tol(f64, count));
  check_result(lg::amax(x, dims, keepdim), dt, out_sizes, ref_reduce(vx, sizes, d, ReduceOp::Amax), kExact);
  check_result(lg::amin(x, dims, keepdim), dt, out_sizes, ref_reduce(vx, sizes, d, ReduceOp::Amin), kExact);
}

// softmax / log_softmax (or with a dtype to cast to first) of x along dim: the dtype, the input's
// layout (a dense input's strides exactly, otherwise dense strides in its dim order, as
// empty_like gives), and the reference's values.
void check_softmax(const Tensor& x, int64_t dim, bool log, std::optional<DType> dtype = std::nullopt) {
  CAPTURE(dim);
  CAPTURE(log);
  const Tensor y = log ? lg::log_softmax(x, dim, dtype) : lg::softmax(x, dim, dtype);
  const DType out_dt = dtype.value_or(x.dtype());
  CHECK(y.dtype() == out_dt);
  if (x.is_non_overlapping_and_dense()) CHECK(y.strides() == x.strides());
  CHECK(ls(y) == ls(lg::empty_like(x)));
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  const std::vector<double> in = rounded(values(x), out_dt);  // the cast comes first
  check_close(values(y), rounded(ref_softmax(in, x.sizes().vec(), d, log), out_dt), tol_for(out_dt));
}

size_t count_zeros(const std::vector<double>& v) { return static_cast<size_t>(std::count(v.begin(), v.end(), 0.0)); }

// Every element of y = dropout(x, p) is 0 or x / (1 - p) (rounded to the dtype); returns how
// many are 0.
size_t check_dropped_or_scaled(const Tensor& y, const Tensor& x, double p) {
  const std::vector<double> got = values(y), in = values(x);
  REQUIRE(got.size() == in.size());
  std::vector<double> scaled;
  for (double v : in) scaled.push_back(v / (1 - p));
  const std::vector<double> want = rounded(scaled, x.dtype());
  const Tol tol = tol_for(x.dtype());
  size_t zeros = 0, wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == 0) ++zeros;
    else if (!(std::fabs(got[i] - want[i]) <= tol.atol + tol.rtol * std::fabs(want[i]))) ++wrong;
  }
  CHECK(wrong == 0);
  return zeros;
}

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("sum, mean, amax, amin: values, dtype and contiguous output over every layout variant, dim list and dtype") {
  for (DType dt : kAllDTypes)
    for (const Variant& v : variants(dt))
      for (const std::vector<int64_t>& dims : dim_lists(v.t.dim()))
        for (bool keepdim : {false, true}) {
          CAPTURE(dt);
          CAPTURE(v.name);
          check_reductions(v.t, dims, keepdim);
        }
}

TEST_CASE("layout rows 92, 93: reductions of channels_last input are contiguous") {
  const Tensor x = noise_in({2, 3, 4, 5}, CL, f32, 1);
  REQUIRE(ls(x) == "(2,3,4,5)@(60,1,15,3)");
  CHECK(ls(lg::sum(x, {1}, true)) == "(2,1,4,5)@(20,20,5,1)");     // 92
  CHECK(ls(lg::mean(x, {2, 3}, true)) == "(2,3,1,1)@(3,1,1,1)");   // 93
  CHECK(ls(lg::amax(x, {1}, true)) == "(2,1,4,5)@(20,20,5,1)");
  CHECK(ls(lg::amin(x, {2, 3}, true)) == "(2,3,1,1)@(3,1,1,1)");
  CHECK(ls(lg::sum(x, {1})) == "(2,4,5)@(20,5,1)");
  CHECK(ls(lg::mean(x, {-1, -2})) == "(2,3)@(3,1)");
  CHECK(ls(lg::sum(x)) == "()@()");
  CHECK(ls(lg::sum(x, {}, true)) == "(1,1,1,1)@(1,1,1,1)");
  CHECK(ls(lg::amax(x, {0}, true)) == "(1,3,4,5)@(60,20,5,1)");
  const Tensor x3 = noise_in({2, 3, 4, 5, 6}, CL3, f32, 2);
  CHECK(ls(lg::mean(x3, {2, 3, 4}, true)) == "(2,3,1,1,1)@(3,1,1,1,1)");
  CHECK(ls(lg::sum(x3, {1}, true)) == "(2,1,4,5,6)@(120,120,30,6,1)");
}

TEST_CASE("reductions of zero-size tensors: sum 0, mean NaN, amax and amin of no elements throw") {
  for (DType dt : kFloatTypes) {
    CAPTURE(dt);
    const Tensor x = lg::empty({2, 0, 4}, dt);
    for (int rep = 0; rep < 3; ++rep) {  // fresh allocations may reuse memory holding old values
      const Tensor s = lg::sum(x, {1});
      CHECK(ls(s) == "(2,4)@(4,1)");
      CHECK(s.dtype() == dt);
      CHECK(values(s) == std::vector<double>(8, 0.0));
    }
    CHECK(values(lg::sum(x)) == std::vector<double>{0.0});
    CHECK(lg::sum(x).dim() == 0);
    CHECK(ls(lg::sum(x, {1}, true)) == "(2,1,4)@(4,4,1)");
    CHECK(values(lg::sum(x, {1}, true)) == std::vector<double>(8, 0.0));
    CHECK(ls(lg::sum(x, {2})) == ls(lg::empty({2, 0})));  // nothing reduced over an empty dim
    const Tensor m = lg::mean(x, {1});
    CHECK(ls(m) == "(2,4)@(4,1)");
    CHECK(m.dtype() == dt);
    for (double v : values(m)) CHECK(std::isnan(v));
    CHECK(std::isnan(values(lg::mean(x))[0]));
    CHECK(ls(lg::mean(x, {2})) == ls(lg::empty({2, 0})));
    // amax and amin over a non-empty dim of an empty tensor: empty outputs, no error.
    CHECK(ls(lg::amax(x, {2})) == ls(lg::empty({2, 0})));
    CHECK(ls(lg::amin(x, {2}, true)) == ls(lg::empty({2, 0, 1})));
    CHECK(lg::amax(x, {2}).dtype() == dt);
    // ... but each output reducing no elements is an error.
    CHECK_THROWS_WITH_AS(lg::amax(x, {1}), doctest::Contains("[amax]"), lg::Error);
    CHECK_THROWS_WITH_AS(lg::amax(x), doctest::Contains("[amax]"), lg::Error);
    CHECK_THROWS_WITH_AS(lg::amin(x, {0, 1}, true), doctest::Contains("[amin]"), lg::Error);
    CHECK_THROWS_WITH_AS(lg::amin(x), doctest::Contains("[amin]"), lg::Error);
  }
  // Integer and bool: the empty sum is an int64 0; amax throws in every dtype.
  for (DType dt : {i32, i64, u8, b8}) {
    CAPTURE(dt);
    const Tensor x = lg::empty({2, 0, 4}, dt);
    const Tensor s = lg::sum(x, {1});
    CHECK(s.dtype() == i64);
    CHECK(values(s) == std::vector<double>(8, 0.0));
    CHECK(std::isnan(values(lg::mean(x, {}, false, f32))[0]));
    CHECK_THROWS_WITH_AS(lg::amax(x, {1}), doctest::Contains("[amax]"), lg::Error);
    CHECK_THROWS_WITH_AS(lg::amin(x, {1}), doctest::Contains("[amin]"), lg::Error);
  }
  // A zero-size channels_last input: the outputs are contiguous as ever.
  const Tensor cl = lg::empty({2, 0, 4, 5}, f32, CL);
  const Tensor s = lg::sum(cl, {1}, true);
  CHECK(ls(s) == "(2,1,4,5)@(20,20,5,1)");
  CHECK(values(s) == std::vector<double>(40, 0.0));
  CHECK(ls(lg::mean(cl, {2, 3}, true)) == ls(lg::empty({2, 0, 1, 1})));
  CHECK(ls(lg::amax(cl, {2, 3}, true)) == ls(lg::empty({2, 0, 1, 1})));
}

TEST_CASE("amax and amin propagate NaN wherever it sits in a line; inf and -inf are ordinary extremes") {
  const std::vector<int64_t> sizes{2, 3, 4, 5};
  const auto at = [](int64_t n, int64_t c, int64_t h, int64_t w) { return static_cast<size_t>(((n * 3 + c) * 4 + h) * 5 + w); };
  std::vector<double> v = values(noise_in(sizes, CF, f64, 1));
  v[at(0, 0, 0, 0)] = NAN;  // first along every dim
  v[at(1, 2, 3, 4)] = NAN;  // last along every dim
  v[at(0, 1, 2, 3)] = NAN;  // in the middle
  v[at(1, 0, 1, 1)] = INFINITY;
  v[at(0, 2, 0, 3)] = -INFINITY;
  v[at(1, 1, 3, 0)] = 5;  // larger than any noise
  for (DType dt : kFloatTypes)
    for (MemoryFormat fmt : {CF, CL}) {
      CAPTURE(dt);
      CAPTURE(fmt);
      const Tensor x = tensor_of(v, sizes, dt, fmt);
      const std::vector<double> vx = values(x);
      for (const std::vector<int64_t>& dims : dim_lists(4))
        for (bool keepdim : {false, true}) {
          CAPTURE(lg::to_string(dims));
          CAPTURE(keepdim);
          const std::vector<int64_t> d = wrapped(dims, 4), out_sizes = ref_reduced_sizes(sizes, d, keepdim);
          const std::vector<double> amax = ref_reduce(vx, sizes, d, ReduceOp::Amax);
          check_result(lg::amax(x, dims, keepdim), dt, out_sizes, amax, kExact);
          check_result(lg::amin(x, dims, keepdim), dt, out_sizes, ref_reduce(vx, sizes, d, ReduceOp::Amin), kExact);
          check_result(lg::sum(x, dims, keepdim), dt, out_sizes, ref_reduce(vx, sizes, d, ReduceOp::Sum),
                          sum_tol(dt, reduced_count(sizes, d)));
          REQUIRE(std::count_if(amax.begin(), amax.end(), [](double e) { return std::isnan(e); }) > 0);
        }
    }
  // Small cases by hand.
  const Tensor row = tensor_of({1, NAN, 3}, {3}, f32);
  CHECK(std::isnan(lg::amax(row).item<float>()));
  CHECK(std::isnan(lg::amin(row).item<float>()));
  CHECK(lg::amax(tensor_of({-INFINITY, -2, -INFINITY}, {3}, f32)).item<float>() == -2.0f);
  CHECK(lg::amin(tensor_of({INFINITY, 7, INFINITY}, {3}, f32)).item<float>() == 7.0f);
  CHECK(std::isinf(lg::amax(tensor_of({INFINITY, 7}, {2}, f16)).item<float>()));
}

TEST_CASE("sum and mean: integer and bool sums are int64; the dtype argument casts before reducing") {
  // No int32 overflow, no uint8 wrap: the sum is int64.
  const Tensor s32 = lg::sum(tensor_of({2e9, 2e9, 1}, {3}, i32));
  CHECK(s32.dtype() == i64);
  CHECK(s32.item<int64_t>() == 4000000001);
  const Tensor s8 = lg::sum(tensor_of({200, 200, 200}, {3}, u8));
  CHECK(s8.dtype() == i64);
  CHECK(s8.item<int64_t>() == 600);
  const Tensor bools = tensor_of({1, 0, 1, 1, 1, 1}, {2, 3}, b8);
  CHECK(lg::sum(bools).dtype() == i64);
  CHECK(lg::sum(bools).item<int64_t>() == 5);
  CHECK(values(lg::sum(bools, {1})) == std::vector<double>{2, 3});
  CHECK(values(lg::sum(bools, {0}, true)) == std::vector<double>{2, 1, 2});

  // dtype: the input is cast first, then reduced in that dtype, which is the output's.
  const Tensor frac = lg::sum(tensor_of({1.5, 2.5, 0.75}, {3}, f64), {}, false, i64);  // 1 + 2 + 0, not 4.75
  CHECK(frac.dtype() == i64);
  CHECK(frac.item<int64_t>() == 3);
  const Tensor halves = lg::sum(tensor_of({60000, 60000}, {2}, f16), {}, false, f32);  // past float16's 65504
  CHECK(halves.dtype() == f32);
  CHECK(halves.item<float>() == 120000.0f);
  const Tensor exact = lg::sum(tensor_of({1e8, 1, -1e8}, {3}, f32), {}, false, f64);  // float32 would lose the 1
  CHECK(exact.dtype() == f64);
  CHECK(exact.item<double>() == 1.0);
  const Tensor narrow = lg::sum(tensor_of({200, 200}, {2}, u8), {}, false, i32);
  CHECK(narrow.dtype() == i32);
  CHECK(narrow.item<int32_t>() == 400);
  CHECK(lg::sum(bools, {1}, false, i32).dtype() == i32);
  CHECK(values(lg::sum(bools, {1}, false, i32)) == std::vector<double>{2, 3});
  const Tensor ints_as_float = lg::sum(tensor_of({1, 2, 3, 4}, {2, 2}, i64), {0}, true, f32);
  CHECK(ls(ints_as_float) == "(1,2)@(2,1)");
  CHECK(ints_as_float.dtype() == f32);
  CHECK(values(ints_as_float) == std::vector<double>{4, 6});

  // mean: an integer or bool input with a floating dtype.
  const Tensor m = lg::mean(tensor_of({1, 2, 4}, {3}, i64), {}, false, f64);
  CHECK(m.dtype() == f64);
  CHECK(m.item<double>() == doctest::Approx(7.0 / 3.0).epsilon(1e-15));
  CHECK(lg::mean(bools, {}, false, f32).item<float>() == doctest::Approx(5.0 / 6.0).epsilon(1e-6));
  const Tensor mh = lg::mean(tensor_of({60000, 60000, 30000}, {3}, f16), {}, false, f32);
  CHECK(mh.dtype() == f32);
  CHECK(mh.item<float>() == 50000.0f);

  // amax and amin keep every dtype.
  CHECK(lg::amax(bools).dtype() == b8);
  CHECK(lg::amax(bools).item<bool>() == true);
  CHECK(lg::amin(bools).item<bool>() == false);
  CHECK(values(lg::amin(bools, {0})) == std::vector<double>{1, 0, 1});
  const Tensor bytes = tensor_of({7, 250, 3, 0}, {2, 2}, u8);
  CHECK(lg::amax(bytes).dtype() == u8);
  CHECK(lg::amax(bytes).item<uint8_t>() == 250);
  CHECK(values(lg::amin(bytes, {1})) == std::vector<double>{7, 0});
  CHECK(lg::amin(tensor_of({-5, 2e9, -2e9}, {3}, i32)).item<int32_t>() == -2000000000);
}

TEST_CASE("reduction bad input: each raises an lg::Error naming the op") {
  const Tensor x = lg::ones({2, 3, 4, 5}), ints = lg::ones({2, 3}, i64), bools = lg::ones({2, 3}, b8);
  const auto sum = doctest::Contains("[sum]"), mean = doctest::Contains("[mean]");
  const auto amax = doctest::Contains("[amax]"), amin = doctest::Contains("[amin]");
  // A dim listed twice, directly or through a negative index.
  CHECK_THROWS_WITH_AS(lg::sum(x, {1, 1}), sum, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::sum(x, {1, -3}), sum, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::mean(x, {0, 2, -4}), mean, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::amax(x, {3, 3}, true), amax, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::amin(x, {2, -2}), amin, lg::ValueError);
  // Dims out of range.
  CHECK_THROWS_WITH_AS(lg::sum(x, {4}), sum, lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::sum(x, {-5}), sum, lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::mean(x, {0, 9}), mean, lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::amax(x, {4}), amax, lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::amin(x, {-5}, true), amin, lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::sum(lg::ones({3}), {1}), sum, lg::IndexError);
  // mean of integer or bool input without a floating dtype.
  CHECK_THROWS_WITH_AS(lg::mean(ints), mean, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::mean(ints, {1}, true), mean, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::mean(bools), mean, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::mean(lg::ones({3}, u8)), mean, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::mean(x, {}, false, i64), mean, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::mean(ints, {}, false, i32), mean, lg::TypeError);
  // Undefined input.
  CHECK_THROWS_WITH_AS(lg::sum(Tensor()), sum, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::mean(Tensor(), {1}), mean, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::amax(Tensor()), amax, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::amin(Tensor()), amin, lg::ValueError);
}

TEST_CASE("softmax and log_softmax: values along every dim over every layout variant and float dtype; layout kept") {
  for (DType dt : kFloatTypes) {
    const std::vector<Variant> layouts{
        {"contiguous", noise_in({2, 3, 4, 5}, CF, dt, 1)},
        {"channels_last", noise_in({2, 3, 4, 5}, CL, dt, 2)},
        {"permuted (dims 2 and 3 swapped)", noise_in({2, 3, 5, 4}, CF, dt, 3).transpose(2, 3)},
        {"permuted (every dim moved)", noise_in({5, 2, 4, 3}, CF, dt, 4).permute({1, 3, 2, 0})},
        {"non-dense channels_last slice", noise_in({2, 3, 8, 5}, CL, dt, 5).slice(2, 0, 8, 2)},
        {"non-dense contiguous slice with an offset", noise_in({2, 4, 4, 5}, CF, dt, 6).slice(1, 1, 4)},
        {"expanded (stride 0 in dim 0)", noise_in({1, 3, 4, 5}, CL, dt, 7).expand({2, 3, 4, 5})},
        {"N1HW channels_last", noise_in({2, 1, 4, 5}, CL, dt, 8)},
        {"NC11 channels_last", noise_in({2, 3, 1, 1}, CL, dt, 9)},
        {"5-D channels_last_3d", noise_in({2, 3, 2, 3, 4}, CL3, dt, 10)},
        {"5-D non-dense channels_last_3d slice", noise_in({2, 3, 4, 3, 4}, CL3, dt, 11).slice(2, 0, 4, 2)},
        {"2-D transposed", noise_in({5, 4}, CF, dt, 12).transpose(0, 1)},
        {"1-D", noise_in({7}, CF, dt, 13)},
    };
    for (const Variant& v : layouts)
      for (int64_t dim = -v.t.dim(); dim < v.t.dim(); ++dim)
        for (bool log : {false, true}) {
          CAPTURE(dt);
          CAPTURE(v.name);
          check_softmax(v.t, dim, log);
        }
  }
}

TEST_CASE("softmax and log_softmax: the dtype argument casts first, the layout is still kept") {
  for (DType dt : kFloatTypes)
    for (DType to : {f32, f64})
      for (MemoryFormat fmt : {CF, CL}) {
        CAPTURE(dt);
        CAPTURE(to);
        CAPTURE(fmt);
        const Tensor x = noise_in({2, 3, 4, 5}, fmt, dt, 14);
        for (int64_t dim : {0, 1, 3})
          for (bool log : {false, true}) check_softmax(x, dim, log, to);
      }
  // A non-dense input cast to float64: dense in the input's dim order.
  check_softmax(noise_in({2, 3, 8, 5}, CL, f16, 15).slice(2, 0, 8, 2), 1, false, f64);
  check_softmax(noise_in({2, 3, 8, 5}, CL, f32, 16).slice(2, 0, 8, 2), 2, true, f64);
  // An integer input cast to a floating dtype first.
  check_softmax(tensor_of({1, 2, 3, 4, 5, 6}, {2, 3}, i64), 1, false, f32);
  check_softmax(tensor_of({1, 2, 3, 4, 5, 6}, {2, 3}, i32), 0, true, f64);
}

TEST_CASE("softmax and log_softmax: large values do not overflow, -inf entries give 0 and -inf") {
  for (DType dt : kFloatTypes) {
    CAPTURE(dt);
    const Tensor big = tensor_of({1000, 1001, 1002, -1000, -1001, -1002}, {2, 3}, dt);
    const Tensor with_inf = tensor_of({-INFINITY, 0, 1, 2, -INFINITY, -INFINITY}, {2, 3}, dt);
    for (int64_t dim : {0, 1})
      for (bool log : {false, true}) {
        check_softmax(big, dim, log);
        check_softmax(with_inf, dim, log);
        const Tensor y = log ? lg::log_softmax(big, dim) : lg::softmax(big, dim);
        for (double v : values(y)) CHECK(std::isfinite(v));
      }
    // By hand: softmax(100, 101) = (0.2689, 0.7311), whatever the offset (exp(100) alone would
    // overflow float32; 100 and 101 are exact in bfloat16, 1000 and 1001 are not).
    const Tensor pair = tensor_of({100, 101}, {2}, dt);
    check_close(values(lg::softmax(pair, 0)), rounded({0.2689414213699951, 0.7310585786300049}, dt), tol_for(dt));
    check_close(values(lg::log_softmax(pair, 0)), rounded({-1.3132616875182228, -0.31326168751822286}, dt), tol_for(dt));
    // -inf: probability 0, log-probability -inf; a line of one finite value among -inf is 1 (0).
    const std::vector<double> p = values(lg::softmax(with_inf, 1)), lp = values(lg::log_softmax(with_inf, 1));
    CHECK(p[0] == 0.0);
    CHECK(p[3] == 1.0);
    CHECK(p[4] == 0.0);
    CHECK(lp[0] == -INFINITY);
    CHECK(lp[3] == 0.0);
    CHECK(lp[5] == -INFINITY);
    for (double v : p) CHECK(!std::isnan(v));
    for (double v : lp) CHECK(!std::isnan(v));
    // 4-D channels_last around +-1000 and spread over [-1000, 1000], -inf sprinkled in.
    std::vector<double> v = values(noise_in({2, 3, 4, 5}, CF, f64, 17));
    std::vector<double> shifted = v, spread = v;
    for (double& e : shifted) e += 1000;
    for (double& e : spread) e *= 1000;
    spread[7] = -INFINITY;
    spread[64] = -INFINITY;
    for (const Tensor& x : {tensor_of(shifted, {2, 3, 4, 5}, dt, CL), tensor_of(spread, {2, 3, 4, 5}, dt, CL)})
      for (int64_t dim = 0; dim < 4; ++dim)
        for (bool log : {false, true}) check_softmax(x, dim, log);
  }
}

TEST_CASE("layout row 94 (differs from PyTorch 1.13 on purpose): softmax keeps channels_last") {
  const Tensor x = noise_in({2, 3, 4, 5}, CL, f32, 18);
  REQUIRE(ls(x) == "(2,3,4,5)@(60,1,15,3)");
  CHECK(ls(lg::softmax(x, 1)) == "(2,3,4,5)@(60,1,15,3)");  // PyTorch 1.13: (60,20,5,1)
  CHECK(ls(lg::log_softmax(x, 1)) == "(2,3,4,5)@(60,1,15,3)");
  CHECK(ls(lg::softmax(x, 3, f64)) == "(2,3,4,5)@(60,1,15,3)");
  // A non-dense channels_last slice: dense channels_last.
  const Tensor slice = noise_in({2, 3, 8, 5}, CL, f32, 19).slice(2, 0, 8, 2);
  REQUIRE(ls(slice) == "(2,3,4,5)@(120,1,30,3)");
  CHECK(ls(lg::softmax(slice, 1)) == "(2,3,4,5)@(60,1,15,3)");
  // Ambiguous shapes keep their exact strides.
  const Tensor nc11 = noise_in({2, 3, 1, 1}, CL, f32, 20);
  REQUIRE(ls(nc11) == "(2,3,1,1)@(3,1,3,3)");
  CHECK(ls(lg::softmax(nc11, 1)) == "(2,3,1,1)@(3,1,3,3)");
  CHECK(ls(lg::log_softmax(noise_in({2, 3, 4, 5, 6}, CL3, f32, 21), 1)) == "(2,3,4,5,6)@(360,1,90,18,3)");
}

TEST_CASE("softmax bad input: each raises an lg::Error naming the op") {
  const Tensor x = lg::ones({2, 3, 4, 5});
  const auto sm = doctest::Contains("[softmax]"), lsm = doctest::Contains("[log_softmax]");
  CHECK_THROWS_WITH_AS(lg::softmax(x, 4), sm, lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::softmax(x, -5), sm, lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::log_softmax(x, 4), lsm, lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::log_softmax(x, -5), lsm, lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::softmax(lg::ones({3}), 1), sm, lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::softmax(lg::ones({2, 3}, i64), 1), sm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::softmax(lg::ones({2, 3}, u8), 0), sm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::log_softmax(lg::ones({2, 3}, i32), 1), lsm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::log_softmax(lg::ones({2, 3}, b8), 1), lsm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::softmax(x, 1, i64), sm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::log_softmax(x, 1, b8), lsm, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::softmax(Tensor(), 0), sm, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::log_softmax(Tensor(), 0), lsm, lg::ValueError);
}

TEST_CASE("dropout: not training, or p = 0, returns the input itself") {
  for (const Tensor& x : {noise_in({2, 3, 4, 5}, CL, f32, 1), noise_in({2, 3, 8, 5}, CL, f16, 2).slice(2, 0, 8, 2)}) {
    CAPTURE(ls(x));
    CHECK(lg::dropout(x, 0.5, false).is_same(x));
    CHECK(lg::dropout(x, 0.0, true).is_same(x));
    CHECK(lg::dropout(x, 0.0, false).is_same(x));
    CHECK(lg::dropout(x, 1.0, false).is_same(x));
    CHECK(lg::dropout(x, 0.5, true).is_same(x) == false);
  }
}

TEST_CASE("dropout: p = 1 gives zeros in the input's layout, the input untouched") {
  for (DType dt : kFloatTypes) {
    CAPTURE(dt);
    const Tensor x = noise_in({2, 3, 4, 5}, CL, dt, 3);
    const std::vector<double> before = values(x);
    const Tensor y = lg::dropout(x, 1.0);
    CHECK(y.dtype() == dt);
    CHECK(ls(y) == ls(x));
    CHECK(values(y) == std::vector<double>(120, 0.0));
    CHECK(values(x) == before);
  }
}

TEST_CASE("dropout in training: each element is 0 or x / (1 - p); the input untouched; the layout kept") {
  lg::manual_seed(2024);  // deterministic draws: the "some dropped, some kept" checks cannot flake
  for (DType dt : kFloatTypes)
    for (double p : {0.2, 0.5, 0.9}) {
      const std::vector<Variant> layouts{
          {"contiguous", noise_in({2, 3, 4, 5}, CF, dt, 4)},
          {"channels_last", noise_in({2, 3, 4, 5}, CL, dt, 5)},
          {"channels_last_3d", noise_in({2, 3, 2, 3, 4}, CL3, dt, 6)},
          {"N1HW channels_last", noise_in({2, 1, 6, 10}, CL, dt, 7)},
          {"permuted", noise_in({2, 3, 5, 4}, CF, dt, 8).transpose(2, 3)},
          {"non-dense channels_last slice", noise_in({2, 3, 8, 5}, CL, dt, 9).slice(2, 0, 8, 2)},
      };
      for (const Variant& v : layouts) {
        CAPTURE(dt);
        CAPTURE(p);
        CAPTURE(v.name);
        const std::vector<double> before = values(v.t);
        const Tensor y = lg::dropout(v.t, p);
        CHECK(y.dtype() == dt);
        CHECK(ls(y) == ls(lg::empty_like(v.t)));
        if (v.t.is_non_overlapping_and_dense()) CHECK(y.strides() == v.t.strides());
        CHECK_FALSE(y.is_alias_of(v.t));
        const size_t zeros = check_dropped_or_scaled(y, v.t, p);
        CHECK(zeros > 0);  // at least 120 elements: all kept or all dropped has odds of at most 0.9^120
        CHECK(zeros < before.size());
        CHECK(values(v.t) == before);
      }
    }
}

TEST_CASE("dropout: lg::manual_seed makes it reproducible; different seeds and later calls differ") {
  const Tensor x = noise_in({4, 8, 5, 5}, CL, f32, 10);
  lg::manual_seed(123);
  const std::vector<double> a = values(lg::dropout(x, 0.5));
  const std::vector<double> later = values(lg::dropout(x, 0.5));  // the generator has moved on
  lg::manual_seed(123);
  const std::vector<double> b = values(lg::dropout(x, 0.5));
  lg::manual_seed(124);
  const std::vector<double> c = values(lg::dropout(x, 0.5));
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a != later);
  // The same seed reproduces float16 and 1-D draws too.
  for (const Tensor& t : {lg::ones({1000}), noise_in({2, 3, 4, 5}, CF, f16, 11)}) {
    CAPTURE(ls(t));
    lg::manual_seed(5);
    const std::vector<double> d1 = values(lg::dropout(t, 0.3));
    lg::manual_seed(5);
    const std::vector<double> d2 = values(lg::dropout(t, 0.3));
    CHECK(d1 == d2);
    lg::manual_seed(6);
    CHECK(values(lg::dropout(t, 0.3)) != d1);
  }
}

TEST_CASE("dropout: the fraction of zeros over 100k elements is within 0.01 of p, in both halves") {
  for (double p : {0.1, 0.5, 0.75})
    for (MemoryFormat fmt : {CF, CL}) {
      CAPTURE(p);
      CAPTURE(fmt);
      const Tensor x = lg::empty({10, 10, 25, 40}, f32, fmt);
      x.fill_(1.0);
      lg::manual_seed(42);
      const Tensor y = lg::dropout(x, p);
      CHECK(ls(y) == ls(x));
      const std::vector<double> v = values(y);
      REQUIRE(v.size() == 100000);
      const double fraction = static_cast<double>(count_zeros(v)) / 1e5;
      CHECK(std::fabs(fraction - p) <= 0.01);
      // Each half on its own (a mask drawn for part of the tensor only would show here).
      const std::vector<double> first(v.begin(), v.begin() + 50000), second(v.begin() + 50000, v.end());
      CHECK(std::fabs(static_cast<double>(count_zeros(first)) / 5e4 - p) <= 0.015);
      CHECK(std::fabs(static_cast<double>(count_zeros(second)) / 5e4 - p) <= 0.015);
      // The kept elements are 1 / (1 - p).
      const double kept = static_cast<float>(1.0 / (1.0 - p));
      size_t wrong = 0;
      for (double e : v)
        if (e != 0 && std::fabs(e - kept) > 1e-6 * kept) ++wrong;
      CHECK(wrong == 0);
    }
}

TEST_CASE("dropout bad input: p outside [0, 1], undefined input") {
  const Tensor x = lg::ones({2, 3});
  const auto dropout = doctest::Contains("[dropout]");
  CHECK_THROWS_WITH_AS(lg::dropout(x, -0.1), dropout, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::dropout(x, 1.5), dropout, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::dropout(x, 2.0, true), dropout, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::dropout(Tensor(), 0.5), dropout, lg::ValueError);
}

}  // TEST_SUITE

// Pooling against the float64 reference (ops/pool_reference.h): max_pool2d (with indices),
// max_pool3d, avg_pool2d/3d, adaptive_avg_pool2d/3d and adaptive_max_pool2d over every input
// layout (contiguous, channels_last(_3d), permuted, non-dense slices and narrows, a broadcast
// batch; N1HW and NC11 shapes), zero batch and unbatched input; kernel, stride, padding,
// dilation, ceil_mode, count_include_pad and divisor_override; float32, float64, float16,
// bfloat16 and integer dtypes (max pooling). Every output is dense in the input's suggested
// format, indices (int64, flat h * W + w within the plane) have the values' strides; ties go to
// the first element in window order and NaN wins. Bad input raises an lg::Error naming the op.
// The hand-computed values and the exact strides of layout rows 67-73 are in
// test_layout_rows_norm_pool.cpp.
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <layoutguard/testing/doctest.h>

#include "ops/pool_reference.h"
#include "support/guard_testing.h"
#include "support/op_testing.h"

namespace {

using lg::DType;
using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

std::string list(const std::vector<int64_t>& v) { return lg::to_string(v); }

// ---- Inputs ----

// Integers in [lo, hi] as dtype dt laid out in fmt: many equal values, so that ties decide
// the indices. The same LCG as noise_in (values of a float64 noise_in tensor, rescaled).
Tensor small_ints_in(lg::IntArrayRef sizes, MemoryFormat fmt, DType dt, uint32_t seed, int lo, int hi) {
  const Tensor u = noise_in(sizes, CF, lg::kFloat64, seed);  // contiguous, in [-1, 1)
  const Tensor v = lg::empty(sizes, lg::kFloat64);
  const double* src = u.data_ptr<double>();
  double* dst = v.data_ptr<double>();
  for (int64_t i = 0; i < u.numel(); ++i) dst[i] = lo + std::floor((src[i] + 1) / 2 * (hi - lo + 1));
  Tensor t = lg::empty(sizes, lg::TensorOptions().dtype(dt), fmt);
  t.copy_(v);
  return t;
}

// The layouts of a 4-D or 5-D shape: contiguous, channels_last(_3d), two permutations (the last
// two dims swapped in memory, then transposed back; C outside N), non-dense views (every other
// index of dim 2 of a channels_last tensor; a narrow of channels and W of a bigger contiguous
// tensor; a channel narrow and every other channel of channels_last tensors) and a broadcast
// batch (stride 0).
std::vector<std::pair<std::string, Tensor>> input_variants(const std::vector<int64_t>& s, DType dt, uint32_t seed) {
  const MemoryFormat cl = s.size() == 5 ? CL3 : CL;
  const int64_t last = static_cast<int64_t>(s.size()) - 1, C = s[1];
  std::vector<int64_t> swapped = s, c_first = s, doubled = s, wider = s, more_channels = s, one = s;
  std::swap(swapped[last - 1], swapped[last]);
  std::swap(c_first[0], c_first[1]);
  doubled[2] *= 2;
  wider[1] += 2;
  wider[last] += 3;
  more_channels[1] *= 2;
  one[0] = 1;
  return {
      {"contiguous", noise_in(s, CF, dt, seed)},
      {"channels_last", noise_in(s, cl, dt, seed)},
      {"permuted (last two dims swapped)", noise_in(swapped, CF, dt, seed).transpose(last - 1, last)},
      {"permuted (C outside N)", noise_in(c_first, CF, dt, seed).transpose(0, 1)},
      {"non-dense channels_last slice", noise_in(doubled, cl, dt, seed).slice(2, 0, doubled[2], 2)},
      {"non-dense narrow of a contiguous tensor", noise_in(wider, CF, dt, seed).narrow(1, 1, C).narrow(last, 2, s[last])},
      {"channels_last channel narrow", noise_in(more_channels, cl, dt, seed).narrow(1, 1, C)},
      {"channels_last, every other channel", noise_in(more_channels, cl, dt, seed).slice(1, 0, 2 * C, 2)},
      {"broadcast batch", noise_in(one, cl, dt, seed).expand(s)},
  };
}

// 2-D shapes: plain, N1HW, NC11, an odd one with more channels; 3-D shapes likewise.
const std::vector<std::vector<int64_t>> kShapes2d{{2, 3, 7, 5}, {2, 1, 6, 5}, {2, 4, 1, 1}, {1, 6, 5, 8}};
const std::vector<std::vector<int64_t>> kShapes3d{{2, 3, 4, 5, 6}, {2, 1, 3, 4, 5}, {2, 3, 1, 1, 1}};

// ---- Parameter sets ----

struct MaxCase {
  std::vector<int64_t> k, s, p, d;
  bool ceil;
};
std::string describe(const MaxCase& c) {
  return "kernel " + list(c.k) + " stride " + list(c.s) + " padding " + list(c.p) + " dilation " + list(c.d) +
         (c.ceil ? " ceil_mode" : "");
}

const std::vector<MaxCase> kMax2d{
    {{2}, {}, {0}, {1}, false},           // stride = kernel
    {{3}, {2}, {1}, {1}, false},          //
    {{3}, {2}, {1}, {1}, true},           //
    {{2}, {2}, {0}, {1}, true},           // ceil_mode adds a partial last window (H = 7)
    {{2}, {2}, {1}, {1}, true},           // ceil_mode drops a window starting in the right padding (W = 5)
    {{3, 2}, {2, 1}, {1, 0}, {1}, false},  // per-dim values
    {{3, 2}, {1, 2}, {0, 1}, {2, 1}, true},
    {{2}, {1}, {1}, {2}, false},  // dilation with padding
    {{3}, {3, 2}, {1}, {2, 1}, true},
    {{1}, {1}, {0}, {1}, false},  // the identity
    {{1}, {2}, {0}, {1}, true},   // ceil_mode with a 1-wide kernel (pytorch#45357)
};
const std::vector<MaxCase> kMax3d{
    {{2}, {}, {0}, {1}, false},
    {{3}, {2}, {1}, {1}, false},
    {{3}, {2}, {1}, {1}, true},
    {{2, 3, 2}, {1, 2, 2}, {0, 1, 1}, {1, 1, 2}, true},
    {{3, 2, 3}, {2}, {1, 0, 1}, {2, 1, 1}, false},
    {{1}, {2}, {0}, {1}, true},
};

struct AvgCase {
  std::vector<int64_t> k, s, p;
};
const std::vector<AvgCase> kAvg2d{
    {{2}, {}, {0}}, {{3}, {2}, {1}}, {{2}, {2}, {1}}, {{3, 2}, {2, 1}, {1, 0}}, {{2, 3}, {1, 2}, {1, 1}}, {{1}, {2}, {0}},
};
const std::vector<AvgCase> kAvg3d{
    {{2}, {}, {0}}, {{3}, {2}, {1}}, {{2, 3, 2}, {1, 2, 2}, {1, 1, 0}}, {{1, 2, 3}, {2, 1, 2}, {0}},
};

// Adaptive output sizes for an input's spatial sizes: 1s (global pooling, ATen's mean path), the
// input size (identity), about half, one larger than the input (overlapping bins), fixed ones.
std::vector<std::vector<int64_t>> adaptive_sizes(const std::vector<int64_t>& spatial) {
  std::vector<int64_t> ones(spatial.size(), 1), half, larger, fixed;
  for (size_t i = 0; i < spatial.size(); ++i) {
    half.push_back((spatial[i] + 1) / 2);
    larger.push_back(spatial[i] + 1 + static_cast<int64_t>(i));
    fixed.push_back(static_cast<int64_t>(3 - i % 2));
  }
  return {ones, spatial, half, larger, fixed};
}

// ---- Checks ----

// Sizes as the reference takes them: unbatched (C, ...) input gets N = 1.
std::vector<int64_t> batched_sizes(const Tensor& x, int spatial) {
  std::vector<int64_t> s = x.sizes().vec();
  if (static_cast<int>(s.size()) == spatial + 1) s.insert(s.begin(), 1);
  return s;
}

// The output layout: dense in the batched input's suggested format; unbatched outputs are
// contiguous (ATen allocates them without a memory format).
MemoryFormat expected_format(const Tensor& x, int spatial) {
  return x.dim() == spatial + 2 ? x.suggest_memory_format() : CF;
}

// out has the reference's sizes (without N for unbatched input), x's dtype and dense strides.
void check_layout(const Tensor& out, const Tensor& x, int spatial, std::vector<int64_t> want_sizes) {
  if (x.dim() == spatial + 1) want_sizes.erase(want_sizes.begin());
  REQUIRE(lg::to_string(out.sizes()) == list(want_sizes));
  CHECK(out.dtype() == x.dtype());
  CHECK(ls(out) == ls(lg::empty(out.sizes(), lg::TensorOptions(), expected_format(x, spatial))));
}

void check_indices(const Tensor& idx, const Tensor& out, const std::vector<int64_t>& want) {
  CHECK(idx.dtype() == lg::kInt64);
  CHECK(ls(idx) == ls(out));
  const std::vector<double> got = values(idx);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != static_cast<double>(want[i])) {
      FAIL_CHECK("index " << i << ": got " << got[i] << ", want " << want[i]);
      return;
    }
}

// A maximum is one of the inputs: exact values (NaN where the reference has NaN).
void check_max_result(const Tensor& out, const Tensor& idx, const Tensor& x, int spatial, const PoolResult& want) {
  check_layout(out, x, spatial, want.sizes);
  check_close(values(out), want.values, Tol{0, 0});
  if (idx.defined()) check_indices(idx, out, want.indices);
}

// Whether the (dilated) kernel fits in the padded input in every dim (floor-mode output >= 1).
bool kernel_fits(const std::vector<int64_t>& sizes, const PoolParams& p) {
  const PoolShape s = pool_shape(sizes);
  for (size_t i = 0; i < 3; ++i)
    if (pool_out_size(s.in[i], p.dims[i], false) < 1) return false;
  return true;
}

// max_pool2d_with_indices and max_pool2d (or max_pool3d) against the reference. A kernel wider
// than the padded input must be rejected without ceil_mode. In a sweep, the cases with a test
// case of their own are left out: a kernel wider than the padded input with ceil_mode, and a
// window that holds no input element (padding and dilation).
void check_max_pool(const Tensor& x, int spatial, const MaxCase& c, bool sweep = true) {
  CAPTURE(describe(c));
  const std::vector<int64_t> sizes = batched_sizes(x, spatial);
  const PoolParams p = make_pool_params(spatial, c.k, c.s, c.p, c.d, c.ceil);
  if (!kernel_fits(sizes, p) && !c.ceil) {
    if (spatial == 2)
      CHECK_THROWS_WITH_AS(lg::max_pool2d(x, c.k, c.s, c.p, c.d), doctest::Contains("[max_pool2d]"), lg::ValueError);
    else
      CHECK_THROWS_WITH_AS(lg::max_pool3d(x, c.k, c.s, c.p, c.d), doctest::Contains("[max_pool3d]"), lg::ValueError);
    return;
  }
  if (sweep && !kernel_fits(sizes, p)) return;
  const PoolResult want = ref_max_pool(values(x), sizes, p);
  if (sweep && want.empty_windows > 0) return;
  if (spatial == 2) {
    const std::pair<Tensor, Tensor> r = lg::max_pool2d_with_indices(x, c.k, c.s, c.p, c.d, c.ceil);
    check_max_result(r.first, r.second, x, 2, want);
    check_max_result(lg::max_pool2d(x, c.k, c.s, c.p, c.d, c.ceil), Tensor(), x, 2, want);
  } else {
    check_max_result(lg::max_pool3d(x, c.k, c.s, c.p, c.d, c.ceil), Tensor(), x, 3, want);
  }
}

// avg_pool2d / avg_pool3d against the reference, the result rounded to x's dtype; as
// check_max_pool for kernels wider than the padded input.
void check_avg_pool(const Tensor& x, int spatial, const AvgCase& c, bool ceil, bool count_include_pad,
                    std::optional<int64_t> divisor, bool sweep = true) {
  CAPTURE("kernel " + list(c.k) + " stride " + list(c.s) + " padding " + list(c.p));
  CAPTURE(ceil);
  CAPTURE(count_include_pad);
  CAPTURE(divisor.value_or(0));
  const std::vector<int64_t> sizes = batched_sizes(x, spatial);
  const PoolParams p = make_pool_params(spatial, c.k, c.s, c.p, {1}, ceil, count_include_pad, divisor);
  const char* tag = spatial == 2 ? "[avg_pool2d]" : "[avg_pool3d]";
  const auto run = [&] {
    return spatial == 2 ? lg::avg_pool2d(x, c.k, c.s, c.p, ceil, count_include_pad, divisor)
                        : lg::avg_pool3d(x, c.k, c.s, c.p, ceil, count_include_pad, divisor);
  };
  if (!kernel_fits(sizes, p) && !ceil) {
    CHECK_THROWS_WITH_AS(run(), doctest::Contains(tag), lg::ValueError);
    return;
  }
  if (sweep && !kernel_fits(sizes, p)) return;
  const PoolResult want = ref_avg_pool(values(x), sizes, p);
  const Tensor out = run();
  check_layout(out, x, spatial, want.sizes);
  check_close(values(out), rounded(want.values, x.dtype()), tol_for(x.dtype()));
}

// Every combination of ceil_mode, count_include_pad and divisor_override for one window.
void check_avg_pool_all_modes(const Tensor& x, int spatial, const AvgCase& c) {
  for (bool ceil : {false, true})
    for (bool count_include_pad : {true, false})
      for (std::optional<int64_t> divisor : {std::optional<int64_t>{}, std::optional<int64_t>{5}})
        check_avg_pool(x, spatial, c, ceil, count_include_pad, divisor);
}

void check_adaptive_avg(const Tensor& x, int spatial, const std::vector<int64_t>& output_size) {
  CAPTURE(list(output_size));
  const PoolResult want = ref_adaptive_avg_pool(values(x), batched_sizes(x, spatial), output_size);
  const Tensor out = spatial == 2 ? lg::adaptive_avg_pool2d(x, output_size) : lg::adaptive_avg_pool3d(x, output_size);
  check_layout(out, x, spatial, want.sizes);
  check_close(values(out), rounded(want.values, x.dtype()), tol_for(x.dtype()));
}

void check_adaptive_max(const Tensor& x, const std::vector<int64_t>& output_size) {
  CAPTURE(list(output_size));
  const PoolResult want = ref_adaptive_max_pool(values(x), batched_sizes(x, 2), output_size);
  const std::pair<Tensor, Tensor> r = lg::adaptive_max_pool2d(x, output_size);
  check_max_result(r.first, r.second, x, 2, want);
}

std::vector<int64_t> spatial_sizes(const Tensor& x, int spatial) {
  const std::vector<int64_t> s = x.sizes().vec();
  return std::vector<int64_t>(s.end() - spatial, s.end());
}

// Every 2-D op with every parameter set on x.
void check_every_2d_op(const Tensor& x) {
  for (const MaxCase& c : kMax2d) check_max_pool(x, 2, c);
  for (const AvgCase& c : kAvg2d) check_avg_pool_all_modes(x, 2, c);
  for (const std::vector<int64_t>& o : adaptive_sizes(spatial_sizes(x, 2))) {
    check_adaptive_avg(x, 2, o);
    check_adaptive_max(x, o);
  }
}

void check_every_3d_op(const Tensor& x) {
  for (const MaxCase& c : kMax3d) check_max_pool(x, 3, c);
  for (const AvgCase& c : kAvg3d) check_avg_pool_all_modes(x, 3, c);
  for (const std::vector<int64_t>& o : adaptive_sizes(spatial_sizes(x, 3))) check_adaptive_avg(x, 3, o);
}

// Calls check(x) for every layout x of every shape in float32 (input_variants from seed).
void for_each_shape_layout(const std::vector<std::vector<int64_t>>& shapes, uint32_t seed,
                           void (*check)(const Tensor&)) {
  for (const std::vector<int64_t>& s : shapes) {
    for (const auto& [name, x] : input_variants(s, f32, seed)) {
      CAPTURE(list(s));
      CAPTURE(name);
      CAPTURE(ls(x));
      check(x);
    }
  }
}

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("2-D pooling: values, indices and output layout over every input layout and parameter set (float32)") {
  for_each_shape_layout(kShapes2d, 1, check_every_2d_op);
}

TEST_CASE("3-D pooling: values and output layout over every input layout and parameter set (float32)") {
  for_each_shape_layout(kShapes3d, 2, check_every_3d_op);
}

TEST_CASE("pooling: float64, float16 and bfloat16 (half precision accumulates in float32)") {
  for (DType dt : {lg::kFloat64, lg::kFloat16, lg::kBFloat16}) {
    CAPTURE(dt);
    for (const auto& [name, x] : input_variants({2, 3, 7, 5}, dt, 3)) {
      if (name != "contiguous" && name != "channels_last" && name != "non-dense channels_last slice") continue;
      CAPTURE(name);
      check_every_2d_op(x);
    }
    for (MemoryFormat fmt : {CF, CL3}) {
      CAPTURE(fmt);
      check_every_3d_op(noise_in({2, 3, 4, 5, 6}, fmt, dt, 4));
    }
  }
}

TEST_CASE("max pooling on integer dtypes: padding never contributes, ties go to the first element") {
  // Values in [-4, 4] (uint8: [0, 8]): negative maxima next to the padding, and many ties.
  for (DType dt : {lg::kInt32, lg::kInt64, lg::kUInt8}) {
    CAPTURE(dt);
    const int lo = dt == lg::kUInt8 ? 0 : -4, hi = lo + 8;
    for (MemoryFormat fmt : {CF, CL}) {
      CAPTURE(fmt);
      const Tensor x = small_ints_in({2, 3, 7, 5}, fmt, dt, 5, lo, hi);
      for (const MaxCase& c : kMax2d) check_max_pool(x, 2, c);
      check_max_pool(x.slice(2, 0, 7, 2), 2, {{2}, {1}, {1}, {1}, true});  // non-dense
    }
    for (MemoryFormat fmt : {CF, CL3}) {
      CAPTURE(fmt);
      const Tensor x = small_ints_in({2, 3, 4, 5, 6}, fmt, dt, 6, lo, hi);
      for (const MaxCase& c : kMax3d) check_max_pool(x, 3, c);
    }
  }
  // All-negative planes: a padded zero would win if padding took part.
  const Tensor negative = lg::sub(small_ints_in({1, 2, 4, 4}, CL, lg::kInt64, 7, 0, 3), 10);
  check_max_pool(negative, 2, {{3}, {1}, {1}, {1}, false});
}

TEST_CASE("max pooling: ties go to the first element in window order, NaN wins, -inf planes") {
  for (DType dt : {f32, lg::kFloat64, lg::kBFloat16}) {
    CAPTURE(dt);
    // Integer-valued floats in [-2, 2]: every window has ties.
    const Tensor ties = small_ints_in({2, 3, 7, 6}, CF, dt, 8, -2, 2);
    // NaNs at a few positions (several in some windows, so the rule for more than one NaN
    // shows too) and one plane of -inf only, where the first element of each window is the max.
    Tensor special = noise_in({2, 3, 7, 6}, CF, lg::kFloat64, 9);
    double* p = special.data_ptr<double>();
    for (int64_t i : {0, 1, 9, 20, 21, 27, 44, 45, 50, 83, 100, 101, 102, 107, 200, 241})
      p[i] = std::numeric_limits<double>::quiet_NaN();
    for (int64_t i = 42 * 4; i < 42 * 5; ++i) p[i] = -std::numeric_limits<double>::infinity();
    special = special.to(dt);
    for (const Tensor& base : {ties, special}) {
      for (MemoryFormat fmt : {CF, CL}) {
        CAPTURE(fmt);
        const Tensor x = base.contiguous(fmt);
        for (const MaxCase& c : kMax2d) check_max_pool(x, 2, c);
        for (const std::vector<int64_t>& o : adaptive_sizes({7, 6})) check_adaptive_max(x, o);
        for (const MaxCase& c : kMax3d) check_max_pool(x.unsqueeze(2).expand({2, 3, 3, 7, 6}), 3, c);
      }
    }
  }
}

TEST_CASE("pooling: unbatched (C, H, W) and (C, D, H, W) input gives unbatched, contiguous output") {
  const Tensor chw = noise_in({3, 7, 5}, CF, f32, 10);
  const std::vector<std::pair<std::string, Tensor>> inputs2d{
      {"contiguous", chw},
      {"HWC (channels innermost)", noise_in({7, 5, 3}, CF, f32, 11).permute({2, 0, 1})},
      {"non-dense slice", noise_in({3, 14, 5}, CF, f32, 12).slice(1, 0, 14, 2)},
      {"one channel", noise_in({1, 6, 6}, CF, f32, 13)},
  };
  for (const auto& [name, x] : inputs2d) {
    CAPTURE(name);
    check_every_2d_op(x);
  }
  const std::vector<std::pair<std::string, Tensor>> inputs3d{
      {"contiguous", noise_in({3, 4, 5, 6}, CF, f32, 14)},
      {"permuted", noise_in({3, 4, 6, 5}, CF, f32, 15).transpose(2, 3)},
      {"non-dense slice", noise_in({3, 8, 5, 6}, CF, f32, 16).slice(1, 0, 8, 2)},
  };
  for (const auto& [name, x] : inputs3d) {
    CAPTURE(name);
    check_every_3d_op(x);
  }
  // Unbatched and batched agree element for element.
  const std::pair<Tensor, Tensor> u = lg::max_pool2d_with_indices(chw, {3}, {2}, {1});
  const std::pair<Tensor, Tensor> b = lg::max_pool2d_with_indices(chw.unsqueeze(0), {3}, {2}, {1});
  CHECK(values(u.first) == values(b.first));
  CHECK(values(u.second) == values(b.second));
}

TEST_CASE("pooling: a zero-size batch gives an empty output of the right sizes and layout") {
  for (MemoryFormat fmt : {CF, CL}) {
    CAPTURE(fmt);
    const Tensor x = lg::empty({0, 3, 7, 5}, lg::TensorOptions(), fmt);
    for (const MaxCase& c : kMax2d) check_max_pool(x, 2, c);
    for (const AvgCase& c : kAvg2d) check_avg_pool_all_modes(x, 2, c);
    for (const std::vector<int64_t>& o : adaptive_sizes({7, 5})) {
      check_adaptive_avg(x, 2, o);
      check_adaptive_max(x, o);
    }
    const Tensor narrowed = lg::empty({0, 6, 7, 5}, lg::TensorOptions(), fmt).narrow(1, 1, 3);
    check_max_pool(narrowed, 2, {{3}, {2}, {1}, {1}, true});
    check_avg_pool(narrowed, 2, {{3}, {2}, {1}}, true, false, std::nullopt);
  }
  for (MemoryFormat fmt : {CF, CL3}) {
    CAPTURE(fmt);
    check_every_3d_op(lg::empty({0, 3, 4, 5, 6}, lg::TensorOptions(), fmt));
  }
}

TEST_CASE("pooling: larger inputs split across threads agree with the reference in both layouts") {
  for (const auto& [name, x] : input_variants({3, 20, 17, 19}, f32, 17)) {
    if (name == "broadcast batch" || name == "permuted (last two dims swapped)") continue;
    CAPTURE(name);
    check_max_pool(x, 2, {{3}, {2}, {1}, {1}, true});
    check_max_pool(x, 2, {{2}, {1}, {0}, {2}, false});
    check_avg_pool(x, 2, {{3}, {2}, {1}}, true, false, std::nullopt);
    check_avg_pool(x, 2, {{4, 3}, {3, 2}, {2, 1}}, false, true, std::nullopt);
    check_adaptive_avg(x, 2, {5, 4});
    check_adaptive_max(x, {6, 7});
  }
  for (MemoryFormat fmt : {CF, CL3}) {
    CAPTURE(fmt);
    const Tensor x = noise_in({2, 16, 7, 9, 8}, fmt, f32, 18);
    check_max_pool(x, 3, {{3}, {2}, {1}, {1}, true});
    check_avg_pool(x, 3, {{3}, {2}, {1}}, false, false, std::nullopt);
    check_adaptive_avg(x, 3, {3, 4, 5});
  }
}

TEST_CASE("NHWC float32 pooling: the register-blocked channel path equals the portable loop bit for bit") {
  // Dense channels take cpu/pool_taps (AVX2 where the CPU has it: 32-channel blocks, 8-channel
  // steps, a scalar tail); every other channel stride 2 forces the portable loop, which walks
  // the taps in the same order. C = 45 and 70 reach all three parts; NaNs, infinities and
  // signed zeros test the max rule and the sums. (Max pooling with indices, adaptive max
  // included, never takes pool_taps. On a CPU without AVX2 both sides run the portable loop.)
  for (int64_t C : {45, 70}) {
    Tensor wide = noise_in({2, 2 * C, 9, 11}, CL, f32, 31);
    float* p = wide.data_ptr<float>();  // channels_last: element (n, c, h, w) at ((n*9 + h)*11 + w)*2C + c
    p[0] = NAN;
    p[2 * C * 5 + 4] = INFINITY;
    p[2 * C * 12 + 6] = -INFINITY;
    p[2 * C * 13 + 8] = -0.0f;
    const Tensor strided = wide.slice(1, 0, 2 * C, 2);  // channel stride 2
    const Tensor dense = strided.contiguous(CL);
    REQUIRE(strided.stride(1) == 2);
    REQUIRE(dense.stride(1) == 1);
    const auto same = [&](const std::function<Tensor(const Tensor&)>& pool) {
      const Tensor a = pool(dense), b = pool(strided);
      LG_CHECK_CHANNELS_LAST(a);
      LG_CHECK_CHANNELS_LAST(b);
      check_close(values(a), values(b), Tol{0, 0});
    };
    CAPTURE(C);
    same([](const Tensor& x) { return lg::max_pool2d(x, {3}, {2}, {1}); });
    same([](const Tensor& x) { return lg::max_pool2d(x, {2}, {2}, {0}, {1}, true); });
    same([](const Tensor& x) { return lg::max_pool2d(x, {3, 2}, {1, 2}, {1, 1}, {2, 3}); });  // dilation
    same([](const Tensor& x) { return lg::avg_pool2d(x, {3}, {1}, {1}); });
    same([](const Tensor& x) { return lg::avg_pool2d(x, {2}, {2}, {0}, true, false); });
    same([](const Tensor& x) { return lg::avg_pool2d(x, {3, 2}, {2, 1}, {1, 0}, false, true, -3); });
    same([](const Tensor& x) { return lg::adaptive_avg_pool2d(x, {4, 5}); });
    same([](const Tensor& x) { return lg::adaptive_avg_pool2d(x, {1, 1}); });
  }
}

TEST_CASE("ceil_mode: a window wider than the padded input still gives an output when the rounded-up size is >= 1") {
  // ATen: floor((in + 2p - d(k-1) - 1) / s) + 1 with the division rounded toward minus infinity,
  // or up with ceil_mode. in = 2, k = 3, s = 2: floor(-1 / 2) + 1 = 0 is rejected, ceil(-1 / 2) + 1
  // = 1 gives one window, clipped to the input (average pooling divides by the clipped padded
  // window). in = 2, k = 3, s = 1: ceil(-1 / 1) + 1 = 0 is rejected in both modes.
  const Tensor x = noise_in({2, 3, 2, 2}, CL, f32, 19);
  const Tensor x3 = noise_in({1, 2, 2, 2, 2}, CF, f32, 20);
  CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {3}, {2}), doctest::Contains("[max_pool2d]"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {3}, {1}, {-1}), doctest::Contains("[max_pool2d] pad must be non-negative"),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::avg_pool2d(x, {3}, {2}), doctest::Contains("[avg_pool2d]"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {3}, {1}, {0}, {1}, true), doctest::Contains("[max_pool2d]"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::avg_pool2d(x, {3}, {1}, {0}, true), doctest::Contains("[avg_pool2d]"), lg::ValueError);

  const PoolParams p2 = make_pool_params(2, {3}, {2}, {0}, {1}, true);
  const PoolResult want_max = ref_max_pool(values(x), x.sizes().vec(), p2);
  REQUIRE(want_max.sizes == std::vector<int64_t>{2, 3, 1, 1});
  const std::pair<Tensor, Tensor> r = lg::max_pool2d_with_indices(x, {3}, {2}, {0}, {1}, true);
  check_max_result(r.first, r.second, x, 2, want_max);
  for (bool count_include_pad : {true, false}) {
    CAPTURE(count_include_pad);
    check_avg_pool(x, 2, {{3}, {2}, {0}}, true, count_include_pad, std::nullopt, false);
    check_avg_pool(x, 2, {{3, 2}, {2, 1}, {0, 1}}, true, count_include_pad, std::nullopt, false);  // wide in H only
    check_avg_pool(x3, 3, {{3}, {2}, {0}}, true, count_include_pad, std::nullopt, false);
  }
  check_max_pool(x, 2, {{3, 2}, {2, 1}, {0, 1}, {1}, true}, false);
  check_max_pool(x3, 3, {{3}, {2}, {0}, {1}, true}, false);
  // NC11: a 2-wide window of stride 2 over one element.
  check_max_pool(noise_in({2, 4, 1, 1}, CL, f32, 21), 2, {{2}, {2}, {0}, {1}, true}, false);
}

TEST_CASE("max pooling: a one-tap kernel takes any dilation, int64's largest included") {
  // The dilation of a 1-wide window is irrelevant and accepted as PyTorch accepts it; no
  // kernel may step by it (tap += dilation would overflow).
  const int64_t huge = std::numeric_limits<int64_t>::max();
  for (MemoryFormat fmt : {CF, CL}) {
    CAPTURE(fmt);
    const Tensor x = noise_in({2, 40, 5, 6}, fmt, f32, 23);
    check_close(values(lg::max_pool2d(x, {1}, {2}, {0}, {huge})), values(lg::max_pool2d(x, {1}, {2}, {0}, {1})), Tol{0, 0});
    check_close(values(lg::max_pool2d_with_indices(x, {1, 2}, {1}, {0}, {huge, 1}).first),
                values(lg::max_pool2d(x, {1, 2}, {1}, {0}, {1, 1})), Tol{0, 0});
  }
}

TEST_CASE("max pooling: a window with no input element (padding and dilation) gives -inf") {
  // in = 2, k = 2, p = 1, d = 3: the one window of a dim reads positions -1 and 2, both outside.
  // (ATen's index for such a window points past the window, at its first tap >= 0; only the
  // value is checked here.)
  for (MemoryFormat fmt : {CF, CL}) {
    CAPTURE(fmt);
    const Tensor x = noise_in({2, 3, 2, 5}, fmt, f32, 22);
    const PoolParams p = make_pool_params(2, {2, 1}, {1}, {1, 0}, {3, 1}, false);
    const PoolResult want = ref_max_pool(values(x), x.sizes().vec(), p);
    REQUIRE(want.empty_windows == 2 * 3 * 5);
    const Tensor out = lg::max_pool2d_with_indices(x, {2, 1}, {1}, {1, 0}, {3, 1}).first;
    check_layout(out, x, 2, want.sizes);
    check_close(values(out), want.values, Tol{0, 0});
    CHECK(values(out) == std::vector<double>(2 * 3 * 5, -std::numeric_limits<double>::infinity()));
    // Values only (the NCHW separable kernel), with the empty windows along W instead: no
    // column has a tap to take.
    const Tensor t = x.transpose(2, 3).contiguous(fmt);
    const Tensor out_t = lg::max_pool2d(t, {1, 2}, {1}, {0, 1}, {1, 3});
    CHECK(values(out_t) == std::vector<double>(2 * 3 * 5, -std::numeric_limits<double>::infinity()));
  }
}

TEST_CASE("avg_pool: divisor_override replaces the divisor, whatever its sign") {
  // ATen divides by divisor_override whenever it is given (only 0 is rejected): a negative
  // override negates the scaled sum.
  for (std::optional<int64_t> divisor : {std::optional<int64_t>{1}, std::optional<int64_t>{3}, std::optional<int64_t>{-2},
                                         std::optional<int64_t>{-9}}) {
    CAPTURE(divisor.value_or(0));
    for (MemoryFormat fmt : {CF, CL}) {
      CAPTURE(fmt);
      const Tensor x = noise_in({2, 3, 7, 5}, fmt, f32, 24);
      for (bool count_include_pad : {true, false}) {
        check_avg_pool(x, 2, {{3}, {2}, {1}}, true, count_include_pad, divisor);
        check_avg_pool(x, 2, {{2}, {}, {0}}, false, count_include_pad, divisor);
      }
    }
    check_avg_pool(noise_in({2, 3, 4, 5, 6}, CL3, f32, 25), 3, {{3}, {2}, {1}}, false, true, divisor);
  }
}

TEST_CASE("adaptive pooling: an output size of 0 gives an empty output") {
  const Tensor x = noise_in({2, 3, 7, 5}, CL, f32, 26);
  check_adaptive_avg(x, 2, {0, 3});
  check_adaptive_avg(noise_in({2, 3, 4, 5, 6}, CF, f32, 27), 3, {2, 0, 2});
}

TEST_CASE("pooling bad input: each raises an lg::Error naming the op") {
  using doctest::Contains;
  const Tensor x = lg::ones({2, 3, 6, 6}), x3 = lg::ones({2, 3, 4, 4, 4});
  const auto mp2 = Contains("[max_pool2d]"), mpi = Contains("[max_pool2d_with_indices]"), mp3 = Contains("[max_pool3d]");
  const auto ap2 = Contains("[avg_pool2d]"), ap3 = Contains("[avg_pool3d]");
  const auto aa2 = Contains("[adaptive_avg_pool2d]"), aa3 = Contains("[adaptive_avg_pool3d]");
  const auto am2 = Contains("[adaptive_max_pool2d]");

  SUBCASE("wrong rank") {
    for (const Tensor& t : {lg::ones({6}), lg::ones({3, 6}), lg::ones({1, 2, 3, 4, 5})}) {
      CAPTURE(ls(t));
      CHECK_THROWS_WITH_AS(lg::max_pool2d(t, {2}), mp2, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::max_pool2d_with_indices(t, {2}), mpi, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::avg_pool2d(t, {2}), ap2, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool2d(t, {2, 2}), aa2, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::adaptive_max_pool2d(t, {2, 2}), am2, lg::ValueError);
    }
    for (const Tensor& t : {lg::ones({3, 6}), lg::ones({2, 3, 4}), lg::ones({1, 2, 3, 4, 5, 6})}) {
      CAPTURE(ls(t));
      CHECK_THROWS_WITH_AS(lg::max_pool3d(t, {2}), mp3, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::avg_pool3d(t, {2}), ap3, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool3d(t, {2, 2, 2}), aa3, lg::ValueError);
    }
  }

  SUBCASE("lists with the wrong number of values") {
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {2, 2, 2}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {2}, {1, 1, 1}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {2}, {1}, {0, 0, 0}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {2}, {1}, {0}, {1, 1, 1}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d_with_indices(x, {2, 2, 2}), mpi, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool3d(x3, {2, 2}), mp3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool3d(x3, {2}, {1, 1}), mp3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool3d(x3, {2}, {1}, {0}, {1, 1}), mp3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(x, {2, 2, 2}), ap2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(x, {2}, {2}, {0, 0, 0}), ap2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool3d(x3, {2, 2}), ap3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool3d(x3, {2}, {1, 2}), ap3, lg::ValueError);
  }

  SUBCASE("kernel, stride and dilation must be positive") {
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {0}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {2, -1}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {2}, {0}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {2}, {1, -2}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {2}, {1}, {0}, {0}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d_with_indices(x, {2}, {1}, {0}, {1, 0}), mpi, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool3d(x3, {2, 0, 2}), mp3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool3d(x3, {2}, {0}), mp3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool3d(x3, {2}, {1}, {0}, {1, 1, 0}), mp3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(x, {0}), ap2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(x, {-2}), ap2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(x, {2}, {0, 1}), ap2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool3d(x3, {0}), ap3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool3d(x3, {2}, {1, 0, 1}), ap3, lg::ValueError);
  }

  SUBCASE("padding negative or more than half the kernel") {
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {3}, {1}, {2}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {2}, {1}, {0, 2}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {3}, {1}, {-1}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(x, {2}, {1}, {2}, {3}), mp2, lg::ValueError);  // dilation does not widen the limit
    CHECK_THROWS_WITH_AS(lg::max_pool3d(x3, {2}, {1}, {0, 0, 2}), mp3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(x, {2}, {1}, {2}), ap2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(x, {3}, {1}, {-1}), ap2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool3d(x3, {3}, {1}, {2, 1, 1}), ap3, lg::ValueError);
  }

  SUBCASE("output size <= 0: kernel (dilated) larger than the padded input") {
    const Tensor small = lg::ones({1, 2, 2, 3}), small3 = lg::ones({1, 2, 2, 3, 3});
    CHECK_THROWS_WITH_AS(lg::max_pool2d(small, {3}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(small, {2}, {1}, {0}, {3}), mp2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d_with_indices(small, {3, 2}), mpi, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(lg::ones({3, 2, 3}), {3}), mp2, lg::ValueError);  // unbatched
    CHECK_THROWS_WITH_AS(lg::max_pool3d(small3, {3}), mp3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(small, {3}), ap2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(small, {3, 4}, {1}, {1, 0}), ap2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool3d(small3, {3, 2, 2}), ap3, lg::ValueError);
  }

  SUBCASE("divisor_override 0") {
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(x, {2}, {2}, {0}, false, true, 0), ap2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::avg_pool3d(x3, {2}, {2}, {0}, false, false, 0), ap3, lg::ValueError);
  }

  SUBCASE("dtypes: bool anywhere, integers for average pooling") {
    const Tensor b = x.to(lg::kBool), b3 = x3.to(lg::kBool);
    CHECK_THROWS_WITH_AS(lg::max_pool2d(b, {2}), mp2, lg::TypeError);
    CHECK_THROWS_WITH_AS(lg::max_pool2d_with_indices(b, {2}), mpi, lg::TypeError);
    CHECK_THROWS_WITH_AS(lg::max_pool3d(b3, {2}), mp3, lg::TypeError);
    CHECK_THROWS_WITH_AS(lg::adaptive_max_pool2d(b, {2, 2}), am2, lg::TypeError);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(b, {2}), ap2, lg::TypeError);
    CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool2d(b, {2, 2}), aa2, lg::TypeError);
    for (DType dt : {lg::kInt32, lg::kUInt8}) {
      CAPTURE(dt);
      CHECK_THROWS_WITH_AS(lg::avg_pool2d(x.to(dt), {2}), ap2, lg::TypeError);
      CHECK_THROWS_WITH_AS(lg::avg_pool3d(x3.to(dt), {2}), ap3, lg::TypeError);
      CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool2d(x.to(dt), {2, 2}), aa2, lg::TypeError);
      CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool3d(x3.to(dt), {2, 2, 2}), aa3, lg::TypeError);
    }
  }

  SUBCASE("adaptive output_size of the wrong length or negative") {
    CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool2d(x, {2}), aa2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool2d(x, {2, 2, 2}), aa2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool2d(x, {-1, 2}), aa2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::adaptive_max_pool2d(x, {3}), am2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::adaptive_max_pool2d(x, {}), am2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::adaptive_max_pool2d(x, {2, -3}), am2, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool3d(x3, {2, 2}), aa3, lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool3d(x3, {2, -1, 2}), aa3, lg::ValueError);
  }

  SUBCASE("undefined input") {
    CHECK_THROWS_WITH_AS(lg::max_pool2d(Tensor(), {2}), mp2, lg::Error);
    CHECK_THROWS_WITH_AS(lg::max_pool2d_with_indices(Tensor(), {2}), mpi, lg::Error);
    CHECK_THROWS_WITH_AS(lg::max_pool3d(Tensor(), {2}), mp3, lg::Error);
    CHECK_THROWS_WITH_AS(lg::avg_pool2d(Tensor(), {2}), ap2, lg::Error);
    CHECK_THROWS_WITH_AS(lg::avg_pool3d(Tensor(), {2}), ap3, lg::Error);
    CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool2d(Tensor(), {2, 2}), aa2, lg::Error);
    CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool3d(Tensor(), {2, 2, 2}), aa3, lg::Error);
    CHECK_THROWS_WITH_AS(lg::adaptive_max_pool2d(Tensor(), {2, 2}), am2, lg::Error);
  }

  SUBCASE("zero channels or a zero spatial size (only the batch may be 0)") {
    for (const Tensor& t : {lg::ones({2, 0, 6, 6}), lg::ones({2, 3, 0, 6}), lg::ones({0, 6, 6}), lg::ones({3, 6, 0})}) {
      CAPTURE(ls(t));
      CHECK_THROWS_WITH_AS(lg::max_pool2d(t, {2}), mp2, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::max_pool2d_with_indices(t, {1}), mpi, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::avg_pool2d(t, {1}), ap2, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool2d(t, {2, 2}), aa2, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::adaptive_max_pool2d(t, {2, 2}), am2, lg::ValueError);
    }
    for (const Tensor& t : {lg::ones({2, 0, 4, 4, 4}), lg::ones({2, 3, 4, 0, 4}), lg::ones({0, 4, 4, 4})}) {
      CAPTURE(ls(t));
      CHECK_THROWS_WITH_AS(lg::max_pool3d(t, {1}), mp3, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::avg_pool3d(t, {1}), ap3, lg::ValueError);
      CHECK_THROWS_WITH_AS(lg::adaptive_avg_pool3d(t, {2, 2, 2}), aa3, lg::ValueError);
    }
  }
}

TEST_CASE("pooling keeps channels_last under the guard, shadow mode agrees") {
  CleanGuard clean;
  lg::guard::set_options(options_with(lg::guard::Mode::Throw, "shadow=1"));
  const Tensor x = noise_in({2, 4, 7, 5}, CL, f32, 28), x3 = noise_in({2, 4, 4, 5, 6}, CL3, f32, 29);
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::max_pool2d(x, {3}, {2}, {1}, {1}, true));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::max_pool2d_with_indices(x, {2}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::avg_pool2d(x, {3}, {2}, {1}, false, false));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::adaptive_avg_pool2d(x, {3, 2}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::adaptive_max_pool2d(x, {3, 2}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::max_pool3d(x3, {2}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::avg_pool3d(x3, {3}, {2}, {1}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::adaptive_avg_pool3d(x3, {2, 3, 4}));
}

}  // TEST_SUITE

// Resampling ops against the float64 reference (ops/resample_reference.h): upsample_nearest2d/3d,
// upsample_bilinear2d, upsample_bicubic2d, upsample_trilinear3d, interpolate, pad (constant,
// reflect, replicate, circular), pixel_shuffle, pixel_unshuffle and channel_shuffle, over every
// input layout (contiguous, channels_last(_3d), permuted, non-dense channels_last slice, batch
// broadcast; N1HW, NC11 and zero-batch shapes), up- and downscaling by integer and non-integer
// ratios, align_corners both ways, explicit scales, every dtype each op takes; PyTorch's results
// for small inputs; output strides (dense in the input's suggested format; layout rows 74-78 and 95
// exactly, numbered as in tests/core/test_layout_rows.cpp); interpolate's two forms; bad input; the guard.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <layoutguard/resampling.h>
#include <layoutguard/testing/doctest.h>

#include "ops/resample_reference.h"
#include "support/guard_testing.h"
#include "support/op_testing.h"

namespace {

using lg::DType;
using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

// Interpolation computes in float (float64 for float64) and rounds once to the dtype; bicubic
// overshoots [-1, 1) a little, so half precision gets one unit in the last place at 2.
constexpr TolTable interp_tol{.f64 = {1e-12, 1e-12}, .f32 = {1e-5, 1e-5}, .f16 = {4e-3, 4e-3}, .bf16 = {2e-2, 2e-2}};

// Copies (nearest, pad, the shuffles) must reproduce the input's values bit for bit.
void check_exact(const std::vector<double>& got, const std::vector<double>& want) { check_close(got, want, Tol{0, 0}); }

// Deterministic values in `fmt` for any dtype: noise in [-1, 1) for the floating dtypes, whole
// numbers in [-100, 100) for int32/int64, [0, 200) for uint8, and both values for bool.
Tensor data_in(const std::vector<int64_t>& sizes, MemoryFormat fmt, DType dt, uint32_t seed) {
  if (lg::is_floating_point(dt)) return noise_in(sizes, fmt, dt, seed);
  std::vector<double> v = values(noise_in(sizes, CF, lg::kFloat64, seed));
  for (double& e : v) {
    if (dt == lg::kBool) e = e > 0 ? 1 : 0;
    else if (dt == lg::kUInt8) e = std::floor((e + 1) * 100);
    else e = std::floor(e * 100);
  }
  return tensor_of(v, sizes, dt, fmt);
}

// The input layouts of a 4-D or 5-D shape s, every one of logical shape s: contiguous,
// channels_last(_3d), permuted (dims 2 and 3 swapped in memory: dense, in no memory format), a
// non-dense channels_last slice (every other index of dim 2 of a tensor twice as large there) and,
// for a batch > 1, a batch broadcast (one channels_last sample expanded, stride 0 over N).
std::vector<std::pair<std::string, Tensor>> input_variants(const std::vector<int64_t>& s, DType dt, uint32_t seed) {
  const MemoryFormat cl = s.size() == 5 ? CL3 : CL;
  std::vector<int64_t> swapped = s, doubled = s, one = s;
  std::swap(swapped[2], swapped[3]);
  doubled[2] *= 2;
  one[0] = 1;
  std::vector<std::pair<std::string, Tensor>> v{
      {"contiguous", data_in(s, CF, dt, seed)},
      {"channels_last", data_in(s, cl, dt, seed)},
      {"permuted", data_in(swapped, CF, dt, seed).transpose(2, 3)},
      {"non-dense channels_last slice", data_in(doubled, cl, dt, seed).slice(2, 0, doubled[2], 2)},
  };
  if (s[0] > 1) v.emplace_back("batch broadcast", data_in(one, cl, dt, seed).expand(s));
  return v;
}

// Layouts of an input of another rank (1-D to 3-D, 6-D): contiguous, and the last two dims
// swapped in memory.
std::vector<std::pair<std::string, Tensor>> other_rank_variants(const std::vector<int64_t>& s, DType dt,
                                                                uint32_t seed) {
  std::vector<std::pair<std::string, Tensor>> v{{"contiguous", data_in(s, CF, dt, seed)}};
  if (s.size() >= 2) {
    std::vector<int64_t> swapped = s;
    const size_t k = s.size();
    std::swap(swapped[k - 1], swapped[k - 2]);
    v.emplace_back("last two dims swapped",
                   data_in(swapped, CF, dt, seed).transpose(static_cast<int64_t>(k) - 1, static_cast<int64_t>(k) - 2));
  }
  return v;
}

// The contract for every op's output: dense in the input's suggested format (contiguous for an
// input that is neither 4-D nor 5-D).
MemoryFormat expected_format(const Tensor& x) { return x.dim() == 4 || x.dim() == 5 ? x.suggest_memory_format() : CF; }

void check_layout(const Tensor& y, const Tensor& x, const std::vector<int64_t>& want_sizes) {
  REQUIRE(y.sizes() == lg::IntArrayRef(want_sizes));
  CHECK(y.dtype() == x.dtype());
  CHECK(ls(y) == ls(lg::empty(want_sizes, lg::TensorOptions(), expected_format(x))));
}

// ---- Upsampling ----

std::optional<double> scale_at(const RefScales& s, size_t i) { return i < s.size() ? s[i] : std::nullopt; }

struct UpCase {
  std::string name;
  std::vector<int64_t> x;    // input sizes, (N, C, H, W) or (N, C, D, H, W)
  std::vector<int64_t> out;  // output spatial sizes
  RefScales scales;          // one per spatial dim; none given when empty
};

// Every scale below is consistent with its sizes (out = floor(in * scale)) and differs from
// in / out wherever possible, so that a scale ignored shows in the values. The sizes avoid
// out == in and out == 2 * in with a scale that is not 1 or 2 (ATen shortcuts those).
const std::vector<UpCase>& cases_2d() {
  static const std::vector<UpCase> cases{
      {"x2 up", {2, 3, 4, 5}, {8, 10}, {}},
      {"non-integer up", {2, 3, 5, 4}, {7, 9}, {}},
      {"x2 down", {2, 3, 8, 6}, {4, 3}, {}},
      {"non-integer down", {1, 2, 9, 8}, {4, 3}, {}},
      {"up in H, down in W", {2, 3, 4, 7}, {6, 3}, {}},
      {"to 1x1", {2, 3, 4, 5}, {1, 1}, {}},
      {"NC11 up", {2, 3, 1, 1}, {3, 2}, {}},
      {"N1HW", {2, 1, 4, 5}, {6, 7}, {}},
      {"zero batch", {0, 3, 4, 5}, {8, 10}, {}},
      {"explicit scales up", {2, 3, 5, 4}, {7, 6}, {1.5, 1.6}},
      {"explicit scales down", {2, 3, 9, 8}, {4, 6}, {0.5, 0.75}},
      {"explicit scales 2 and 0.4", {1, 2, 4, 9}, {8, 3}, {2.0, 0.4}},
      {"explicit scale for H only", {2, 3, 4, 4}, {6, 6}, {1.7, std::nullopt}},
  };
  return cases;
}

const std::vector<UpCase>& cases_3d() {
  static const std::vector<UpCase> cases{
      {"x2 up", {2, 3, 2, 3, 4}, {4, 6, 8}, {}},
      {"mixed", {1, 2, 3, 4, 5}, {5, 2, 7}, {}},
      {"to 1x1x1", {2, 2, 3, 2, 2}, {1, 1, 1}, {}},
      {"NC111 up", {2, 3, 1, 1, 1}, {2, 3, 2}, {}},
      {"zero batch", {0, 2, 2, 3, 3}, {3, 4, 5}, {}},
      {"explicit scales", {2, 2, 3, 4, 5}, {4, 6, 3}, {1.5, 1.7, 0.7}},
  };
  return cases;
}

std::vector<int64_t> out_sizes(const Tensor& x, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> s{x.size(0), x.size(1)};
  s.insert(s.end(), spatial.begin(), spatial.end());
  return s;
}

Tensor run_nearest(const Tensor& x, const std::vector<int64_t>& out, const RefScales& s) {
  return x.dim() == 4 ? lg::upsample_nearest2d(x, out, scale_at(s, 0), scale_at(s, 1))
                      : lg::upsample_nearest3d(x, out, scale_at(s, 0), scale_at(s, 1), scale_at(s, 2));
}
Tensor run_linear(const Tensor& x, const std::vector<int64_t>& out, bool align_corners, const RefScales& s) {
  return x.dim() == 4 ? lg::upsample_bilinear2d(x, out, align_corners, scale_at(s, 0), scale_at(s, 1))
                      : lg::upsample_trilinear3d(x, out, align_corners, scale_at(s, 0), scale_at(s, 1), scale_at(s, 2));
}

void check_nearest(const Tensor& x, const UpCase& c) {
  const Tensor y = run_nearest(x, c.out, c.scales);
  check_layout(y, x, out_sizes(x, c.out));
  check_exact(values(y), ref_upsample_nearest(values(x), x.sizes().vec(), c.out, c.scales));
}

// bilinear/trilinear (by rank), or bicubic.
void check_interp(const Tensor& x, const UpCase& c, bool align_corners, bool cubic) {
  CAPTURE(align_corners);
  const Tensor y = cubic ? lg::upsample_bicubic2d(x, c.out, align_corners, scale_at(c.scales, 0), scale_at(c.scales, 1))
                         : run_linear(x, c.out, align_corners, c.scales);
  check_layout(y, x, out_sizes(x, c.out));
  const std::vector<double> want =
      cubic ? ref_upsample_bicubic(values(x), x.sizes().vec(), c.out, align_corners, c.scales)
            : ref_upsample_linear(values(x), x.sizes().vec(), c.out, align_corners, c.scales);
  check_close(values(y), rounded(want, x.dtype()), interp_tol(x.dtype()));
}

// Calls check(x, c) for every case c and every layout x of its float32 input (input_variants
// from seed).
template <typename Check>
void for_each_case_layout(const std::vector<UpCase>& cases, uint32_t seed, Check&& check) {
  for (const UpCase& c : cases) {
    for (const auto& [name, x] : input_variants(c.x, f32, seed)) {
      CAPTURE(c.name);
      CAPTURE(name);
      check(x, c);
    }
  }
}

// Two results of the same computation: equal layout, equal values.
void check_same(const Tensor& a, const Tensor& b) {
  CHECK(ls(a) == ls(b));
  CHECK(a.dtype() == b.dtype());
  check_exact(values(a), values(b));
}

// ---- pad ----

void check_pad(const Tensor& x, const std::vector<int64_t>& amounts, const std::string& mode,
               std::optional<double> value = std::nullopt) {
  CAPTURE(mode);
  CAPTURE(lg::to_string(amounts));
  CAPTURE(value.value_or(0.0));
  const Tensor y = lg::pad(x, amounts, mode, value);
  const std::vector<int64_t> s = x.sizes().vec();
  check_layout(y, x, ref_pad_sizes(s, amounts));
  check_exact(values(y), ref_pad(values(x), s, amounts, mode, value.value_or(0.0)));
}

// Whether amounts crop a non-empty dim of sizes s to nothing or less (left out of the value tests:
// PyTorch's rule for an empty result has changed between versions).
bool crops_to_empty(const std::vector<int64_t>& s, const std::vector<int64_t>& amounts) {
  const std::vector<int64_t> out = ref_pad_sizes(s, amounts);
  for (size_t d = 0; d < s.size(); ++d)
    if (s[d] > 0 && out[d] <= 0) return true;
  return false;
}

struct PadCase {
  std::string mode;
  std::vector<int64_t> amounts;
};

// Non-constant pads of the last two dims of a (.., 4, 5) input: small, the largest each mode
// allows (reflect: < size; circular: <= size), and none.
const std::vector<PadCase>& pads_hw() {
  static const std::vector<PadCase> cases{
      {"reflect", {1, 2, 3, 0}},   {"reflect", {4, 4, 3, 3}},   {"reflect", {0, 0, 0, 0}},
      {"replicate", {1, 2, 3, 0}}, {"replicate", {6, 7, 5, 8}}, {"replicate", {0, 0, 0, 0}},
      {"circular", {1, 2, 3, 0}},  {"circular", {5, 5, 4, 4}},  {"circular", {0, 0, 0, 0}},
  };
  return cases;
}

// ---- Shuffles ----

void check_pixel_shuffle(const Tensor& x, int64_t r) {
  CAPTURE(r);
  std::vector<int64_t> want = x.sizes().vec();
  const size_t k = want.size();
  want[k - 3] /= r * r;
  want[k - 2] *= r;
  want[k - 1] *= r;
  const Tensor y = lg::pixel_shuffle(x, r);
  check_layout(y, x, want);
  check_exact(values(y), ref_pixel_shuffle(values(x), x.sizes().vec(), r));
  check_exact(values(lg::pixel_unshuffle(y, r)), values(x));  // the inverse
}

void check_pixel_unshuffle(const Tensor& x, int64_t r) {
  CAPTURE(r);
  std::vector<int64_t> want = x.sizes().vec();
  const size_t k = want.size();
  want[k - 3] *= r * r;
  want[k - 2] /= r;
  want[k - 1] /= r;
  const Tensor y = lg::pixel_unshuffle(x, r);
  check_layout(y, x, want);
  check_exact(values(y), ref_pixel_unshuffle(values(x), x.sizes().vec(), r));
  check_exact(values(lg::pixel_shuffle(y, r)), values(x));
}

void check_channel_shuffle(const Tensor& x, int64_t groups) {
  CAPTURE(groups);
  const Tensor y = lg::channel_shuffle(x, groups);
  check_layout(y, x, x.sizes().vec());
  check_exact(values(y), ref_channel_shuffle(values(x), x.sizes().vec(), groups));
}

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("resampling: PyTorch's results for small inputs, from the reference and from the ops") {
  // Each expected vector is what PyTorch prints; the reference and the op must both give it.
  const auto check_both = [](const Tensor& y, const std::vector<double>& ref, const std::vector<double>& want) {
    check_close(ref, want, Tol{1e-12, 1e-12});
    check_close(values(y), want, Tol{1e-12, 1e-12});
  };
  const Tensor x22 = tensor_of({1, 2, 3, 4}, {1, 1, 2, 2});
  check_both(lg::upsample_bilinear2d(x22, {4, 4}, false), ref_upsample_linear({1, 2, 3, 4}, {1, 1, 2, 2}, {4, 4}, false),
             {1.0, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3.0, 3.25, 3.75, 4.0});
  check_both(lg::upsample_bilinear2d(x22, {3, 3}, true), ref_upsample_linear({1, 2, 3, 4}, {1, 1, 2, 2}, {3, 3}, true),
             {1.0, 1.5, 2.0, 2.0, 2.5, 3.0, 3.0, 3.5, 4.0});
  check_both(lg::upsample_bicubic2d(x22, {4, 4}, false), ref_upsample_bicubic({1, 2, 3, 4}, {1, 1, 2, 2}, {4, 4}, false),
             {0.68359375, 1.015625, 1.5625, 1.89453125, 1.34765625, 1.6796875, 2.2265625, 2.55859375, 2.44140625,
              2.7734375, 3.3203125, 3.65234375, 3.10546875, 3.4375, 3.984375, 4.31640625});
  // Nearest: 3 -> 5 reads 0, 0, 1, 1, 2; an explicit scale 1.7 maps by 1 / 1.7, not 4 / 6.
  check_both(lg::upsample_nearest2d(tensor_of({0, 1, 2}, {1, 1, 1, 3}), {1, 5}),
             ref_upsample_nearest({0, 1, 2}, {1, 1, 1, 3}, {1, 5}), {0, 0, 1, 1, 2});
  const Tensor x4 = tensor_of({0, 1, 2, 3}, {1, 1, 1, 4});
  check_both(lg::upsample_nearest2d(x4, {1, 6}, std::nullopt, 1.7),
             ref_upsample_nearest({0, 1, 2, 3}, {1, 1, 1, 4}, {1, 6}, {std::nullopt, 1.7}), {0, 0, 1, 1, 2, 2});
  check_both(lg::upsample_nearest2d(x4, {1, 6}), ref_upsample_nearest({0, 1, 2, 3}, {1, 1, 1, 4}, {1, 6}),
             {0, 0, 1, 2, 2, 3});
  // Bilinear with an explicit scale: source (dst + 0.5) / 1.7 - 0.5, clamped at 0.
  check_both(lg::upsample_bilinear2d(tensor_of({0, 1}, {1, 1, 1, 2}), {1, 3}, false, std::nullopt, 1.7),
             ref_upsample_linear({0, 1}, {1, 1, 1, 2}, {1, 3}, false, {std::nullopt, 1.7}),
             {0.0, 1.5 / 1.7 - 0.5, 2.5 / 1.7 - 0.5});
  // Trilinear with align_corners reproduces a linear function of the coordinates exactly.
  std::vector<double> cube(8), lin;
  for (int i = 0; i < 8; ++i) cube[i] = i;  // value 4z + 2y + x
  for (int d = 0; d < 3; ++d)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 3; ++w) lin.push_back(4 * d / 2.0 + 2 * h / 2.0 + w / 2.0);
  check_both(lg::upsample_trilinear3d(tensor_of(cube, {1, 1, 2, 2, 2}), {3, 3, 3}, true),
             ref_upsample_linear(cube, {1, 1, 2, 2, 2}, {3, 3, 3}, true), lin);
  // pad of 0, 1, 2, 3 by (2, 2), and a 2-D reflect.
  const Tensor row = tensor_of({0, 1, 2, 3}, {1, 1, 4});
  const std::vector<double> r4{0, 1, 2, 3};
  check_both(lg::pad(row, {2, 2}, "reflect"), ref_pad(r4, {1, 1, 4}, {2, 2}, "reflect"), {2, 1, 0, 1, 2, 3, 2, 1});
  check_both(lg::pad(row, {2, 2}, "replicate"), ref_pad(r4, {1, 1, 4}, {2, 2}, "replicate"), {0, 0, 0, 1, 2, 3, 3, 3});
  check_both(lg::pad(row, {2, 2}, "circular"), ref_pad(r4, {1, 1, 4}, {2, 2}, "circular"), {2, 3, 0, 1, 2, 3, 0, 1});
  check_both(lg::pad(row, {2, -1}, "constant", 9.0), ref_pad(r4, {1, 1, 4}, {2, -1}, "constant", 9.0), {9, 9, 0, 1, 2});
  const std::vector<double> m23{0, 1, 2, 3, 4, 5};
  check_both(lg::pad(tensor_of(m23, {1, 1, 2, 3}), {2, 1, 1, 0}, "reflect"),
             ref_pad(m23, {1, 1, 2, 3}, {2, 1, 1, 0}, "reflect"),
             {5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4});
  // pixel_shuffle of arange(8).reshape(1, 4, 1, 2) by 2, pixel_unshuffle of arange(8).reshape(1, 1, 2, 4).
  const std::vector<double> r8{0, 1, 2, 3, 4, 5, 6, 7};
  check_both(lg::pixel_shuffle(tensor_of(r8, {1, 4, 1, 2}), 2), ref_pixel_shuffle(r8, {1, 4, 1, 2}, 2),
             {0, 2, 1, 3, 4, 6, 5, 7});
  check_both(lg::pixel_unshuffle(tensor_of(r8, {1, 1, 2, 4}), 2), ref_pixel_unshuffle(r8, {1, 1, 2, 4}, 2),
             {0, 2, 1, 3, 4, 6, 5, 7});
  // channel_shuffle of channels 0..5 in 2 and in 3 groups.
  const std::vector<double> r6{0, 1, 2, 3, 4, 5};
  const Tensor c6 = tensor_of(r6, {1, 6, 1, 1});
  check_both(lg::channel_shuffle(c6, 2), ref_channel_shuffle(r6, {1, 6, 1, 1}, 2), {0, 3, 1, 4, 2, 5});
  check_both(lg::channel_shuffle(c6, 3), ref_channel_shuffle(r6, {1, 6, 1, 1}, 3), {0, 2, 4, 1, 3, 5});
}

TEST_CASE("upsample_nearest2d: values and output layout over input layouts, sizes and scales") {
  for_each_case_layout(cases_2d(), 1, check_nearest);
}

TEST_CASE("upsample_nearest3d: values and channels_last_3d output over input layouts, sizes and scales") {
  for_each_case_layout(cases_3d(), 2, check_nearest);
}

TEST_CASE("upsample_nearest2d and 3d: float64, float16, bfloat16 and the integer dtypes") {
  for (DType dt : {lg::kFloat64, lg::kFloat16, lg::kBFloat16, lg::kInt32, lg::kInt64, lg::kUInt8}) {
    for (const UpCase& c : cases_2d()) {
      for (MemoryFormat fmt : {CF, CL}) {
        CAPTURE(dt);
        CAPTURE(c.name);
        CAPTURE(fmt);
        check_nearest(data_in(c.x, fmt, dt, 3), c);
      }
    }
    for (const UpCase& c : cases_3d()) {
      for (MemoryFormat fmt : {CF, CL3}) {
        CAPTURE(dt);
        CAPTURE(c.name);
        CAPTURE(fmt);
        check_nearest(data_in(c.x, fmt, dt, 4), c);
      }
    }
  }
}

TEST_CASE("upsample_bilinear2d: values and output layout over input layouts, sizes, align_corners and scales") {
  for_each_case_layout(cases_2d(), 5, [](const Tensor& x, const UpCase& c) {
    for (bool align_corners : {false, true}) check_interp(x, c, align_corners, false);
  });
}

TEST_CASE("upsample_bicubic2d: values and output layout over input layouts, sizes, align_corners and scales") {
  for_each_case_layout(cases_2d(), 6, [](const Tensor& x, const UpCase& c) {
    for (bool align_corners : {false, true}) check_interp(x, c, align_corners, true);
  });
}

TEST_CASE("upsample_trilinear3d: values and channels_last_3d output over input layouts, sizes, align_corners, scales") {
  for_each_case_layout(cases_3d(), 7, [](const Tensor& x, const UpCase& c) {
    for (bool align_corners : {false, true}) check_interp(x, c, align_corners, false);
  });
}

TEST_CASE("bilinear, bicubic and trilinear: float64, float16 and bfloat16") {
  for (DType dt : {lg::kFloat64, lg::kFloat16, lg::kBFloat16}) {
    for (bool align_corners : {false, true}) {
      for (const UpCase& c : cases_2d()) {
        for (MemoryFormat fmt : {CF, CL}) {
          CAPTURE(dt);
          CAPTURE(c.name);
          CAPTURE(fmt);
          const Tensor x = data_in(c.x, fmt, dt, 8);
          check_interp(x, c, align_corners, false);
          check_interp(x, c, align_corners, true);
        }
      }
      for (const UpCase& c : cases_3d()) {
        for (MemoryFormat fmt : {CF, CL3}) {
          CAPTURE(dt);
          CAPTURE(c.name);
          CAPTURE(fmt);
          check_interp(data_in(c.x, fmt, dt, 9), c, align_corners, false);
        }
      }
    }
  }
}

TEST_CASE("upsampling: a scale that is not > 0 is ignored (input_size / output_size maps)") {
  const Tensor x = noise_in({2, 3, 4, 6}, CL, f32, 10), x3 = noise_in({2, 2, 3, 4, 5}, CL3, f32, 11);
  for (double bad : {0.0, -1.5}) {
    CAPTURE(bad);
    check_same(lg::upsample_nearest2d(x, {7, 4}, bad, bad), lg::upsample_nearest2d(x, {7, 4}));
    check_same(lg::upsample_bilinear2d(x, {7, 4}, false, bad, bad), lg::upsample_bilinear2d(x, {7, 4}, false));
    check_same(lg::upsample_bicubic2d(x, {7, 4}, false, bad, bad), lg::upsample_bicubic2d(x, {7, 4}, false));
    check_same(lg::upsample_nearest3d(x3, {5, 6, 3}, bad, bad, bad), lg::upsample_nearest3d(x3, {5, 6, 3}));
    check_same(lg::upsample_trilinear3d(x3, {5, 6, 3}, false, bad, bad, bad), lg::upsample_trilinear3d(x3, {5, 6, 3}, false));
    check_exact(values(lg::upsample_nearest2d(x, {7, 4}, bad, bad)),
                ref_upsample_nearest(values(x), {2, 3, 4, 6}, {7, 4}));
    check_close(values(lg::upsample_bilinear2d(x, {7, 4}, false, bad, bad)),
                rounded(ref_upsample_linear(values(x), {2, 3, 4, 6}, {7, 4}, false), f32), interp_tol(f32));
  }
  // align_corners ignores a given scale: corners map to corners whatever it is.
  check_same(lg::upsample_bilinear2d(x, {7, 9}, true, 1.5, 1.5), lg::upsample_bilinear2d(x, {7, 9}, true));
  check_same(lg::upsample_bicubic2d(x, {7, 9}, true, 1.9, 1.6), lg::upsample_bicubic2d(x, {7, 9}, true));
}

TEST_CASE("upsampling: a tiny scale maps every output but the first past the input's end") {
  // 1 / scale puts the source coordinates beyond int64 (1e-20) or at inf in float (1e-300):
  // they are taken at the last element, the first output at the first, in every mode and dtype.
  for (double tiny : {1e-20, 1e-300}) {
    CAPTURE(tiny);
    for (DType dt : {f32, lg::kFloat64}) {
      const Tensor x = lg::arange(16, dt).view({1, 1, 4, 4});
      const Tensor x3 = lg::arange(64, dt).view({1, 1, 4, 4, 4});
      check_exact(values(lg::upsample_nearest2d(x, {2, 2}, tiny, tiny)), {0, 3, 12, 15});
      check_exact(values(lg::upsample_nearest3d(x3, {1, 1, 2}, tiny, tiny, tiny)), {0, 3});
      check_exact(values(lg::upsample_bilinear2d(x, {1, 2}, false, tiny, tiny)), {15, 15});
      check_exact(values(lg::upsample_bicubic2d(x, {1, 2}, false, tiny, tiny)), {15, 15});
      check_exact(values(lg::upsample_trilinear3d(x3, {1, 1, 2}, false, tiny, tiny, tiny)), {63, 63});
    }
    // Integer data is read at the clamped index, never past the input (it was read at INT64_MIN).
    check_exact(values(lg::upsample_nearest2d(lg::arange(16, lg::kUInt8).view({1, 1, 4, 4}), {2, 2}, tiny, tiny)),
                {0, 3, 12, 15});
  }
}

TEST_CASE("interpolate: the size and scale_factor forms equal the direct upsample calls") {
  for (MemoryFormat fmt : {CF, CL}) {
    CAPTURE(fmt);
    const Tensor x = noise_in({2, 3, 5, 4}, fmt, f32, 12);
    // size: one value per spatial dim, or one for all; no scale reaches the op.
    check_same(lg::interpolate(x, {7, 9}), lg::upsample_nearest2d(x, {7, 9}));
    check_same(lg::interpolate(x, {6}), lg::upsample_nearest2d(x, {6, 6}));
    check_same(lg::interpolate(x, {7, 9}, {}, "nearest"), lg::upsample_nearest2d(x, {7, 9}));
    check_same(lg::interpolate(x, {7, 9}, {}, "bilinear"), lg::upsample_bilinear2d(x, {7, 9}, false));
    check_same(lg::interpolate(x, {7, 9}, {}, "bilinear", false), lg::upsample_bilinear2d(x, {7, 9}, false));
    check_same(lg::interpolate(x, {7, 9}, {}, "bilinear", true), lg::upsample_bilinear2d(x, {7, 9}, true));
    check_same(lg::interpolate(x, {3}, {}, "bicubic"), lg::upsample_bicubic2d(x, {3, 3}, false));
    check_same(lg::interpolate(x, {3, 8}, {}, "bicubic", true), lg::upsample_bicubic2d(x, {3, 8}, true));
    // scale_factor: output floor(in * s), and s itself maps the coordinates.
    const Tensor n15 = lg::interpolate(x, {}, {1.5});
    CHECK(n15.sizes() == lg::IntArrayRef({2, 3, 7, 6}));
    check_same(n15, lg::upsample_nearest2d(x, {7, 6}, 1.5, 1.5));
    check_exact(values(n15), ref_upsample_nearest(values(x), {2, 3, 5, 4}, {7, 6}, {1.5, 1.5}));
    check_same(lg::interpolate(x, {}, {1.5, 0.5}, "nearest"), lg::upsample_nearest2d(x, {7, 2}, 1.5, 0.5));
    const Tensor b17 = lg::interpolate(x, {}, {1.7}, "bilinear");
    CHECK(b17.sizes() == lg::IntArrayRef({2, 3, 8, 6}));
    check_same(b17, lg::upsample_bilinear2d(x, {8, 6}, false, 1.7, 1.7));
    check_close(values(b17), rounded(ref_upsample_linear(values(x), {2, 3, 5, 4}, {8, 6}, false, {1.7, 1.7}), f32),
                interp_tol(f32));
    check_same(lg::interpolate(x, {}, {1.7}, "bilinear", true), lg::upsample_bilinear2d(x, {8, 6}, true, 1.7, 1.7));
    check_same(lg::interpolate(x, {}, {0.5, 1.5}, "bicubic"), lg::upsample_bicubic2d(x, {2, 6}, false, 0.5, 1.5));
    check_close(values(lg::interpolate(x, {}, {0.5, 1.5}, "bicubic")),
                rounded(ref_upsample_bicubic(values(x), {2, 3, 5, 4}, {2, 6}, false, {0.5, 1.5}), f32), interp_tol(f32));
  }
  for (MemoryFormat fmt : {CF, CL3}) {
    CAPTURE(fmt);
    const Tensor x = noise_in({2, 2, 3, 4, 5}, fmt, f32, 13);
    check_same(lg::interpolate(x, {4, 6, 3}), lg::upsample_nearest3d(x, {4, 6, 3}));
    check_same(lg::interpolate(x, {5}, {}, "trilinear"), lg::upsample_trilinear3d(x, {5, 5, 5}, false));
    check_same(lg::interpolate(x, {}, {1.5, 1.7, 0.7}), lg::upsample_nearest3d(x, {4, 6, 3}, 1.5, 1.7, 0.7));
    const Tensor t15 = lg::interpolate(x, {}, {1.5}, "trilinear", true);
    CHECK(t15.sizes() == lg::IntArrayRef({2, 2, 4, 6, 7}));
    check_same(t15, lg::upsample_trilinear3d(x, {4, 6, 7}, true, 1.5, 1.5, 1.5));
    check_same(lg::interpolate(x, {}, {1.5, 1.7, 0.7}, "trilinear"),
               lg::upsample_trilinear3d(x, {4, 6, 3}, false, 1.5, 1.7, 0.7));
    check_close(values(lg::interpolate(x, {}, {1.5, 1.7, 0.7}, "trilinear")),
                rounded(ref_upsample_linear(values(x), {2, 2, 3, 4, 5}, {4, 6, 3}, false, {1.5, 1.7, 0.7}), f32),
                interp_tol(f32));
  }
}

TEST_CASE("layout rows 74-78: upsampling output strides; channels_last_3d for the 3-D ops") {
  const Tensor x = noise_in({2, 3, 6, 6}, CL, f32, 14);
  CHECK(ls(lg::interpolate(x, {}, {2.0}, "nearest")) == "(2,3,12,12)@(432,1,36,3)");   // 74
  CHECK(ls(lg::interpolate(x, {}, {2.0}, "bilinear")) == "(2,3,12,12)@(432,1,36,3)");  // 75
  CHECK(ls(lg::interpolate(x, {}, {2.0}, "bicubic")) == "(2,3,12,12)@(432,1,36,3)");   // 76 (PyTorch main, not 1.13)
  const Tensor nc11 = noise_in({2, 3, 1, 1}, CL, f32, 15);
  REQUIRE(ls(nc11) == "(2,3,1,1)@(3,1,3,3)");
  CHECK(ls(lg::interpolate(nc11, {}, {2.0}, "nearest")) == "(2,3,2,2)@(12,1,6,3)");  // 77
  const Tensor n1hw = lg::empty_strided({2, 1, 4, 5}, {20, 1, 5, 1});
  n1hw.copy_(noise_in({2, 1, 4, 5}, CF, f32, 16));
  CHECK(ls(lg::interpolate(n1hw, {}, {2.0}, "nearest")) == "(2,1,8,10)@(80,1,10,1)");  // 78
  // The direct calls agree, and a contiguous input stays contiguous.
  CHECK(ls(lg::upsample_nearest2d(x, {12, 12})) == "(2,3,12,12)@(432,1,36,3)");
  CHECK(ls(lg::upsample_bilinear2d(x, {12, 12}, true)) == "(2,3,12,12)@(432,1,36,3)");
  CHECK(ls(lg::upsample_bicubic2d(x, {12, 12}, false)) == "(2,3,12,12)@(432,1,36,3)");
  CHECK(ls(lg::upsample_bilinear2d(x.contiguous(), {12, 12}, false)) == "(2,3,12,12)@(432,144,12,1)");
  CHECK(ls(lg::upsample_bicubic2d(x.contiguous(), {12, 12}, false)) == "(2,3,12,12)@(432,144,12,1)");
  // 3-D: nearest and trilinear of channels_last_3d give channels_last_3d.
  const Tensor x3 = noise_in({2, 3, 4, 5, 6}, CL3, f32, 17);
  CHECK(ls(lg::interpolate(x3, {}, {2.0}, "nearest")) == "(2,3,8,10,12)@(2880,1,360,36,3)");
  CHECK(ls(lg::interpolate(x3, {}, {2.0}, "trilinear")) == "(2,3,8,10,12)@(2880,1,360,36,3)");
  CHECK(ls(lg::upsample_nearest3d(x3, {8, 10, 12})) == "(2,3,8,10,12)@(2880,1,360,36,3)");
  CHECK(ls(lg::upsample_trilinear3d(x3, {8, 10, 12}, true)) == "(2,3,8,10,12)@(2880,1,360,36,3)");
  CHECK(ls(lg::upsample_trilinear3d(x3.contiguous(), {8, 10, 12}, false)) == "(2,3,8,10,12)@(2880,960,120,12,1)");
}

TEST_CASE("pad constant: values and output layout over input layouts, ranks, negative amounts and fill values") {
  const std::vector<std::vector<int64_t>> amounts{{1, 2}, {1, 1, 1, 1}, {0, 2, 3, 0}, {-1, 2, 1, -2},
                                                  {2, -3, -1, 0, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}};
  // Crops only: PyTorch returns a clone of the narrowed input there, which keeps a permuted
  // input's strides, so the permuted variant is left out of these.
  const std::vector<std::vector<int64_t>> crops{{0, 0, 0, 0}, {-1, 0, 0, -1}, {0, -2}};
  for (const std::vector<int64_t>& s : {std::vector<int64_t>{2, 3, 4, 5}, std::vector<int64_t>{2, 1, 4, 5},
                                        std::vector<int64_t>{2, 3, 1, 1}, std::vector<int64_t>{0, 3, 4, 5},
                                        std::vector<int64_t>{2, 3, 2, 3, 4}}) {
    for (const auto& [name, x] : input_variants(s, f32, 18)) {
      CAPTURE(lg::to_string(s));
      CAPTURE(name);
      for (const std::vector<int64_t>& a : amounts) {
        if (crops_to_empty(s, a)) continue;
        check_pad(x, a, "constant");
        check_pad(x, a, "constant", -1.25);
      }
      if (name != "permuted")
        for (const std::vector<int64_t>& a : crops)
          if (!crops_to_empty(s, a)) check_pad(x, a, "constant", 2.5);
    }
  }
  // Other ranks: 1-D, 2-D, 3-D and 6-D.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> other{
      {{5}, {2, 3}},           {{5}, {-1, 1}},           {{3, 5}, {1, 0, 2, 1}},
      {{3, 5}, {0, 0, -1, 1}}, {{2, 3, 5}, {1, 2, 0, 1, 1, 0}}, {{1, 2, 1, 2, 3, 2}, {1, 0, 0, 1}},
  };
  for (const auto& [s, a] : other) {
    for (const auto& [name, x] : other_rank_variants(s, f32, 19)) {
      CAPTURE(lg::to_string(s));
      CAPTURE(name);
      check_pad(x, a, "constant");
      check_pad(x, a, "constant", 2.5);
    }
  }
}

TEST_CASE("pad reflect, replicate and circular: values and output layout over input layouts and ranks") {
  // 4-D (N, C, H, W), also N1HW and zero batch.
  for (const std::vector<int64_t>& s : {std::vector<int64_t>{2, 3, 4, 5}, std::vector<int64_t>{2, 1, 4, 5},
                                        std::vector<int64_t>{0, 3, 4, 5}}) {
    for (const auto& [name, x] : input_variants(s, f32, 20)) {
      CAPTURE(lg::to_string(s));
      CAPTURE(name);
      for (const PadCase& p : pads_hw()) check_pad(x, p.amounts, p.mode);
    }
  }
  // NC11: replicate and circular can pad a single sample; reflect only by 0.
  for (const auto& [name, x] : input_variants({2, 3, 1, 1}, f32, 21)) {
    CAPTURE(name);
    check_pad(x, {2, 1, 1, 2}, "replicate");
    check_pad(x, {1, 1, 1, 0}, "circular");
    check_pad(x, {0, 0, 0, 0}, "reflect");
  }
  // 5-D (N, C, D, H, W) with three padded dims.
  const std::vector<PadCase> pads_dhw{
      {"reflect", {1, 2, 0, 3, 2, 1}}, {"replicate", {2, 0, 1, 1, 3, 2}}, {"circular", {1, 2, 3, 0, 3, 1}}};
  for (const auto& [name, x] : input_variants({2, 3, 3, 4, 5}, f32, 22)) {
    CAPTURE(name);
    for (const PadCase& p : pads_dhw) check_pad(x, p.amounts, p.mode);
  }
  // Unbatched: (C, H, W) with two padded dims, (C, D, H, W) with three; batched and unbatched
  // one-dim padding: (N, C, W) and (C, W).
  for (const auto& [name, x] : other_rank_variants({3, 4, 5}, f32, 23)) {
    CAPTURE(name);
    for (const PadCase& p : pads_hw()) check_pad(x, p.amounts, p.mode);
  }
  for (const PadCase& p : pads_dhw) check_pad(data_in({3, 3, 4, 5}, CF, f32, 24), p.amounts, p.mode);
  const std::vector<PadCase> pads_w{{"reflect", {2, 4}}, {"reflect", {0, 0}}, {"replicate", {3, 1}}, {"circular", {5, 2}}};
  for (const std::vector<int64_t>& s : {std::vector<int64_t>{2, 3, 5}, std::vector<int64_t>{3, 5}}) {
    for (const auto& [name, x] : other_rank_variants(s, f32, 25)) {
      CAPTURE(lg::to_string(s));
      CAPTURE(name);
      for (const PadCase& p : pads_w) check_pad(x, p.amounts, p.mode);
    }
  }
}

TEST_CASE("pad: float64, float16, bfloat16 and the integer dtypes in every mode") {
  for (DType dt : {lg::kFloat64, lg::kFloat16, lg::kBFloat16, lg::kInt32, lg::kInt64, lg::kUInt8}) {
    const double fill = lg::is_floating_point(dt) ? 2.5 : 7.0;
    for (MemoryFormat fmt : {CF, CL}) {
      CAPTURE(dt);
      CAPTURE(fmt);
      const Tensor x = data_in({2, 3, 4, 5}, fmt, dt, 26);
      check_pad(x, {1, 2, 0, 1}, "constant", fill);
      check_pad(x, {-1, 2, 1, 1, 1, 0}, "constant");
      check_pad(x, {1, 2, 3, 0}, "reflect");
      check_pad(x, {2, 1, 0, 3}, "replicate");
      check_pad(x, {1, 2, 3, 0}, "circular");
    }
    CAPTURE(dt);
    const Tensor x3 = data_in({2, 3, 3, 4, 5}, CL3, dt, 27);
    check_pad(x3, {1, 1, 1, 1, 1, 1}, "constant", fill);
    check_pad(x3, {1, 2, 0, 3, 2, 1}, "reflect");
    check_pad(x3, {1, 0, 2, 1, 0, 1}, "replicate");
    check_pad(x3, {1, 2, 3, 0, 3, 1}, "circular");
    check_pad(data_in({3, 5}, CF, dt, 28), {2, 1}, "reflect");
  }
}

TEST_CASE("layout row 95: pad keeps channels_last in every mode (reflect and replicate too, unlike 1.13)") {
  const Tensor x = noise_in({2, 3, 4, 5}, CL, f32, 29);
  CHECK(ls(lg::pad(x, {1, 1, 1, 1})) == "(2,3,6,7)@(126,1,21,3)");  // 95
  for (const char* mode : {"constant", "reflect", "replicate", "circular"}) {
    CAPTURE(mode);
    CHECK(ls(lg::pad(x, {1, 1, 1, 1}, mode)) == "(2,3,6,7)@(126,1,21,3)");
    CHECK(ls(lg::pad(x.contiguous(), {1, 1, 1, 1}, mode)) == "(2,3,6,7)@(126,42,7,1)");
    CHECK(ls(lg::pad(noise_in({2, 3, 4, 5, 6}, CL3, f32, 30), {1, 1, 1, 1, 1, 1}, mode)) ==
          "(2,3,6,7,8)@(1008,1,168,24,3)");
    // A 3-D input is padded into a contiguous output whatever its strides.
    CHECK(ls(lg::pad(noise_in({3, 5, 4}, CF, f32, 31).transpose(1, 2), {1, 1, 1, 1}, mode)) == "(3,6,7)@(42,7,1)");
  }
  // Constant padding of the channels keeps channels_last as well.
  CHECK(ls(lg::pad(x, {0, 0, 0, 0, 1, 1})) == "(2,5,4,5)@(100,1,25,5)");
}

TEST_CASE("pixel_shuffle and pixel_unshuffle: values, the inverse, output layout over input layouts and ranks") {
  const std::vector<std::pair<std::vector<int64_t>, int64_t>> shuffle{
      {{2, 12, 3, 4}, 2}, {{1, 18, 2, 3}, 3}, {{2, 4, 3, 2}, 1}, {{2, 4, 1, 1}, 2}, {{0, 8, 2, 2}, 2}};
  for (const auto& [s, r] : shuffle) {
    for (const auto& [name, x] : input_variants(s, f32, 32)) {
      CAPTURE(lg::to_string(s));
      CAPTURE(name);
      check_pixel_shuffle(x, r);
    }
  }
  const std::vector<std::pair<std::vector<int64_t>, int64_t>> unshuffle{
      {{2, 3, 6, 8}, 2}, {{1, 2, 6, 9}, 3}, {{2, 1, 4, 6}, 2}, {{2, 4, 3, 2}, 1}, {{0, 2, 4, 4}, 2}};
  for (const auto& [s, r] : unshuffle) {
    for (const auto& [name, x] : input_variants(s, f32, 33)) {
      CAPTURE(lg::to_string(s));
      CAPTURE(name);
      check_pixel_unshuffle(x, r);
    }
  }
  // Unbatched (C, H, W) and two leading batch dims.
  for (const auto& [name, x] : other_rank_variants({8, 2, 3}, f32, 34)) {
    CAPTURE(name);
    check_pixel_shuffle(x, 2);
  }
  for (const auto& [name, x] : other_rank_variants({2, 4, 6}, f32, 35)) {
    CAPTURE(name);
    check_pixel_unshuffle(x, 2);
  }
  check_pixel_shuffle(data_in({2, 2, 8, 2, 3}, CF, f32, 36), 2);
  check_pixel_unshuffle(data_in({2, 2, 2, 4, 6}, CF, f32, 37), 2);
}

TEST_CASE("channel_shuffle: values and output layout over input layouts, ranks and group counts") {
  for (const auto& [name, x] : input_variants({2, 6, 3, 4}, f32, 38)) {
    CAPTURE(name);
    for (int64_t groups : {1, 2, 3, 6}) check_channel_shuffle(x, groups);
  }
  for (const auto& [name, x] : input_variants({2, 6, 1, 1}, f32, 39)) {
    CAPTURE(name);
    check_channel_shuffle(x, 3);
  }
  for (const auto& [name, x] : input_variants({0, 6, 2, 2}, f32, 40)) {
    CAPTURE(name);
    check_channel_shuffle(x, 2);
  }
  for (const auto& [name, x] : input_variants({2, 6, 2, 3, 2}, f32, 41)) {
    CAPTURE(name);
    check_channel_shuffle(x, 2);
    check_channel_shuffle(x, 3);
  }
  for (const auto& [name, x] : other_rank_variants({2, 6, 5}, f32, 42)) {
    CAPTURE(name);
    check_channel_shuffle(x, 2);
    check_channel_shuffle(x, 3);
  }
}

TEST_CASE("pixel_shuffle, pixel_unshuffle and channel_shuffle: every dtype") {
  for (DType dt : kAllDTypes) {
    for (MemoryFormat fmt : {CF, CL}) {
      CAPTURE(dt);
      CAPTURE(fmt);
      check_pixel_shuffle(data_in({2, 12, 3, 4}, fmt, dt, 43), 2);
      check_pixel_unshuffle(data_in({2, 3, 6, 8}, fmt, dt, 44), 2);
      check_channel_shuffle(data_in({2, 6, 3, 4}, fmt, dt, 45), 3);
    }
    CAPTURE(dt);
    check_channel_shuffle(data_in({2, 6, 2, 3, 2}, CL3, dt, 46), 2);
  }
}

TEST_CASE("upsampling bad input: each raises an lg::Error of the fitting type naming the op") {
  struct Op {
    std::string name;
    int spatial;
    bool floating_only;
    std::function<Tensor(const Tensor&, lg::IntArrayRef)> run;
  };
  const std::vector<Op> ops{
      {"upsample_nearest2d", 2, false, [](const Tensor& x, lg::IntArrayRef o) { return lg::upsample_nearest2d(x, o); }},
      {"upsample_nearest3d", 3, false, [](const Tensor& x, lg::IntArrayRef o) { return lg::upsample_nearest3d(x, o); }},
      {"upsample_bilinear2d", 2, true,
       [](const Tensor& x, lg::IntArrayRef o) { return lg::upsample_bilinear2d(x, o, false); }},
      {"upsample_bicubic2d", 2, true,
       [](const Tensor& x, lg::IntArrayRef o) { return lg::upsample_bicubic2d(x, o, true); }},
      {"upsample_trilinear3d", 3, true,
       [](const Tensor& x, lg::IntArrayRef o) { return lg::upsample_trilinear3d(x, o, false); }},
  };
  for (const Op& op : ops) {
    CAPTURE(op.name);
    const std::string tag = "[" + op.name + "]";
    const auto named = doctest::Contains(tag.c_str());
    const int64_t rank = op.spatial + 2;
    std::vector<int64_t> in(static_cast<size_t>(rank), 4), out(static_cast<size_t>(op.spatial), 6);
    in[1] = 3;
    const Tensor x = lg::ones(in);
    REQUIRE(op.run(x, out).sizes() == lg::IntArrayRef(out_sizes(x, out)));  // the well-formed call works
    // Wrong rank: one dim fewer (an unbatched input) and one more.
    CHECK_THROWS_WITH_AS(op.run(lg::ones(std::vector<int64_t>(in.begin() + 1, in.end())), out), named, lg::ValueError);
    std::vector<int64_t> more = in;
    more.push_back(4);
    CHECK_THROWS_WITH_AS(op.run(lg::ones(more), out), named, lg::ValueError);
    // output_size: one value too few or too many, a zero, a negative.
    CHECK_THROWS_WITH_AS(op.run(x, std::vector<int64_t>(out.begin() + 1, out.end())), named, lg::ValueError);
    std::vector<int64_t> longer = out;
    longer.push_back(6);
    CHECK_THROWS_WITH_AS(op.run(x, longer), named, lg::ValueError);
    for (int64_t bad : {0, -1}) {
      std::vector<int64_t> o = out;
      o.back() = bad;
      CHECK_THROWS_WITH_AS(op.run(x, o), named, lg::ValueError);
      o = out;
      o.front() = bad;
      CHECK_THROWS_WITH_AS(op.run(x, o), named, lg::ValueError);
    }
    // Zero channels or a zero spatial size (a zero batch is fine, tested above).
    std::vector<int64_t> zero_c = in, zero_s = in;
    zero_c[1] = 0;
    zero_s.back() = 0;
    CHECK_THROWS_WITH_AS(op.run(lg::ones(zero_c), out), named, lg::ValueError);
    CHECK_THROWS_WITH_AS(op.run(lg::ones(zero_s), out), named, lg::ValueError);
    // dtypes: never bool; integers only for nearest.
    CHECK_THROWS_WITH_AS(op.run(x.to(lg::kBool), out), named, lg::TypeError);
    for (DType dt : {lg::kInt32, lg::kInt64}) {
      CAPTURE(dt);
      if (op.floating_only)
        CHECK_THROWS_WITH_AS(op.run(x.to(dt), out), named, lg::TypeError);
      else
        CHECK_NOTHROW(op.run(x.to(dt), out));
    }
    CHECK_THROWS_WITH_AS(op.run(Tensor(), out), named, lg::Error);
  }
}

TEST_CASE("interpolate bad input: size and scale_factor, mode, align_corners, rank") {
  const Tensor x4 = lg::ones({2, 3, 4, 5}), x5 = lg::ones({2, 3, 2, 4, 5});
  const auto named = doctest::Contains("[interpolate]");
  CHECK_THROWS_WITH_AS(lg::interpolate(x4, {8, 10}, {2.0}), named, lg::ValueError);  // both
  CHECK_THROWS_WITH_AS(lg::interpolate(x4), named, lg::ValueError);                  // neither
  CHECK_THROWS_WITH_AS(lg::interpolate(x4, {8, 10, 12}), named, lg::ValueError);     // 3 sizes for 2 dims
  CHECK_THROWS_WITH_AS(lg::interpolate(x5, {8, 10}), named, lg::ValueError);         // 2 sizes for 3 dims
  CHECK_THROWS_WITH_AS(lg::interpolate(x4, {}, {2.0, 2.0, 2.0}), named, lg::ValueError);
  for (const char* mode : {"linear", "area", "nearest-exact", "Bilinear", ""}) {
    CAPTURE(mode);
    CHECK_THROWS_WITH_AS(lg::interpolate(x4, {8, 10}, {}, mode), named, lg::Error);
  }
  CHECK_THROWS_WITH_AS(lg::interpolate(x4, {8, 10}, {}, "trilinear"), named, lg::Error);  // needs 5-D
  CHECK_THROWS_WITH_AS(lg::interpolate(x5, {4, 8, 10}, {}, "bilinear"), named, lg::Error);  // needs 4-D
  CHECK_THROWS_WITH_AS(lg::interpolate(x5, {4, 8, 10}, {}, "bicubic"), named, lg::Error);
  // align_corners is for the interpolating modes only: given at all (even false) with nearest.
  CHECK_THROWS_WITH_AS(lg::interpolate(x4, {8, 10}, {}, "nearest", true), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::interpolate(x4, {8, 10}, {}, "nearest", false), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::interpolate(x5, {}, {2.0}, "nearest", false), named, lg::ValueError);
  // Only 4-D and 5-D input.
  CHECK_THROWS_WITH_AS(lg::interpolate(lg::ones({3, 4, 5}), {8}), named, lg::Error);
  CHECK_THROWS_WITH_AS(lg::interpolate(lg::ones({1, 2, 3, 4, 5, 6}), {8}), named, lg::Error);
  // A scale that leaves no output (floor(4 * 0.1) = 0) or is negative.
  CHECK_THROWS_AS(lg::interpolate(x4, {}, {0.1}), lg::Error);
  CHECK_THROWS_AS(lg::interpolate(x4, {}, {-2.0}), lg::Error);
  CHECK_THROWS_AS(lg::interpolate(Tensor(), {8}), lg::Error);
}

TEST_CASE("pad bad input: each raises an lg::Error of the fitting type naming the op") {
  const Tensor x = lg::ones({2, 3, 4, 5});
  const auto named = doctest::Contains("[pad]");
  // The list: an odd length; more pairs than dims.
  CHECK_THROWS_WITH_AS(lg::pad(x, {1}), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pad(x, {1, 2, 3}), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pad(x, {1, 2, 3}, "reflect"), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pad(x, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pad(lg::ones({5}), {1, 1, 1, 1}), named, lg::ValueError);
  // Constant: a crop past the size.
  CHECK_THROWS_WITH_AS(lg::pad(x, {-3, -3}), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pad(x, {0, 0, -5, 0}), named, lg::ValueError);
  // Reflect: each amount < the dim's size, never negative.
  for (const std::vector<int64_t>& a : {std::vector<int64_t>{5, 0, 0, 0}, std::vector<int64_t>{0, 5, 0, 0},
                                        std::vector<int64_t>{0, 0, 4, 0}, std::vector<int64_t>{0, 0, 0, 4},
                                        std::vector<int64_t>{-1, 0, 0, 0}, std::vector<int64_t>{0, 0, 0, -1}}) {
    CAPTURE(lg::to_string(a));
    CHECK_THROWS_WITH_AS(lg::pad(x, a, "reflect"), named, lg::ValueError);
  }
  CHECK_THROWS_WITH_AS(lg::pad(lg::ones({2, 3, 1}), {1, 0}, "reflect"), named, lg::ValueError);
  // Replicate and circular: never negative; circular at most the dim's size.
  CHECK_THROWS_WITH_AS(lg::pad(x, {-1, 0, 0, 0}, "replicate"), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pad(x, {0, 0, 0, -2}, "replicate"), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pad(x, {-1, 0, 0, 0}, "circular"), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pad(x, {6, 0, 0, 0}, "circular"), named, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pad(x, {0, 0, 0, 5}, "circular"), named, lg::ValueError);
  // The non-constant modes pad 1 to 3 trailing dims of a 2-D to 5-D input.
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    CAPTURE(mode);
    CHECK_THROWS_WITH_AS(lg::pad(lg::ones({2, 3, 4, 5, 6}), {1, 1, 1, 1, 1, 1, 1, 1}, mode), named, lg::Error);
    CHECK_THROWS_WITH_AS(lg::pad(lg::ones({5}), {1, 1}, mode), named, lg::Error);
    CHECK_THROWS_WITH_AS(lg::pad(lg::ones({1, 2, 3, 4, 5, 6}), {1, 1}, mode), named, lg::Error);
  }
  // An unknown mode; an undefined input.
  for (const char* mode : {"mirror", "symmetric", "Reflect", ""}) {
    CAPTURE(mode);
    CHECK_THROWS_WITH_AS(lg::pad(x, {1, 1}, mode), named, lg::Error);
  }
  CHECK_THROWS_WITH_AS(lg::pad(Tensor(), {1, 1}), named, lg::Error);
  CHECK_THROWS_WITH_AS(lg::pad(Tensor(), {1, 1}, "reflect"), named, lg::Error);
}

TEST_CASE("shuffle bad input: each raises an lg::Error of the fitting type naming the op") {
  const auto ps = doctest::Contains("[pixel_shuffle]"), pu = doctest::Contains("[pixel_unshuffle]");
  const auto cs = doctest::Contains("[channel_shuffle]");
  CHECK_THROWS_WITH_AS(lg::pixel_shuffle(lg::ones({1, 6, 2, 2}), 2), ps, lg::ValueError);  // 6 % 4 != 0
  CHECK_THROWS_WITH_AS(lg::pixel_shuffle(lg::ones({1, 8, 2, 2}), 3), ps, lg::ValueError);  // 8 % 9 != 0
  CHECK_THROWS_WITH_AS(lg::pixel_shuffle(lg::ones({1, 8, 2, 2}), 0), ps, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pixel_shuffle(lg::ones({1, 8, 2, 2}), -2), ps, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pixel_shuffle(lg::ones({8, 2}), 2), ps, lg::ValueError);  // needs (..., C, H, W)
  CHECK_THROWS_WITH_AS(lg::pixel_shuffle(Tensor(), 2), ps, lg::Error);

  CHECK_THROWS_WITH_AS(lg::pixel_unshuffle(lg::ones({1, 3, 5, 4}), 2), pu, lg::ValueError);  // H % 2 != 0
  CHECK_THROWS_WITH_AS(lg::pixel_unshuffle(lg::ones({1, 3, 4, 5}), 2), pu, lg::ValueError);  // W % 2 != 0
  CHECK_THROWS_WITH_AS(lg::pixel_unshuffle(lg::ones({1, 3, 4, 4}), 3), pu, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pixel_unshuffle(lg::ones({1, 3, 4, 4}), 0), pu, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pixel_unshuffle(lg::ones({1, 3, 4, 4}), -1), pu, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pixel_unshuffle(lg::ones({4, 4}), 2), pu, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::pixel_unshuffle(Tensor(), 2), pu, lg::Error);

  const Tensor x = lg::ones({2, 6, 3, 3});
  CHECK_THROWS_WITH_AS(lg::channel_shuffle(x, 4), cs, lg::ValueError);   // 6 % 4 != 0
  CHECK_THROWS_WITH_AS(lg::channel_shuffle(x, 12), cs, lg::ValueError);  // more groups than channels
  CHECK_THROWS_WITH_AS(lg::channel_shuffle(x, 0), cs, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::channel_shuffle(x, -2), cs, lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::channel_shuffle(Tensor(), 2), cs, lg::Error);
}

TEST_CASE("resampling ops keep channels_last under the guard, shadow mode agrees") {
  CleanGuard clean;
  lg::guard::set_options(options_with(lg::guard::Mode::Throw, "shadow=1"));
  const Tensor x = noise_in({2, 3, 6, 6}, CL, f32, 47), x3 = noise_in({2, 3, 2, 3, 4}, CL3, f32, 48);
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::upsample_nearest2d(x, {12, 9}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::upsample_bilinear2d(x, {12, 9}, false));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::upsample_bicubic2d(x, {12, 9}, true));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::interpolate(x, {}, {2.0}, "bilinear"));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::upsample_nearest3d(x3, {4, 6, 8}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::upsample_trilinear3d(x3, {4, 6, 8}, false));
  for (const char* mode : {"constant", "reflect", "replicate", "circular"}) {
    CAPTURE(mode);
    LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::pad(x, {1, 2, 2, 1}, mode));
  }
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::pixel_shuffle(noise_in({2, 12, 3, 4}, CL, f32, 49), 2));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::pixel_unshuffle(x, 2));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::channel_shuffle(x, 3));
}

}  // TEST_SUITE

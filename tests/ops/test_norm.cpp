// Normalisations against the float64 reference (ops/norm_reference.h): batch_norm (training and
// evaluation), group_norm, layer_norm and instance_norm over every input layout (contiguous,
// channels_last, permuted, non-dense channels_last slice; N1HW, NC11 and 5-D shapes), with and
// without weight and bias, in every floating dtype; running statistics, momentum and eps; output
// strides (batch_norm: PyTorch's CPU rule, layout rows 62-66 exactly, numbered as in
// tests/core/test_layout_rows.cpp; the others: dense in the input's suggested format); bad input; the guard.
#include <functional>
#include <optional>

#include <doctest/doctest.h>

#include <layoutguard/testing/doctest.h>

#include "ops/norm_reference.h"
#include "support/guard_testing.h"
#include "support/op_testing.h"

namespace {

using lg::DType;
using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

constexpr TolTable norm_tol{.f64 = {1e-10, 1e-10}, .f32 = {1e-5, 1e-5}, .f16 = {5e-3, 5e-3}, .bf16 = {3e-2, 3e-2}};

// Values of an optional parameter; empty (the reference's "absent") when undefined.
std::vector<double> vals(const Tensor& t) { return t.defined() ? values(t) : std::vector<double>{}; }

// Weight and bias, or two undefined tensors: an undefined tensor means absent, like nullopt.
struct Affine {
  Tensor w, b;
};
Affine affine(lg::IntArrayRef shape, bool present, DType dt, uint32_t seed) {
  if (!present) return {};
  return {noise_in(shape, CF, dt, seed), noise_in(shape, CF, dt, seed + 1)};
}

// Running statistics for C channels: any mean, a positive variance.
struct Running {
  Tensor mean, var;
};
Running running_stats(int64_t C, DType dt) { return {noise_in({C}, CF, dt, 90), ramp_in({C}, CF, dt, true)}; }

// Shapes: plain, then N1HW and NC11 (both contiguous and channels_last at once: the ambiguous
// cases where batch_norm's "contiguous first" and the suggested format disagree), then 5-D.
const std::vector<std::vector<int64_t>> kShapes{{2, 4, 3, 5}, {2, 1, 4, 5}, {2, 4, 1, 1}, {2, 4, 2, 3, 3}};

// The input layouts of a 4-D or 5-D shape: contiguous, channels_last(_3d), permuted (dims 2 and
// 3 swapped: dense, yet in no memory format) and a non-dense channels_last slice (every other
// index of dim 2 of a channels_last tensor twice as large there).
std::vector<std::pair<std::string, Tensor>> input_variants(const std::vector<int64_t>& s, DType dt, uint32_t seed) {
  const MemoryFormat cl = s.size() == 5 ? CL3 : CL;
  std::vector<int64_t> swapped = s, doubled = s;
  std::swap(swapped[2], swapped[3]);
  doubled[2] *= 2;
  return {
      {"contiguous", noise_in(s, CF, dt, seed)},
      {"channels_last", noise_in(s, cl, dt, seed)},
      {"permuted", noise_in(swapped, CF, dt, seed).transpose(2, 3)},
      {"non-dense channels_last slice", noise_in(doubled, cl, dt, seed).slice(2, 0, doubled[2], 2)},
  };
}

// PyTorch's batch_norm_cpu rule with contiguous parameters: a tensor contiguous in
// some format keeps it, plain contiguous first; anything else gets its suggested format.
MemoryFormat batch_norm_format(const Tensor& x) {
  if (x.is_contiguous()) return CF;
  if (x.is_contiguous(CL3)) return CL3;
  if (x.is_contiguous(CL)) return CL;
  return x.suggest_memory_format();
}

// y has x's dtype, the dense strides of fmt, and the reference's values (rounded to the dtype).
void check_output(const Tensor& y, const Tensor& x, MemoryFormat fmt, const std::vector<double>& want) {
  CHECK(y.dtype() == x.dtype());
  CHECK(ls(y) == ls(lg::empty(x.sizes(), lg::TensorOptions(), fmt)));
  check_close(values(y), rounded(want, x.dtype()), norm_tol(x.dtype()));
}

// batch_norm with running stats: training blends the batch statistics into them in place (a
// version bump); evaluation normalises with them and leaves them untouched.
void check_batch_norm(const Tensor& x, const Affine& a, bool training, double momentum = 0.1, double eps = 1e-5) {
  const DType dt = x.dtype();
  const Running r = running_stats(x.size(1), dt);
  const NormRef want = ref_batch_norm(values(x), x.sizes().vec(), vals(a.w), vals(a.b), values(r.mean), values(r.var),
                                      training, momentum, eps);
  const uint64_t mean_version = r.mean.version(), var_version = r.var.version();
  check_output(lg::batch_norm(x, a.w, a.b, r.mean, r.var, training, momentum, eps), x, batch_norm_format(x), want.out);
  check_close(values(r.mean), rounded(want.running_mean, dt), norm_tol(dt));
  check_close(values(r.var), rounded(want.running_var, dt), norm_tol(dt));
  CHECK((r.mean.version() > mean_version) == training);
  CHECK((r.var.version() > var_version) == training);
  if (training)  // without running stats: the same output, nothing to update
    check_output(lg::batch_norm(x, a.w, a.b, std::nullopt, std::nullopt, true, momentum, eps), x, batch_norm_format(x),
                 want.out);
}

// instance_norm, as check_batch_norm with use_input_stats in the role of training.
void check_instance_norm(const Tensor& x, const Affine& a, bool use_input_stats, double momentum = 0.1,
                         double eps = 1e-5) {
  const DType dt = x.dtype();
  const Running r = running_stats(x.size(1), dt);
  const NormRef want = ref_instance_norm(values(x), x.sizes().vec(), vals(a.w), vals(a.b), values(r.mean),
                                         values(r.var), use_input_stats, momentum, eps);
  const uint64_t mean_version = r.mean.version();
  const MemoryFormat fmt = x.suggest_memory_format();
  check_output(lg::instance_norm(x, a.w, a.b, r.mean, r.var, use_input_stats, momentum, eps), x, fmt, want.out);
  check_close(values(r.mean), rounded(want.running_mean, dt), norm_tol(dt));
  check_close(values(r.var), rounded(want.running_var, dt), norm_tol(dt));
  CHECK((r.mean.version() > mean_version) == use_input_stats);
  if (use_input_stats)  // without running stats: the same output
    check_output(lg::instance_norm(x, a.w, a.b, std::nullopt, std::nullopt, true, momentum, eps), x, fmt, want.out);
}

void check_group_norm(const Tensor& x, int64_t groups, const Affine& a, double eps = 1e-5) {
  CAPTURE(groups);
  check_output(lg::group_norm(x, groups, a.w, a.b, eps), x, x.suggest_memory_format(),
               ref_group_norm(values(x), x.sizes().vec(), groups, vals(a.w), vals(a.b), eps));
}

// layer_norm over the trailing k dims, with weight and bias of that shape when with_affine.
void check_layer_norm(const Tensor& x, size_t k, bool with_affine, uint32_t seed, double eps = 1e-5) {
  CAPTURE(k);
  const std::vector<int64_t> s = x.sizes().vec(), shape(s.end() - static_cast<std::ptrdiff_t>(k), s.end());
  const Affine a = affine(shape, with_affine, x.dtype(), seed);
  check_output(lg::layer_norm(x, shape, a.w, a.b, eps), x, x.suggest_memory_format(),
               ref_layer_norm(values(x), s, k, vals(a.w), vals(a.b), eps));
}

// Every op on x, with weight and bias of C channels when with_affine.
void check_every_op(const Tensor& x, bool with_affine, uint32_t seed) {
  const int64_t C = x.size(1);
  const Affine a = affine({C}, with_affine, x.dtype(), seed);
  check_batch_norm(x, a, true);
  check_batch_norm(x, a, false);
  for (int64_t groups : {int64_t{1}, C / 2, C})
    if (groups > 0 && C % groups == 0) check_group_norm(x, groups, a);
  check_layer_norm(x, static_cast<size_t>(x.dim() - 1), with_affine, seed + 2);  // all but N
  // Training instance_norm needs more than one spatial element (NC11 has one).
  if (x.numel() / (x.size(0) * C) > 1) check_instance_norm(x, a, true);
  check_instance_norm(x, a, false);
}

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("normalisation: values and output layout over every input layout, with and without weight and bias") {
  for (const std::vector<int64_t>& s : kShapes) {
    for (const auto& [name, x] : input_variants(s, f32, 1)) {
      for (bool with_affine : {false, true}) {
        CAPTURE(lg::to_string(s));
        CAPTURE(name);
        CAPTURE(with_affine);
        check_every_op(x, with_affine, 2);
      }
    }
  }
}

TEST_CASE("normalisation: dense NHWC blocks of whole pixels equal the per-pixel loop bit for bit") {
  // Dense channels-last tensors run as one flat loop per image against tiled per-channel values
  // (blocks of >= 256 values); a W-strided view of the same numbers takes the per-pixel loop.
  // C = 3, 16, 70 and 300 give blocks of 85, 16, 3 and 1 pixels; 35 pixels per image make
  // blocks cross image boundaries, where group and instance norm change their values.
  for (int64_t C : {3, 16, 70, 300}) {
    CAPTURE(C);
    const Tensor wide = noise_in({2, C, 5, 14}, CL, f32, 41);
    const Tensor strided = wide.slice(3, 0, 14, 2);
    const Tensor dense = strided.contiguous(CL);
    REQUIRE(dense.is_contiguous(CL));
    REQUIRE_FALSE(strided.is_contiguous(CL));
    const Tensor w = noise_in({C}, CF, f32, 42), b = noise_in({C}, CF, f32, 43);
    const Tensor rm = noise_in({C}, CF, f32, 44), rv = lg::add(noise_in({C}, CF, f32, 45), 1.5);
    const auto same = [&](const std::function<Tensor(const Tensor&)>& norm) {
      const Tensor a = norm(dense), c = norm(strided);
      LG_CHECK_CHANNELS_LAST(a);
      check_close(values(a), values(c), Tol{0, 0});
    };
    same([&](const Tensor& x) { return lg::batch_norm(x, w, b, rm, rv, false); });
    same([&](const Tensor& x) { return lg::batch_norm(x, w, b, std::nullopt, std::nullopt, true); });
    same([&](const Tensor& x) { return lg::instance_norm(x, w, b); });
    if (C % 2 == 0) same([&](const Tensor& x) { return lg::group_norm(x, 2, w, b); });
  }
}

TEST_CASE("normalisation: float64, float16 and bfloat16; float32 parameters for half-precision input") {
  for (DType dt : {lg::kFloat64, lg::kFloat16, lg::kBFloat16}) {
    for (MemoryFormat fmt : {CF, CL}) {
      CAPTURE(dt);
      CAPTURE(fmt);
      check_every_op(noise_in({2, 4, 3, 5}, fmt, dt, 3), true, 4);
    }
    CAPTURE(dt);
    check_every_op(noise_in({2, 4, 2, 3, 3}, CL3, dt, 5), true, 6);
  }
  // PyTorch's mixed-type norms: float32 weight, bias and running stats with float16/bfloat16
  // input; the output keeps the input's dtype and the running stats stay float32.
  for (DType dt : {lg::kFloat16, lg::kBFloat16}) {
    CAPTURE(dt);
    const Tensor x = noise_in({2, 4, 3, 5}, CL, dt, 7);
    const std::vector<int64_t> s{2, 4, 3, 5};
    const Affine a = affine({4}, true, f32, 8);
    const Running r = running_stats(4, f32);
    const NormRef want = ref_batch_norm(values(x), s, vals(a.w), vals(a.b), values(r.mean), values(r.var), true, 0.1, 1e-5);
    check_output(lg::batch_norm(x, a.w, a.b, r.mean, r.var, true), x, CL, want.out);
    CHECK(r.mean.dtype() == f32);
    check_close(values(r.mean), want.running_mean, norm_tol(f32));
    check_close(values(r.var), want.running_var, norm_tol(f32));
    check_output(lg::group_norm(x, 2, a.w, a.b), x, CL, ref_group_norm(values(x), s, 2, vals(a.w), vals(a.b), 1e-5));
  }
}

TEST_CASE("normalisation: 2-D and 3-D inputs (BatchNorm1d-style (N, C) and (N, C, L))") {
  for (const std::vector<int64_t>& s : {std::vector<int64_t>{6, 4}, std::vector<int64_t>{3, 4, 5}}) {
    CAPTURE(lg::to_string(s));
    const Tensor x = noise_in(s, CF, f32, 9);
    const Affine a = affine({4}, true, f32, 10);
    check_batch_norm(x, a, true);
    check_batch_norm(x, a, false);
    check_group_norm(x, 2, a);
    check_layer_norm(x, 1, true, 11);
    if (s.size() == 3) check_instance_norm(x, a, true);
  }
}

TEST_CASE("layer_norm: over 1, 2 and 3 trailing dims of channels_last data") {
  // On NHWC data the trailing dims are not the innermost in memory: W has stride C, and
  // (C, H, W) is one dense block walked out of order.
  const Tensor x = noise_in({2, 4, 3, 5}, CL, f32, 12);
  for (size_t k : {1, 2, 3})
    for (bool with_affine : {false, true}) {
      CAPTURE(with_affine);
      check_layer_norm(x, k, with_affine, 13);
    }
  check_layer_norm(x, 2, true, 14, 0.5);  // a large eps, so that it shows in every output
  check_layer_norm(noise_in({2, 3, 8}, CF, f32, 15), 1, true, 16);  // (N, L, E), the transformer case
}

TEST_CASE("batch_norm and instance_norm: running statistics, momentum and eps") {
  const Tensor x = noise_in({3, 4, 3, 5}, CL, f32, 17);
  const Affine a = affine({4}, true, f32, 18);
  for (double momentum : {0.0, 0.3, 1.0})
    for (double eps : {1e-5, 0.5}) {
      CAPTURE(momentum);
      CAPTURE(eps);
      check_batch_norm(x, a, true, momentum, eps);
      check_batch_norm(x, a, false, momentum, eps);
      check_instance_norm(x, a, true, momentum, eps);
      check_instance_norm(x, a, false, momentum, eps);
    }
  // Training steps update the running stats, then evaluation normalises with the updated ones.
  const Tensor rm = lg::zeros({4}), rv = lg::ones({4});
  NormRef step{{}, {0, 0, 0, 0}, {1, 1, 1, 1}};
  for (int i = 0; i < 2; ++i) {
    (void)lg::batch_norm(x, a.w, a.b, rm, rv, true, 0.3);
    step = ref_batch_norm(values(x), {3, 4, 3, 5}, {}, {}, step.running_mean, step.running_var, true, 0.3, 1e-5);
  }
  check_close(values(rm), step.running_mean, norm_tol(f32));
  check_close(values(rv), step.running_var, norm_tol(f32));
  check_output(lg::batch_norm(x, a.w, a.b, rm, rv, false), x, CL,
               ref_batch_norm(values(x), {3, 4, 3, 5}, vals(a.w), vals(a.b), step.running_mean, step.running_var, false,
                              0.1, 1e-5).out);
  // Running stats that are strided views are written through their strides, nowhere else.
  const Tensor mean_base = lg::zeros({8}), var_base = lg::ones({8});
  const Tensor mean_view = mean_base.slice(0, 0, 8, 2), var_view = var_base.slice(0, 0, 8, 2);
  (void)lg::batch_norm(x, std::nullopt, std::nullopt, mean_view, var_view, true, 0.5);
  const NormRef want = ref_batch_norm(values(x), {3, 4, 3, 5}, {}, {}, {0, 0, 0, 0}, {1, 1, 1, 1}, true, 0.5, 1e-5);
  check_close(values(mean_view), want.running_mean, norm_tol(f32));
  check_close(values(var_view), want.running_var, norm_tol(f32));
  CHECK(values(mean_base.slice(0, 1, 8, 2)) == std::vector<double>(4, 0.0));
  CHECK(values(var_base.slice(0, 1, 8, 2)) == std::vector<double>(4, 1.0));
}

TEST_CASE("normalisation: absent weight or bias (nullopt or an undefined tensor) acts as ones or zeros") {
  using Opt = std::optional<Tensor>;
  const Tensor x = noise_in({2, 4, 3, 5}, CL, f32, 19);
  const Running r = running_stats(4, f32);
  struct OpCase {
    std::string name;
    std::vector<int64_t> param_shape;
    std::function<Tensor(const Opt&, const Opt&)> run;
  };
  // batch_norm either trains without running stats or only reads them (evaluation), so every
  // call below sees the same state.
  const std::vector<OpCase> cases{
      {"batch_norm train", {4}, [&](const Opt& w, const Opt& b) { return lg::batch_norm(x, w, b, std::nullopt, std::nullopt, true); }},
      {"batch_norm eval", {4}, [&](const Opt& w, const Opt& b) { return lg::batch_norm(x, w, b, r.mean, r.var, false); }},
      {"group_norm", {4}, [&](const Opt& w, const Opt& b) { return lg::group_norm(x, 2, w, b); }},
      {"layer_norm", {3, 5}, [&](const Opt& w, const Opt& b) { return lg::layer_norm(x, {3, 5}, w, b); }},
      {"instance_norm", {4}, [&](const Opt& w, const Opt& b) { return lg::instance_norm(x, w, b); }},
  };
  for (const OpCase& c : cases) {
    CAPTURE(c.name);
    const Tensor w = noise_in(c.param_shape, CF, f32, 20), b = noise_in(c.param_shape, CF, f32, 21);
    const Tensor ones = lg::ones(c.param_shape), zeros = lg::zeros(c.param_shape);
    const std::vector<double> plain = values(c.run(std::nullopt, std::nullopt));
    check_close(values(c.run(Tensor(), Tensor())), plain, norm_tol(f32));
    check_close(values(c.run(ones, zeros)), plain, norm_tol(f32));
    check_close(values(c.run(w, std::nullopt)), values(c.run(w, zeros)), norm_tol(f32));
    check_close(values(c.run(Tensor(), b)), values(c.run(ones, b)), norm_tol(f32));
  }
}

TEST_CASE("layout rows 62-66: batch_norm output strides in both modes; ambiguous shapes; non-contiguous parameters") {
  for (bool training : {false, true}) {
    CAPTURE(training);
    const auto bn = [&](const Tensor& x) {
      return lg::batch_norm(x, std::nullopt, std::nullopt, lg::zeros({x.size(1)}), lg::ones({x.size(1)}), training);
    };
    CHECK(ls(bn(noise_in({2, 3, 4, 5}, CL, f32, 22))) == "(2,3,4,5)@(60,1,15,3)");  // 62
    const Tensor slice = noise_in({2, 3, 4, 5}, CL, f32, 23).slice(2, 0, 4, 2);
    REQUIRE(ls(slice) == "(2,3,2,5)@(60,1,30,3)");
    CHECK(ls(bn(slice)) == "(2,3,2,5)@(30,1,15,3)");  // 63: the suggested format, dense
    const Tensor nc11 = noise_in({2, 3, 1, 1}, CL, f32, 24);
    REQUIRE(ls(nc11) == "(2,3,1,1)@(3,1,3,3)");
    CHECK(ls(bn(nc11)) == "(2,3,1,1)@(3,1,1,1)");  // 64: NC11-CL loses its tag (contiguous first)
    CHECK(ls(bn(noise_in({2, 3, 4, 5}, CF, f32, 25).transpose(2, 3))) == "(2,3,5,4)@(60,20,4,1)");  // 65
    CHECK(ls(bn(noise_in({2, 3, 4, 5, 6}, CL3, f32, 26))) == "(2,3,4,5,6)@(360,1,90,18,3)");        // 66
    // batch_norm_cpu's rule: N1HW-CL is contiguous first as well.
    const Tensor n1hw = noise_in({2, 1, 6, 6}, CL, f32, 27);
    REQUIRE(ls(n1hw) == "(2,1,6,6)@(36,1,6,1)");
    CHECK(ls(bn(n1hw)) == "(2,1,6,6)@(36,36,6,1)");
  }
  // One non-contiguous parameter or running stat sends the rule to the suggested format, which
  // for NC11-CL is channels_last; the values do not depend on the parameters' strides.
  const Tensor nc11 = noise_in({2, 3, 1, 1}, CL, f32, 28);
  const Tensor w = noise_in({6}, CF, f32, 29).slice(0, 0, 6, 2);
  REQUIRE_FALSE(w.is_contiguous());
  const Tensor y = lg::batch_norm(nc11, w, std::nullopt, std::nullopt, std::nullopt, true);
  CHECK(ls(y) == "(2,3,1,1)@(3,1,3,3)");
  check_close(values(y), values(lg::batch_norm(nc11, w.contiguous(), std::nullopt, std::nullopt, std::nullopt, true)),
              norm_tol(f32));
  const Tensor rm = noise_in({6}, CF, f32, 30).slice(0, 0, 6, 2), rv = ramp_in({6}, CF, f32, true).slice(0, 0, 6, 2);
  const Tensor y_eval = lg::batch_norm(nc11, std::nullopt, std::nullopt, rm, rv, false);
  CHECK(ls(y_eval) == "(2,3,1,1)@(3,1,3,3)");
  check_close(values(y_eval),
              ref_batch_norm(values(nc11), {2, 3, 1, 1}, {}, {}, values(rm), values(rv), false, 0.1, 1e-5).out,
              norm_tol(f32));
}

TEST_CASE("normalisation bad input: each raises an lg::Error naming the op") {
  const Tensor x = lg::ones({2, 4, 3, 5}), c4 = lg::ones({4}), c5 = lg::ones({5}), f64 = lg::ones({4}, lg::kFloat64);
  const Tensor ints = x.to(lg::kInt32);
  const auto bn = doctest::Contains("[batch_norm]"), gn = doctest::Contains("[group_norm]");
  const auto ln = doctest::Contains("[layer_norm]"), in = doctest::Contains("[instance_norm]");
  CHECK_THROWS_WITH_AS(lg::batch_norm(x, c5, std::nullopt, std::nullopt, std::nullopt, true), bn, lg::Error);
  CHECK_THROWS_WITH_AS(lg::batch_norm(x, std::nullopt, c5, std::nullopt, std::nullopt, true), bn, lg::Error);
  CHECK_THROWS_WITH_AS(lg::batch_norm(x, std::nullopt, std::nullopt, c5, c5, true), bn, lg::Error);
  CHECK_THROWS_WITH_AS(lg::batch_norm(x, c4, c4, std::nullopt, std::nullopt, false), bn, lg::Error);  // eval, no stats
  CHECK_THROWS_WITH_AS(lg::batch_norm(c4, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true), bn, lg::Error);
  CHECK_THROWS_WITH_AS(lg::batch_norm(lg::ones({1, 4, 1, 1}), std::nullopt, std::nullopt, std::nullopt, std::nullopt, true),
                       bn, lg::Error);  // one value per channel: no variance to train with
  CHECK_THROWS_WITH_AS(lg::batch_norm(ints, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true), bn, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::batch_norm(x, f64, std::nullopt, std::nullopt, std::nullopt, true), bn, lg::Error);
  CHECK_THROWS_WITH_AS(lg::batch_norm(Tensor(), std::nullopt, std::nullopt, std::nullopt, std::nullopt, true), bn, lg::Error);
  // Running stats updated in place may share memory with nothing the op reads, nor each other.
  {
    const Tensor m = lg::full({4}, 2.0), v = lg::ones({4});
    const auto shares = [](const char* what) {
      return doctest::Contains(doctest::String((std::string("shares memory with ") + what + "; the running stats are updated in place").c_str()));
    };
    CHECK_THROWS_WITH_AS(lg::batch_norm(x, m, std::nullopt, m, v, true), shares("weight"), lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::batch_norm(x, std::nullopt, v, m, v, true), shares("bias"), lg::ValueError);
    const Tensor buf = lg::randn({2, 4, 3, 5});
    CHECK_THROWS_WITH_AS(lg::batch_norm(buf, std::nullopt, std::nullopt, buf.view({-1}).slice(0, 0, 4), v, true),
                         shares("input"), lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::instance_norm(x, m, std::nullopt, m, v, true), shares("weight"), lg::ValueError);
    CHECK_THROWS_WITH_AS(lg::batch_norm(x, std::nullopt, std::nullopt, m, m, true),
                         doctest::Contains("running_mean and running_var share memory"), lg::ValueError);
    CHECK_NOTHROW(lg::batch_norm(x, m, std::nullopt, m, v, false));  // evaluation reads the stats only
    // Interleaved slices of one buffer share no element: a weight and a running mean may be them.
    const Tensor both = lg::ones({10});
    CHECK_NOTHROW(lg::batch_norm(x, both.slice(0, 0, 8, 2), std::nullopt, both.slice(0, 1, 9, 2), v, true));
    CHECK_THROWS_WITH_AS(lg::batch_norm(x, both.slice(0, 0, 8, 2), std::nullopt, both.slice(0, 2, 10, 2), v, true),
                         shares("weight"), lg::ValueError);
  }

  CHECK_THROWS_WITH_AS(lg::group_norm(x, 3), gn, lg::Error);  // 4 channels in 3 groups
  CHECK_THROWS_WITH_AS(lg::group_norm(x, 0), gn, lg::Error);
  CHECK_THROWS_WITH_AS(lg::group_norm(x, 2, c5), gn, lg::Error);
  CHECK_THROWS_WITH_AS(lg::group_norm(x, 2, c4, c5), gn, lg::Error);
  CHECK_THROWS_WITH_AS(lg::group_norm(c4, 1), gn, lg::Error);
  CHECK_THROWS_WITH_AS(lg::group_norm(ints, 2), gn, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::group_norm(x, 2, f64), gn, lg::Error);
  CHECK_THROWS_WITH_AS(lg::group_norm(Tensor(), 1), gn, lg::Error);

  CHECK_THROWS_WITH_AS(lg::layer_norm(x, {4, 5}), ln, lg::Error);  // the trailing dims are (3, 5)
  CHECK_THROWS_WITH_AS(lg::layer_norm(x, {3}), ln, lg::Error);
  CHECK_THROWS_WITH_AS(lg::layer_norm(x, {1, 2, 4, 3, 5}), ln, lg::Error);  // more dims than the input
  CHECK_THROWS_WITH_AS(lg::layer_norm(x, {}), ln, lg::Error);
  CHECK_THROWS_WITH_AS(lg::layer_norm(x, {3, 5}, lg::ones({15})), ln, lg::Error);
  CHECK_THROWS_WITH_AS(lg::layer_norm(x, {3, 5}, std::nullopt, lg::ones({5, 3})), ln, lg::Error);
  CHECK_THROWS_WITH_AS(lg::layer_norm(ints, {3, 5}), ln, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::layer_norm(x, {3, 5}, lg::ones({3, 5}, lg::kFloat64)), ln, lg::Error);
  CHECK_THROWS_WITH_AS(lg::layer_norm(Tensor(), {3, 5}), ln, lg::Error);

  CHECK_THROWS_WITH_AS(lg::instance_norm(lg::ones({2, 4})), in, lg::Error);  // no spatial dims
  CHECK_THROWS_WITH_AS(lg::instance_norm(lg::ones({2, 4, 1, 1})), in, lg::Error);  // one spatial element
  CHECK_THROWS_WITH_AS(lg::instance_norm(x, c5), in, lg::Error);
  CHECK_THROWS_WITH_AS(lg::instance_norm(x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, false), in, lg::Error);
  CHECK_THROWS_WITH_AS(lg::instance_norm(ints), in, lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::instance_norm(x, f64), in, lg::Error);
  CHECK_THROWS_WITH_AS(lg::instance_norm(Tensor()), in, lg::Error);
}

TEST_CASE("normalisations keep channels_last under the guard, shadow mode agrees") {
  CleanGuard clean;
  lg::guard::set_options(options_with(lg::guard::Mode::Throw, "shadow=1"));
  const Tensor x = noise_in({2, 4, 3, 5}, CL, f32, 32), x3 = noise_in({2, 4, 2, 3, 3}, CL3, f32, 33);
  const Tensor w = noise_in({4}, CF, f32, 34), b = noise_in({4}, CF, f32, 35);
  const Tensor rm = lg::zeros({4}), rv = lg::ones({4});
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::batch_norm(x, w, b, rm, rv, true));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::batch_norm(x, w, b, rm, rv, false));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::group_norm(x, 2, w, b));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::layer_norm(x, {3, 5}, noise_in({3, 5}, CF, f32, 36)));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::instance_norm(x, w, b, rm, rv));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::batch_norm(x3, w, b, std::nullopt, std::nullopt, true));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::group_norm(x3, 2, w, b));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::instance_norm(x3, w, b));
}

}  // TEST_SUITE

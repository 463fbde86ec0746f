// The model zoo on CUDA against the CPU: the same deterministic weights, the same input, in
// contiguous and in channels_last(_3d), with zero layout violations; float16 ResNet-18 in
// channels_last against the float32 CPU result; ResNet-18 and r3d_18 with batch norm on cuDNN;
// and shadow=1 on CUDA (clean over a model, and catching a CUDA kernel that computes wrong
// values in channels_last).
#include <memory>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>

#include "cuda_testing.h"
#include "nn/deterministic_weights.h"
#include "support/guard_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

const lg::Device kGpu = lg::Device::cuda(0);

// TF32 off for the comparisons against the CPU's float32 (restored on exit).
struct NoTf32 {
  NoTf32() { lg::cuda::set_allow_tf32(false); }
  ~NoTf32() { lg::cuda::set_allow_tf32(true); }
};

std::shared_ptr<lg::nn::Module> loaded_model(const std::string& name) {
  auto model = lg::models::create_model(name);
  model->eval();
  model->load_state_dict(deterministic_state_dict(*model), /*strict=*/true);
  return model;
}

// The model run in fmt under the guard in record mode: the output and the violation count.
std::pair<Tensor, int64_t> run_recorded(lg::nn::Module& model, const Tensor& x, MemoryFormat fmt) {
  if (fmt == MemoryFormat::ChannelsLast) lg::nn::utils::convert_conv2d_weight_memory_format(model, fmt);
  if (fmt == MemoryFormat::ChannelsLast3d) lg::nn::utils::convert_conv3d_weight_memory_format(model, fmt);
  lg::guard::clear_report();
  lg::guard::Scope scope(lg::guard::Mode::Record);
  Tensor y = model(x.to(fmt));
  return {y, lg::guard::report().violation_count()};
}

struct Case {
  std::string name;
  std::vector<int64_t> input;
};

}  // namespace

TEST_CASE("models on CUDA equal the CPU's in both formats, with no layout violation") {
  CleanGuard clean;
  NoTf32 no_tf32;
  const CudnnBatchNorm ours(false);  // the next test case runs the models with batch norm on cuDNN
  const std::vector<Case> cases{{"resnet18", {2, 3, 64, 64}},        {"resnet50", {1, 3, 64, 64}},
                                {"resnext50_32x4d", {1, 3, 64, 64}}, {"mobilenet_v2", {2, 3, 64, 64}},
                                {"densenet121", {1, 3, 64, 64}},     {"r3d_18", {1, 3, 4, 32, 32}}};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const Tensor x = deterministic_input(c.input);
    auto cpu_model = loaded_model(c.name);
    const Tensor want = (*cpu_model)(x);
    const MemoryFormat cl = x.dim() == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
    for (MemoryFormat fmt : {MemoryFormat::Contiguous, cl}) {
      CAPTURE(fmt);
      auto model = loaded_model(c.name);
      model->to(kGpu);
      auto [y, violations] = run_recorded(*model, x.cuda(), fmt);
      CHECK(violations == 0);
      REQUIRE(y.device() == kGpu);
      REQUIRE(y.sizes() == want.sizes());
      const double err = max_abs_diff(y.cpu(), want), scale = max_abs(want);
      CAPTURE(err);
      CAPTURE(scale);
      CHECK(err <= 1e-3 * scale + 1e-5);
    }
  }
}

TEST_CASE("models on CUDA with batch norm on cuDNN equal the CPU's in both formats, float32 and float16") {
  CleanGuard clean;
  NoTf32 no_tf32;
  const CudnnBatchNorm cudnn(true);
  for (const Case& c : std::vector<Case>{{"resnet18", {2, 3, 64, 64}}, {"r3d_18", {1, 3, 4, 32, 32}}}) {
    CAPTURE(c.name);
    const Tensor x = deterministic_input(c.input);
    const Tensor want = (*loaded_model(c.name))(x);
    const MemoryFormat cl = x.dim() == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
    for (lg::DType dt : {lg::kFloat32, lg::kFloat16})
      for (MemoryFormat fmt : {MemoryFormat::Contiguous, cl}) {
        CAPTURE(dt);
        CAPTURE(fmt);
        auto model = loaded_model(c.name);
        model->to(dt);
        model->to(kGpu);
        auto [y, violations] = run_recorded(*model, x.to(dt).cuda(), fmt);
        CHECK(violations == 0);
        REQUIRE(y.sizes() == want.sizes());
        const double err = max_abs_diff(y.to(lg::kFloat32).cpu(), want), scale = max_abs(want);
        CAPTURE(err);
        CAPTURE(scale);
        CHECK(err <= (dt == lg::kFloat32 ? 1e-3 * scale + 1e-5 : 2e-2 * scale));
      }
  }
}

TEST_CASE("the U-Net on CUDA keeps channels_last to its output and equals the CPU's") {
  CleanGuard clean;
  NoTf32 no_tf32;
  lg::manual_seed(5);
  auto cpu_model = lg::models::unet();
  cpu_model->eval();
  const Tensor x = lg::randn({1, 3, 32, 48});
  const Tensor want = (*cpu_model)(x);
  auto model = lg::models::unet();
  model->eval();
  model->load_state_dict(cpu_model->state_dict(), /*strict=*/true);
  model->to(kGpu);
  auto [y, violations] = run_recorded(*model, x.cuda(), MemoryFormat::ChannelsLast);
  CHECK(violations == 0);
  CHECK(y.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(max_abs_diff(y.cpu(), want) <= 1e-3 * max_abs(want) + 1e-5);
}

TEST_CASE("float16 ResNet-18 on CUDA in channels_last: channels_last throughout, close to the float32 CPU result") {
  CleanGuard clean;
  const Tensor x = deterministic_input({2, 3, 64, 64});
  const Tensor want = (*loaded_model("resnet18"))(x);
  auto model = loaded_model("resnet18");
  model->to(lg::kFloat16);
  model->to(kGpu);
  auto [y, violations] = run_recorded(*model, x.to(lg::kFloat16).cuda(), MemoryFormat::ChannelsLast);
  CHECK(violations == 0);
  CHECK(y.dtype() == lg::kFloat16);
  const double err = max_abs_diff(y.to(lg::kFloat32).cpu(), want), scale = max_abs(want);
  CAPTURE(err);
  CAPTURE(scale);
  CHECK(err <= 2e-2 * scale);
}

TEST_CASE("shadow=1 on CUDA: a model in channels_last agrees with its contiguous re-runs") {
  CleanGuard clean;
  NoTf32 no_tf32;
  auto model = loaded_model("resnet18");
  model->to(kGpu);
  lg::nn::utils::convert_conv2d_weight_memory_format(*model, MemoryFormat::ChannelsLast);
  const Tensor x = deterministic_input({1, 3, 32, 32}).cuda().contiguous(MemoryFormat::ChannelsLast);
  lg::guard::set_options(options_with(lg::guard::Mode::Throw, "shadow=1"));
  Tensor y;
  CHECK_NOTHROW(y = (*model)(x));
  CHECK(y.device() == kGpu);
}

TEST_CASE("shadow=1 on CUDA catches a CUDA kernel whose channels_last values are wrong") {
  CleanGuard clean;
  // Right layout, wrong values: adds 1 whenever its input is channels_last.
  const auto body = [](const std::vector<Tensor>& in) {
    const Tensor& x = in.at(0);
    return std::vector<Tensor>{x.is_contiguous(MemoryFormat::ChannelsLast) && !x.is_contiguous() ? lg::add(x, 1.0)
                                                                                                  : x.clone()};
  };
  static const lg::CustomOp wrong = lg::register_op("test_cuda.wrong_nhwc", lg::LayoutPolicy::Preserve, body, body);
  const Tensor x = noise_in({2, 8, 4, 4}, MemoryFormat::ChannelsLast, lg::kFloat32, 31).cuda();
  CHECK_NOTHROW(wrong({x}));  // shadow off: unnoticed
  lg::guard::set_options(options_with(lg::guard::Mode::Record, "shadow=1"));
  try {
    wrong({x});
    FAIL("no ShadowMismatch");
  } catch (const lg::ShadowMismatch& e) {
    CHECK(e.op() == "test_cuda.wrong_nhwc");
    CHECK(e.max_abs_diff() == doctest::Approx(1.0));
  }
  CHECK_NOTHROW(wrong({x.contiguous()}));
}

TEST_CASE("unet_legacy on CUDA loses channels_last at its contiguous-only custom op, as on the CPU") {
  CleanGuard clean;
  auto model = lg::models::create_model("unet_legacy");
  model->eval();
  model->to(kGpu);
  lg::manual_seed(6);
  const Tensor x = lg::randn({1, 3, 32, 32}).cuda();
  auto [y, violations] = run_recorded(*model, x, MemoryFormat::ChannelsLast);
  CHECK(violations >= 1);
  const lg::guard::Report r = lg::guard::report();
  REQUIRE_FALSE(r.violations.empty());
  CHECK(r.violations[0].first.op == "legacy_upsample2x");
  CHECK(r.violations[0].first.module_path == "up3.up");
  CHECK(y.device() == kGpu);
}

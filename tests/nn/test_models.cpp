// The model zoo against PyTorch: each torchvision model's state-dict keys, shapes and dtypes
// equal torchvision's, deterministic weights load strictly, and the float32 output equals
// torchvision's (tests/nn/data/torchvision_reference.json, made by make_torchvision_reference.py)
// in contiguous and in channels_last(_3d) -- with zero layout violations in channels_last. The
// U-Net runs in both formats with equal outputs; its legacy variant loses channels_last exactly
// at its contiguous-only custom op.
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>

#include "nn/deterministic_weights.h"
#include "support/guard_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

const nlohmann::json& reference() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(LG_TESTS_DIR) + "/nn/data/torchvision_reference.json");
    REQUIRE(in.good());
    return nlohmann::json::parse(in);
  }();
  return j;
}

// The model's format-converted run, as a user would set it up.
Tensor run_in(lg::nn::Module& model, const Tensor& x, MemoryFormat fmt) {
  if (fmt == MemoryFormat::ChannelsLast) lg::nn::utils::convert_conv2d_weight_memory_format(model, fmt);
  if (fmt == MemoryFormat::ChannelsLast3d) lg::nn::utils::convert_conv3d_weight_memory_format(model, fmt);
  if (fmt == MemoryFormat::Contiguous) {
    lg::nn::utils::convert_conv2d_weight_memory_format(model, fmt);
    lg::nn::utils::convert_conv3d_weight_memory_format(model, fmt);
  }
  return model(x.to(fmt));
}

// Runs under the guard in record mode; returns the output and the number of violations.
std::pair<Tensor, int64_t> recorded_run(lg::nn::Module& model, const Tensor& x, MemoryFormat fmt) {
  lg::guard::clear_report();
  lg::guard::Scope scope(lg::guard::Mode::Record);
  Tensor y = run_in(model, x, fmt);
  return {y, lg::guard::report().violation_count()};
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("models: torchvision keys, strict loading, and outputs equal PyTorch's in both formats") {
  CleanGuard clean;
  for (const auto& [name, ref] : reference()["models"].items()) {
    CAPTURE(name);
    auto model = lg::models::create_model(name);
    model->eval();
    // Keys, shapes and dtypes exactly as torchvision's state_dict().
    const lg::nn::StateDict ours = model->state_dict();
    REQUIRE(ours.size() == ref["keys"].size());
    for (const auto& k : ref["keys"]) {
      const std::string key = k[0];
      CAPTURE(key);
      REQUIRE(ours.count(key) == 1);
      CHECK(ours.at(key).sizes() == lg::IntArrayRef(k[1].get<std::vector<int64_t>>()));
      CHECK(std::string(lg::dtype_name(ours.at(key).dtype())) == k[2].get<std::string>());
    }
    model->load_state_dict(deterministic_state_dict(*model), /*strict=*/true);

    const Tensor x = deterministic_input(ref["input"].get<std::vector<int64_t>>());
    const std::vector<float> expected = ref["output"].get<std::vector<float>>();
    const Tensor want = lg::from_blob(const_cast<float*>(expected.data()), {1, int64_t(expected.size())}).clone();
    const MemoryFormat cl = x.dim() == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
    for (MemoryFormat fmt : {MemoryFormat::Contiguous, cl}) {
      CAPTURE(fmt);
      auto [y, violations] = recorded_run(*model, x, fmt);
      CHECK(violations == 0);
      REQUIRE(y.sizes() == want.sizes());
      const double err = max_abs_diff(y, want), scale = max_abs(want);
      CAPTURE(err);
      CAPTURE(scale);
      CHECK(err <= 2e-4 * scale + 1e-5);
    }
  }
}

TEST_CASE("models: the U-Net gives equal outputs in both formats, channels_last without a violation") {
  CleanGuard clean;
  lg::manual_seed(5);
  auto model = lg::models::unet();
  model->eval();
  const Tensor x = lg::randn({1, 3, 32, 48});
  auto [a, va] = recorded_run(*model, x, MemoryFormat::Contiguous);
  auto [b, vb] = recorded_run(*model, x, MemoryFormat::ChannelsLast);
  CHECK(va == 0);
  CHECK(vb == 0);
  CHECK(a.sizes() == lg::IntArrayRef({1, 2, 32, 48}));
  CHECK(b.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(max_abs_diff(a, b) <= 1e-4 * max_abs(a) + 1e-6);
  CHECK_THROWS_WITH_AS((*model)(lg::randn({1, 3, 30, 30})), doctest::Contains("multiples of 8"), lg::ValueError);
}

TEST_CASE("models: unet_legacy loses channels_last at its custom op, and the guard names it") {
  CleanGuard clean;
  auto model = lg::models::create_model("unet_legacy");
  model->eval();
  lg::manual_seed(6);
  const Tensor x = lg::randn({1, 3, 32, 32});
  auto [y, violations] = recorded_run(*model, x, MemoryFormat::ChannelsLast);
  CHECK(violations >= 1);
  const lg::guard::Report r = lg::guard::report();
  REQUIRE_FALSE(r.violations.empty());
  CHECK(r.violations[0].first.op == "legacy_upsample2x");
  CHECK(r.violations[0].first.module_path == "up3.up");
  CHECK(r.conversion_bytes() > 0);
  lg::guard::Scope scope(lg::guard::Mode::Throw);
  CHECK_THROWS_AS((*model)(x.to(MemoryFormat::ChannelsLast)), lg::LayoutViolation);
}

TEST_CASE("models: names, infos and bad names") {
  CHECK(lg::models::model_infos().size() == 8);
  CHECK(lg::models::model_info("r3d_18").spatial_dims == 3);
  CHECK_THROWS_WITH_AS(lg::models::create_model("vgg16"), doctest::Contains("unknown model \"vgg16\"; known: resnet18"),
                       lg::ValueError);
}

}  // TEST_SUITE

// The doctest assertions of <layoutguard/testing/doctest.h>: each macro on passing input, and
// the explanations behind them on failing input (the text a failed assertion prints).
#include <layoutguard/nn.h>
#include <layoutguard/testing/doctest.h>

#include "support/guard_testing.h"
#include "support/tensor_testing.h"
#include "support/test_ops.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

Tensor relu_like(const Tensor& x) { return keep_layout()({x})[0]; }
Tensor drops_layout(const Tensor& x) { return drop_layout()({x})[0]; }
Tensor wrong_values(const Tensor& x) { return wrong_nhwc()({x})[0]; }

}  // namespace

TEST_SUITE("guard") {

TEST_CASE("layout assertions pass on the layouts they name") {
  CleanGuard clean;
  const Tensor cl = lg::arange(2 * 3 * 4 * 5).to(lg::kFloat32).reshape({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  LG_REQUIRE_CHANNELS_LAST(cl);
  LG_CHECK_CHANNELS_LAST(lg::empty({1, 2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast3d));
  LG_CHECK_MEMORY_FORMAT(cl, MemoryFormat::ChannelsLast);
  LG_CHECK_MEMORY_FORMAT(cl.contiguous(), MemoryFormat::Contiguous);
  LG_CHECK_STRIDES(cl, {60, 1, 15, 3});
  LG_CHECK_PRESERVES_LAYOUT(relu_like, cl);
  LG_CHECK_NO_LAYOUT_VIOLATIONS(relu_like(cl));
  LG_CHECK_LAYOUT_VIOLATION(drops_layout(cl), "test.drop_layout");
  CHECK(doctest::StringMaker<Tensor>::convert(cl) == doctest::String("float32 cpu (2,3,4,5):(60,1,15,3) order=acdb channels_last"));
}

TEST_CASE("the explanations say what was expected and what layout was found") {
  const Tensor cf = lg::zeros({2, 3, 4, 5});
  CHECK(explain_channels_last(cf) == "expected channels_last, got float32 cpu (2,3,4,5):(60,20,5,1) order=abcd contiguous");
  CHECK(explain_channels_last(lg::zeros({2, 3})) ==
        "expected a channels_last 4-D or channels_last_3d 5-D tensor, got float32 cpu (2,3):(3,1) order=ab contiguous");
  CHECK(contains(explain_channels_last(Tensor()), "undefined tensor"));
  CHECK(contains(explain_memory_format(cf, MemoryFormat::ChannelsLast3d), "needs rank 5"));
  CHECK(contains(explain_memory_format(cf, MemoryFormat::Preserve), "not a layout"));
  CHECK(explain_strides(cf, {60, 1, 15, 3}) == "expected strides (60,1,15,3), got float32 cpu (2,3,4,5):(60,20,5,1) order=abcd contiguous");
  CHECK(contains(explain_values_differ(lg::zeros({2}), lg::ones({2})), "flat index 0"));
  CHECK(contains(explain_values_differ(lg::zeros({2}), lg::zeros({3})), "sizes differ"));
}

TEST_CASE("LG_CHECK_PRESERVES_LAYOUT's check fails on a lost layout and on wrong values") {
  CleanGuard clean;
  const Tensor x = lg::arange(2 * 8 * 4 * 4).to(lg::kFloat32).reshape({2, 8, 4, 4});
  CHECK(contains(explain_preserves_layout(drops_layout, x), "on channels-last input the output lost the format"));
  CHECK(contains(explain_preserves_layout(wrong_values, x), "give different values: values differ at flat index 16"));
  CHECK(contains(explain_preserves_layout(relu_like, lg::zeros({2, 3})), "needs a 4-D or 5-D input"));
  CHECK(explain_preserves_layout(relu_like, x).empty());
  // Shapes contiguous in both formats (C = 1; H = W = 1): the channels-last input is restrided
  // by to(), and a lost layout shows in the suggested format.
  for (const Tensor& ambiguous : {lg::randn({2, 1, 4, 5}), lg::randn({2, 3, 1, 1}), lg::randn({2, 1, 3, 4, 5})}) {
    CAPTURE(lg::describe_layout(ambiguous));
    CHECK(contains(explain_preserves_layout(drops_layout, ambiguous), "which suggests contiguous"));
    CHECK(explain_preserves_layout(relu_like, ambiguous).empty());
    // Given already channels-last-strided, the contiguous run is restrided too.
    CHECK(explain_preserves_layout(relu_like, ambiguous.to(lg::testing::channels_last_for(ambiguous))).empty());
  }
  // N x 1 x 1 x 1: both formats have the same strides, so there is nothing to lose or check.
  for (const Tensor& same : {lg::randn({2, 1, 1, 1}), lg::randn({1, 1, 1, 1}), lg::randn({3, 1, 1, 1, 1})}) {
    CAPTURE(lg::describe_layout(same));
    CHECK(explain_preserves_layout(relu_like, same).empty());
  }
  // Non-dense inputs: each run gets a dense copy in its format, so ops returning views pass.
  const auto identity = [](const Tensor& t) { return t; };
  const auto view = [](const Tensor& t) { return t.narrow(0, 0, 1); };
  for (const Tensor& sliced : {lg::randn({2, 3, 8, 8}).slice(3, 0, 8, 2),
                               lg::randn({2, 3, 8, 8}).contiguous(MemoryFormat::ChannelsLast).slice(3, 0, 8, 2)}) {
    CAPTURE(lg::describe_layout(sliced));
    CHECK(explain_preserves_layout(identity, sliced).empty());
    CHECK(explain_preserves_layout(view, sliced).empty());
    CHECK(explain_preserves_layout(relu_like, sliced).empty());
    CHECK(contains(explain_preserves_layout(drops_layout, sliced), "on channels-last input the output lost the format"));
  }
}

TEST_CASE("the violation checks report a missing violation and an unexpected one") {
  CleanGuard clean;
  const Tensor cl = lg::zeros({2, 8, 4, 4}).contiguous(MemoryFormat::ChannelsLast);
  CHECK(explain_violation_raised([&] { relu_like(cl); }).empty());
  CHECK(contains(explain_violation_raised([&] { drops_layout(cl); }), "[layoutguard] test.drop_layout lost channels_last"));
}

TEST_CASE("the conversion budget check counts the statement's copies between layouts") {
  CleanGuard clean;
  const Tensor cl = lg::ones({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);  // 480 bytes
  LG_CHECK_CONVERSIONS_AT_MOST(0, relu_like(cl));
  LG_CHECK_CONVERSIONS_AT_MOST(480, (void)cl.contiguous());
  const std::string why = explain_conversions_at_most(479, [&] { (void)cl.contiguous(); });
  CHECK(why ==
        "expected at most 479 bytes of layout conversions, got 480 in 1 copies:\n"
        "  contiguous: channels_last -> contiguous, 1x, 480 bytes");
  CHECK(explain_conversions_at_most(-1, [] {}) == "[conversions at most] max_bytes -1; required: a byte count >= 0");
  // The layout fallback of a contiguous-only op converts and is flagged: a violation is a failure.
  CHECK(contains(explain_conversions_at_most(1 << 20, [&] { (void)contiguous_only()({cl}); }),
                 "expected no LayoutViolation while counting conversions, got: [layoutguard] test.contiguous_only lost"));
}

TEST_CASE("the conv weight check names each convolution the conversion missed") {
  auto model = std::make_shared<lg::nn::Sequential>();
  model->push_back("stem", std::make_shared<lg::nn::Conv2d>(lg::nn::Conv2dOptions(3, 8, {3})));
  model->push_back("proj", std::make_shared<lg::nn::Conv2d>(lg::nn::Conv2dOptions(8, 4, {1})));  // 1x1: both formats
  model->push_back("up", std::make_shared<lg::nn::ConvTranspose2d>(lg::nn::ConvTranspose2dOptions(4, 4, {2})));
  const std::string why = explain_conv_weights_in_format(*model, MemoryFormat::ChannelsLast);
  CHECK(contains(why, "expected every convolution weight in channels_last (convert_conv2d_weight_memory_format), "
                      "these are not:\n  stem.weight (Conv2d): float32 cpu (8,3,3,3)"));
  CHECK(contains(why, "\n  up.weight (ConvTranspose2d): "));
  CHECK_FALSE(contains(why, "proj.weight"));
  LG_CHECK_CONV_WEIGHTS_IN_FORMAT(*model, MemoryFormat::Contiguous);
  lg::nn::utils::convert_conv2d_weight_memory_format(*model, MemoryFormat::ChannelsLast);
  LG_CHECK_CONV_WEIGHTS_IN_FORMAT(*model, MemoryFormat::ChannelsLast);
  // Nothing to check is a failure, and so is a format that is no layout.
  CHECK(explain_conv_weights_in_format(*model, MemoryFormat::ChannelsLast3d) ==
        "expected convolution weights in channels_last_3d, but the module has no Conv3d or ConvTranspose3d");
  CHECK(contains(explain_conv_weights_in_format(*model, MemoryFormat::Preserve), "'preserve' is not a layout"));
}

TEST_CASE("an in-place op that keeps its tensor's layout raises nothing") {
  CleanGuard clean;
  static const lg::CustomOp scale_ = lg::register_op("test.scale_", lg::LayoutPolicy::Preserve, [](const Tensors& in) {
    in.at(0).fill_(2.0);
    return Tensors{in.at(0)};
  });
  const Tensor cl = lg::zeros({2, 8, 4, 4}).contiguous(MemoryFormat::ChannelsLast);
  LG_CHECK_NO_LAYOUT_VIOLATIONS(scale_({cl}));
  CHECK(values(cl) == std::vector<double>(static_cast<size_t>(cl.numel()), 2.0));
}

}  // TEST_SUITE

// Layout contracts as unit tests, with doctest and the LG_CHECK_* macros of
// <layoutguard/testing/doctest.h>: a failing check prints the tensor's sizes, strides, dim
// order and format, not just "false". Build your own test program the same way.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>
#include <layoutguard/testing/doctest.h>

TEST_CASE("a converted conv weight has PyTorch's channels_last strides") {
  lg::nn::Conv2d conv(lg::nn::Conv2dOptions(8, 4, {3}));
  lg::nn::utils::convert_conv2d_weight_memory_format(conv, lg::MemoryFormat::ChannelsLast);
  LG_CHECK_CHANNELS_LAST(conv.weight);
  LG_CHECK_STRIDES(conv.weight, {72, 1, 24, 8});
}

TEST_CASE("every block of the model keeps channels_last") {
  auto model = lg::models::resnet18();
  model->eval();
  lg::nn::utils::convert_conv2d_weight_memory_format(*model, lg::MemoryFormat::ChannelsLast);
  const lg::Tensor x = lg::randn({1, 3, 64, 64}).to(lg::MemoryFormat::ChannelsLast);
  LG_CHECK_NO_LAYOUT_VIOLATIONS((*model)(x));
  LG_CHECK_CONVERSIONS_AT_MOST(0, (*model)(x));  // and no copy between layouts inside it
  const lg::Tensor features = (*model->layer1)((*model->maxpool)((*model->relu)((*model->bn1)((*model->conv1)(x)))));
  LG_CHECK_MEMORY_FORMAT(features, lg::MemoryFormat::ChannelsLast);
}

TEST_CASE("a layer keeps the format of both layouts") {
  lg::nn::BatchNorm2d bn(lg::nn::BatchNormOptions(3));
  bn.eval();
  LG_CHECK_PRESERVES_LAYOUT([&](const lg::Tensor& t) { return bn(t); }, lg::randn({2, 3, 8, 8}));
}

TEST_CASE("an NCHW-only custom op is caught") {
  const lg::CustomOp op = lg::register_op(
      "example.nchw_only", lg::LayoutPolicy::Preserve, lg::KernelLayouts::ContiguousOnly,
      [](const std::vector<lg::Tensor>& in) { return std::vector<lg::Tensor>{lg::relu(in[0])}; });
  const lg::Tensor x = lg::randn({1, 4, 8, 8}).to(lg::MemoryFormat::ChannelsLast);
  LG_CHECK_LAYOUT_VIOLATION(op({x}), "example.nchw_only");
}

TEST_CASE("x[0].unsqueeze(0) hides channels_last; narrow keeps it") {
  const lg::Tensor batch = lg::randn({4, 3, 8, 8}).to(lg::MemoryFormat::ChannelsLast);
  LG_CHECK_LAYOUT_VIOLATION((void)batch.select(0, 2).unsqueeze(0), "unsqueeze");
  LG_CHECK_NO_LAYOUT_VIOLATIONS((void)batch.narrow(0, 2, 1));
}

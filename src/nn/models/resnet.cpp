// torchvision.models.resnet: BasicBlock, Bottleneck (with ResNeXt's groups), ResNet.
#include <layoutguard/models.h>

#include <layoutguard/pointwise.h>

#include "core/checked_arith.h"
#include "model_init.h"

namespace lg::models {
namespace {

using nn::BatchNorm2d;
using nn::BatchNormOptions;
using nn::Conv2d;
using nn::Conv2dOptions;

std::shared_ptr<Conv2d> conv(int64_t in, int64_t out, int64_t k, int64_t stride = 1, int64_t groups = 1) {
  return std::make_shared<Conv2d>(
      Conv2dOptions(in, out, {k}).stride({stride}).padding({k / 2}).groups(groups).bias(false));
}
std::shared_ptr<BatchNorm2d> bn(int64_t c) { return std::make_shared<BatchNorm2d>(BatchNormOptions(c)); }

// The residual branch's downsample: 1x1 conv + BatchNorm, "downsample.0" and "downsample.1".
std::shared_ptr<nn::Sequential> downsample(int64_t in, int64_t out, int64_t stride) {
  auto s = std::make_shared<nn::Sequential>();
  s->push_back(conv(in, out, 1, stride));
  s->push_back(bn(out));
  return s;
}

class BasicBlock : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlock(int64_t inplanes, int64_t planes, int64_t stride, int64_t, int64_t) : Module("BasicBlock") {
    conv1 = register_module("conv1", conv(inplanes, planes, 3, stride));
    bn1 = register_module("bn1", bn(planes));
    relu = register_module("relu", std::make_shared<nn::ReLU>(true));
    conv2 = register_module("conv2", conv(planes, planes, 3));
    bn2 = register_module("bn2", bn(planes));
    if (stride != 1 || inplanes != planes) ds = register_module("downsample", downsample(inplanes, planes, stride));
  }
  Tensor forward(const Tensor& x) override {
    Tensor out = (*relu)((*bn1)((*conv1)(x)));
    out = (*bn2)((*conv2)(out));
    add_(out, ds ? (*ds)(x) : x);  // torchvision: out += identity
    return (*relu)(out);
  }

 private:
  std::shared_ptr<Conv2d> conv1, conv2;
  std::shared_ptr<BatchNorm2d> bn1, bn2;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::Sequential> ds;
};

class Bottleneck : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;
  Bottleneck(int64_t inplanes, int64_t planes, int64_t stride, int64_t groups, int64_t base_width)
      : Module("Bottleneck") {
    // torchvision's int(planes * (base_width / 64.)) * groups, in integers: planes is a multiple
    // of 64 here, and ResNet checked the widest product.
    const int64_t width = planes / 64 * base_width * groups;
    conv1 = register_module("conv1", conv(inplanes, width, 1));
    bn1 = register_module("bn1", bn(width));
    conv2 = register_module("conv2", conv(width, width, 3, stride, groups));
    bn2 = register_module("bn2", bn(width));
    conv3 = register_module("conv3", conv(width, planes * kExpansion, 1));
    bn3 = register_module("bn3", bn(planes * kExpansion));
    relu = register_module("relu", std::make_shared<nn::ReLU>(true));
    if (stride != 1 || inplanes != planes * kExpansion)
      ds = register_module("downsample", downsample(inplanes, planes * kExpansion, stride));
  }
  Tensor forward(const Tensor& x) override {
    Tensor out = (*relu)((*bn1)((*conv1)(x)));
    out = (*relu)((*bn2)((*conv2)(out)));
    out = (*bn3)((*conv3)(out));
    add_(out, ds ? (*ds)(x) : x);  // torchvision: out += identity
    return (*relu)(out);
  }

 private:
  std::shared_ptr<Conv2d> conv1, conv2, conv3;
  std::shared_ptr<BatchNorm2d> bn1, bn2, bn3;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::Sequential> ds;
};

template <class Block>
std::shared_ptr<nn::Sequential> make_layer(int64_t& inplanes, int64_t planes, int64_t blocks, int64_t stride,
                                           int64_t groups, int64_t base_width) {
  auto layer = std::make_shared<nn::Sequential>();
  layer->push_back(std::make_shared<Block>(inplanes, planes, stride, groups, base_width));
  inplanes = planes * Block::kExpansion;
  for (int64_t i = 1; i < blocks; ++i)
    layer->push_back(std::make_shared<Block>(inplanes, planes, 1, groups, base_width));
  return layer;
}

}  // namespace

ResNet::ResNet(std::string_view block, std::vector<int64_t> layers, int64_t num_classes, int64_t groups,
               int64_t width_per_group)
    : Module("ResNet") {
  nn::detail::require(block == "basic" || block == "bottleneck", "ResNet",
                      "block must be \"basic\" or \"bottleneck\", got \"" + std::string(block) + "\"");
  nn::detail::require(layers.size() == 4, "ResNet", "layers must have 4 entries, got " + to_string(layers));
  nn::detail::require(num_classes > 0, "ResNet", "num_classes must be positive");
  nn::detail::require(block == "bottleneck" || (groups == 1 && width_per_group == 64), "ResNet",
                      "the basic block supports only groups=1 and width_per_group=64, got " +
                          std::to_string(groups) + " and " + std::to_string(width_per_group));
  nn::detail::require(groups > 0 && width_per_group > 0, "ResNet", "groups and width_per_group must be positive");
  // The widest bottleneck (planes 512: width 8 * width_per_group * groups) must be countable
  // before any block computes it.
  (void)lg::detail::checked_mul(lg::detail::checked_mul(8, width_per_group, "[nn::ResNet] width_per_group ", width_per_group,
                                                        " makes a bottleneck width"),
                                groups, "[nn::ResNet] width_per_group ", width_per_group, " times groups ", groups,
                                " makes a bottleneck width");
  int64_t inplanes = 64;
  conv1 = register_module("conv1", std::make_shared<Conv2d>(Conv2dOptions(3, 64, {7}).stride({2}).padding({3}).bias(false)));
  bn1 = register_module("bn1", bn(64));
  relu = register_module("relu", std::make_shared<nn::ReLU>(true));
  maxpool = register_module("maxpool", std::make_shared<nn::MaxPool2d>(nn::MaxPoolOptions({3}).stride({2}).padding({1})));
  const bool basic = block == "basic";
  auto make = [&](int64_t planes, int64_t blocks, int64_t stride) {
    return basic ? make_layer<BasicBlock>(inplanes, planes, blocks, stride, groups, width_per_group)
                 : make_layer<Bottleneck>(inplanes, planes, blocks, stride, groups, width_per_group);
  };
  layer1 = register_module("layer1", make(64, layers[0], 1));
  layer2 = register_module("layer2", make(128, layers[1], 2));
  layer3 = register_module("layer3", make(256, layers[2], 2));
  layer4 = register_module("layer4", make(512, layers[3], 2));
  avgpool = register_module("avgpool", std::make_shared<nn::AdaptiveAvgPool2d>(std::vector<int64_t>{1, 1}));
  fc = register_module("fc", std::make_shared<nn::Linear>(nn::LinearOptions(inplanes, num_classes)));
  detail::kaiming_normal<Conv2d>(*this, detail::Fan::Out);
}

Tensor ResNet::forward(const Tensor& input) {
  Tensor x = (*maxpool)((*relu)((*bn1)((*conv1)(input))));
  x = (*layer4)((*layer3)((*layer2)((*layer1)(x))));
  return (*fc)((*avgpool)(x).flatten(1));
}

std::shared_ptr<ResNet> resnet18(int64_t num_classes) {
  return std::make_shared<ResNet>("basic", std::vector<int64_t>{2, 2, 2, 2}, num_classes);
}
std::shared_ptr<ResNet> resnet50(int64_t num_classes) {
  return std::make_shared<ResNet>("bottleneck", std::vector<int64_t>{3, 4, 6, 3}, num_classes);
}
std::shared_ptr<ResNet> resnext50_32x4d(int64_t num_classes) {
  return std::make_shared<ResNet>("bottleneck", std::vector<int64_t>{3, 4, 6, 3}, num_classes, 32, 4);
}

}  // namespace lg::models

// torchvision.models.densenet: dense blocks that concatenate every earlier feature map.
#include <layoutguard/models.h>

#include <layoutguard/joining.h>
#include <layoutguard/pointwise.h>
#include <layoutguard/pooling.h>

#include "core/checked_arith.h"
#include "model_init.h"

namespace lg::models {
namespace {

std::shared_ptr<nn::BatchNorm2d> bn(int64_t c) { return std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions(c)); }
std::shared_ptr<nn::Conv2d> conv(int64_t in, int64_t out, int64_t k) {
  return std::make_shared<nn::Conv2d>(nn::Conv2dOptions(in, out, {k}).padding({k / 2}).bias(false));
}

// norm1, relu1, conv1 (1x1 bottleneck), norm2, relu2, conv2 (3x3); input: the concatenation.
class DenseLayer : public nn::Module {
 public:
  DenseLayer(int64_t in, int64_t growth, int64_t bn_size) : Module("_DenseLayer") {
    norm1 = register_module("norm1", bn(in));
    relu1 = register_module("relu1", std::make_shared<nn::ReLU>(true));
    conv1 = register_module("conv1", conv(in, bn_size * growth, 1));
    norm2 = register_module("norm2", bn(bn_size * growth));
    relu2 = register_module("relu2", std::make_shared<nn::ReLU>(true));
    conv2 = register_module("conv2", conv(bn_size * growth, growth, 3));
  }
  Tensor forward(const Tensor& x) override {
    return (*conv2)((*relu2)((*norm2)((*conv1)((*relu1)((*norm1)(x))))));
  }

 private:
  std::shared_ptr<nn::BatchNorm2d> norm1, norm2;
  std::shared_ptr<nn::ReLU> relu1, relu2;
  std::shared_ptr<nn::Conv2d> conv1, conv2;
};

class DenseBlock : public nn::Module {
 public:
  DenseBlock(int64_t layers, int64_t in, int64_t growth, int64_t bn_size) : Module("_DenseBlock") {
    for (int64_t i = 0; i < layers; ++i)
      layers_.push_back(register_module("denselayer" + std::to_string(i + 1),
                                        std::make_shared<DenseLayer>(in + i * growth, growth, bn_size)));
  }
  Tensor forward(const Tensor& x) override {
    std::vector<Tensor> maps{x};
    for (auto& layer : layers_) maps.push_back((*layer)(cat(maps, 1)));
    return cat(maps, 1);
  }

 private:
  std::vector<std::shared_ptr<DenseLayer>> layers_;
};

std::shared_ptr<nn::Sequential> transition(int64_t in, int64_t out) {
  auto t = std::make_shared<nn::Sequential>();
  t->push_back("norm", bn(in));
  t->push_back("relu", std::make_shared<nn::ReLU>(true));
  t->push_back("conv", conv(in, out, 1));
  t->push_back("pool", std::make_shared<nn::AvgPool2d>(nn::AvgPoolOptions({2}).stride({2})));
  return t;
}

}  // namespace

DenseNet::DenseNet(int64_t growth_rate, std::vector<int64_t> block_config, int64_t num_init_features,
                   int64_t bn_size, int64_t num_classes)
    : Module("DenseNet") {
  nn::detail::require(num_classes > 0 && growth_rate > 0 && bn_size > 0 && !block_config.empty(), "DenseNet",
                      "growth_rate, bn_size and num_classes must be positive and block_config non-empty");
  for (int64_t layers : block_config)
    nn::detail::require(layers > 0, "DenseNet",
                        "every block_config entry must be a positive layer count, got " + to_string(IntArrayRef(block_config)));
  nn::detail::require(num_init_features > 0, "DenseNet",
                      "num_init_features must be positive, got " + std::to_string(num_init_features));
  // Every channel count the layers below compute, counted first in checked arithmetic.
  (void)lg::detail::checked_mul(bn_size, growth_rate, "[nn::DenseNet] bn_size ", bn_size, " times growth_rate ",
                                growth_rate);
  int64_t channels = num_init_features;
  for (size_t i = 0; i < block_config.size(); ++i) {
    channels = lg::detail::checked_add(
        channels,
        lg::detail::checked_mul(block_config[i], growth_rate, "[nn::DenseNet] block ", i + 1, " of ", block_config[i],
                                " layers times growth_rate ", growth_rate),
        "[nn::DenseNet] the channels after block ", i + 1);
    if (i + 1 != block_config.size()) channels /= 2;  // each transition halves them
  }
  features = register_module("features", std::make_shared<nn::Sequential>());
  features->push_back("conv0", std::make_shared<nn::Conv2d>(
                                   nn::Conv2dOptions(3, num_init_features, {7}).stride({2}).padding({3}).bias(false)));
  features->push_back("norm0", bn(num_init_features));
  features->push_back("relu0", std::make_shared<nn::ReLU>(true));
  features->push_back("pool0", std::make_shared<nn::MaxPool2d>(nn::MaxPoolOptions({3}).stride({2}).padding({1})));
  int64_t c = num_init_features;
  for (size_t i = 0; i < block_config.size(); ++i) {
    features->push_back("denseblock" + std::to_string(i + 1),
                        std::make_shared<DenseBlock>(block_config[i], c, growth_rate, bn_size));
    c += block_config[i] * growth_rate;
    if (i + 1 != block_config.size()) {
      features->push_back("transition" + std::to_string(i + 1), transition(c, c / 2));
      c /= 2;
    }
  }
  features->push_back("norm5", bn(c));
  classifier = register_module("classifier", std::make_shared<nn::Linear>(nn::LinearOptions(c, num_classes)));
  detail::kaiming_normal<nn::Conv2d>(*this, detail::Fan::In);
  classifier->bias.zero_();
}

Tensor DenseNet::forward(const Tensor& x) {
  return (*classifier)(adaptive_avg_pool2d(relu_((*features)(x)), {1, 1}).flatten(1));  // torchvision: inplace
}

std::shared_ptr<DenseNet> densenet121(int64_t num_classes) {
  return std::make_shared<DenseNet>(32, std::vector<int64_t>{6, 12, 24, 16}, 64, 4, num_classes);
}

}  // namespace lg::models

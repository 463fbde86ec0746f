// torchvision.models.video.r3d_18: a 3-D ResNet on (N, C, T, H, W) clips.
#include <layoutguard/models.h>

#include <layoutguard/pointwise.h>

#include "model_init.h"

namespace lg::models {
namespace {

std::shared_ptr<nn::Conv3d> conv3(int64_t in, int64_t out, std::vector<int64_t> k, std::vector<int64_t> stride,
                                  std::vector<int64_t> padding) {
  return std::make_shared<nn::Conv3d>(
      nn::Conv3dOptions(in, out, std::move(k)).stride(std::move(stride)).padding(std::move(padding)).bias(false));
}
std::shared_ptr<nn::BatchNorm3d> bn(int64_t c) { return std::make_shared<nn::BatchNorm3d>(nn::BatchNormOptions(c)); }

// conv1 = ("0" Conv3DSimple, "1" BatchNorm3d, "2" ReLU); conv2 = ("0" Conv3DSimple,
// "1" BatchNorm3d); downsample = ("0" 1x1x1 Conv3d, "1" BatchNorm3d).
class VideoBasicBlock : public nn::Module {
 public:
  VideoBasicBlock(int64_t in, int64_t planes, int64_t stride) : Module("BasicBlock") {
    conv1 = register_module("conv1", std::make_shared<nn::Sequential>());
    conv1->push_back(conv3(in, planes, {3}, {stride}, {1}));
    conv1->push_back(bn(planes));
    conv1->push_back(std::make_shared<nn::ReLU>(true));
    conv2 = register_module("conv2", std::make_shared<nn::Sequential>());
    conv2->push_back(conv3(planes, planes, {3}, {1}, {1}));
    conv2->push_back(bn(planes));
    relu = register_module("relu", std::make_shared<nn::ReLU>(true));
    if (stride != 1 || in != planes) {
      ds = register_module("downsample", std::make_shared<nn::Sequential>());
      ds->push_back(conv3(in, planes, {1}, {stride}, {0}));
      ds->push_back(bn(planes));
    }
  }
  Tensor forward(const Tensor& x) override {
    Tensor out = (*conv2)((*conv1)(x));
    add_(out, ds ? (*ds)(x) : x);  // torchvision: out += residual
    return (*relu)(out);
  }

 private:
  std::shared_ptr<nn::Sequential> conv1, conv2, ds;
  std::shared_ptr<nn::ReLU> relu;
};

}  // namespace

VideoResNet::VideoResNet(std::vector<int64_t> layers, int64_t num_classes) : Module("VideoResNet") {
  nn::detail::require(layers.size() == 4 && num_classes > 0, "VideoResNet",
                      "layers must have 4 entries and num_classes be positive");
  stem = register_module("stem", std::make_shared<nn::Sequential>());
  stem->push_back(conv3(3, 64, {3, 7, 7}, {1, 2, 2}, {1, 3, 3}));
  stem->push_back(bn(64));
  stem->push_back(std::make_shared<nn::ReLU>(true));
  int64_t in = 64;
  auto make = [&](int64_t planes, int64_t blocks, int64_t stride) {
    auto layer = std::make_shared<nn::Sequential>();
    layer->push_back(std::make_shared<VideoBasicBlock>(in, planes, stride));
    in = planes;
    for (int64_t i = 1; i < blocks; ++i) layer->push_back(std::make_shared<VideoBasicBlock>(in, planes, 1));
    return layer;
  };
  layer1 = register_module("layer1", make(64, layers[0], 1));
  layer2 = register_module("layer2", make(128, layers[1], 2));
  layer3 = register_module("layer3", make(256, layers[2], 2));
  layer4 = register_module("layer4", make(512, layers[3], 2));
  avgpool = register_module("avgpool", std::make_shared<nn::AdaptiveAvgPool3d>(std::vector<int64_t>{1, 1, 1}));
  fc = register_module("fc", std::make_shared<nn::Linear>(nn::LinearOptions(512, num_classes)));
  detail::kaiming_normal<nn::Conv3d>(*this, detail::Fan::Out);
  fc->weight = nn::detail::normal(fc->weight.sizes(), 0.01);
  fc->bias.zero_();
}

Tensor VideoResNet::forward(const Tensor& input) {
  Tensor x = (*layer4)((*layer3)((*layer2)((*layer1)((*stem)(input)))));
  return (*fc)((*avgpool)(x).flatten(1));
}

namespace video {
std::shared_ptr<VideoResNet> r3d_18(int64_t num_classes) {
  return std::make_shared<VideoResNet>(std::vector<int64_t>{2, 2, 2, 2}, num_classes);
}
}  // namespace video

}  // namespace lg::models

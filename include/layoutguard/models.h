// lg::models: torchvision's architectures with torchvision's state-dict key names, so a
// checkpoint exported from torchvision (docs/models.md) loads with load_state_dict(strict).
// Random initialisation follows torchvision (kaiming-normal convolutions, unit BatchNorm);
// forward() is inference-ready after eval().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <layoutguard/nn/activation.h>
#include <layoutguard/nn/basic.h>
#include <layoutguard/nn/conv.h>
#include <layoutguard/nn/normalization.h>
#include <layoutguard/nn/pooling.h>

namespace lg::models {

// torchvision.models.resnet: conv1, bn1, relu, maxpool, layer1..layer4, avgpool, fc.
class ResNet : public nn::Module {
 public:
  // block: "basic" (ResNet-18/34) or "bottleneck" (ResNet-50 and up, ResNeXt).
  ResNet(std::string_view block, std::vector<int64_t> layers, int64_t num_classes, int64_t groups = 1,
         int64_t width_per_group = 64);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::MaxPool2d> maxpool;
  std::shared_ptr<nn::Sequential> layer1, layer2, layer3, layer4;
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<nn::Linear> fc;
};

// torchvision.models.mobilenet_v2: features.0..18, classifier (Dropout, Linear).
class MobileNetV2 : public nn::Module {
 public:
  explicit MobileNetV2(int64_t num_classes);
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<nn::Sequential> features, classifier;
};

// torchvision.models.densenet: features (conv0 ... denseblock4, norm5), classifier.
class DenseNet : public nn::Module {
 public:
  DenseNet(int64_t growth_rate, std::vector<int64_t> block_config, int64_t num_init_features, int64_t bn_size,
           int64_t num_classes);
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<nn::Sequential> features;
  std::shared_ptr<nn::Linear> classifier;
};

// torchvision.models.video.resnet (VideoResNet): stem, layer1..layer4, avgpool, fc. 5-D input
// (N, C, T, H, W); its format is channels_last_3d.
class VideoResNet : public nn::Module {
 public:
  VideoResNet(std::vector<int64_t> layers, int64_t num_classes);
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<nn::Sequential> stem, layer1, layer2, layer3, layer4;
  std::shared_ptr<nn::AdaptiveAvgPool3d> avgpool;
  std::shared_ptr<nn::Linear> fc;
};

struct UNetOptions {
  int64_t in_channels = 3;
  int64_t num_classes = 2;
  int64_t base_channels = 32;
  // Runs the last decoder stage's upsample through a custom op that only has a contiguous
  // kernel: the layout loss layoutguard exists to find (the `unet_legacy` demo model).
  bool contiguous_only_upsample = false;
};

// A U-Net: inc, down1..down3 (max-pool + double conv), up1, up2 (ConvTranspose2d, skip
// connection through cat, double conv), up3 (bilinear upsample instead), outc (1x1 conv).
// Height and width must be multiples of 8.
class UNet : public nn::Module {
 public:
  explicit UNet(UNetOptions options = {});
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<nn::Module> inc, down1, down2, down3, up1, up2, up3, outc;

 private:
  UNetOptions options_;
};

std::shared_ptr<ResNet> resnet18(int64_t num_classes = 1000);
std::shared_ptr<ResNet> resnet50(int64_t num_classes = 1000);
std::shared_ptr<ResNet> resnext50_32x4d(int64_t num_classes = 1000);
std::shared_ptr<MobileNetV2> mobilenet_v2(int64_t num_classes = 1000);
std::shared_ptr<DenseNet> densenet121(int64_t num_classes = 1000);
namespace video {
std::shared_ptr<VideoResNet> r3d_18(int64_t num_classes = 400);
}
std::shared_ptr<UNet> unet(UNetOptions options = {});

// ---- By name (the CLI and the benchmarks) ----

struct ModelInfo {
  std::string_view name;         // "resnet50"
  int spatial_dims;              // 2, or 3 for r3d_18 (input rank spatial_dims + 2)
  std::vector<int64_t> size;     // default input size after (N, C): {224, 224}, {16, 112, 112}
  std::string_view description;
};

// resnet18 resnet50 resnext50_32x4d mobilenet_v2 densenet121 r3d_18 unet, then the demo model
// unet_legacy (the UNet with contiguous_only_upsample).
const std::vector<ModelInfo>& model_infos();
// ValueError listing the known names for an unknown one.
const ModelInfo& model_info(std::string_view name);
std::shared_ptr<nn::Module> create_model(std::string_view name);

}  // namespace lg::models

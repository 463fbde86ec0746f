// The model zoo by name, for the CLI and the benchmarks.
#include <layoutguard/models.h>

#include <layoutguard/error.h>

namespace lg::models {

const std::vector<ModelInfo>& model_infos() {
  static const std::vector<ModelInfo> infos = {
      {"resnet18", 2, {224, 224}, "torchvision ResNet-18"},
      {"resnet50", 2, {224, 224}, "torchvision ResNet-50"},
      {"resnext50_32x4d", 2, {224, 224}, "torchvision ResNeXt-50 32x4d (grouped 3x3 convolutions)"},
      {"mobilenet_v2", 2, {224, 224}, "torchvision MobileNetV2 (depthwise convolutions, ReLU6)"},
      {"densenet121", 2, {224, 224}, "torchvision DenseNet-121 (cat of every earlier map)"},
      {"r3d_18", 3, {16, 112, 112}, "torchvision video R3D-18 (3-D convolutions, channels_last_3d)"},
      {"unet", 2, {224, 224}, "U-Net: ConvTranspose2d, bilinear upsample, skip connections through cat"},
      {"unet_legacy", 2, {224, 224},
       "demo: the U-Net with a custom contiguous-only upsample op (loses channels_last at up3.up)"},
  };
  return infos;
}

const ModelInfo& model_info(std::string_view name) {
  for (const ModelInfo& m : model_infos())
    if (m.name == name) return m;
  std::string known;
  for (const ModelInfo& m : model_infos()) known += (known.empty() ? "" : ", ") + std::string(m.name);
  throw ValueError("[models] unknown model \"" + std::string(name) + "\"; known: " + known);
}

std::shared_ptr<nn::Module> create_model(std::string_view name) {
  const ModelInfo& info = model_info(name);
  if (info.name == "resnet18") return resnet18();
  if (info.name == "resnet50") return resnet50();
  if (info.name == "resnext50_32x4d") return resnext50_32x4d();
  if (info.name == "mobilenet_v2") return mobilenet_v2();
  if (info.name == "densenet121") return densenet121();
  if (info.name == "r3d_18") return video::r3d_18();
  if (info.name == "unet") return unet();
  if (info.name == "unet_legacy") {
    UNetOptions legacy;
    legacy.contiguous_only_upsample = true;
    return unet(legacy);
  }
  throw NotImplementedError("[models] \"" + std::string(name) + "\" is listed but has no factory");
}

}  // namespace lg::models

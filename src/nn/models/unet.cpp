// A U-Net for segmentation: the encoder halves the resolution three times, the decoder doubles
// it back and concatenates the encoder's maps at each scale (the skip connections).
#include <layoutguard/models.h>

#include <optional>

#include <layoutguard/custom_op.h>
#include <layoutguard/hooks.h>
#include <layoutguard/joining.h>
#include <layoutguard/resampling.h>

#include "model_init.h"

namespace lg::models {
namespace {

// "double_conv": (conv3x3 no bias, BatchNorm, ReLU) twice.
class DoubleConv : public nn::Module {
 public:
  DoubleConv(int64_t in, int64_t out) : Module("DoubleConv") {
    seq_ = register_module("double_conv", std::make_shared<nn::Sequential>());
    for (int64_t c : {in, out}) {
      seq_->push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions(c, out, {3}).padding({1}).bias(false)));
      seq_->push_back(std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions(out)));
      seq_->push_back(std::make_shared<nn::ReLU>(true));
    }
  }
  Tensor forward(const Tensor& x) override { return (*seq_)(x); }

 private:
  std::shared_ptr<nn::Sequential> seq_;
};

// "maxpool_conv": MaxPool2d(2) then DoubleConv.
class Down : public nn::Module {
 public:
  Down(int64_t in, int64_t out) : Module("Down") {
    seq_ = register_module("maxpool_conv", std::make_shared<nn::Sequential>());
    seq_->push_back(std::make_shared<nn::MaxPool2d>(nn::MaxPoolOptions({2})));
    seq_->push_back(std::make_shared<DoubleConv>(in, out));
  }
  Tensor forward(const Tensor& x) override { return (*seq_)(x); }

 private:
  std::shared_ptr<nn::Sequential> seq_;
};

// A bilinear 2x upsample as a third-party op might ship it: registered through the custom-op
// API with a contiguous-only kernel. The dispatcher feeds it NCHW copies and its output stays
// NCHW -- under the guard, a violation at this op's module path.
// The one body serves both devices (it calls public ops), so the demo shows the same violation
// on CUDA.
const CustomOp& legacy_upsample_op() {
  static const auto body = [](const std::vector<Tensor>& in) {
    const Tensor& x = in.at(0);
    return std::vector<Tensor>{upsample_bilinear2d(x, {x.size(2) * 2, x.size(3) * 2}, true)};
  };
  static const CustomOp op =
      register_op("legacy_upsample2x", LayoutPolicy::Preserve, KernelLayouts::ContiguousOnly, body, body);
  return op;
}

// The decoder stage: "up" (ConvTranspose2d 2x2 stride 2, or a bilinear Upsample), then the skip
// connection through cat, then "conv" (DoubleConv).
class Up : public nn::Module {
 public:
  enum class Kind { Transposed, Bilinear, LegacyBilinear };
  Up(int64_t in, int64_t skip, int64_t out, Kind kind) : Module("Up"), kind_(kind) {
    int64_t up_channels = in;
    if (kind == Kind::Transposed) {
      up_channels = in / 2;
      up_ = register_module("up", std::make_shared<nn::ConvTranspose2d>(
                                      nn::ConvTranspose2dOptions(in, up_channels, {2}).stride({2})));
    } else if (kind == Kind::Bilinear) {
      up_ = register_module("up", std::make_shared<nn::Upsample>(
                                      nn::UpsampleOptions().scale_factor({2.0, 2.0}).mode("bilinear").align_corners(true)));
    }
    conv_ = register_module("conv", std::make_shared<DoubleConv>(up_channels + skip, out));
  }
  Tensor forward(const Tensor&) override {
    throw NotImplementedError("[models::UNet] an Up stage takes (x, skip); call it through UNet::forward");
  }
  Tensor operator()(const Tensor& x, const Tensor& skip) {
    std::optional<guard::ModuleScope> scope;
    if (!name().empty()) scope.emplace(name());
    Tensor up;
    if (kind_ == Kind::LegacyBilinear) {
      guard::ModuleScope inner("up");
      up = legacy_upsample_op()({x}).at(0);
    } else {
      up = (*up_)(x);
    }
    return (*conv_)(cat({skip, up}, 1));
  }

 private:
  Kind kind_;
  std::shared_ptr<nn::Module> up_;
  std::shared_ptr<DoubleConv> conv_;
};

}  // namespace

UNet::UNet(UNetOptions o) : Module("UNet"), options_(o) {
  nn::detail::require(o.in_channels > 0 && o.num_classes > 0 && o.base_channels > 0, "UNet",
                      "in_channels, num_classes and base_channels must be positive");
  const int64_t b = o.base_channels;
  inc = register_module("inc", std::make_shared<DoubleConv>(o.in_channels, b));
  down1 = register_module("down1", std::make_shared<Down>(b, 2 * b));
  down2 = register_module("down2", std::make_shared<Down>(2 * b, 4 * b));
  down3 = register_module("down3", std::make_shared<Down>(4 * b, 8 * b));
  up1 = register_module("up1", std::make_shared<Up>(8 * b, 4 * b, 4 * b, Up::Kind::Transposed));
  up2 = register_module("up2", std::make_shared<Up>(4 * b, 2 * b, 2 * b, Up::Kind::Transposed));
  up3 = register_module("up3", std::make_shared<Up>(2 * b, b, b,
                                                    o.contiguous_only_upsample ? Up::Kind::LegacyBilinear
                                                                               : Up::Kind::Bilinear));
  outc = register_module("outc", std::make_shared<nn::Conv2d>(nn::Conv2dOptions(b, o.num_classes, {1})));
  detail::kaiming_normal<nn::Conv2d, nn::ConvTranspose2d>(*this, detail::Fan::Out);
}

Tensor UNet::forward(const Tensor& x) {
  if (x.dim() != 4 || x.size(2) % 8 != 0 || x.size(3) % 8 != 0)
    throw ValueError("[models::UNet] expected (N, C, H, W) input with H and W multiples of 8, got sizes " +
                     to_string(x.sizes()));
  Tensor x1 = (*inc)(x);
  Tensor x2 = (*down1)(x1);
  Tensor x3 = (*down2)(x2);
  Tensor x4 = (*down3)(x3);
  // The stages are public (and reassignable) as nn::Module; only an Up stage takes (x, skip).
  auto stage = [](const std::shared_ptr<nn::Module>& m, const char* name) {
    auto up = std::dynamic_pointer_cast<Up>(m);
    if (!up) throw ValueError(std::string("[models::UNet] ") + name + " must be a decoder (Up) stage");
    return up;
  };
  Tensor y = (*stage(up1, "up1"))(x4, x3);
  y = (*stage(up2, "up2"))(y, x2);
  y = (*stage(up3, "up3"))(y, x1);
  return (*outc)(y);
}

std::shared_ptr<UNet> unet(UNetOptions options) { return std::make_shared<UNet>(options); }

}  // namespace lg::models

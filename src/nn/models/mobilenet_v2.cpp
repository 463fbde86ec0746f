// torchvision.models.mobilenet_v2 (width 1.0): inverted residual blocks with ReLU6.
#include <layoutguard/models.h>

#include <layoutguard/pointwise.h>
#include <layoutguard/pooling.h>

#include "model_init.h"

namespace lg::models {
namespace {

// Conv2dNormActivation: "0" conv (no bias), "1" BatchNorm2d, "2" ReLU6.
std::shared_ptr<nn::Sequential> conv_bn_relu6(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t groups = 1) {
  auto s = std::make_shared<nn::Sequential>();
  s->push_back(std::make_shared<nn::Conv2d>(
      nn::Conv2dOptions(in, out, {k}).stride({stride}).padding({(k - 1) / 2}).groups(groups).bias(false)));
  s->push_back(std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions(out)));
  s->push_back(std::make_shared<nn::ReLU6>(true));
  return s;
}

class InvertedResidual : public nn::Module {
 public:
  InvertedResidual(int64_t in, int64_t out, int64_t stride, int64_t expand_ratio) : Module("InvertedResidual") {
    const int64_t hidden = int64_t(std::lround(double(in * expand_ratio)));
    residual_ = stride == 1 && in == out;
    conv_ = register_module("conv", std::make_shared<nn::Sequential>());
    if (expand_ratio != 1) conv_->push_back(conv_bn_relu6(in, hidden, 1, 1));
    conv_->push_back(conv_bn_relu6(hidden, hidden, 3, stride, hidden));  // depthwise
    conv_->push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions(hidden, out, {1}).bias(false)));
    conv_->push_back(std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions(out)));
  }
  Tensor forward(const Tensor& x) override { return residual_ ? add(x, (*conv_)(x)) : (*conv_)(x); }

 private:
  bool residual_ = false;
  std::shared_ptr<nn::Sequential> conv_;
};

}  // namespace

MobileNetV2::MobileNetV2(int64_t num_classes) : Module("MobileNetV2") {
  nn::detail::require(num_classes > 0, "MobileNetV2", "num_classes must be positive");
  struct Stage {
    int64_t t, c, n, s;
  };
  constexpr Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                               {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  features = register_module("features", std::make_shared<nn::Sequential>());
  int64_t channels = 32;
  features->push_back(conv_bn_relu6(3, channels, 3, 2));
  for (const Stage& st : kStages)
    for (int64_t i = 0; i < st.n; ++i) {
      features->push_back(std::make_shared<InvertedResidual>(channels, st.c, i == 0 ? st.s : 1, st.t));
      channels = st.c;
    }
  features->push_back(conv_bn_relu6(channels, 1280, 1, 1));
  classifier = register_module("classifier", std::make_shared<nn::Sequential>());
  classifier->push_back(std::make_shared<nn::Dropout>(0.2));
  auto fc = classifier->push_back(std::make_shared<nn::Linear>(nn::LinearOptions(1280, num_classes)));
  detail::kaiming_normal<nn::Conv2d>(*this, detail::Fan::Out);
  fc->weight = nn::detail::normal(fc->weight.sizes(), 0.01);
  fc->bias.zero_();
}

Tensor MobileNetV2::forward(const Tensor& x) {
  return (*classifier)(adaptive_avg_pool2d((*features)(x), {1, 1}).flatten(1));
}

std::shared_ptr<MobileNetV2> mobilenet_v2(int64_t num_classes) { return std::make_shared<MobileNetV2>(num_classes); }

}  // namespace lg::models

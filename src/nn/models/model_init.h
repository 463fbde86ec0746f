// torchvision's re-initialisation of convolution weights, shared by every model.
#pragma once

#include <layoutguard/nn/conv.h>

#include "../init.h"

namespace lg::models::detail {

enum class Fan { In, Out };

// kaiming_normal_(mode=fan, nonlinearity="relu"): std = sqrt(2 / fan), fan_out = weight.size(0)
// x kernel, fan_in = weight.size(1) x kernel; zero biases. Keeps activations of deep random
// models in range. torchvision uses fan_out for ResNet, MobileNetV2 and the video ResNets,
// fan_in (the default) for DenseNet.
template <class... Convs>
void kaiming_normal(nn::Module& root, Fan mode) {
  auto init = [mode](auto* conv) {
    if (!conv) return false;
    const Tensor& w = conv->weight;
    int64_t fan = w.size(mode == Fan::Out ? 0 : 1);
    for (int64_t d = 2; d < w.dim(); ++d) fan *= w.size(d);
    conv->weight = nn::detail::normal(w.sizes(), std::sqrt(2.0 / double(fan)));
    if (conv->bias.defined()) conv->bias.zero_();
    return true;
  };
  for (auto& [name, m] : root.named_modules()) (init(dynamic_cast<Convs*>(m.get())) || ...);
}

}  // namespace lg::models::detail

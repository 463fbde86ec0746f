// torchvision's re-initialisation of convolution weights, shared by every model.
#pragma once

#include <layoutguard/nn/conv.h>

#include "../init.h"

namespace lg::models::detail {

// kaiming_normal_(mode="fan_out", nonlinearity="relu"): std = sqrt(2 / (out_channels * k...)),
// zero biases. Keeps activations of deep random models in range, as in torchvision.
template <class... Convs>
void kaiming_fan_out(nn::Module& root) {
  auto init = [](auto* conv) {
    if (!conv) return false;
    const Tensor& w = conv->weight;
    int64_t fan_out = w.size(0);
    for (int64_t d = 2; d < w.dim(); ++d) fan_out *= w.size(d);
    conv->weight = nn::detail::normal(w.sizes(), std::sqrt(2.0 / double(fan_out)));
    if (conv->bias.defined()) conv->bias.zero_();
    return true;
  };
  for (auto& [name, m] : root.named_modules()) (init(dynamic_cast<Convs*>(m.get())) || ...);
}

}  // namespace lg::models::detail

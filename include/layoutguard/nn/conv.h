// Convolution layers: Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d. Parameters `weight`
// ([out, in/groups, k...], transposed: [in, out/groups, k...]) and `bias` ([out], undefined with
// bias(false)), initialised as PyTorch does (uniform within 1/sqrt(fan_in)).
#pragma once

#include <cstdint>
#include <vector>

#include <layoutguard/nn/module.h>
#include <layoutguard/nn/options.h>

namespace lg::nn {

// Sizes take one value (used for every spatial dim) or one per spatial dim.
template <int D, bool Transposed>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  LG_NN_ARG(int64_t, in_channels);
  LG_NN_ARG(int64_t, out_channels);
  LG_NN_ARG(std::vector<int64_t>, kernel_size);
  LG_NN_ARG(std::vector<int64_t>, stride) = {1};
  LG_NN_ARG(std::vector<int64_t>, padding) = {0};
  LG_NN_ARG(std::vector<int64_t>, output_padding) = {0};  // transposed only
  LG_NN_ARG(std::vector<int64_t>, dilation) = {1};
  LG_NN_ARG(int64_t, groups) = 1;
  LG_NN_ARG(bool, bias) = true;
};

template <int D, bool Transposed>
class ConvNd : public Module {
 public:
  using Options = ConvOptions<D, Transposed>;
  explicit ConvNd(Options options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const Options& options() const { return options_; }

  Tensor weight;
  Tensor bias;

 private:
  Options options_;  // sizes expanded to D entries
};

using Conv2dOptions = ConvOptions<2, false>;
using Conv3dOptions = ConvOptions<3, false>;
using ConvTranspose2dOptions = ConvOptions<2, true>;
using ConvTranspose3dOptions = ConvOptions<3, true>;
using Conv2d = ConvNd<2, false>;
using Conv3d = ConvNd<3, false>;
using ConvTranspose2d = ConvNd<2, true>;
using ConvTranspose3d = ConvNd<3, true>;

extern template class ConvNd<2, false>;
extern template class ConvNd<3, false>;
extern template class ConvNd<2, true>;
extern template class ConvNd<3, true>;

}  // namespace lg::nn

// Pooling layers: MaxPool2d/3d, AvgPool2d/3d, AdaptiveAvgPool2d/3d. Sizes take one value or one
// per spatial dim; an empty stride means stride = kernel_size, as in PyTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <layoutguard/nn/module.h>
#include <layoutguard/nn/options.h>

namespace lg::nn {

struct MaxPoolOptions {
  MaxPoolOptions(std::vector<int64_t> kernel_size) : kernel_size_(std::move(kernel_size)) {}
  LG_NN_ARG(std::vector<int64_t>, kernel_size);
  LG_NN_ARG(std::vector<int64_t>, stride) = {};
  LG_NN_ARG(std::vector<int64_t>, padding) = {0};
  LG_NN_ARG(std::vector<int64_t>, dilation) = {1};
  LG_NN_ARG(bool, ceil_mode) = false;
};

struct AvgPoolOptions {
  AvgPoolOptions(std::vector<int64_t> kernel_size) : kernel_size_(std::move(kernel_size)) {}
  LG_NN_ARG(std::vector<int64_t>, kernel_size);
  LG_NN_ARG(std::vector<int64_t>, stride) = {};
  LG_NN_ARG(std::vector<int64_t>, padding) = {0};
  LG_NN_ARG(bool, ceil_mode) = false;
  LG_NN_ARG(bool, count_include_pad) = true;
  LG_NN_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};

template <int D>
class MaxPoolNd : public Module {
 public:
  explicit MaxPoolNd(MaxPoolOptions options) : Module(D == 2 ? "MaxPool2d" : "MaxPool3d"), options_(std::move(options)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  MaxPoolOptions options_;
};

template <int D>
class AvgPoolNd : public Module {
 public:
  explicit AvgPoolNd(AvgPoolOptions options) : Module(D == 2 ? "AvgPool2d" : "AvgPool3d"), options_(std::move(options)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  AvgPoolOptions options_;
};

template <int D>
class AdaptiveAvgPoolNd : public Module {
 public:
  // One value is used for every spatial dim (AdaptiveAvgPool2d({1}) is PyTorch's AdaptiveAvgPool2d(1)).
  explicit AdaptiveAvgPoolNd(std::vector<int64_t> output_size)
      : Module(D == 2 ? "AdaptiveAvgPool2d" : "AdaptiveAvgPool3d"),
        output_size_(output_size.size() == 1 ? std::vector<int64_t>(D, output_size[0]) : std::move(output_size)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  std::vector<int64_t> output_size_;
};

using MaxPool2d = MaxPoolNd<2>;
using MaxPool3d = MaxPoolNd<3>;
using AvgPool2d = AvgPoolNd<2>;
using AvgPool3d = AvgPoolNd<3>;
using AdaptiveAvgPool2d = AdaptiveAvgPoolNd<2>;
using AdaptiveAvgPool3d = AdaptiveAvgPoolNd<3>;
extern template class MaxPoolNd<2>;
extern template class MaxPoolNd<3>;
extern template class AvgPoolNd<2>;
extern template class AvgPoolNd<3>;
extern template class AdaptiveAvgPoolNd<2>;
extern template class AdaptiveAvgPoolNd<3>;

}  // namespace lg::nn

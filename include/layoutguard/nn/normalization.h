// Normalisation layers: BatchNorm2d, BatchNorm3d (buffers running_mean, running_var,
// num_batches_tracked as in PyTorch), GroupNorm, LayerNorm.
#pragma once

#include <cstdint>
#include <vector>

#include <layoutguard/nn/module.h>
#include <layoutguard/nn/options.h>

namespace lg::nn {

struct BatchNormOptions {
  explicit BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  LG_NN_ARG(int64_t, num_features);
  LG_NN_ARG(double, eps) = 1e-5;
  LG_NN_ARG(double, momentum) = 0.1;
  LG_NN_ARG(bool, affine) = true;
  LG_NN_ARG(bool, track_running_stats) = true;
};

// Rank D + 2 input. Training: batch statistics, running stats updated, num_batches_tracked
// counted. Eval: running statistics (batch statistics when track_running_stats is off).
template <int D>
class BatchNormNd : public Module {
 public:
  explicit BatchNormNd(BatchNormOptions options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const BatchNormOptions& options() const { return options_; }

  Tensor weight, bias;                                   // [C], ones and zeros
  Tensor running_mean, running_var, num_batches_tracked;  // [C] zeros, [C] ones, int64 []

 private:
  BatchNormOptions options_;
};
using BatchNorm2d = BatchNormNd<2>;
using BatchNorm3d = BatchNormNd<3>;
extern template class BatchNormNd<2>;
extern template class BatchNormNd<3>;

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  LG_NN_ARG(int64_t, num_groups);
  LG_NN_ARG(int64_t, num_channels);
  LG_NN_ARG(double, eps) = 1e-5;
  LG_NN_ARG(bool, affine) = true;
};

class GroupNorm : public Module {
 public:
  explicit GroupNorm(GroupNormOptions options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;

 private:
  GroupNormOptions options_;
};

struct LayerNormOptions {
  explicit LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  LG_NN_ARG(std::vector<int64_t>, normalized_shape);
  LG_NN_ARG(double, eps) = 1e-5;
  LG_NN_ARG(bool, elementwise_affine) = true;
};

class LayerNorm : public Module {
 public:
  explicit LayerNorm(LayerNormOptions options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;

 private:
  LayerNormOptions options_;
};

}  // namespace lg::nn

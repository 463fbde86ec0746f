// Normalisation layers.
#include <layoutguard/nn/normalization.h>

#include <cmath>

#include <layoutguard/normalization.h>

#include "init.h"

namespace lg::nn {
namespace {

std::optional<Tensor> optional(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

}  // namespace

template <int D>
BatchNormNd<D>::BatchNormNd(BatchNormOptions o) : Module("BatchNorm" + std::to_string(D) + "d"), options_(std::move(o)) {
  const int64_t c = options_.num_features();
  detail::require(c > 0, type_name(), "num_features must be positive, got " + std::to_string(c));
  detail::require(options_.eps() > 0, type_name(), "eps must be positive, got " + std::to_string(options_.eps()));
  // Only the running statistics use it (the functional op checks it the same way).
  detail::require(!options_.track_running_stats() || std::isfinite(options_.momentum()), type_name(),
                  "momentum must be finite to update the running statistics with, got " +
                      std::to_string(options_.momentum()));
  if (options_.affine()) {
    weight = detail::filled({c}, 1.0, type_name());
    bias = detail::filled({c}, 0.0, type_name());
  }
  if (options_.track_running_stats()) {
    running_mean = detail::filled({c}, 0.0, type_name());
    running_var = detail::filled({c}, 1.0, type_name());
    num_batches_tracked = zeros({}, TensorOptions().dtype(kInt64));
  }
  register_parameter("weight", &weight);
  register_parameter("bias", &bias);
  register_buffer("running_mean", &running_mean);
  register_buffer("running_var", &running_var);
  register_buffer("num_batches_tracked", &num_batches_tracked, /*optional_in_checkpoint=*/true);
}

template <int D>
Tensor BatchNormNd<D>::forward(const Tensor& input) {
  if (input.dim() != D + 2)
    throw ValueError("[nn::" + type_name() + "] expected " + std::to_string(D + 2) + "D input (got " +
                     std::to_string(input.dim()) + "D input of sizes " + to_string(input.sizes()) + ")");
  const bool use_batch_stats = is_training() || !running_mean.defined();
  if (is_training() && num_batches_tracked.defined()) {
    // Wraps at int64's end like PyTorch's add_(1) on an int64 tensor, without signed overflow.
    const auto count = static_cast<uint64_t>(num_batches_tracked.item<int64_t>());
    num_batches_tracked.fill_(static_cast<int64_t>(count + 1));
  }
  return batch_norm(input, optional(weight), optional(bias), optional(running_mean), optional(running_var),
                    use_batch_stats, options_.momentum(), options_.eps());
}

template <int D>
std::string BatchNormNd<D>::extra_repr() const {
  return std::to_string(options_.num_features()) + ", eps=" + std::to_string(options_.eps());
}

template class BatchNormNd<2>;
template class BatchNormNd<3>;

GroupNorm::GroupNorm(GroupNormOptions o) : Module("GroupNorm"), options_(std::move(o)) {
  detail::require(options_.num_channels() > 0, "GroupNorm",
                  "num_channels must be positive, got " + std::to_string(options_.num_channels()));
  detail::require(options_.num_groups() > 0 && options_.num_channels() % options_.num_groups() == 0, "GroupNorm",
                  "num_groups (" + std::to_string(options_.num_groups()) + ") must be positive and divide num_channels (" +
                      std::to_string(options_.num_channels()) + ")");
  if (options_.affine()) {
    weight = detail::filled({options_.num_channels()}, 1.0, "GroupNorm");
    bias = detail::filled({options_.num_channels()}, 0.0, "GroupNorm");
  }
  register_parameter("weight", &weight);
  register_parameter("bias", &bias);
}

Tensor GroupNorm::forward(const Tensor& input) {
  return group_norm(input, options_.num_groups(), optional(weight), optional(bias), options_.eps());
}

std::string GroupNorm::extra_repr() const {
  return std::to_string(options_.num_groups()) + ", " + std::to_string(options_.num_channels());
}

LayerNorm::LayerNorm(LayerNormOptions o) : Module("LayerNorm"), options_(std::move(o)) {
  detail::require(!options_.normalized_shape().empty(), "LayerNorm", "normalized_shape must not be empty");
  for (int64_t n : options_.normalized_shape())
    detail::require(n > 0, "LayerNorm", "normalized_shape entries must be positive, got " + to_string(options_.normalized_shape()));
  if (options_.elementwise_affine()) {
    weight = detail::filled(options_.normalized_shape(), 1.0, "LayerNorm");
    bias = detail::filled(options_.normalized_shape(), 0.0, "LayerNorm");
  }
  register_parameter("weight", &weight);
  register_parameter("bias", &bias);
}

Tensor LayerNorm::forward(const Tensor& input) {
  return layer_norm(input, options_.normalized_shape(), optional(weight), optional(bias), options_.eps());
}

std::string LayerNorm::extra_repr() const { return to_string(options_.normalized_shape()); }

}  // namespace lg::nn

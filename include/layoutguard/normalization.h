// Normalisation ops with ATen's names, argument order and defaults. float32 and float64
// compute natively; float16 and bfloat16 compute in float32 (statistics in double).
//
// Output layout: batch_norm follows PyTorch's CPU rule exactly (a tensor contiguous in
// some format keeps it, "contiguous first" for ambiguous ones; otherwise the suggested
// format). group_norm, layer_norm and instance_norm return the input's suggested format --
// PyTorch 1.13 returns contiguous output for channels_last input to layer_norm and
// instance_norm; layoutguard keeps channels_last (docs/operators.md lists the difference).
#pragma once

#include <optional>

#include <layoutguard/int_array_ref.h>
#include <layoutguard/tensor.h>

namespace lg {

// input (N, C, ...); weight, bias, running_mean, running_var: (C) or absent. training: batch
// statistics, and when running stats are given they are updated in place:
// running = (1 - momentum) * running + momentum * batch (the variance unbiased).
// Inference: the running stats normalise (both required).
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                  bool training, double momentum = 0.1, double eps = 1e-5);

// input (N, C, ...), C divisible by num_groups; weight, bias: (C).
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);

// Normalises over the trailing dims named by normalized_shape; weight, bias: normalized_shape.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);

// Per (sample, channel) statistics over the spatial dims. With use_input_stats false the
// running stats normalise instead; with it true and running stats given, they are updated with
// the mean over the batch of the per-sample statistics.
Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight = std::nullopt,
                     const std::optional<Tensor>& bias = std::nullopt,
                     const std::optional<Tensor>& running_mean = std::nullopt,
                     const std::optional<Tensor>& running_var = std::nullopt, bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5);

}  // namespace lg

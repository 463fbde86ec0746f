// Pooling ops with ATen's names, argument order and defaults. Output layout: the input's
// suggested format, channels_last_3d included for the 3-D ops (PyTorch main);
// indices of max pooling get the same strides as the values. Inputs may be batched (N, C, ...)
// or unbatched (C, ...). Every floating dtype; float16 and bfloat16 accumulate in float32.
//
// Single-element lists expand to every spatial dim; an empty stride means stride = kernel_size.
#pragma once

#include <optional>
#include <utility>

#include <layoutguard/int_array_ref.h>
#include <layoutguard/tensor.h>

namespace lg {

// Output size per dim: floor((in + 2 * padding - dilation * (k - 1) - 1) / stride) + 1, or
// ceil with ceil_mode (a last window that would start in the right padding is dropped).
// padding <= kernel_size / 2.
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  IntArrayRef dilation = {1}, bool ceil_mode = false);
// (values, indices): indices are int64 flat positions within each input plane (h * W + w).
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                  IntArrayRef padding = {0}, IntArrayRef dilation = {1},
                                                  bool ceil_mode = false);
Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  IntArrayRef dilation = {1}, bool ceil_mode = false);

// count_include_pad: padded zeros count in the divisor; divisor_override replaces the divisor.
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

// Output bin i of n over an input of size s covers [floor(i * s / n), ceil((i + 1) * s / n)).
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size);
// (values, indices) as max_pool2d_with_indices.
std::pair<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);

}  // namespace lg

// Convolutions with ATen's names, argument order and defaults. Output layout (as in PyTorch
// main): channels_last (channels_last_3d for conv3d) when the input or the weight
// suggests it, otherwise contiguous; the bias never votes. Inputs may be batched (N, C, ...) or
// unbatched (C, ...). float32 and float64 compute natively; float16 and bfloat16 compute in
// float32 and round once at the end.
//
// Single-element lists expand to every spatial dim: stride {2} means {2, 2}.
#pragma once

#include <optional>

#include <layoutguard/int_array_ref.h>
#include <layoutguard/tensor.h>

namespace lg {

// A padding given by name, as libtorch's torch::kSame / torch::kValid (a string overload would
// make conv2d(x, w, b, {1}, {0}) ambiguous: {0} also converts to a null const char*). No
// enumerator is 0: conv2d(x, w, b, {1}, {}) picks this overload with PaddingMode{}, which is then
// refused instead of meaning "same".
enum class PaddingMode { Same = 1, Valid = 2 };
inline constexpr PaddingMode kSame = PaddingMode::Same;    // output size = input size; stride 1 only
inline constexpr PaddingMode kValid = PaddingMode::Valid;  // no padding

// weight: (C_out, C_in / groups, kH, kW); bias: (C_out) or absent (nullopt or undefined).
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1},
              int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, PaddingMode padding, IntArrayRef dilation = {1}, int64_t groups = 1);

// weight: (C_out, C_in / groups, kD, kH, kW).
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1},
              int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, PaddingMode padding, IntArrayRef dilation = {1}, int64_t groups = 1);

// weight: (C_in, C_out / groups, kH, kW). Output size per dim:
// (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1, where
// output_padding < stride or < dilation.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = {1},
                        IntArrayRef padding = {0}, IntArrayRef output_padding = {0}, int64_t groups = 1,
                        IntArrayRef dilation = {1});
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = {1},
                        IntArrayRef padding = {0}, IntArrayRef output_padding = {0}, int64_t groups = 1,
                        IntArrayRef dilation = {1});

}  // namespace lg

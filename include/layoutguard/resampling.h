// Resampling ops with ATen's names, argument order and defaults: upsampling (nearest,
// bilinear, bicubic, trilinear), padding, and the channel/space shuffles.
//
// Output layout: the input's suggested format, channels_last_3d included for the
// 3-D ops. layoutguard also keeps channels_last where PyTorch 1.13 drops it (bicubic, reflect
// and replicate pad); docs/operators.md lists each difference. Inputs may be batched
// (N, C, spatial...) or, for pad, of any rank.
#pragma once

#include <optional>
#include <string_view>

#include <layoutguard/int_array_ref.h>
#include <layoutguard/tensor.h>

namespace lg {

// Upsampling. output_size holds the spatial sizes (2 or 3 values, each > 0). A scale, when
// given and > 0, maps output to input coordinates as 1 / scale (PyTorch's behaviour when
// interpolate is called with scale_factor); otherwise input_size / output_size is used.
//
// nearest: source index floor(dst * scale), clamped to the input. Every dtype but bool.
Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size, std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);
Tensor upsample_nearest3d(const Tensor& input, IntArrayRef output_size, std::optional<double> scales_d = std::nullopt,
                          std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt);
// Linear interpolation between the two nearest input samples per dim. align_corners: the
// corner samples of input and output coincide (scale (in - 1) / (out - 1)); otherwise pixel
// centres are aligned (source = (dst + 0.5) * scale - 0.5, clamped at 0). Floating dtypes.
Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt);
Tensor upsample_trilinear3d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d = std::nullopt, std::optional<double> scales_h = std::nullopt,
                            std::optional<double> scales_w = std::nullopt);
// Keys' cubic convolution (A = -0.75) over 4 x 4 input samples, the border replicated.
Tensor upsample_bicubic2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                          std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt);

// torch.nn.functional.interpolate for 4-D and 5-D input: exactly one of size (one value for
// every spatial dim, or one per dim) and scale_factor (likewise) is given. mode: "nearest",
// "bilinear" (4-D), "bicubic" (4-D), "trilinear" (5-D). align_corners only for the linear and
// cubic modes (default false). With scale_factor, output size is floor(in * scale) and the
// scale itself maps coordinates, as PyTorch does without recompute_scale_factor.
Tensor interpolate(const Tensor& input, IntArrayRef size = {}, std::vector<double> scale_factor = {},
                   std::string_view mode = "nearest", std::optional<bool> align_corners = std::nullopt);

// torch.nn.functional.pad. pad holds (before, after) pairs starting from the last dim:
// {left, right} pads W, {left, right, top, bottom} pads H and W, and so on.
// "constant": any dims, negative amounts crop, fill `value` (default 0).
// "reflect": mirror without repeating the edge; each amount < the padded dim's size.
// "replicate": repeat the edge sample. "circular": wrap around; each amount <= the dim's size.
// reflect, replicate and circular pad the last 1 to 3 dims of a (C, ...) or (N, C, ...) input
// (2 to 5 dims in all) and take non-negative amounts only.
Tensor pad(const Tensor& input, IntArrayRef pad, std::string_view mode = "constant",
           std::optional<double> value = std::nullopt);

// (N, C * r * r, H, W) -> (N, C, H * r, W * r): out[n][c][h * r + i][w * r + j] =
// in[n][c * r * r + i * r + j][h][w]. Any leading batch dims; every dtype.
Tensor pixel_shuffle(const Tensor& input, int64_t upscale_factor);
// The inverse: (N, C, H * r, W * r) -> (N, C * r * r, H, W).
Tensor pixel_unshuffle(const Tensor& input, int64_t downscale_factor);
// (N, C, ...) with C = groups * k: out channel g2 * groups + g1 = in channel g1 * k + g2.
Tensor channel_shuffle(const Tensor& input, int64_t groups);

}  // namespace lg

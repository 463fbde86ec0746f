// Kernel signatures of the op families past copy and pointwise: one parameter struct per
// family, filled by the op's infer step (src/ops) after it has validated everything, so a
// kernel never re-checks its arguments and never chooses an output layout.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <layoutguard/tensor.h>

#include "dispatch/op_id.h"

namespace lg::dispatch {

template <OpId id> struct KernelSignature;

// Convolutions with 2 or 3 spatial dims. A 2-D convolution is given as 3-D with a leading
// spatial dim of size 1 (kernel 1, stride 1, padding 0) so one kernel serves both.
struct ConvParams {
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> padding{0, 0, 0};  // leading padding per dim; the trailing side
                                             // follows from the output size ("same" may be odd)
  std::array<int64_t, 3> dilation{1, 1, 1};
  int64_t groups = 1;
  bool channels_last = false;  // out is dense channels_last_3d (else contiguous)
};

// out = conv(input, weight) + bias, all as 5-D (N, C, D, H, W) views. input and out have the
// compute dtype (float32 or float64); weight has any floating dtype (the kernel packs it into
// the compute dtype); bias is undefined or 1-D of the compute dtype. out is dense in
// channels_last_3d or contiguous order, chosen by the infer step; input may have any strides.
using ConvKernel = void (*)(const Tensor& out, const Tensor& input, const Tensor& weight,
                            const Tensor& bias, const ConvParams& params);
template <> struct KernelSignature<OpId::conv2d> { using type = ConvKernel; };
template <> struct KernelSignature<OpId::conv3d> { using type = ConvKernel; };
// Transposed: weight is (C_in, C_out / groups, kD, kH, kW); out's size already holds
// output_padding, which needs no other handling.
template <> struct KernelSignature<OpId::conv_transpose2d> { using type = ConvKernel; };
template <> struct KernelSignature<OpId::conv_transpose3d> { using type = ConvKernel; };

// batch_norm, group_norm, instance_norm: statistics per (sample, channel group), or per
// channel over the whole batch, then y = (x - mean) * rstd * weight + bias. input and out are
// 5-D (N, C, D, H, W) views (lower ranks padded with size-1 dims) of one floating dtype; out is
// dense, in channels-last order when `channels_last`. weight, bias and the running stats are
// undefined or 1-D (C) of any floating dtype.
struct ChannelNormParams {
  int64_t groups = 1;          // statistics groups per sample (group_norm G; instance_norm C)
  bool across_batch = false;   // batch_norm: one statistic per channel over N and space
  bool use_input_stats = true;  // false: normalise with the running stats
  double eps = 1e-5, momentum = 0.1;
  bool channels_last = false;
  Tensor weight, bias, running_mean, running_var;  // running stats are updated in place when
                                                   // defined and use_input_stats
};
using ChannelNormKernel = void (*)(const Tensor& out, const Tensor& input, const ChannelNormParams& params);
template <> struct KernelSignature<OpId::batch_norm> { using type = ChannelNormKernel; };
template <> struct KernelSignature<OpId::group_norm> { using type = ChannelNormKernel; };
template <> struct KernelSignature<OpId::instance_norm> { using type = ChannelNormKernel; };

// layer_norm over the last `normalized_dims` dims; weight and bias (undefined or of those
// sizes, the input's dtype) apply elementwise over them. out is dense in any order.
struct LayerNormParams {
  int64_t normalized_dims = 1;
  double eps = 1e-5;
  Tensor weight, bias;
};
using LayerNormKernel = void (*)(const Tensor& out, const Tensor& input, const LayerNormParams& params);
template <> struct KernelSignature<OpId::layer_norm> { using type = LayerNormKernel; };

// Pooling over 2 or 3 spatial dims, as 5-D (N, C, D, H, W) views (2-D with depth 1). Each
// output position's window per dim is given explicitly, so fixed-size, ceil-mode and adaptive
// pooling share one kernel: window o of dim i covers input positions
// begin[i][o], begin[i][o] + dilation[i], ... below end[i][o] (already clamped to the input).
struct PoolWindows {
  std::array<std::vector<int64_t>, 3> begin, end;
  std::array<int64_t, 3> dilation{1, 1, 1};
  // avg: the divisor of output position (d, h, w) is the product of these per-dim counts
  // (count_include_pad: the window clipped to the padded input; else the valid positions),
  // unless divisor_override > 0.
  std::array<std::vector<int64_t>, 3> count;
  int64_t divisor_override = 0;
  bool channels_last = false;  // out (and indices) are dense channels_last_3d
};
// max: out = window maximum (NaN wins), indices (int64, may be undefined) = the flat position
// d * H * W + h * W + w of the maximum within the input plane.
using MaxPoolKernel = void (*)(const Tensor& out, const Tensor& indices, const Tensor& input, const PoolWindows& w);
using AvgPoolKernel = void (*)(const Tensor& out, const Tensor& input, const PoolWindows& w);
template <> struct KernelSignature<OpId::max_pool2d> { using type = MaxPoolKernel; };
template <> struct KernelSignature<OpId::max_pool3d> { using type = MaxPoolKernel; };
template <> struct KernelSignature<OpId::adaptive_max_pool2d> { using type = MaxPoolKernel; };
template <> struct KernelSignature<OpId::avg_pool2d> { using type = AvgPoolKernel; };
template <> struct KernelSignature<OpId::avg_pool3d> { using type = AvgPoolKernel; };
template <> struct KernelSignature<OpId::adaptive_avg_pool2d> { using type = AvgPoolKernel; };
template <> struct KernelSignature<OpId::adaptive_avg_pool3d> { using type = AvgPoolKernel; };

// cat: out's slices along dim receive the inputs in order (legacy empty 1-D inputs already
// removed); inputs have out's dtype.
using CatKernel = void (*)(const Tensor& out, std::span<const Tensor> inputs, int64_t dim);
template <> struct KernelSignature<OpId::cat> { using type = CatKernel; };

}  // namespace lg::dispatch

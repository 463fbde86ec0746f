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
  // unless divisor_override != 0 (either sign, as in ATen).
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

// Upsampling over 2 or 3 spatial dims, as 5-D (N, C, D, H, W) views (2-D with depth 1). Each
// output position o of spatial dim i reads `taps[i]` input positions index[i][o * taps[i] + t]
// with weights weight[i][o * taps[i] + t] (already clamped to the input), so nearest (1 tap),
// linear (2) and cubic (4) share one separable kernel. With one tap everywhere the kernel
// copies values (every dtype); otherwise it blends in the compute dtype (floating only).
struct InterpTaps {
  std::array<int, 3> taps{1, 1, 1};
  std::array<std::vector<int64_t>, 3> index;
  std::array<std::vector<double>, 3> weight;
  bool channels_last = false;  // out is dense channels_last_3d (else contiguous)
};
using InterpKernel = void (*)(const Tensor& out, const Tensor& input, const InterpTaps& taps);
template <> struct KernelSignature<OpId::upsample_nearest2d> { using type = InterpKernel; };
template <> struct KernelSignature<OpId::upsample_nearest3d> { using type = InterpKernel; };
template <> struct KernelSignature<OpId::upsample_bilinear2d> { using type = InterpKernel; };
template <> struct KernelSignature<OpId::upsample_trilinear3d> { using type = InterpKernel; };
template <> struct KernelSignature<OpId::upsample_bicubic2d> { using type = InterpKernel; };

// pad (every mode): out[i_0, ..., i_k] = input[source[0][i_0], ..., source[k][i_k]], or `value`
// where any source index is -1. out has input's rank and dtype; any strides on both sides.
struct PadMap {
  std::vector<std::vector<int64_t>> source;  // per dim of out, per index along it
  double value = 0.0;
};
using PadKernel = void (*)(const Tensor& out, const Tensor& input, const PadMap& map);
template <> struct KernelSignature<OpId::pad> { using type = PadKernel; };

// pixel_shuffle, pixel_unshuffle, channel_shuffle: the infer step expresses the shuffle as a
// strided view of the input with out's sizes; the kernel writes it into out (dense, in out's
// layout) walking out's memory order.
using ShuffleKernel = void (*)(const Tensor& out, const Tensor& source_view);
template <> struct KernelSignature<OpId::pixel_shuffle> { using type = ShuffleKernel; };
template <> struct KernelSignature<OpId::pixel_unshuffle> { using type = ShuffleKernel; };
template <> struct KernelSignature<OpId::channel_shuffle> { using type = ShuffleKernel; };

// mm, bmm, addmm, linear: out (B, M, N) = alpha * a (B, M, K) @ b (B, K, N) + beta * c, where
// c (undefined when beta == 0) is already broadcast to out's sizes. All operands share out's
// dtype; a and b may have any strides (BLAS reads them in place when one dim is unit-stride);
// out is contiguous.
struct GemmParams {
  double alpha = 1.0, beta = 0.0;
  Tensor c;
};
using GemmKernel = void (*)(const Tensor& out, const Tensor& a, const Tensor& b, const GemmParams& params);
template <> struct KernelSignature<OpId::mm> { using type = GemmKernel; };
template <> struct KernelSignature<OpId::bmm> { using type = GemmKernel; };
template <> struct KernelSignature<OpId::addmm> { using type = GemmKernel; };
template <> struct KernelSignature<OpId::linear> { using type = GemmKernel; };

// sum, mean, amax, amin: out has input's rank with size 1 in the reduced dims (the infer step
// views it back to the requested shape) and input's dtype; input may have any strides.
enum class ReduceKind { Sum, Mean, Max, Min };
struct ReduceParams {
  ReduceKind kind = ReduceKind::Sum;
};
using ReduceKernel = void (*)(const Tensor& out, const Tensor& input, const ReduceParams& params);
template <> struct KernelSignature<OpId::sum> { using type = ReduceKernel; };
template <> struct KernelSignature<OpId::mean> { using type = ReduceKernel; };
template <> struct KernelSignature<OpId::amax> { using type = ReduceKernel; };
template <> struct KernelSignature<OpId::amin> { using type = ReduceKernel; };

// softmax / log_softmax along dim; out has input's sizes and floating dtype, any strides.
struct SoftmaxParams {
  int64_t dim = 0;
  bool log = false;
};
using SoftmaxKernel = void (*)(const Tensor& out, const Tensor& input, const SoftmaxParams& params);
template <> struct KernelSignature<OpId::softmax> { using type = SoftmaxKernel; };
template <> struct KernelSignature<OpId::log_softmax> { using type = SoftmaxKernel; };

}  // namespace lg::dispatch

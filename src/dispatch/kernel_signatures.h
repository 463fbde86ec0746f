// Kernel signatures of the op families past copy and pointwise: one parameter struct per
// family, filled by the op's infer step (src/ops) after it has validated everything, so a
// kernel never re-checks its arguments and never chooses an output layout.
#pragma once

#include <array>
#include <cstdint>

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

}  // namespace lg::dispatch

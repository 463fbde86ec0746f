// A direct float32 kernel for NHWC grouped convolutions with narrow groups (ResNeXt-50's 32
// groups of 4, 8 and 16 channels). As a GEMM per group these are tiny products (n = 4..16
// columns, k = 9 x 4..16) that ran at a third of the speed of the same convolution in NCHW; here
// one 8-lane register holds 8 output channels -- several whole groups, or a slice of one -- and
// each input channel reaches its lanes by an in-register permute (groups of 2 or 4) or a
// broadcast (groups of 8 or 16). Groups of 32 and more run the panel GEMM, which measured 2x
// faster there (ResNeXt-50's 7x7 stage: 70 against 32 GFLOPS on the development VM).
#pragma once

#include <cstdint>

#include "cpu/conv_geometry.h"

namespace lg::cpu {

// Whether conv_nhwc_grouped takes this call: AVX2+FMA CPU, groups > 1 with as many input as
// output channels per group, that count 2, 4, 8 or 16, C_out a multiple of 8, and
// unit channel stride on the input.
bool conv_nhwc_grouped_applies(const ConvGeometry& g);

// out (dense NHWC, [N*D*H*W, C_out]) = conv(x, w) + bias. w is the weight in (tap, i, o) order:
// w[(tap * cg + i) * C_out + o]. bias may be null.
void conv_nhwc_grouped(const ConvGeometry& g, const float* x, const float* w, const float* bias, int64_t bias_stride,
                       float* out);

}  // namespace lg::cpu

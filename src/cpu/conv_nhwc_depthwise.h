// The float32 NHWC depthwise convolution (one channel per group: MobileNet's 3x3 layers) on
// AVX2+FMA, or AVX-512 where the CPU has it. The portable loop in conv.cpp adds each tap into
// the output pixel in memory, so every tap loads and stores the whole channel run again; here
// the sums of 8 neighbouring outputs stay in registers across all taps and are stored once.
#pragma once

#include <cstdint>

#include "cpu/conv_geometry.h"

namespace lg::cpu {

// Whether conv_nhwc_depthwise_vector takes this call: an AVX2+FMA CPU and unit channel stride
// on the input. The caller has checked that the convolution is depthwise.
bool conv_nhwc_depthwise_vector_applies(const ConvGeometry& g);

// The kernel name it reports: conv_nhwc_depthwise_avx512_cpu where cpu::use_avx512() (the CPU
// has avx512f and avx512vl, not switched off), conv_nhwc_depthwise_avx2_cpu elsewhere.
const char* conv_nhwc_depthwise_vector_name();

// out (dense NHWC, [N*D*H*W, C]) = depthwise conv(x, w) + bias. w is in (tap, channel) order:
// w[tap * C + c]. bias may be null. Each output is bias + the taps in window order, one fused
// multiply-add each. Requires conv_nhwc_depthwise_vector_applies(g).
void conv_nhwc_depthwise_vector(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                                int64_t bias_stride, float* out);

}  // namespace lg::cpu

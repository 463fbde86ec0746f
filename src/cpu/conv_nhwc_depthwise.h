// The float32 NHWC depthwise convolution (one channel per group: MobileNet's 3x3 layers) on
// AVX2+FMA. The portable loop in conv.cpp adds each tap into the output pixel in memory, so
// every tap loads and stores the whole channel run again; here 32 output channels stay in
// four registers across all taps and are stored once, as the pooling tap reductions do.
#pragma once

#include <cstdint>

#include "cpu/conv_geometry.h"

namespace lg::cpu {

// Whether conv_nhwc_depthwise_avx2 takes this call: an AVX2+FMA CPU and unit channel stride
// on the input. The caller has checked that the convolution is depthwise.
bool conv_nhwc_depthwise_avx2_applies(const ConvGeometry& g);

// out (dense NHWC, [N*D*H*W, C]) = depthwise conv(x, w) + bias. w is in (tap, channel) order:
// w[tap * C + c]. bias may be null. Each output is bias + the taps in window order, one fused
// multiply-add each.
void conv_nhwc_depthwise_avx2(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                              int64_t bias_stride, float* out);

}  // namespace lg::cpu

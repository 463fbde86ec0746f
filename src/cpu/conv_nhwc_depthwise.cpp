// AVX2+FMA NHWC depthwise convolution: per output pixel, the window's valid taps are listed
// once (input channel run, weight row), then reduced 32 channels at a time in registers.
#include "cpu/conv_nhwc_depthwise.h"

#include <algorithm>
#include <vector>

#include <layoutguard/error.h>

#include "cpu/avx2_target.h"
#include "cpu/parallel.h"

namespace lg::cpu {

#if LG_CPU_AVX2_KERNELS

bool conv_nhwc_depthwise_avx2_applies(const ConvGeometry& g) {
  return g.x_stride[1] == 1 && cpu_has_avx2() && cpu_has_fma();
}

namespace {

struct Tap {
  const float* x;  // the input pixel's channel run
  const float* w;  // the tap's weight row, one value per channel
};

// bias[c .. c + 8), or zeros without a bias.
LG_AVX2_FMA inline __m256 bias8(const float* bias, int64_t bias_stride, int64_t c) {
  if (!bias) return _mm256_setzero_ps();
  if (bias_stride == 1) return _mm256_loadu_ps(bias + c);
  alignas(32) float b[8];
  for (int k = 0; k < 8; ++k) b[k] = bias[(c + k) * bias_stride];
  return _mm256_load_ps(b);
}

// out[c] = bias[c] + sum over taps of x[c] * w[c], for c < C.
LG_AVX2_FMA void depthwise_pixel(float* out, const Tap* taps, int64_t count, const float* bias, int64_t bias_stride,
                                 int64_t C) {
  const auto start = [&](int64_t c) LG_AVX2_FMA { return bias8(bias, bias_stride, c); };
  int64_t c = 0;
  for (; c + 32 <= C; c += 32) {
    __m256 a0 = start(c), a1 = start(c + 8), a2 = start(c + 16), a3 = start(c + 24);
    for (int64_t t = 0; t < count; ++t) {
      const float* x = taps[t].x + c;
      const float* w = taps[t].w + c;
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(w), a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 8), _mm256_loadu_ps(w + 8), a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 16), _mm256_loadu_ps(w + 16), a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 24), _mm256_loadu_ps(w + 24), a3);
    }
    _mm256_storeu_ps(out + c, a0);
    _mm256_storeu_ps(out + c + 8, a1);
    _mm256_storeu_ps(out + c + 16, a2);
    _mm256_storeu_ps(out + c + 24, a3);
  }
  for (; c + 8 <= C; c += 8) {
    __m256 a = start(c);
    for (int64_t t = 0; t < count; ++t)
      a = _mm256_fmadd_ps(_mm256_loadu_ps(taps[t].x + c), _mm256_loadu_ps(taps[t].w + c), a);
    _mm256_storeu_ps(out + c, a);
  }
  for (; c < C; ++c) {
    float a = bias ? bias[c * bias_stride] : 0.0f;
    for (int64_t t = 0; t < count; ++t) a = __builtin_fmaf(taps[t].x[c], taps[t].w[c], a);
    out[c] = a;
  }
}

}  // namespace

void conv_nhwc_depthwise_avx2(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                              int64_t bias_stride, float* out) {
  const int64_t C = g.c_out, P = g.out_plane(), ohw = g.out[1] * g.out[2];
  cpu::parallel_for(g.batch * P, std::max<int64_t>(1, 4096 / std::max<int64_t>(C * g.taps(), 1)), [&](int64_t r0, int64_t r1) {
    std::vector<Tap> taps;
    taps.reserve(static_cast<size_t>(g.taps()));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / P, p = r % P;
      const int64_t od = p / ohw, oh = p / g.out[2] % g.out[1], ow = p % g.out[2];
      taps.clear();
      for_each_valid_tap(g, x, w, C, n, od, oh, ow, [&](const float* xi, const float* wt) { taps.push_back({xi, wt}); });
      depthwise_pixel(out + r * C, taps.data(), static_cast<int64_t>(taps.size()), bias, bias_stride, C);
    }
  });
}

#else

bool conv_nhwc_depthwise_avx2_applies(const ConvGeometry&) { return false; }
void conv_nhwc_depthwise_avx2(const ConvGeometry&, const float*, const float*, const float*, int64_t, float*) {
  LG_ASSERT(false, "conv_nhwc_depthwise_avx2 needs AVX2");
}

#endif

}  // namespace lg::cpu

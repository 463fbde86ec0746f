// The narrow-group NHWC kernel. Work unit: one output row (n, d, h), one chunk of 8 output
// channels, up to 6 neighbouring output pixels in registers. Lanes and input channels, for the
// chunk starting at output channel o0:
//   groups of 2 or 4: the chunk holds 8 / cg whole groups whose inputs are channels o0..o0+7
//     (cg_in == cg_out), so one 8-float load per pixel and tap, then for input channel i an
//     in-lane permute puts channel i of each lane's own group in every lane;
//   groups of 8 or 16: the chunk lies in one group, so input channel i is a broadcast.
#include "cpu/conv_nhwc_grouped.h"

#include <algorithm>
#include <vector>

#include "cpu/avx2_target.h"
#include "cpu/panel_gemm.h"
#include "cpu/parallel.h"

#include <layoutguard/error.h>

namespace lg::cpu {
namespace {

#if LG_CPU_AVX2_KERNELS

// What a tile needs besides its pixels.
struct Row {
  const ConvGeometry* g;
  const float* w;      // (tap, i, o) weight
  int64_t cg;          // channels per group
  const float* zeros;  // max(cg, 8) zeros: what a tap in the padding reads
};

// Lane l <- channel i of lane l's group, from the 8 channels starting at the chunk's first.
template <int CG, int I>
LG_AVX2_FMA inline __m256 group_channel(__m256 v) {
  static_assert(CG == 2 || CG == 4);
  if constexpr (CG == 4) return _mm256_permute_ps(v, I * 0x55);             // (i, i, i, i) per 128-bit half
  else return _mm256_permute_ps(v, I == 0 ? 0xA0 : 0xF5);                    // (i, i, 2+i, 2+i)
}

#define LG_GROUPED_FOR_PIXELS(X) X(0) X(1) X(2) X(3) X(4) X(5)

// Output pixels ow0 .. ow0 + P - 1 of row (n, od, oh), channels o0 .. o0 + 7. Each pixel reads
// through its own pointer; kPadded (tiles with W taps in the padding) points those taps at
// r.zeros, so border pixels run the same register tile as the rest.
template <int MODE, int P, bool kPadded>
LG_AVX2_FMA void tile(const Row& r, const float* x, int64_t ow0, int64_t n, int64_t od, int64_t oh, int64_t o0,
                      int64_t cin0, const __m256 bias, float* out_row) {
  const ConvGeometry& g = *r.g;
  const int64_t c_out = g.c_out, cg = r.cg;
  __m256 a0 = bias, a1 = bias, a2 = bias, a3 = bias, a4 = bias, a5 = bias;
  for (int64_t kd = 0; kd < g.k[0]; ++kd) {
    const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
    if (id < 0 || id >= g.in[0]) continue;
    for (int64_t kh = 0; kh < g.k[1]; ++kh) {
      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
      if (ih < 0 || ih >= g.in[1]) continue;
      const float* row = x + g.x_offset(n, cin0, id, ih, 0);
      for (int64_t kw = 0; kw < g.k[2]; ++kw) {
        const int64_t iw0 = ow0 * g.stride[2] - g.pad[2] + kw * g.dil[2];
        const float *x0 = r.zeros, *x1 = r.zeros, *x2 = r.zeros, *x3 = r.zeros, *x4 = r.zeros, *x5 = r.zeros;
#define LG_POINT(p)                                                              \
  if constexpr (P > p) {                                                         \
    const int64_t iw = iw0 + p * g.stride[2];                                    \
    if (!kPadded || (iw >= 0 && iw < g.in[2])) x##p = row + iw * g.x_stride[4];  \
  }
        LG_GROUPED_FOR_PIXELS(LG_POINT)
#undef LG_POINT
        const float* wk = r.w + ((kd * g.k[1] + kh) * g.k[2] + kw) * cg * c_out + o0;
        if constexpr (MODE == 8) {
          for (int64_t i = 0; i < cg; ++i, wk += c_out) {
            const __m256 wv = _mm256_loadu_ps(wk);
#define LG_BCAST(p) \
  if constexpr (P > p) a##p = _mm256_fmadd_ps(_mm256_broadcast_ss(x##p + i), wv, a##p);
            LG_GROUPED_FOR_PIXELS(LG_BCAST)
#undef LG_BCAST
          }
        } else {
          __m256 v0, v1, v2, v3, v4, v5;
#define LG_LOAD(p) \
  if constexpr (P > p) v##p = _mm256_loadu_ps(x##p);
          LG_GROUPED_FOR_PIXELS(LG_LOAD)
#undef LG_LOAD
#define LG_PERM(p, I) \
  if constexpr (P > p) a##p = _mm256_fmadd_ps(group_channel<MODE, I>(v##p), wv, a##p);
#define LG_CHANNEL(I)                                              \
  {                                                                \
    const __m256 wv = _mm256_loadu_ps(wk + I * c_out);             \
    LG_PERM(0, I) LG_PERM(1, I) LG_PERM(2, I) LG_PERM(3, I) LG_PERM(4, I) LG_PERM(5, I) \
  }
          LG_CHANNEL(0)
          LG_CHANNEL(1)
          if constexpr (MODE == 4) {
            LG_CHANNEL(2)
            LG_CHANNEL(3)
          }
#undef LG_CHANNEL
#undef LG_PERM
        }
      }
    }
  }
#define LG_STORE(p) \
  if constexpr (P > p) _mm256_storeu_ps(out_row + (ow0 + p) * c_out + o0, a##p);
  LG_GROUPED_FOR_PIXELS(LG_STORE)
#undef LG_STORE
}

template <int MODE, bool kPadded>
LG_AVX2_FMA void tile_pixels(int64_t pixels, const Row& r, const float* x, int64_t ow0, int64_t n, int64_t od,
                             int64_t oh, int64_t o0, int64_t cin0, __m256 bias, float* out_row) {
  switch (pixels) {
    case 6: return tile<MODE, 6, kPadded>(r, x, ow0, n, od, oh, o0, cin0, bias, out_row);
    case 5: return tile<MODE, 5, kPadded>(r, x, ow0, n, od, oh, o0, cin0, bias, out_row);
    case 4: return tile<MODE, 4, kPadded>(r, x, ow0, n, od, oh, o0, cin0, bias, out_row);
    case 3: return tile<MODE, 3, kPadded>(r, x, ow0, n, od, oh, o0, cin0, bias, out_row);
    case 2: return tile<MODE, 2, kPadded>(r, x, ow0, n, od, oh, o0, cin0, bias, out_row);
    default: return tile<MODE, 1, kPadded>(r, x, ow0, n, od, oh, o0, cin0, bias, out_row);
  }
}

// Output rows [q0, q1).
template <int MODE>
LG_AVX2_FMA void run_rows(const Row& r, int64_t q0, int64_t q1, const float* x,
                          const float* bias_all, float* out) {
  const ConvGeometry& g = *r.g;
  const int64_t cg = r.cg, c_out = g.c_out, OW = g.out[2];
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t n = q / (g.out[0] * g.out[1]), od = q / g.out[1] % g.out[0], oh = q % g.out[1];
    float* out_row = out + q * OW * c_out;
    for (int64_t o0 = 0; o0 < c_out; o0 += 8) {
      // Input channels of the chunk: its own 8 for groups of 2 or 4, its group's for 8 or 16.
      const int64_t cin0 = MODE == 8 ? o0 / cg * cg : o0;
      const __m256 b = _mm256_loadu_ps(bias_all + o0);
      // ceil(OW / 6) tiles of near-equal width (7 -> 4 + 3, not 6 + 1: a narrow tile has too few
      // independent accumulators to hide the FMA latency).
      const int64_t tiles = (OW + 5) / 6;
      for (int64_t t = 0, ow = 0; t < tiles; ++t) {
        const int64_t width = OW / tiles + (t < OW % tiles ? 1 : 0);
        const bool padded = ow * g.stride[2] - g.pad[2] < 0 ||
                            (ow + width - 1) * g.stride[2] - g.pad[2] + (g.k[2] - 1) * g.dil[2] >= g.in[2];
        if (padded) tile_pixels<MODE, true>(width, r, x, ow, n, od, oh, o0, cin0, b, out_row);
        else tile_pixels<MODE, false>(width, r, x, ow, n, od, oh, o0, cin0, b, out_row);
        ow += width;
      }
    }
  }
}

template <int MODE>
void run(const ConvGeometry& g, const float* x, const float* w, const float* bias, int64_t bias_stride, float* out) {
  const int64_t c_out = g.c_out, OW = g.out[2];
  const std::vector<float> zeros(static_cast<size_t>(std::max<int64_t>(g.cg_out, 8)), 0.0f);
  const Row r{&g, w, g.cg_out, zeros.data()};
  std::vector<float> bias_all(static_cast<size_t>(c_out), 0.0f);
  if (bias)
    for (int64_t o = 0; o < c_out; ++o) bias_all[o] = bias[o * bias_stride];
  const int64_t rows = g.batch * g.out[0] * g.out[1];
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(OW * c_out * g.taps() * g.cg_out, 1));
  parallel_for(rows, grain, [&](int64_t q0, int64_t q1) { run_rows<MODE>(r, q0, q1, x, bias_all.data(), out); });
}

#endif  // LG_CPU_AVX2_KERNELS

}  // namespace

bool conv_nhwc_grouped_applies(const ConvGeometry& g) {
  const int64_t cg = g.cg_out;
  return panel_gemm_supported() && g.groups > 1 && g.cg_in == cg && (cg == 2 || cg == 4 || cg == 8 || cg == 16) &&
         g.c_out % 8 == 0 && g.x_stride[1] == 1;
}

void conv_nhwc_grouped(const ConvGeometry& g, const float* x, const float* w, const float* bias, int64_t bias_stride,
                       float* out) {
  LG_ASSERT(conv_nhwc_grouped_applies(g), "conv_nhwc_grouped called outside its conditions");
#if LG_CPU_AVX2_KERNELS
  if (g.cg_out == 2) run<2>(g, x, w, bias, bias_stride, out);
  else if (g.cg_out == 4) run<4>(g, x, w, bias, bias_stride, out);
  else run<8>(g, x, w, bias, bias_stride, out);
#endif
}

}  // namespace lg::cpu

// The NHWC depthwise convolution on AVX2+FMA and on AVX-512, output row by output row. A block
// of up to 8 neighbouring outputs whose windows lie inside the input along W keeps 8 sums per
// channel chunk in registers while the taps go by: one weight load serves 8 fused multiply-adds,
// and 8 independent sums cover the FMA latency. Shorter blocks (the last outputs of a row, and
// the border outputs, whose taps in the padding are skipped) take 2, 4 or 4 channel chunks at
// once instead, so they keep several independent sums too. (The kernel this replaced summed one
// output at a time, 4 accumulators over 32 channels: two loads per FMA and a 9-deep dependency
// chain per register; MobileNetV2's batch-16 depthwise layers ran 1.7-1.8x slower.)
//
// One body serves both instruction sets: it is written on GCC vector types, whose arithmetic
// compiles to the instructions of the function it is inlined into, so output_rows_avx2 and
// output_rows_avx512 below differ only in their target attribute and vector width. (Helpers
// written with intrinsics cannot be shared that way: GCC will not inline an AVX2 helper into a
// template that has no target of its own.) a += x * w contracts to one FMA (GCC and Clang
// contract within an expression by default).
#include "cpu/conv_nhwc_depthwise.h"

#include <algorithm>
#include <vector>

#include <layoutguard/error.h>

#include "cpu/avx2_target.h"
#include "cpu/parallel.h"

// Vector-typed values are passed between the always-inline helpers only, never across a call,
// so the ABI note GCC gives for them does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace lg::cpu {

#if LG_CPU_AVX2_KERNELS

namespace {

// Channel chunks: 16 floats (zmm), 8 (ymm), and 1 for the last channels of a C that is not a
// multiple of 8.
struct Lanes16 {
  typedef float V __attribute__((vector_size(64)));
  static constexpr int64_t kWidth = 16;
};
struct Lanes8 {
  typedef float V __attribute__((vector_size(32)));
  static constexpr int64_t kWidth = 8;
};
struct Lanes1 {
  typedef float V;
  static constexpr int64_t kWidth = 1;
};

template <class L>
[[gnu::always_inline]] inline typename L::V load(const float* p) {
  typename L::V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <class L>
[[gnu::always_inline]] inline void store(float* p, typename L::V v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// One kernel row that lies inside the input for the output row at hand: the input row at
// pixel 0, channel 0, and the weights of its first tap (w[tap * C + c], taps along W adjacent).
struct KernelRow {
  const float* x;
  const float* w;
};

// What stays fixed along an output row.
struct RowWalk {
  int64_t C = 0, out_w = 0, in_w = 0, k_w = 0;
  int64_t stride = 0, pad = 0, dil = 0;  // along W, in pixels
  int64_t pixel = 0;                     // input pixel step, floats
  int64_t lo = 0, hi = 0;                // outputs [lo, hi) have every tap inside the input
  const float* start = nullptr;          // C floats: the bias, or zeros
};

#define LG_DW_FOR_EACH_SLOT(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

// The taps along W of output ow that read inside the input: [*lo, *hi).
inline void taps_inside(const RowWalk& k, int64_t ow, int64_t* lo, int64_t* hi) {
  const int64_t iw0 = ow * k.stride - k.pad;  // input column under tap 0
  *lo = iw0 >= 0 ? 0 : (-iw0 + k.dil - 1) / k.dil;
  *hi = k.in_w - 1 - iw0 < 0 ? 0 : std::min(k.k_w, (k.in_w - 1 - iw0) / k.dil + 1);
  if (*lo > *hi) *lo = *hi;
}

// A block of R outputs from ow x CB channel chunks from c (L::kWidth channels each), over the
// taps [kw_lo, kw_hi) along W of every kernel row. R x CB <= 8 accumulators, slot q holding
// output q / CB, chunk q % CB: fewer outputs get more chunks, so the border outputs and the
// last ones of a row still have independent sums to cover the FMA latency. Named
// accumulators, not an array: GCC 12 keeps arrays of vectors in memory.
template <class L, int R, int CB>
[[gnu::always_inline]] inline void block(const KernelRow* rows, int64_t n_rows, const RowWalk& k, int64_t ow, int64_t c,
                                         int64_t kw_lo, int64_t kw_hi, float* out) {
  static_assert(R >= 1 && CB >= 1 && CB <= 4 && R * CB <= 8);
  using V = typename L::V;
  constexpr int64_t W = L::kWidth;
  const V s0 = load<L>(k.start + c), s1 = CB > 1 ? load<L>(k.start + c + W) : s0,
          s2 = CB > 2 ? load<L>(k.start + c + 2 * W) : s0, s3 = CB > 3 ? load<L>(k.start + c + 3 * W) : s0;
#define LG_DW_CHUNK(v, q) ((q) % CB == 0 ? v##0 : (q) % CB == 1 ? v##1 : (q) % CB == 2 ? v##2 : v##3)
  V a0 = LG_DW_CHUNK(s, 0), a1 = LG_DW_CHUNK(s, 1), a2 = LG_DW_CHUNK(s, 2), a3 = LG_DW_CHUNK(s, 3),
    a4 = LG_DW_CHUNK(s, 4), a5 = LG_DW_CHUNK(s, 5), a6 = LG_DW_CHUNK(s, 6), a7 = LG_DW_CHUNK(s, 7);
  const int64_t out_step = k.stride * k.pixel, tap_step = k.dil * k.pixel;
  const int64_t first = (ow * k.stride - k.pad + kw_lo * k.dil) * k.pixel + c;
  for (int64_t i = 0; i < n_rows; ++i) {
    const float* x = rows[i].x + first;
    const float* w = rows[i].w + kw_lo * k.C + c;
    for (int64_t kw = kw_lo; kw < kw_hi; ++kw, x += tap_step, w += k.C) {
      const V w0 = load<L>(w), w1 = CB > 1 ? load<L>(w + W) : w0, w2 = CB > 2 ? load<L>(w + 2 * W) : w0,
              w3 = CB > 3 ? load<L>(w + 3 * W) : w0;
#define LG_DW_TAP(q) \
  if constexpr ((q) < R * CB) a##q += load<L>(x + (q) / CB * out_step + (q) % CB * W) * LG_DW_CHUNK(w, q);
      LG_DW_FOR_EACH_SLOT(LG_DW_TAP)
#undef LG_DW_TAP
      (void)w1, (void)w2, (void)w3;
    }
  }
#define LG_DW_STORE(q) \
  if constexpr ((q) < R * CB) store<L>(out + (q) / CB * k.C + c + (q) % CB * W, a##q);
  LG_DW_FOR_EACH_SLOT(LG_DW_STORE)
#undef LG_DW_STORE
#undef LG_DW_CHUNK
  (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6, (void)a7;
}

// Outputs ow .. ow + R over every channel, taps [kw_lo, kw_hi): CB wide chunks at a time
// (CB = 8 / R, at most 4), then single wide chunks, then a ymm chunk (when the wide one is
// zmm), then single channels.
template <class L, int R>
[[gnu::always_inline]] inline void outputs(const KernelRow* rows, int64_t n_rows, const RowWalk& k, int64_t ow,
                                           int64_t kw_lo, int64_t kw_hi, float* out) {
  constexpr int CB = std::min(4, 8 / R);
  constexpr int64_t W = L::kWidth;
  int64_t c = 0;
  for (; c + CB * W <= k.C; c += CB * W) block<L, R, CB>(rows, n_rows, k, ow, c, kw_lo, kw_hi, out);
  for (; c + W <= k.C; c += W) block<L, R, 1>(rows, n_rows, k, ow, c, kw_lo, kw_hi, out);
  if constexpr (W > 8) {
    if (c + 8 <= k.C) {
      block<Lanes8, R, 1>(rows, n_rows, k, ow, c, kw_lo, kw_hi, out);
      c += 8;
    }
  }
  for (; c < k.C; ++c) block<Lanes1, R, 1>(rows, n_rows, k, ow, c, kw_lo, kw_hi, out);
}

// Output ow, whose window crosses the padding along W: the taps there are skipped.
template <class L>
[[gnu::always_inline]] inline void border_output(const KernelRow* rows, int64_t n_rows, const RowWalk& k, int64_t ow,
                                                 float* out) {
  int64_t lo, hi;
  taps_inside(k, ow, &lo, &hi);
  outputs<L, 1>(rows, n_rows, k, ow, lo, hi, out + ow * k.C);
}

// One output row (dense, out_w x C): the left border, the inside in runs of 8, 4, 2 and 1
// outputs, the right border. (No lambdas here: their bodies would not take the caller's target.)
template <class L>
[[gnu::always_inline]] inline void output_row(const KernelRow* rows, int64_t n_rows, const RowWalk& k, float* out) {
  int64_t ow = 0;
  for (; ow < k.lo; ++ow) border_output<L>(rows, n_rows, k, ow, out);
  for (; ow + 8 <= k.hi; ow += 8) outputs<L, 8>(rows, n_rows, k, ow, 0, k.k_w, out + ow * k.C);
  if (ow + 4 <= k.hi) outputs<L, 4>(rows, n_rows, k, ow, 0, k.k_w, out + ow * k.C), ow += 4;
  if (ow + 2 <= k.hi) outputs<L, 2>(rows, n_rows, k, ow, 0, k.k_w, out + ow * k.C), ow += 2;
  if (ow < k.hi) outputs<L, 1>(rows, n_rows, k, ow, 0, k.k_w, out + ow * k.C), ++ow;
  for (; ow < k.out_w; ++ow) border_output<L>(rows, n_rows, k, ow, out);
}

// The kernel rows of output row (n, od, oh) that lie inside the input.
int64_t kernel_rows(const ConvGeometry& g, const float* x, const float* w, int64_t n, int64_t od, int64_t oh,
                    KernelRow* rows) {
  int64_t count = 0;
  for (int64_t kd = 0; kd < g.k[0]; ++kd) {
    const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
    if (id < 0 || id >= g.in[0]) continue;
    for (int64_t kh = 0; kh < g.k[1]; ++kh) {
      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
      if (ih < 0 || ih >= g.in[1]) continue;
      rows[count++] = {x + g.x_offset(n, 0, id, ih, 0), w + (kd * g.k[1] + kh) * g.k[2] * g.c_out};
    }
  }
  return count;
}

// Output rows [r0, r1) (rows in (n, od, oh) order), on one instruction set.
template <class L>
[[gnu::always_inline]] inline void output_rows(const ConvGeometry& g, const float* x, const float* w, const RowWalk& k,
                                               int64_t r0, int64_t r1, float* out) {
  std::vector<KernelRow> rows(static_cast<size_t>(g.k[0] * g.k[1]));
  const int64_t OD = g.out[0], OH = g.out[1];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n_rows = kernel_rows(g, x, w, r / (OD * OH), r / OH % OD, r % OH, rows.data());
    output_row<L>(rows.data(), n_rows, k, out + r * k.out_w * k.C);
  }
}

LG_AVX2_FMA void output_rows_avx2(const ConvGeometry& g, const float* x, const float* w, const RowWalk& k, int64_t r0,
                                  int64_t r1, float* out) {
  output_rows<Lanes8>(g, x, w, k, r0, r1, out);
}

LG_AVX512 void output_rows_avx512(const ConvGeometry& g, const float* x, const float* w, const RowWalk& k, int64_t r0,
                                  int64_t r1, float* out) {
  output_rows<Lanes16>(g, x, w, k, r0, r1, out);
}

}  // namespace

bool conv_nhwc_depthwise_vector_applies(const ConvGeometry& g) {
  return g.x_stride[1] == 1 && cpu_has_avx2() && cpu_has_fma();
}

const char* conv_nhwc_depthwise_vector_name() {
  return use_avx512() ? "conv_nhwc_depthwise_avx512_cpu" : "conv_nhwc_depthwise_avx2_cpu";
}

void conv_nhwc_depthwise_vector(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                              int64_t bias_stride, float* out) {
  const int64_t C = g.c_out;
  std::vector<float> start(static_cast<size_t>(C), 0.0f);
  if (bias)
    for (int64_t c = 0; c < C; ++c) start[static_cast<size_t>(c)] = bias[c * bias_stride];
  RowWalk k;
  k.C = C, k.out_w = g.out[2], k.in_w = g.in[2], k.k_w = g.k[2];
  k.stride = g.stride[2], k.pad = g.pad[2], k.dil = g.dil[2], k.pixel = g.x_stride[4];
  // Output ow reads input columns ow * stride - pad + kw * dil, kw < k_w: all inside for
  // ow >= lo (first tap >= 0) and ow < hi (last tap < in_w).
  k.lo = std::min(k.out_w, (k.pad + k.stride - 1) / k.stride);
  const int64_t last = k.in_w - 1 + k.pad - (k.k_w - 1) * k.dil;  // ow * stride <= last
  k.hi = last < 0 ? k.lo : std::clamp<int64_t>(last / k.stride + 1, k.lo, k.out_w);
  k.start = start.data();
  const int64_t rows = g.batch * g.out[0] * g.out[1];
  const bool wide = use_avx512();
  // At least ~16k multiply-adds per thread.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(k.out_w * C * g.taps(), 1));
  cpu::parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
    if (wide) output_rows_avx512(g, x, w, k, r0, r1, out);
    else output_rows_avx2(g, x, w, k, r0, r1, out);
  });
}

#else

bool conv_nhwc_depthwise_vector_applies(const ConvGeometry&) { return false; }
const char* conv_nhwc_depthwise_vector_name() { return "conv_nhwc_depthwise_cpu"; }
void conv_nhwc_depthwise_vector(const ConvGeometry&, const float*, const float*, const float*, int64_t, float*) {
  LG_ASSERT(false, "conv_nhwc_depthwise_vector needs AVX2 and FMA");
}

#endif

}  // namespace lg::cpu

// CPU convolution kernels (2-D given as 3-D with depth 1), native in both layouts:
//   NHWC: out is the [N*D*H*W, C_out] matrix; an im2col row per output pixel (taps x channels,
//         channels innermost, copied in runs) times the weight as [taps x C_in, C_out]. A 1x1
//         stride-1 convolution of dense NHWC input is one GEMM on the input itself. float32 on
//         AVX2 CPUs runs the panel GEMM over cached weight panels (cpu/panel_gemm.h); float64
//         and other CPUs run OpenBLAS (no transposed operand: it runs that form faster).
//   NCHW: per image, out is [C_out, D*H*W] = weight [C_out, C*taps] x im2col [C*taps, D*H*W].
//   Depthwise (one channel per group) skips the GEMM: NHWC vectorises across channels, NCHW
//         along output rows.
// Threads: either the kernel's own loop runs on OpenMP with single-threaded BLAS inside, or the
// loop runs serially and BLAS threads itself (cpu/parallel.h) -- never both.
#include <algorithm>

#include <omp.h>
#include <type_traits>
#include <vector>

#include "cpu/avx2_target.h"
#include "cpu/conv_geometry.h"
#include "cpu/conv_nhwc_depthwise.h"
#include "cpu/conv_nhwc_grouped.h"
#include "cpu/gemm.h"
#include "cpu/packed_weights.h"
#include "cpu/panel_gemm.h"
#include "cpu/parallel.h"
#include "cpu/register.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using cpu::ConvGeometry;
using dispatch::ConvParams;

// Memory orders (outermost first) of the 5-D weight (O, I, kD, kH, kW) each path reads.
using cpu::kOrderTapsIO;                                    // [tap][i][o]: NHWC GEMM B (K x C_out)
constexpr std::array<int, 5> kOrderOITaps{0, 1, 2, 3, 4};  // [o][i][tap]: NCHW GEMM rows
constexpr std::array<int, 5> kOrderTapsO{2, 3, 4, 0, 1};   // [tap][o]: NHWC depthwise

// The range of output positions o (of n) whose input position o * s - p + off lies in [0, in).
inline void valid_range(int64_t n, int64_t in, int64_t s, int64_t p, int64_t off, int64_t* lo, int64_t* hi) {
  const int64_t shift = p - off;  // in-position = o * s - shift
  *lo = shift > 0 ? (shift + s - 1) / s : 0;
  *hi = in - 1 + shift >= 0 ? std::min(n, (in - 1 + shift) / s + 1) : 0;
  if (*lo > *hi) *lo = *hi;
}

// Fills `rows` rows of width c (row stride ld) with the bias, or zeros.
template <typename T>
void fill_bias_rows(T* out, int64_t rows, int64_t c, int64_t ld, const T* bias, int64_t bias_stride) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) out[r * ld + j] = bias ? bias[j * bias_stride] : T(0);
}

// ---- NHWC, GEMM ----

// The NHWC GEMM's B, one [taps x cg_in, cg_out] matrix per group: either the panel GEMM's
// cached panels (float32 on AVX2 CPUs), or the (tap, i, o)-ordered weight for BLAS.
template <typename T>
struct NhwcWeight {
  const T* plain = nullptr;       // row stride C_out; group gi's columns start at gi * cg_out
  const float* panels = nullptr;  // group gi at gi * panel_stride
  int64_t panel_stride = 0;

  // C[rows x cg_out] (+)= A[rows x K] * B of group gi. `parallel`: thread the product itself.
  // `store`: how the panel GEMM writes C (cpu::CStore); BLAS ignores it.
  void gemm(const ConvGeometry& g, int64_t gi, int64_t rows, int64_t k, const T* a, int64_t lda, bool accumulate, T* c,
            bool parallel, cpu::CStore store = cpu::CStore::kCached) const {
    if constexpr (std::is_same_v<T, float>) {
      if (panels) {
        const float* b = panels + gi * panel_stride;
        if (parallel) cpu::panel_gemm_parallel(rows, g.cg_out, k, a, lda, b, accumulate, c, g.c_out, store);
        else cpu::panel_gemm(rows, g.cg_out, k, a, lda, b, accumulate, c, g.c_out, store);
        return;
      }
    }
    const T beta = accumulate ? T(1) : T(0);
    if (parallel) cpu::gemm_split_rows(false, false, rows, g.cg_out, k, T(1), a, lda, plain + gi * g.cg_out, g.c_out, beta, c, g.c_out);
    else cpu::gemm(false, false, rows, g.cg_out, k, T(1), a, lda, plain + gi * g.cg_out, g.c_out, beta, c, g.c_out);
  }
};

// col[r][tap][c] for output rows r0 .. r0 + rows of group gi.
template <typename T>
void im2col_rows(const ConvGeometry& g, const T* x, int64_t gi, int64_t r0, int64_t rows, T* col) {
  const int64_t P = g.out_plane(), ohw = g.out[1] * g.out[2], cg = g.cg_in;
  // Channel runs of neighbouring pixels touch (dense NHWC with one group, no W dilation).
  const bool runs = (g.x_stride[1] == 1 || cg == 1) && g.x_stride[4] == cg && g.dil[2] == 1;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = (r0 + r) / P, p = (r0 + r) % P;
    const int64_t od = p / ohw, oh = p / g.out[2] % g.out[1], ow = p % g.out[2];
    T* dst = col + r * g.taps() * cg;
    for (int64_t kd = 0; kd < g.k[0]; ++kd) {
      const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
        if (runs) {
          // The kernel row's taps are adjacent pixels, and pixels are adjacent channel runs:
          // one copy of (valid taps x cg) values, zeros for the taps in the padding.
          const int64_t iw0 = ow * g.stride[2] - g.pad[2];
          const int64_t lo = std::clamp<int64_t>(-iw0, 0, g.k[2]), hi = std::clamp<int64_t>(g.in[2] - iw0, lo, g.k[2]);
          const bool inside = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1];
          if (!inside || lo == hi) {
            std::fill(dst, dst + g.k[2] * cg, T(0));
          } else {
            std::fill(dst, dst + lo * cg, T(0));
            const T* src = x + g.x_offset(n, gi * cg, id, ih, iw0 + lo);
            std::copy(src, src + (hi - lo) * cg, dst + lo * cg);
            std::fill(dst + hi * cg, dst + g.k[2] * cg, T(0));
          }
          dst += g.k[2] * cg;
          continue;
        }
        for (int64_t kw = 0; kw < g.k[2]; ++kw, dst += cg) {
          const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dil[2];
          if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2]) {
            std::fill(dst, dst + cg, T(0));
            continue;
          }
          const T* src = x + g.x_offset(n, gi * cg, id, ih, iw);
          if (g.x_stride[1] == 1) std::copy(src, src + cg, dst);
          else for (int64_t c = 0; c < cg; ++c) dst[c] = src[c * g.x_stride[1]];
        }
      }
    }
  }
}

// How the panel GEMM writes a float32 NHWC convolution's output: streamed to memory
// (cpu::CStore) when it is much larger than a last-level cache, which it leaves anyway, and
// no bias was written into it first. A normal store reads each line before writing it; with
// few input channels that read is a third of the layer's traffic (docs/performance.md).
cpu::CStore output_store(const ConvGeometry& g, bool bias) {
  constexpr int64_t kStreamedOutputBytes = int64_t{24} << 20;
  const int64_t bytes = g.batch * g.out_plane() * g.c_out * static_cast<int64_t>(sizeof(float));
  return !bias && bytes > kStreamedOutputBytes ? cpu::CStore::kStreamed : cpu::CStore::kCached;
}

// The NHWC convolutions read in place tap by tap (conv_nhwc_taps): one group and dense
// channels, so each tap of each output pixel is one run of C_in floats in the input, and at
// least kMinTapRun of them, so a run amortises the tile's six row pointers. Any kernel, stride,
// dilation and padding; K is blocked by whole taps.
constexpr int64_t kMinTapRun = 16;
bool conv_nhwc_taps_applies(const ConvGeometry& g) {
  return cpu::panel_gemm_supported() && g.groups == 1 && g.x_stride[1] == 1 && g.cg_in >= kMinTapRun;
}

// table[i * taps + t] = the input at channel 0 under tap t of output pixel p0 + i (pixels
// row-major over n, d, h, w; taps over kd, kh, kw), null where the tap lies in the padding.
void tap_table(const ConvGeometry& g, const float* x, int64_t p0, int64_t count, const float** table) {
  const int64_t P = g.out_plane(), ohw = g.out[1] * g.out[2];
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = (p0 + i) / P, p = (p0 + i) % P;
    const int64_t od = p / ohw, oh = p / g.out[2] % g.out[1], ow = p % g.out[2];
    for (int64_t kd = 0; kd < g.k[0]; ++kd) {
      const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
        const bool inside = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1];
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dil[2];
          *table++ = inside && iw >= 0 && iw < g.in[2] ? x + g.x_offset(n, 0, id, ih, iw) : nullptr;
        }
      }
    }
  }
}

// NHWC convolution as one indirect GEMM over all output pixels: pixel i's A row is its taps'
// channel runs read where they lie in the input, so there is no im2col copy and, unlike the
// row-by-row form below, 6-row tiles run across output rows (a 14- or 7-pixel row no longer
// leaves most of its last tile empty) and border pixels need no separate pass. Small maps
// (fewer than 2 x kMinRows pixels) with at least two 64-column strips split the strips over
// the threads, so each reads only its share of the weights; everything else splits the pixels.
void conv_nhwc_taps(const ConvGeometry& g, const float* x, const float* panels, const float* bias, int64_t bias_stride,
                    float* out) {
  dispatch::note_kernel("conv_nhwc_indirect_gemm_cpu");
  const int64_t M = g.batch * g.out_plane(), cout = g.c_out, taps = g.taps(), k = taps * g.cg_in;
  constexpr int64_t kChunk = 144;    // pixels per indirection table
  constexpr int64_t kMinRows = 192;  // pixels per thread before pixels rather than strips are split
  constexpr int64_t kStrip = 64;     // columns per strip when they are split
  const cpu::CStore store = output_store(g, bias != nullptr);
  const auto pixels_by_columns = [&](int64_t p0, int64_t p1, int64_t c0, int64_t c1) {
    std::vector<const float*> table(static_cast<size_t>(std::min(kChunk, p1 - p0) * taps));
    for (int64_t q = p0; q < p1; q += kChunk) {
      const int64_t count = std::min(kChunk, p1 - q);
      tap_table(g, x, q, count, table.data());
      float* o = out + q * cout + c0;
      if (bias) fill_bias_rows(o, count, c1 - c0, cout, bias + c0 * bias_stride, bias_stride);
      cpu::panel_gemm_indirect(count, c1 - c0, taps, table.data(), g.cg_in, panels + c0 * k, bias != nullptr, o, cout,
                               store);
    }
  };
  const int64_t strips = (cout + kStrip - 1) / kStrip;
  if (!cpu::would_parallelise(M, kMinRows) && cpu::would_parallelise(strips, 1)) {
    cpu::parallel_for(strips, 1, [&](int64_t j0, int64_t j1) {
      pixels_by_columns(0, M, j0 * kStrip, std::min(cout, j1 * kStrip));
    });
    return;
  }
  cpu::parallel_for(M, kMinRows / 4, [&](int64_t p0, int64_t p1) { pixels_by_columns(p0, p1, 0, cout); });
}

// The NHWC convolutions with too few channels for conv_nhwc_taps (the 3-channel stem) that run
// without im2col (conv_nhwc_rows): one group, one depth tap, channels dense and pixels adjacent
// along W, so each kernel row's taps x channels are one run in memory. Narrow output rows stay
// on im2col: a row is split into 6-pixel tiles, and a 7- or 14-pixel row leaves most of its
// last tile empty.
bool conv_nhwc_rows_applies(const ConvGeometry& g) {
  // On AVX2, 128->128 3x3 at 28x28 ran 10 % slower this way than through im2col
  // (docs/performance.md) when each 6-row tile of a row met every B strip in turn; the walk
  // now reuses a strip over 72-row blocks, but only the stem takes this path and the limit
  // has not been measured again.
  const bool wide_tile = cpu::use_avx512();
  return cpu::panel_gemm_supported() && (wide_tile || g.c_out <= 64) && g.groups == 1 && g.k[0] == 1 &&
         g.dil[2] == 1 && g.x_stride[1] == 1 && g.x_stride[4] == g.cg_in && g.out[2] >= 24;
}

// NHWC convolution (and NDHWC with one depth tap) as an indirect GEMM over each output row:
// pixel i's A row is its kernel rows' runs read where they lie in the input (each stride x the
// pixel step after the previous pixel's), so im2col's copy of every row (K floats written, then
// read again) is gone. Only the pixels whose window crosses the left or right padding go
// through im2col; kernel rows in the top or bottom padding are null runs, skipped.
void conv_nhwc_rows(const ConvGeometry& g, const float* x, const float* panels, const float* bias,
                    int64_t bias_stride, float* out) {
  dispatch::note_kernel("conv_nhwc_implicit_gemm_cpu");
  const int64_t OH = g.out[1], OW = g.out[2], cout = g.c_out, kg = g.taps() * g.cg_in, kh_runs = g.k[1];
  const int64_t sw = g.stride[2], pw = g.pad[2];
  // Output columns [lo, hi) read only real input columns: lo * sw >= pw and
  // (hi - 1) * sw - pw + k - 1 < W.
  const int64_t lo = std::min(OW, (pw + sw - 1) / sw), last = g.in[2] - g.k[2] + pw;
  const int64_t hi = last < 0 ? lo : std::clamp<int64_t>(last / sw + 1, lo, OW);
  const int64_t OD = g.out[0], rows = g.batch * OD * OH;  // output rows, (n, od, oh) order
  const cpu::CStore store = output_store(g, bias != nullptr);
  cpu::parallel_for(rows, 1, [&](int64_t r0, int64_t r1) {
    std::vector<float> col(static_cast<size_t>(std::max(lo, OW - hi) * kg));
    std::vector<const float*> table(static_cast<size_t>((hi - lo) * kh_runs));
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t n = row / (OD * OH), od = row / OH % OD, oh = row % OH;
      const int64_t id = od * g.stride[0] - g.pad[0];  // one depth tap (k[0] == 1)
      const bool depth_inside = id >= 0 && id < g.in[0];
      float* o = out + row * OW * cout;
      if (bias) fill_bias_rows(o, OW, cout, cout, bias, bias_stride);
      const bool acc = bias != nullptr;
      if (hi > lo) {
        for (int64_t kh = 0; kh < kh_runs; ++kh) {
          const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
          const bool inside = depth_inside && ih >= 0 && ih < g.in[1];
          const float* first = inside ? x + g.x_offset(n, 0, id, ih, lo * sw - pw) : nullptr;
          for (int64_t i = 0; i < hi - lo; ++i) table[i * kh_runs + kh] = first ? first + i * sw * g.x_stride[4] : nullptr;
        }
        cpu::panel_gemm_indirect(hi - lo, cout, kh_runs, table.data(), g.k[2] * g.cg_in, panels, acc, o + lo * cout,
                                 cout, store);
      }
      // The border pixels [ow0, ow0 + count), through im2col rows (row index = n * plane +
      // (od * OH + oh) * OW + ow).
      const auto through_im2col = [&](int64_t ow0, int64_t count) {
        if (count <= 0) return;
        im2col_rows(g, x, 0, row * OW + ow0, count, col.data());
        cpu::panel_gemm(count, cout, kg, col.data(), kg, panels, acc, o + ow0 * cout, cout, store);
      };
      through_im2col(0, lo);
      through_im2col(hi, OW - hi);
    }
  });
}

template <typename T>
void conv_nhwc_gemm(const ConvGeometry& g, const T* x, const NhwcWeight<T>& w, const T* bias, int64_t bias_stride, T* out) {
  const int64_t M = g.batch * g.out_plane(), kg = g.taps() * g.cg_in, cout = g.c_out;
  const bool accumulate = bias != nullptr;  // onto the bias rows
  int64_t ld = 0;
  if (g.pointwise_kernel() && g.input_rows_uniform(&ld)) {
    dispatch::note_kernel("conv_nhwc_1x1_gemm_cpu");
    if (bias) fill_bias_rows(out, M, cout, cout, bias, bias_stride);
    const cpu::CStore store = output_store(g, bias != nullptr);
    for (int64_t gi = 0; gi < g.groups; ++gi)
      w.gemm(g, gi, M, g.cg_in, x + gi * g.cg_in, ld, accumulate, out + gi * g.cg_out, true, store);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (w.panels && conv_nhwc_taps_applies(g)) {
      conv_nhwc_taps(g, x, w.panels, bias, bias_stride, out);
      return;
    }
    if (w.panels && conv_nhwc_rows_applies(g)) {
      conv_nhwc_rows(g, x, w.panels, bias, bias_stride, out);
      return;
    }
  }
  dispatch::note_kernel("conv_nhwc_im2col_gemm_cpu");
  // Tiles of output rows whose im2col block stays around 1 MiB (cache-sized, per thread), and
  // at least one tile per thread: with narrow groups (ResNeXt: K = 9 x 4) the cache bound
  // alone gave one tile for a whole 56x56 image, so one thread. (Four tiles per thread cost
  // up to 1.5x on wide batch-1 layers: every tile's GEMM packs the weights again.)
  const int64_t threads = std::max<int64_t>(1, omp_get_max_threads());
  const int64_t cache_rows = (int64_t{1} << 18) / std::max<int64_t>(kg, 1);
  const int64_t tile = std::clamp<int64_t>(std::min(cache_rows, (M + threads - 1) / threads), 16, 4096);
  const int64_t tiles = (M + tile - 1) / tile;
  auto run_tiles = [&](int64_t t0, int64_t t1) {
    std::vector<T> col(static_cast<size_t>(std::min(tile, M) * kg));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t r0 = t * tile, rows = std::min(tile, M - r0);
      if (bias) fill_bias_rows(out + r0 * cout, rows, cout, cout, bias, bias_stride);
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        im2col_rows(g, x, gi, r0, rows, col.data());
        w.gemm(g, gi, rows, kg, col.data(), kg, accumulate, out + r0 * cout + gi * g.cg_out, false);
      }
    }
  };
  if (cpu::would_parallelise(tiles, 1)) cpu::parallel_for(tiles, 1, run_tiles);
  else run_tiles(0, tiles);
}

// ---- NCHW, GEMM ----

// col[(c, tap)][p] for the output plane of image n, group gi.
template <typename T>
void im2col_planes(const ConvGeometry& g, const T* x, int64_t n, int64_t gi, T* col) {
  const int64_t P = g.out_plane(), OW = g.out[2];
  T* dst = col;
  for (int64_t c = 0; c < g.cg_in; ++c)
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw, dst += P) {
          int64_t lo, hi;
          valid_range(OW, g.in[2], g.stride[2], g.pad[2], kw * g.dil[2], &lo, &hi);
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
              T* row = dst + (od * g.out[1] + oh) * OW;
              const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
              if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
                std::fill(row, row + OW, T(0));
                continue;
              }
              const T* src = x + g.x_offset(n, gi * g.cg_in + c, id, ih, 0);
              const int64_t sw = g.stride[2] * g.x_stride[4];
              const T* s0 = src + (kw * g.dil[2] - g.pad[2]) * g.x_stride[4];
              std::fill(row, row + lo, T(0));
              for (int64_t ow = lo; ow < hi; ++ow) row[ow] = s0[ow * sw];
              std::fill(row + hi, row + OW, T(0));
            }
          }
        }
}

template <typename T>
void conv_nchw_gemm(const ConvGeometry& g, const T* x, const T* w, const T* bias, int64_t bias_stride, T* out) {
  const int64_t P = g.out_plane(), kg = g.taps() * g.cg_in;
  const T beta = bias ? T(1) : T(0);
  int64_t ld = 0;
  const bool direct = g.pointwise_kernel() && g.input_planes_uniform(&ld);
  dispatch::note_kernel(direct ? "conv_nchw_1x1_gemm_cpu" : "conv_nchw_im2col_gemm_cpu");
  auto run_images = [&](int64_t n0, int64_t n1) {
    std::vector<T> col(direct ? 0 : static_cast<size_t>(kg * P));
    for (int64_t n = n0; n < n1; ++n) {
      T* out_n = out + n * g.c_out * P;
      if (bias)
        for (int64_t co = 0; co < g.c_out; ++co) std::fill(out_n + co * P, out_n + (co + 1) * P, bias[co * bias_stride]);
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        const T* b = nullptr;
        int64_t ldb = P;
        if (direct) {
          b = x + n * g.x_stride[0] + gi * g.cg_in * g.x_stride[1];
          ldb = ld;
        } else {
          im2col_planes(g, x, n, gi, col.data());
          b = col.data();
        }
        cpu::gemm(false, false, g.cg_out, P, kg, T(1), w + gi * g.cg_out * kg, kg, b, ldb, beta,
                  out_n + gi * g.cg_out * P, P);
      }
    }
  };
  if (cpu::would_parallelise(g.batch, 1)) cpu::parallel_for(g.batch, 1, run_images);
  else run_images(0, g.batch);
}

// ---- Depthwise (groups == C_in == C_out) ----

template <typename T>
void conv_nhwc_depthwise(const ConvGeometry& g, const T* x, const T* w, const T* bias, int64_t bias_stride, T* out) {
  dispatch::note_kernel("conv_nhwc_depthwise_cpu");
  const int64_t C = g.c_out, P = g.out_plane(), ohw = g.out[1] * g.out[2];
  const int64_t sc = g.x_stride[1];
  cpu::parallel_for(g.batch * P, std::max<int64_t>(1, 4096 / std::max<int64_t>(C * g.taps(), 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / P, p = r % P;
      const int64_t od = p / ohw, oh = p / g.out[2] % g.out[1], ow = p % g.out[2];
      T* o = out + r * C;
      for (int64_t c = 0; c < C; ++c) o[c] = bias ? bias[c * bias_stride] : T(0);
      cpu::for_each_valid_tap(g, x, w, C, n, od, oh, ow, [&](const T* xi, const T* wt) {
        if (sc == 1) {
          for (int64_t c = 0; c < C; ++c) o[c] += xi[c] * wt[c];
        } else {
          for (int64_t c = 0; c < C; ++c) o[c] += xi[c * sc] * wt[c];
        }
      });
    }
  });
}

template <typename T>
void conv_nchw_depthwise(const ConvGeometry& g, const T* x, const T* w, const T* bias, int64_t bias_stride, T* out) {
  dispatch::note_kernel("conv_nchw_depthwise_cpu");
  const int64_t C = g.c_out, P = g.out_plane(), OW = g.out[2], taps = g.taps();
  cpu::parallel_for(g.batch * C, std::max<int64_t>(1, 16384 / std::max<int64_t>(P * taps, 1)), [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / C, c = q % C;
      T* o = out + q * P;
      std::fill(o, o + P, bias ? bias[c * bias_stride] : T(0));
      for (int64_t kd = 0; kd < g.k[0]; ++kd)
        for (int64_t kh = 0; kh < g.k[1]; ++kh)
          for (int64_t kw = 0; kw < g.k[2]; ++kw) {
            const T wv = w[c * taps + (kd * g.k[1] + kh) * g.k[2] + kw];
            int64_t lo, hi;
            valid_range(OW, g.in[2], g.stride[2], g.pad[2], kw * g.dil[2], &lo, &hi);
            const int64_t sw = g.stride[2] * g.x_stride[4];
            for (int64_t od = 0; od < g.out[0]; ++od) {
              const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
              if (id < 0 || id >= g.in[0]) continue;
              for (int64_t oh = 0; oh < g.out[1]; ++oh) {
                const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
                if (ih < 0 || ih >= g.in[1]) continue;
                T* orow = o + (od * g.out[1] + oh) * OW;
                const T* s0 = x + g.x_offset(n, c, id, ih, 0) + (kw * g.dil[2] - g.pad[2]) * g.x_stride[4];
                if (sw == 1) {
                  for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += wv * s0[ow];
                } else {
                  for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += wv * s0[ow * sw];
                }
              }
            }
          }
    }
  });
}

// NHWC with a GEMM's worth of channels per group: for float32 on AVX2 CPUs the narrow-group
// direct kernel where it applies, else the panel GEMM; OpenBLAS otherwise.
template <typename T>
void conv_nhwc(const ConvGeometry& g, const T* x, const Tensor& weight, DType dt, const T* b, int64_t bs, T* o) {
  if constexpr (std::is_same_v<T, float>) {
    if (cpu::conv_nhwc_grouped_applies(g)) {
      dispatch::note_kernel("conv_nhwc_grouped_direct_cpu");
      cpu::conv_nhwc_grouped(g, x, cpu::packed_weight(weight, dt, kOrderTapsIO).template data_ptr<float>(), b, bs, o);
      return;
    }
    if (cpu::panel_gemm_supported()) {
      const Tensor panels = cpu::packed_weight_panels(weight, g.groups);
      conv_nhwc_gemm(g, x, NhwcWeight<T>{nullptr, panels.data_ptr<float>(), panels.numel() / g.groups}, b, bs, o);
      return;
    }
  }
  const Tensor plain = cpu::packed_weight(weight, dt, kOrderTapsIO);
  conv_nhwc_gemm(g, x, NhwcWeight<T>{plain.data_ptr<T>()}, b, bs, o);
}

template <typename T>
void conv_typed(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  const ConvGeometry g = cpu::conv_geometry(out, input, weight, p, false);
  const DType dt = input.dtype();
  const T* x = input.data_ptr<T>();
  T* o = out.data_ptr<T>();
  const T* b = bias.defined() ? bias.data_ptr<T>() : nullptr;
  const int64_t bs = bias.defined() ? bias.stride(0) : 0;
  const bool depthwise = g.groups > 1 && g.cg_in == 1 && g.cg_out == 1;
  if (p.channels_last) {
    if (depthwise) {
      const T* w = cpu::packed_weight(weight, dt, kOrderTapsO).template data_ptr<T>();
      if constexpr (std::is_same_v<T, float>) {
        if (cpu::conv_nhwc_depthwise_vector_applies(g)) {
          dispatch::note_kernel(cpu::conv_nhwc_depthwise_vector_name());
          cpu::conv_nhwc_depthwise_vector(g, x, w, b, bs, o);
          return;
        }
      }
      conv_nhwc_depthwise(g, x, w, b, bs, o);
    } else {
      conv_nhwc(g, x, weight, dt, b, bs, o);
    }
  } else {
    const Tensor w = cpu::packed_weight(weight, dt, kOrderOITaps);
    if (depthwise) conv_nchw_depthwise(g, x, w.data_ptr<T>(), b, bs, o);
    else conv_nchw_gemm(g, x, w.data_ptr<T>(), b, bs, o);
  }
}

void conv_cpu(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  if (out.numel() == 0) return;
  if (input.dtype() == kFloat64) conv_typed<double>(out, input, weight, bias, p);
  else conv_typed<float>(out, input, weight, bias, p);
}

}  // namespace

void register_conv_kernels(dispatch::KernelTable& table) {
  table.set<dispatch::OpId::conv2d>(DeviceType::CPU, conv_cpu, "conv_cpu");
  table.set<dispatch::OpId::conv3d>(DeviceType::CPU, conv_cpu, "conv_cpu");
}

}  // namespace lg

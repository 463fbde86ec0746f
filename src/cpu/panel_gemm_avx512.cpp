// The panel GEMM on AVX-512: a 6 x 64 register tile -- four 16-column panels of B, one zmm
// register per panel row -- so each step of k does 24 fused multiply-adds for four B loads and
// six broadcasts of A (each row's broadcast serves its four panels). 24 accumulators of the 32
// registers; on a CPU with two full-width FMA pipes (AMD Zen 5, Xeons with two 512-bit FMA
// units) that is twice the AVX2 tile's peak. B is the same panel packing as the AVX2 kernel's,
// so cached weights serve both, and A is packed in the same 6-row tiles when it is packed at
// all. The same tile serves panel_gemm_indirect (A read through a table of row pointers: the
// in-place convolutions).
//
// Shapes, by timing ResNet-50's layers against oneDNN in the same run (bench/cpu_ops
// --conv-only, 2-core AMD EPYC Zen 5 VM): a 12 x 32 tile over packed A was 4-5 % slower in the
// geomean and up to 13 % on the 64-channel layers, where packing A costs a fifth of the
// arithmetic. Reading A in place, for any number of panels, measured the same as packing it
// whenever n > 64, so A is packed only where its rows share L1 sets. k blocks of 256 and 384
// tied; 384 x 72 it is.
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "cpu/avx2_target.h"
#include "cpu/panel_gemm_kernels.h"

#include <layoutguard/error.h>

namespace lg::cpu {
#if LG_CPU_AVX2_KERNELS
namespace {

constexpr int64_t kStripPanels = 4;  // panels per tile
constexpr int64_t kKc = 384;         // k per block: a four-panel B strip is 96 KiB, in L2
constexpr int64_t kMc = 72;          // rows per A block
// The indirect GEMM's blocks (A read in place, never packed): k per run block and rows per
// row block.
constexpr int64_t kIndirectKc = 384;
constexpr int64_t kIndirectMc = 72;

// Lanes [0, valid) of a 16-lane mask (valid may be <= 0 or >= 16).
inline __mmask16 first_lanes(int64_t valid) {
  const int64_t v = std::clamp<int64_t>(valid, 0, 16);
  return static_cast<__mmask16>((uint32_t{1} << v) - 1);
}

// C row (+)= v over the lanes in `mask`; masked-off lanes of C are neither read nor written.
// `stream`: a whole, 64-byte aligned vector goes out as a non-temporal store (CStore).
LG_AVX512 inline void store_lanes(float* cr, __m512 v, bool accumulate, __mmask16 mask, bool stream) {
  if (stream && !accumulate && mask == 0xFFFF && (reinterpret_cast<uintptr_t>(cr) & 63) == 0) {
    _mm512_stream_ps(cr, v);
    return;
  }
  if (accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, cr));
  _mm512_mask_storeu_ps(cr, mask, v);
}

// The columns of C a strip stores: panel j's lanes, clamped to n.
struct StripMasks {
  __mmask16 m[kStripPanels];
};

// The masks of the strip starting at panel j of a C with n columns.
inline StripMasks strip_masks(int64_t n, int64_t j) {
  StripMasks masks;
  for (int64_t q = 0; q < kStripPanels; ++q) masks.m[q] = first_lanes(n - (j + q) * kPanelWidth);
  return masks;
}

// C tile (MR rows x NP panels) (+)= A tile * B strip, k running over runs [s0, s1) of run_len
// steps each, A read as kRead says (one run unless kIndirect). kIndirect: a run null for every
// row is skipped, a null run of some rows reads `zeros`. b is the strip at run s0, panel j of
// it j * bstride floats further. Named accumulators, not an array, so GCC keeps them in
// registers (see panel_gemm.cpp). Placement-stable: when changes elsewhere moved it, the
// 64-channel 1x1 layers at batch 16 ran 0.66-0.72x oneDNN instead of 1.04x with the same loop
// code; aligned, 0.94-1.3x (on a Zen 5 VM).
template <int MR, int NP, ARead kRead>
[[LG_PLACEMENT_STABLE]] LG_AVX512 void tile(const float* const* rows, int64_t row_stride, int64_t s0, int64_t s1, int64_t run_len,
                    const float* zeros, const float* b, int64_t bstride, float* c, int64_t ldc, bool accumulate,
                    StripMasks masks, bool stream) {
  static_assert(MR >= 1 && MR <= kTileRows && NP >= 1 && NP <= kStripPanels);
  constexpr int64_t step = kRead == ARead::kPacked ? kTileRows : 1;
  const __m512 z = _mm512_setzero_ps();
  __m512 c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z, c20 = z, c21 = z, c22 = z, c23 = z,
         c30 = z, c31 = z, c32 = z, c33 = z, c40 = z, c41 = z, c42 = z, c43 = z, c50 = z, c51 = z, c52 = z, c53 = z;
  for (int64_t s = s0; s < s1; ++s, b += run_len * kPanelWidth) {
    const float *a0, *a1, *a2, *a3, *a4, *a5;
    if (!tile_rows_of_run<MR, kRead>(rows, row_stride, s, zeros, &a0, &a1, &a2, &a3, &a4, &a5)) continue;
    const float *b0 = b, *b1 = b + std::min(1, NP - 1) * bstride, *b2 = b + std::min(2, NP - 1) * bstride,
                *b3 = b + std::min(3, NP - 1) * bstride;
#define LG_PANEL_ROW(r)                                                 \
  if constexpr (MR > r) {                                               \
    const __m512 av = _mm512_set1_ps(a##r[p * step]);                   \
    c##r##0 = _mm512_fmadd_ps(av, x0, c##r##0);                         \
    if constexpr (NP > 1) c##r##1 = _mm512_fmadd_ps(av, x1, c##r##1);   \
    if constexpr (NP > 2) c##r##2 = _mm512_fmadd_ps(av, x2, c##r##2);   \
    if constexpr (NP > 3) c##r##3 = _mm512_fmadd_ps(av, x3, c##r##3);   \
  }
    for (int64_t p = 0; p < run_len; ++p) {
      const int64_t o = p * kPanelWidth;
      const __m512 x0 = _mm512_loadu_ps(b0 + o);
      const __m512 x1 = NP > 1 ? _mm512_loadu_ps(b1 + o) : x0;
      const __m512 x2 = NP > 2 ? _mm512_loadu_ps(b2 + o) : x0;
      const __m512 x3 = NP > 3 ? _mm512_loadu_ps(b3 + o) : x0;
      LG_FOR_EACH_TILE_ROW(LG_PANEL_ROW)
    }
  }
#undef LG_PANEL_ROW
#define LG_STORE_ROW(r)                                                                                        \
  if constexpr (MR > r) {                                                                                      \
    float* cr = c + r * ldc;                                                                                   \
    store_lanes(cr, c##r##0, accumulate, masks.m[0], stream);                                                  \
    if constexpr (NP > 1) store_lanes(cr + kPanelWidth, c##r##1, accumulate, masks.m[1], stream);             \
    if constexpr (NP > 2) store_lanes(cr + 2 * kPanelWidth, c##r##2, accumulate, masks.m[2], stream);         \
    if constexpr (NP > 3) store_lanes(cr + 3 * kPanelWidth, c##r##3, accumulate, masks.m[3], stream);         \
  }
  LG_FOR_EACH_TILE_ROW(LG_STORE_ROW)
#undef LG_STORE_ROW
}

using TileFn = void (*)(const float* const*, int64_t, int64_t, int64_t, int64_t, const float*, const float*, int64_t,
                        float*, int64_t, bool, StripMasks, bool);

// kTiles[read][panels - 1][rows - 1]: every tile a block edge can need, for each way of reading A.
template <ARead kRead, int NP, size_t... R>
constexpr std::array<TileFn, kTileRows> rows_table(std::index_sequence<R...>) {
  return {&tile<static_cast<int>(R) + 1, NP, kRead>...};
}
template <ARead kRead, size_t... P>
constexpr std::array<std::array<TileFn, kTileRows>, kStripPanels> panels_table(std::index_sequence<P...>) {
  return {rows_table<kRead, static_cast<int>(P) + 1>(std::make_index_sequence<kTileRows>())...};
}
constexpr std::array<std::array<std::array<TileFn, kTileRows>, kStripPanels>, 3> kTiles{
    panels_table<ARead::kPacked>(std::make_index_sequence<kStripPanels>()),
    panels_table<ARead::kStrided>(std::make_index_sequence<kStripPanels>()),
    panels_table<ARead::kIndirect>(std::make_index_sequence<kStripPanels>())};

constexpr size_t index(ARead read) { return static_cast<size_t>(read); }

}  // namespace

LG_AVX512 void panel_gemm_avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels,
                                 bool accumulate, float* c, int64_t ldc, CStore store) {
  const bool stream = streams_c(store, accumulate, k <= kKc);
  const int64_t np = panel_count(n);
  const bool pack = rows_share_l1_sets(lda);
  thread_local std::vector<float> a_block;
  if (pack) a_block.resize(static_cast<size_t>(kMc * kKc + kTileRows + 2));  // + pack_a_block's store slack
  for (int64_t i0 = 0; i0 < m; i0 += kMc) {
    const int64_t mc = std::min(kMc, m - i0);
    for (int64_t p0 = 0; p0 < k; p0 += kKc) {
      const int64_t kc = std::min(kKc, k - p0);
      const bool acc = accumulate || p0 > 0;
      if (pack) pack_a_block(mc, kc, a + i0 * lda + p0, lda, a_block.data());
      // Each strip of up to four panels meets every row tile of the block.
      for (int64_t j = 0; j < np; j += kStripPanels) {
        const int64_t strip = std::min(kStripPanels, np - j);
        const StripMasks masks = strip_masks(n, j);
        const float* b = panels + (j * k + p0) * kPanelWidth;
        float* cj = c + i0 * ldc + j * kPanelWidth;
        for (int64_t r = 0; r < mc; r += kTileRows) {
          const int64_t rows = std::min(kTileRows, mc - r);
          // Packed: the tile's block. In place: its first row, the others lda floats apart.
          const float* at = pack ? a_block.data() + r * kc : a + (i0 + r) * lda + p0;
          kTiles[index(pack ? ARead::kPacked : ARead::kStrided)][strip - 1][rows - 1](
              &at, lda, 0, 1, kc, nullptr, b, k * kPanelWidth, cj + r * ldc, ldc, acc, masks, stream);
        }
      }
    }
  }
  if (stream) _mm_sfence();  // non-temporal stores are weakly ordered
}

// panel_gemm_indirect on AVX-512.
LG_AVX512 void panel_gemm_indirect_avx512(int64_t m, int64_t n, int64_t runs, const float* const* rows,
                                          int64_t run_len, const float* panels, bool accumulate, float* c,
                                          int64_t ldc, CStore store) {
  const int64_t np = panel_count(n), k = runs * run_len;
  const bool stream = indirect_streams(store, accumulate, runs, run_len, kIndirectKc);
  const float* zeros = zero_run(run_len);
  for_each_indirect_tile(m, np, kStripPanels, runs, run_len, kIndirectMc, kIndirectKc, accumulate,
                         [&](int64_t r, int64_t tile_rows, int64_t s0, int64_t s1, int64_t j, bool acc) {
                           kTiles[index(ARead::kIndirect)][std::min(kStripPanels, np - j) - 1][tile_rows - 1](
                               rows + r * runs, runs, s0, s1, run_len, zeros, panels + (j * k + s0 * run_len) * kPanelWidth,
                               k * kPanelWidth, c + r * ldc + j * kPanelWidth, ldc, acc, strip_masks(n, j), stream);
                         });
  if (stream) _mm_sfence();  // non-temporal stores are weakly ordered
}

#else
void panel_gemm_indirect_avx512(int64_t, int64_t, int64_t, const float* const*, int64_t, const float*, bool, float*,
                                int64_t, CStore) {
  LG_ASSERT(false, "panel_gemm_indirect_avx512 called on a build without x86-64 kernels");
}
void panel_gemm_avx512(int64_t, int64_t, int64_t, const float*, int64_t, const float*, bool, float*, int64_t, CStore) {
  LG_ASSERT(false, "panel_gemm_avx512 called on a build without x86-64 kernels");
}
#endif  // LG_CPU_AVX2_KERNELS
}  // namespace lg::cpu

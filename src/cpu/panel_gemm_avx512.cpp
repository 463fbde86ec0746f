// The panel GEMM on AVX-512: a 12 x 32 register tile -- two 16-column panels of B, one zmm
// register per panel row -- so each step of k does 24 fused multiply-adds for two B loads and
// twelve broadcasts of A (folded into the FMA as an embedded broadcast). 24 accumulators of the
// 32 registers; the AVX2 tile (6 x 16, 12 of 16) keeps half as many FMAs in flight per load.
// On a CPU with two full-width FMA pipes (AMD Zen 5, Intel server cores) that doubles the peak.
// B is the same panel packing as the AVX2 kernel's, so cached weights serve both.
#include "cpu/panel_gemm_avx512.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "cpu/avx2_target.h"
#include "cpu/panel_gemm.h"
#include "cpu/transpose8.h"

#include <layoutguard/error.h>

namespace lg::cpu {
#if LG_CPU_AVX2_KERNELS
namespace {

// Tile and block sizes by timing ResNet-50's layers on a 2-core AMD EPYC (Zen 5) VM against
// oneDNN in the same run (bench/cpu_ops --conv-only): k blocks of 256, 384 and 512 and A blocks
// of 48, 72 and 144 rows came within 3 % of each other; 384 x 72 led. A 14-row tile (28
// accumulators) was 3 % slower than 12 rows.
constexpr int64_t kMr = 12;   // rows per register tile
constexpr int64_t kKc = 384;  // k per block: a two-panel B strip is 48 KiB
constexpr int64_t kMc = 72;   // rows per packed A block (108 KiB): 6 tiles
static_assert(kMc % kMr == 0, "the A block buffer holds whole tiles");

// Lanes [0, valid) of a 16-lane mask (valid may be <= 0 or >= 16).
inline __mmask16 first_lanes(int64_t valid) {
  const int64_t v = std::clamp<int64_t>(valid, 0, 16);
  return static_cast<__mmask16>((uint32_t{1} << v) - 1);
}

// C row (+)= v over the lanes in `mask`; masked-off lanes of C are neither read nor written.
LG_AVX512 inline void store_lanes(float* cr, __m512 v, bool accumulate, __mmask16 mask) {
  if (accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, cr));
  _mm512_mask_storeu_ps(cr, mask, v);
}

// C tile (MR rows x NP panels) (+)= packed A tile * B strips b0 (and b1). A holds kMr floats per
// step of k (rows past MR are padding, never read). Named accumulators, not an array, so GCC
// keeps them in registers (see panel_gemm.cpp).
template <int MR, int NP>
LG_AVX512 void tile(int64_t kc, const float* a, const float* b0, const float* b1, float* c, int64_t ldc,
                    bool accumulate, __mmask16 m0, __mmask16 m1) {
  static_assert(MR >= 1 && MR <= kMr && (NP == 1 || NP == 2));
  const __m512 z = _mm512_setzero_ps();
  __m512 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z, c40 = z, c41 = z, c50 = z,
         c51 = z, c60 = z, c61 = z, c70 = z, c71 = z, c80 = z, c81 = z, c90 = z, c91 = z, c100 = z, c101 = z,
         c110 = z, c111 = z;
#define LG_PANEL_ROW(r)                                  \
  if constexpr (MR > r) {                                \
    const __m512 av = _mm512_set1_ps(a[r]);              \
    c##r##0 = _mm512_fmadd_ps(av, x0, c##r##0);          \
    if constexpr (NP > 1) c##r##1 = _mm512_fmadd_ps(av, x1, c##r##1); \
  }
  for (int64_t p = 0; p < kc; ++p, a += kMr, b0 += kPanelWidth, b1 += kPanelWidth) {
    const __m512 x0 = _mm512_loadu_ps(b0);
    const __m512 x1 = NP > 1 ? _mm512_loadu_ps(b1) : x0;
    LG_PANEL_ROW(0)
    LG_PANEL_ROW(1)
    LG_PANEL_ROW(2)
    LG_PANEL_ROW(3)
    LG_PANEL_ROW(4)
    LG_PANEL_ROW(5)
    LG_PANEL_ROW(6)
    LG_PANEL_ROW(7)
    LG_PANEL_ROW(8)
    LG_PANEL_ROW(9)
    LG_PANEL_ROW(10)
    LG_PANEL_ROW(11)
  }
#undef LG_PANEL_ROW
#define LG_STORE_ROW(r)                                                              \
  if constexpr (MR > r) {                                                            \
    store_lanes(c + r * ldc, c##r##0, accumulate, m0);                               \
    if constexpr (NP > 1) store_lanes(c + r * ldc + kPanelWidth, c##r##1, accumulate, m1); \
  }
  LG_STORE_ROW(0)
  LG_STORE_ROW(1)
  LG_STORE_ROW(2)
  LG_STORE_ROW(3)
  LG_STORE_ROW(4)
  LG_STORE_ROW(5)
  LG_STORE_ROW(6)
  LG_STORE_ROW(7)
  LG_STORE_ROW(8)
  LG_STORE_ROW(9)
  LG_STORE_ROW(10)
  LG_STORE_ROW(11)
#undef LG_STORE_ROW
}

using TileFn = void (*)(int64_t, const float*, const float*, const float*, float*, int64_t, bool, __mmask16,
                        __mmask16);

// tiles<NP>[rows - 1]: the tile for a block's last, shorter row tile too.
template <int NP, size_t... R>
constexpr std::array<TileFn, sizeof...(R)> tile_table(std::index_sequence<R...>) {
  return {&tile<static_cast<int>(R) + 1, NP>...};
}
template <int NP>
constexpr std::array<TileFn, kMr> tiles = tile_table<NP>(std::make_index_sequence<kMr>());

// packed[t][p][r] = a[(kMr t + r) * lda + p]: each tile's rows interleaved so the kernel reads A
// sequentially (and rows 4 KiB apart do not meet in one L1 set). Full tiles go 8 columns at a
// time through two 8 x 8 transposes, rows 0-7 and rows 8-11 with four rows of zeros.
LG_AVX512 void pack_a_block(int64_t mc, int64_t kc, const float* a, int64_t lda, float* packed) {
  static_assert(kMr > 8 && kMr <= 16);
  constexpr __mmask8 kHighRows = (1u << (kMr - 8)) - 1;
  for (int64_t r0 = 0; r0 < mc; r0 += kMr, packed += kMr * kc) {
    const int64_t rows = std::min(kMr, mc - r0);
    const float* src = a + r0 * lda;
    int64_t p = 0;
    if (rows == kMr) {
      for (; p + 8 <= kc; p += 8) {
        __m256 lo[8], hi[8];
        for (int r = 0; r < 8; ++r) lo[r] = _mm256_loadu_ps(src + r * lda + p);
        for (int r = 0; r < 8; ++r) hi[r] = r < kMr - 8 ? _mm256_loadu_ps(src + (8 + r) * lda + p) : _mm256_setzero_ps();
        transpose8(lo);
        transpose8(hi);
        for (int j = 0; j < 8; ++j) {
          _mm256_storeu_ps(packed + (p + j) * kMr, lo[j]);
          _mm256_mask_storeu_ps(packed + (p + j) * kMr + 8, kHighRows, hi[j]);
        }
      }
    }
    for (; p < kc; ++p)
      for (int64_t r = 0; r < rows; ++r) packed[p * kMr + r] = src[r * lda + p];
  }
}

}  // namespace

LG_AVX512 void panel_gemm_avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels,
                                 bool accumulate, float* c, int64_t ldc) {
  const int64_t np = (n + kPanelWidth - 1) / kPanelWidth;
  thread_local std::vector<float> a_block;
  a_block.resize(static_cast<size_t>(kMc * kKc));
  for (int64_t i0 = 0; i0 < m; i0 += kMc) {
    const int64_t mc = std::min(kMc, m - i0);
    for (int64_t p0 = 0; p0 < k; p0 += kKc) {
      const int64_t kc = std::min(kKc, k - p0);
      const bool acc = accumulate || p0 > 0;
      pack_a_block(mc, kc, a + i0 * lda + p0, lda, a_block.data());
      // Each strip of two panels (one at the end when np is odd) meets every row tile of the block.
      for (int64_t j = 0; j < np; j += 2) {
        const bool two = j + 1 < np;
        const float* s0 = panels + (j * k + p0) * kPanelWidth;
        const float* s1 = two ? s0 + k * kPanelWidth : s0;
        const int64_t cols = n - j * kPanelWidth;  // may exceed 32: the masks clamp
        const __mmask16 m0 = first_lanes(cols), m1 = first_lanes(cols - kPanelWidth);
        float* cj = c + i0 * ldc + j * kPanelWidth;
        for (int64_t r = 0; r < mc; r += kMr) {
          const int64_t rows = std::min(kMr, mc - r);
          const TileFn fn = two ? tiles<2>[rows - 1] : tiles<1>[rows - 1];
          fn(kc, a_block.data() + r * kc, s0, s1, cj + r * ldc, ldc, acc, m0, m1);
        }
      }
    }
  }
}

#else
void panel_gemm_avx512(int64_t, int64_t, int64_t, const float*, int64_t, const float*, bool, float*, int64_t) {
  LG_ASSERT(false, "panel_gemm_avx512 called on a build without x86-64 kernels");
}
#endif  // LG_CPU_AVX2_KERNELS
}  // namespace lg::cpu

// The panel GEMM's AVX2 kernel and its dispatch: a 6 x 16 register tile (12 accumulators, two B
// loads and six broadcasts of A per step of k), over blocks of kMc rows x kKc of A packed tile by
// tile (144 KiB, in L2), each block swept by every 16-column strip of B in turn. CPUs with
// AVX-512 run the 6 x 64 tile of panel_gemm_avx512.cpp instead, over the same panels.
// The AVX2 code is compiled per function (target attributes), so the library still runs on any
// x86-64; panel_gemm_supported() gates it at run time.
#include "cpu/panel_gemm.h"

#include <algorithm>
#include <vector>

#include "cpu/avx2_target.h"
#include "cpu/panel_gemm_kernels.h"
#include "cpu/parallel.h"
#include "cpu/transpose8.h"

#include <layoutguard/error.h>

namespace lg::cpu {
namespace {

// k per block and rows per A block, chosen by paired timing against OpenBLAS on ResNet-50's 1x1
// layers (2-core AMD EPYC VM, 32 KiB L1d, 1 MiB L2): 512 x 72 beat 256 x 144, 384 x 96 and
// 192 x 192 by 3-10 % on C_in >= 512 and tied elsewhere. A B strip (512 x 16 floats, 32 KiB)
// then streams from L2 while the packed A tile (6 x 512) stays in L1.
constexpr int64_t kKc = 512;
constexpr int64_t kMc = 72;

#if LG_CPU_AVX2_KERNELS

// Lanes [0, valid) of an 8-lane mask set (valid may be <= 0 or >= 8).
LG_AVX2_FMA __m256i lane_mask(int64_t valid) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<int64_t>(valid, 0, 8))), lanes);
}

// Stores one row of the tile: C row (+)= (lo, hi), only the first `cols` columns when partial.
// `stream`: a whole row of the panel, one 64-byte aligned cache line, goes out as non-temporal
// stores (CStore). (A line written half by streaming and half later would force partial
// write-combining flushes.)
template <bool kPartial>
LG_AVX2_FMA inline void store_row(float* cr, __m256 lo, __m256 hi, bool accumulate, __m256i m0, __m256i m1,
                                  bool stream) {
  if constexpr (kPartial) {
    if (accumulate) {
      lo = _mm256_add_ps(lo, _mm256_maskload_ps(cr, m0));
      hi = _mm256_add_ps(hi, _mm256_maskload_ps(cr + 8, m1));
    }
    _mm256_maskstore_ps(cr, m0, lo);
    _mm256_maskstore_ps(cr + 8, m1, hi);
  } else {
    if (stream && !accumulate && (reinterpret_cast<uintptr_t>(cr) & 63) == 0) {
      _mm256_stream_ps(cr, lo);
      _mm256_stream_ps(cr + 8, hi);
      return;
    }
    if (accumulate) {
      lo = _mm256_add_ps(lo, _mm256_loadu_ps(cr));
      hi = _mm256_add_ps(hi, _mm256_loadu_ps(cr + 8));
    }
    _mm256_storeu_ps(cr, lo);
    _mm256_storeu_ps(cr + 8, hi);
  }
}

// C tile (MR rows x 16 columns, of which `cols` are stored) (+)= A tile * B strip, k running
// over runs [s0, s1) of run_len steps each, A read as kRead says (cpu/panel_gemm_kernels.h;
// one run unless kIndirect). b is the strip at run s0.
// The accumulators are named variables, not an array: GCC 12 keeps an array of __m256 in
// memory and stores it on every step of k, which halved the speed. Placement-stable as the
// AVX-512 tile is (its speed moved with unrelated code; this one's did not, measured).
template <int MR, bool kPartial, ARead kRead>
[[LG_PLACEMENT_STABLE]] LG_AVX2_FMA void tile(const float* const* rows, int64_t row_stride, int64_t s0, int64_t s1, int64_t run_len,
                      const float* zeros, const float* b, float* c, int64_t ldc, bool accumulate, int64_t cols,
                      bool stream) {
  static_assert(MR >= 1 && MR <= kTileRows);
  constexpr int64_t step = kRead == ARead::kPacked ? kTileRows : 1;
  __m256 l0 = _mm256_setzero_ps(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0, l4 = l0, h4 = l0,
         l5 = l0, h5 = l0;
#define LG_PANEL_ROW(r)                                     \
  if constexpr (MR > r) {                                   \
    const __m256 av = _mm256_broadcast_ss(a##r + p * step); \
    l##r = _mm256_fmadd_ps(av, b0, l##r);                   \
    h##r = _mm256_fmadd_ps(av, b1, h##r);                   \
  }
  for (int64_t s = s0; s < s1; ++s) {
    const float* bp = b + (s - s0) * run_len * kPanelWidth;
    const float *a0, *a1, *a2, *a3, *a4, *a5;
    if (!tile_rows_of_run<MR, kRead>(rows, row_stride, s, zeros, &a0, &a1, &a2, &a3, &a4, &a5)) continue;
    for (int64_t p = 0; p < run_len; ++p, bp += kPanelWidth) {
      const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
      LG_FOR_EACH_TILE_ROW(LG_PANEL_ROW)
    }
  }
#undef LG_PANEL_ROW
  __m256i m0 = _mm256_setzero_si256(), m1 = m0;
  if constexpr (kPartial) {
    m0 = lane_mask(cols);
    m1 = lane_mask(cols - 8);
  }
  store_row<kPartial>(c, l0, h0, accumulate, m0, m1, stream);
  if constexpr (MR > 1) store_row<kPartial>(c + ldc, l1, h1, accumulate, m0, m1, stream);
  if constexpr (MR > 2) store_row<kPartial>(c + 2 * ldc, l2, h2, accumulate, m0, m1, stream);
  if constexpr (MR > 3) store_row<kPartial>(c + 3 * ldc, l3, h3, accumulate, m0, m1, stream);
  if constexpr (MR > 4) store_row<kPartial>(c + 4 * ldc, l4, h4, accumulate, m0, m1, stream);
  if constexpr (MR > 5) store_row<kPartial>(c + 5 * ldc, l5, h5, accumulate, m0, m1, stream);
}

template <bool kPartial, ARead kRead>
LG_AVX2_FMA void tile_rows(int64_t rows, const float* const* a, int64_t row_stride, int64_t s0, int64_t s1,
                           int64_t run_len, const float* zeros, const float* b, float* c, int64_t ldc, bool accumulate,
                           int64_t cols, bool stream) {
#define LG_TILE(mr) \
  tile<mr, kPartial, kRead>(a, row_stride, s0, s1, run_len, zeros, b, c, ldc, accumulate, cols, stream)
  switch (rows) {
    case 6: return LG_TILE(6);
    case 5: return LG_TILE(5);
    case 4: return LG_TILE(4);
    case 3: return LG_TILE(3);
    case 2: return LG_TILE(2);
    default: return LG_TILE(1);
  }
#undef LG_TILE
}

// A tile of `rows` rows of A (read as kRead says) over one 16-column panel, partial when the
// panel has fewer than 16 columns of C.
template <ARead kRead>
LG_AVX2_FMA void panel_tile(int64_t rows, const float* const* a, int64_t row_stride, int64_t s0, int64_t s1,
                            int64_t run_len, const float* zeros, const float* b, float* c, int64_t ldc,
                            bool accumulate, int64_t cols, bool stream) {
  if (cols == kPanelWidth)
    tile_rows<false, kRead>(rows, a, row_stride, s0, s1, run_len, zeros, b, c, ldc, accumulate, cols, stream);
  else tile_rows<true, kRead>(rows, a, row_stride, s0, s1, run_len, zeros, b, c, ldc, accumulate, cols, stream);
}

// One kMc x kc block of A against every strip of B.
template <bool kPacked>
LG_AVX2_FMA void block(int64_t mc, int64_t kc, const float* a, int64_t lda, int64_t np, int64_t n, int64_t k,
                       const float* panels, int64_t p0, bool acc, float* c, int64_t ldc, bool stream) {
  for (int64_t j = 0; j < np; ++j) {
    const float* strip = panels + (j * k + p0) * kPanelWidth;
    const int64_t cols = std::min(kPanelWidth, n - j * kPanelWidth);
    float* cj = c + j * kPanelWidth;
    for (int64_t r = 0; r < mc; r += kTileRows) {
      const int64_t rows = std::min(kTileRows, mc - r);
      const float* at = kPacked ? a + r * kc : a + r * lda;
      panel_tile<kPacked ? ARead::kPacked : ARead::kStrided>(rows, &at, lda, 0, 1, kc, nullptr, strip, cj + r * ldc, ldc,
                                                             acc, cols, stream);
    }
  }
}

LG_AVX2_FMA void panel_gemm_avx2(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels,
                                 bool accumulate, float* c, int64_t ldc, CStore store) {
  const bool stream = streams_c(store, accumulate, k <= kKc);
  const int64_t np = panel_count(n);
  // Packing A pays when many strips reuse it, or when its rows would share L1 sets (a row stride
  // of 4 KiB). With at most 4 strips (C_out <= 64) reading A in place measured 2-5 % faster.
  const bool pack = np > 4 || rows_share_l1_sets(lda);
  thread_local std::vector<float> a_block;
  a_block.resize(static_cast<size_t>(kMc * kKc + kTileRows + 2));  // + pack_a_block's store slack
  for (int64_t i0 = 0; i0 < m; i0 += kMc) {
    const int64_t mc = std::min(kMc, m - i0);
    for (int64_t p0 = 0; p0 < k; p0 += kKc) {
      const int64_t kc = std::min(kKc, k - p0);
      const bool acc = accumulate || p0 > 0;
      if (pack) {
        pack_a_block(mc, kc, a + i0 * lda + p0, lda, a_block.data());
        block<true>(mc, kc, a_block.data(), lda, np, n, k, panels, p0, acc, c + i0 * ldc, ldc, stream);
      } else {
        block<false>(mc, kc, a + i0 * lda + p0, lda, np, n, k, panels, p0, acc, c + i0 * ldc, ldc, stream);
      }
    }
  }
  if (stream) _mm_sfence();  // non-temporal stores are weakly ordered
}

// panel_gemm_indirect on AVX2, in blocks of the plain GEMM's size.
LG_AVX2_FMA void panel_gemm_indirect_avx2(int64_t m, int64_t n, int64_t runs, const float* const* rows,
                                          int64_t run_len, const float* panels, bool accumulate, float* c,
                                          int64_t ldc, CStore store) {
  const int64_t np = panel_count(n), k = runs * run_len;
  const bool stream = indirect_streams(store, accumulate, runs, run_len, kKc);
  const float* zeros = zero_run(run_len);
  for_each_indirect_tile(m, np, 1, runs, run_len, kMc, kKc, accumulate,
                         [&](int64_t r, int64_t tile_rows, int64_t s0, int64_t s1, int64_t j, bool acc) {
                           panel_tile<ARead::kIndirect>(tile_rows, rows + r * runs, runs, s0, s1, run_len, zeros,
                                             panels + (j * k + s0 * run_len) * kPanelWidth, c + r * ldc + j * kPanelWidth,
                                             ldc, acc, std::min(kPanelWidth, n - j * kPanelWidth), stream);
                         });
  if (stream) _mm_sfence();  // non-temporal stores are weakly ordered
}

#endif  // LG_CPU_AVX2_KERNELS

}  // namespace

#if LG_CPU_AVX2_KERNELS
// packed[t][p][r] = a[(6t + r) * lda + p] for the mc x kc block: the tiles' rows interleaved,
// so the kernel reads A sequentially. Reading A in place instead put six rows whose stride is a
// multiple of 4 KiB (C_in = 1024, 2048) in one L1 set, next to the B strip: conflict misses.
// Full tiles go 8 columns at a time through an 8 x 8 register transpose (two rows of zeros);
// each column's 8-float store overlaps the next column's, so `packed` has kTileRows + 2 floats of
// slack at its end. Element-wise packing cost up to 15 % of the GEMM at C_in = 256..1024.
LG_AVX2 void pack_a_block(int64_t mc, int64_t kc, const float* a, int64_t lda, float* packed) {
  for (int64_t r0 = 0; r0 < mc; r0 += kTileRows, packed += kTileRows * kc) {
    const int64_t rows = std::min(kTileRows, mc - r0);
    const float* src = a + r0 * lda;
    int64_t p = 0;
    if (rows == kTileRows) {
      for (; p + 8 <= kc; p += 8) {
        __m256 v[8];
        for (int r = 0; r < 6; ++r) v[r] = _mm256_loadu_ps(src + r * lda + p);
        v[6] = v[7] = _mm256_setzero_ps();
        transpose8(v);
        for (int j = 0; j < 8; ++j) _mm256_storeu_ps(packed + (p + j) * kTileRows, v[j]);
      }
    }
    for (; p < kc; ++p)
      for (int64_t r = 0; r < rows; ++r) packed[p * kTileRows + r] = src[r * lda + p];
  }
}
#endif

bool panel_gemm_supported() { return cpu_has_avx2() && cpu_has_fma(); }

int64_t panel_buffer_size(int64_t k, int64_t n) { return panel_count(n) * k * kPanelWidth; }

void pack_panels(const float* b, int64_t ldb, int64_t k, int64_t n, float* panels) {
  for (int64_t j = 0; j < panel_count(n); ++j) {
    const int64_t j0 = j * kPanelWidth, cols = std::min(kPanelWidth, n - j0);
    for (int64_t p = 0; p < k; ++p) {
      float* dst = panels + (j * k + p) * kPanelWidth;
      std::copy(b + p * ldb + j0, b + p * ldb + j0 + cols, dst);
      std::fill(dst + cols, dst + kPanelWidth, 0.0f);
    }
  }
}

bool panel_kernel_supported(PanelKernel kernel) {
  return panel_gemm_supported() && (kernel == PanelKernel::kAvx2 || cpu_has_avx512());
}

// The widest kernel this CPU runs.
static PanelKernel best_kernel() { return use_avx512() ? PanelKernel::kAvx512 : PanelKernel::kAvx2; }

void panel_gemm_on(PanelKernel kernel, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* panels, bool accumulate, float* c, int64_t ldc, CStore store) {
  LG_ASSERT(panel_kernel_supported(kernel), "panel_gemm_on called with a kernel this CPU cannot run");
  if (m <= 0 || n <= 0) return;
  if (k == 0) {  // C = 0 * B: zeros, or C unchanged
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
#if LG_CPU_AVX2_KERNELS
  if (kernel == PanelKernel::kAvx512) panel_gemm_avx512(m, n, k, a, lda, panels, accumulate, c, ldc, store);
  else panel_gemm_avx2(m, n, k, a, lda, panels, accumulate, c, ldc, store);
#endif
}

void panel_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels, bool accumulate,
                float* c, int64_t ldc, CStore store) {
  LG_ASSERT(panel_gemm_supported(), "panel_gemm called on a CPU without AVX2 and FMA");
  panel_gemm_on(best_kernel(), m, n, k, a, lda, panels, accumulate, c, ldc, store);
}

void panel_gemm_indirect_on(PanelKernel kernel, int64_t m, int64_t n, int64_t runs, const float* const* rows,
                            int64_t run_len, const float* panels, bool accumulate, float* c, int64_t ldc,
                            CStore store) {
  LG_ASSERT(panel_kernel_supported(kernel), "panel_gemm_indirect_on called with a kernel this CPU cannot run");
  LG_ASSERT(runs >= 1 && run_len >= 1, "panel_gemm_indirect: runs and run_len must be >= 1");
  if (m <= 0 || n <= 0) return;
#if LG_CPU_AVX2_KERNELS
  if (kernel == PanelKernel::kAvx512)
    panel_gemm_indirect_avx512(m, n, runs, rows, run_len, panels, accumulate, c, ldc, store);
  else panel_gemm_indirect_avx2(m, n, runs, rows, run_len, panels, accumulate, c, ldc, store);
#endif
}

void panel_gemm_indirect(int64_t m, int64_t n, int64_t runs, const float* const* rows, int64_t run_len,
                         const float* panels, bool accumulate, float* c, int64_t ldc, CStore store) {
  LG_ASSERT(panel_gemm_supported(), "panel_gemm_indirect called on a CPU without AVX2 and FMA");
  panel_gemm_indirect_on(best_kernel(), m, n, runs, rows, run_len, panels, accumulate, c, ldc, store);
}

void panel_gemm_parallel(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels,
                         bool accumulate, float* c, int64_t ldc, CStore store) {
  // Rows when every thread gets a few full A blocks' worth; panels otherwise.
  constexpr int64_t kMinRows = 4 * kTileRows * 8;
  if (would_parallelise(m, kMinRows)) {
    parallel_for(m, kMinRows, [&](int64_t r0, int64_t r1) {
      panel_gemm(r1 - r0, n, k, a + r0 * lda, lda, panels, accumulate, c + r0 * ldc, ldc, store);
    });
    return;
  }
  // At least ~64k multiply-adds per thread, or the wake-up costs more than it saves.
  const int64_t np = panel_count(n), per_panel = std::max<int64_t>(1, m * k * kPanelWidth);
  parallel_for(np, std::max<int64_t>(1, (int64_t{1} << 16) / per_panel), [&](int64_t j0, int64_t j1) {
    const int64_t c0 = j0 * kPanelWidth, c1 = std::min(n, j1 * kPanelWidth);
    panel_gemm(m, c1 - c0, k, a, lda, panels + j0 * k * kPanelWidth, accumulate, c + c0, ldc, store);
  });
}

}  // namespace lg::cpu

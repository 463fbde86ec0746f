// What the panel GEMM's two kernels share (panel_gemm.cpp: AVX2, 6 x 16 tile;
// panel_gemm_avx512.cpp: AVX-512, 6 x 64 tile): the tile height, the packing of A into tiles,
// and when packing pays. cpu/panel_gemm.h has the contract; this header is for those two files.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cpu/avx2_target.h"
#include "cpu/panel_gemm.h"

namespace lg::cpu {

// Rows per register tile, both kernels. A packed block holds tile after tile, each as kc steps
// of kTileRows floats (rows past the block's end are padding, never read).
constexpr int64_t kTileRows = 6;

// X(r) for every row r < kTileRows of a tile: the kernels keep one named accumulator per row
// and panel (an array of vectors stays in memory under GCC 12), so their per-row code is a macro.
#define LG_FOR_EACH_TILE_ROW(X) X(0) X(1) X(2) X(3) X(4) X(5)

// 16-column panels a k x n B packs into.
inline int64_t panel_count(int64_t n) { return (n + kPanelWidth - 1) / kPanelWidth; }

// Whether A rows lda floats apart fall into one L1 set (a stride that is a multiple of 4 KiB:
// C_in = 1024, 2048), so six of them and the B strip evict each other: then A is packed.
inline bool rows_share_l1_sets(int64_t lda) { return (lda * static_cast<int64_t>(sizeof(float))) % 4096 == 0; }

// panel_gemm_runs' walk, both kernels: fn(r, rows, tile_run) for each tile of up to kTileRows
// rows from row r, tile_run[s] being run s advanced to row r (null stays null). Tiles outer:
// the caller passes every panel of B over one tile while its rows sit in L1.
template <typename Fn>
inline void for_each_run_tile(int64_t m, int64_t runs, const float* const* run, int64_t lda, Fn&& fn) {
  const float* tile_run[kMaxRuns];
  for (int64_t r = 0; r < m; r += kTileRows) {
    for (int64_t s = 0; s < runs; ++s) tile_run[s] = run[s] ? run[s] + r * lda : nullptr;
    fn(r, std::min(kTileRows, m - r), static_cast<const float* const*>(tile_run));
  }
}

#if LG_CPU_AVX2_KERNELS
// packed[t][p][r] = a[(6t + r) * lda + p] for an mc x kc block. Writes 8 floats at a time, so
// the last column's store runs 2 floats past the block: callers allocate kTileRows + 2 spare.
LG_AVX2 void pack_a_block(int64_t mc, int64_t kc, const float* a, int64_t lda, float* packed);
#endif

// panel_gemm_runs (cpu/panel_gemm.h) on AVX-512. Requires cpu_has_avx512().
void panel_gemm_runs_avx512(int64_t m, int64_t n, int64_t runs, const float* const* run, int64_t run_len, int64_t lda,
                            const float* panels, bool accumulate, float* c, int64_t ldc);

// C = A * B, or C += A * B when `accumulate`, on the calling thread, over pack_panels' B.
// Requires cpu_has_avx512() and k > 0.
void panel_gemm_avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels,
                       bool accumulate, float* c, int64_t ldc);

}  // namespace lg::cpu

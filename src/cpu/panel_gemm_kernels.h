// What the panel GEMM's two kernels share (panel_gemm.cpp: AVX2, 6 x 16 tile;
// panel_gemm_avx512.cpp: AVX-512, 6 x 64 tile): the tile height, how a tile reads A (packed,
// strided, through the indirect table), the packing of A and when it pays, when C streams, and
// the indirect GEMM's walk. cpu/panel_gemm.h has the contract; this header is for those files.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cpu/avx2_target.h"
#include "cpu/panel_gemm.h"

namespace lg::cpu {

// Rows per register tile, both kernels. A packed block holds tile after tile, each as kc steps
// of kTileRows floats (rows past the block's end are padding, never read).
constexpr int64_t kTileRows = 6;

// How a tile reads its rows of A. kPacked: rows[0] is the tile packed by pack_a_block, kTileRows
// floats per step of k. kStrided: row i at rows[0] + i * row_stride (a matrix read in place).
// kIndirect: row i of run s at rows[i * row_stride + s] (panel_gemm_indirect's table). Strided is
// not indirect with a table of the six row addresses: on the 64-channel 1x1 layers at batch 16
// that form ran 1.4x slower (2-core Zen 5 VM; most likely code placement, which later hit the
// strided form too until the tiles were aligned), so the plain GEMM keeps its own.
enum class ARead { kPacked, kStrided, kIndirect };

// Sets a0..a5 to the rows of a tile's A for run s, as kRead says (rows past MR alias the last
// real one and are never read). kIndirect: a null run of some rows reads `zeros`; false when
// the run is null for every row, and the tile skips it.
template <int MR, ARead kRead>
inline bool tile_rows_of_run(const float* const* rows, int64_t row_stride, int64_t s, const float* zeros,
                             const float** a0, const float** a1, const float** a2, const float** a3, const float** a4,
                             const float** a5) {
  constexpr int64_t r1 = MR > 1 ? 1 : 0, r2 = MR > 2 ? 2 : MR - 1, r3 = MR > 3 ? 3 : MR - 1, r4 = MR > 4 ? 4 : MR - 1,
                    r5 = MR > 5 ? 5 : MR - 1;
  if constexpr (kRead == ARead::kPacked) {
    const float* a = rows[0];
    *a0 = a, *a1 = a + r1, *a2 = a + r2, *a3 = a + r3, *a4 = a + r4, *a5 = a + r5;
    return true;
  } else if constexpr (kRead == ARead::kStrided) {
    const float* a = rows[0];
    *a0 = a, *a1 = a + r1 * row_stride, *a2 = a + r2 * row_stride, *a3 = a + r3 * row_stride,
    *a4 = a + r4 * row_stride, *a5 = a + r5 * row_stride;
    return true;
  } else {
    const float* const* at = rows + s;
    *a0 = at[0], *a1 = at[r1 * row_stride], *a2 = at[r2 * row_stride], *a3 = at[r3 * row_stride],
    *a4 = at[r4 * row_stride], *a5 = at[r5 * row_stride];
    if (!(*a0 || *a1 || *a2 || *a3 || *a4 || *a5)) return false;
    for (const float** a : {a0, a1, a2, a3, a4, a5})
      if (*a == nullptr) *a = zeros;
    return true;
  }
}

// X(r) for every row r < kTileRows of a tile: the kernels keep one named accumulator per row
// and panel (an array of vectors stays in memory under GCC 12), so their per-row code is a macro.
#define LG_FOR_EACH_TILE_ROW(X) X(0) X(1) X(2) X(3) X(4) X(5)

// 16-column panels a k x n B packs into.
inline int64_t panel_count(int64_t n) { return (n + kPanelWidth - 1) / kPanelWidth; }

// Whether A rows lda floats apart fall into one L1 set (a stride that is a multiple of 4 KiB:
// C_in = 1024, 2048), so six of them and the B strip evict each other: then A is packed.
inline bool rows_share_l1_sets(int64_t lda) { return (lda * static_cast<int64_t>(sizeof(float))) % 4096 == 0; }

// Whether a GEMM call streams C (CStore): asked to, not accumulating, and one k block writes C,
// so no later block reads it back from memory.
inline bool streams_c(CStore store, bool accumulate, bool one_k_block) {
  return store == CStore::kStreamed && !accumulate && one_k_block;
}

// The same for panel_gemm_indirect, whose k blocks hold whole runs (at least one).
inline bool indirect_streams(CStore store, bool accumulate, int64_t runs, int64_t run_len, int64_t kc) {
  return streams_c(store, accumulate, runs <= std::max<int64_t>(1, kc / run_len));
}

// panel_gemm_indirect's walk, both kernels: blocks of up to mc rows; in each, the runs in
// blocks of about kc floats of k (whole runs, at least one); in each, the strips of `strip`
// panels; in each, the row tiles. fn(r, rows, s0, s1, j, acc): tile of `rows` rows from row r,
// runs [s0, s1), strip from panel j, accumulating onto C when `acc` (every run block after the
// first). One B strip block then serves every tile of the row block while it sits in cache.
template <typename Fn>
inline void for_each_indirect_tile(int64_t m, int64_t np, int64_t strip, int64_t runs, int64_t run_len, int64_t mc,
                                   int64_t kc, bool accumulate, Fn&& fn) {
  const int64_t run_block = std::max<int64_t>(1, kc / run_len);
  for (int64_t i0 = 0; i0 < m; i0 += mc) {
    const int64_t i1 = std::min(m, i0 + mc);
    for (int64_t s0 = 0; s0 < runs; s0 += run_block) {
      const int64_t s1 = std::min(runs, s0 + run_block);
      for (int64_t j = 0; j < np; j += strip)
        for (int64_t r = i0; r < i1; r += kTileRows) fn(r, std::min(kTileRows, i1 - r), s0, s1, j, accumulate || s0 > 0);
    }
  }
}

// run_len zeros, on the calling thread: what a tile reads for a null run of a row whose
// neighbours in the tile are not null.
inline const float* zero_run(int64_t run_len) {
  thread_local std::vector<float> zeros;
  if (static_cast<int64_t>(zeros.size()) < run_len) zeros.assign(static_cast<size_t>(run_len), 0.0f);
  return zeros.data();
}

#if LG_CPU_AVX2_KERNELS
// packed[t][p][r] = a[(6t + r) * lda + p] for an mc x kc block. Writes 8 floats at a time, so
// the last column's store runs 2 floats past the block: callers allocate kTileRows + 2 spare.
LG_AVX2 void pack_a_block(int64_t mc, int64_t kc, const float* a, int64_t lda, float* packed);
#endif

// panel_gemm_indirect (cpu/panel_gemm.h) on AVX-512. Requires cpu_has_avx512().
void panel_gemm_indirect_avx512(int64_t m, int64_t n, int64_t runs, const float* const* rows, int64_t run_len,
                                const float* panels, bool accumulate, float* c, int64_t ldc, CStore store);

// C = A * B, or C += A * B when `accumulate`, on the calling thread, over pack_panels' B.
// Requires cpu_has_avx512() and k > 0.
void panel_gemm_avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels,
                       bool accumulate, float* c, int64_t ldc, CStore store);

}  // namespace lg::cpu

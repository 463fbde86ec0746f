// A float32 GEMM for the NHWC convolutions: C[m x n] (+)= A[m x k] * B[k x n], all row-major,
// with A read where it lies (NHWC input rows, or im2col rows) and B pre-packed once into column
// panels -- the form the convolution weights are cached in (cpu/packed_weights.h).
//
// Why not OpenBLAS here: an NHWC convolution is a tall, thin product (m = pixels, n = C_out)
// whose B is a weight that never changes between calls. Through cblas, OpenBLAS re-packs both
// operands on every call and reached 0.8-0.95x of our own NCHW convolution on the ResNet-50
// 1x1 layers at batch 16; a register-blocked kernel over cached panels closes that gap
// (docs/design.md, "CPU convolution GEMM"). OpenBLAS stays the path for float64, for CPUs
// without AVX2+FMA, and for every other GEMM-shaped op.
#pragma once

#include <cstdint>

namespace lg::cpu {

// Columns per panel: two 8-float AVX registers.
constexpr int64_t kPanelWidth = 16;

// Whether this CPU runs the panel kernel (x86-64 with AVX2 and FMA); checked once.
bool panel_gemm_supported();

// The register tiles over the same panels: 6 x 16 on AVX2+FMA, 6 x 64 on AVX-512F+VL
// (panel_gemm_avx512.cpp). panel_gemm() runs the widest this CPU has.
enum class PanelKernel { kAvx2, kAvx512 };
bool panel_kernel_supported(PanelKernel kernel);

// Floats a packing of a k x n matrix takes: ceil(n / 16) panels of k rows of 16 columns, the
// last panel zero-padded.
int64_t panel_buffer_size(int64_t k, int64_t n);

// panels[j][p][c] = b[p * ldb + 16 * j + c] (zero past column n).
void pack_panels(const float* b, int64_t ldb, int64_t k, int64_t n, float* panels);

// How C is written. kStreamed: with non-temporal stores wherever a whole aligned vector is
// stored, so C goes to memory without passing through the caches (and without reading its old
// lines first). For a C far larger than the last-level cache, which the next op reads from
// memory anyway; ignored when accumulating. Each call ends with a store fence, so the threads
// that read C next see it.
enum class CStore { kCached, kStreamed };

// C = A * B, or C += A * B when `accumulate`, on the calling thread. `panels` is pack_panels'
// output for B (k x n). Requires panel_gemm_supported().
void panel_gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels, bool accumulate,
                float* c, int64_t ldc, CStore store = CStore::kCached);

// panel_gemm on a named kernel, so tests cover each one a CPU has. Requires
// panel_kernel_supported(kernel).
void panel_gemm_on(PanelKernel kernel, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* panels, bool accumulate, float* c, int64_t ldc, CStore store = CStore::kCached);

// C (+)= A * B where A is given row by row through an indirection table: row i of A is the
// concatenation, over s < runs, of the run_len floats at rows[i * runs + s]; a null pointer
// stands for run_len zeros. An NHWC convolution reads its input this way without im2col: row i
// is an output pixel, run s one kernel tap's C_in channels (or one kernel row's taps x C_in,
// adjacent in memory), null where the window lies in the padding. k is blocked by whole runs.
// On the calling thread. Requires panel_gemm_supported(), runs >= 1, run_len >= 1.
// panel_gemm_indirect_on names the kernel, as panel_gemm_on does. `store` as for panel_gemm
// (C streams only when all runs fit one k block).
void panel_gemm_indirect(int64_t m, int64_t n, int64_t runs, const float* const* rows, int64_t run_len,
                         const float* panels, bool accumulate, float* c, int64_t ldc, CStore store = CStore::kCached);
void panel_gemm_indirect_on(PanelKernel kernel, int64_t m, int64_t n, int64_t runs, const float* const* rows,
                            int64_t run_len, const float* panels, bool accumulate, float* c, int64_t ldc,
                            CStore store = CStore::kCached);

// The same product over the OpenMP threads: rows split across threads when there are enough of
// them, otherwise column panels (small batch-1 maps with wide layers: 7x7 pixels x 2048
// channels), so every thread still has work and reads only its share of B.
void panel_gemm_parallel(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels,
                         bool accumulate, float* c, int64_t ldc, CStore store = CStore::kCached);

}  // namespace lg::cpu

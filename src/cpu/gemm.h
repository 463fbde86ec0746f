// Row-major GEMM on OpenBLAS (Debian's OpenMP build: inside an OpenMP parallel region it runs
// on the calling thread, outside it uses the OpenMP pool -- so nesting never oversubscribes).
#pragma once

#include <cstdint>

namespace lg::cpu {

// C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C, all row-major; op transposes when
// the flag is set (then A is stored k x m, B n x k). Leading dims are in elements.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// The same product with the rows of op(A) and C split evenly over the OpenMP threads, each
// thread running single-threaded BLAS on blocks of at most 2048 rows. For tall, thin products
// (an NHWC 1x1 convolution: M = N*H*W pixels, N = C_out) this beats one threaded BLAS call by
// 1.2-1.8x on the 2-core development VM (OpenBLAS 0.3.21), because each thread's block of A and
// C stays in its own cache. Falls back to gemm() when m is too small to split.
void gemm_split_rows(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                     int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm_split_rows(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                     int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace lg::cpu

// The OpenBLAS calls behind cpu::gemm, with the int range checks cblas needs.
#include "cpu/gemm.h"

#include "cpu/parallel.h"

#include <limits>

#include <algorithm>

#include <cblas.h>

#include <layoutguard/error.h>

namespace lg::cpu {
namespace {

blasint as_blas_int(int64_t v, const char* what) {
  LG_CHECK(v >= 0 && v <= std::numeric_limits<blasint>::max(), "[gemm] ", what, " = ", v,
           " exceeds the BLAS integer range; required at most ", std::numeric_limits<blasint>::max());
  return static_cast<blasint>(v);
}

struct BlasDims {
  blasint m, n, k, lda, ldb, ldc;
  BlasDims(int64_t m_, int64_t n_, int64_t k_, int64_t lda_, int64_t ldb_, int64_t ldc_)
      : m(as_blas_int(m_, "m")), n(as_blas_int(n_, "n")), k(as_blas_int(k_, "k")),
        lda(as_blas_int(lda_, "lda")), ldb(as_blas_int(ldb_, "ldb")), ldc(as_blas_int(ldc_, "ldc")) {}
};

CBLAS_TRANSPOSE trans(bool t) { return t ? CblasTrans : CblasNoTrans; }

// An empty inner dimension leaves C = beta * C; BLAS would reject the leading dims of the
// empty operands instead.
template <typename T>
void scale_only(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale_only(m, n, beta, c, ldc);
  const BlasDims d(m, n, k, lda, ldb, ldc);
  cblas_sgemm(CblasRowMajor, trans(trans_a), trans(trans_b), d.m, d.n, d.k, alpha, a, d.lda, b, d.ldb,
              beta, c, d.ldc);
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale_only(m, n, beta, c, ldc);
  const BlasDims d(m, n, k, lda, ldb, ldc);
  cblas_dgemm(CblasRowMajor, trans(trans_a), trans(trans_b), d.m, d.n, d.k, alpha, a, d.lda, b, d.ldb,
              beta, c, d.ldc);
}

namespace {

template <typename T>
void split_rows(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  constexpr int64_t kMinRowsPerThread = 64, kBlock = 2048;
  if (!would_parallelise(m, kMinRowsPerThread)) return gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  parallel_for(m, kMinRowsPerThread, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; r += kBlock) {
      const int64_t rows = std::min(kBlock, r1 - r);
      // Row r of op(A) starts r rows down A, or r columns across A when A is transposed.
      gemm(trans_a, trans_b, rows, n, k, alpha, a + (trans_a ? r : r * lda), lda, b, ldb, beta, c + r * ldc, ldc);
    }
  });
}

}  // namespace

void gemm_split_rows(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                     int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  split_rows(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm_split_rows(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                     int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  split_rows(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace lg::cpu

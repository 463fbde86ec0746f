// cuBLAS's GEMM takes its sizes, leading dimensions and batch count as int. A value past
// INT_MAX cast down would describe another product (a cut M leaves rows of the output
// unwritten; a cut leading dimension reads the wrong rows), so each is checked first. Pure
// host code, so the CPU tests can reach it.
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

#include <layoutguard/error.h>

namespace lg::cuda::detail {

struct GemmInts {
  int m, n, k, lda, ldb, ldc, batch;
};

// The column-major call's m, n, k, leading dimensions of its A, B and C and the batch count, as
// int; NotImplementedError naming every value past INT_MAX otherwise (the product is valid, cuBLAS's
// 32-bit interface cannot express it).
inline GemmInts gemm_ints(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int64_t batch,
                          std::string_view op) {
  const int64_t values[] = {m, n, k, lda, ldb, ldc, batch};
  const char* const names[] = {"m", "n", "k", "lda", "ldb", "ldc", "batch"};
  std::string past;
  for (size_t i = 0; i < 7; ++i)
    if (values[i] < 0 || values[i] > INT_MAX) past += lg::detail::str(past.empty() ? "" : ", ", names[i], "=", values[i]);
  LG_CHECK_NOT_IMPLEMENTED(past.empty(), "[", op, "] received a product whose cuBLAS arguments do not fit in int (", past,
                           "); required each size, leading dimension and the batch count at most ", INT_MAX,
                           " (split the product, or run it on the CPU)");
  return {static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), static_cast<int>(lda),
          static_cast<int>(ldb), static_cast<int>(ldc), static_cast<int>(batch)};
}

}  // namespace lg::cuda::detail

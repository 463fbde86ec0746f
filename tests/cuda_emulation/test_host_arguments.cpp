// Host-side argument packing of the CUDA backend, checked without a GPU: cuBLAS's int sizes.
#include <climits>
#include <string>

#include <doctest/doctest.h>

#include "cuda/gemm_ints.h"

using lg::cuda::detail::gemm_ints;

TEST_CASE("cuBLAS's int arguments: values up to INT_MAX pass, anything past is refused by name") {
  const auto g = gemm_ints(INT_MAX, 3, 4, INT_MAX, 4, INT_MAX, 7, "mm");
  CHECK(g.m == INT_MAX);
  CHECK(g.n == 3);
  CHECK(g.k == 4);
  CHECK(g.lda == INT_MAX);
  CHECK(g.ldb == 4);
  CHECK(g.ldc == INT_MAX);
  CHECK(g.batch == 7);
  // linear on 2^32 + 1 rows: a cast would make it one row and leave the rest unwritten.
  const int64_t rows = (int64_t{1} << 32) + 1;
  CHECK_THROWS_WITH_AS(gemm_ints(1, rows, 1, 1, 1, 1, 1, "gemm (cuBLAS)"),
                       doctest::Contains("[gemm (cuBLAS)] received a product whose cuBLAS arguments do not fit in int "
                                         "(n=4294967297); required"),
                       lg::NotImplementedError);
  // A row stride past INT_MAX as a leading dimension, and a batch count: each named.
  try {
    gemm_ints(2, 2, 2, (int64_t{1} << 32) + 16, 2, 2, int64_t{1} << 31, "bmm");
    FAIL("expected NotImplementedError");
  } catch (const lg::NotImplementedError& e) {
    const std::string m = e.what();
    CHECK(m.find("lda=4294967312, batch=2147483648") != std::string::npos);
    CHECK(m.find(std::to_string(INT_MAX)) != std::string::npos);
  }
}

// Host-side argument packing of the CUDA backend, checked without a GPU: cuBLAS's int sizes,
// and the launch shapes the emulation refuses as a device would.
#include <climits>
#include <string>

#include <doctest/doctest.h>

#include "cuda/gemm_ints.h"
#include "cuda/kernels/emulation.h"

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

TEST_CASE("the emulation refuses a launch shape a device refuses, with the device's error") {
  namespace emulation = lg::cuda::kernels::emulation;
  int runs = 0;
  const auto count = [&] { ++runs; };
  emulation::run(dim3(2, 1, 1), dim3(4, 1, 1), count);
  CHECK(emulation::take_last_error() == cudaSuccess);
  CHECK(runs == 8);
  for (const auto& [grid, block] : {std::pair{dim3(0, 1, 1), dim3(32, 1, 1)}, {dim3(1, 65536, 1), dim3(32, 1, 1)},
                                    {dim3(1, 1, 1), dim3(2048, 1, 1)}, {dim3(1, 1, 1), dim3(64, 32, 1)},
                                    {dim3(1, 1, 1), dim3(1, 1, 65)}}) {
    CAPTURE(grid.x);
    CAPTURE(grid.y);
    CAPTURE(block.x);
    emulation::run(grid, block, count);
    CHECK(emulation::take_last_error() == cudaErrorInvalidConfiguration);
    CHECK(emulation::take_last_error() == cudaSuccess);  // read once, as cudaGetLastError
  }
  CHECK(runs == 8);  // none of them ran
}

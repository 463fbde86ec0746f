// RowWalk, the division-free (row, column) walk of the CUDA copy kernels
// (src/cuda/kernels/row_walk.h), checked on the host against division: every width the
// kernels meet (1 to 130, covering 7x7 maps and the 64- and 128-element chunks), the steps
// they take (one packet, a block's worth of packets, steps shorter and longer than a row), and
// int64 indices past 2^32.
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "cuda/kernels/row_walk.h"

namespace {

using lg::cuda::kernels::RowWalk;

template <typename I>
bool walk_matches_division(I start, I step, I width, int steps) {
  RowWalk<I> at(start, step, width);
  for (int s = 0; s < steps; ++s) {
    const I index = start + static_cast<I>(s) * step;
    if (at.row != index / width || at.col != index % width) return false;
    // next() from here, over one row and a bit, on a copy (as the kernels do per element).
    RowWalk<I> element = at;
    for (I e = 0; e < width + 2; ++e) {
      if (element.row != (index + e) / width || element.col != (index + e) % width) return false;
      element.next();
    }
    at.advance();
  }
  return true;
}

}  // namespace

TEST_SUITE("tensor") {
TEST_CASE("RowWalk advances like division for the widths and steps of the copy kernels") {
  int checked = 0;
  for (int32_t width = 1; width <= 130; ++width)
    for (int32_t step : {1, 2, 4, 8, 16, 49, 64, 127, 128, 2048, 2 * width + 3})
      for (int32_t start : {0, 1, 7, 8, width - 1, width, 3 * width + 5, 255 * 8}) {
        if (start < 0) continue;
        CHECK_MESSAGE(walk_matches_division<int32_t>(start, step, width, 40),
                      "width " << width << " step " << step << " start " << start);
        ++checked;
      }
  CHECK(checked > 10000);
}

TEST_CASE("RowWalk with int64 indices past 2^32 and a step of zero") {
  const int64_t big = (int64_t{1} << 33) + 12345;
  for (int64_t width : {int64_t{7}, int64_t{49}, int64_t{3136}, int64_t{1} << 20})
    for (int64_t step : {int64_t{8}, int64_t{2048}, (int64_t{1} << 31) + 3})
      CHECK_MESSAGE(walk_matches_division<int64_t>(big, step, width, 20), "width " << width << " step " << step);
  RowWalk<int32_t> still(10, 0, 3);
  still.advance();
  CHECK(still.row == 3);
  CHECK(still.col == 1);
}
}  // TEST_SUITE

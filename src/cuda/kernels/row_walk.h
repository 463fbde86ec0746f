// A linear index walked as (row, column) in rows of a fixed width, without dividing at each
// step. The copy kernels turn a thread's element index into a position in a plane on every
// element of every packet; an integer division by a run-time width costs a few dozen
// instructions on the GPU, which made the NCHW <-> NHWC copies of small float16 maps
// instruction-bound rather than memory-bound. The walk divides twice when it starts and then
// only adds and compares. Header-only and free of library includes (a .cu file uses it on the
// device; tests/core/test_row_walk.cpp checks it against division on the host).
#pragma once

#include "core/integer_math.h"  // LG_HOST_DEVICE

namespace lg::cuda::kernels {

template <typename I>
struct RowWalk {
  I row = 0, col = 0;  // the current index is row * width + col, 0 <= col < width

  // Starts at index `start`; advance() moves by `step` (any value >= 0), next() by one.
  LG_HOST_DEVICE RowWalk(I start, I step, I width)
      : row(start / width), col(start - row * width), width_(width), step_row_(step / width),
        step_col_(step - step_row_ * width) {}

  LG_HOST_DEVICE void advance() {
    row += step_row_;
    col += step_col_;
    if (col >= width_) {
      col -= width_;
      ++row;
    }
  }
  LG_HOST_DEVICE void next() {
    if (++col == width_) {
      col = 0;
      ++row;
    }
  }

 private:
  I width_, step_row_, step_col_;
};

}  // namespace lg::cuda::kernels

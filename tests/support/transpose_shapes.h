// The NCHW shapes that take every transpose kernel of the CUDA copy (src/cuda/kernels/copy.cu and
// short_planes_2byte.cuh), shared by the GPU suite (tests/cuda/test_cuda_tensors.cpp) and the
// emulated kernels (tests/cuda_emulation/test_emulated_kernels.cpp), so both cover the same cases:
// - odd sizes: the scalar tiles; sizes divisible by 2 or 4: the packed ones (partial 64- and
//   128-wide tiles included);
// - 3 to 5 channels: the few-planes kernel (packed when the plane divides into 16-byte packets,
//   partial chunks included); 1-3-pixel planes: the thin kernel;
// - planes of at most 64 pixels (72 channels: a partial chunk) and at most 64 channels over a
//   long plane: the short-planes kernels, with the packet dividing the short side (64, 24, 40
//   channels in float16) and not (49 and 25 pixels, 24 channels in uint8), over several block
//   strides (56 x 256, 64 x 600, 24 x 800); for 2-byte types their own kernel, paired when 8
//   divides the short side (8 to 64 here), single otherwise.
#pragma once

#include <cstdint>
#include <vector>

namespace lg::testing {

inline const std::vector<std::vector<int64_t>>& transpose_kernel_shapes() {
  static const std::vector<std::vector<int64_t>> shapes{
      {3, 70, 9, 11},  {2, 3, 40, 41},  {2, 130, 1, 3},  {1, 33, 33, 33}, {2, 68, 12, 20},  {3, 130, 10, 14},
      {2, 5, 30, 20},  {2, 256, 7, 8},  {2, 72, 7, 7},   {2, 70, 5, 5},   {1, 3, 48, 48},   {2, 4, 64, 64},
      {1, 264, 5, 5},  {2, 64, 20, 30}, {3, 40, 11, 24}, {2, 24, 50, 16}, {2, 2048, 7, 7}, {3, 8, 30, 36},
      {2, 16, 9, 40},  {2, 32, 8, 8},   {2, 200, 8, 8},  {1, 96, 4, 8},   {2, 64, 16, 16}};
  return shapes;
}

}  // namespace lg::testing

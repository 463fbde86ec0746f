// The sum of one double per thread over a block, shared by the normalisation kernels. Include
// it after device_types.cuh (the emulated build defines __device__ there).
#pragma once

namespace lg::cuda::kernels {

// The sum of every thread's `value` over a block of kThreads threads (a 1-D block), through a
// shared-memory tree in `partial` (kThreads doubles); every thread gets it, and `partial` is
// free again on return. A tree rather than warp shuffles, so the emulated build runs it too.
template <int kThreads>
__device__ inline double block_sum(double* partial, double value) {
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  const double total = partial[0];
  __syncthreads();
  return total;
}

}  // namespace lg::cuda::kernels

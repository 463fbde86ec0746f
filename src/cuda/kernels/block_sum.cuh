// Folds of one value per thread over a block, shared by the normalisation and reduction kernels. Include
// it after device_types.cuh (the emulated build defines __device__ there).
#pragma once

namespace lg::cuda::kernels {

// Every thread's `value` folded with `combine` (associative) over a block of kThreads threads
// (a 1-D block), through a shared-memory tree in `partial` (kThreads values); every thread gets
// the result, and `partial` is free again on return. A tree rather than warp shuffles, so the
// emulated build runs it too.
template <int kThreads, typename T, typename Combine>
__device__ inline T block_fold(T* partial, T value, Combine combine) {
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) partial[threadIdx.x] = combine(partial[threadIdx.x], partial[threadIdx.x + width]);
    __syncthreads();
  }
  const T total = partial[0];
  __syncthreads();
  return total;
}

// The sum of one double per thread over the block.
template <int kThreads>
__device__ inline double block_sum(double* partial, double value) {
  return block_fold<kThreads>(partial, value, [](double a, double b) { return a + b; });
}

}  // namespace lg::cuda::kernels

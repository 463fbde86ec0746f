// Normalisation on the device: per-group moments (a block per group, a shared-memory tree
// reduction in double) and the elementwise affine map. The host combines the moments into
// statistics (src/cuda/norm_ops.cpp), exactly as the CPU kernel does.
#include "cuda/kernels/device_types.cuh"

namespace lg::cuda::kernels {
namespace {

constexpr int kThreads = 256;

template <typename S>
__global__ void moments_kernel(GroupedView v, const S* x, const double* shift, int power, double* out) {
  __shared__ double partial[kThreads];
  for (int64_t g = blockIdx.x; g < v.groups; g += gridDim.x) {
    const S* base = x + row_major_offset(g, v.outer_dims, v.outer_size, v.outer_stride);
    const double s = shift != nullptr ? shift[g] : 0.0;
    double acc = 0;
    for (int64_t j = threadIdx.x; j < v.inner_count; j += blockDim.x) {
      const double d = static_cast<double>(Storage<S>::load(base[row_major_offset(j, v.inner_dims, v.inner_size, v.inner_stride)])) - s;
      acc += power == 1 ? d : d * d;
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int width = kThreads / 2; width > 0; width /= 2) {
      if (static_cast<int>(threadIdx.x) < width) partial[threadIdx.x] += partial[threadIdx.x + width];
      __syncthreads();
    }
    if (threadIdx.x == 0) out[g] = partial[0];
    __syncthreads();
  }
}

template <typename S>
__global__ void affine_kernel(GroupedView v, const S* x, S* y, const double* mean, const double* scale,
                              const double* shift, const double* w, const double* b) {
  using T = Storage<S>;
  using C = typename T::Compute;
  const int64_t n = v.groups * v.inner_count;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t g = i / v.inner_count, j = i % v.inner_count;
    const int64_t xo = row_major_offset(g, v.outer_dims, v.outer_size, v.outer_stride) + row_major_offset(j, v.inner_dims, v.inner_size, v.inner_stride);
    const int64_t yo =
        row_major_offset(g, v.outer_dims, v.outer_size, v.outer_out_stride) + row_major_offset(j, v.inner_dims, v.inner_size, v.inner_out_stride);
    double r = (static_cast<double>(T::load(x[xo])) - mean[g]) * scale[g];
    if (w != nullptr) r *= w[j];
    if (shift != nullptr) r += shift[g];
    if (b != nullptr) r += b[j];
    y[yo] = T::store(static_cast<C>(r));
  }
}

}  // namespace

cudaError_t group_moments(const GroupedView& v, const char* in, ScalarType type, const double* shift, int power,
                          double* out, cudaStream_t stream) {
  if (v.groups == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) {
      const unsigned blocks = static_cast<unsigned>(v.groups < 65535 * 16 ? v.groups : 65535 * 16);
      moments_kernel<S><<<blocks, kThreads, 0, stream>>>(v, reinterpret_cast<const S*>(in), shift, power, out);
      err = cudaGetLastError();
    }
  });
  return err;
}

cudaError_t group_affine(const GroupedView& v, const char* in, char* out, ScalarType type, const double* mean,
                         const double* scale, const double* shift, const double* w, const double* b, cudaStream_t stream) {
  const int64_t n = v.groups * v.inner_count;
  if (n == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) {
      affine_kernel<S><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(v, reinterpret_cast<const S*>(in),
                                                                        reinterpret_cast<S*>(out), mean, scale, shift, w, b);
      err = cudaGetLastError();
    }
  });
  return err;
}

}  // namespace lg::cuda::kernels

// The device probe: proves that a kernel compiled for this build's architecture runs here.
#include "cuda/kernels/probe.h"

namespace lg::cuda::kernels {
namespace {

__global__ void write_value(int* out, int value) { *out = value; }

}  // namespace

cudaError_t run_probe(int value, int* observed) {
  int* device_value = nullptr;
  cudaError_t err = cudaMalloc(&device_value, sizeof(int));
  if (err != cudaSuccess) return err;
  write_value<<<1, 1>>>(device_value, value);
  err = cudaGetLastError();
  if (err == cudaSuccess)
    err = cudaMemcpy(observed, device_value, sizeof(int), cudaMemcpyDeviceToHost);
  const cudaError_t free_err = cudaFree(device_value);
  return err != cudaSuccess ? err : free_err;
}

}  // namespace lg::cuda::kernels

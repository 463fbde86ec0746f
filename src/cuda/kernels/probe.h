// Plain launcher for the device probe kernel (no library headers: .cu files stay behind this seam).
#pragma once

#include <cuda_runtime_api.h>

namespace lg::cuda::kernels {

// Runs one tiny kernel on the current device that writes `value` to device memory, reads it
// back and stores it in *observed. Returns the first CUDA error met (cudaSuccess otherwise).
cudaError_t run_probe(int value, int* observed);

}  // namespace lg::cuda::kernels

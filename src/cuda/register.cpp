// register_cuda_kernels: no CUDA kernels yet (the CUDA backend issue adds them); the probe in
// probe.cpp is the only CUDA code so far.
#include "dispatch/kernel_table.h"

namespace lg {

void register_cuda_kernels(dispatch::KernelTable&) {}

}  // namespace lg

// register_cuda_kernels in a build without CUDA: registers nothing, so every CUDA lookup fails
// with the dispatcher's "no kernel for device" error (device checks raise NotCompiledError first).
#include "dispatch/kernel_table.h"

namespace lg {

void register_cuda_kernels(dispatch::KernelTable&) {}

}  // namespace lg

// register_cuda_kernels: the CUDA backend's only entry into the kernel table. Every computing
// op of the list has a CUDA kernel (cuDNN and cuBLAS ones when those libraries are found); an
// op without one raises NotImplementedError naming the op and the device.
#include "cuda/register.h"

#include "dispatch/kernel_table.h"

namespace lg {

void register_cuda_kernels(dispatch::KernelTable& table) {
  register_cuda_copy_kernels(table);
  register_cuda_pointwise_kernels(table);
  register_cuda_window_kernels(table);
  register_cuda_reduce_kernels(table);
  register_cuda_norm_kernels(table);
#if LG_HAVE_CUBLAS
  register_cublas_kernels(table);
#endif
#if LG_HAVE_CUDNN
  register_cudnn_conv_kernels(table);
#endif
}

}  // namespace lg

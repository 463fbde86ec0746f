// The CUDA kernel files' registration functions (each keeps its kernels in an anonymous namespace).
#pragma once

namespace lg {
namespace dispatch {
class KernelTable;
}
void register_cuda_copy_kernels(dispatch::KernelTable& table);       // copy_, fill_ (src/cuda/copy.cpp)
void register_cuda_pointwise_kernels(dispatch::KernelTable& table);  // src/cuda/pointwise.cpp
void register_cuda_window_kernels(dispatch::KernelTable& table);    // upsample, pooling, pad (src/cuda/window_ops.cpp)
void register_cuda_reduce_kernels(dispatch::KernelTable& table);    // sum, mean, amax, amin, softmax (src/cuda/reduce_ops.cpp)
void register_cuda_norm_kernels(dispatch::KernelTable& table);      // the norms (src/cuda/norm_ops.cpp)
void register_cublas_kernels(dispatch::KernelTable& table);           // src/cuda/cublas_gemm.cpp (when cuBLAS is found)
void register_cudnn_conv_kernels(dispatch::KernelTable& table);      // src/cuda/cudnn_conv.cpp (when cuDNN is found)
}  // namespace lg

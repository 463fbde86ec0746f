// Batch norm through cuDNN's norm-forward graph node (src/cuda/cudnn_batch_norm.cpp, built
// when cuDNN is found). norm_ops.cpp offers it every batch_norm call while
// lg::cuda::cudnn_batch_norm() is on and keeps its own kernels for what cuDNN declines.
#pragma once

#include "dispatch/kernel_signatures.h"

namespace lg::cuda {

// Runs batch_norm (training or evaluation, per p) on cuDNN and returns true; returns false,
// having touched nothing, when the call is outside what cuDNN's engines take: a dtype other
// than float16/bfloat16/float32, an input neither NCHW-contiguous nor channels-last dense, an
// output with other strides, or no engine for the shape. Errors of cuDNN or CUDA otherwise
// raise lg::DeviceError as any other CUDA op.
bool batch_norm_cudnn(const Tensor& out, const Tensor& input, const dispatch::ChannelNormParams& p);

}  // namespace lg::cuda

// Tensors to the plain Geometry the CUDA kernels take: size-1 dims dropped, dims ordered by the
// output's strides (outermost first) and merged where every operand steps through them evenly,
// so a dense NHWC or NCHW operation becomes one unit-stride run -- the same reduction the CPU
// elementwise loop makes.
#pragma once

#include <initializer_list>
#include <string_view>

#include <layoutguard/tensor.h>

#include "cuda/kernels/launch.h"

namespace lg::cuda::detail {

// out and inputs share out's sizes (inputs broadcast with stride 0). Throws
// NotImplementedError naming op when more than kernels::kMaxDims dims remain after merging.
kernels::Geometry make_geometry(const Tensor& out, std::initializer_list<const Tensor*> inputs, std::string_view op);

kernels::ScalarType scalar_type(DType dtype);

// reduce_ops.cpp's arguments, here so tests/cuda_emulation runs the kernels with the same ones.
// Reducing `input` into `out` (same rank, size 1 where reduced): kept and reduced dims (size-1
// dims dropped); the op is left for the caller. Throws NotImplementedError beyond kMaxDims.
kernels::ReduceArgs reduce_args(const Tensor& out, const Tensor& input);
// softmax / log_softmax of `input` along `dim` into `out`.
kernels::SoftmaxArgs softmax_args(const Tensor& out, const Tensor& input, int64_t dim, bool log);

// The sizes and strides of a 5-D tensor (pooling and upsampling see 2-D ops with depth 1).
kernels::View5 view5(const Tensor& t);

}  // namespace lg::cuda::detail

// sum, mean, amax, amin, softmax and log_softmax on CUDA: the dims split into kept and reduced
// ones (the infer step gives out the input's rank with size 1 where reduced), handed to
// kernels/reduce.cu as sizes and strides.
#include "cuda/geometry.h"
#include "cuda/register.h"
#include "cuda/runtime.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

namespace kernels = cuda::kernels;

void reduce_cuda(const Tensor& out, const Tensor& input, const dispatch::ReduceParams& p) {
  kernels::ReduceArgs a = cuda::detail::reduce_args(out, input);
  switch (p.kind) {
    case dispatch::ReduceKind::Sum: a.op = kernels::ReduceOp::Sum; break;
    case dispatch::ReduceKind::Mean: a.op = kernels::ReduceOp::Mean; break;
    case dispatch::ReduceKind::Max: a.op = kernels::ReduceOp::Max; break;
    case dispatch::ReduceKind::Min: a.op = kernels::ReduceOp::Min; break;
  }
  cuda::detail::check_launch(kernels::reduce(a, cuda::detail::scalar_type(input.dtype()), cuda::detail::stream_for(out.device())),
                             "kernels::reduce", "reduce", out.device());
}

void softmax_cuda(const Tensor& out, const Tensor& input, const dispatch::SoftmaxParams& p) {
  const kernels::SoftmaxArgs a = cuda::detail::softmax_args(out, input, p.dim, p.log);
  cuda::detail::check_launch(kernels::softmax(a, cuda::detail::scalar_type(input.dtype()), cuda::detail::stream_for(out.device())),
                             "kernels::softmax", p.log ? "log_softmax" : "softmax", out.device());
}

}  // namespace

void register_cuda_reduce_kernels(dispatch::KernelTable& table) {
  using dispatch::OpId;
  table.set<OpId::sum>(DeviceType::CUDA, reduce_cuda, "reduce_cuda");
  table.set<OpId::mean>(DeviceType::CUDA, reduce_cuda, "reduce_cuda");
  table.set<OpId::amax>(DeviceType::CUDA, reduce_cuda, "reduce_cuda");
  table.set<OpId::amin>(DeviceType::CUDA, reduce_cuda, "reduce_cuda");
  table.set<OpId::softmax>(DeviceType::CUDA, softmax_cuda, "softmax_cuda");
  table.set<OpId::log_softmax>(DeviceType::CUDA, softmax_cuda, "softmax_cuda");
}

}  // namespace lg

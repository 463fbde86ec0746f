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

void too_many_dims(std::string_view op, const Tensor& t) {
  throw NotImplementedError(lg::detail::str("[", op, "] on CUDA supports at most ", kernels::kMaxDims,
                                            " non-trivial dims, but got input of size ", t.sizes()));
}

void reduce_cuda(const Tensor& out, const Tensor& input, const dispatch::ReduceParams& p) {
  kernels::ReduceArgs a;
  a.out = static_cast<char*>(out.data_ptr());
  a.in = static_cast<const char*>(input.data_ptr());
  a.outputs = out.numel();
  a.count = 1;
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (input.size(d) == 1) continue;
    if (out.size(d) == 1) {
      if (a.reduced == kernels::kMaxDims) too_many_dims("reduce", input);
      a.red_size[a.reduced] = input.size(d);
      a.red_stride[a.reduced] = input.stride(d);
      a.count *= input.size(d);
      ++a.reduced;
    } else {
      if (a.kept == kernels::kMaxDims) too_many_dims("reduce", input);
      a.kept_size[a.kept] = input.size(d);
      a.kept_in_stride[a.kept] = input.stride(d);
      a.kept_out_stride[a.kept] = out.stride(d);
      ++a.kept;
    }
  }
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
  kernels::SoftmaxArgs a;
  a.out = static_cast<char*>(out.data_ptr());
  a.in = static_cast<const char*>(input.data_ptr());
  a.log = p.log;
  a.lines = 1;
  if (input.dim() == 0) {
    a.n = 1;
  } else {
    a.n = input.size(p.dim);
    a.in_stride = input.stride(p.dim);
    a.out_stride = out.stride(p.dim);
    for (int64_t d = 0; d < input.dim(); ++d) {
      if (d == p.dim || input.size(d) == 1) continue;
      if (a.other == kernels::kMaxDims) too_many_dims("softmax", input);
      a.other_size[a.other] = input.size(d);
      a.other_in_stride[a.other] = input.stride(d);
      a.other_out_stride[a.other] = out.stride(d);
      a.lines *= input.size(d);
      ++a.other;
    }
  }
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

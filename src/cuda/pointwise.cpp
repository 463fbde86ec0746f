// The Pointwise family on CUDA: the infer step (src/ops/pointwise.cpp) is shared with the CPU;
// this file turns its broadcast operands into a Geometry and launches kernels::pointwise, one
// registered kernel per Pointwise op of op_list.def.
#include "cuda/geometry.h"
#include "cuda/register.h"
#include "cuda/runtime.h"
#include "dispatch/kernel_table.h"
#include "dispatch/pointwise_math.h"

namespace lg {
namespace {

namespace kernels = cuda::kernels;
using dispatch::OpId;
using dispatch::PointwiseMath;

template <OpId kId>
void pointwise_cuda(const Tensor& out, std::span<const Tensor> in, const dispatch::PointwiseParams& p) {
  kernels::Geometry g;
  if (in.size() == 1) g = cuda::detail::make_geometry(out, {&in[0]}, "pointwise");
  else if (in.size() == 2) g = cuda::detail::make_geometry(out, {&in[0], &in[1]}, "pointwise");
  else g = cuda::detail::make_geometry(out, {&in[0], &in[1], &in[2]}, "pointwise");
  const DType input_type = PointwiseMath<kId>::kArity == dispatch::PointwiseArity::Where ? in[1].dtype() : in[0].dtype();
  const cudaError_t err = kernels::pointwise(kId, cuda::detail::scalar_type(input_type), g, p,
                                             cuda::detail::stream_for(out.device()));
  cuda::detail::check_launch(err, "kernels::pointwise", "pointwise", out.device());
}

template <OpId kId>
void register_if_pointwise(dispatch::KernelTable& table, std::string_view name) {
  if constexpr (PointwiseMath<kId>::kIsPointwise) table.set_pointwise(kId, DeviceType::CUDA, pointwise_cuda<kId>, name);
}

}  // namespace

void register_cuda_pointwise_kernels(dispatch::KernelTable& table) {
#define LG_OP(name, ...) register_if_pointwise<OpId::name>(table, #name "_cuda");
#include "dispatch/op_list.def"
#undef LG_OP
}

}  // namespace lg

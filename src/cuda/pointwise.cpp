// The Pointwise family on CUDA: the infer step (src/ops/pointwise.cpp) is shared with the CPU;
// this file turns its broadcast operands into a Geometry and launches kernels::pointwise.
#include "cuda/geometry.h"
#include "cuda/register.h"
#include "cuda/runtime.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

namespace kernels = cuda::kernels;
using dispatch::OpId;

template <kernels::PointwiseOp kOp>
void pointwise_cuda(const Tensor& out, std::span<const Tensor> in, const dispatch::PointwiseParams& p) {
  kernels::PointwiseParams kp;
  kp.alpha = p.alpha;
  kp.beta = p.beta;
  kp.gamma = p.gamma;
  kp.lo = p.lo;
  kp.hi = p.hi;
  kp.has_lo = p.has_lo;
  kp.has_hi = p.has_hi;
  kp.flag = p.flag;
  kernels::Geometry g;
  if (in.size() == 1) g = cuda::detail::make_geometry(out, {&in[0]}, "pointwise");
  else if (in.size() == 2) g = cuda::detail::make_geometry(out, {&in[0], &in[1]}, "pointwise");
  else g = cuda::detail::make_geometry(out, {&in[0], &in[1], &in[2]}, "pointwise");
  const DType input_type = kOp == kernels::PointwiseOp::Where ? in[1].dtype() : in[0].dtype();
  const cudaError_t err = kernels::pointwise(kOp, cuda::detail::scalar_type(input_type), g, kp,
                                             cuda::detail::stream_for(out.device()));
  cuda::detail::check_launch(err, "kernels::pointwise", "pointwise", out.device());
}

}  // namespace

void register_cuda_pointwise_kernels(dispatch::KernelTable& table) {
#define LG_REGISTER(op, kop) \
  table.set_pointwise(OpId::op, DeviceType::CUDA, pointwise_cuda<kernels::PointwiseOp::kop>, #op "_cuda");
  LG_REGISTER(neg, Neg) LG_REGISTER(abs, Abs) LG_REGISTER(relu, Relu) LG_REGISTER(relu6, Relu6)
  LG_REGISTER(leaky_relu, LeakyRelu) LG_REGISTER(elu, Elu) LG_REGISTER(sigmoid, Sigmoid) LG_REGISTER(tanh, Tanh)
  LG_REGISTER(gelu, Gelu) LG_REGISTER(silu, Silu) LG_REGISTER(hardswish, Hardswish)
  LG_REGISTER(hardsigmoid, Hardsigmoid) LG_REGISTER(exp, Exp) LG_REGISTER(log, Log) LG_REGISTER(sqrt, Sqrt)
  LG_REGISTER(rsqrt, Rsqrt) LG_REGISTER(clamp, Clamp) LG_REGISTER(add, Add) LG_REGISTER(sub, Sub)
  LG_REGISTER(mul, Mul) LG_REGISTER(div, Div) LG_REGISTER(maximum, Maximum) LG_REGISTER(minimum, Minimum)
  LG_REGISTER(pow, Pow) LG_REGISTER(eq, Eq) LG_REGISTER(ne, Ne) LG_REGISTER(lt, Lt) LG_REGISTER(le, Le)
  LG_REGISTER(gt, Gt) LG_REGISTER(ge, Ge) LG_REGISTER(where, Where)
#undef LG_REGISTER
}

}  // namespace lg

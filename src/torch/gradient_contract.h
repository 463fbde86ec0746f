// The gradient contract's test, shared by lg::torch::check_gradient and the Python package's
// walk over a module tree, which names a parameter only when its gradient breaks it.
#pragma once

#include <ATen/core/Tensor.h>

#include "torch/intercepted_call.h"

namespace lg::torch_bridge {

// Whether `grad` breaks the contract for `param`: both readable, the same sizes, elements to lay
// out, other strides. An undefined, non-strided or differently sized gradient is not the
// contract's business, nor is an empty one: its strides address nothing.
inline bool breaks_gradient_contract(const at::Tensor& param, const at::Tensor& grad) {
  return readable(param) && readable(grad) && param.sizes() == grad.sizes() && param.numel() != 0 &&
         param.strides() != grad.strides();
}

// Whether two tensors of the same sizes differ in strides only where a dim has size 1, whose
// stride addresses nothing (a 1x1 convolution's weight: both contiguous and channels-last).
inline bool strides_differ_in_size_one_dims_only(const at::Tensor& a, const at::Tensor& b) {
  for (int64_t d = 0; d < a.dim(); ++d)
    if (a.size(d) != 1 && a.stride(d) != b.stride(d)) return false;
  return true;
}

}  // namespace lg::torch_bridge

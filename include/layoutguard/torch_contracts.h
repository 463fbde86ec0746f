// Contracts of PyTorch programs that no single op breaks: checked on request. Needs the
// PyTorch headers (at::Tensor), unlike layoutguard/torch.h.
#pragma once

#include <string_view>

#include <ATen/core/Tensor.h>

namespace torch::nn {
class Module;
}

namespace lg::torch {

// The gradient contract: after backward, a parameter's .grad must have the parameter's
// strides. DDP's "grad strides do not match bucket view strides" warning says the same
// without naming the parameter; this reports op "autograd::grad_strides" at module path
// `parameter` ("layer1.0.conv1.weight"), under the effective mode (throw raises). Returns
// whether the strides match. A size mismatch, an undefined or non-strided grad is not this
// contract's business (true). A mismatch of tensors that layoutguard's reports cannot
// describe (a dtype its tensors lack, such as int8 or complex, or the meta device) returns
// false without a report.
bool check_gradient(std::string_view parameter, const at::Tensor& param, const at::Tensor& grad);

// The same for every parameter of `module` and its submodules that has a .grad, under its
// name in `module` ("layer1.0.conv1.weight"; a parameter shared by two submodules is checked
// once, under its first name). Call it after backward(): what the Python package does after
// each backward() by itself. Returns whether every .grad has its parameter's strides. A
// ModuleHolder (torch::nn::Conv2d) passes its module as `*holder`.
bool check_gradients(const ::torch::nn::Module& module);

}  // namespace lg::torch

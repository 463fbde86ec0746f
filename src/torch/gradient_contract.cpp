// The gradient contract (torch_contracts.h): a parameter's .grad has the parameter's strides.
#include <layoutguard/torch_contracts.h>

#include <string>
#include <unordered_set>

#include <torch/nn/module.h>

#include <layoutguard/guard.h>
#include <layoutguard/torch.h>

#include "guard/runtime.h"
#include "torch/gradient_contract.h"
#include "torch/package_hooks.h"
#include "torch/stand_in.h"

namespace lg::torch {

bool check_gradient(std::string_view parameter, const at::Tensor& param, const at::Tensor& grad) {
  if (!torch_bridge::breaks_gradient_contract(param, grad)) return true;
  const guard::Mode mode = lg::torch::mode();  // with a mode carried to this thread
  if (mode == guard::Mode::Off) return false;
  static const std::string op = "autograd::grad_strides";
  static const uint32_t op_index = guard::detail::foreign_op_index(op);
  const Tensor stand_ins[] = {torch_bridge::stand_in(param), torch_bridge::stand_in(grad)};
  if (!stand_ins[0].defined() || !stand_ins[1].defined()) return false;  // a dtype layoutguard lacks
  const MemoryFormat format = param.dim() == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
  std::string rule =
      "the gradient contract requires a parameter's .grad to have the parameter's strides (input 0: the "
      "parameter, output 0: its .grad); DDP copies such a gradient into its bucket on every step and warns "
      "'grad strides do not match bucket view strides'. Make the parameter and the gradient agree before "
      "the first step: model.to(memory_format=torch.channels_last) in Python, in C++ "
      "param.set_data(param.contiguous(at::MemoryFormat::ChannelsLast)) for each 4-D parameter (ChannelsLast3d for 5-D)";
  if (torch_bridge::strides_differ_in_size_one_dims_only(param, grad))
    rule += ". Here only dims of size 1 differ, so the elements lie in the same order; DDP compares the strides "
            "as they are, so it still warns and copies";
  const guard::Finding finding{op, LayoutPolicy::Preserve, format, 0, 0, std::move(rule)};
  const std::string path(parameter);
  hooks::OpCall call{op, LayoutPolicy::Preserve, {stand_ins, 1}, {stand_ins + 1, 1}, stand_ins[0].device(),
                     "autograd", path, 0, op};
  guard::detail::ForeignCall foreign;
  foreign.finding = &finding;
  foreign.locate = torch_bridge::current_locator();  // the program's line that checked: after backward()
  foreign.raise = torch_bridge::current_raiser();     // as an op's violation is raised (set_raiser)
  guard::detail::after_foreign_op(call, mode, op_index, foreign);
  return false;
}

bool check_gradients(const ::torch::nn::Module& module) {
  bool all_match = true;
  std::unordered_set<const c10::TensorImpl*> seen;  // a shared parameter, under its first name
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    const at::Tensor& param = item.value();
    if (!param.defined() || !seen.insert(param.unsafeGetTensorImpl()).second) continue;
    const at::Tensor& grad = param.grad();
    if (grad.defined() && !check_gradient(item.key(), param, grad)) all_match = false;
  }
  return all_match;
}

}  // namespace lg::torch

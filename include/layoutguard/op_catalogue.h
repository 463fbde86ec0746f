// The operator catalogue: every built-in op with its family, layout policy, kernels per device,
// dtypes and known differences from PyTorch, as the dispatcher knows them at run time. The CLI's
// `layoutguard ops` prints it and docs/operators.md is generated from it.
#pragma once

#include <string_view>
#include <vector>

namespace lg {

struct OpDescription {
  std::string_view name;
  std::string_view family;       // Pointwise, Conv, Norm, Pool, Resample, ... (op_list.def)
  std::string_view policy;       // the guard's layout contract: Preserve, ConvLike, ...
  std::string_view header;       // the public header declaring it, under layoutguard/
  std::string_view cpu_kernel;   // the registered kernel's name, "composite", "view", or empty
  std::string_view cuda_kernel;  // likewise for CUDA (empty: none registered in this build)
  std::string_view dtypes;
  std::string_view pytorch_difference;  // empty when layoutguard behaves as PyTorch 2.11
};

// In op_list.def order.
std::vector<OpDescription> op_catalogue();

}  // namespace lg

// Custom operators: functions an application registers at run time, dispatched and checked by
// the guard exactly like built-in ops (hooks, LAYOUTGUARD modes, reports, shadow).
//
//   lg::CustomOp my_relu = lg::register_op("my_relu", lg::LayoutPolicy::Preserve,
//       [](const std::vector<lg::Tensor>& in) { return std::vector<lg::Tensor>{...}; });
//   std::vector<lg::Tensor> out = my_relu({x});
//
// A kernel that handles only contiguous inputs registers with KernelLayouts::ContiguousOnly:
// the dispatcher then converts non-contiguous inputs with contiguous() first (the layout
// fallback), the guard records the conversion bytes, and -- the output being contiguous -- a
// Preserve op on channels_last input is flagged.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <layoutguard/layout_policy.h>
#include <layoutguard/tensor.h>

namespace lg {

using KernelFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Which input layouts a custom op's kernels accept.
enum class KernelLayouts { Any, ContiguousOnly };

namespace detail {
struct CustomOpEntry;
}

class CustomOp {
 public:
  CustomOp() = default;  // an empty handle; calling it raises ValueError
  // Runs the kernel for the inputs' device. All defined inputs must be on one device; the
  // kernel must return defined tensors.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  const std::string& name() const;
  LayoutPolicy policy() const;
  bool valid() const { return entry_ != nullptr; }

 private:
  friend CustomOp register_op(std::string, LayoutPolicy, KernelLayouts, KernelFn, KernelFn);
  explicit CustomOp(std::shared_ptr<const detail::CustomOpEntry> entry) : entry_(std::move(entry)) {}
  std::shared_ptr<const detail::CustomOpEntry> entry_;
};

// Registers op `name` (letters, digits, '_', '.', '::'; unique; not a built-in op's name).
// ValueError for a bad or taken name or an empty cpu_kernel.
CustomOp register_op(std::string name, LayoutPolicy policy, KernelFn cpu_kernel,
                     KernelFn cuda_kernel = nullptr);
CustomOp register_op(std::string name, LayoutPolicy policy, KernelLayouts layouts,
                     KernelFn cpu_kernel, KernelFn cuda_kernel = nullptr);

}  // namespace lg

// Custom operators: a registry of names and kernels, and the call path through the dispatcher.
#include <layoutguard/custom_op.h>

#include <algorithm>
#include <mutex>
#include <set>

#include <layoutguard/error.h>

#include "core/tensor_internal.h"
#include "dispatch/dispatcher.h"

namespace lg {
namespace detail {

struct CustomOpEntry {
  std::string name;
  LayoutPolicy policy;
  KernelLayouts layouts;
  KernelFn cpu, cuda;
  std::string cpu_kernel_name, cuda_kernel_name;
  uint32_t index;  // dense op index after the built-ins
};

}  // namespace detail

namespace {

struct Registry {
  std::mutex mutex;
  std::set<std::string, std::less<>> names;
};

Registry& registry() {
  static Registry r;
  return r;
}

// Colons only as "::" (namespaces): a lone ':' separates fields in LAYOUTGUARD_OPTIONS and in
// suppressions files, so such a name could not be allowed or suppressed.
bool valid_name(std::string_view name) {
  const bool chars = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == ':';
  });
  if (!chars || name.front() == ':' || name.back() == ':') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != ':') continue;
    if (i + 1 >= name.size() || name[i + 1] != ':' || (i + 2 < name.size() && name[i + 2] == ':')) return false;
    ++i;
  }
  return true;
}

bool is_builtin(std::string_view name) {
  return std::find(dispatch::kOpNames.begin(), dispatch::kOpNames.end(), name) != dispatch::kOpNames.end();
}

}  // namespace

CustomOp register_op(std::string name, LayoutPolicy policy, KernelFn cpu_kernel, KernelFn cuda_kernel) {
  return register_op(std::move(name), policy, KernelLayouts::Any, std::move(cpu_kernel),
                     std::move(cuda_kernel));
}

CustomOp register_op(std::string name, LayoutPolicy policy, KernelLayouts layouts, KernelFn cpu_kernel,
                     KernelFn cuda_kernel) {
  LG_CHECK(valid_name(name), "[register_op] received the name '", name,
           "'; required a non-empty name of letters, digits, '_', '.' and '::'");
  LG_CHECK(!is_builtin(name), "[register_op] received the name '", name,
           "', which is a built-in op; required a name of its own");
  // Values cast from integers: the guard's rule and the kernel note switch on them.
  LG_CHECK(policy == LayoutPolicy::Preserve || policy == LayoutPolicy::ConvLike || policy == LayoutPolicy::RankChanging ||
               policy == LayoutPolicy::Explicit || policy == LayoutPolicy::View,
           "[register_op] op '", name, "' received layout policy ", static_cast<int>(policy),
           "; required Preserve, ConvLike, RankChanging, Explicit or View");
  LG_CHECK(layouts == KernelLayouts::Any || layouts == KernelLayouts::ContiguousOnly, "[register_op] op '", name,
           "' received kernel layouts ", static_cast<int>(layouts), "; required Any or ContiguousOnly");
  LG_CHECK(static_cast<bool>(cpu_kernel), "[register_op] op '", name,
           "' received an empty cpu_kernel; required a callable (every op runs on CPU)");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  LG_CHECK(!r.names.contains(name), "[register_op] the name '", name,
           "' is already registered; required a unique name");
  auto entry = std::make_shared<detail::CustomOpEntry>();
  entry->name = name;
  entry->policy = policy;
  entry->layouts = layouts;
  entry->cpu = std::move(cpu_kernel);
  entry->cuda = std::move(cuda_kernel);
  const std::string suffix = layouts == KernelLayouts::ContiguousOnly ? " (contiguous only)" : "";
  entry->cpu_kernel_name = name + ":cpu" + suffix;
  entry->cuda_kernel_name = name + ":cuda" + suffix;
  entry->index = static_cast<uint32_t>(dispatch::kNumOps + r.names.size());
  r.names.insert(std::move(name));
  return CustomOp(std::move(entry));
}

const std::string& CustomOp::name() const {
  LG_CHECK(entry_ != nullptr, "[CustomOp::name] called on an empty CustomOp; required a handle from lg::register_op");
  return entry_->name;
}

LayoutPolicy CustomOp::policy() const {
  LG_CHECK(entry_ != nullptr, "[CustomOp::policy] called on an empty CustomOp; required a handle from lg::register_op");
  return entry_->policy;
}

std::vector<Tensor> CustomOp::operator()(const std::vector<Tensor>& inputs) const {
  LG_CHECK(entry_ != nullptr, "[CustomOp] called an empty CustomOp; required a handle returned by lg::register_op");
  const detail::CustomOpEntry& op = *entry_;
  const Tensor* first = nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    if (!first) first = &inputs[i];
    LG_CHECK(inputs[i].device() == first->device(), "[", op.name, "] input ", i, " is on ",
             inputs[i].device(), " but an earlier input is on ", first->device(),
             "; required all inputs on one device");
  }
  const Device device = first ? first->device() : kCPU;
  detail::check_device_supported(device, op.name);
  const bool on_cuda = device.is_cuda();
  const KernelFn& kernel = on_cuda ? op.cuda : op.cpu;
  LG_CHECK_NOT_IMPLEMENTED(static_cast<bool>(kernel), "[", op.name, "] has no kernel for device ",
                           device, "; it was registered with a cpu kernel only");
  const std::string& kernel_name = on_cuda ? op.cuda_kernel_name : op.cpu_kernel_name;

  auto body = [&](std::span<const Tensor> in) {
    std::vector<Tensor> args(in.begin(), in.end());
    if (op.layouts == KernelLayouts::ContiguousOnly)
      for (Tensor& t : args)
        if (t.defined() && !t.is_contiguous()) t = t.contiguous();
    dispatch::note_kernel(kernel_name);  // after the conversions, which note their own kernels
    std::vector<Tensor> outputs = kernel(args);
    for (size_t i = 0; i < outputs.size(); ++i)
      LG_CHECK(outputs[i].defined(), "[", op.name, "] kernel ", kernel_name,
               " returned an undefined tensor as output ", i, "; required defined outputs");
    return outputs;
  };
  return dispatch::run_op(dispatch::OpInfo{op.name, op.policy, op.index}, inputs, body, true);
}

}  // namespace lg

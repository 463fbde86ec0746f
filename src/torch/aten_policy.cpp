// Schema -> layout policy for ATen ops (see aten_policy.h).
#include "torch/aten_policy.h"

#include <string_view>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function_schema.h>

namespace lg::torch_bridge {
namespace {

enum class Rule { Preserve, ConvLike, Factory, RankChanging, Explicit };

struct Entry {
  const char* name;
  Rule rule;
  const char* reason;
};

constexpr Entry kTable[] = {
#define LG_ATEN_POLICY(name, rule, why) {name, Rule::rule, why},
#define LG_ATEN_NOT_SHADOWED(name, why)
#include "torch/aten_policies.def"
#undef LG_ATEN_NOT_SHADOWED
#undef LG_ATEN_POLICY
};

constexpr const char* kNotShadowed[] = {
#define LG_ATEN_POLICY(name, rule, why)
#define LG_ATEN_NOT_SHADOWED(name, why) name,
#include "torch/aten_policies.def"
#undef LG_ATEN_NOT_SHADOWED
#undef LG_ATEN_POLICY
};

// Whether shadow=1 compares the op: not one drawing random numbers (the tag PyTorch gives
// dropout, bernoulli, randn_like...; an argument of type Generator), not the table's.
bool shadow_compared(const c10::FunctionSchema& schema, std::string_view name) {
  for (const char* n : kNotShadowed)
    if (name == n) return false;
  for (const c10::Argument& a : schema.arguments())
    if (a.type()->kind() == c10::TypeKind::GeneratorType ||
        (a.type()->cast<c10::OptionalType>() &&
         a.type()->cast<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType))
      return false;
  const auto op = c10::Dispatcher::singleton().findOp(schema.operator_name());  // c10::optional on 1.13
  return !(op && op->hasTag(at::Tag::nondeterministic_seeded));
}

const Entry* table_entry(std::string_view name) {
  for (const Entry& e : kTable)
    if (name == e.name) return &e;
  return nullptr;
}

bool is_tensor_like(const c10::TypePtr& type) {
  // Tensor, Tensor?, Tensor[] and Tensor?[] are what the check can see.
  if (type->kind() == c10::TypeKind::TensorType) return true;
  if (auto opt = type->cast<c10::OptionalType>()) return is_tensor_like(opt->getElementType());
  if (auto list = type->cast<c10::ListType>()) return is_tensor_like(list->getElementType());
  return false;
}

bool is_tensor_list(const c10::TypePtr& type) {
  const auto list = type->cast<c10::ListType>();
  return list && list->getElementType()->kind() == c10::TypeKind::TensorType;
}

// AtenPolicy::element_lists: an op returning one tensor list whose element i comes from element
// i of its tensor-list arguments. A _foreach_ op's tensor-list arguments all come before its
// single tensors (every such op of torch 1.13 to 2.11). Any other op qualifies when its only
// tensor argument is one Tensor[] (atleast_3d, dequantize over a list):
// the runtime check then wants as many results as elements (AtenPolicy::elements_exact).
struct ElementLists {
  uint8_t lists = 0;
  bool exact = false;
};
ElementLists element_lists_of(const c10::FunctionSchema& schema) {
  if (schema.returns().size() != 1 || !is_tensor_list(schema.returns()[0].type())) return {};
  const bool foreach = schema.name().rfind("aten::_foreach_", 0) == 0;
  uint8_t lists = 0;
  bool single_seen = false;
  for (const c10::Argument& a : schema.arguments()) {
    if (is_tensor_list(a.type())) {
      if (single_seen) return {};
      ++lists;
    } else if (is_tensor_like(a.type())) {
      single_seen = true;
    }
  }
  if (foreach) return {lists, false};
  return lists == 1 && !single_seen ? ElementLists{1, true} : ElementLists{};
}

// Whether every result aliases `self` and no other argument: views and in-place ops of their
// first argument (detach, view, add_), not out= ops, whose `out` may be resized.
bool results_alias_self_only(const c10::FunctionSchema& schema) {
  const auto& args = schema.arguments();
  if (schema.returns().empty() || args[0].alias_info() == nullptr ||
      args[0].type()->kind() != c10::TypeKind::TensorType)
    return false;
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i].alias_info() != nullptr) return false;
  for (const c10::Argument& r : schema.returns())
    if (r.alias_info() == nullptr) return false;
  return true;
}

// Whether the op returns nothing and writes in place into `self`, a tensor or a tensor list,
// and into positional arguments only: the multi-tensor ops of the optimizers and of the
// gradient scaler (_foreach_add_, _fused_adam_, _amp_foreach_non_finite_check_and_unscale_
// with its found_inf). Their tensors keep their geometry. The keyword-only clause is a guard
// for ops to come: no ATen op of torch 1.13 to 2.11 writes `self` and a keyword `out` too.
// _foreach_copy_ is where a multi-tensor copy converts, as copy_ is: it keeps the key, and its
// per-tensor copies (the CPU's) stay its nested calls.
bool writes_self_in_place_only(const c10::FunctionSchema& schema) {
  const auto& args = schema.arguments();
  if (!schema.returns().empty() || args.empty() || args[0].alias_info() == nullptr ||
      !is_tensor_like(args[0].type()) || schema.name() == "aten::_foreach_copy_")
    return false;
  for (const c10::Argument& a : args)
    if (a.alias_info() != nullptr && (!a.alias_info()->isWrite() || a.kwarg_only())) return false;
  return true;
}

}  // namespace

// Such an op cannot lose a format it was never given, at any depth.
bool takes_no_tensor(const c10::FunctionSchema& schema) {
  for (const c10::Argument& a : schema.arguments())
    if (is_tensor_like(a.type())) return false;
  return true;
}

AtenPolicy derive_policy(const c10::FunctionSchema& schema) {
  AtenPolicy p;
  p.name = schema.name();
  p.is_copy = p.name == "aten::copy_";
  bool tensor_in = false, tensor_out = false;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const c10::Argument& a = schema.arguments()[i];
    tensor_in = tensor_in || is_tensor_like(a.type());
    if (a.name() == "memory_format") p.memory_format_arg = static_cast<int>(i);
    if (a.name() == "keepdim") {
      p.keepdim = true;
      p.reason = "a reduction (keepdim) when its output is smaller: the kept dims have size 1";
    }
  }
  for (const c10::Argument& r : schema.returns()) {
    tensor_out = tensor_out || is_tensor_like(r.type());
    // Views, in-place and out= results alias an argument: their layout is the argument's.
    if (r.alias_info() != nullptr) {
      p.policy = LayoutPolicy::Explicit;
      p.reason = r.alias_info()->isWrite() ? "in-place or out=: the result is an argument"
                                           : "a view: the result aliases an argument";
    }
  }
  if (const Entry* e = table_entry(p.name); e && p.policy != LayoutPolicy::Explicit) {
    p.reason = e->reason;
    switch (e->rule) {
      case Rule::Preserve: p.policy = LayoutPolicy::Preserve; break;
      case Rule::ConvLike: p.policy = LayoutPolicy::ConvLike; break;
      case Rule::Factory:
        p.policy = LayoutPolicy::Preserve;  // the rule that names it a root cause when nested
        p.factory = true;
        break;
      case Rule::RankChanging: p.policy = LayoutPolicy::RankChanging; break;
      case Rule::Explicit: p.policy = LayoutPolicy::Explicit; break;
    }
  }
  p.format_request = p.memory_format_arg >= 0;
  const ElementLists elements = element_lists_of(schema);
  p.element_lists = elements.lists;
  p.elements_exact = elements.exact;
  p.shadow_compared = shadow_compared(schema, p.name);
  if (*p.reason == '\0') p.reason = "default: the output keeps the format of a same-rank input";
  // copy_ is in-place (Explicit) but is still looked at: it is where conversions happen.
  p.checkable = tensor_in && tensor_out && (p.policy != LayoutPolicy::Explicit || p.is_copy || p.format_request);
  return p;
}

bool passes_by_key(const c10::OperatorHandle& op) {
  const c10::FunctionSchema& schema = op.schema();
  if (takes_no_tensor(schema)) return true;
  // Never checked (a view or in-place result; not copy_, no memory_format), ...
  if (derive_policy(schema).checkable) return false;
  // ... writing or aliasing self alone ...
  if (!results_alias_self_only(schema) && !writes_self_in_place_only(schema)) return false;
  // ... and a kernel of its own, whose inner calls (if any) are not the op's decomposition.
  return !op.hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd);
}

}  // namespace lg::torch_bridge

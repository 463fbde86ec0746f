// The layout policy of an ATen op, derived from its schema (src/torch/aten_policies.def holds
// the ops the schema cannot tell). Computed once per op and kept for the process.
#pragma once

#include <cstdint>
#include <string>

#include <layoutguard/layout_policy.h>

namespace c10 {
struct FunctionSchema;
class OperatorHandle;
}

namespace lg::torch_bridge {

struct AtenPolicy {
  std::string name;               // "aten::add": the qualified name without the overload
  LayoutPolicy policy = LayoutPolicy::Preserve;
  bool factory = false;           // not a violation at user level; a root cause when nested
  bool checkable = true;          // false: no tensor in or out, or never checked (Explicit)
  bool is_copy = false;           // aten::copy_: a layout conversion when dst and src differ
  int memory_format_arg = -1;     // argument index of `memory_format`: a value makes it Explicit
  // The op converts to a format the caller names (a memory_format argument, contiguous()).
  // Inside a backward node the caller is PyTorch's derivative formula, not the user: there
  // such a call is checked as Preserve (group_norm's backward makes its gradient contiguous).
  bool format_request = false;
  // A `keepdim` argument: a reduction when its output is smaller than its input (the kept
  // dims have size 1 and the format says little), else checked as Preserve (a backward such as
  // value_selecting_reduction_backward carries the forward's keepdim).
  bool keepdim = false;
  // A multi-tensor op (_foreach_sqrt, atleast_3d over a list): its result list's element i is made
  // from element i of each of its first `element_lists` arguments, all tensor lists, and from
  // the single tensors after them; each element is checked against those alone. 0: the call is
  // checked whole.
  uint8_t element_lists = 0;
  // The op takes its one tensor list alone: element by element only when it returned as many
  // tensors as it was given (else the call is checked whole).
  bool elements_exact = false;
  // shadow=1 may run the op again on contiguous copies and compare: false for ops that draw
  // random numbers (PyTorch's nondeterministic_seeded tag) and the table's exceptions, whose
  // results may differ between two right answers (the index chosen among equal values).
  bool shadow_compared = true;
  uint32_t op_index = 0;          // the guard's foreign op index (the report's per-op table)
  const char* reason = "";        // why: the table's text, or the schema fact that decided
};

// Derives the policy: a view or aliasing output (`Tensor(a)`), an in-place or out= op
// (`Tensor(a!)`), a `keepdim` argument (a reduction), a rank the schema cannot promise, or
// the table's entry; and whether shadow=1 compares it (the op's tags, the table).
AtenPolicy derive_policy(const c10::FunctionSchema& schema);

// Whether the bridge's key lets the op pass by, unseen: it takes no tensor (empty, zeros,
// arange: it cannot lose a format it was never given, at any depth), or it is a view or an
// in-place op of its first argument (detach, view, t, add_, relu_: every result aliases
// `self`, no memory_format argument, not copy_) with a kernel of its own, not one composed of
// other ops (reshape, flatten), whose inner calls would then reach the key as the user's. The
// in-place multi-tensor ops that return nothing (_foreach_mul_, _fused_sgd_) count as in-place
// ops of `self`, whose other written arguments are positional (not an out= op's `out` list).
// Such an op is never checked, and skipping the key saves its dispatch: in a ResNet-50
// training step these are half of the ATen calls; a multi-tensor op would be boxed, its
// tensor lists copied into the fallback's stack and out again.
bool passes_by_key(const c10::OperatorHandle& op);

// Whether no argument of the op is a tensor (empty, zeros, randn, arange...).
bool takes_no_tensor(const c10::FunctionSchema& schema);

}  // namespace lg::torch_bridge

// LayoutViolation and ShadowMismatch: the facts of a broken contract and their fixed text.
#include <layoutguard/violation.h>

#include <layoutguard/report.h>

#include "core/printable_text.h"
#include "guard/runtime.h"

namespace lg {

OperandLayout OperandLayout::of(std::string role, size_t index, const Tensor& t) {
  OperandLayout o;
  o.role = std::move(role);
  o.index = index;
  o.defined = t.defined();
  if (!t.defined()) return o;
  o.dtype = t.dtype();
  o.device = t.device();
  o.sizes = t.sizes().vec();
  o.strides = t.strides().vec();
  o.storage_offset = t.storage_offset();
  o.dim_order = t.dim_order();
  o.format = layout::format_name(t.sizes(), t.strides());
  return o;
}

std::string OperandLayout::describe() const {
  // Pads "input 0:" and "output 0:" to the same width so the layouts line up.
  std::string head = role + " " + std::to_string(index) + ":";
  head.resize(std::max<size_t>(head.size() + 1, 10), ' ');
  if (!defined) return head + "undefined";
  std::string line = head + std::string(dtype_name(dtype)) + " " + device.str() + " " +
                     to_string(sizes) + ":" + to_string(strides);
  if (storage_offset != 0) line += " offset=" + std::to_string(storage_offset);
  return line + " order=" + dim_order + " " + format;
}

// An empty module path in the program's own terms: a PyTorch program's ops and contracts (the
// bridge's kernels "aten" and "autograd") have the outermost nn.Module's empty name there too,
// and know of no guard::ModuleScope.
namespace {
std::string no_module_path(std::string_view kernel) {
  return kernel == "aten" || kernel == "autograd" ? "(top level: outside every named submodule)"
                                                  : "(none: not inside a guard::ModuleScope)";
}
}  // namespace

std::string format_violation(const ViolationInfo& v) {
  const std::string lost(memory_format_name(v.lost));
  const auto format_of = [](const std::vector<OperandLayout>& list, size_t i) {
    return i < list.size() ? list[i].format : std::string("?");
  };
  const auto rank_of = [](const std::vector<OperandLayout>& list, size_t i) {
    return i < list.size() ? list[i].sizes.size() : size_t{0};
  };
  std::string text = "[layoutguard] " + v.op + " lost " + lost + ": output " + std::to_string(v.output_index) +
                     " is " + format_of(v.outputs, v.output_index);
  if (rank_of(v.outputs, v.output_index) == rank_of(v.inputs, v.input_index))
    text += " but input " + std::to_string(v.input_index) + " is " + format_of(v.inputs, v.input_index) + "\n";
  else  // a rank-changing view that hid the format (check.cpp, hides_channels_last)
    text += ": its " + lost + " data suggests contiguous_format\n";
  for (const OperandLayout& o : v.inputs) text += "  " + o.describe() + "\n";
  for (const OperandLayout& o : v.outputs) text += "  " + o.describe() + "\n";
  text += "  " + v.rule + "; kernel: " + v.kernel + "\n";
  text += "  module: " + (!v.module_path.empty() ? detail::printable_text(v.module_path) : no_module_path(v.kernel));
  if (v.depth > 0) text += " (op called by another op, depth " + std::to_string(v.depth) + ")";
  if (!v.root_cause.empty()) text += "\n  root cause: " + v.root_cause + ", called inside " + v.op + ", lost it first";
  if (!v.autograd_node.empty()) {
    text += "\n  autograd node: " + v.autograd_node + " (a backward op)";
    // Without a line, the option that keeps one is named only where it is off.
    if (!v.forward_call.empty())
      text += "\n  made by the forward call at: " + v.forward_call;
    else if (!guard::detail::current_options().forward_calls)
      text += "\n  made by: a forward call whose line was not kept (LAYOUTGUARD_OPTIONS forward_calls=1 keeps it)";
  }
  if (v.element)
    text += "\n  element: " + std::to_string(*v.element) + " of the op's tensor lists (the operands above are its)";
  if (!v.source_location.empty()) text += "\n  at: " + v.source_location;
  text += "\n  suppressions line that silences it here: " + guard::suppression_line_for(v) + "\n";
  text += "  (with these layouts only: " + guard::signature_suppression_line_for(v) + ")\n";
  if (v.backtrace.empty())
    text += "  stack trace: not captured (LAYOUTGUARD_OPTIONS backtrace=0)\n";
  else
    text += "  stack trace (most recent call first):\n" + v.backtrace;
  return text;
}

LayoutViolation::LayoutViolation(ViolationInfo info)
    : Error(format_violation(info)), info_(std::move(info)) {}

ShadowMismatch::ShadowMismatch(std::string op, size_t output_index, double max_abs_diff,
                               std::string message)
    : Error(message), op_(std::move(op)), output_index_(output_index), max_abs_diff_(max_abs_diff) {}

}  // namespace lg

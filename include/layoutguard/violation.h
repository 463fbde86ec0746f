// What the guard raises: lg::LayoutViolation (an op lost channels_last) and lg::ShadowMismatch
// (an op's result differs from the same op run on contiguous copies).
//
// LayoutViolation::what() has a fixed shape (tested against golden files):
//   [layoutguard] <op> lost channels_last: output 0 is contiguous but input 0 is channels_last
//     input 0:  float32 cpu (2, 8, 4, 4):(128, 1, 32, 8) order=acdb channels_last
//     output 0: float32 cpu (2, 8, 4, 4):(128, 16, 4, 1) order=abcd contiguous
//     policy Preserve requires a channels_last output when ...; kernel: <kernel>
//     module: layer1.0.conv2
//     stack trace (most recent call first):
//     #0 ...
// A rank-changing view that hid the format (x[0].unsqueeze(0): no input of the output's rank)
// has the headline "... lost channels_last: output 0 is <format>: its channels_last data
// suggests contiguous_format" instead. info() returns the same facts as data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <layoutguard/device.h>
#include <layoutguard/dtype.h>
#include <layoutguard/error.h>
#include <layoutguard/layout.h>
#include <layoutguard/layout_policy.h>
#include <layoutguard/tensor.h>

namespace lg {

// One operand's layout, copied out of the tensor (the tensor itself may be gone by the time a
// report is read).
struct OperandLayout {
  std::string role;  // "input" or "output"
  size_t index = 0;
  bool defined = false;
  DType dtype = kFloat32;
  Device device = kCPU;
  std::vector<int64_t> sizes, strides;
  int64_t storage_offset = 0;
  std::string dim_order;  // "acdb" for NHWC (see layout::dim_order)
  std::string format;     // "channels_last", "contiguous", ... (layout::format_name)

  static OperandLayout of(std::string role, size_t index, const Tensor& t);
  // "input 0:  float32 cpu (2, 8, 4, 4):(128, 1, 32, 8) order=acdb channels_last"
  std::string describe() const;
};

struct ViolationInfo {
  std::string op;
  LayoutPolicy policy = LayoutPolicy::Preserve;
  MemoryFormat lost = MemoryFormat::ChannelsLast;  // ChannelsLast or ChannelsLast3d
  size_t output_index = 0;  // the first output that lost the format
  size_t input_index = 0;   // the channels-last input that set the expectation
  std::string rule;         // what the policy required, one sentence
  std::vector<OperandLayout> inputs, outputs;
  std::string signature;  // guard::layout_signature of the call's operands
  std::string kernel;
  std::string module_path;  // "" outside any guard::ModuleScope
  int depth = 0;            // 0: called from user code
  std::string backtrace;    // symbolised frames; "" when backtrace=0
  // For a call outside every module: the first function on its stack that is neither
  // layoutguard's nor the standard library's ("app::preprocess"), which keys an
  // op:(top)@function suppressions line; "" inside a module or when the stack had none.
  std::string call_site;
  // Filled by the PyTorch bridge (layoutguard_torch), empty for layoutguard's own ops:
  std::string root_cause;       // the innermost nested op whose output lost the format first
                                // ("aten::new_empty" inside "aten::pad"); "" when it is op itself
  std::string autograd_node;    // the backward node that ran op ("UpsampleBicubic2DBackward0")
  std::string forward_call;     // the forward call that made that node ("model.py:42 in forward"),
                                // kept with option forward_calls; "" if not kept
  std::string source_location;  // the user's source line ("train.py:42 in step"); "" if unknown
  // A multi-tensor op (torch._foreach_add) is checked element by element: the index in its
  // tensor lists of the element whose output lost the format (the first one, in a record that
  // counts several); the operands above are that element's. Empty for other ops.
  std::optional<size_t> element;
};

// The what() text of a LayoutViolation with these facts.
std::string format_violation(const ViolationInfo& info);

class LayoutViolation : public Error {
 public:
  explicit LayoutViolation(ViolationInfo info);
  const ViolationInfo& info() const noexcept { return info_; }
  const std::string& op() const noexcept { return info_.op; }
  const std::string& module_path() const noexcept { return info_.module_path; }

 private:
  ViolationInfo info_;
};

// shadow=1 found an output that differs from the contiguous-path result beyond tolerance.
class ShadowMismatch : public Error {
 public:
  ShadowMismatch(std::string op, size_t output_index, double max_abs_diff, std::string message);
  const std::string& op() const noexcept { return op_; }
  size_t output_index() const noexcept { return output_index_; }
  double max_abs_diff() const noexcept { return max_abs_diff_; }

 private:
  std::string op_;
  size_t output_index_;
  double max_abs_diff_;
};

}  // namespace lg

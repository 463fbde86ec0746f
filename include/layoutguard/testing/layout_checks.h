// The checks behind the doctest and gtest assertion headers: framework-free predicates that
// return an explanation ("" when the check holds). Header-only, public API only.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn/module.h>

namespace lg::testing {

// The channels-last format for t's rank: ChannelsLast for 4-D, ChannelsLast3d for 5-D.
inline MemoryFormat channels_last_for(const Tensor& t) {
  return t.dim() == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
}

// "" when t is laid out in fmt (is_contiguous(fmt), PyTorch's test), else why not.
inline std::string explain_memory_format(const Tensor& t, MemoryFormat fmt) {
  if (!t.defined()) return "expected a " + std::string(memory_format_name(fmt)) + " tensor, got an undefined tensor";
  if (fmt == MemoryFormat::Preserve) return "memory format 'preserve' is not a layout to check against";
  if ((fmt == MemoryFormat::ChannelsLast && t.dim() != 4) || (fmt == MemoryFormat::ChannelsLast3d && t.dim() != 5))
    return "expected " + std::string(memory_format_name(fmt)) + ", which needs rank " +
           (fmt == MemoryFormat::ChannelsLast ? "4" : "5") + ", got " + describe_layout(t);
  if (t.is_contiguous(fmt)) return "";
  return "expected " + std::string(memory_format_name(fmt)) + ", got " + describe_layout(t);
}

inline std::string explain_channels_last(const Tensor& t) {
  if (t.defined() && t.dim() != 4 && t.dim() != 5)
    return "expected a channels_last 4-D or channels_last_3d 5-D tensor, got " + describe_layout(t);
  return explain_memory_format(t, t.defined() ? channels_last_for(t) : MemoryFormat::ChannelsLast);
}

inline std::string explain_strides(const Tensor& t, const std::vector<int64_t>& strides) {
  if (!t.defined()) return "expected strides " + to_string(strides) + ", got an undefined tensor";
  if (t.strides().vec() == strides) return "";
  return "expected strides " + to_string(strides) + ", got " + describe_layout(t);
}

// Largest |a - b| over all elements after converting both to float64; "" when every element
// is within atol + rtol * |b| (NaN equals NaN), else where the largest difference is.
inline std::string explain_values_differ(const Tensor& a, const Tensor& b, double atol = 1e-5,
                                         double rtol = 1e-4) {
  if (a.sizes() != b.sizes()) return "sizes differ: " + to_string(a.sizes()) + " vs " + to_string(b.sizes());
  const Tensor x = a.to(kFloat64).contiguous(), y = b.to(kFloat64).contiguous();
  const double* px = x.data_ptr<double>();
  const double* py = y.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (std::isnan(px[i]) && std::isnan(py[i])) continue;
    if (!(std::fabs(px[i] - py[i]) <= atol + rtol * std::fabs(py[i])))
      return "values differ at flat index " + std::to_string(i) + ": " + std::to_string(px[i]) +
             " vs " + std::to_string(py[i]);
  }
  return "";
}

// explain_memory_format, and for a tensor contiguous in both formats (C = 1, or H = W = 1: the
// strides of size-1 dims are free) also its suggested format, the only place such a layout
// shows -- unless the two formats give these sizes the very same strides (N x 1 x 1 x 1), where
// there is no layout to lose.
inline std::string explain_kept_format(const Tensor& t, MemoryFormat fmt) {
  if (std::string why = explain_memory_format(t, fmt); !why.empty()) return why;
  const MemoryFormat other = fmt == MemoryFormat::Contiguous ? channels_last_for(t) : MemoryFormat::Contiguous;
  const bool formats_differ = layout::strides_for(t.sizes(), fmt) != layout::strides_for(t.sizes(), other);
  if (formats_differ && t.suggest_memory_format() != fmt)
    return "expected " + std::string(memory_format_name(fmt)) + ", got " + describe_layout(t) +
           ", which suggests " + std::string(memory_format_name(t.suggest_memory_format()));
  return "";
}

// Runs fn on contiguous and channels-last versions of input: "" when each output keeps its
// input's format and both give the same values, else what went wrong. Each version is a fresh
// tensor with the format's own strides (clone(fmt)): for shapes contiguous in both formats
// that is the only way to hand fn a tensor that suggests fmt, and non-dense inputs become
// dense. (contiguous(fmt) returns such tensors unchanged, to(fmt) non-dense ones.)
template <typename Fn>
std::string explain_preserves_layout(Fn&& fn, const Tensor& input) {
  if (!input.defined() || (input.dim() != 4 && input.dim() != 5))
    return "the layout-preservation check needs a 4-D or 5-D input, got " + describe_layout(input);
  const MemoryFormat cl = channels_last_for(input);
  const Tensor out_cf = fn(input.clone(MemoryFormat::Contiguous));
  const Tensor out_cl = fn(input.clone(cl));
  if (std::string why = explain_kept_format(out_cl, cl); !why.empty())
    return "on channels-last input the output lost the format: " + why;
  if (std::string why = explain_kept_format(out_cf, MemoryFormat::Contiguous); !why.empty())
    return "on contiguous input the output is not contiguous: " + why;
  if (std::string why = explain_values_differ(out_cl, out_cf); !why.empty())
    return "channels-last and contiguous inputs give different values: " + why;
  return "";
}

// "" when stmt ran under guard mode throw without a LayoutViolation, else its text. (Other
// exceptions pass through: they are the test's own failure, not a layout finding.)
template <typename Fn>
std::string explain_violation_raised(Fn&& stmt) {
  lg::guard::Scope scope(lg::guard::Mode::Throw);
  try {
    stmt();
  } catch (const lg::LayoutViolation& e) {
    return e.what();
  }
  return "";
}

// "" when stmt, under guard mode throw, raised a LayoutViolation naming op, else what happened.
template <typename Fn>
std::string explain_violation_expected(Fn&& stmt, const std::string& op) {
  const std::string text = explain_violation_raised(stmt);
  if (text.rfind("[layoutguard] " + op + " lost ", 0) == 0) return "";
  if (text.empty()) return "expected a LayoutViolation from " + op + ", but the statement raised none";
  return "expected a LayoutViolation from " + op + ", got: " + text;
}

// "" when stmt, under guard mode throw, made at most max_bytes of layout conversions (copies
// between dim orders, ConversionTally) and raised no LayoutViolation; else the total and each
// conversion, most bytes first.
template <typename Fn>
std::string explain_conversions_at_most(int64_t max_bytes, Fn&& stmt) {
  if (max_bytes < 0)
    return "[conversions at most] max_bytes " + std::to_string(max_bytes) + "; required: a byte count >= 0";
  lg::guard::Scope scope(lg::guard::Mode::Throw);
  lg::guard::ConversionTally tally;
  try {
    stmt();
  } catch (const lg::LayoutViolation& e) {
    return std::string("expected no LayoutViolation while counting conversions, got: ") + e.what();
  }
  if (tally.bytes() <= max_bytes) return "";
  std::string why = "expected at most " + std::to_string(max_bytes) + " bytes of layout conversions, got " +
                    std::to_string(tally.bytes()) + " in " + std::to_string(tally.count()) + " copies:";
  for (const lg::guard::ConversionRecord& r : tally.records())
    why += "\n  " + r.op + (r.module_path.empty() ? "" : " in " + r.module_path) + ": " + r.from + " -> " + r.to +
           ", " + std::to_string(r.count) + "x, " + std::to_string(r.bytes) + " bytes";
  return why;
}

// "" when the weight of every convolution under `module` (itself included) is laid out in fmt
// -- what convert_conv2d_weight_memory_format / convert_conv3d_weight_memory_format do -- else
// each that is not, by name. fmt ChannelsLast checks Conv2d and ConvTranspose2d,
// ChannelsLast3d the 3-D ones, Contiguous all four. The test is is_contiguous(fmt), PyTorch's:
// a 1x1 kernel's weight passes either way. A module without such a convolution fails too: a
// check that can hold for nothing would not notice the wrong module.
inline std::string explain_conv_weights_in_format(nn::Module& module, MemoryFormat fmt) {
  if (fmt == MemoryFormat::Preserve)
    return "[conv weights in format] memory format 'preserve' is not a layout to check against; required: "
           "contiguous_format, channels_last or channels_last_3d";
  const bool two_d = fmt != MemoryFormat::ChannelsLast3d, three_d = fmt != MemoryFormat::ChannelsLast;
  std::string why;
  int checked = 0;
  for (const auto& [name, m] : module.named_modules()) {
    const std::string& type = m->type_name();
    const bool conv2 = type == "Conv2d" || type == "ConvTranspose2d", conv3 = type == "Conv3d" || type == "ConvTranspose3d";
    if (!(two_d && conv2) && !(three_d && conv3)) continue;
    for (const auto& [pname, weight] : m->named_parameters(false)) {
      if (pname != "weight") continue;
      ++checked;
      if (!weight.is_contiguous(fmt))
        why += "\n  " + (name.empty() ? std::string("(the module)") : name) + ".weight (" + type +
               "): " + describe_layout(weight);
    }
  }
  if (checked == 0)
    return std::string("expected convolution weights in ") + std::string(memory_format_name(fmt)) +
           ", but the module has no " + (fmt == MemoryFormat::ChannelsLast ? "Conv2d or ConvTranspose2d"
                                         : fmt == MemoryFormat::ChannelsLast3d ? "Conv3d or ConvTranspose3d"
                                                                                : "convolution");
  if (why.empty()) return "";
  return "expected every convolution weight in " + std::string(memory_format_name(fmt)) +
         " (convert_conv" + (fmt == MemoryFormat::ChannelsLast3d ? "3" : "2") + "d_weight_memory_format), " +
         "these are not:" + why;
}

}  // namespace lg::testing

// The layout contract: does this call's output keep the channels-last format its inputs had?
#include "guard/check.h"

#include <optional>

namespace lg {

std::string_view layout_policy_name(LayoutPolicy policy) {
  switch (policy) {
    case LayoutPolicy::Preserve: return "Preserve";
    case LayoutPolicy::ConvLike: return "ConvLike";
    case LayoutPolicy::RankChanging: return "RankChanging";
    case LayoutPolicy::Explicit: return "Explicit";
    case LayoutPolicy::View: return "View";
  }
  return "unknown";
}

namespace guard {
namespace {

MemoryFormat channels_last_for(int64_t rank) {
  return rank == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
}

// Whether t counts as channels-last for the check, given the ambiguity option.
bool counts_as_channels_last(const Tensor& t, Ambiguous ambiguous) {
  switch (classify(t)) {
    case LayoutClass::ChannelsLast: return true;
    case LayoutClass::Ambiguous:
      return ambiguous == Ambiguous::Check && t.suggest_memory_format() == channels_last_for(t.dim());
    case LayoutClass::Other:
    case LayoutClass::NotApplicable: break;
  }
  return false;
}

// Whether an output of the expected rank counts as having lost the format.
bool counts_as_lost(const Tensor& t, Ambiguous ambiguous) {
  switch (classify(t)) {
    case LayoutClass::Other: return true;
    case LayoutClass::Ambiguous:
      return ambiguous == Ambiguous::Check && t.suggest_memory_format() != channels_last_for(t.dim());
    case LayoutClass::ChannelsLast:
    case LayoutClass::NotApplicable: break;
  }
  return false;
}

// Whether t holds channels-last data under strides that suggest contiguous_format: a view set
// the stride of a size-1 dim (x[0].unsqueeze(0), an HWC image permuted and unsqueezed, the
// view_as that a full backward hook puts on a module's output). is_contiguous(channels_last)
// says yes, suggest_memory_format() no.
bool hides_channels_last(const Tensor& t) {
  return classify(t) == LayoutClass::Other && t.is_contiguous(channels_last_for(t.dim()));
}

// A view that changes rank can hand back channels-last data under strides that suggest
// contiguous_format: x[0].unsqueeze(0) of an NHWC batch is (1,C,H,W):(C,1,W*C,C), whose
// size-1 batch stride makes suggest_memory_format() say contiguous (pytorch#68430). No input
// has the output's rank, so the same-rank rule cannot see it; yet every op after it (conv,
// pooling, upsample, cat) follows the suggestion and runs as NCHW. The data order gives it
// away: only bytes laid out NHWC are is_contiguous(channels_last).
bool view_hides_channels_last(const Tensor& out, std::span<const Tensor> inputs) {
  return !inputs.empty() && inputs[0].defined() && inputs[0].dim() != out.dim() && hides_channels_last(out);
}

// For a mixed-format call that lost the format: the earlier input (before `cl_input`) whose
// layout the output took, if any. PyTorch's pointwise layout rule (TensorIterator's) follows
// the operands in argument order, so `cf + cl` is contiguous: the first operand wins, not the
// channels-last one. Saying which operand decided is what makes such a report
// actionable.
// Only an operand of the output's very sizes and strides counts, and only one that is plainly
// another format: a broadcast (1,C,1,1) or an ambiguous operand decides nothing that
// converting it would change, and cat, whose inputs differ from its output along the joined
// dim, follows a rule of its own.
std::optional<size_t> decided_by_earlier(const Tensor& out, std::span<const Tensor> inputs, size_t cl_input) {
  for (size_t j = 0; j < cl_input; ++j) {
    const Tensor& in = inputs[j];
    if (in.defined() && classify(in) == LayoutClass::Other && in.sizes() == out.sizes() && in.strides() == out.strides())
      return j;
  }
  return std::nullopt;
}

// A user-level call whose same-rank input hides channels-last data (above), and whose output
// holds none: the ops that choose their output's layout by the suggestion (pooling,
// upsampling, softmax, cat, normalization, a convolution with an NCHW weight) ran as NCHW and
// reordered the data. The view itself is often not the user's (a hook's, or one passed by
// without a check), and not every op after it loses the format (pointwise ops keep the
// strides, relu and a convolution with a channels-last weight restore them): the loss is here.
// x.contiguous(memory_format=channels_last) would not help, as the tensor already is that.
std::optional<Finding> hidden_input_loss(std::string_view op, LayoutPolicy policy, std::span<const Tensor> inputs,
                                         std::span<const Tensor> outputs, const Options& options) {
  if (policy != LayoutPolicy::Preserve && policy != LayoutPolicy::ConvLike) return std::nullopt;
  const size_t considered = policy == LayoutPolicy::ConvLike ? std::min<size_t>(inputs.size(), 1) : inputs.size();
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& out = outputs[o];
    if (!out.defined() || out.numel() == 0 || static_cast<int64_t>(out.nbytes()) < options.min_bytes ||
        classify(out) != LayoutClass::Other || out.is_contiguous(channels_last_for(out.dim())))
      continue;
    for (size_t i = 0; i < considered; ++i) {
      const Tensor& in = inputs[i];
      if (!in.defined() || in.dim() != out.dim() || !hides_channels_last(in)) continue;
      const std::string name(memory_format_name(channels_last_for(out.dim())));
      std::string rule = "policy " + std::string(layout_policy_name(policy)) + " requires a " + name +
                         " output when " + (policy == LayoutPolicy::ConvLike ? "the input" : "an input of the same rank") +
                         " holds " + name + " data; input " + std::to_string(i) + " does (is_contiguous(" + name +
                         ")) under strides that suggest contiguous_format, as a view that set the stride of a "
                         "size-1 dim leaves it (x[0].unsqueeze(0), an HWC image permuted and unsqueezed, the view_as "
                         "of a full backward hook; pytorch#68430), so the op ran as NCHW. Give it "
                         "x.to(memory_format=" + name + "), which restores the strides (x.contiguous(memory_format=...) "
                         "returns x as it is), or take x.narrow(0, i, 1) instead of x[i].unsqueeze(0)";
      return Finding{std::string(op), policy, channels_last_for(out.dim()), o, i, std::move(rule)};
    }
  }
  return std::nullopt;
}

}  // namespace

bool detail::has_unconverted_weight(LayoutPolicy policy, std::span<const Tensor> inputs) {
  return policy == LayoutPolicy::ConvLike && inputs.size() >= 2 && classify(inputs[0]) == LayoutClass::ChannelsLast &&
         classify(inputs[1]) == LayoutClass::Other;
}

LayoutClass classify(const Tensor& t) {
  if (!t.defined() || (t.dim() != 4 && t.dim() != 5)) return LayoutClass::NotApplicable;
  const MemoryFormat cl = channels_last_for(t.dim());
  if (t.is_contiguous() && t.is_contiguous(cl)) return LayoutClass::Ambiguous;
  return t.suggest_memory_format() == cl ? LayoutClass::ChannelsLast : LayoutClass::Other;
}

std::optional<Finding> check_layout(std::string_view op, LayoutPolicy policy,
                                    std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                                    const Options& options, std::string_view module_path, int depth) {
  if (options.is_exempt(op, module_path)) return std::nullopt;
  std::optional<Finding> loss = detail::find_loss(op, policy, inputs, outputs, options, depth);
  // Call-site and signature lines need the stack or the operands' layouts: asked only for a
  // real loss.
  if (loss && options.has_loss_line(op) &&
      options.loss_suppression_for(op, module_path, layout_signature(inputs, outputs)))
    return std::nullopt;
  return loss;
}

std::string layout_signature(std::span<const Tensor> inputs, std::span<const Tensor> outputs) {
  std::string s;
  const auto add = [&](std::span<const Tensor> list) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (i > 0) s += ",";
      s += list[i].defined() ? layout::format_name(list[i].sizes(), list[i].strides()) : std::string("none");
    }
  };
  add(inputs);
  s += "->";
  add(outputs);
  return s;
}

std::optional<Finding> detail::find_loss(std::string_view op, LayoutPolicy policy, std::span<const Tensor> inputs,
                                         std::span<const Tensor> outputs, const Options& options, int depth) {
  if (policy == LayoutPolicy::RankChanging || policy == LayoutPolicy::Explicit) return std::nullopt;
  const size_t considered = policy == LayoutPolicy::ConvLike ? std::min<size_t>(inputs.size(), 2)
                                                             : inputs.size();
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& out = outputs[o];
    // An output without elements has no data whose order could be lost (and PyTorch's kernels
    // mostly give such a tensor contiguous strides: grid_sample with no points, an empty batch).
    if (!out.defined() || out.numel() == 0 || static_cast<int64_t>(out.nbytes()) < options.min_bytes) continue;
    if (!counts_as_lost(out, options.ambiguous)) continue;
    for (size_t i = 0; i < considered; ++i) {
      const Tensor& in = inputs[i];
      if (in.defined() && in.dim() == out.dim() && counts_as_channels_last(in, options.ambiguous)) {
        const MemoryFormat lost = channels_last_for(out.dim());
        std::string rule = std::string("policy ") + std::string(layout_policy_name(policy)) +
                           " requires a " + std::string(memory_format_name(lost)) + " output when " +
                           (policy == LayoutPolicy::ConvLike ? (i == 0 ? "the input" : "the weight")
                                                             : "an input of the same rank") +
                           " is " + std::string(memory_format_name(lost));
        if (policy != LayoutPolicy::ConvLike) {
          if (const std::optional<size_t> j = decided_by_earlier(out, inputs, i))
            rule += "; the output took the layout of input " + std::to_string(*j) + " (" +
                    layout::format_name(inputs[*j].sizes(), inputs[*j].strides()) +
                    "): with mixed formats the first operand decides, not the channels_last one, "
                    "so convert input " + std::to_string(*j) + " to " + std::string(memory_format_name(lost)) +
                    " (or, if the op commutes, put input " + std::to_string(i) + " first)";
        }
        return Finding{std::string(op), policy, lost, o, i, std::move(rule)};
      }
    }
    if (policy == LayoutPolicy::View && options.hidden_views && depth == 0 && view_hides_channels_last(out, inputs)) {
      const MemoryFormat hidden = channels_last_for(out.dim());
      const std::string name(memory_format_name(hidden));
      std::string rule = "policy View: the output holds " + name + " data (is_contiguous(" + name +
                         ")) under strides that suggest contiguous_format, so the ops after it run as NCHW "
                         "(pytorch#68430: x[0].unsqueeze(0)); take x.narrow(0, i, 1) instead, which keeps the format";
      return Finding{std::string(op), policy, hidden, o, 0, std::move(rule)};
    }
  }
  if (options.hidden_views && depth == 0) return hidden_input_loss(op, policy, inputs, outputs, options);
  return std::nullopt;
}

}  // namespace guard
}  // namespace lg

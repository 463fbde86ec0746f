// Layout policies: what each operator promises about the layout of its outputs.
#pragma once

#include <string_view>

namespace lg {

// Preserve      a channels_last(_3d) input that matters gives channels_last(_3d) outputs of its
//               rank (pointwise, normalisation, pooling, upsampling, pad, cat, ...).
// ConvLike      as Preserve, where the inputs that matter are the input and the weight.
// RankChanging  flatten to 2-D, linear, reductions: never flagged (conversions are recorded).
// Explicit      the caller asked for the layout (contiguous, to, permute, as_strided): never
//               flagged (conversions are recorded).
// View          a view of the same rank must not turn a channels_last tensor into another
//               format: reshape/view/expand/squeeze-style views that rewrite size-1 strides
//               (docs/memory-format.md, "Views change strides, and so can change the
//               format") are flagged; permute and transpose are Explicit.
enum class LayoutPolicy { Preserve, ConvLike, RankChanging, Explicit, View };

std::string_view layout_policy_name(LayoutPolicy policy);

}  // namespace lg

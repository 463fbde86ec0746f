// The layout contract without the exemptions. Internal to src/guard.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include <layoutguard/guard.h>

namespace lg::guard::detail {

// check_layout's verdict before allow= and suppressions= apply: what the guard asks to learn
// whether a suppressions line silenced a real loss (the report's used and unused lines).
std::optional<Finding> find_loss(std::string_view op, LayoutPolicy policy, std::span<const Tensor> inputs,
                                 std::span<const Tensor> outputs, const Options& options, int depth);

// A ConvLike call with a channels-last input (argument 0) and a weight (argument 1) of another
// format: no violation (the output follows the input), but a weight the conversion utility
// missed, which the CUDA path converts on every call. (The other way round, NCHW input and
// channels-last weight, is where a loss span ends.) A 1x1 kernel's weight is both formats at
// once and never counts.
bool has_unconverted_weight(LayoutPolicy policy, std::span<const Tensor> inputs);

}  // namespace lg::guard::detail

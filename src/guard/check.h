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

}  // namespace lg::guard::detail

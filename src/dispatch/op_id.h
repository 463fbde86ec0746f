// OpId and the per-op facts, all expanded from op_list.def.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include <layoutguard/layout_policy.h>

namespace lg::dispatch {

enum class OpFamily { Copy, Conversion, View, Pointwise, Conv, Norm, Pool, Join, Resample, Linalg, Reduce, Composite };

enum class OpId : int {
#define LG_OP(name, family, policy, ...) name,
#include "dispatch/op_list.def"
#undef LG_OP
};

inline constexpr size_t kNumOps = 0
#define LG_OP(name, family, policy, ...) +1
#include "dispatch/op_list.def"
#undef LG_OP
    ;

inline constexpr std::array<std::string_view, kNumOps> kOpNames{
#define LG_OP(name, family, policy, ...) #name,
#include "dispatch/op_list.def"
#undef LG_OP
};

inline constexpr std::array<LayoutPolicy, kNumOps> kOpPolicies{
#define LG_OP(name, family, policy, ...) LayoutPolicy::policy,
#include "dispatch/op_list.def"
#undef LG_OP
};

inline constexpr std::array<OpFamily, kNumOps> kOpFamilies{
#define LG_OP(name, family, policy, ...) OpFamily::family,
#include "dispatch/op_list.def"
#undef LG_OP
};

constexpr std::string_view op_name(OpId id) { return kOpNames[static_cast<size_t>(id)]; }
constexpr LayoutPolicy op_policy(OpId id) { return kOpPolicies[static_cast<size_t>(id)]; }
constexpr OpFamily op_family(OpId id) { return kOpFamilies[static_cast<size_t>(id)]; }

}  // namespace lg::dispatch

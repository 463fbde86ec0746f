// Helpers shared by the op entry points in src/ops (not part of the public API).
#pragma once

#include <string_view>

#include <layoutguard/tensor.h>

namespace lg::detail {

// empty_like(t, options, fmt) with errors tagged by `op` (to, clone, contiguous, ...): ATen's
// Preserve rule (docs/memory-format.md, "Preserve: `clone()`, `to(dtype)` and the `*_like`
// factories") in one place.
Tensor empty_like_for(const Tensor& t, const TensorOptions& options, MemoryFormat fmt,
                      std::string_view op);

}  // namespace lg::detail

// Unboxed kernels on the bridge's key for the ops a CNN training step calls most.
#pragma once

namespace lg::torch_bridge {

// Registers them (once, with the fallback): every other op goes through the boxed fallback.
void register_unboxed_ops();

}  // namespace lg::torch_bridge

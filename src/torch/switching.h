// Registering the bridge's kernels and switching threads on (switching.cpp), as the
// interceptor and the scopes ask for it.
#pragma once

#include <atomic>
#include <string>

namespace lg::torch_bridge {

namespace detail {
// A bad LAYOUTGUARD_TORCH_UNBOXED, as its ConfigError's text: read once, when the bridge first
// switches on. Every enable() then raises it, and so does every user-level call of a thread
// that is switched on all the same (by LAYOUTGUARD at load, where nothing can raise). Hidden:
// read on every user-level call, without a load of its address from the GOT.
[[gnu::visibility("hidden")]] extern std::atomic<const std::string*> g_settings_error;
}  // namespace detail

inline bool settings_error_pending() {
  return detail::g_settings_error.load(std::memory_order_relaxed) != nullptr;
}
[[noreturn, gnu::cold]] void raise_settings_error();

// Registers the key's kernels, once. Never raises the settings' error: it notes it for
// enable() and the ops, registering all the same.
void register_once();

// Switches the calling thread on, whatever the settings' error: the kernels are registered.
void switch_thread_on();

// Switches on a thread that takes a switched-on thread's state along (register_once, then
// switch_thread_on). With the settings' error pending, its ops raise it, not its start.
void switch_on_handed_over();

}  // namespace lg::torch_bridge

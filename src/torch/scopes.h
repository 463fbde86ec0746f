// What the interceptor asks of the lg::torch scopes (scopes.cpp): the mode that a Scope hands
// to the threads that run its work.
#pragma once

#include <atomic>
#include <optional>

#include <layoutguard/guard.h>

namespace lg::torch_bridge {

namespace detail {
// Set by the first Scope or Handover with a mode. Hidden: read on every user-level call,
// without a load of its address from the GOT.
[[gnu::visibility("hidden")]] extern std::atomic<bool> g_scope_opened;
}  // namespace detail

// Whether a Scope or Handover with a mode was opened in this process: until then no thread
// carries a mode, and a call need not look (a lookup costs about a hundred instructions).
inline bool scope_with_mode_opened() { return detail::g_scope_opened.load(std::memory_order_relaxed); }

// The mode of the innermost Scope whose work this thread runs, carried to it (autograd's
// device threads, at::launch, a Handover), if any.
std::optional<guard::Mode> carried_mode();

}  // namespace lg::torch_bridge

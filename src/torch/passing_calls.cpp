// Option forward_calls for the calls that pass the bridge's key by (see passing_calls.h).
#include "torch/passing_calls.h"

#include <atomic>
#include <cstdio>
#include <vector>

#include <ATen/SequenceNumber.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include "torch/backward_node.h"
#include "torch/dispatch_key.h"
#include "torch/forward_sites.h"
#include "torch/intercepted_call.h"

namespace lg::torch_bridge {
namespace {

// Whether the kernels below are registered (not when another copy of the library, or another
// tool, holds the key): the key is included only then.
std::atomic<bool> g_registered{false};

// Whether a view or in-place op that reached the key is the user's call, to be noted. Inside
// another op's kernel (seen only just after the option was switched off), or among a backward
// node's own ops, it is not. With the option or the thread off, the key leaves the thread.
bool users_call_to_note() {
  if (inside_intercepted_call()) return false;
  if (!forward_calls_on()) {
    c10::impl::tls_set_dispatch_key_included(kPassingKey, false);
    return false;
  }
  return !in_backward_node() || in_module_entered_in_node();
}

// The nodes a user's view or in-place op made get the user's call site, as a user-level call's
// do (interceptor.cpp, check_watching_nodes).
void note_passing_call(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) {
  static const c10::DispatchKeySet kBelow(c10::DispatchKeySet::FULL_AFTER, kPassingKey);
  if (!users_call_to_note()) {
    op.redispatchBoxed(keys & kBelow, stack);
    return;
  }
  const int64_t first_node = at::sequence_number::peek();
  op.redispatchBoxed(keys & kBelow, stack);
  note_nodes_of_this_call(first_node, at::sequence_number::peek());
}

}  // namespace

void register_passing_calls(c10::Dispatcher& d, const std::vector<std::string>& ops) {
  if (d.hasBackendFallbackForDispatchKey(kPassingKey)) {
    std::fprintf(stderr,
                 "[layoutguard] layoutguard_torch: the dispatch key %s already has a fallback (another copy of "
                 "liblayoutguard_torch, or another tool); forward_calls=1 names no forward call of views and "
                 "in-place ops\n",
                 c10::toString(kPassingKey));
    return;
  }
  // Never destroyed: the registrations must outlive every op of the process.
  static auto* fallback = new ::torch::Library(::torch::Library::IMPL, "_", kPassingKey, __FILE__, __LINE__);
  fallback->fallback(::torch::CppFunction::makeFallthrough());
  static auto* aten = new ::torch::Library(::torch::Library::IMPL, "aten", kPassingKey, __FILE__, __LINE__);
  for (const std::string& name : ops) aten->impl(name.c_str(), ::torch::CppFunction::makeFromBoxedFunction<&note_passing_call>());
  g_registered.store(true, std::memory_order_release);
}

void watch_passing_calls() {
  if (g_registered.load(std::memory_order_relaxed) && !c10::impl::tls_is_dispatch_key_included(kPassingKey))
    c10::impl::tls_set_dispatch_key_included(kPassingKey, true);
}

}  // namespace lg::torch_bridge

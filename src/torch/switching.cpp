// Registering the bridge's kernels on its dispatch key, and switching threads on: by
// lg::torch::enable(), by a Scope, by PyTorch's hand-over to its worker threads, or at load
// when LAYOUTGUARD is set. docs/design.md, "The PyTorch bridge", says why a boxed fallback.
#include "torch/switching.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <layoutguard/error.h>
#include <layoutguard/torch.h>

#include "core/env_flag.h"
#include "guard/inherited_files.h"
#include "guard/records.h"
#include "guard/runtime.h"
#include "torch/aten_policy.h"
#include "torch/backward_node.h"
#include "torch/dispatch_key.h"
#include "torch/forward_sites.h"
#include "torch/intercepted_call.h"
#include "torch/op_table.h"
#include "torch/passing_calls.h"
#include "torch/unboxed_ops.h"

namespace lg::torch_bridge {

namespace detail {
std::atomic<const std::string*> g_settings_error{nullptr};
}  // namespace detail

namespace {

// The ATen ops registered by now that the key lets pass by (passes_by_key: those without a
// tensor, and views and in-place ops with kernels of their own) get a fall-through kernel on
// it: the dispatcher then leaves the key out of their calls. In a ResNet-50 training step they
// are half of all ATen calls (aten::empty alone a quarter, detach, view, add_, relu_), nearly
// all of the tensorless ones made inside other ops' kernels, where the fallback could only
// box them and run them on. Ops registered later (another library's) go through the fallback,
// which finds nothing to check in them. Returns those that take a tensor, the ones that may
// make autograd nodes (passing_calls.h).
std::vector<std::string> pass_ops_by_key(c10::Dispatcher& d) {
  static auto* aten = new ::torch::Library(::torch::Library::IMPL, "aten", kKey, __FILE__, __LINE__);
  std::vector<std::string> with_tensors;
  for (const c10::OperatorName& name : d.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    const auto op = d.findSchema(name);
    if (!op || !passes_by_key(*op)) continue;
    std::string qualified = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
    aten->impl(qualified.c_str(), ::torch::CppFunction::makeFallthrough());
    if (!takes_no_tensor(op->schema())) with_tensors.push_back(std::move(qualified));
  }
  return with_tensors;
}

}  // namespace

[[noreturn, gnu::cold]] void raise_settings_error() {
  throw ConfigError(*detail::g_settings_error.load(std::memory_order_acquire));
}

void register_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    bool unboxed = true;
    try {
      unboxed = lg::detail::env_flag("LAYOUTGUARD_TORCH_UNBOXED", true);
    } catch (const ConfigError& e) {
      // Registered all the same, boxed only (every op seen): a thread switched on at load
      // needs the key's kernels to raise the error at its ops.
      detail::g_settings_error.store(new std::string(e.what()), std::memory_order_release);
      unboxed = false;
    }
    c10::Dispatcher& d = c10::Dispatcher::singleton();
    // A second fallback for the key aborts the process: a second copy of this library (or
    // another tool on the same key) has registered first, and its fallback serves.
    if (d.hasBackendFallbackForDispatchKey(kKey)) {
      std::fprintf(stderr,
                   "[layoutguard] layoutguard_torch: the dispatch key %s already has a fallback (another copy of "
                   "liblayoutguard_torch, or another tool); the ops go through that one\n",
                   c10::toString(kKey));
    } else {
      // Never destroyed: the registration must outlive every op of the process.
      static auto* library = new ::torch::Library(::torch::Library::IMPL, "_", kKey, __FILE__, __LINE__);
      library->fallback(::torch::CppFunction::makeFromBoxedFunction<&intercept_boxed>());
      retire_entries_of_deregistered_ops();
      register_passing_calls(d, pass_ops_by_key(d));
      if (unboxed) register_unboxed_ops();
    }
    keep_forward_sites();
    guard::detail::set_call_count_flush(&flush_calls);
  });
}

// A thread that runs handed-over work has the key and the callback from its caller already.
void switch_thread_on() {
  // A child forked before this process's first op writes none of its files all the same.
  guard::detail::watch_forks();
  if (torch::enabled()) return;
  watch_backward_nodes();
  c10::impl::tls_set_dispatch_key_included(kKey, true);
  note_switch(true);
}

// The settings' error is left to the thread's ops: a pool's threads, and threads that run no
// op at all, must start.
void switch_on_handed_over() {
  register_once();
  switch_thread_on();
}

namespace {

// Whether LAYOUTGUARD's value leaves the bridge off: unset, empty, off or 0, with the spaces
// around it that the parser ignores. A value it refuses switches on: the ops raise its error.
bool mode_off(const char* value) {
  try {
    const guard::Options o = guard::parse_options(value, "");
    return o.sources[0] == guard::Source::Default || o.mode == guard::Mode::Off;
  } catch (const ConfigError&) {
    return false;
  }
}

// Linking the library and setting LAYOUTGUARD switches the loading thread on; the values are
// parsed at the first op, where an error can reach the user: a bad LAYOUTGUARD_TORCH_UNBOXED
// too, which the thread switched on all the same raises there.
struct SwitchOnAtLoad {
  SwitchOnAtLoad() {
    const char* v = std::getenv("LAYOUTGUARD");
    if (v == nullptr || mode_off(v)) return;
    try {
      try {
        torch::enable();
      } catch (const ConfigError&) {
        // A bad LAYOUTGUARD_TORCH_UNBOXED (enable() is given no mode here): switched on all
        // the same, the thread's ops raise it.
        if (detail::g_settings_error.load(std::memory_order_acquire) == nullptr) throw;
        switch_thread_on();
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[layoutguard] layoutguard_torch could not switch on at load: %s\n", e.what());
    }
  }
} switch_on_at_load;

}  // namespace

}  // namespace lg::torch_bridge

namespace lg::torch {

void enable(std::optional<guard::Mode> mode) {
  if (mode) guard::detail::checked_mode(*mode, "lg::torch::enable");
  torch_bridge::register_once();
  if (torch_bridge::settings_error_pending()) torch_bridge::raise_settings_error();
  if (mode) guard::set_mode(*mode);
  torch_bridge::switch_thread_on();
}

void disable() {
  torch_bridge::unwatch_backward_nodes();
  if (!enabled()) return;
  torch_bridge::note_switch(false);
  c10::impl::tls_set_dispatch_key_included(torch_bridge::kKey, false);
}

bool enabled() { return c10::impl::tls_is_dispatch_key_included(torch_bridge::kKey); }

}  // namespace lg::torch

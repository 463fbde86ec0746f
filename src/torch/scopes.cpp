// The scopes of lg::torch (Scope, HandoverScope, Handover, BackwardOrigin) and what a thread
// carries to the threads that run its work: the innermost Scope's mode and the thread whose
// backward pass runs, kept in c10's thread-local debug info, which PyTorch hands on to
// autograd's device threads and to at::launch with the rest of a thread's state.
#include "torch/scopes.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/Exception.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <layoutguard/error.h>
#include <layoutguard/torch.h>

#include "core/at_thread_exit.h"
#include "guard/runtime.h"
#include "torch/backward_node.h"
#include "torch/dispatch_key.h"
#include "torch/switching.h"

namespace lg::torch_bridge {

namespace detail {
std::atomic<bool> g_scope_opened{false};
}  // namespace detail

namespace {

// The kind of debug info the bridge's carried state is pushed as. Torch up to 2.12 has a
// closed enum of kinds, and the bridge takes one PyTorch reserves for tests, as the key is;
// later versions make DebugInfoKind a class whose identity is the address of a name, so that
// a library can have a kind of its own. Constant either way: initialised before any code of
// the process runs.
constexpr std::string_view kCarriedKindName = "layoutguard_torch: carried state";
template <typename Kind = c10::DebugInfoKind>
constexpr Kind carried_kind() {
  if constexpr (std::is_enum_v<Kind>)
    return Kind::TEST_INFO_2;
  else
    return Kind(&kCarriedKindName);
}

// What a thread hands to the threads that run its work: PyTorch passes its ThreadLocalState
// (debug info included, layoutguard's own thread-locals not) to autograd's device threads and
// to at::launch. Immutable: a Scope or BackwardOrigin pushes a changed copy and puts the outer
// one back on exit.
constexpr c10::DebugInfoKind kCarriedKind = carried_kind();

struct Carried final : c10::DebugInfoBase {
  std::optional<guard::Mode> mode;      // the innermost Scope's
  std::optional<uint64_t> origin;       // the innermost BackwardOrigin's thread
};

// The carried state, if this thread has one. The type is compared, not cast to: up to torch
// 2.12 the kind is shared with PyTorch's own tests. (Carried lives in an anonymous namespace,
// so its type_info compares by address: a few loads, where a dynamic_cast cost a hundred
// instructions per op.)
const Carried* carried() {
  c10::DebugInfoBase* info = c10::ThreadLocalDebugInfo::get(kCarriedKind);
  return info != nullptr && typeid(*info) == typeid(Carried) ? static_cast<const Carried*>(info) : nullptr;
}

// The debug info is one stack per thread, shared with PyTorch's profiler, which pushes its
// state when it starts and pops it when it stops, and refuses to stop unless its state is on
// top. A profiler started outside a scope may stop inside it (torch.profiler's schedule, with
// prof.step() inside a guard()-decorated step), one started inside may stop after it. So the
// profiler's state stays on top across a scope: the scope's entry goes below it, and the
// scope's exit puts back the profiler's state of that moment, if any, over the outer chain.
// An object of libc10's from torch 2.13 on, read at each use, not copied at load.
c10::DebugInfoKind profiler_kind() { return c10::DebugInfoKind::PROFILER_STATE; }

// The profiler's state if it is the top of the stack, else null.
std::shared_ptr<c10::DebugInfoBase> profiler_on_top() {
  if (c10::ThreadLocalDebugInfo::get(profiler_kind()) == nullptr) return nullptr;
  try {
    return c10::ThreadLocalDebugInfo::_peek(profiler_kind());  // raises unless on top
  } catch (const c10::Error&) {
    return nullptr;
  }
}

// c10 keeps a thread's debug-info chain in a thread_local, destroyed with the thread's other
// thread_locals. A Scope of static storage duration ends after them, during exit, and the ops
// of static destructors before it would read the chain it holds, freed by then. Emptied at the
// thread's exit, before c10's chain ends, what runs after it follows the process-wide settings.
void empty_chain() { c10::ThreadLocalDebugInfo::_forceCurrentDebugInfo(nullptr); }

// Pushes a copy of the carried state with `change` applied, below the profiler's state;
// returns the chain to put back with put_back_chain, without the profiler's state.
template <typename Change>
std::shared_ptr<c10::ThreadLocalDebugInfo> push_carried(Change change) {
  const std::shared_ptr<c10::DebugInfoBase> profiler = profiler_on_top();
  if (profiler) c10::ThreadLocalDebugInfo::_pop(profiler_kind());
  std::shared_ptr<c10::ThreadLocalDebugInfo> outer = c10::ThreadLocalDebugInfo::current();
  auto next = std::make_shared<Carried>();
  if (const Carried* c = carried()) {
    next->mode = c->mode;
    next->origin = c->origin;
  }
  change(*next);
  c10::ThreadLocalDebugInfo::_push(kCarriedKind, std::move(next));
  lg::detail::run_at_thread_exit<&empty_chain>();  // after c10's chain is made: before it ends
  if (profiler) c10::ThreadLocalDebugInfo::_push(profiler_kind(), profiler);
  return outer;
}

// Puts back the chain that push_carried returned, with the profiler's state of now on top.
void put_back_chain(const std::shared_ptr<c10::ThreadLocalDebugInfo>& outer) {
  const std::shared_ptr<c10::DebugInfoBase> profiler = profiler_on_top();
  c10::ThreadLocalDebugInfo::_forceCurrentDebugInfo(outer);
  if (profiler && c10::ThreadLocalDebugInfo::get(profiler_kind()) == nullptr)
    c10::ThreadLocalDebugInfo::_push(profiler_kind(), profiler);
}

// Pushes a carried state whose scope mode is `mode` (none: the thread's or the process's);
// returns the state to put back. `where`: the entry point, for a mode that is not one.
std::shared_ptr<c10::ThreadLocalDebugInfo> push_carried_mode(std::optional<guard::Mode> mode,
                                                             std::string_view where) {
  if (mode) {
    guard::detail::checked_mode(*mode, where);
    detail::g_scope_opened.store(true, std::memory_order_relaxed);
  }
  return push_carried([mode](Carried& c) { c.mode = mode; });
}

// Puts back a thread's carried state and its switch, as a scope found them. Never raises: a
// thread that was on is switched on again as it was, settings' error or not.
void put_back(const std::shared_ptr<c10::ThreadLocalDebugInfo>& outer, bool was_enabled) {
  put_back_chain(outer);
  if (torch::enabled() != was_enabled) was_enabled ? switch_thread_on() : torch::disable();
}

// The thread's open scopes (lg::torch::Scope, HandoverScope, BackwardOrigin), innermost last.
// Scopes may end in any order (held by unique_ptr or optional): one that ends while a scope
// opened inside it lives only keeps what it would put back, and the inner scope's state holds;
// when the innermost ends, the thread gets back what the outermost of the run of ended scopes
// below it found. Made at a thread's first scope and freed when its last ends; a pointer, so
// that a scope of static storage duration still finds it while the thread's thread_locals are
// destroyed.
struct OpenScope {
  const void* scope;
  std::shared_ptr<c10::ThreadLocalDebugInfo> outer;  // the chain it found
  std::optional<bool> was_enabled;                   // the switch it found; none: it leaves the switch
  bool ended;
};
thread_local std::vector<OpenScope>* t_open_scopes = nullptr;

std::vector<OpenScope>::iterator find_open_scope(const void* scope, const char* name) {
  std::vector<OpenScope>* open = t_open_scopes;
  const auto it = open == nullptr ? std::vector<OpenScope>::iterator()
                                  : std::find_if(open->begin(), open->end(),
                                                 [&](const OpenScope& o) { return o.scope == scope; });
  // Its own thread lists it until it ends: not found, it ends on another thread, whose state
  // (and its own's) it must not change.
  LG_CHECK(open != nullptr && it != open->end(), "[", name,
           "] destroyed on another thread than the one that made it; a scope changes one thread's state and "
           "must end there");
  return it;
}

void open_scope(const void* scope) {
  if (t_open_scopes == nullptr) t_open_scopes = new std::vector<OpenScope>;
  t_open_scopes->push_back({scope, nullptr, std::nullopt, false});
}

void check_scope_thread(const void* scope, const char* name) { (void)find_open_scope(scope, name); }

void end_scope(const void* scope, const char* name, const std::shared_ptr<c10::ThreadLocalDebugInfo>& outer,
               std::optional<bool> was_enabled) {
  const auto it = find_open_scope(scope, name);
  std::vector<OpenScope>* open = t_open_scopes;
  if (it + 1 != open->end()) {  // a scope inside it still lives
    *it = {scope, outer, was_enabled, true};
    return;
  }
  std::shared_ptr<c10::ThreadLocalDebugInfo> restore_chain = outer;
  std::optional<bool> restore_enabled = was_enabled;
  open->pop_back();
  while (!open->empty() && open->back().ended) {
    restore_chain = std::move(open->back().outer);
    if (open->back().was_enabled) restore_enabled = open->back().was_enabled;
    open->pop_back();
  }
  if (open->empty()) {
    delete open;
    t_open_scopes = nullptr;
  }
  if (restore_enabled)
    put_back(restore_chain, *restore_enabled);
  else
    put_back_chain(restore_chain);
}

}  // namespace

std::optional<guard::Mode> carried_mode() {
  const Carried* c = carried();
  return c ? c->mode : std::nullopt;
}

}  // namespace lg::torch_bridge

namespace lg::torch {

guard::Mode mode() {
  if (const std::optional<guard::Mode> own = guard::detail::scope_mode()) return *own;
  if (const torch_bridge::Carried* c = torch_bridge::carried(); c && c->mode) return *c->mode;
  return guard::mode();
}

Handover Handover::here() {
  Handover handover;
  handover.switched_on = enabled();
  if (!handover.switched_on) return handover;
  handover.scope_mode = guard::detail::scope_mode();
  if (!handover.scope_mode)
    if (const torch_bridge::Carried* c = torch_bridge::carried()) handover.scope_mode = c->mode;
  return handover;
}

void Handover::adopt() const {
  if (scope_mode) guard::detail::checked_mode(*scope_mode, "lg::torch::Handover::adopt");
  if (!switched_on) return;
  // The scope's mode is carried, as to PyTorch's threads, and never taken back: the state that
  // push_carried returns to put back is dropped, and the thread's own Scopes nest inside.
  if (!scope_mode) return torch_bridge::switch_on_handed_over();
  const std::shared_ptr<c10::ThreadLocalDebugInfo> outer =
      torch_bridge::push_carried_mode(scope_mode, "lg::torch::Handover::adopt");
  try {
    torch_bridge::switch_on_handed_over();
  } catch (...) {  // the thread carries nothing either
    torch_bridge::put_back_chain(outer);
    throw;
  }
}

HandoverScope::HandoverScope(const Handover& handover)
    : was_enabled_(enabled()),
      // Always a mode of its own, also none: a pool's thread may carry the mode that the work
      // which started it handed over.
      outer_debug_info_(torch_bridge::push_carried_mode(handover.scope_mode, "lg::torch::HandoverScope")) {
  try {
    if (handover.switched_on)
      torch_bridge::switch_on_handed_over();
    else
      disable();
    torch_bridge::open_scope(this);
  } catch (...) {  // no destructor runs: put the thread back here
    torch_bridge::put_back(outer_debug_info_, was_enabled_);
    throw;
  }
}

HandoverScope::~HandoverScope() {
  torch_bridge::end_scope(this, "lg::torch::HandoverScope", outer_debug_info_, was_enabled_);
}

Scope::Scope(guard::Mode mode)
    : mode_(guard::detail::checked_mode(mode, "lg::torch::Scope")),
      was_enabled_(enabled()),
      outer_debug_info_(torch_bridge::push_carried_mode(mode, "lg::torch::Scope")) {
  // An Off scope takes the key away: its ops, and the work it hands to PyTorch's threads (which
  // inherit the key with the rest of its thread-local state), skip the bridge instead of
  // passing through it to learn that the mode is off.
  try {
    if (mode != guard::Mode::Off)
      enable();
    else if (was_enabled_)
      disable();
    torch_bridge::open_scope(this);
  } catch (...) {  // a bad LAYOUTGUARD_TORCH_UNBOXED; no destructor runs: put the thread back here
    torch_bridge::put_back(outer_debug_info_, was_enabled_);
    throw;
  }
}

Scope::~Scope() { torch_bridge::end_scope(this, "lg::torch::Scope", outer_debug_info_, was_enabled_); }

BackwardOrigin::BackwardOrigin(uint64_t thread, bool builds_graph)
    : outer_debug_info_(torch_bridge::push_carried([thread](torch_bridge::Carried& c) { c.origin = thread; })),
      // A thread off the bridge makes no reports: its pass is not watched.
      builds_graph_(builds_graph && c10::impl::tls_is_dispatch_key_included(torch_bridge::kKey)) {
  torch_bridge::forget_finished_node();
  try {
    if (builds_graph_) torch_bridge::watch_graph_building_pass();
    try {
      torch_bridge::open_scope(this);
    } catch (...) {
      if (builds_graph_) torch_bridge::unwatch_graph_building_pass();
      throw;
    }
  } catch (...) {
    torch_bridge::put_back_chain(outer_debug_info_);
    throw;
  }
}

BackwardOrigin::~BackwardOrigin() {
  // The pass's watch is this thread's: ended on another thread, it would stay on.
  torch_bridge::check_scope_thread(this, "lg::torch::BackwardOrigin");
  if (builds_graph_) torch_bridge::unwatch_graph_building_pass();
  torch_bridge::end_scope(this, "lg::torch::BackwardOrigin", outer_debug_info_, std::nullopt);
}

std::optional<uint64_t> backward_origin() {
  const torch_bridge::Carried* c = torch_bridge::carried();
  return c ? c->origin : std::nullopt;
}

}  // namespace lg::torch

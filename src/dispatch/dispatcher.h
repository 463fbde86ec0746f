// The dispatcher: the one door every operator goes through. It runs the op's body and, when a
// hook or the guard listens, reports the call to them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <new>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <layoutguard/config.h>
#include <layoutguard/layout_policy.h>
#include <layoutguard/tensor.h>

#include "core/error_tag.h"
#include "dispatch/op_id.h"

namespace lg::dispatch {

// What the slow path needs to know about the op being called: built-in or custom.
struct OpInfo {
  std::string_view name;
  LayoutPolicy policy;
  uint32_t index;  // dense op index: OpId for built-ins, kNumOps + k for the k-th custom op
};

constexpr OpInfo op_info(OpId id) {
  return {op_name(id), op_policy(id), static_cast<uint32_t>(id)};
}

namespace detail {

// Why calls must take the slow path; 0 means nobody listens (the fast path). Scopes are
// counted in the bits above kGuard because several threads may hold one at once.
enum SlowReason : uint32_t {
  kNotInitialised = 1u,  // the guard has not read the environment yet (or must read it again)
  kHooks = 2u,           // at least one hook is registered
  kGuard = 4u,           // the process-wide guard mode is not off
  kScopeUnit = 8u,       // added per live guard::Scope, on any thread
};
extern std::atomic<uint32_t> g_slow_reasons;

inline void set_slow_reason(SlowReason bit, bool on) {
  if (on)
    g_slow_reasons.fetch_or(bit, std::memory_order_relaxed);
  else
    g_slow_reasons.fetch_and(~static_cast<uint32_t>(bit), std::memory_order_relaxed);
}

// A non-owning reference to the op's body: outputs from inputs. The slow path must not
// allocate for it, and shadow mode calls it again on other inputs when `rerunnable`.
class BodyRef {
 public:
  template <typename F>
  explicit BodyRef(F& f)
      : obj_(&f), call_([](void* o, std::span<const Tensor> in) { return (*static_cast<F*>(o))(in); }) {}
  std::vector<Tensor> operator()(std::span<const Tensor> inputs) const { return call_(obj_, inputs); }

 private:
  void* obj_;
  std::vector<Tensor> (*call_)(void*, std::span<const Tensor>);
};

// Raises OutOfMemoryError naming the op: std::bad_alloc from an op's body (an index table or
// buffer sized by the caller's arguments) must not leave the library as anything else.
[[noreturn]] void throw_host_out_of_memory(std::string_view op);

// Runs body on inputs with depth and kernel tracking, then hooks and the guard. `rerunnable`:
// body computes from its argument alone (custom ops), so shadow mode may call it on copies.
std::vector<Tensor> run_slow(const OpInfo& op, std::span<const Tensor> inputs, BodyRef body,
                             bool rerunnable);

}  // namespace detail

// Runs body() (which returns the op's output) as op `id` with the given tensor inputs. The
// fast path is one relaxed load and a branch; the inputs are only gathered for listeners.
template <typename Body, typename... Inputs>
inline Tensor run(OpId id, Body&& body, [[maybe_unused]] const Inputs&... inputs) {
  try {
#if LG_ENABLE_HOOKS
    if (detail::g_slow_reasons.load(std::memory_order_relaxed) != 0) [[unlikely]] {
      const std::array<Tensor, sizeof...(Inputs)> gathered{inputs...};
      auto outputs = [&](std::span<const Tensor>) { return std::vector<Tensor>{body()}; };
      return std::move(detail::run_slow(op_info(id), gathered, detail::BodyRef(outputs), false)[0]);
    }
#endif
    return body();
  } catch (const std::bad_alloc&) {
    detail::throw_host_out_of_memory(op_info(id).name);
  } catch (const Error& e) {
    lg::detail::rethrow_tagged(op_info(id).name, e);
  }
}

// Runs a body that computes outputs from its inputs argument (custom ops, pointwise ops): the
// same checks as run(). When `rerunnable` (the body reads nothing but its argument and captured
// non-tensor values), shadow mode may call it again on contiguous copies.
template <typename Body>
inline std::vector<Tensor> run_op(const OpInfo& op, std::span<const Tensor> inputs, Body&& body,
                                  [[maybe_unused]] bool rerunnable) {
  try {
#if LG_ENABLE_HOOKS
    if (detail::g_slow_reasons.load(std::memory_order_relaxed) != 0) [[unlikely]]
      return detail::run_slow(op, inputs, detail::BodyRef(body), rerunnable);
#endif
    return body(inputs);
  } catch (const std::bad_alloc&) {
    detail::throw_host_out_of_memory(op.name);
  } catch (const Error& e) {
    lg::detail::rethrow_tagged(op.name, e);
  }
}

// Records the kernel that computes the current call (for OpCall::kernel).
void note_kernel(std::string_view name);

namespace detail {
// This thread's module stack, which OpCall::module_path joins ("layer1.0.conv2"); the guard's
// ModuleScope pushes and pops it. push_module returns the entry's place (depth from 1; 0 once
// the thread is ending: nothing was pushed) and sets `thread` to the calling thread's identity.
// pop_module ends that entry: the innermost at once, with the ended ones below it; one with
// live entries above it is marked ended and leaves with them. lg::Error on another thread.
size_t push_module(std::string_view name, const void*& thread);
void pop_module(const void* thread, size_t depth);
std::string_view current_module_path();
// The number of modules on the stack (0 outside every module).
size_t current_module_depth();

// Called on the thread whose module path just changed, with the new path and depth, after
// every push and pop: the PyTorch bridge keeps where each autograd node was made from it. One
// observer; nullptr removes it. It must not throw (pop_module runs in destructors).
using ModuleObserver = void (*)(std::string_view path, size_t depth) noexcept;
void set_module_observer(ModuleObserver observer);
}  // namespace detail

}  // namespace lg::dispatch

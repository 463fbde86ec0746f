// The dispatcher: the one door every operator goes through. It runs the op's body and, when a
// hook is registered, reports the call to the hooks.
#pragma once

#include <atomic>
#include <type_traits>
#include <utility>
#include <vector>

#include <layoutguard/config.h>
#include <layoutguard/tensor.h>

#include "dispatch/op_id.h"

namespace lg::dispatch {
namespace detail {

// 1 while nothing listens (the fast path); anything else sends calls to run_slow.
inline constexpr int kFast = 1;
extern std::atomic<int> g_state;

// A non-owning callable reference: the slow path must not allocate for the body.
class BodyRef {
 public:
  template <typename F>
  explicit BodyRef(F& f) : obj_(&f), call_([](void* o) { return (*static_cast<F*>(o))(); }) {}
  Tensor operator()() const { return call_(obj_); }

 private:
  void* obj_;
  Tensor (*call_)(void*);
};

Tensor run_slow(OpId id, std::vector<Tensor> inputs, BodyRef body);

}  // namespace detail

// Runs body() (which returns the op's output) as op `id` with the given tensor inputs. The
// fast path is one relaxed load and a branch; the inputs are only copied for hooks.
template <typename Body, typename... Inputs>
inline Tensor run(OpId id, Body&& body, const Inputs&... inputs) {
#if LG_ENABLE_HOOKS
  if (detail::g_state.load(std::memory_order_relaxed) != detail::kFast) [[unlikely]]
    return detail::run_slow(id, std::vector<Tensor>{inputs...}, detail::BodyRef(body));
#endif
  return body();
}

// Records the kernel that computes the current call (for OpCall::kernel).
void note_kernel(std::string_view name);

}  // namespace lg::dispatch

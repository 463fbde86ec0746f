// The checker the slow path consults around each call: the guard. The dispatcher owns this
// interface and calls it; src/guard implements it and defines call_checker(). So src/dispatch
// includes nothing from src/guard and the layers depend one way: guard -> dispatch.
//
// Why a function resolved at link time and not a registration at start-up: a static object
// that registers itself is dropped from a static library's link when nothing else refers to its
// file, and the guard would then be silently missing. Internal to src/dispatch and src/guard.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <layoutguard/hooks.h>
#include <layoutguard/layout_policy.h>
#include <layoutguard/tensor.h>

namespace lg::dispatch::detail {

class BodyRef;

// 0: the calling thread does not check calls now. Any other value is the checker's own mode,
// read once before the call and handed back to after_call unchanged.
using CheckMode = uint8_t;

class CallChecker {
 public:
  // Reads the settings while g_slow_reasons has kNotInitialised (ConfigError when they are
  // invalid: the bit then stays set, so every op raises it again).
  virtual void initialise() = 0;
  // The calling thread's mode now.
  virtual CheckMode mode() = 0;
  // Whether a rerunnable call must be rerun on copies of its inputs after it ran (shadow=1):
  // asked before the call, so the copies hold what the call read (an in-place op changes its
  // inputs). The copies are taken by copies_for_rerun with the re-entrancy flag set.
  virtual bool wants_rerun(std::string_view op, LayoutPolicy policy, int depth) = 0;
  virtual std::vector<Tensor> copies_for_rerun(std::span<const Tensor> inputs) = 0;
  // Checks one finished call (mode != 0), after the hooks saw it. `rerun` and `rerun_inputs`
  // are given when wants_rerun said so. May throw (throw mode).
  virtual void after_call(const hooks::OpCall& call, CheckMode mode, uint32_t op_index, const BodyRef* rerun,
                          const std::vector<Tensor>* rerun_inputs) = 0;

 protected:
  ~CallChecker() = default;
};

// The process's checker, defined by the layer above (src/guard/call_checker.cpp).
CallChecker& call_checker();

}  // namespace lg::dispatch::detail

// Operator hooks: functions that see every operator call after it ran, with its inputs and
// outputs. The layout guard is one of them; tests and tools add their own.
//
// A hook runs on the thread that called the op, after the op's kernel, innermost ops first
// (an op called by another op runs at depth 1 and is reported before its caller). Ops called
// from inside a hook are not hooked again (a thread-local re-entrancy guard). While no hook is
// registered and the guard is off, an op pays one relaxed atomic load; -Dhooks=false removes
// even that (and hooks::add then raises NotCompiledError).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include <layoutguard/device.h>
#include <layoutguard/layout_policy.h>
#include <layoutguard/tensor.h>

namespace lg::hooks {

// What a hook sees of one call. Valid only during the hook call.
struct OpCall {
  std::string_view op;              // "copy_", "to", "view", or a custom op's name
  LayoutPolicy policy;
  std::span<const Tensor> inputs;   // tensor arguments in argument order
  std::span<const Tensor> outputs;  // results (an in-place op's result is its self argument)
  Device device;                    // device of the first input (cpu without inputs)
  std::string_view kernel;          // the kernel that ran, e.g. "copy_strided_cpu"
  std::string_view module_path;     // "layer1.0.conv2" inside lg::guard::ModuleScope, else ""
  int depth;                        // 0 for a call from user code, 1 for an op inside an op, ...
  std::string_view root_op;         // the depth-0 op this call runs inside (itself at depth 0)
};

using Hook = std::function<void(const OpCall&)>;

// Identifies a registered hook; remove() it to unregister.
struct Handle {
  uint64_t id = 0;
};

// Registers hook for every thread; returns its handle.
Handle add(Hook hook);
// Unregisters; a second remove of the same handle does nothing.
void remove(Handle handle);
// Number of registered hooks.
size_t count();

// RAII registration for a scope (tests, tools).
class ScopedHook {
 public:
  explicit ScopedHook(Hook hook) : handle_(add(std::move(hook))) {}
  ~ScopedHook() { remove(handle_); }
  ScopedHook(const ScopedHook&) = delete;
  ScopedHook& operator=(const ScopedHook&) = delete;

 private:
  Handle handle_;
};

}  // namespace lg::hooks

namespace lg::guard {

// RAII: pushes a module name on this thread's module stack; ops called inside report the
// joined path ("layer1" + "0" + "conv2" -> "layer1.0.conv2"). nn modules push themselves.
// Scopes may end in any order (held by unique_ptr or optional): one that ends while a scope
// opened inside it lives leaves the path with that scope. A scope belongs to the thread that
// made it: destroying it on another thread is an lg::Error (from the destructor: the program
// terminates), never a change to either thread's path.
class ModuleScope {
 public:
  explicit ModuleScope(std::string_view name);
  ~ModuleScope();
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  const void* thread_;  // the making thread's module stack's owner (dispatch::detail)
  size_t depth_;        // its place on that stack, from 1; 0: the thread was ending
};

// The current thread's joined module path ("" outside any ModuleScope).
std::string_view module_path();

}  // namespace lg::guard

// layoutguard for PyTorch programs (liblayoutguard_torch, pkg-config layoutguard-torch): the
// guard on every ATen op a libtorch or Python program dispatches, forward and backward, with
// the settings, reports, suppressions and events of the native guard (guard.h, report.h).
//
// Linking the library is enough: when LAYOUTGUARD is set (and not `off`) at load time, the
// loading thread is switched on, and the threads its PyTorch work reaches take it along
// (autograd's backward threads, at::launch). Threads of your own switch themselves on with
// enable() or a Scope, or take the starting thread's state along with a Handover. The mode
// and options come from LAYOUTGUARD / LAYOUTGUARD_OPTIONS, read at the first op (a bad value
// raises lg::ConfigError there), or from guard::set_mode / guard::Scope, exactly as for
// layoutguard's own ops. docs/torch.md has the whole story.
//
// The header needs no PyTorch headers: it is safe to include anywhere.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <layoutguard/guard.h>
#include <layoutguard/hooks.h>
#include <layoutguard/violation.h>

namespace c10 {
class ThreadLocalDebugInfo;
}

namespace lg::torch {

// Intercepts the calling thread's ATen ops from now on (idempotent; any thread may call it,
// concurrently). With a mode, also sets the process-wide guard mode (guard::set_mode).
// lg::ValueError for a Mode cast from an integer that names none; lg::ConfigError for a bad
// LAYOUTGUARD_TORCH_UNBOXED (read once, at the first switch-on of the process), which every
// enable() and every Scope other than Off raise again.
void enable(std::optional<guard::Mode> mode = std::nullopt);
// Stops intercepting the calling thread's ops (the settings stay as they are).
void disable();
// Whether the calling thread's ops are intercepted.
bool enabled();

// RAII: intercepts the calling thread's ops and sets its guard mode while it lives, then puts
// both back as they were. Nests. The mode also holds on the threads PyTorch runs the scope's
// work on: autograd's device threads (CUDA backward) and at::launch. Scope(Mode::Off) stops
// intercepting instead, so that its ops cost what they cost without the bridge. Scopes may
// end in any order. A scope belongs to the thread that made it: destroying it on another
// thread is an lg::Error (from the destructor: the program terminates).
class Scope {
 public:
  explicit Scope(guard::Mode mode);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  guard::Scope mode_;
  bool was_enabled_;
  std::shared_ptr<c10::ThreadLocalDebugInfo> outer_debug_info_;  // put back on exit
};

// The mode the calling thread's ops are checked in now: its innermost Scope's, else that of a
// Scope whose work it runs (autograd's threads, at::launch, a Handover), else
// guard::mode(). Throws lg::ConfigError where guard::mode() does.
guard::Mode mode();

// What a thread hands over with the work it starts on another thread, as PyTorch does for its
// own threads: whether it is switched on, and the mode of the Scope it is in, if any. Capture
// it on the handing thread with here(); on the other, adopt() it for the rest of a new
// thread's life, once, or run each task of a pool's thread in a HandoverScope. The Python
// package does the first for every thread started with `threading`, the second for each task
// of a concurrent.futures.ThreadPoolExecutor.
//   auto handover = lg::torch::Handover::here();
//   std::thread worker([handover] { handover.adopt(); run(); });
struct Handover {
  bool switched_on = false;
  std::optional<guard::Mode> scope_mode;  // empty: the other thread follows guard::mode()

  // The calling thread's.
  static Handover here();
  // Switches the calling thread on if the handing thread was, in the scope's mode for the
  // rest of the thread's life (Scopes opened later in it nest inside); a handing thread that
  // was off leaves it as it is. Once per thread: each call adds to the state every PyTorch
  // lookup of its thread-local debug info walks. Never raises a bad LAYOUTGUARD_TORCH_UNBOXED
  // (a thread that runs no op must start): the thread's ops do.
  void adopt() const;
};

// RAII: the calling thread runs in a Handover's state -- switched on or off, in its scope's
// mode or the process's -- while it lives, then as before. For a pool's thread, per task. It
// may end in any order with the thread's Scopes and belongs to its thread, as a Scope does.
class HandoverScope {
 public:
  explicit HandoverScope(const Handover& handover);
  ~HandoverScope();
  HandoverScope(const HandoverScope&) = delete;
  HandoverScope& operator=(const HandoverScope&) = delete;

 private:
  bool was_enabled_;
  std::shared_ptr<c10::ThreadLocalDebugInfo> outer_debug_info_;  // put back on exit
};

// RAII: marks the calling thread as the origin of the autograd work started inside it
// (backward(), autograd.grad()), for the threads PyTorch hands that work to: autograd's CUDA
// device threads run no code of the caller, so their reports locate it through `thread`. The
// Python package wraps torch.autograd.backward and grad in one, with Python's thread ident.
// `builds_graph`: the pass runs with create_graph (double backward, a gradient penalty): the
// nodes it makes are then reported in the module of the node that made them, where they would
// otherwise have the module path of the backward() call. It may end in any order with the
// thread's Scopes and belongs to its thread, as a Scope does.
class BackwardOrigin {
 public:
  explicit BackwardOrigin(uint64_t thread, bool builds_graph = false);
  ~BackwardOrigin();
  BackwardOrigin(const BackwardOrigin&) = delete;
  BackwardOrigin& operator=(const BackwardOrigin&) = delete;

 private:
  std::shared_ptr<c10::ThreadLocalDebugInfo> outer_debug_info_;
  bool builds_graph_;
};
// The thread of the innermost BackwardOrigin in effect here (carried to worker threads), if any.
std::optional<uint64_t> backward_origin();

// The module path of ATen ops called inside, as nn.Module hooks give it in Python:
// lg::torch::ModuleScope s("layer3.1.conv2"). The same stack as guard::ModuleScope's.
using ModuleScope = guard::ModuleScope;

// The PyTorch version the library was built against, as torch.__version__ says it
// ("1.13.0a0", "2.11.0+cu130"). The Python package refuses a different torch at import.
std::string_view built_torch_version();

// For language bindings (the Python package sets these):
// How throw mode raises: called with the violation, must throw (default: throws it as is).
using Raiser = void (*)(const LayoutViolation& violation);
void set_raiser(Raiser raise);
// How shadow=1 raises a difference, in every mode: the same contract (default: throws it).
using MismatchRaiser = void (*)(const ShadowMismatch& mismatch);
void set_mismatch_raiser(MismatchRaiser raise);
// How a bad setting met at an op (LAYOUTGUARD, LAYOUTGUARD_OPTIONS, LAYOUTGUARD_TORCH_UNBOXED, a
// log_path= file that cannot be opened) raises: called with the error, must throw (default:
// rethrows it as is).
using ConfigRaiser = void (*)(const ConfigError& error);
void set_config_raiser(ConfigRaiser raise);
// The user's source line and stack for a violation, asked only when one is reported; leave
// both empty when unknown. The default names the C++ program's innermost frame outside
// libtorch and layoutguard as the line ("app.cpp:42 in forward", with the program's
// debug information) and leaves the stack to the guard's C++ stack trace; nullptr names
// neither.
using Locator = void (*)(std::string& source_location, std::string& stack);
void set_locator(Locator locate);
// The user's innermost source line ("model.py:42 in forward") alone, for option forward_calls:
// asked after each user-level call that made autograd nodes, so it must be cheap; leave it
// empty when unknown. The default keeps the C++ stack's return addresses and names the
// program's innermost frame outside libtorch and layoutguard only when a report shows it
// ("app.cpp:42 in forward", which needs the program's debug information for the line);
// nullptr keeps none.
using CallSiteFinder = void (*)(std::string& call_site);
void set_call_site_finder(CallSiteFinder find);
// Whether the thread's innermost frame now is the program's own code, not PyTorch's: asked
// for a memory_format given inside a backward node when the call would count as a loss. The
// program's code there (a checkpointed function run again, a Python autograd Function's
// backward, a tensor hook) chose the format: a conversion. A derivative formula's request is
// checked as Preserve. The default, nullptr, takes every such request as the formula's.
using ProgramCodeCheck = bool (*)();
void set_program_code_check(ProgramCodeCheck runs_program_code);

}  // namespace lg::torch

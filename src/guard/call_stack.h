// The caller's stack as the guard reports and matches it: the library's own leading frames
// (guard, dispatcher, audit) left out. Internal to src/guard.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lg::guard::detail {

// A demangled function name without its trailing parameter list: "ns::f(int, g(x))" -> "ns::f".
std::string_view without_parameters(std::string_view name);

// A demangled function name as a call site names it: no parameters and no return type, which
// a template's name starts with ("at::Tensor app::run<float>(int)" -> "app::run<float>").
std::string_view function_name(std::string_view name);

// "N# function at file:line" lines, from the op call outwards (at most 64 frames): the stack
// trace of a violation.
std::string capture_backtrace();

// The function names of the same frames (function_name: "app::preprocess", "main"), for
// matching `op@function-glob` suppressions. Symbol names are cached per
// address, so a loss repeated in a loop costs the stack walk only.
std::vector<std::string> call_stack_functions();

// Whether a stack function is a library's, never a call site: layoutguard's, the standard
// library's and boost's, the runtime's (`__libc_start_main`, `__gnu_cxx::`), an unnamed frame,
// and with `skip_torch` libtorch's (at::, c10::, torch::). `name` is a function_name(): by its
// own namespace, as a template's return type (at::Tensor app::f<int>) says nothing of whose
// code it is.
bool library_function(std::string_view name, bool skip_torch);

// The prefix of an `op@...glob` suppressions line: the glob may match any function of the
// stack, not only the call site.
inline constexpr std::string_view kAnyFrame = "...";

// The first of call_stack_functions() that is neither layoutguard's (lg::relu, the public
// entry points) nor the standard library's (std::function's invoker): the caller's own code,
// which an op:(top)@function line keys. "" when the stack has none (a stripped binary). With
// `skip_torch` libtorch's frames (at::, c10::, torch::) are passed over too: the PyTorch
// bridge's caller is the program that called the ATen op.
std::string first_caller_function(bool skip_torch = false);

// While one lives on a thread, call_stack_functions() there returns `functions()` instead of
// the C++ stack's: a foreign call's own stack (the bridge's Python frames), which its
// locator walks only if a suppressions line needs it. Nests.
class ForeignStackFunctions {
 public:
  // Fills `functions` and returns true, or returns false to leave them to the C++ stack.
  using Source = bool (*)(void* context, std::vector<std::string>& functions);
  ForeignStackFunctions(Source source, void* context);
  ~ForeignStackFunctions();
  ForeignStackFunctions(const ForeignStackFunctions&) = delete;
  ForeignStackFunctions& operator=(const ForeignStackFunctions&) = delete;

 private:
  Source source_;
  void* context_;
  const ForeignStackFunctions* outer_;
  friend std::vector<std::string> call_stack_functions();
};

// The functions of a stack in the locators' text form, lines "#N function at file:line" (most
// recent call first; other lines, such as "(autograd's worker thread ...)", are notes).
std::vector<std::string> functions_of_stack_text(std::string_view stack);

}  // namespace lg::guard::detail

// The caller's stack as the guard reports and matches it: the library's own leading frames
// (guard, dispatcher, audit) left out. Internal to src/guard.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lg::guard::detail {

// A demangled function name without its trailing parameter list: "ns::f(int, g(x))" -> "ns::f".
std::string_view without_parameters(std::string_view name);

// "N# function at file:line" lines, from the op call outwards (at most 64 frames): the stack
// trace of a violation.
std::string capture_backtrace();

// The function names of the same frames, without parameter lists ("app::preprocess",
// "main"), for matching `op@function-glob` suppressions. Symbol names are cached per
// address, so a loss repeated in a loop costs the stack walk only.
std::vector<std::string> call_stack_functions();

// The first of call_stack_functions() that is neither layoutguard's (lg::relu, the public
// entry points) nor the standard library's (std::function's invoker): the caller's own code,
// which an op:(top)@function line keys. "" when the stack has none (a stripped binary).
std::string first_caller_function();

}  // namespace lg::guard::detail

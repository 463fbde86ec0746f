// The caller's stack for violations (printed) and call-site suppressions (matched).
#include "guard/call_stack.h"

#include <algorithm>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include <boost/stacktrace.hpp>

#include <layoutguard/guard.h>

namespace lg::guard::detail {
namespace {

constexpr size_t kMaxFrames = 64, kMaxInternal = 32;

// Whether a frame belongs to the guard, the dispatcher or the audit's hook: those lead every
// trace and say nothing about the caller's code. Matched by name, because how many there are
// depends on the mode (warn/record go through a callback of the records table) and on
// inlining. Only the function's own name counts, not its parameter types (a user function
// taking an lg::dispatch type is the user's). lg::dispatch:: as a whole: without inlining (the
// -Og sanitizer builds) run/run_op are frames of their own. The PyTorch bridge's calls come
// through its interceptor and PyTorch's dispatcher: the first frame left is the ATen op the
// program called (at::_ops::softmax::call).
bool internal_frame(const std::string& name) {
  const std::string_view function = without_parameters(name);
  for (const std::string_view internal :
       {"lg::guard::", "lg::dispatch::", "lg::audit::", "boost::stacktrace::", "lg::torch_bridge::", "c10::impl::",
        "c10::Dispatcher::", "c10::BoxedKernel::", "c10::KernelFunction::"})
    if (function.find(internal) != std::string_view::npos) return true;
  return false;
}

// Symbolising a frame reads debug information (tens of microseconds); a process has few
// distinct call sites, so each address is named once.
const std::string& frame_name(const boost::stacktrace::frame& f) {
  // Never destroyed: ops in static destructors run after the function-local statics are gone.
  static auto& mutex = *new std::mutex;
  static auto& names = *new std::unordered_map<const void*, std::string>;
  std::lock_guard lock(mutex);
  auto [it, fresh] = names.try_emplace(f.address());
  if (fresh) it->second = f.name();
  return it->second;  // node-based map: stays valid while other names are added
}

// The first frame of `trace` that is the caller's.
size_t first_user_frame(const boost::stacktrace::stacktrace& trace) {
  size_t first = 0;
  while (first < trace.size() && first < kMaxInternal && internal_frame(frame_name(trace[first]))) ++first;
  return first;
}

}  // namespace

std::string_view without_parameters(std::string_view name) {
  if (const size_t close = name.rfind(')'); close != std::string_view::npos) {
    int depth = 0;
    for (size_t i = close + 1; i-- > 0;) {
      depth += name[i] == ')' ? 1 : name[i] == '(' ? -1 : 0;
      // "operator()" without a parameter list (a debug information's name of a lambda's or
      // functor's call) is a name, not a function with no parameters.
      if (depth == 0) return name.substr(0, i).ends_with("operator") ? name : name.substr(0, i);
    }
  }
  return name;
}

std::string_view function_name(std::string_view name) {
  const std::string_view function = without_parameters(name);
  // The return type ends at the last space outside brackets: "(anonymous namespace)" and
  // lambdas ("{lambda()#1}") hold spaces of their own.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < function.size(); ++i) {
    const char c = function[i];
    depth += (c == '<' || c == '(' || c == '{') ? 1 : (c == '>' || c == ')' || c == '}') ? -1 : 0;
    if (c == ' ' && depth == 0) start = i + 1;
  }
  return function.substr(start);
}

std::string capture_backtrace() {
  const boost::stacktrace::stacktrace trace(0, kMaxFrames + kMaxInternal);
  const size_t first = first_user_frame(trace);
  std::string out;
  for (size_t i = first; i < trace.size() && i - first < kMaxFrames; ++i)
    out += "    #" + std::to_string(i - first) + " " + boost::stacktrace::to_string(trace[i]) + "\n";
  return out;
}

}  // namespace lg::guard::detail

namespace lg::guard {

const Suppression* Options::loss_suppression_for(std::string_view op, std::string_view module_path,
                                                  std::string_view signature) const {
  std::vector<std::string> stack;  // walked once, at the first line that needs it
  bool walked = false;
  for (const Suppression& s : suppressions) {
    if ((s.frame_glob.empty() && s.signature_glob.empty()) || !s.matches(op, module_path)) continue;
    if (!s.signature_glob.empty() && !glob_match(s.signature_glob, signature)) continue;
    if (s.frame_glob.empty()) return &s;
    if (!walked) {
      stack = detail::call_stack_functions();
      walked = true;
    }
    // "@...glob": any function on the stack; "@glob": the call site, the first function of the
    // program's own, as a report and a written baseline key it. Stack-wide, a key such as
    // `@main` or Python's `@<module>` would hold for every loss of the program.
    if (std::string_view glob = s.frame_glob; glob.starts_with(detail::kAnyFrame)) {
      glob.remove_prefix(detail::kAnyFrame.size());
      for (const std::string& function : stack)
        if (glob_match(glob, function)) return &s;
    } else if (const auto site = std::find_if_not(stack.begin(), stack.end(),
                                                  [](const std::string& f) { return detail::library_function(f, true); });
               site != stack.end() && glob_match(s.frame_glob, *site)) {
      return &s;
    }
  }
  return nullptr;
}

}  // namespace lg::guard

namespace lg::guard::detail {

bool library_function(std::string_view name, bool skip_torch) {
  if (name.empty() || name.starts_with("__") || name.starts_with("lg::") || name.starts_with("std::") ||
      name.starts_with("boost::"))
    return true;
  return skip_torch && (name.starts_with("at::") || name.starts_with("c10::") || name.starts_with("torch::"));
}

std::string first_caller_function(bool skip_torch) {
  for (const std::string& name : call_stack_functions())
    if (!library_function(name, skip_torch)) return name;
  return "";
}

namespace {
thread_local const ForeignStackFunctions* t_foreign_stack = nullptr;
}  // namespace

ForeignStackFunctions::ForeignStackFunctions(Source source, void* context)
    : source_(source), context_(context), outer_(t_foreign_stack) {
  t_foreign_stack = this;
}

ForeignStackFunctions::~ForeignStackFunctions() { t_foreign_stack = outer_; }

std::vector<std::string> functions_of_stack_text(std::string_view stack) {
  std::vector<std::string> out;
  while (!stack.empty()) {
    const size_t eol = stack.find('\n');
    std::string_view line = stack.substr(0, eol);
    stack = eol == std::string_view::npos ? std::string_view() : stack.substr(eol + 1);
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string_view::npos || line[start] != '#') continue;
    line.remove_prefix(start);
    const size_t name = line.find(' '), at = line.rfind(" at ");
    if (name == std::string_view::npos || at == std::string_view::npos || at <= name) continue;
    out.emplace_back(line.substr(name + 1, at - name - 1));
  }
  return out;
}

std::vector<std::string> call_stack_functions() {
  std::vector<std::string> out;
  if (const ForeignStackFunctions* foreign = t_foreign_stack; foreign && foreign->source_(foreign->context_, out))
    return out;
  const boost::stacktrace::stacktrace trace(0, kMaxFrames + kMaxInternal);
  for (size_t i = first_user_frame(trace); i < trace.size() && out.size() < kMaxFrames; ++i)
    out.emplace_back(function_name(frame_name(trace[i])));
  return out;
}

}  // namespace lg::guard::detail

// lg::Error: message plus a stack trace captured at construction and symbolised on demand.
#include <layoutguard/error.h>

#include <mutex>

#include <boost/stacktrace.hpp>

namespace lg {
namespace detail {

struct Backtrace {
  explicit Backtrace(boost::stacktrace::stacktrace f) : frames(std::move(f)) {}
  // Raw frames: capturing walks the stack but resolves no symbols (microseconds, not ms).
  boost::stacktrace::stacktrace frames;
  std::once_flag once;
  std::string text;
};

}  // namespace detail

Error::Error(const std::string& message)
    : std::runtime_error(message),
      message_(message),
      // Skip this constructor's own frame so the trace starts at the code that raised.
      trace_(std::make_shared<detail::Backtrace>(boost::stacktrace::stacktrace(1, 64))) {}

Error::Error(const std::string& message, const Error& cause)
    : std::runtime_error(message), message_(message), trace_(cause.trace_) {}

std::string Error::stacktrace() const {
  std::call_once(trace_->once, [this] { trace_->text = boost::stacktrace::to_string(trace_->frames); });
  return trace_->text;
}

std::string Error::what_with_stacktrace() const {
  return message_ + "\nStack trace (most recent call first):\n" + stacktrace();
}

namespace detail {

void throw_value_error(std::string msg) { throw ValueError(msg); }
void throw_index_error(std::string msg) { throw IndexError(msg); }
void throw_type_error(std::string msg) { throw TypeError(msg); }
void throw_not_implemented(std::string msg) { throw NotImplementedError(msg); }
void throw_internal_assert(const char* cond, const char* file, int line, std::string msg) {
  throw Error(str("[layoutguard internal] assertion `", cond, "` failed at ", file, ":", line,
                  msg.empty() ? "" : ": ", msg, " (this is a bug in layoutguard; please report it)"));
}

}  // namespace detail
}  // namespace lg

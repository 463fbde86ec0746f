// lg::Error: message plus a stack trace captured at construction and symbolised on demand.
#include <layoutguard/error.h>

#include <mutex>
#include <typeinfo>

#include <boost/stacktrace.hpp>

#include "core/error_tag.h"

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

namespace {

// "[tag]" or one of its forms: an in-place or out= op tags its errors "[add_]", "[add_out]",
// and split_with_sizes runs as split.
bool starts_with_tag(std::string_view message, std::string_view tag) {
  if (message.size() <= tag.size() + 1 || message[0] != '[' || message.substr(1, tag.size()) != tag) return false;
  const char next = message[tag.size() + 1];
  return next == ']' || next == '_';
}

// The same class as e with `message`, for the classes whose whole content is their message.
template <typename... Classes>
[[noreturn]] void rethrow_as_same_class(const Error& e, const std::string& message) {
  // typeid, not dynamic_cast: an OutOfMemoryError must not come back as a DeviceError.
  ((typeid(e) == typeid(Classes) ? throw Classes(message, e) : void()), ...);
  throw;
}

}  // namespace

void rethrow_tagged(std::string_view tag, const Error& e) {
  // A broken invariant keeps its marker first: the CLI reads it to exit with 3, "internal error".
  if (starts_with_tag(e.message(), tag) || e.message().starts_with("[layoutguard internal]")) throw;
  rethrow_as_same_class<Error, ValueError, IndexError, TypeError, NotImplementedError, NotCompiledError, DeviceError,
                        OutOfMemoryError>(e, "[" + std::string(tag) + "] " + e.message());
}

}  // namespace detail
}  // namespace lg

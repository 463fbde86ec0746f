// Errors of layoutguard: one hierarchy rooted at lg::Error (a std::runtime_error), and the
// LG_CHECK family of macros that raise them.
//
// Contract of every message: "[op] what was received; what was required". The op tag comes
// first so that a failure deep inside a model names the operator at once.
//
// Every lg::Error captures the call stack when it is constructed (raw frame addresses only);
// the frames are symbolised to "function at file:line" the first time stacktrace() is asked
// for, because symbolisation costs milliseconds and most caught errors never print it.
#pragma once

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace lg {

namespace detail {
struct Backtrace;  // captured frames; defined in src/core/error.cpp (keeps Boost out of headers)
}

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message);
  // `cause` with another message and the same stack trace: how an op boundary puts its own
  // tag before an error that a helper or an inner op raised ("[conv2d] [cpu allocator] ...").
  Error(const std::string& message, const Error& cause);
  // The message alone, same as what().
  const std::string& message() const noexcept { return message_; }
  // "#0 function at file:line" lines, symbolised on first call and cached.
  std::string stacktrace() const;
  // message() followed by the stack trace: what a report for a human should print.
  std::string what_with_stacktrace() const;

 private:
  std::string message_;
  std::shared_ptr<detail::Backtrace> trace_;
};

// Bad argument values: shapes, strides, formats, options.
class ValueError : public Error {
 public:
  using Error::Error;
};
// A dimension or element index outside its range.
class IndexError : public Error {
 public:
  using Error::Error;
};
// A dtype that the operation does not accept (including data_ptr<T>() with the wrong T).
class TypeError : public Error {
 public:
  using Error::Error;
};
// A valid request that this version does not implement (yet).
class NotImplementedError : public Error {
 public:
  using Error::Error;
};
// A request for a part of the library that this build left out (e.g. CUDA when built without).
class NotCompiledError : public Error {
 public:
  using Error::Error;
};
// A device the call needs is missing or failed: no visible GPU, a CUDA/cuDNN/cuBLAS error
// (the message names the call, the library's error string and the op).
class DeviceError : public Error {
 public:
  using Error::Error;
};
// An allocation that did not fit: on a device (the message gives the bytes requested and free)
// or on the host (the op's std::bad_alloc, converted at the op boundary).
class OutOfMemoryError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};
// A bad environment variable or configuration value; names the variable, key and choices.
class ConfigError : public Error {
 public:
  using Error::Error;
};

namespace detail {

// Concatenates any streamable arguments; used only on failure paths.
template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
inline std::string str() { return {}; }

// Failure functions: out of line, cold and [[noreturn]] so the checking code stays small.
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] void throw_value_error(std::string msg);
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] void throw_index_error(std::string msg);
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] void throw_type_error(std::string msg);
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] void throw_not_implemented(std::string msg);
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] void throw_internal_assert(const char* cond,
                                                                         const char* file, int line,
                                                                         std::string msg);

}  // namespace detail
}  // namespace lg

// LG_CHECK*(cond, message parts...): the caller's mistake. The message parts are evaluated and
// formatted only when cond is false.
#define LG_CHECK_WITH_(thrower, cond, ...)                        \
  do {                                                            \
    if (!(cond)) [[unlikely]]                                     \
      ::lg::detail::thrower(::lg::detail::str(__VA_ARGS__));      \
  } while (0)
#define LG_CHECK(cond, ...) LG_CHECK_WITH_(throw_value_error, cond, __VA_ARGS__)
#define LG_CHECK_INDEX(cond, ...) LG_CHECK_WITH_(throw_index_error, cond, __VA_ARGS__)
#define LG_CHECK_TYPE(cond, ...) LG_CHECK_WITH_(throw_type_error, cond, __VA_ARGS__)
#define LG_CHECK_NOT_IMPLEMENTED(cond, ...) LG_CHECK_WITH_(throw_not_implemented, cond, __VA_ARGS__)

// LG_ASSERT(cond, ...): an invariant of layoutguard itself. Failing it is our bug, reported as
// an lg::Error with file and line, never an abort().
#define LG_ASSERT(cond, ...)                                                    \
  do {                                                                          \
    if (!(cond)) [[unlikely]]                                                   \
      ::lg::detail::throw_internal_assert(#cond, __FILE__, __LINE__,            \
                                          ::lg::detail::str(__VA_ARGS__));      \
  } while (0)

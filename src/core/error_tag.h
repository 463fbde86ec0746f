// Putting the called op's (or layer's) tag in front of an error raised below it.
#pragma once

#include <string_view>

#include <layoutguard/error.h>

namespace lg::detail {

// Rethrows the lg::Error being handled (call it only inside a catch block) so that its message
// starts with "[tag]": one raised by a shared helper or an inner op ("[cpu allocator] ...",
// "[empty] ...") gets the tag in front, keeping its class and stack trace. Unchanged: an error
// already tagged with `tag` or a form of it ("[add_]" for add), a broken invariant ("[layoutguard
// internal] ...", which must stay first), a ConfigError (the settings name their variable, not
// an op), and errors that carry more than a message (LayoutViolation, ShadowMismatch, an
// application's own subclass).
[[noreturn]] void rethrow_tagged(std::string_view tag, const Error& e);

// call(), its lg::Errors rethrown by rethrow_tagged(tag, ...): a layer's parameters, a Module
// call, a file reader, each named after what the user called.
template <typename Call>
decltype(auto) tagged(std::string_view tag, Call&& call) {
  try {
    return call();
  } catch (const Error& e) {
    rethrow_tagged(tag, e);
  }
}

}  // namespace lg::detail

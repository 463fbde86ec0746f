// Command-line flags of the layoutguard subcommands: "--name value" pairs checked against the
// flags a command accepts. Bad usage is a UsageError (exit status 2).
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <layoutguard/error.h>

namespace lg::tools {

class UsageError : public ValueError {
 public:
  using ValueError::ValueError;
};

// The candidate closest to a mistyped word (edit distance at most 2, the first on a tie), or
// "" when none is that close: the "did you mean" of every usage error.
std::string_view closest(std::string_view typed, std::span<const std::string_view> candidates);
// "; did you mean 'X'?" for closest(), or "".
std::string did_you_mean(std::string_view typed, std::span<const std::string_view> candidates);

class Flags {
 public:
  // Every flag takes a value; `allowed` lists the flag names without "--".
  Flags(std::string_view command, std::span<const std::string_view> args, std::vector<std::string_view> allowed);
  bool has(std::string_view name) const { return values_.count(std::string(name)) != 0; }
  std::string get(std::string_view name, std::string_view fallback) const;
  // A file name: "" when the flag is absent; UsageError when it is given empty (an unset
  // shell variable in --weights "$W" would otherwise pass as "no file").
  std::string path(std::string_view name) const;
  // One of `choices`; UsageError listing them otherwise.
  std::string choice(std::string_view name, std::string_view fallback, std::vector<std::string_view> choices) const;
  // An integer in [min, max]; `fallback` when the flag is absent.
  int64_t integer(std::string_view name, int64_t fallback, int64_t min, int64_t max) const;
  // "H", "HxW" or "TxHxW": positive integers, at most `max_dims` of them.
  std::vector<int64_t> sizes(std::string_view name, size_t max_dims) const;

 private:
  [[noreturn]] void fail(const std::string& message) const;
  std::string command_;
  std::map<std::string, std::string> values_;
};

}  // namespace lg::tools

#include "arguments.h"

#include <algorithm>
#include <charconv>

namespace lg::tools {
namespace {

bool parse_int(std::string_view text, int64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

std::string_view closest(std::string_view typed, std::span<const std::string_view> candidates) {
  std::string_view best;
  size_t best_distance = 3;
  for (std::string_view c : candidates) {
    // Levenshtein distance, one row at a time.
    std::vector<size_t> row(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= typed.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        const size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (typed[i - 1] == c[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    if (row.back() < best_distance) best_distance = row.back(), best = c;
  }
  return best;
}

std::string did_you_mean(std::string_view typed, std::span<const std::string_view> candidates) {
  const std::string_view guess = closest(typed, candidates);
  return guess.empty() ? std::string() : "; did you mean '" + std::string(guess) + "'?";
}

Flags::Flags(std::string_view command, std::span<const std::string_view> args, std::vector<std::string_view> allowed)
    : command_(command) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a.substr(0, 2) != "--")
      fail("unexpected argument \"" + std::string(a) + "\"; required: flags as --name value or --name=value");
    std::string name(a.substr(2)), value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    // The name first: a mistyped flag at the end of the line is unknown, not short of a value.
    bool known = false;
    for (std::string_view k : allowed) known |= (k == name);
    if (!known) {
      std::string list;
      for (std::string_view k : allowed) list += " --" + std::string(k);
      std::string hint = did_you_mean(name, allowed);
      if (!hint.empty()) hint.insert(hint.find('\'') + 1, "--");
      fail((name.empty() ? std::string("unexpected argument \"") + std::string(a) + "\"" : "unknown flag --" + name) +
           "; accepted:" + list + hint);
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) fail("--" + name + " needs a value");
      value = std::string(args[++i]);
    }
    if (!values_.emplace(name, value).second) fail("--" + name + " given twice; required: each flag at most once");
  }
}

void Flags::fail(const std::string& message) const { throw UsageError("[layoutguard " + command_ + "] " + message); }

std::string Flags::get(std::string_view name, std::string_view fallback) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? std::string(fallback) : it->second;
}

std::string Flags::path(std::string_view name) const {
  const std::string v = get(name, "");
  if (has(name) && v.empty()) fail("--" + std::string(name) + " received an empty file name; required: a file name");
  return v;
}

std::string Flags::choice(std::string_view name, std::string_view fallback,
                          std::vector<std::string_view> choices) const {
  const std::string v = get(name, fallback);
  std::string list;
  for (std::string_view c : choices) {
    if (c == v) return v;
    if (!list.empty()) list += '|';
    list += c;
  }
  fail("--" + std::string(name) + " must be " + list + ", got \"" + v + "\"" + did_you_mean(v, choices));
}

int64_t Flags::integer(std::string_view name, int64_t fallback, int64_t min, int64_t max) const {
  if (!has(name)) return fallback;
  int64_t v = 0;
  const std::string text = get(name, "");
  if (!parse_int(text, v) || v < min || v > max)
    fail("--" + std::string(name) + " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
         "], got \"" + text + "\"");
  return v;
}

std::vector<int64_t> Flags::sizes(std::string_view name, size_t max_dims) const {
  const std::string text = get(name, "");
  std::vector<int64_t> out;
  std::string_view rest = text;
  while (true) {
    const size_t x = rest.find('x');
    int64_t v = 0;
    if (!parse_int(rest.substr(0, x), v) || v < 1 || v > 65536) {
      out.clear();
      break;
    }
    out.push_back(v);
    if (x == std::string_view::npos) break;
    rest = rest.substr(x + 1);
  }
  if (out.empty() || out.size() > max_dims)
    fail("--" + std::string(name) + " must be " + (max_dims == 3 ? "H, HxW or TxHxW" : "H or HxW") +
         " with positive integers, got \"" + text + "\"");
  return out;
}

}  // namespace lg::tools

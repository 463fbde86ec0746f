// The process-wide guard settings: the environment read once, API overrides, per-thread Scopes.
#include <cstdlib>
#include <mutex>
#include <optional>
#include <vector>

#include <layoutguard/error.h>
#include <layoutguard/guard.h>

namespace lg::guard {
namespace {

struct State {
  std::mutex mutex;
  std::optional<Options> environment;  // parsed on first use; unset again if parsing failed
  std::optional<Options> api_options;
  std::optional<Mode> api_mode;
};

State& state() {
  static State s;
  return s;
}

// The modes of the live Scopes of this thread, innermost last.
thread_local std::vector<Mode> scope_modes;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

Options options() {
  State& s = state();
  Options o;
  {
    std::lock_guard lock(s.mutex);
    if (!s.environment) s.environment = parse_options(env("LAYOUTGUARD"), env("LAYOUTGUARD_OPTIONS"));
    o = s.api_options ? *s.api_options : *s.environment;
    if (s.api_mode) {
      o.mode = *s.api_mode;
      o.sources[0] = Source::Api;
    }
  }
  if (!scope_modes.empty()) {
    o.mode = scope_modes.back();
    o.sources[0] = Source::Api;
  }
  return o;
}

Mode mode() {
  if (!scope_modes.empty()) return scope_modes.back();
  return options().mode;
}

void set_mode(Mode m) {
  std::lock_guard lock(state().mutex);
  state().api_mode = m;
}

void set_options(const Options& o) {
  Options copy = o;
  // Everything set through the API counts as "api" in help=1, whatever the caller's sources say.
  copy.sources.assign(option_keys().size() + 1, Source::Api);
  std::lock_guard lock(state().mutex);
  state().api_options = std::move(copy);
  state().api_mode = o.mode;
}

void reset_to_environment() {
  std::lock_guard lock(state().mutex);
  state().environment.reset();
  state().api_options.reset();
  state().api_mode.reset();
}

Scope::Scope(Mode m) : depth_(static_cast<int>(scope_modes.size())) { scope_modes.push_back(m); }

Scope::~Scope() { scope_modes.resize(static_cast<size_t>(depth_)); }

}  // namespace lg::guard

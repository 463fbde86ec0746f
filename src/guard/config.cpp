// The process-wide guard settings: the environment read once, API overrides, per-thread Scopes,
// and the versioned snapshot the dispatcher reads without a lock.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <layoutguard/error.h>
#include <layoutguard/guard.h>

#include "core/at_thread_exit.h"
#include "core/thread_local_ref.h"
#include "guard/options_fields.h"
#include "guard/runtime.h"

namespace lg::guard {
namespace {

struct State {
  std::mutex mutex;
  std::optional<Options> environment;  // parsed on first use; unset again if parsing failed
  std::optional<Options> api_options;
  std::optional<Mode> api_mode;
  // The effective process-wide options (no Scope applied); null until the environment was read.
  std::shared_ptr<const Options> effective;
  bool help_printed = false;
};

// Never destroyed, like the guard's other process-wide state: ops in the destructors of
// static objects run after the function-local statics are gone, and still read the settings.
State& state() {
  static State& s = *new State;
  return s;
}

// Bumped on every change of the effective options; threads compare it with their cached copy.
std::atomic<uint64_t> g_version{1};

// This thread's view of the settings: the modes of its live Scopes, innermost last, and its
// copy of the effective options with the version it was taken at. One thread-local, so that
// current_mode(), which the PyTorch bridge calls for every user-level op, looks it up once.
struct ThreadView {
  std::vector<Mode> scope_modes;
  std::vector<bool> scope_ended;  // per scope_modes entry: ended before a scope inside it (~Scope)
  uint64_t version = 0;
  std::shared_ptr<const Options> options;
};

// The view is made at the thread's first use and freed when its thread_locals end. Held by a
// pointer: a thread_local with a destructor is reached through a wrapper that checks a second
// thread_local, its guard, and in a shared library each lookup calls __tls_get_addr, on every
// user-level op. The main thread's thread_locals end before the objects of static storage
// duration, whose destructors may still run ops and close Scopes: those find a new, empty view
// (no scopes, no copy of the options), as at a thread's start, which is never freed.
thread_local ThreadView* t_view = nullptr;
thread_local bool t_view_ended = false;
// Identifies the thread to its Scopes for its whole life, also after its view was freed.
thread_local const char t_scope_owner = 0;

void end_thread_view() {
  delete t_view;
  t_view = nullptr;
  t_view_ended = true;
}

[[gnu::cold, gnu::noinline]] ThreadView& new_thread_view() {
  t_view = new ThreadView;
  if (!t_view_ended) lg::detail::run_at_thread_exit<&end_thread_view>();
  return *t_view;
}

// The thread's view, looked up once (thread_local_ref.h).
[[gnu::always_inline]] inline ThreadView& thread_view() {
  ThreadView* view = lg::detail::thread_local_ref(t_view);
  return view != nullptr ? *view : new_thread_view();
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Recomputes the effective options after a change. Called with the mutex held; throws the
// environment's ConfigError (leaving everything as it was) when the environment is invalid.
// A variable the API has replaced (LAYOUTGUARD by set_mode, both by set_options) is not
// parsed: its value cannot matter, so its errors are not raised either.
void recompute_locked(State& s) {
  if (!s.environment)
    s.environment = parse_options(s.api_mode ? "" : env("LAYOUTGUARD"), s.api_options ? "" : env("LAYOUTGUARD_OPTIONS"));
  Options o = s.api_options ? *s.api_options : *s.environment;
  if (s.api_mode) {
    o.mode = *s.api_mode;
    o.sources[0] = Source::Api;
  }
  if (o.help && !s.help_printed) {
    s.help_printed = true;
    std::fputs(describe_options(o).c_str(), stderr);
  }
  s.effective = std::make_shared<const Options>(std::move(o));
  g_version.fetch_add(1, std::memory_order_release);
  using namespace dispatch::detail;
  set_slow_reason(kGuard, s.effective->mode != Mode::Off);
  set_slow_reason(kNotInitialised, false);
}

// The effective process-wide options, reading the environment first if needed.
std::shared_ptr<const Options> effective() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.effective) recompute_locked(s);
  return s.effective;
}

// Takes the effective options into `view`, as of `version`. Out of line: the shared_ptr's
// copy would spread the per-op readers below over several more cache lines of code.
[[gnu::cold, gnu::noinline]] void refresh(ThreadView& view, uint64_t version) {
  view.options = effective();
  view.version = version;
}

// The effective options as `view` last saw them, refreshed when they changed since. The
// version is read first: options that change meanwhile bump it again, and the next call
// refreshes once more. Inlined: GCC would otherwise clone it for t_view, and the clone looks
// the thread-local up again after its caller has.
[[gnu::always_inline]] inline const Options& options_seen_by(ThreadView& view) {
  const uint64_t version = g_version.load(std::memory_order_acquire);
  if (view.version != version || !view.options) [[unlikely]]
    refresh(view, version);
  return *view.options;
}

}  // namespace

namespace detail {

void initialise() { (void)effective(); }

const Options& current_options() { return options_seen_by(thread_view()); }

Mode current_mode() {
  ThreadView& view = thread_view();
  if (!view.scope_modes.empty()) return view.scope_modes.back();
  return options_seen_by(view).mode;
}

CallSettings current_call_settings() {
  ThreadView& view = thread_view();
  if (!view.scope_modes.empty() && view.scope_modes.back() == Mode::Off) return {Mode::Off, true, nullptr};
  const Options& o = options_seen_by(view);
  return {view.scope_modes.empty() ? o.mode : view.scope_modes.back(), !view.scope_modes.empty(), &o};
}

std::optional<Mode> scope_mode() {
  if (const std::vector<Mode>& modes = thread_view().scope_modes; !modes.empty()) return modes.back();
  return std::nullopt;
}

Mode checked_mode(Mode mode, std::string_view where) {
  if (!mode_name(mode).empty()) return mode;
  throw ValueError(lg::detail::str("[", where, "] mode ", static_cast<int>(mode),
                                   " is not a guard::Mode; required: Off, Warn, Throw or Record"));
}

}  // namespace detail

Options options() {
  Options o = *effective();
  if (const std::vector<Mode>& modes = thread_view().scope_modes; !modes.empty()) {
    o.mode = modes.back();
    o.sources[0] = Source::Api;
  }
  return o;
}

Mode mode() {
  if (const std::vector<Mode>& modes = thread_view().scope_modes; !modes.empty()) return modes.back();
  return effective()->mode;
}

void set_mode(Mode m) {
  detail::checked_mode(m, "lg::guard::set_mode");
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.api_mode = m;
  // With the environment cached this cannot throw. Without it (never read, or invalid) the next
  // use parses it, skipping what the API now replaces.
  if (s.environment) recompute_locked(s);
}

void set_options(const Options& o) {
  detail::checked_mode(o.mode, "lg::guard::set_options");
  check_options_fields(o, "lg::guard::set_options");
  Options copy = o;
  // Everything set through the API counts as "api" in help=1, whatever the caller's sources say.
  copy.sources.assign(option_keys().size() + 1, Source::Api);
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.api_options = std::move(copy);
  s.api_mode = o.mode;
  if (s.environment) recompute_locked(s);
}

void set_options_keeping_mode(std::string_view options_text) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  // The mode in force: the API's, else LAYOUTGUARD's as read (or, not read yet, as it is now).
  const Mode mode = s.api_mode      ? *s.api_mode
                    : s.environment ? s.environment->mode
                                    : parse_options(env("LAYOUTGUARD"), "").mode;
  Options o = parse_options(mode_name(mode), options_text);
  o.sources.assign(option_keys().size() + 1, Source::Api);
  s.api_options = std::move(o);
  s.api_mode = mode;
  if (s.environment) recompute_locked(s);
}

void reset_to_environment() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.environment.reset();
  s.api_options.reset();
  s.api_mode.reset();
  s.effective.reset();
  g_version.fetch_add(1, std::memory_order_release);
  dispatch::detail::set_slow_reason(dispatch::detail::kNotInitialised, true);
}

Scope::Scope(Mode m) : depth_(static_cast<int>(thread_view().scope_modes.size())), thread_(&t_scope_owner) {
  detail::checked_mode(m, "lg::guard::Scope");
  ThreadView& view = thread_view();
  view.scope_modes.push_back(m);
  view.scope_ended.push_back(false);
  dispatch::detail::g_slow_reasons.fetch_add(dispatch::detail::kScopeUnit, std::memory_order_relaxed);
}

// Scopes may end in any order (held by unique_ptr or optional). The innermost live one's mode
// holds: one that ends before a scope opened inside it is only marked ended, and leaves the
// stack when everything above it has.
Scope::~Scope() {
  LG_CHECK(thread_ == &t_scope_owner, "[guard::Scope] destroyed on another thread than the one that made it; a "
                                      "mode scope sets one thread's mode and must end there");
  ThreadView& view = thread_view();
  std::vector<Mode>& modes = view.scope_modes;
  std::vector<bool>& ended = view.scope_ended;
  const auto at = static_cast<size_t>(depth_);
  if (at + 1 == modes.size()) {
    modes.pop_back();
    ended.pop_back();
    while (!ended.empty() && ended.back()) {
      modes.pop_back();
      ended.pop_back();
    }
  } else if (at < modes.size()) {
    ended[at] = true;
  }
  dispatch::detail::g_slow_reasons.fetch_sub(dispatch::detail::kScopeUnit, std::memory_order_relaxed);
}

}  // namespace lg::guard

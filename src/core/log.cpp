// The "layoutguard" spdlog logger and its level from LAYOUTGUARD_LOG_LEVEL.
#include "core/log.h"

#include <array>
#include <cstdlib>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <layoutguard/error.h>
#include <layoutguard/log.h>

namespace lg::logging {
namespace {

constexpr const char* kEnvVar = "LAYOUTGUARD_LOG_LEVEL";
constexpr std::array<std::string_view, 7> kNames{"trace", "debug", "info", "warn",
                                                  "error", "critical", "off"};

spdlog::level::level_enum to_spdlog(Level l) { return static_cast<spdlog::level::level_enum>(l); }

// A Level cast from an integer that no enumerator has: spdlog would index its names with it.
Level checked(Level l, std::string_view where) {
  const int v = static_cast<int>(l);
  LG_CHECK(v >= static_cast<int>(Level::Trace) && v <= static_cast<int>(Level::Off), "[", where, "] received level ", v,
           "; required a logging::Level (trace, debug, info, warn, error, critical, off)");
  return l;
}

Level level_from_env() {
  const char* text = std::getenv(kEnvVar);
  if (text == nullptr || *text == '\0') return Level::Warn;
  return parse_level(text, kEnvVar);
}

std::shared_ptr<spdlog::logger> make_logger() {
  // Reuse a logger the application registered under our name (to redirect our output).
  if (auto existing = spdlog::get("layoutguard")) return existing;
  auto made = spdlog::stderr_color_mt("layoutguard");
  made->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [layoutguard] [%l] %v");
  return made;
}

}  // namespace

static_assert(static_cast<int>(Level::Trace) == spdlog::level::trace &&
              static_cast<int>(Level::Off) == spdlog::level::off);

Level parse_level(std::string_view text, std::string_view source) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (text == kNames[i]) return static_cast<Level>(i);
  if (text == "warning") return Level::Warn;
  throw ConfigError(detail::str(source, "='", text, "' is not a log level; allowed values: trace, debug, ",
                                "info, warn, error, critical, off"));
}

std::string_view level_name(Level level) { return kNames[static_cast<size_t>(checked(level, "logging::level_name"))]; }

spdlog::logger& logger() {
  // A magic static: built once, thread-safe; if LAYOUTGUARD_LOG_LEVEL is bad the ConfigError
  // propagates and the next call tries again. Never destroyed: ops in the destructors of
  // static objects still warn.
  static const std::shared_ptr<spdlog::logger>* const instance = [] {
    const Level lvl = level_from_env();
    auto made = make_logger();
    made->set_level(to_spdlog(lvl));
    return new std::shared_ptr<spdlog::logger>(std::move(made));  // keeps the logger alive
  }();
  return **instance;
}

Level level() { return static_cast<Level>(logger().level()); }
void set_level(Level level) { logger().set_level(to_spdlog(checked(level, "logging::set_level"))); }
void reload_level_from_env() { logger().set_level(to_spdlog(level_from_env())); }
void write(Level level, std::string_view message) {
  logger().log(to_spdlog(checked(level, "logging::write")), "{}", message);
}

}  // namespace lg::logging

// Logging: the spdlog logger named "layoutguard" (spdlog itself stays out of public headers).
//
// The level comes from LAYOUTGUARD_LOG_LEVEL (trace, debug, info, warn, error, critical, off;
// default warn), read once when the logger is first used. An unknown value is an
// lg::ConfigError naming the variable and the allowed values.
#pragma once

#include <string_view>

namespace lg::logging {

enum class Level { Trace, Debug, Info, Warn, Error, Critical, Off };

// Parses a level name; ConfigError mentioning `source` (e.g. "LAYOUTGUARD_LOG_LEVEL") if bad.
Level parse_level(std::string_view text, std::string_view source);
std::string_view level_name(Level level);

// Current level of the "layoutguard" logger; set_level overrides the environment.
Level level();
void set_level(Level level);
// Re-reads LAYOUTGUARD_LOG_LEVEL (unset means warn).
void reload_level_from_env();

// Emits one message at `level` through the logger (no-op below the current level).
void write(Level level, std::string_view message);

}  // namespace lg::logging

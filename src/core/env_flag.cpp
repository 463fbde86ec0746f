#include "core/env_flag.h"

#include <cstdlib>
#include <string_view>

#include <layoutguard/error.h>

namespace lg::detail {

bool env_flag(const char* name, bool default_value) {
  const char* raw = std::getenv(name);
  const std::string_view text = raw == nullptr ? std::string_view() : std::string_view(raw);
  if (text.empty()) return default_value;
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  throw ConfigError(str(name, "='", text, "' is not a switch; allowed values: 1 or true (on), 0 or false (off), or unset (",
                        default_value ? "on" : "off", ")"));
}

}  // namespace lg::detail

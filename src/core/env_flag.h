// A yes/no switch from an environment variable, checked: "1"/"true" or "0"/"false"; unset or
// empty gives the default; anything else is a ConfigError naming the variable and the choices.
#pragma once

namespace lg::detail {

bool env_flag(const char* name, bool default_value);

}  // namespace lg::detail

// JSON as layoutguard's files hold it: reports, event lines, audits.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/printable_text.h"

namespace lg::detail {

// A copy of `j` whose keys and strings are valid UTF-8 (valid_utf8).
inline nlohmann::json with_valid_utf8(const nlohmann::json& j) {
  if (j.is_string()) return valid_utf8(j.get_ref<const std::string&>());
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const nlohmann::json& item : j) out.push_back(with_valid_utf8(item));
    return out;
  }
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[valid_utf8(it.key())] = with_valid_utf8(it.value());
    return out;
  }
  return j;
}

// j.dump(indent). Text that is not UTF-8, which JSON cannot hold and nlohmann refuses to write
// (a module named in Latin-1, a suppressions line), goes with its stray bytes as \xNN: the
// file is written all the same.
inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  try {
    return j.dump(indent);
  } catch (const nlohmann::json::type_error&) {
    return with_valid_utf8(j).dump(indent);
  }
}

}  // namespace lg::detail

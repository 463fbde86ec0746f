// What counts as an op's name (see op_name.h).
#include "guard/op_name.h"

#include "core/printable_text.h"

namespace lg::guard {

bool is_op_name(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name)
    if (c == ' ' || lg::detail::is_control_byte(c)) return false;  // UTF-8 beyond ASCII is a name's
  for (size_t start = 0;;) {
    const size_t sep = name.find("::", start);
    const std::string_view part = name.substr(start, sep == std::string_view::npos ? sep : sep - start);
    if (part.empty() || part.find(':') != std::string_view::npos) return false;
    if (sep == std::string_view::npos) return true;
    start = sep + 2;
  }
}

}  // namespace lg::guard

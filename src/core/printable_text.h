// Text from outside (a file's line, a module's name) as a message can show it.
#pragma once

#include <string>
#include <string_view>

namespace lg::detail {

// A C0 control byte or DEL: what would end, break or hide a line of text. Bytes of UTF-8
// beyond ASCII are not.
inline bool is_control_byte(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

// Control bytes as \xNN: a NUL would end a message where it is printed as a C string (an
// exception's what(), Python's error text), a line break would start a false line. Bytes of
// UTF-8 beyond ASCII stay.
inline std::string printable_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (!is_control_byte(c)) {
      out += c;
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

}  // namespace lg::detail

// Text from outside (a file's line, a module's name, a path) as a message or a JSON file can
// hold it: valid UTF-8, each byte that is not as \xNN.
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

// The length of the well-formed UTF-8 sequence at the start of `text` (1 to 4), or 0 where its
// first byte starts none: a stray continuation byte, an overlong form, a surrogate, a code point
// past U+10FFFF, or a sequence cut short (Unicode's table of well-formed byte sequences).
inline size_t utf8_sequence_length(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the second byte's range
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  return length;
}

// `text` with each byte that `escaped(byte)` names, and each byte that is not part of UTF-8,
// as \xNN (the form Python's backslashreplace gives).
template <typename Escaped>
std::string escape_bytes(std::string_view text, Escaped escaped) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_sequence_length(text.substr(i));
    if (length != 0 && !(length == 1 && escaped(text[i]))) {
      out.append(text, i, length);
      i += length;
      continue;
    }
    const auto byte = static_cast<unsigned char>(text[i++]);
    constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

// Valid UTF-8 for a JSON file, where a string must be: text as a C++ program or a file gave it
// (a module name, a suppressions line) may hold Latin-1 bytes.
inline std::string valid_utf8(std::string_view text) {
  return escape_bytes(text, [](char) { return false; });
}

// For a message: control bytes escaped too, as a NUL would end it where it is printed as a C
// string (an exception's what()) and a line break would start a false line; and valid UTF-8,
// as Python makes its exceptions' text of it.
inline std::string printable_text(std::string_view text) { return escape_bytes(text, is_control_byte); }

// A value quoted in an error message: printable, and cut after `limit` bytes (at a character's
// start) with the whole length said, as a setting of megabytes would make a message of megabytes.
inline std::string shown_value(std::string_view text, size_t limit = 512) {
  if (text.size() <= limit) return printable_text(text);
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return printable_text(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace lg::detail

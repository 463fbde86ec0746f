// The check behind lg::guard::set_options: an Options that a program filled in itself is held
// to what parse_options makes sure of for text.
#pragma once

#include <string_view>

#include <layoutguard/guard.h>

namespace lg::guard {

// ConfigError "[where] FIELD got 'VALUE'; required: ..." for an allow or suppressions line
// that names no op, a negative count, an output path that cannot be written or that another
// key also names, a NUL in any text, an Ambiguous value without an enumerator. The mode is
// checked apart (checked_mode).
void check_options_fields(const Options& o, std::string_view where);

}  // namespace lg::guard

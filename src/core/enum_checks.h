// The public enums arrive from users as values, and a value made by casting an integer names
// no enumerator: a kernel switching on it would read or write through nothing. Entry points
// that take a DType or MemoryFormat check it first. Internal to src/.
#pragma once

#include <string_view>

#include <layoutguard/dtype.h>
#include <layoutguard/layout.h>

namespace lg::detail {

// lg::ValueError "[op] dtype N is not a DType; required: float32, ...": for a value no
// enumerator has.
void check_dtype(DType dtype, std::string_view op);

// The same for a MemoryFormat ("... required: contiguous_format, channels_last, ...").
void check_memory_format(MemoryFormat fmt, std::string_view op);

}  // namespace lg::detail

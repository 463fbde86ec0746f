// A 128-bit integer for size arithmetic on caller-given int64 values (output sizes, counts,
// offsets) that must be checked, not wrapped. A GCC/Clang extension; __extension__ keeps
// -Wpedantic quiet about it.
#pragma once

namespace lg::detail {

__extension__ typedef __int128 WideInt;

}  // namespace lg::detail

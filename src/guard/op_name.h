// What counts as an op's name where settings and scopes name ops.
#pragma once

#include <string_view>

namespace lg::guard {

// An op name as ops are named: no spaces or control characters, each "::"-separated part
// non-empty (softmax, aten::softmax, myproj::fused_act); so no lone ':' ("cat:decoder" is a
// suppressions line, not an op). Not checked further: a program's own ops may be named as it
// likes, in UTF-8 too. What allow=, suppressions lines and ExpectedLoss take.
bool is_op_name(std::string_view name);

}  // namespace lg::guard

// doctest assertions for layouts. Include after (or instead of) <doctest/doctest.h>.
//
//   LG_CHECK_CHANNELS_LAST(t)            channels_last (4-D) / channels_last_3d (5-D)
//   LG_REQUIRE_CHANNELS_LAST(t)          the same, stopping the test case on failure
//   LG_CHECK_MEMORY_FORMAT(t, fmt)       t.is_contiguous(fmt)
//   LG_CHECK_STRIDES(t, {...})           exact strides
//   LG_CHECK_NO_LAYOUT_VIOLATIONS(stmt)  stmt runs under guard mode throw without a violation
//   LG_CHECK_LAYOUT_VIOLATION(stmt, op)  stmt raises a LayoutViolation naming op
//   LG_CHECK_PRESERVES_LAYOUT(fn, x)     fn keeps the format of contiguous and channels-last x
//                                        and gives equal values for both
//   LG_CHECK_CONVERSIONS_AT_MOST(bytes, stmt)  stmt, under guard mode throw, copies at most
//                                        `bytes` between layouts (NHWC <-> NCHW and the like)
//   LG_CHECK_CONV_WEIGHTS_IN_FORMAT(module, fmt)  every convolution weight under module is
//                                        in fmt (the weight conversion missed none)
// Failures print the layout found (describe_layout), and tensors print through StringMaker.
// A statement with a comma outside parentheses goes in parentheses where the macro takes more
// than one argument: LG_CHECK_LAYOUT_VIOLATION((lg::cat({a, b}, 1)), "cat").
#pragma once

#include <string>

#include <doctest/doctest.h>

#include <layoutguard/layoutguard.h>
#include <layoutguard/testing/layout_checks.h>

namespace doctest {
template <>
struct StringMaker<lg::Tensor> {
  static String convert(const lg::Tensor& t) { return lg::describe_layout(t).c_str(); }
};
}  // namespace doctest

#define LG_DOCTEST_LAYOUT_(level, why_expr)                 \
  do {                                                      \
    const std::string lg_why_ = (why_expr);                 \
    DOCTEST_##level##_MESSAGE(lg_why_.empty(), lg_why_);    \
  } while (0)

#define LG_CHECK_CHANNELS_LAST(t) LG_DOCTEST_LAYOUT_(CHECK, ::lg::testing::explain_channels_last(t))
#define LG_REQUIRE_CHANNELS_LAST(t) LG_DOCTEST_LAYOUT_(REQUIRE, ::lg::testing::explain_channels_last(t))
#define LG_CHECK_MEMORY_FORMAT(t, fmt) \
  LG_DOCTEST_LAYOUT_(CHECK, ::lg::testing::explain_memory_format((t), (fmt)))
#define LG_CHECK_STRIDES(t, ...) \
  LG_DOCTEST_LAYOUT_(CHECK, ::lg::testing::explain_strides((t), std::vector<int64_t> __VA_ARGS__))
#define LG_CHECK_PRESERVES_LAYOUT(fn, input) \
  LG_DOCTEST_LAYOUT_(CHECK, ::lg::testing::explain_preserves_layout((fn), (input)))

#define LG_CHECK_NO_LAYOUT_VIOLATIONS(...)                                                     \
  LG_DOCTEST_LAYOUT_(CHECK, ::lg::testing::explain_violation_raised([&] { __VA_ARGS__; }))

#define LG_CHECK_LAYOUT_VIOLATION(statement, op) \
  LG_DOCTEST_LAYOUT_(CHECK, ::lg::testing::explain_violation_expected([&] { statement; }, (op)))

#define LG_CHECK_CONV_WEIGHTS_IN_FORMAT(module, fmt) \
  LG_DOCTEST_LAYOUT_(CHECK, ::lg::testing::explain_conv_weights_in_format((module), (fmt)))
#define LG_CHECK_CONVERSIONS_AT_MOST(max_bytes, ...) \
  LG_DOCTEST_LAYOUT_(CHECK, ::lg::testing::explain_conversions_at_most((max_bytes), [&] { __VA_ARGS__; }))

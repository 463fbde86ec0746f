// GoogleTest/GoogleMock matchers and assertions for layouts, the same checks as the doctest
// header's (layout_checks.h):
//   EXPECT_THAT(t, lg::testing::IsChannelsLast());
//   EXPECT_THAT(t, lg::testing::HasMemoryFormat(lg::MemoryFormat::Contiguous));
//   EXPECT_THAT(t, lg::testing::HasStrides({128, 1, 32, 8}));
//   LG_EXPECT_NO_LAYOUT_VIOLATIONS(stmt)   stmt runs under guard mode throw without a violation
//   LG_ASSERT_NO_LAYOUT_VIOLATIONS(stmt)   the same, returning from the test on failure
//   LG_EXPECT_LAYOUT_VIOLATION(stmt, op)   stmt raises a LayoutViolation naming op
//   LG_EXPECT_PRESERVES_LAYOUT(fn, x)      fn keeps the format of contiguous and channels-last x
//                                          and gives equal values for both
//   LG_EXPECT_CONVERSIONS_AT_MOST(bytes, stmt)  stmt, under guard mode throw, copies at most
//                                          `bytes` between layouts (NHWC <-> NCHW and the like)
//   LG_EXPECT_CONV_WEIGHTS_IN_FORMAT(module, fmt)  every convolution weight under module is in fmt
// The assertions take a streamed message like gtest's own (LG_EXPECT_...(stmt) << "context").
// A statement or function with a comma outside parentheses (a braced list, a lambda capturing
// two names) goes in parentheses where the macro takes more than one argument:
//   LG_EXPECT_LAYOUT_VIOLATION((lg::cat({a, b}, 1)), "cat");
// On failure the explanation names the layout found (describe_layout), and PrintTo prints
// tensors by their layout.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <gmock/gmock.h>

#include <layoutguard/layoutguard.h>
#include <layoutguard/testing/layout_checks.h>

namespace lg {
// gtest finds PrintTo by argument-dependent lookup, so it lives in lg.
inline void PrintTo(const Tensor& t, std::ostream* out) { *out << describe_layout(t); }
}  // namespace lg

namespace lg::testing {

// Explains a failed check through gmock's listener; true when `why` is empty.
inline bool explain_to(const std::string& why, ::testing::MatchResultListener* listener) {
  if (!why.empty()) *listener << why;
  return why.empty();
}

MATCHER(IsChannelsLast, negation ? "is not channels_last(_3d)" : "is channels_last (4-D) or channels_last_3d (5-D)") {
  return explain_to(explain_channels_last(arg), result_listener);
}

MATCHER_P(HasMemoryFormat, fmt,
          std::string(negation ? "is not " : "is ") + std::string(::lg::memory_format_name(fmt))) {
  return explain_to(explain_memory_format(arg, fmt), result_listener);
}

MATCHER_P(HasStridesMatcher, strides,
          std::string(negation ? "does not have" : "has") + " strides " + ::lg::to_string(strides)) {
  return explain_to(explain_strides(arg, strides), result_listener);
}

inline auto HasStrides(std::vector<int64_t> strides) { return HasStridesMatcher(std::move(strides)); }

}  // namespace lg::testing

// One failure carrying `why` when it is not empty; a single statement that takes a streamed
// message. The switch is gtest's own guard against -Wdangling-else in callers' if/else.
#define LG_GTEST_LAYOUT_(on_failure, why_expr)                        \
  switch (0)                                                          \
  case 0:                                                             \
  default:                                                            \
    if (const std::string lg_why_ = (why_expr); lg_why_.empty()) {    \
    } else                                                            \
      on_failure << lg_why_

#define LG_EXPECT_NO_LAYOUT_VIOLATIONS(...) \
  LG_GTEST_LAYOUT_(ADD_FAILURE(), ::lg::testing::explain_violation_raised([&] { __VA_ARGS__; }))
#define LG_ASSERT_NO_LAYOUT_VIOLATIONS(...) \
  LG_GTEST_LAYOUT_(GTEST_FAIL(), ::lg::testing::explain_violation_raised([&] { __VA_ARGS__; }))
#define LG_EXPECT_LAYOUT_VIOLATION(statement, op) \
  LG_GTEST_LAYOUT_(ADD_FAILURE(), ::lg::testing::explain_violation_expected([&] { statement; }, (op)))
#define LG_EXPECT_PRESERVES_LAYOUT(fn, input) \
  LG_GTEST_LAYOUT_(ADD_FAILURE(), ::lg::testing::explain_preserves_layout((fn), (input)))
#define LG_EXPECT_CONV_WEIGHTS_IN_FORMAT(module, fmt) \
  LG_GTEST_LAYOUT_(ADD_FAILURE(), ::lg::testing::explain_conv_weights_in_format((module), (fmt)))
#define LG_EXPECT_CONVERSIONS_AT_MOST(max_bytes, ...) \
  LG_GTEST_LAYOUT_(ADD_FAILURE(), ::lg::testing::explain_conversions_at_most((max_bytes), [&] { __VA_ARGS__; }))

// GoogleTest/GoogleMock matchers for layouts:
//   EXPECT_THAT(t, lg::testing::IsChannelsLast());
//   EXPECT_THAT(t, lg::testing::HasMemoryFormat(lg::MemoryFormat::Contiguous));
//   EXPECT_THAT(t, lg::testing::HasStrides({128, 1, 32, 8}));
// On failure the explanation names the layout found (describe_layout), and PrintTo prints
// tensors by their layout.
#pragma once

#include <ostream>
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

// The GoogleTest matchers of <layoutguard/testing/gtest.h>: what they accept, what they reject,
// and the explanation a failure prints.
#include <gtest/gtest.h>

#include <layoutguard/testing/gtest.h>

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using lg::testing::HasMemoryFormat;
using lg::testing::HasStrides;
using lg::testing::IsChannelsLast;
using ::testing::Not;

template <typename M>
std::string explanation(const M& matcher, const Tensor& t) {
  ::testing::StringMatchResultListener listener;
  ::testing::ExplainMatchResult(matcher, t, &listener);
  return listener.str();
}

TEST(Matchers, IsChannelsLastAcceptsNhwcAndNdhwcOnly) {
  EXPECT_THAT(lg::empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast), IsChannelsLast());
  EXPECT_THAT(lg::empty({2, 3, 4, 5, 6}, {}, MemoryFormat::ChannelsLast3d), IsChannelsLast());
  EXPECT_THAT(lg::empty({2, 3, 4, 5}), Not(IsChannelsLast()));
  EXPECT_THAT(lg::empty({2, 3}), Not(IsChannelsLast()));
  EXPECT_THAT(Tensor(), Not(IsChannelsLast()));
}

TEST(Matchers, IsChannelsLastExplainsTheLayoutFound) {
  const std::string why = explanation(IsChannelsLast(), lg::empty({2, 3, 4, 5}));
  EXPECT_EQ(why, "expected channels_last, got float32 cpu (2,3,4,5):(60,20,5,1) order=abcd contiguous");
  EXPECT_EQ(::testing::DescribeMatcher<Tensor>(IsChannelsLast()),
            "is channels_last (4-D) or channels_last_3d (5-D)");
  EXPECT_NE(explanation(IsChannelsLast(), lg::empty({2, 3})).find("4-D or channels_last_3d 5-D"), std::string::npos);
}

TEST(Matchers, HasMemoryFormat) {
  const Tensor cl = lg::empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast);
  EXPECT_THAT(cl, HasMemoryFormat(MemoryFormat::ChannelsLast));
  EXPECT_THAT(cl, Not(HasMemoryFormat(MemoryFormat::Contiguous)));
  EXPECT_THAT(lg::empty({2, 3, 4, 5}), HasMemoryFormat(MemoryFormat::Contiguous));
  EXPECT_EQ(explanation(HasMemoryFormat(MemoryFormat::Contiguous), cl),
            "expected contiguous_format, got float32 cpu (2,3,4,5):(60,1,15,3) order=acdb channels_last");
  EXPECT_NE(explanation(HasMemoryFormat(MemoryFormat::ChannelsLast3d), cl).find("needs rank 5"), std::string::npos);
}

TEST(Matchers, HasStrides) {
  const Tensor cl = lg::empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast);
  EXPECT_THAT(cl, HasStrides({60, 1, 15, 3}));
  EXPECT_THAT(cl, Not(HasStrides({60, 20, 5, 1})));
  EXPECT_EQ(explanation(HasStrides({60, 20, 5, 1}), cl),
            "expected strides (60,20,5,1), got float32 cpu (2,3,4,5):(60,1,15,3) order=acdb channels_last");
}

TEST(Matchers, TensorsPrintAsTheirLayout) {
  EXPECT_EQ(::testing::PrintToString(lg::empty({1, 2})), "float32 cpu (1,2):(2,1) order=ab contiguous");
}

}  // namespace

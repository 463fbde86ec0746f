// The GoogleTest assertions of <layoutguard/testing/gtest.h>: each passes on a layout that
// holds, and on one that does not adds exactly one failure carrying the explanation (checked
// through gtest-spi, which catches the failure instead of failing this test).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <layoutguard/nn.h>
#include <layoutguard/testing/gtest.h>

namespace {

using lg::MemoryFormat;
using lg::Tensor;

constexpr auto CL = MemoryFormat::ChannelsLast;

// expand over a batch of one: a View whose output has stride 0 in N, so it loses channels_last.
void expand_batch() { (void)lg::empty({1, 3, 4, 5}, {}, CL).expand({2, 3, 4, 5}); }
void keep_layout() { (void)lg::relu(lg::empty({2, 3, 4, 5}, {}, CL).fill_(1)); }

// A fatal assertion returns from the function it is in: the line after it must not run.
bool reached_after_assert = false;
void assert_then_continue() {
  LG_ASSERT_NO_LAYOUT_VIOLATIONS(expand_batch());
  reached_after_assert = true;
}

TEST(Assertions, NoViolationsPassesOnKeptLayoutAndFailsWithTheViolationText) {
  LG_EXPECT_NO_LAYOUT_VIOLATIONS(keep_layout());
  LG_ASSERT_NO_LAYOUT_VIOLATIONS(keep_layout());
  EXPECT_NONFATAL_FAILURE(LG_EXPECT_NO_LAYOUT_VIOLATIONS(expand_batch()),
                          "[layoutguard] expand lost channels_last: output 0 is");
  EXPECT_NONFATAL_FAILURE(LG_EXPECT_NO_LAYOUT_VIOLATIONS(expand_batch()) << "in the decoder", "in the decoder");
  EXPECT_FATAL_FAILURE(assert_then_continue(), "expand lost channels_last");
  EXPECT_FALSE(reached_after_assert);
}

TEST(Assertions, ExpectViolationNamesTheOp) {
  LG_EXPECT_LAYOUT_VIOLATION(expand_batch(), "expand");
  // A statement with commas, in parentheses (the documented form).
  const Tensor cl = lg::zeros({1, 3, 4, 5}).contiguous(CL), cf = lg::zeros({1, 3, 4, 5});
  LG_EXPECT_LAYOUT_VIOLATION(((void)lg::cat({cl, cf}, 1)), "cat");
  EXPECT_NONFATAL_FAILURE(LG_EXPECT_LAYOUT_VIOLATION(keep_layout(), "relu"),
                          "expected a LayoutViolation from relu, but the statement raised none");
  EXPECT_NONFATAL_FAILURE(LG_EXPECT_LAYOUT_VIOLATION(expand_batch(), "conv2d"),
                          "expected a LayoutViolation from conv2d, got: [layoutguard] expand lost");
}

TEST(Assertions, PreservesLayout) {
  const Tensor x = lg::randn({2, 3, 4, 5});
  LG_EXPECT_PRESERVES_LAYOUT([](const Tensor& t) { return lg::relu(t); }, x);
  EXPECT_NONFATAL_FAILURE(LG_EXPECT_PRESERVES_LAYOUT([](const Tensor& t) { return t.contiguous(); }, x),
                          "on channels-last input the output lost the format: expected channels_last");
  EXPECT_NONFATAL_FAILURE(LG_EXPECT_PRESERVES_LAYOUT([](const Tensor& t) { return t; }, lg::randn({2, 3})),
                          "needs a 4-D or 5-D input");
}

TEST(Assertions, ConversionsAtMost) {
  const Tensor cl = lg::ones({2, 3, 4, 5}).contiguous(CL);  // 480 bytes
  LG_EXPECT_CONVERSIONS_AT_MOST(0, keep_layout());
  LG_EXPECT_CONVERSIONS_AT_MOST(480, (void)cl.contiguous());
  EXPECT_NONFATAL_FAILURE(LG_EXPECT_CONVERSIONS_AT_MOST(100, (void)cl.contiguous()),
                          "expected at most 100 bytes of layout conversions, got 480 in 1 copies:\n"
                          "  contiguous: channels_last -> contiguous, 1x, 480 bytes");
}

TEST(Assertions, ConvWeightsInFormat) {
  lg::nn::Conv2d conv(lg::nn::Conv2dOptions(3, 8, {3}));
  LG_EXPECT_CONV_WEIGHTS_IN_FORMAT(conv, lg::MemoryFormat::Contiguous);
  EXPECT_NONFATAL_FAILURE(LG_EXPECT_CONV_WEIGHTS_IN_FORMAT(conv, CL) << "after loading",
                          "these are not:\n  (the module).weight (Conv2d): float32 cpu (8,3,3,3)");
  lg::nn::utils::convert_conv2d_weight_memory_format(conv, CL);
  LG_EXPECT_CONV_WEIGHTS_IN_FORMAT(conv, CL);
}

TEST(Assertions, TheGuardModeIsRestoredAfterEachAssertion) {
  LG_EXPECT_LAYOUT_VIOLATION(expand_batch(), "expand");
  EXPECT_NO_THROW(expand_batch());  // outside the assertion the guard is off again
}

// The macros are single statements: an if without braces and its else stay paired.
TEST(Assertions, MacrosAreSingleStatements) {
  bool else_taken = false;
  const bool take_if = ::testing::UnitTest::GetInstance()->current_test_info() == nullptr;  // false here
  if (take_if)
    LG_EXPECT_NO_LAYOUT_VIOLATIONS(keep_layout());
  else
    else_taken = true;
  EXPECT_TRUE(else_taken);
}

}  // namespace

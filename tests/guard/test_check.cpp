// The layout contract on its own: classification, each policy, ambiguity, exemptions.
#include <doctest/doctest.h>

#include "support/tensor_testing.h"

namespace {

using lg::LayoutPolicy;
using lg::MemoryFormat;
using lg::Tensor;
using lg::guard::LayoutClass;
using lg::testing::strided;

constexpr auto CL = MemoryFormat::ChannelsLast;

lg::guard::Options defaults() { return lg::guard::parse_options("", ""); }

lg::guard::Options with(std::string_view opts) { return lg::guard::parse_options("", opts); }

std::optional<lg::guard::Finding> check(LayoutPolicy policy, std::vector<Tensor> in, std::vector<Tensor> out,
                                        const lg::guard::Options& o = defaults(), std::string_view module = {}) {
  return lg::guard::check_layout("op", policy, in, out, o, module);
}

}  // namespace

TEST_SUITE("guard") {

TEST_CASE("classify sorts tensors into channels_last, other, ambiguous and not applicable") {
  CHECK(lg::guard::classify(lg::empty({2, 3, 4, 5}, {}, CL)) == LayoutClass::ChannelsLast);
  CHECK(lg::guard::classify(lg::empty({2, 3, 4, 5})) == LayoutClass::Other);
  CHECK(lg::guard::classify(lg::empty({2, 3, 4, 5}).transpose(2, 3)) == LayoutClass::Other);
  CHECK(lg::guard::classify(strided({2, 3, 2, 5}, {60, 1, 30, 3})) == LayoutClass::ChannelsLast);
  CHECK(lg::guard::classify(lg::empty({2, 3, 1, 1})) == LayoutClass::Ambiguous);
  CHECK(lg::guard::classify(lg::empty({2, 3, 1, 1}, {}, CL)) == LayoutClass::Ambiguous);
  CHECK(lg::guard::classify(lg::empty({2, 1, 4, 5})) == LayoutClass::Ambiguous);
  CHECK(lg::guard::classify(lg::empty({2, 0, 4, 5}, {}, CL)) == LayoutClass::Ambiguous);
  CHECK(lg::guard::classify(lg::empty({2, 3, 4, 5, 6}, {}, MemoryFormat::ChannelsLast3d)) == LayoutClass::ChannelsLast);
  CHECK(lg::guard::classify(lg::empty({2, 3, 4})) == LayoutClass::NotApplicable);
  CHECK(lg::guard::classify(Tensor()) == LayoutClass::NotApplicable);
}

TEST_CASE("Preserve flags a channels_last input whose same-rank output is not channels_last") {
  Tensor cl = lg::empty({2, 3, 4, 5}, {}, CL), cf = lg::empty({2, 3, 4, 5});
  auto f = check(LayoutPolicy::Preserve, {cl}, {cf});
  REQUIRE(f.has_value());
  CHECK(f->op == "op");
  CHECK(f->lost == CL);
  CHECK(f->output_index == 0);
  CHECK(f->input_index == 0);
  CHECK(f->rule == "policy Preserve requires a channels_last output when an input of the same rank is channels_last");
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl}, {lg::empty_like(cl)}));
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cf}, {cf}));
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl}, {cl}));  // in place: the output is the input
  // Any channels_last input sets the expectation (cf + cl -> cf is a loss: the first operand
  // wins, not the channels_last one).
  f = check(LayoutPolicy::Preserve, {cf, cl}, {cf});
  REQUIRE(f.has_value());
  CHECK(f->input_index == 1);
  // ... and the rule says which operand decided the output's layout (the first one).
  CHECK(f->rule ==
        "policy Preserve requires a channels_last output when an input of the same rank is channels_last; the "
        "output took the layout of input 0 (contiguous): with mixed formats the first operand decides, not the "
        "channels_last one, so convert input 0 to channels_last (or, if the op commutes, put input 1 first)");
  // No such note when no earlier input has the output's layout, nor for ConvLike, whose
  // output follows the input or the weight by its own rule.
  f = check(LayoutPolicy::Preserve, {cl, cf}, {cf});
  REQUIRE(f.has_value());
  CHECK(f->rule.find("took the layout") == std::string::npos);
  f = check(LayoutPolicy::Preserve, {lg::empty({2, 3, 5, 4}).transpose(2, 3), cl}, {cf});  // other strides
  REQUIRE(f.has_value());
  CHECK(f->rule.find("took the layout") == std::string::npos);
  f = check(LayoutPolicy::ConvLike, {cf, cl}, {cf});
  REQUIRE(f.has_value());
  CHECK(f->rule.find("took the layout") == std::string::npos);
  // Nor for an earlier operand broadcast to the output (converting it changes nothing).
  f = check(LayoutPolicy::Preserve, {lg::empty({1, 3, 4, 5}), cl}, {cf});
  REQUIRE(f.has_value());
  CHECK(f->rule.find("took the layout") == std::string::npos);
  // Inputs of another rank (a bias) do not.
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cf, lg::empty({3, 1, 1})}, {cf}));
}

TEST_CASE("multi-output and 5-D calls name the offending output and format") {
  Tensor cl = lg::empty({2, 3, 4, 5}, {}, CL);
  auto f = check(LayoutPolicy::Preserve, {cl}, {lg::empty_like(cl), lg::empty({2, 3, 4, 5})});
  REQUIRE(f.has_value());
  CHECK(f->output_index == 1);
  Tensor cl3 = lg::empty({2, 3, 4, 5, 6}, {}, MemoryFormat::ChannelsLast3d);
  f = check(LayoutPolicy::Preserve, {cl3}, {lg::empty({2, 3, 2, 2, 3})});
  REQUIRE(f.has_value());
  CHECK(f->lost == MemoryFormat::ChannelsLast3d);
  CHECK(f->rule.find("channels_last_3d output") != std::string::npos);
  // A 4-D output of a 5-D input is a different rank: not this rule's business.
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl3}, {lg::empty({2, 3, 4, 5})}));
}

TEST_CASE("ambiguous tensors are skipped by default and judged by their suggestion with ambiguous=check") {
  Tensor nc11_cl = lg::empty({2, 3, 1, 1}, {}, CL), nc11_plain = lg::empty({2, 3, 1, 1});
  Tensor cl = lg::empty({2, 3, 4, 4}, {}, CL);
  // relu(NC11-CL) -> plain NC11 strides (layout row 37): invisible by default, flagged on request.
  CHECK_FALSE(check(LayoutPolicy::Preserve, {nc11_cl}, {nc11_plain}));
  auto f = check(LayoutPolicy::Preserve, {nc11_cl}, {nc11_plain}, with("ambiguous=check"));
  REQUIRE(f.has_value());
  // A global pool of a CL tensor that comes out with plain NC11 strides.
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl}, {nc11_plain}));
  CHECK(check(LayoutPolicy::Preserve, {cl}, {nc11_plain}, with("ambiguous=check")).has_value());
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl}, {nc11_cl}, with("ambiguous=check")));
  // A plain ambiguous input never sets an expectation.
  CHECK_FALSE(check(LayoutPolicy::Preserve, {nc11_plain}, {nc11_plain}, with("ambiguous=check")));
}

TEST_CASE("ConvLike counts the input and the weight, nothing after them") {
  Tensor x_cf = lg::empty({2, 3, 6, 6}), w_cl = lg::empty({4, 3, 3, 3}, {}, CL), out_cf = lg::empty({2, 4, 4, 4});
  auto f = check(LayoutPolicy::ConvLike, {x_cf, w_cl}, {out_cf});
  REQUIRE(f.has_value());
  CHECK(f->input_index == 1);
  CHECK(f->rule.find("when the weight is channels_last") != std::string::npos);
  CHECK_FALSE(check(LayoutPolicy::ConvLike, {x_cf, lg::empty({4, 3, 3, 3}), w_cl}, {out_cf}));
}

TEST_CASE("RankChanging and Explicit are never flagged; View is, for same-rank views") {
  Tensor cl = lg::empty({2, 3, 4, 5}, {}, CL);
  CHECK_FALSE(check(LayoutPolicy::RankChanging, {cl}, {lg::empty({2, 3, 4, 5})}));
  CHECK_FALSE(check(LayoutPolicy::Explicit, {cl}, {cl.contiguous()}));
  // reshape to the same shape rewrites the N stride of a batch of one (pytorch#78611).
  Tensor same = strided({1, 2, 3, 4}, {24, 1, 8, 2});
  CHECK(check(LayoutPolicy::View, {same}, {same.reshape({1, 2, 3, 4})}).has_value());
  CHECK_FALSE(check(LayoutPolicy::View, {cl}, {cl.view({2, 3, 20})}));  // rank changes
  CHECK_FALSE(check(LayoutPolicy::View, {cl}, {cl.view({2, 3, 4, 5})}));  // strides kept
  // A rank-changing view whose output holds channels-last data under a contiguous suggestion
  // (x[0].unsqueeze(0), pytorch#68430) is flagged, input 0 named; other policies never look.
  const Tensor image = strided({3, 4, 5}, {1, 15, 3}), hidden = strided({1, 3, 4, 5}, {3, 1, 15, 3});
  const auto f = check(LayoutPolicy::View, {image}, {hidden});
  REQUIRE(f.has_value());
  CHECK(f->input_index == 0);
  CHECK(f->lost == CL);
  CHECK(f->rule.find("under strides that suggest contiguous_format") != std::string::npos);
  CHECK_FALSE(check(LayoutPolicy::Preserve, {image}, {hidden}));
  CHECK_FALSE(check(LayoutPolicy::View, {}, {hidden}));
  CHECK_FALSE(check(LayoutPolicy::View, {image}, {strided({1, 3, 4, 5}, {60, 1, 15, 3})}));  // suggests it
  CHECK_FALSE(check(LayoutPolicy::View, {image}, {lg::empty({1, 3, 4, 5})}));               // NCHW data
  CHECK_FALSE(check(LayoutPolicy::View, {image}, {hidden}, with("min_bytes=481")));         // 480 bytes
  // Only the user's own views (depth 0), and hidden_views=0 turns the rule off.
  CHECK_FALSE(lg::guard::check_layout("op", LayoutPolicy::View, std::vector<Tensor>{image}, std::vector<Tensor>{hidden},
                                      defaults(), {}, 1));
  CHECK_FALSE(check(LayoutPolicy::View, {image}, {hidden}, with("hidden_views=0")));
  CHECK(check(LayoutPolicy::View, {image}, {hidden}, with("hidden_views=1")).has_value());
}

TEST_CASE("an op that reorders an input hiding channels-last data is flagged, one that keeps its order is not") {
  // (1,3,4,5):(3,1,15,3) is x[0].unsqueeze(0) of an NHWC batch: channels_last data whose
  // size-1 batch stride makes it suggest contiguous_format, which pooling and softmax follow.
  const Tensor hidden = strided({1, 3, 4, 5}, {3, 1, 15, 3});
  REQUIRE(lg::guard::classify(hidden) == LayoutClass::Other);
  const Tensor nchw = lg::empty({1, 3, 4, 5});
  const auto f = check(LayoutPolicy::Preserve, {hidden}, {nchw});
  REQUIRE(f.has_value());
  CHECK(f->input_index == 0);
  CHECK(f->lost == CL);
  CHECK(f->rule.find("input 0 does (is_contiguous(channels_last)) under strides that suggest contiguous_format") !=
        std::string::npos);
  CHECK(f->rule.find("x.to(memory_format=channels_last)") != std::string::npos);
  // A convolution's input counts; its weight, and inputs after it, do not.
  CHECK(check(LayoutPolicy::ConvLike, {hidden, lg::empty({3, 3, 1, 1})}, {nchw}).has_value());
  CHECK_FALSE(check(LayoutPolicy::ConvLike, {nchw, hidden}, {nchw}));
  // Outputs that keep the data in channels-last order, hidden or not, are no loss.
  CHECK_FALSE(check(LayoutPolicy::Preserve, {hidden}, {hidden}));
  CHECK_FALSE(check(LayoutPolicy::Preserve, {hidden}, {lg::empty({1, 3, 4, 5}, {}, CL)}));
  // Nor are outputs of another rank, nor policies that let the op choose.
  CHECK_FALSE(check(LayoutPolicy::Preserve, {hidden}, {lg::empty({3, 4, 5})}));
  CHECK_FALSE(check(LayoutPolicy::RankChanging, {hidden}, {nchw}));
  CHECK_FALSE(check(LayoutPolicy::Explicit, {hidden}, {nchw}));
  // An NCHW input that is no view of channels-last data sets nothing.
  CHECK_FALSE(check(LayoutPolicy::Preserve, {nchw}, {nchw}));
  // Only the user's own calls (depth 0), and hidden_views=0 turns the rule off.
  CHECK_FALSE(lg::guard::check_layout("op", LayoutPolicy::Preserve, std::vector<Tensor>{hidden}, std::vector<Tensor>{nchw},
                                      defaults(), {}, 1));
  CHECK_FALSE(check(LayoutPolicy::Preserve, {hidden}, {nchw}, with("hidden_views=0")));
  CHECK_FALSE(check(LayoutPolicy::Preserve, {hidden}, {nchw}, with("min_bytes=241")));  // 240 bytes
}

TEST_CASE("an output without elements is never flagged: it holds no data to order") {
  // PyTorch gives a tensor with a zero-size dim contiguous strides whatever its input (a
  // convolution over an empty batch): the strides differ, nothing was lost.
  const Tensor weight = lg::empty({5, 3, 3, 3}, {}, CL);
  const Tensor empty_out = lg::empty({0, 5, 6, 6});
  REQUIRE(lg::guard::classify(empty_out) == LayoutClass::Other);
  CHECK_FALSE(check(LayoutPolicy::ConvLike, {lg::empty({0, 3, 8, 8}, {}, CL), weight}, {empty_out}));
  CHECK_FALSE(check(LayoutPolicy::Preserve, {lg::empty({2, 5, 6, 6}, {}, CL)}, {empty_out}));
  // One element is enough to be flagged.
  CHECK(check(LayoutPolicy::ConvLike, {lg::empty({1, 3, 8, 8}, {}, CL), weight}, {lg::empty({1, 5, 6, 6})}).has_value());
}

TEST_CASE("allow, suppressions and min_bytes exempt calls") {
  Tensor cl = lg::empty({2, 3, 4, 5}, {}, CL), cf = lg::empty({2, 3, 4, 5});
  const std::vector<Tensor> in{cl}, out{cf};
  CHECK_FALSE(lg::guard::check_layout("pad", LayoutPolicy::Preserve, in, out, with("allow=upsample,pad")));
  CHECK(lg::guard::check_layout("cat", LayoutPolicy::Preserve, in, out, with("allow=upsample,pad")));
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl}, {cf}, with("min_bytes=481")));  // output is 480 bytes
  CHECK(check(LayoutPolicy::Preserve, {cl}, {cf}, with("min_bytes=480")).has_value());
  lg::guard::Options o = defaults();
  o.suppressions.push_back({"op", "decoder.*", "", ""});
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl}, {cf}, o, "decoder.up1"));
  CHECK(check(LayoutPolicy::Preserve, {cl}, {cf}, o, "encoder.down1").has_value());
  // op:(top) silences the op outside every module only; a bare op everywhere.
  lg::guard::Options top = defaults();
  top.suppressions.push_back({"op", std::string(lg::guard::kTopLevelModule), "", ""});
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl}, {cf}, top, ""));
  CHECK(check(LayoutPolicy::Preserve, {cl}, {cf}, top, "decoder.up1").has_value());
  lg::guard::Options bare = defaults();
  bare.suppressions.push_back({"op", "", "", ""});
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl}, {cf}, bare, ""));
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl}, {cf}, bare, "decoder.up1"));
}

TEST_CASE("layout_signature names every operand's format; signature lines match it on a real loss") {
  const Tensor cl = lg::empty({2, 3, 4, 5}, {}, CL), cf = lg::empty({2, 3, 4, 5});
  const Tensor c1 = lg::empty({2, 1, 4, 5});  // C = 1: contiguous and channels_last at once
  CHECK(lg::guard::layout_signature(std::vector<Tensor>{cl, Tensor()}, std::vector<Tensor>{cf}) ==
        "channels_last,none->contiguous");
  CHECK(lg::guard::layout_signature(std::vector<Tensor>{c1}, std::vector<Tensor>{}) ==
        "contiguous (ambiguous: also channels_last-contiguous)->");
  CHECK(lg::guard::layout_signature(std::vector<Tensor>{}, std::vector<Tensor>{}) == "->");
  lg::guard::Options o = defaults();
  o.suppressions.push_back({"op", "", "", "channels_last->contiguous"});
  CHECK_FALSE(o.is_exempt("op", ""));  // decided at the loss, with its operands
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl}, {cf}, o, ""));
  CHECK(check(LayoutPolicy::Preserve, {cl, cf}, {cf}, o, "").has_value());  // another signature
  lg::guard::Options glob = defaults();
  glob.suppressions.push_back({"op", "dec*", "", "channels_last*->*"});
  CHECK_FALSE(check(LayoutPolicy::Preserve, {cl, cf}, {cf}, glob, "decoder"));
  CHECK(check(LayoutPolicy::Preserve, {cl, cf}, {cf}, glob, "encoder").has_value());
}

}  // TEST_SUITE

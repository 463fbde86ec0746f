// The guard's own loss spans (warn/record, spans=1): followed while the run goes on, summed per
// lost site over a loop; restored by a conv, left by a reduction, never restored; expected
// losses; spans=0; forgotten by clear_report; rendered in the summary and the JSON report.
// And the report's other data-flow finding: convolutions whose weight was never converted.
#include <doctest/doctest.h>

#include <thread>

#include <nlohmann/json.hpp>

#include <layoutguard/layoutguard.h>

#include "support/guard_testing.h"
#include "support/test_ops.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using lg::guard::Mode;
using namespace lg::testing;

Tensor cl4() { return lg::randn({2, 8, 6, 6}).contiguous(MemoryFormat::ChannelsLast); }
Tensor cl_weight() { return lg::randn({8, 8, 3, 3}).contiguous(MemoryFormat::ChannelsLast); }

// One block of a network: a loss, two ops on the NCHW data (a residual add reads both), then a
// conv with a channels-last weight, which gives channels_last back.
Tensor block(const Tensor& x, const Tensor& w) {
  lg::guard::ModuleScope scope("block");
  const Tensor lost = drop_layout()({x})[0];
  const Tensor r = lg::relu(lost);
  const Tensor s = lg::add(r, lost);
  return lg::conv2d(s, w, std::nullopt, {1}, {1});
}

const lg::guard::SpanStep* step(const std::vector<lg::guard::SpanStep>& steps, const std::string& op) {
  for (const auto& s : steps)
    if (s.op == op) return &s;
  return nullptr;
}

}  // namespace

TEST_SUITE("guard") {

TEST_CASE("spans: a loss in a loop is one span, its NCHW ops and the conv that restores it counted per step") {
  CleanGuard clean;
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  const Tensor w = cl_weight();
  Tensor x = cl4();
  for (int step = 0; step < 3; ++step) x = block(x, w);
  REQUIRE(x.is_contiguous(MemoryFormat::ChannelsLast));

  const lg::guard::Report r = lg::guard::report();
  REQUIRE(r.loss_spans.size() == 1);
  const lg::guard::LossSpanRecord& s = r.loss_spans[0];
  CHECK(s.op == "test.drop_layout");
  CHECK(s.module_path == "block");
  CHECK(s.expected_loss.empty());
  CHECK(s.losses == 3);
  REQUIRE(s.nchw_ops.size() == 2);
  CHECK(s.nchw_ops[0].op == "relu");  // in order of first appearance
  CHECK(s.nchw_ops[1].op == "add");
  CHECK(s.nchw_ops[0].count == 3);
  CHECK(s.nchw_ops[1].count == 3);  // the add reads two span tensors: counted once per call
  REQUIRE(s.restored_at.size() == 1);
  CHECK(s.restored_at[0].op == "conv2d");
  CHECK(s.restored_at[0].module_path == "block");
  CHECK(s.restored_at[0].count == 3);
  CHECK(s.left_at.empty());
  // The lost output, relu's and add's: three NCHW tensors of 2x8x6x6 floats per step.
  CHECK(s.nchw_output_bytes == 3 * 3 * 2 * 8 * 6 * 6 * 4);
  CHECK(r.span_sites_not_followed == 0);

  const std::string text = lg::guard::summary_text(r);
  CHECK(text.find("span: test.drop_layout @ block lost channels_last x3") != std::string::npos);
  CHECK(text.find("then NCHW: relu @ block (x3), add @ block (x3)") != std::string::npos);
  CHECK(text.find("channels_last again at: conv2d @ block (x3)") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(lg::guard::report_json(r));
  REQUIRE(j["loss_spans"].size() == 1);
  CHECK(j["loss_spans"][0]["losses"] == 3);
  CHECK(j["loss_spans"][0]["restored_at"][0]["op"] == "conv2d");
  CHECK(j["loss_spans"][0]["nchw_ops"][1]["count"] == 3);
}

TEST_CASE("spans: data that leaves 4-D, data never restored, and what is not a span step") {
  CleanGuard clean;
  lg::guard::set_options(options_with(Mode::Warn, "backtrace=0:max_reports=0"));
  const Tensor x = cl4();
  const Tensor lost = drop_layout()({x})[0];
  (void)lg::mean(lost, {2, 3});                  // leaves 4-D
  const Tensor unrelated = lg::relu(cl4());      // reads no span data: not a step
  const Tensor still_cl = keep_layout()({unrelated})[0];
  REQUIRE(still_cl.is_contiguous(MemoryFormat::ChannelsLast));
  {
    lg::guard::ModuleScope scope("tail");
    (void)drop_layout()({x});  // a second site: nothing reads its output
  }
  const lg::guard::Report r = lg::guard::report();
  REQUIRE(r.loss_spans.size() == 2);
  const auto& first = r.loss_spans[0];
  CHECK(first.nchw_ops.empty());
  REQUIRE(first.left_at.size() == 1);
  CHECK(first.left_at[0].op == "mean");
  CHECK(first.restored_at.empty());
  CHECK(step(first.nchw_ops, "relu") == nullptr);
  const auto& second = r.loss_spans[1];
  CHECK(second.module_path == "tail");
  CHECK(second.losses == 1);
  CHECK(second.nchw_ops.empty());
  CHECK(second.restored_at.empty());
  CHECK(second.left_at.empty());
  CHECK(lg::guard::summary_text(r).find("not channels_last again") != std::string::npos);
}

TEST_CASE("spans: an expected loss has its reason; spans=0 follows nothing; clear_report forgets live spans") {
  CleanGuard clean;
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  const Tensor x = cl4();
  Tensor lost;
  {
    LG_EXPECT_LAYOUT_LOSS("no NHWC kernel for it yet", "test.drop_layout");
    lost = drop_layout()({x})[0];
  }
  (void)lg::relu(lost);
  lg::guard::Report r = lg::guard::report();
  REQUIRE(r.loss_spans.size() == 1);
  CHECK(r.loss_spans[0].expected_loss == "no NHWC kernel for it yet");
  CHECK(r.loss_spans[0].nchw_ops.size() == 1);
  CHECK(lg::guard::summary_text(r).find("(expected: no NHWC kernel for it yet)") != std::string::npos);

  // After clear_report, the NCHW tensor of the old span is no step of anything.
  lg::guard::clear_report();
  (void)lg::relu(lost);
  CHECK(lg::guard::report().loss_spans.empty());

  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:spans=0"));
  const Tensor lost_again = drop_layout()({x})[0];
  (void)lg::relu(lost_again);
  r = lg::guard::report();
  CHECK(r.violation_count() == 1);
  CHECK(r.loss_spans.empty());
  CHECK(nlohmann::json::parse(lg::guard::report_json(r))["loss_spans"].empty());
}

TEST_CASE("spans: a suppressed loss opens no span, and throw mode follows nothing") {
  CleanGuard clean;
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0:allow=test.drop_layout"));
  const Tensor lost = drop_layout()({cl4()})[0];
  (void)lg::relu(lost);
  CHECK(lg::guard::report().loss_spans.empty());

  lg::guard::set_options(options_with(Mode::Throw, "backtrace=0"));
  CHECK_THROWS_AS((void)drop_layout()({cl4()}), lg::LayoutViolation);
  CHECK(lg::guard::report().loss_spans.empty());
}

TEST_CASE("report: convolutions with a channels-last input and an NCHW weight, by module") {
  CleanGuard clean;
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  const Tensor x = cl4();
  const Tensor nchw_3x3 = lg::randn({8, 8, 3, 3});
  const Tensor nchw_1x1 = lg::randn({8, 8, 1, 1});  // both formats at once: never counted
  for (int step = 0; step < 2; ++step) {
    lg::guard::ModuleScope scope("stem");
    const Tensor y = lg::conv2d(x, nchw_3x3, std::nullopt, {1}, {1});
    REQUIRE(y.is_contiguous(MemoryFormat::ChannelsLast));  // no violation: the input decides
    (void)lg::conv2d(y, nchw_1x1);
    (void)lg::conv2d(y, cl_weight(), std::nullopt, {1}, {1});
  }
  (void)lg::conv2d(x.contiguous(), nchw_3x3, std::nullopt, {1}, {1});  // NCHW input: nothing missed
  const lg::guard::Report r = lg::guard::report();
  CHECK(r.violation_count() == 0);
  REQUIRE(r.unconverted_weights.size() == 1);
  const lg::guard::UnconvertedWeightRecord& w = r.unconverted_weights[0];
  CHECK(w.op == "conv2d");
  CHECK(w.module_path == "stem");
  CHECK(w.count == 2);
  CHECK(w.weight_bytes == 8 * 8 * 3 * 3 * 4);
  CHECK(w.weight_format == lg::layout::format_name(nchw_3x3.sizes(), nchw_3x3.strides()));
  CHECK(lg::guard::summary_text(r).find("weight not converted: conv2d @ stem (x2)") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(lg::guard::report_json(r));
  REQUIRE(j["unconverted_weights"].size() == 1);
  CHECK(j["unconverted_weights"][0]["count"] == 2);

  // Module::to(channels_last) converts the weights the way the listing asks for.
  lg::guard::clear_report();
  {
    lg::guard::ModuleScope scope("stem");
    (void)lg::conv2d(x, nchw_3x3.contiguous(MemoryFormat::ChannelsLast), std::nullopt, {1}, {1});
  }
  CHECK(lg::guard::report().unconverted_weights.empty());
}

TEST_CASE("spans: threads follow their own data into one site's totals (thread)") {
  CleanGuard clean;
  lg::guard::set_options(options_with(Mode::Record, "backtrace=0"));
  const Tensor w = cl_weight();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&w] {
      Tensor x = cl4();
      for (int step = 0; step < 5; ++step) x = block(x, w);
    });
  for (std::thread& t : threads) t.join();
  const lg::guard::Report r = lg::guard::report();
  REQUIRE(r.loss_spans.size() == 1);
  CHECK(r.loss_spans[0].losses == 20);
  REQUIRE(step(r.loss_spans[0].nchw_ops, "add") != nullptr);
  CHECK(step(r.loss_spans[0].nchw_ops, "add")->count == 20);
  REQUIRE(r.loss_spans[0].restored_at.size() == 1);
  CHECK(r.loss_spans[0].restored_at[0].count == 20);
}

}  // TEST_SUITE

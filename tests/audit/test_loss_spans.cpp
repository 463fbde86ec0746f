// The audit's loss spans over hand-made rows: a loss restored by a conv, a residual branch that
// reads the NCHW data twice, a span that leaves 4-D, one that reaches the run's output, a loss
// inside an earlier span, and expected losses.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <layoutguard/audit.h>

namespace {

using lg::audit::Row;
using lg::audit::LossSpan;
using lg::audit::OutputKind;

constexpr OutputKind CL = OutputKind::ChannelsLast, NCHW = OutputKind::Nchw, NEITHER = OutputKind::Neither;

Row row(std::string op, OutputKind out, std::vector<size_t> sources, int64_t out_bytes = 100,
             bool violation = false, int64_t converted = 0) {
  Row r;
  r.op = std::move(op);
  r.module = "m";
  r.out_kind = out;
  r.in = "NHWC";
  r.out = out == CL ? "NHWC" : out == NCHW ? "NCHW" : "2-D";
  r.out_bytes = out_bytes;
  r.violation = violation;
  r.conversion_bytes = converted;
  r.sources = std::move(sources);
  return r;
}

}  // namespace

TEST_SUITE("audit") {

TEST_CASE("loss spans: lost, run in NCHW through a residual branch, restored by the next conv") {
  const std::vector<Row> rows{
      row("conv2d", CL, {}),                                     // 0
      row("upsample_bicubic2d", NCHW, {0}, 400, true, 400),      // 1: the loss
      row("relu", NCHW, {1}),                                    // 2
      row("conv2d", CL, {2}),                                    // 3: restores one branch
      row("add", NCHW, {1, 2}),                                  // 4: reads the NCHW data twice
      row("conv2d", CL, {4}, 100, false, 64),                    // 5: restores, converting
      row("add", CL, {3, 5}),                                    // 6: outside the span
  };
  const std::vector<LossSpan> spans = lg::audit::find_loss_spans(rows);
  REQUIRE(spans.size() == 1);
  const LossSpan& s = spans[0];
  CHECK(s.lost_at == 1);
  CHECK(s.nchw_ops == std::vector<size_t>{2, 4});
  CHECK(s.restored_at == std::vector<size_t>{3, 5});
  CHECK(s.left_at.empty());
  CHECK_FALSE(s.ends_in_nchw);
  CHECK(s.nchw_output_bytes == 600);
  CHECK(s.conversion_bytes == 464);
  const std::string text = lg::audit::format_loss_spans(spans, rows);
  CHECK(text.find("lost at #1 upsample_bicubic2d (m) !!: NHWC -> NCHW, converted 400 B") != std::string::npos);
  CHECK(text.find("ran in NCHW: 2 ops: #2 relu (m), #4 add (m); 600 B of NCHW outputs") != std::string::npos);
  CHECK(text.find("restored at #5 conv2d (m): NHWC -> NHWC, converted 64 B") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(lg::audit::flow_json(rows, spans));
  CHECK(j["loss_spans"][0]["restored_at"] == std::vector<size_t>{3, 5});
  CHECK(j["loss_spans"][0]["op"] == "upsample_bicubic2d");
  CHECK(j["ops"][4]["sources"] == std::vector<size_t>{1, 2});
}

TEST_CASE("loss spans: leaving 4-D, reaching the output, a second loss inside a span, expected losses") {
  SUBCASE("a pooled vector ends the span") {
    const std::vector<Row> rows{row("conv2d", CL, {}), row("permute", NCHW, {0}, 100, true),
                                     row("flatten", NEITHER, {1}), row("linear", NEITHER, {2})};
    const std::vector<LossSpan> spans = lg::audit::find_loss_spans(rows);
    REQUIRE(spans.size() == 1);
    CHECK(spans[0].left_at == std::vector<size_t>{2});
    CHECK(spans[0].nchw_ops.empty());
    CHECK_FALSE(spans[0].ends_in_nchw);
    CHECK(lg::audit::format_loss_spans(spans, rows).find("left 4-D/5-D at #2 flatten (m)") != std::string::npos);
  }
  SUBCASE("the run's output is NCHW") {
    const std::vector<Row> rows{row("conv2d", CL, {}), row("pad", NCHW, {0}, 100, true), row("sigmoid", NCHW, {1})};
    const std::vector<LossSpan> spans = lg::audit::find_loss_spans(rows);
    REQUIRE(spans.size() == 1);
    CHECK(spans[0].ends_in_nchw);
    CHECK(lg::audit::format_loss_spans(spans, rows).find("the run's output is NCHW") != std::string::npos);
  }
  SUBCASE("a violation inside an earlier span opens no span of its own") {
    const std::vector<Row> rows{row("conv2d", CL, {}), row("up", NCHW, {0}, 100, true),
                                     row("cat", NCHW, {1, 0}, 100, true), row("conv2d", CL, {2})};
    const std::vector<LossSpan> spans = lg::audit::find_loss_spans(rows);
    REQUIRE(spans.size() == 1);
    CHECK(spans[0].nchw_ops == std::vector<size_t>{2});
    CHECK(lg::audit::format_loss_spans(spans, rows).find("#2 cat (m) !!") != std::string::npos);
  }
  SUBCASE("two separate losses, one of them expected") {
    std::vector<Row> rows{row("conv2d", CL, {}), row("up", NCHW, {0}, 100, true), row("conv2d", CL, {1}),
                               row("up", NCHW, {2}), row("conv2d", CL, {3})};
    rows[3].expected_loss = "no NHWC kernel";
    const std::vector<LossSpan> spans = lg::audit::find_loss_spans(rows);
    REQUIRE(spans.size() == 2);
    CHECK(spans[0].restored_at == std::vector<size_t>{2});
    CHECK(spans[1].lost_at == 3);
    CHECK(spans[1].restored_at == std::vector<size_t>{4});
    CHECK(lg::audit::format_loss_spans(spans, rows).find("[expected: no NHWC kernel]") != std::string::npos);
  }
  SUBCASE("a source that is not an earlier row is refused") {
    const std::vector<Row> rows{row("conv2d", CL, {1}), row("relu", CL, {0})};
    CHECK_THROWS_WITH_AS(lg::audit::find_loss_spans(rows),
                         doctest::Contains("row 0 (conv2d) names source row 1; required: an earlier row"), lg::Error);
  }
  SUBCASE("spans from other rows are refused by the renderings") {
    const std::vector<Row> rows{row("conv2d", CL, {}), row("pad", NCHW, {0}, 100, true), row("conv2d", CL, {1})};
    const std::vector<LossSpan> spans = lg::audit::find_loss_spans(rows);
    const std::vector<Row> fewer(rows.begin(), rows.begin() + 2);
    CHECK_THROWS_WITH_AS(lg::audit::format_loss_spans(spans, fewer),
                         doctest::Contains("[audit::format_loss_spans] a span names row 2 of 2 rows"), lg::Error);
    CHECK_THROWS_WITH_AS(lg::audit::flow_json(fewer, spans), doctest::Contains("[audit::flow_json] a span names row 2"),
                         lg::Error);
  }
  SUBCASE("two losses reaching one row: it counts in the first span only") {
    const std::vector<Row> rows{row("conv2d", CL, {}), row("up", NCHW, {0}, 100, true), row("pad", NCHW, {0}, 100, true),
                                row("cat", NCHW, {1, 2}), row("conv2d", CL, {3})};
    const std::vector<LossSpan> spans = lg::audit::find_loss_spans(rows);
    REQUIRE(spans.size() == 2);
    CHECK(spans[0].nchw_ops == std::vector<size_t>{3});
    CHECK(spans[1].nchw_ops.empty());
    CHECK(spans[1].restored_at.empty());
  }
  SUBCASE("a lost row that ends the run with an ambiguous output: not an NCHW ending") {
    const std::vector<Row> rows{row("conv2d", CL, {}), row("mean", NEITHER, {0}, 100, true)};
    CHECK_FALSE(lg::audit::find_loss_spans(rows).at(0).ends_in_nchw);
  }
  SUBCASE("no loss, no span, no text") {
    const std::vector<Row> rows{row("conv2d", CL, {}), row("relu", CL, {0})};
    CHECK(lg::audit::find_loss_spans(rows).empty());
    CHECK(lg::audit::format_loss_spans({}, rows).empty());
  }
}

}  // TEST_SUITE

// FlowRecorder on live ops: rows, edges, conversion bytes, the loss span of an NCHW-only op,
// expected losses, throw mode, other threads, freed tensors, and a dot file it cannot write.
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include <layoutguard/audit.h>
#include <layoutguard/layoutguard.h>

#include "support/guard_testing.h"
#include "support/test_ops.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using lg::audit::FlowRecorder;
using lg::audit::Row;
using lg::guard::Mode;
using namespace lg::testing;

Tensor cl_input() { return lg::arange(2 * 8 * 6 * 6).to(lg::kFloat32).reshape({2, 8, 6, 6}).contiguous(MemoryFormat::ChannelsLast); }
Tensor cl_weight() { return lg::ones({8, 8, 3, 3}).contiguous(MemoryFormat::ChannelsLast); }

size_t index_of(const std::vector<Row>& rows, const std::string& op, size_t from = 0) {
  for (size_t i = from; i < rows.size(); ++i)
    if (rows[i].op == op) return i;
  FAIL("no row for " << op);
  return 0;
}

}  // namespace

TEST_SUITE("audit") {

TEST_CASE("FlowRecorder: an NCHW-only op's loss, the ops that ran on its output, and the conv that restored it") {
  CleanGuard clean;
  const Tensor x = cl_input(), w = cl_weight();
  FlowRecorder flow;
  const Tensor y0 = lg::conv2d(x, w, std::nullopt, {1, 1}, {1, 1});
  Tensor y1;
  {
    lg::guard::ModuleScope m("decoder");
    y1 = contiguous_only()({y0})[0];
  }
  const Tensor y2 = lg::relu(y1);
  const Tensor y3 = lg::add(y2, y1);
  const Tensor y4 = lg::conv2d(y3, w, std::nullopt, {1, 1}, {1, 1});
  CHECK(y4.is_contiguous(MemoryFormat::ChannelsLast));

  const std::vector<Row>& rows = flow.rows();
  const size_t conv0 = index_of(rows, "conv2d"), lost = index_of(rows, "test.contiguous_only"),
               relu = index_of(rows, "relu"), add = index_of(rows, "add"), conv1 = index_of(rows, "conv2d", conv0 + 1);
  CHECK(rows[lost].violation);
  CHECK(rows[lost].module == "decoder");
  CHECK(rows[lost].in == "NHWC");
  CHECK(rows[lost].out == "NCHW");
  CHECK(rows[lost].conversion_bytes == int64_t(y0.nbytes()));  // the dispatcher's fallback converted its input
  CHECK(rows[lost].sources == std::vector<size_t>{conv0});
  CHECK(rows[add].sources == std::vector<size_t>{relu, lost});
  CHECK(flow.violations() == 1);

  const std::vector<lg::audit::LossSpan> spans = flow.loss_spans();
  REQUIRE(spans.size() == 1);
  CHECK(spans[0].lost_at == lost);
  CHECK(spans[0].nchw_ops == std::vector<size_t>{relu, add});
  CHECK(spans[0].restored_at == std::vector<size_t>{conv1});
  CHECK(spans[0].nchw_output_bytes == int64_t(y1.nbytes() + y2.nbytes() + y3.nbytes()));
  const std::string text = flow.text();
  CHECK(text.find("!!") != std::string::npos);
  CHECK(text.find("lost at #" + std::to_string(lost) + " test.contiguous_only (decoder) !!: NHWC -> NCHW") !=
        std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(flow.json());
  CHECK(j["ops"].size() == rows.size());
  CHECK(j["loss_spans"][0]["restored_at"][0] == conv1);
}

TEST_CASE("FlowRecorder: convolutions with channels-last input and an NCHW weight are listed, not flagged") {
  CleanGuard clean;
  const Tensor x = cl_input(), w_cl = cl_weight(), w_cf = w_cl.contiguous();
  FlowRecorder flow;
  (void)lg::conv2d(x, w_cf, std::nullopt, {1, 1}, {1, 1});              // NHWC input, NCHW weight
  (void)lg::conv2d(x.contiguous(), w_cl, std::nullopt, {1, 1}, {1, 1});  // and the other way round
  (void)lg::conv2d(x, w_cl, std::nullopt, {1, 1}, {1, 1});              // both channels_last
  std::vector<size_t> convs;
  for (size_t i = 0; i < flow.rows().size(); ++i)
    if (flow.rows()[i].op == "conv2d") convs.push_back(i);
  REQUIRE(convs.size() == 3);
  const std::vector<Row>& rows = flow.rows();
  CHECK(rows[convs[0]].unconverted_weight);
  CHECK(rows[convs[0]].weight == "NCHW");
  CHECK_FALSE(rows[convs[1]].unconverted_weight);  // the input is the odd one: a loss span's business
  CHECK(rows[convs[1]].weight == "NHWC");
  CHECK_FALSE(rows[convs[2]].unconverted_weight);
  CHECK(flow.violations() == 0);
  const std::string text = lg::audit::format_unconverted_weights(rows);
  CHECK(text.rfind("1 convolution with channels_last input and a weight in another format", 0) == 0);
  CHECK(text.find("  #" + std::to_string(convs[0]) + " conv2d ((top)): input NHWC, weight NCHW\n") != std::string::npos);
  CHECK(flow.text().find(text) != std::string::npos);
  CHECK(nlohmann::json::parse(flow.json())["ops"][convs[0]]["unconverted_weight"] == true);
  CHECK(nlohmann::json::parse(flow.json())["ops"][convs[2]]["weight"] == "NHWC");
  CHECK(lg::audit::format_unconverted_weights({}).empty());
}

TEST_CASE("FlowRecorder: an expected loss is marked, not a violation, and keeps its span") {
  CleanGuard clean;
  const Tensor x = cl_input();
  FlowRecorder flow;
  Tensor y;
  {
    LG_EXPECT_LAYOUT_LOSS("NCHW-only test op", "test.contiguous_only");
    y = contiguous_only()({x})[0];
  }
  (void)lg::relu(y);
  const size_t lost = index_of(flow.rows(), "test.contiguous_only");
  CHECK_FALSE(flow.rows()[lost].violation);
  CHECK(flow.rows()[lost].expected_loss == "NCHW-only test op");
  CHECK(flow.violations() == 0);
  REQUIRE(flow.loss_spans().size() == 1);
  CHECK(flow.text().find("[expected: NCHW-only test op]") != std::string::npos);
  CHECK(flow.text().find("\nex") != std::string::npos);
}

TEST_CASE("FlowRecorder: under throw mode the raising op's row is already recorded") {
  CleanGuard clean;
  const Tensor x = cl_input();
  FlowRecorder flow;
  lg::guard::Scope scope(Mode::Throw);
  (void)lg::relu(x);
  CHECK_THROWS_AS(contiguous_only()({x}), lg::LayoutViolation);
  REQUIRE(!flow.rows().empty());
  CHECK(flow.rows().back().op == "test.contiguous_only");
  CHECK(flow.rows().back().violation);
}

TEST_CASE("FlowRecorder: another thread's ops are not its rows; a dead tensor is no edge") {
  CleanGuard clean;
  const Tensor x = cl_input();
  FlowRecorder flow;
  std::thread other([&] { (void)lg::relu(x); });
  other.join();
  CHECK(flow.rows().empty());

  (void)lg::relu(x);  // row 0 makes a tensor that dies at once
  const Tensor fresh = lg::empty({2, 8, 6, 6});  // made outside ops: no row made it
  (void)lg::sigmoid(fresh);
  const std::vector<size_t>& sources = flow.rows()[index_of(flow.rows(), "sigmoid")].sources;
  CHECK(std::find(sources.begin(), sources.end(), size_t{0}) == sources.end());
}

TEST_CASE("FlowRecorder: the conversions of a call that raised are not charged to the next row") {
  CleanGuard clean;
  static const lg::CustomOp converts_then_fails =
      lg::register_op("test.converts_then_fails", lg::LayoutPolicy::Preserve, [](const std::vector<Tensor>& in) {
        (void)in.at(0).contiguous();  // a conversion inside the op (depth 1)
        LG_CHECK(false, "[test.converts_then_fails] fails on purpose");
        return std::vector<Tensor>{in.at(0)};
      });
  const Tensor x = cl_input();
  FlowRecorder flow;
  CHECK_THROWS_AS(converts_then_fails({x}), lg::Error);
  (void)lg::relu(x);
  REQUIRE(flow.rows().size() == 1);  // the failed call made no row
  CHECK(flow.rows()[0].op == "relu");
  CHECK(flow.rows()[0].conversion_bytes == 0);
  // A copy_ the user calls is a row of its own, with its bytes.
  Tensor nchw = lg::empty({2, 8, 6, 6});
  nchw.copy_(x);
  REQUIRE(flow.rows().size() == 2);
  CHECK(flow.rows()[1].op == "copy_");
  CHECK(flow.rows()[1].conversion_bytes == int64_t(x.nbytes()));
}

TEST_CASE("FlowRecorder: write_dot names a path it cannot write; the graph has the edges") {
  CleanGuard clean;
  const Tensor x = cl_input();
  FlowRecorder flow;
  (void)lg::sigmoid(lg::relu(x));
  CHECK_THROWS_WITH_AS(flow.write_dot("/nonexistent-dir/flow.dot"),
                       doctest::Contains("[audit::FlowRecorder::write_dot] cannot write '/nonexistent-dir/flow.dot'"),
                       lg::ValueError);
  const std::string dot = lg::audit::flow_dot(flow.rows(), "a \"quoted\" title");
  CHECK(dot.find("label=\"a \\\"quoted\\\" title\"") != std::string::npos);
  CHECK(dot.find("n0 -> n1;") != std::string::npos);
}

}  // TEST_SUITE

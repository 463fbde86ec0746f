// The layout flow of a run, for your own model: what `layoutguard audit` prints for the
// built-in ones. A FlowRecorder keeps one row per user-level (depth-0) op call of its thread
// -- op, module path, input and output format, kernel, bytes converted inside the call,
// whether it lost channels_last -- with the data-flow edges between rows, and reads loss spans
// from them: the op that lost channels_last, the ops that then ran on NCHW data, and where the
// layout came back.
//
//   lg::audit::FlowRecorder flow;
//   const lg::Tensor y = model(x);
//   std::cout << flow.text();        // the table, then the loss spans
//   if (flow.violations() > 0) ...   // or flow.loss_spans(), flow.json(), flow.write_dot(path)
//
// It works in any guard mode: it checks each call itself with the guard's options (allow=,
// suppressions=, min_bytes=, ...). Under LAYOUTGUARD=throw the first loss still raises; when the
// op that raised is a user-level call, its row is already recorded, so a catch handler can
// print the flow up to it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <layoutguard/guard.h>
#include <layoutguard/hooks.h>

namespace lg::audit {

// What a row's main output (its first 4-D/5-D output) is, for following a lost layout.
enum class OutputKind {
  ChannelsLast,  // suggests channels_last(_3d), not ambiguous
  Nchw,          // 4-D/5-D in any other order: what runs after a loss
  Neither,       // another rank, ambiguous (C == 1, H == W == 1), or no output
};

struct Row {
  std::string op, module, in, out, kernel;  // in/out: NHWC, NCHW, NDHWC, NCDHW, NHWC=NCHW, a format name, "2-D"
  std::string weight = "-";      // a convolution's weight format, in the same words; "-" for other ops
  bool unconverted_weight = false;  // a convolution with channels-last input and a weight in another format
  OutputKind out_kind = OutputKind::Neither;
  int64_t out_bytes = 0;         // bytes of the main output
  int64_t conversion_bytes = 0;  // layout conversions (copy_ between dim orders) inside the call
  bool violation = false;
  std::string expected_loss;     // the reason, when an ExpectedLoss scope took this call's loss
  std::vector<size_t> sources;   // rows whose outputs this call read
};

// One lost layout, followed through the data flow: the row that lost channels_last, the rows
// that then ran on its NCHW output (and on theirs), and the rows where that flow ended.
struct LossSpan {
  size_t lost_at = 0;
  std::vector<size_t> nchw_ops;     // in run order
  std::vector<size_t> restored_at;  // consumers with a channels-last output (usually a conv)
  std::vector<size_t> left_at;      // consumers whose output is not 4-D/5-D (flatten, a pooled vector)
  bool ends_in_nchw = false;        // the run's last row is in the span: the output is NCHW
  int64_t nchw_output_bytes = 0;    // bytes of the NCHW outputs in the span, the lost row's included
  int64_t conversion_bytes = 0;     // converted in the lost row, the NCHW rows and the restoring rows
};

// A span per row with a violation or an expected loss, in run order. A row already inside an
// earlier span is counted there only (a violation there opens no span; a row two losses reach
// belongs to the first). Rows' sources must name earlier rows (lg::Error if not).
// The renderings check that the spans' row numbers exist in `rows` (lg::Error if not).
std::vector<LossSpan> find_loss_spans(const std::vector<Row>& rows);

// Renderings: the per-op table (`!!` marks a violation, `ex` an expected loss), the spans as
// text ("" when there are none), the convolutions with an unconverted weight ("" when none), rows and spans as JSON ({"ops": [...], "loss_spans": [...]}), and a
// Graphviz digraph of the flow.
std::string format_table(const std::vector<Row>& rows);
std::string format_loss_spans(const std::vector<LossSpan>& spans, const std::vector<Row>& rows);
std::string format_unconverted_weights(const std::vector<Row>& rows);
std::string flow_json(const std::vector<Row>& rows, const std::vector<LossSpan>& spans);
std::string flow_dot(const std::vector<Row>& rows, const std::string& title);

// RAII: records the calling thread's depth-0 op calls while it lives (a hook; calls on other
// threads are not recorded). Read it on its own thread, or after the run.
class FlowRecorder {
 public:
  // on_row, if given, is called with each new row (a progress display).
  explicit FlowRecorder(std::function<void(const Row&)> on_row = {});
  ~FlowRecorder();
  FlowRecorder(const FlowRecorder&) = delete;
  FlowRecorder& operator=(const FlowRecorder&) = delete;

  const std::vector<Row>& rows() const;
  int64_t violations() const;  // rows with a violation
  std::vector<LossSpan> loss_spans() const;
  std::string text() const;    // format_table, format_loss_spans, format_unconverted_weights
  std::string json() const;    // flow_json
  // Writes flow_dot to path, replacing a file there only once written whole; lg::ValueError
  // naming the path when it cannot be written.
  void write_dot(const std::string& path, const std::string& title = "layout flow") const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the hook
  hooks::Handle handle_;
};

}  // namespace lg::audit

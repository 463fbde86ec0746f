// The audit's record of one run: a row per user-level (depth-0) op call, with the data-flow
// edges between rows, and the loss spans read from them. Internal to the layoutguard tool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lg::tools {

// What a row's main output (its first 4-D/5-D output) is, for following a lost layout.
enum class OutputKind {
  ChannelsLast,  // suggests channels_last(_3d), not ambiguous
  Nchw,          // 4-D/5-D in any other order: what runs after a loss
  Neither,       // another rank, ambiguous (C == 1, H == W == 1), or no output
};

struct AuditRow {
  std::string op, module, in, out, kernel;
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
// earlier span is counted there only.
std::vector<LossSpan> find_loss_spans(const std::vector<AuditRow>& rows);

// The spans as text for the audit's output ("" when there are none), and as JSON.
std::string format_loss_spans(const std::vector<LossSpan>& spans, const std::vector<AuditRow>& rows);
nlohmann::json loss_spans_json(const std::vector<LossSpan>& spans, const std::vector<AuditRow>& rows);

// 1.5 MiB, 12.0 KiB, 512 B.
std::string human_bytes(int64_t bytes);

}  // namespace lg::tools

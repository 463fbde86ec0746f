// Loss spans: from each row that lost channels_last, the data flow forward through every row
// that ran on NCHW data, up to the rows that gave channels_last back (or left 4-D/5-D).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "loss_spans.h"

namespace lg::tools {

std::string human_bytes(int64_t b) {
  char buf[32];
  if (b >= (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / double(1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", double(b) / 1024.0);
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

std::vector<LossSpan> find_loss_spans(const std::vector<AuditRow>& rows) {
  // Rows read what earlier rows wrote, so consumers always come later in the run.
  std::vector<std::vector<size_t>> consumers(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t s : rows[i].sources)
      if (s < i && (consumers[s].empty() || consumers[s].back() != i)) consumers[s].push_back(i);

  std::vector<LossSpan> spans;
  std::vector<bool> in_span(rows.size(), false);
  for (size_t lost = 0; lost < rows.size(); ++lost) {
    const AuditRow& start = rows[lost];
    if ((!start.violation && start.expected_loss.empty()) || in_span[lost]) continue;
    LossSpan span;
    span.lost_at = lost;
    span.conversion_bytes = start.conversion_bytes;
    if (start.out_kind == OutputKind::Nchw) span.nchw_output_bytes = start.out_bytes;
    in_span[lost] = true;
    // Breadth-first over consumers; a row reached twice (a residual add reads two span rows)
    // is counted once.
    std::vector<size_t> frontier{lost};
    std::vector<bool> seen(rows.size(), false);
    seen[lost] = true;
    while (!frontier.empty()) {
      std::vector<size_t> next;
      for (size_t r : frontier) {
        for (size_t c : consumers[r]) {
          if (seen[c]) continue;
          seen[c] = true;
          const AuditRow& row = rows[c];
          span.conversion_bytes += row.conversion_bytes;
          if (row.out_kind == OutputKind::Nchw) {
            span.nchw_ops.push_back(c);
            span.nchw_output_bytes += row.out_bytes;
            in_span[c] = true;
            next.push_back(c);
          } else if (row.out_kind == OutputKind::ChannelsLast) {
            span.restored_at.push_back(c);
          } else {
            span.left_at.push_back(c);
          }
        }
      }
      frontier = std::move(next);
    }
    std::sort(span.nchw_ops.begin(), span.nchw_ops.end());
    std::sort(span.restored_at.begin(), span.restored_at.end());
    std::sort(span.left_at.begin(), span.left_at.end());
    span.ends_in_nchw = lost == rows.size() - 1 || (!span.nchw_ops.empty() && span.nchw_ops.back() == rows.size() - 1);
    spans.push_back(std::move(span));
  }
  return spans;
}

namespace {

std::string row_label(const std::vector<AuditRow>& rows, size_t i) {
  const AuditRow& r = rows[i];
  return "#" + std::to_string(i) + " " + r.op + (r.module.empty() ? "" : " (" + r.module + ")") +
         (r.violation ? " !!" : "");
}

// "#3 add (m), #4 relu (m)" -- the first `limit` rows, then how many more.
std::string row_list(const std::vector<AuditRow>& rows, const std::vector<size_t>& ids, size_t limit) {
  std::string out;
  for (size_t k = 0; k < ids.size() && k < limit; ++k) out += (k ? ", " : "") + row_label(rows, ids[k]);
  if (ids.size() > limit) out += ", ... " + std::to_string(ids.size() - limit) + " more";
  return out;
}

}  // namespace

std::string format_loss_spans(const std::vector<LossSpan>& spans, const std::vector<AuditRow>& rows) {
  if (spans.empty()) return "";
  std::ostringstream s;
  s << "loss spans: where channels_last was lost, what then ran in NCHW, where it came back\n";
  for (const LossSpan& span : spans) {
    const AuditRow& lost = rows[span.lost_at];
    s << "\n  lost at " << row_label(rows, span.lost_at) << ": " << lost.in << " -> " << lost.out;
    if (lost.conversion_bytes) s << ", converted " << human_bytes(lost.conversion_bytes);
    if (!lost.expected_loss.empty()) s << " [expected: " << lost.expected_loss << "]";
    s << "\n    ran in NCHW: ";
    if (span.nchw_ops.empty()) s << "no op";
    else s << span.nchw_ops.size() << " op" << (span.nchw_ops.size() == 1 ? "" : "s") << ": " << row_list(rows, span.nchw_ops, 6);
    s << "; " << human_bytes(span.nchw_output_bytes) << " of NCHW outputs\n";
    for (size_t r : span.restored_at) {
      s << "    restored at " << row_label(rows, r) << ": " << rows[r].in << " -> " << rows[r].out;
      if (rows[r].conversion_bytes) s << ", converted " << human_bytes(rows[r].conversion_bytes);
      s << "\n";
    }
    if (!span.left_at.empty()) s << "    left 4-D/5-D at " << row_list(rows, span.left_at, 4) << "\n";
    if (span.ends_in_nchw) s << "    the run's output is NCHW: the layout never came back\n";
    else if (span.restored_at.empty() && span.left_at.empty()) s << "    nothing read the NCHW data further\n";
    s << "    converted in the span: " << human_bytes(span.conversion_bytes) << "\n";
  }
  return s.str();
}

nlohmann::json loss_spans_json(const std::vector<LossSpan>& spans, const std::vector<AuditRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const LossSpan& span : spans) {
    const AuditRow& lost = rows[span.lost_at];
    out.push_back({{"lost_at", span.lost_at},
                   {"op", lost.op},
                   {"module", lost.module},
                   {"expected_loss", lost.expected_loss},
                   {"nchw_ops", span.nchw_ops},
                   {"restored_at", span.restored_at},
                   {"left_at", span.left_at},
                   {"ends_in_nchw", span.ends_in_nchw},
                   {"nchw_output_bytes", span.nchw_output_bytes},
                   {"conversion_bytes", span.conversion_bytes}});
  }
  return out;
}

}  // namespace lg::tools

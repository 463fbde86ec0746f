// Loss spans: from each row that lost channels_last, the data flow forward through every row
// that ran on NCHW data, up to the rows that gave channels_last back (or left 4-D/5-D).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include <layoutguard/audit.h>
#include <layoutguard/error.h>

#include "audit/span_rows.h"

namespace lg::audit {

using guard::human_bytes;

std::vector<LossSpan> find_loss_spans(const std::vector<Row>& rows) {
  // Rows read what earlier rows wrote, so consumers always come later in the run.
  std::vector<std::vector<size_t>> consumers(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t s : rows[i].sources) {
      LG_CHECK(s < i, "[audit::find_loss_spans] row ", i, " (", rows[i].op, ") names source row ", s,
               "; required: an earlier row (< ", i, ")");
      if (consumers[s].empty() || consumers[s].back() != i) consumers[s].push_back(i);
    }

  std::vector<LossSpan> spans;
  std::vector<bool> in_span(rows.size(), false);
  for (size_t lost = 0; lost < rows.size(); ++lost) {
    const Row& start = rows[lost];
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
          if (seen[c] || in_span[c]) continue;  // a row two losses reach counts in the first span
          seen[c] = true;
          const Row& row = rows[c];
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
    span.ends_in_nchw = (lost == rows.size() - 1 && start.out_kind == OutputKind::Nchw) ||
                        (!span.nchw_ops.empty() && span.nchw_ops.back() == rows.size() - 1);
    spans.push_back(std::move(span));
  }
  return spans;
}

namespace {

std::string row_label(const std::vector<Row>& rows, size_t i) {
  const Row& r = rows[i];
  return "#" + std::to_string(i) + " " + r.op + (r.module.empty() ? "" : " (" + r.module + ")") +
         (r.violation ? " !!" : "");
}

// "#3 add (m), #4 relu (m)" -- the first `limit` rows, then how many more.
std::string row_list(const std::vector<Row>& rows, const std::vector<size_t>& ids, size_t limit) {
  std::string out;
  for (size_t k = 0; k < ids.size() && k < limit; ++k) out += (k ? ", " : "") + row_label(rows, ids[k]);
  if (ids.size() > limit) out += ", ... " + std::to_string(ids.size() - limit) + " more";
  return out;
}

}  // namespace

void detail::check_span_rows(const std::vector<LossSpan>& spans, const std::vector<Row>& rows, const char* who) {
  for (const LossSpan& span : spans) {
    size_t last = span.lost_at;
    for (const std::vector<size_t>* list : {&span.nchw_ops, &span.restored_at, &span.left_at})
      for (size_t i : *list) last = std::max(last, i);
    LG_CHECK(last < rows.size(), "[audit::", who, "] a span names row ", last, " of ", rows.size(),
             " rows; required: spans found in these rows (find_loss_spans)");
  }
}

std::string format_loss_spans(const std::vector<LossSpan>& spans, const std::vector<Row>& rows) {
  detail::check_span_rows(spans, rows, "format_loss_spans");
  if (spans.empty()) return "";
  std::ostringstream s;
  s << "loss spans: where channels_last was lost, what then ran in NCHW, where it came back\n";
  for (const LossSpan& span : spans) {
    const Row& lost = rows[span.lost_at];
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

}  // namespace lg::audit

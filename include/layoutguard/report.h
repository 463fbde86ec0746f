// What the guard collected in warn and record mode: distinct violations with repeat counts,
// layout conversions (bytes moved between formats), and per-op call counts. The same data
// feeds the exit summary (summary=1) and the JSON report (report=FILE).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <layoutguard/violation.h>

namespace lg::guard {

// One distinct violation: (op, module, input formats, output formats), first occurrence kept.
struct ViolationRecord {
  ViolationInfo first;  // backtrace of the first occurrence when backtrace=1
  int64_t count = 0;
};

// Copies that changed the dim order (e.g. NHWC -> NCHW), grouped by the user-level op that
// caused them (the depth-0 op: `to`, `contiguous`, or a custom op's layout fallback).
struct ConversionRecord {
  std::string op;
  std::string module_path;
  std::string from, to;  // format names
  int64_t count = 0;
  int64_t bytes = 0;     // bytes written
};

// Losses that an ExpectedLoss scope (guard.h) took, grouped by (reason, op, module).
struct ExpectedLossRecord {
  std::string reason;
  std::string op;
  std::string module_path;
  int64_t count = 0;
};

// ExpectedLoss scopes that ended without taking a loss, grouped by (reason, op filter).
struct UnusedExpectation {
  std::string reason;
  std::string op;       // the scope's op filter; empty: any op
  int64_t scopes = 0;   // how many such scopes ended unused
};

// A line of the suppressions file in force when the report was made, and how many losses it
// silenced (with repeats). 0 means no loss matched it in this run: the loss is gone, or the
// line names the wrong op or module; shorten the file.
struct SuppressionUse {
  std::string op;
  std::string module_glob;  // as written: empty (every module), a glob, or (top)
  std::string frame_glob;   // the call site after '@'; empty: any
  std::string signature_glob;  // the operand layouts in [...] after the op; empty: any
  int64_t suppressed = 0;
};

// An op that ran on the NCHW data of a loss, or where that data went, at one module.
struct SpanStep {
  std::string op;
  std::string module_path;
  int64_t count = 0;  // calls, summed over every loss of the span's site
};

// Where the data of one lost site went (spans=1; FlowRecorder's loss spans, summed over the
// run): the depth-0 op that lost channels_last, then every depth-0 op that ran on its NCHW
// output (and on theirs), the ops that gave channels_last back (usually the next conv), and
// those whose output left 4-D/5-D. A loop repeats its span each step; the counts say how
// often. A call reading data of two losses counts in the first one's span.
struct LossSpanRecord {
  std::string op;
  std::string module_path;
  std::string expected_loss;         // the ExpectedLoss reason; "" for a violation
  int64_t losses = 0;                // times this site lost the format
  std::vector<SpanStep> nchw_ops;    // in order of first appearance
  std::vector<SpanStep> restored_at;
  std::vector<SpanStep> left_at;
  int64_t steps_not_listed = 0;      // calls beyond the 64 distinct steps a list keeps
  int64_t nchw_output_bytes = 0;     // NCHW outputs of the site and its nchw_ops, all losses
  int64_t conversion_bytes = 0;      // converted inside the site, its nchw_ops and restored_at calls
};

// Convolutions that ran with a channels-last input and a weight in another format, by (op,
// module). No violation (the output follows the input), but the weight conversion was
// missed (convert_conv2d_weight_memory_format, Module::to(channels_last)): the CUDA path
// converts such a weight on every call. 1x1 weights are both formats and never count.
struct UnconvertedWeightRecord {
  std::string op;
  std::string module_path;
  std::string weight_format;  // format name of the first such call's weight
  int64_t count = 0;          // calls
  int64_t weight_bytes = 0;   // one weight's bytes
};

struct OpStats {
  std::string op;
  int64_t calls = 0;       // checked calls (all depths)
  int64_t violations = 0;
  int64_t conversions = 0;  // as the depth-0 op of a ConversionRecord
  int64_t conversion_bytes = 0;
};

struct Report {
  std::vector<ViolationRecord> violations;  // in order of first occurrence
  std::vector<ConversionRecord> conversions;  // most bytes first
  std::vector<OpStats> ops;                 // most conversion bytes first, then most calls
  std::vector<ExpectedLossRecord> expected_losses;  // in order of first occurrence
  std::vector<UnusedExpectation> unused_expectations;
  std::vector<SuppressionUse> suppressions;  // in file order; empty without suppressions=
  std::vector<LossSpanRecord> loss_spans;    // in order of first loss; empty with spans=0
  std::vector<UnconvertedWeightRecord> unconverted_weights;  // in order of first call
  // allow= entries that name no op checked in this run, in the option's order: a misspelt name
  // silences nothing. Empty while no call was counted (throw and off modes count none).
  std::vector<std::string> unmatched_allow;
  int64_t span_sites_not_followed = 0;       // losses at sites beyond the 256 followed ones
  int64_t checked_calls = 0;
  int64_t violation_count() const;   // with repeats
  int64_t conversion_bytes() const;
};

// A copy of what was collected so far (all threads).
Report report();
// Forgets everything collected (tests; between phases of a program).
void clear_report();
// The JSON report text (what report=FILE writes at exit).
std::string report_json(const Report& r);
// A suppressions line as written in the file: op[[signature-glob]][:module-glob][@function-glob].
std::string suppression_line(const SuppressionUse& use);
// 1.5 MiB, 12.0 KiB, 512 B: how the summary, the audit and its spans print byte counts.
std::string human_bytes(int64_t bytes);
// The suppressions line that silences `v` where it happened: op:module inside a module, else
// op:(top)@call_site, or op:(top) when the call site is unknown. '*' and '#' in a module path
// or function name are written as '?', which matches them (globs have no escape; '#' would
// start a comment).
std::string suppression_line_for(const ViolationInfo& v);
// The same line narrowed to the loss's operand layouts, op[signature]:... (v.signature): it
// silences this loss there and leaves a loss of other layouts at the same place reported.
std::string signature_suppression_line_for(const ViolationInfo& v);
// The run as a suppressions file's lines, sorted: one per distinct violation -- op:module, or
// for a call outside every module op:(top)@function when its call site is known (else
// op:(top)) -- and every line of the file in force that silenced a loss. Fed back as
// suppressions=FILE, today's losses stay quiet and a new one is reported; lines that silenced
// nothing are left out, so rewriting the file from its own run drops them (a ratchet). '*'
// and '?' inside a module path or function name become '?', which matches them.
std::vector<std::string> baseline_lines(const Report& r);
// Writes baseline_lines(report()) to path under a comment naming `written_by`, replacing an old
// baseline only once written whole; lg::ValueError naming the path if it cannot be written.
// Returns the number of lines.
size_t write_baseline(const std::string& path, const std::string& written_by);
// The human summary table (what summary=1 prints to stderr at exit).
std::string summary_text(const Report& r);
// Writes report_json(report()) to path, replacing an old report only once written whole;
// lg::ValueError naming the path if it cannot be written.
void write_report(const std::string& path);

}  // namespace lg::guard

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
  int64_t suppressed = 0;
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
// A suppressions line as written in the file: op[:module-glob][@function-glob].
std::string suppression_line(const SuppressionUse& use);
// 1.5 MiB, 12.0 KiB, 512 B: how the summary, the audit and its spans print byte counts.
std::string human_bytes(int64_t bytes);
// The human summary table (what summary=1 prints to stderr at exit).
std::string summary_text(const Report& r);
// Writes report_json(report()) to path; lg::Error naming the path if it cannot be written.
void write_report(const std::string& path);

}  // namespace lg::guard

// The guard's collected events (warn and record mode), shared by all threads behind one mutex.
// Internal to src/guard.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <layoutguard/guard.h>
#include <layoutguard/report.h>

namespace lg::guard::detail {

// Counts one checked call of op `op_index` (dense index, see dispatch::OpInfo).
void record_call(uint32_t op_index, std::string_view op);
// Counts `n` checked calls at once (a foreign op's counts, gathered outside the store).
void record_calls(uint32_t op_index, std::string_view op, int64_t n);

// A source of call counts kept outside the store, where a mutex per call would cost too much
// (the PyTorch bridge counts each ATen op with a relaxed atomic): report() and clear_report()
// call it first, and it hands its pending counts to record_calls. At most one.
void set_call_count_flush(void (*flush)());

// Adds `bytes` converted from one format to another on behalf of depth-0 op `op`.
void record_conversion(std::string_view op, std::string_view module_path, std::string from,
                       std::string to, int64_t bytes);

// Counts a violation under its dedup key; `describe` builds the facts, called only for the
// first occurrence of the key. Returns the number of distinct violations seen so far when this
// one is new, 0 when it repeats an earlier one.
int64_t record_violation(const std::string& key, uint32_t op_index,
                         const std::function<ViolationInfo()>& describe);

// Counts a loss that an ExpectedLoss scope took, and a scope that ended without taking one.
void record_expected_loss(std::string_view reason, std::string_view op, std::string_view module_path);
void record_unused_expectation(std::string_view reason, std::string_view op);

// Counts a convolution call whose channels-last input met a weight of another format.
void record_unconverted_weight(std::string_view op, std::string_view module_path, const Tensor& weight);

// Counts a loss that a suppressions line silenced.
void record_suppressed(const Suppression& line);

// The bytes of a list of conversions (the report's ledger, a ConversionTally's).
int64_t conversion_bytes(const std::vector<ConversionRecord>& records);

// Makes sure the exit handler (summary=1 table, report=FILE) is registered, and notes that this
// process collects: one that never did writes no files at exit.
void ensure_exit_handler();

// Clears the records and forgets that any were collected, for a process forked from one that
// collected but whose records are not its own (a forkserver's child): it writes files at exit
// only once it collects itself.
void start_collecting_afresh();

// What the exit handler does -- the report, the baseline, the summary -- done now and at most
// once per process: the handler does nothing after it, and neither does this where nothing
// was collected. For processes that end without running exit handlers (a multiprocessing
// forkserver's children end in _exit).
void finish_process();

}  // namespace lg::guard::detail

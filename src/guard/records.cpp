// The store behind warn/record mode and lg::guard::report(); the exit handler.
#include "guard/records.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <set>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include <unistd.h>

#include <layoutguard/error.h>
#include <layoutguard/guard.h>
#include <layoutguard/layout.h>

#include "guard/inherited_files.h"
#include "guard/runtime.h"
#include "guard/spans.h"

namespace lg::guard {
namespace detail {
namespace {

using ConversionKey = std::tuple<std::string, std::string, std::string, std::string>;

struct Store {
  std::mutex mutex;
  int64_t checked_calls = 0;
  std::vector<OpStats> ops;  // indexed by dense op index; unnamed slots are unused
  std::vector<OpStats> foreign_ops;  // indexed by a foreign op index less kForeignOpBit
  std::unordered_map<std::string, uint32_t> foreign_index;  // name -> foreign op index
  std::vector<ViolationRecord> violations;
  std::unordered_map<std::string, size_t> violation_index;  // dedup key -> violations[i]
  std::map<ConversionKey, ConversionRecord> conversions;
  std::vector<ExpectedLossRecord> expected_losses;  // few: found by a linear search
  std::vector<UnusedExpectation> unused_expectations;
  std::vector<UnconvertedWeightRecord> unconverted_weights;
  std::map<std::pair<std::string, std::string>, size_t> unconverted_index;  // (op, module) -> [i]
  std::map<std::tuple<std::string, std::string, std::string, std::string>, int64_t> suppressed;  // line -> losses
};

Store& store() {
  static Store& s = *new Store;  // never destroyed: ops in static destructors still record
  return s;
}

// Foreign ops (the PyTorch bridge's ATen ops) are numbered in a range of their own, so that
// thousands of them never collide with, or stretch, the built-in and custom ops' table.
constexpr uint32_t kForeignOpBit = 1u << 31;

OpStats& stats_locked(Store& s, uint32_t op_index, std::string_view op) {
  std::vector<OpStats>& table = (op_index & kForeignOpBit) ? s.foreign_ops : s.ops;
  op_index &= ~kForeignOpBit;
  if (table.size() <= op_index) table.resize(op_index + 1);
  OpStats& st = table[op_index];
  if (st.op.empty()) st.op = op;
  return st;
}

// Set by ensure_exit_handler: a process that never collected anything writes no files, also
// where it finishes without the exit handler.
std::atomic<bool> g_collecting{false};

}  // namespace

void finish_process() {
  if (!g_collecting.load(std::memory_order_acquire)) return;
  static std::atomic<bool> finished{false};
  if (finished.exchange(true)) return;
  if (in_forked_child()) return;  // all its files are the parent's, and its summary would repeat the parent's records
  // The settings in force at exit decide; a broken environment has already been reported.
  Options o;
  try {
    o = guard::options();
  } catch (const Error&) {
    return;
  }
  const Report r = report();
  // A spawned child's paths that came out as its parent's are the parent's to write.
  if (!o.report_path.empty() && !parents_file(o.report_path)) {
    try {
      write_report(o.report_path);
    } catch (const std::exception& e) {  // at exit, or from a finishing child: nothing may escape
      std::fprintf(stderr, "%s\n", e.what());
    }
  }
  if (!o.write_suppressions_path.empty() && !parents_file(o.write_suppressions_path)) {
    try {
      const size_t n = write_baseline(o.write_suppressions_path, "LAYOUTGUARD_OPTIONS=write_suppressions= at exit");
      std::fprintf(stderr, "[layoutguard] wrote %zu suppressions line%s to %s\n", n, n == 1 ? "" : "s",
                   o.write_suppressions_path.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
    }
  }
  if (o.summary && (r.checked_calls > 0 || !r.violations.empty())) {
    // Several processes' summaries may share one terminal: a spawned child's says whose it is,
    // in the same write as the table (stderr is unbuffered: two calls, two writes, and another
    // process's lines could land between the heading and its table).
    std::string text;
    if (const pid_t parent = spawning_parent())
      text = ::lg::detail::str("[layoutguard] process ", static_cast<long long>(getpid()),
                               ", started by process ", static_cast<long long>(parent), ":\n");
    text += summary_text(r);
    std::fputs(text.c_str(), stderr);
  }
}

namespace {
std::terminate_handler g_outer_terminate = nullptr;

// An exception that leaves main (or a noexcept function, or a thread) ends the process without
// exit handlers: the files and the summary come first, then the handler that was in place
// (the C++ runtime's prints the exception and aborts).
[[noreturn]] void finish_then_terminate() {
  try {
    finish_process();
  } catch (...) {
    // ending anyway
  }
  if (g_outer_terminate != nullptr) g_outer_terminate();
  std::abort();
}
}  // namespace

void ensure_exit_handler() {
  // The flag, not the once-flag, says whether this process collects: a forked child inherits
  // both set, and start_collecting_afresh() clears the flag alone.
  if (g_collecting.load(std::memory_order_acquire)) return;
  static std::once_flag once;
  std::call_once(once, [] {
    // Construct what the handler reads before registering it: handlers run before the
    // destructors of statics constructed earlier, never after.
    (void)store();
    (void)guard::options();
    std::atexit(finish_process);
    std::at_quick_exit(finish_process);
    g_outer_terminate = std::set_terminate(&finish_then_terminate);
    watch_forks();
  });
  g_collecting.store(true, std::memory_order_release);
}

void start_collecting_afresh() {
  // The handler, registered by the process this one was forked from, stays; it finds nothing
  // to do until this process collects.
  g_collecting.store(false, std::memory_order_release);
  clear_report();
}

uint32_t foreign_op_index(std::string_view name) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  const uint32_t next = kForeignOpBit | static_cast<uint32_t>(s.foreign_index.size());
  return s.foreign_index.emplace(std::string(name), next).first->second;
}

void record_call(uint32_t op_index, std::string_view op) { record_calls(op_index, op, 1); }

void record_calls(uint32_t op_index, std::string_view op, int64_t n) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  s.checked_calls += n;
  stats_locked(s, op_index, op).calls += n;
}

namespace {
std::atomic<void (*)()> g_call_count_flush{nullptr};

void flush_call_counts() {
  if (void (*flush)() = g_call_count_flush.load(std::memory_order_acquire)) flush();
}
}  // namespace

void set_call_count_flush(void (*flush)()) { g_call_count_flush.store(flush, std::memory_order_release); }

void record_conversion(std::string_view op, std::string_view module_path, std::string from,
                       std::string to, int64_t bytes) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  ConversionKey key{std::string(op), std::string(module_path), from, to};
  ConversionRecord& c = s.conversions[key];
  if (c.count == 0) {
    c.op = op;
    c.module_path = module_path;
    c.from = std::move(from);
    c.to = std::move(to);
  }
  ++c.count;
  c.bytes += bytes;
}

int64_t record_violation(const std::string& key, uint32_t op_index,
                         const std::function<ViolationInfo()>& describe) {
  Store& s = store();
  {
    std::lock_guard lock(s.mutex);
    if (auto it = s.violation_index.find(key); it != s.violation_index.end()) {
      ++s.violations[it->second].count;
      ++stats_locked(s, op_index, s.violations[it->second].first.op).violations;
      return 0;
    }
  }
  // Describing (with a symbolised stack trace) takes milliseconds: do it outside the lock.
  ViolationInfo info = describe();
  std::lock_guard lock(s.mutex);
  auto [it, fresh] = s.violation_index.emplace(key, s.violations.size());
  if (fresh) s.violations.push_back({std::move(info), 0});
  ++s.violations[it->second].count;
  ++stats_locked(s, op_index, s.violations[it->second].first.op).violations;
  return fresh ? static_cast<int64_t>(s.violations.size()) : 0;
}

void record_expected_loss(std::string_view reason, std::string_view op, std::string_view module_path) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  for (ExpectedLossRecord& e : s.expected_losses)
    if (e.reason == reason && e.op == op && e.module_path == module_path) {
      ++e.count;
      return;
    }
  s.expected_losses.push_back({std::string(reason), std::string(op), std::string(module_path), 1});
}

void record_unconverted_weight(std::string_view op, std::string_view module_path, const Tensor& weight) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  auto [it, fresh] = s.unconverted_index.emplace(std::make_pair(std::string(op), std::string(module_path)),
                                                 s.unconverted_weights.size());
  if (fresh)
    s.unconverted_weights.push_back({std::string(op), std::string(module_path),
                                     layout::format_name(weight.sizes(), weight.strides()), 0,
                                     static_cast<int64_t>(weight.nbytes())});
  ++s.unconverted_weights[it->second].count;
}

void record_unused_expectation(std::string_view reason, std::string_view op) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  for (UnusedExpectation& u : s.unused_expectations)
    if (u.reason == reason && u.op == op) {
      ++u.scopes;
      return;
    }
  s.unused_expectations.push_back({std::string(reason), std::string(op), 1});
}

void record_suppressed(const Suppression& line) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  ++s.suppressed[{line.op, line.module_glob, line.frame_glob, line.signature_glob}];
}

int64_t conversion_bytes(const std::vector<ConversionRecord>& records) {
  int64_t n = 0;
  for (const ConversionRecord& c : records) n += c.bytes;
  return n;
}

}  // namespace detail

int64_t Report::violation_count() const {
  int64_t n = 0;
  for (const ViolationRecord& v : violations) n += v.count;
  return n;
}

int64_t Report::conversion_bytes() const { return detail::conversion_bytes(conversions); }

Report report() {
  detail::flush_call_counts();
  detail::Store& s = detail::store();
  Report r;
  // The lines in force now, each with its count; a broken environment has no lines to list.
  std::vector<Suppression> lines;
  std::vector<std::string> allow;
  try {
    const Options o = options();
    lines = o.suppressions;
    allow = o.allow;
  } catch (const Error&) {
  }
  {
    std::lock_guard lock(s.mutex);
    r.checked_calls = s.checked_calls;
    r.violations = s.violations;
    r.expected_losses = s.expected_losses;
    r.unused_expectations = s.unused_expectations;
    r.unconverted_weights = s.unconverted_weights;
    // A line repeated in the file never matches: the first copy takes every loss.
    std::set<std::tuple<std::string, std::string, std::string, std::string>> listed;
    for (const Suppression& line : lines) {
      const auto key = std::make_tuple(line.op, line.module_glob, line.frame_glob, line.signature_glob);
      const auto it = s.suppressed.find(key);
      const bool first = listed.insert(key).second;
      r.suppressions.push_back({line.op, line.module_glob, line.frame_glob, line.signature_glob,
                                first && it != s.suppressed.end() ? it->second : 0});
    }
    for (const std::vector<OpStats>* table : {&s.ops, &s.foreign_ops})
      for (const OpStats& st : *table)
        if (!st.op.empty()) r.ops.push_back(st);
    // Conversions are charged to their depth-0 op here: that op's own call is counted only
    // after the copies inside it were reported.
    for (const auto& entry : s.conversions) {
      const auto& c = entry.second;
      r.conversions.push_back(c);
      auto st = std::find_if(r.ops.begin(), r.ops.end(), [&](const OpStats& o) { return o.op == c.op; });
      if (st == r.ops.end()) st = r.ops.insert(r.ops.end(), OpStats{c.op});
      st->conversions += c.count;
      st->conversion_bytes += c.bytes;
    }
  }
  const auto checked = [&](const OpStats& st) { return st.calls > 0; };
  if (std::any_of(r.ops.begin(), r.ops.end(), checked))
    for (const std::string& name : allow) {
      const bool named = std::any_of(r.ops.begin(), r.ops.end(), [&](const OpStats& st) {
        return checked(st) && allow_names(name, st.op);
      });
      if (!named && std::find(r.unmatched_allow.begin(), r.unmatched_allow.end(), name) == r.unmatched_allow.end())
        r.unmatched_allow.push_back(name);
    }
  r.loss_spans = detail::span_records(r.span_sites_not_followed);
  std::stable_sort(r.conversions.begin(), r.conversions.end(),
                   [](const ConversionRecord& a, const ConversionRecord& b) { return a.bytes > b.bytes; });
  std::stable_sort(r.ops.begin(), r.ops.end(), [](const OpStats& a, const OpStats& b) {
    return std::tie(b.conversion_bytes, b.calls) < std::tie(a.conversion_bytes, a.calls);
  });
  return r;
}

void clear_report() {
  detail::flush_call_counts();  // counts made before the clear are cleared with the rest
  detail::clear_span_records();
  detail::Store& s = detail::store();
  std::lock_guard lock(s.mutex);
  s.checked_calls = 0;
  s.ops.clear();
  s.foreign_ops.clear();  // the names keep their indices
  s.violations.clear();
  s.violation_index.clear();
  s.conversions.clear();
  s.expected_losses.clear();
  s.unused_expectations.clear();
  s.unconverted_weights.clear();
  s.unconverted_index.clear();
  s.suppressed.clear();
}

}  // namespace lg::guard

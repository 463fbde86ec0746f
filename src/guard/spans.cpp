// Loss spans as the guard follows them (report.h, LossSpanRecord). FlowRecorder keeps every
// row of a run and reads spans afterwards; the guard may watch a training loop of millions of
// calls, so it keeps no rows: each thread maps the live NCHW tensors of a span to the span's
// site, and each step is added to its site's totals as it happens. Memory is bounded by the
// live tensors plus 256 sites of at most 64 distinct steps per list.
#include "guard/spans.h"

#include <mutex>
#include <string>
#include <unordered_map>

#include <layoutguard/guard.h>

#include "guard/data_flow.h"

namespace lg::guard::detail {
namespace {

constexpr size_t kMaxSites = 256;
constexpr size_t kMaxStepsPerList = 64;

struct Sites {
  std::mutex mutex;
  std::vector<LossSpanRecord> records;            // in order of first loss
  std::unordered_map<std::string, uint32_t> index;  // op \x1f module \x1f reason -> record
  int64_t not_followed = 0;
  uint64_t generation = 0;  // bumped by clear_span_records
};
Sites& sites() {
  static Sites* s = new Sites;  // never destroyed: the exit handler reads it after statics go
  return *s;
}

struct ThreadState {
  ProducerMap<uint32_t> span_of;  // live NCHW tensors of a span -> its site
  PendingBytes pending;
  uint64_t generation = 0;
};
ThreadState& thread_state() {
  thread_local ThreadState s;
  return s;
}

void add_step(LossSpanRecord& r, std::vector<SpanStep>& list, std::string_view op, std::string_view module) {
  for (SpanStep& s : list)
    if (s.op == op && s.module_path == module) {
      ++s.count;
      return;
    }
  if (list.size() >= kMaxStepsPerList) {
    ++r.steps_not_listed;
    return;
  }
  list.push_back(SpanStep{std::string(op), std::string(module), 1});
}

// What the data does after a call: stays NCHW (the span goes on), is channels-last again, or
// is no longer a 4-D/5-D layout question (another rank, or ambiguous: C == 1, 1x1 maps).
enum class Next { Nchw, ChannelsLast, Left };
Next next_of(const Tensor* out) {
  if (out == nullptr || !out->defined() || (out->dim() != 4 && out->dim() != 5)) return Next::Left;
  switch (classify(*out)) {
    case LayoutClass::ChannelsLast: return Next::ChannelsLast;
    case LayoutClass::Other: return Next::Nchw;
    default: return Next::Left;
  }
}

}  // namespace

void follow_call(const hooks::OpCall& call, int64_t converted_bytes, bool lost, std::string_view expected_reason) {
  ThreadState& t = thread_state();
  t.pending.add(call, converted_bytes);
  if (call.depth != 0) return;
  const int64_t converted = t.pending.take();
  if (!lost && t.span_of.empty()) return;  // the common case: no span is live on this thread

  std::optional<uint32_t> site;
  for (const Tensor& in : call.inputs)
    if ((site = t.span_of.find(in))) break;  // data of two losses: the first input's span
  if (!site && !lost) return;

  const Tensor* out = main_operand(call.outputs);
  const Next next = next_of(out);
  const int64_t out_bytes = next == Next::Nchw ? static_cast<int64_t>(out->nbytes()) : 0;
  Sites& s = sites();
  {
    std::lock_guard lock(s.mutex);
    // Site numbers from before a clear_report name nothing now (or another site).
    if (t.generation != s.generation) {
      t.span_of.clear();
      t.generation = s.generation;
      site.reset();
      if (!lost) return;
    }
    if (!site) {  // a new loss opens (or repeats) its site's span
      const std::string key =
          std::string(call.op) + '\x1f' + std::string(call.module_path) + '\x1f' + std::string(expected_reason);
      auto it = s.index.find(key);
      if (it == s.index.end()) {
        if (s.records.size() >= kMaxSites) {
          ++s.not_followed;
          return;
        }
        it = s.index.emplace(key, static_cast<uint32_t>(s.records.size())).first;
        LossSpanRecord fresh;
        fresh.op = call.op;
        fresh.module_path = call.module_path;
        fresh.expected_loss = expected_reason;
        s.records.push_back(std::move(fresh));
      }
      site = it->second;
      LossSpanRecord& r = s.records[*site];
      ++r.losses;
      r.conversion_bytes += converted;
      r.nchw_output_bytes += out_bytes;
    } else {
      LossSpanRecord& r = s.records[*site];
      r.conversion_bytes += converted;
      switch (next) {
        case Next::Nchw:
          add_step(r, r.nchw_ops, call.op, call.module_path);
          r.nchw_output_bytes += out_bytes;
          break;
        case Next::ChannelsLast: add_step(r, r.restored_at, call.op, call.module_path); return;
        case Next::Left: add_step(r, r.left_at, call.op, call.module_path); return;
      }
    }
  }
  // The outputs carry the span on (a lost call's outputs always: they are what was lost).
  if (lost || next == Next::Nchw)
    for (const Tensor& o : call.outputs) t.span_of.set(o, *site);
}

std::vector<LossSpanRecord> span_records(int64_t& sites_not_followed) {
  Sites& s = sites();
  std::lock_guard lock(s.mutex);
  sites_not_followed = s.not_followed;
  return s.records;
}

void clear_span_records() {
  Sites& s = sites();
  std::lock_guard lock(s.mutex);
  s.records.clear();
  s.index.clear();
  s.not_followed = 0;
  ++s.generation;
}

}  // namespace lg::guard::detail

// FlowRecorder: a hook that keeps one row per depth-0 op call of its thread, with the bytes of
// the layout conversions inside the call and the edges from the rows that made its inputs.
#include <algorithm>
#include <atomic>
#include <optional>

#include <layoutguard/audit.h>
#include <layoutguard/error.h>
#include <layoutguard/layout.h>

#include "core/atomic_file.h"
#include "guard/check.h"
#include "guard/data_flow.h"
#include "guard/runtime.h"

namespace lg::audit {
namespace {

// NHWC / NCHW (NDHWC / NCDHW) for 4-D and 5-D tensors, the full format name when it is neither,
// the rank otherwise.
std::string short_format(const Tensor& t) {
  if (!t.defined()) return "-";
  if (t.dim() != 4 && t.dim() != 5) return std::to_string(t.dim()) + "-D";
  const bool four = t.dim() == 4;
  switch (guard::classify(t)) {
    case guard::LayoutClass::ChannelsLast: return four ? "NHWC" : "NDHWC";
    case guard::LayoutClass::Ambiguous: return four ? "NHWC=NCHW" : "NDHWC=NCDHW";
    default: return t.is_contiguous() ? (four ? "NCHW" : "NCDHW") : layout::format_name(t.sizes(), t.strides());
  }
}

OutputKind output_kind(const Tensor* t) {
  if (t == nullptr || !t->defined() || (t->dim() != 4 && t->dim() != 5)) return OutputKind::Neither;
  switch (guard::classify(*t)) {
    case guard::LayoutClass::ChannelsLast: return OutputKind::ChannelsLast;
    case guard::LayoutClass::Other: return OutputKind::Nchw;
    default: return OutputKind::Neither;
  }
}

// A number per thread, never reused in the process (std::thread::id values are: a recorder
// kept beyond its thread's end must not adopt a new thread with the old id).
uint64_t thread_number() {
  static std::atomic<uint64_t> next{0};
  thread_local const uint64_t mine = next.fetch_add(1, std::memory_order_relaxed);
  return mine;
}

}  // namespace

struct FlowRecorder::State {
  uint64_t owner = thread_number();
  std::function<void(const Row&)> on_row;
  std::vector<Row> rows;
  guard::detail::PendingBytes pending;  // conversions inside the depth-0 call not finished yet

  guard::detail::ProducerMap<size_t> producers;  // the row that made each output

  void on_call(const hooks::OpCall& call) {
    if (thread_number() != owner) return;
    const bool conversion =
        call.op == "copy_" && call.inputs.size() == 2 && guard::is_layout_conversion(call.inputs[0], call.inputs[1]);
    pending.add(call, conversion ? int64_t(call.inputs[0].nbytes()) : 0);
    if (call.depth != 0) return;
    Row r;
    r.op = call.op;
    r.module = call.module_path;
    const Tensor* in = guard::detail::main_operand(call.inputs);
    const Tensor* out = guard::detail::main_operand(call.outputs);
    r.in = in ? short_format(*in) : "-";
    r.out = out ? short_format(*out) : "-";
    r.out_kind = output_kind(out);
    r.out_bytes = out && out->defined() ? int64_t(out->nbytes()) : 0;
    r.kernel = call.kernel.empty() ? "-" : std::string(call.kernel);
    if (call.policy == LayoutPolicy::ConvLike && call.inputs.size() >= 2) {
      r.weight = short_format(call.inputs[1]);
      r.unconverted_weight = guard::detail::has_unconverted_weight(call.policy, call.inputs);
    }
    r.conversion_bytes = pending.take();
    // The guard's options as the guard itself reads them at this call (a cached snapshot).
    const guard::Options& options = guard::detail::current_options();
    if (guard::check_layout(call.op, call.policy, call.inputs, call.outputs, options, call.module_path, call.depth)) {
      // Hooks run before the guard, which gives such a loss to the same scope.
      const guard::ExpectedLoss* expected = guard::ExpectedLoss::innermost_for(call.op);
      r.violation = expected == nullptr;
      if (expected) r.expected_loss = expected->reason();
    }
    for (const Tensor& t : call.inputs)
      if (const std::optional<size_t> p = producers.find(t)) r.sources.push_back(*p);
    for (const Tensor& t : call.outputs) producers.set(t, rows.size());
    rows.push_back(std::move(r));
    if (on_row) on_row(rows.back());
  }
};

FlowRecorder::FlowRecorder(std::function<void(const Row&)> on_row) : state_(std::make_shared<State>()) {
  state_->on_row = std::move(on_row);
  handle_ = hooks::add([state = state_](const hooks::OpCall& call) { state->on_call(call); });
}

FlowRecorder::~FlowRecorder() { hooks::remove(handle_); }

const std::vector<Row>& FlowRecorder::rows() const { return state_->rows; }

int64_t FlowRecorder::violations() const {
  int64_t n = 0;
  for (const Row& r : state_->rows) n += r.violation ? 1 : 0;
  return n;
}

std::vector<LossSpan> FlowRecorder::loss_spans() const { return find_loss_spans(state_->rows); }

std::string FlowRecorder::text() const {
  std::string out = format_table(state_->rows);
  for (const std::string& section : {format_loss_spans(loss_spans(), state_->rows), format_unconverted_weights(state_->rows)})
    if (!section.empty()) out += "\n" + section;
  return out;
}

std::string FlowRecorder::json() const { return flow_json(state_->rows, loss_spans()); }

void FlowRecorder::write_dot(const std::string& path, const std::string& title) const {
  lg::detail::replace_file("audit::FlowRecorder::write_dot", "", path, flow_dot(state_->rows, title));
}

}  // namespace lg::audit

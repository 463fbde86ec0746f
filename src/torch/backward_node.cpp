// The running backward node (see backward_node.h).
#include "torch/backward_node.h"

#include <utility>
#include <vector>

#include <ATen/record_function.h>
#include <torch/csrc/autograd/function.h>
#include <torch/version.h>

#include "torch/forward_sites.h"

namespace lg::torch_bridge {

#if TORCH_VERSION_MAJOR >= 2

bool in_backward_node() { return ::torch::autograd::get_current_node() != nullptr; }

std::optional<BackwardNode> running_backward_node() {
  const std::shared_ptr<::torch::autograd::Node> node = ::torch::autograd::get_current_node();
  if (!node) return std::nullopt;
  return BackwardNode{node->name(), forward_site(node->thread_id(), static_cast<int64_t>(node->sequence_nr()))};
}

void watch_backward_nodes() {}
void unwatch_backward_nodes() {}

#else

namespace {

struct Range {
  const char* name;      // the range's, valid until it ends
  uint64_t forward_thread;
  int64_t sequence_nr;
};
thread_local std::vector<Range> t_ranges;          // innermost last
thread_local at::CallbackHandle t_callback = 0;    // this thread's, or 0

std::unique_ptr<at::ObserverContext> range_start(const at::RecordFunction& fn) {
  t_ranges.push_back({fn.name(), fn.forwardThreadId(), fn.seqNr()});
  return nullptr;
}

void range_end(const at::RecordFunction&, at::ObserverContext*) {
  if (!t_ranges.empty()) t_ranges.pop_back();
}

}  // namespace

bool in_backward_node() { return !t_ranges.empty(); }

std::optional<BackwardNode> running_backward_node() {
  if (t_ranges.empty()) return std::nullopt;
  const Range& r = t_ranges.back();
  return BackwardNode{r.name, forward_site(r.forward_thread, r.sequence_nr)};
}

void watch_backward_nodes() {
  if (t_callback == 0)
    t_callback = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&range_start, &range_end).scopes({at::RecordScope::BACKWARD_FUNCTION}));
}

void unwatch_backward_nodes() {
  if (t_callback != 0) at::removeCallback(std::exchange(t_callback, 0));
}

#endif

}  // namespace lg::torch_bridge

// The running backward node (see backward_node.h).
#include "torch/backward_node.h"

#include <string>
#include <utility>
#include <vector>

#include <ATen/record_function.h>
#include <torch/csrc/autograd/function.h>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR < 2
#include <torch/csrc/autograd/graph_task.h>
#endif

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

// The backward pass running on this thread (its graph task), or null.
const void* running_pass() { return ::torch::autograd::get_current_graph_task_exec_info(); }

// The last outermost node that finished on this thread, and in which pass. Between two nodes
// the engine runs ATen ops of its own outside every node's range: it sums the gradients that
// reach a tensor used more than once (`add`), and fixes a gradient's dtype or shape to its
// input's. They work on the output of the node that just finished, and torch 2's engine, which
// keeps that node running until they are done, names it: so does this. The name is copied,
// as the range's own dies with it.
struct Finished {
  std::string name;
  uint64_t forward_thread = 0;
  int64_t sequence_nr = 0;
  const void* pass = nullptr;
};
thread_local Finished t_finished;

std::unique_ptr<at::ObserverContext> range_start(const at::RecordFunction& fn) {
  t_ranges.push_back({fn.name(), fn.forwardThreadId(), fn.seqNr()});
  return nullptr;
}

void range_end(const at::RecordFunction&, at::ObserverContext*) {
  if (t_ranges.empty()) return;
  if (t_ranges.size() == 1) {
    const Range& r = t_ranges.back();
    t_finished.name.assign(r.name);
    t_finished.forward_thread = r.forward_thread;
    t_finished.sequence_nr = r.sequence_nr;
    t_finished.pass = running_pass();
  }
  t_ranges.pop_back();
}

// Inside a backward pass, between two nodes: the last one that finished in this pass. A pass
// runs a node before any gradient exists to sum, so a finished node of an earlier pass (whose
// graph task may have had the same address) is never the answer.
const Finished* between_nodes() {
  if (t_finished.pass == nullptr) return nullptr;
  const void* pass = running_pass();
  return pass == t_finished.pass ? &t_finished : nullptr;
}

}  // namespace

bool in_backward_node() { return !t_ranges.empty() || between_nodes() != nullptr; }

std::optional<BackwardNode> running_backward_node() {
  if (!t_ranges.empty()) {
    const Range& r = t_ranges.back();
    return BackwardNode{r.name, forward_site(r.forward_thread, r.sequence_nr)};
  }
  if (const Finished* f = between_nodes()) return BackwardNode{f->name, forward_site(f->forward_thread, f->sequence_nr)};
  return std::nullopt;
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

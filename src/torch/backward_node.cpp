// The running backward node (see backward_node.h).
#include "torch/backward_node.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/function.h>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR < 2
#include <torch/csrc/autograd/graph_task.h>
#endif

#include "core/at_thread_exit.h"
#include "core/thread_local_ref.h"
#include "torch/forward_sites.h"

namespace lg::torch_bridge {

BackwardNode made_by(const NodeIdentity& node) {
  return BackwardNode{node.name, forward_site(node.forward_thread, node.sequence_nr),
                      forward_call(node.forward_thread, node.sequence_nr)};
}

#if TORCH_VERSION_MAJOR >= 2

NodeMark running_node_mark() { return {::torch::autograd::get_current_node().get(), 0}; }

std::optional<NodeIdentity> running_node_identity() {
  // A shared_ptr up to torch 2.12, an intrusive_ptr from 2.13 on.
  const auto node = ::torch::autograd::get_current_node();
  if (!node) return std::nullopt;
  return NodeIdentity{node->name(), node->thread_id(), static_cast<int64_t>(node->sequence_nr())};
}

void watch_backward_nodes() {}
void unwatch_backward_nodes() {}
void forget_finished_node() {}

namespace {

struct GraphBuildingPasses {
  int open = 0;
  at::CallbackHandle callback = 0;
};
thread_local GraphBuildingPasses t_passes;

// Returned by a node's start when it noted its site, so that its end leaves it.
struct NodeSiteEntered : at::ObserverContext {};

std::unique_ptr<at::ObserverContext> node_start(const at::RecordFunction& fn) {
  if (!c10::GradMode::is_enabled()) return nullptr;
  auto entered = std::make_unique<NodeSiteEntered>();  // first: a failed allocation enters nothing
  return enter_node_site(fn.forwardThreadId(), fn.seqNr()) ? std::move(entered) : nullptr;
}

void node_end(const at::RecordFunction&, at::ObserverContext* entered) {
  if (entered != nullptr) leave_node_site();
}

}  // namespace

void watch_graph_building_pass() {
  GraphBuildingPasses& p = lg::detail::thread_local_ref(t_passes);
  if (p.open == 0)
    p.callback = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&node_start, &node_end).scopes({at::RecordScope::BACKWARD_FUNCTION}));
  ++p.open;  // after the callback: a failed add leaves nothing to undo
}

void unwatch_graph_building_pass() {
  GraphBuildingPasses& p = lg::detail::thread_local_ref(t_passes);
  if (p.open > 0 && --p.open == 0) at::removeCallback(std::exchange(p.callback, 0));
}

#else

namespace {

struct Range {
  const char* name;      // the range's, valid until it ends
  uint64_t forward_thread;
  int64_t sequence_nr;
  bool site_entered;     // in a graph-building pass: the nodes it makes have its module path
};

// The backward pass running on this thread (its graph task), or null.
const void* running_pass() { return ::torch::autograd::get_current_graph_task_exec_info(); }

// The thread's node ranges, and the last outermost node that finished on it and in which pass.
// Between two nodes the engine runs ATen ops of its own outside every node's range: it sums
// the gradients that reach a tensor used more than once (`add`), and fixes a gradient's dtype
// or shape to its input's. They work on the output of the node that just finished, and torch
// 2's engine, which keeps that node running until they are done, names it: so does this. The
// name is copied, as the range's own dies with it. One thread-local, looked up once per
// callback (thread_local_ref): the callbacks run for every node.
struct Nodes {
  std::vector<Range> ranges;  // innermost last
  std::string finished_name;
  uint64_t finished_forward_thread = 0;
  int64_t finished_sequence_nr = 0;
  const void* finished_pass = nullptr;
};
thread_local Nodes t_nodes;
thread_local at::CallbackHandle t_callback = 0;  // this thread's, or 0

std::unique_ptr<at::ObserverContext> range_start(const at::RecordFunction& fn) {
  const bool site_entered = c10::GradMode::is_enabled() && enter_node_site(fn.forwardThreadId(), fn.seqNr());
  lg::detail::thread_local_ref(t_nodes).ranges.push_back({fn.name(), fn.forwardThreadId(), fn.seqNr(), site_entered});
  return nullptr;
}

void range_end(const at::RecordFunction&, at::ObserverContext*) {
  Nodes& n = lg::detail::thread_local_ref(t_nodes);
  if (n.ranges.empty()) return;
  if (n.ranges.back().site_entered) leave_node_site();
  if (n.ranges.size() == 1) {
    const Range& r = n.ranges.back();
    n.finished_name.assign(r.name);
    n.finished_forward_thread = r.forward_thread;
    n.finished_sequence_nr = r.sequence_nr;
    n.finished_pass = running_pass();
  }
  n.ranges.pop_back();
}

// Inside a backward pass, between two nodes: the last one that finished in this pass. Passes
// are told apart by their graph task's address, which the next pass may reuse: a backward
// started through a BackwardOrigin (Python's backward() and autograd.grad()) makes the calling
// thread forget its last node first.
bool between_nodes(const Nodes& n) { return n.finished_pass != nullptr && running_pass() == n.finished_pass; }

}  // namespace

NodeMark running_node_mark() {
  const Nodes& n = lg::detail::thread_local_ref(t_nodes);
  if (n.ranges.empty() && !between_nodes(n)) return {};
  const void* pass = running_pass();
  return {pass != nullptr ? pass : &n, n.ranges.size()};  // &n: running, pass unknown
}

std::optional<NodeIdentity> running_node_identity() {
  const Nodes& n = lg::detail::thread_local_ref(t_nodes);
  if (!n.ranges.empty()) {
    const Range& r = n.ranges.back();
    return NodeIdentity{r.name, r.forward_thread, r.sequence_nr};
  }
  if (between_nodes(n)) return NodeIdentity{n.finished_name, n.finished_forward_thread, n.finished_sequence_nr};
  return std::nullopt;
}

void unwatch_backward_nodes() {
  if (t_callback != 0) at::removeCallback(std::exchange(t_callback, 0));
}

void watch_backward_nodes() {
  if (t_callback != 0) return;
  t_callback = at::addThreadLocalCallback(
      at::RecordFunctionCallback(&range_start, &range_end).scopes({at::RecordScope::BACKWARD_FUNCTION}));
  // c10 keeps a thread's callbacks in a thread_local, destroyed with the thread's other
  // thread_locals: the callback goes before them, so that a Scope ending later (one of static
  // storage duration, during exit) has none left to remove.
  lg::detail::run_at_thread_exit<&unwatch_backward_nodes>();
}

void forget_finished_node() { lg::detail::thread_local_ref(t_nodes).finished_pass = nullptr; }

// The node callback above notes the sites of graph-building nodes.
void watch_graph_building_pass() {}
void unwatch_graph_building_pass() {}

#endif

bool in_backward_node() { return running_node_mark().running(); }

namespace {

struct ModuleDepths {
  size_t entered_in_node = 0;  // the depth of the outermost module entered inside a node; 0: none
  NodeMark node;               // ... and the node it was entered in
  size_t last = 0;             // the stack's depth at the last change
};
thread_local ModuleDepths t_depths;

}  // namespace

void note_module_depth(size_t depth) noexcept {
  ModuleDepths& d = lg::detail::thread_local_ref(t_depths);
  if (depth < d.entered_in_node) {
    d.entered_in_node = 0;
  } else if (depth > d.last && d.entered_in_node == 0) {
    const NodeMark node = running_node_mark();
    if (node.running()) {
      d.entered_in_node = depth;
      d.node = node;
    }
  }
  d.last = depth;
}

void forget_module_depths(size_t depth) noexcept {
  ModuleDepths& d = lg::detail::thread_local_ref(t_depths);
  d.entered_in_node = 0;
  d.last = depth;
}

// The node must be the one the module was entered in: a backward pass that the module's own
// forward starts runs nodes of its own, whose ops and requests are theirs.
bool in_module_entered_in_node() {
  const ModuleDepths& d = lg::detail::thread_local_ref(t_depths);
  return d.entered_in_node != 0 && running_node_mark() == d.node;
}

}  // namespace lg::torch_bridge

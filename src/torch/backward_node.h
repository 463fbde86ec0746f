// The autograd node whose backward runs on the calling thread, for the ops it calls: their
// reports name it and the module of the forward op that made it, and a memory_format request
// inside it is the derivative formula's, not the user's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace lg::torch_bridge {

// Whether a backward node runs on this thread now. Between two nodes of a backward pass, where
// autograd sums and casts gradients itself, the node that finished last counts as running (it
// does in torch 2's engine).
bool in_backward_node();

struct BackwardNode {
  std::string name;            // "UpsampleBicubic2DBackward0"
  std::string forward_module;  // the module path of the forward op that made it ("" if unknown)
  std::string forward_call;    // that op's call site, kept with option forward_calls ("" if not)
};

// A node as autograd numbers it: its name, and which forward thread made it as its how-manieth
// node. Its module and call site are looked up from these (made_by) only for a report.
struct NodeIdentity {
  std::string name;
  uint64_t forward_thread = 0;
  int64_t sequence_nr = 0;
};

// The node's module and call site as the forward sites kept them.
BackwardNode made_by(const NodeIdentity& node);

// The running node, if any: a few strings, for reports only.
std::optional<NodeIdentity> running_node_identity();
inline std::optional<BackwardNode> running_backward_node() {
  std::optional<NodeIdentity> node = running_node_identity();
  if (!node) return std::nullopt;
  return made_by(*node);
}

// A backward pass starts on this thread (BackwardOrigin): the last node that finished before it
// is not the running one until a node of the new pass has finished.
void forget_finished_node();

// The backward node running on this thread, as an identity: torch 2's node; on 1.13 the pass
// and the depth of node ranges. Compared, never dereferenced.
struct NodeMark {
  const void* node_or_pass = nullptr;
  size_t ranges = 0;
  bool running() const { return node_or_pass != nullptr; }
  bool operator==(const NodeMark&) const = default;
};
NodeMark running_node_mark();

// Forward code that runs inside a backward node -- activation checkpointing's recomputation,
// a module called from a gradient hook -- is the user's forward again, not the node's
// derivative formula: its ops belong to the module that runs them, and a memory_format it
// asks for is the user's. It is told apart by the module stack: a module entered while a node
// runs starts it, and it lasts until the stack drops below that module again.
// note_module_depth is the module stack's observer's share (switched-on threads, every push
// and pop); in_module_entered_in_node says whether such a module runs now.
void note_module_depth(size_t depth) noexcept;
bool in_module_entered_in_node();
// The thread switched on or off at module depth `depth`: the stack's changes while it was off
// went unseen, so no module entered in a node is known.
void forget_module_depths(size_t depth) noexcept;

// Node tracking for the calling thread, switched on by enable() and off by disable(). Torch 2
// keeps the running node itself (the engine's NodeGuard): these do nothing there. Torch 1.13
// does not, so a RecordFunction callback on BACKWARD_FUNCTION ranges keeps a stack of them;
// it is the thread's, not global: while any callback watches those ranges, autograd builds a
// RecordFunction and the node's name for every node it runs, and a global one would charge
// that to every thread of the process, also after disable(). Autograd hands the calling
// thread's callbacks to its device threads with the rest of its thread-local state.
void watch_backward_nodes();
void unwatch_backward_nodes();

// A backward pass that builds a graph (create_graph: double backward, gradient penalties) makes
// nodes inside nodes; each gets the module path of the node that makes it (forward_sites.h).
// Torch 1.13's node callback above does this whenever grad mode is on inside a node. Torch 2
// has no callback of ours, as it keeps the running node itself: these add one to the calling
// thread while such a pass runs (autograd's device threads get the caller's callbacks), so
// that passes that build no graph pay nothing. Nest; on the same thread.
void watch_graph_building_pass();
void unwatch_graph_building_pass();

}  // namespace lg::torch_bridge

// Where the forward op of each autograd node ran, so that a backward op is reported in the
// module whose forward made its node.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lg::torch_bridge {

// Starts keeping, per thread, the module path in force from each autograd sequence number on:
// every push and pop of the module stack (nn.Module hooks, ModuleScope) on a switched-on
// thread notes the thread's next node number and the new path. A node made by any op -- one
// the bridge never sees, such as a view, included -- then has the path that was in force when
// it was made. Costs nothing per op. Bounded: a thread keeps its latest 65,536 changes and
// 4,096 distinct paths, and the 256 latest threads; older nodes have no module path. Called
// once, by the first enable().
void keep_forward_sites();

// The thread switches on (its module path is in force from here) or off (nodes made from here
// have none: the stack's changes are not followed while it is off).
void note_switch(bool on);

// A backward node starts running on this thread in a pass that builds a graph (double
// backward): the nodes made until leave_node_site() get the node's own module path, the one in
// force when the node (forward thread, sequence number) was made. Nest; a false return (out
// of memory) is not to be left.
bool enter_node_site(uint64_t forward_thread_id, int64_t sequence_nr) noexcept;
void leave_node_site() noexcept;

// The module path in force when the node (forward thread, sequence number) was made, "" if
// none (outside every module, or no longer kept).
std::string forward_site(uint64_t forward_thread_id, int64_t sequence_nr);

// Option forward_calls: the nodes numbered [first_node, end_node) on this thread were made by
// one user-level call at `call_site` ("model.py:42 in forward"). Kept beside the module paths,
// as boundedly: the thread's latest 65,536 such calls and 4,096 distinct sites. Never raises
// (out of memory: the nodes have no call site).
void note_forward_call(int64_t first_node, int64_t end_node, std::string_view call_site) noexcept;

// The nodes [first_node, end_node) were made by a user-level call that just returned on this
// thread: notes the call site that the call-site finder (lg::torch::set_call_site_finder) gives
// for it, if any. Never raises (out of memory: the nodes have no call site).
void note_nodes_of_this_call(int64_t first_node, int64_t end_node) noexcept;

// The call site noted for the node (forward thread, sequence number), "" if none: the option
// was off, the call had no site (no frame of the user's), or it is no longer kept.
std::string forward_call(uint64_t forward_thread_id, int64_t sequence_nr);

}  // namespace lg::torch_bridge

// Where the forward op of each autograd node ran, so that a backward op is reported in the
// module whose forward made its node.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <ATen/core/Tensor.h>

namespace lg::torch_bridge {

// Remembers the module path of the forward op whose result is `output`, under its autograd
// node's (forward thread, sequence number): the key the node's backward range carries. Does
// nothing outside every module or for a result without a node. Bounded: a slot per node, so a
// node whose slot a later node took (more nodes than slots live at once) has no module path.
void remember_forward_site(const at::Tensor& output, std::string_view module_path);

// The module path remembered for a node, "" if none.
std::string forward_site(uint64_t forward_thread_id, int64_t sequence_nr);

}  // namespace lg::torch_bridge

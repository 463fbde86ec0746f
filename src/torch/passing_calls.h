// Option forward_calls for the calls that pass the bridge's key by: views and in-place ops
// (x.sigmoid_(), nn.ReLU(inplace=True)) make autograd nodes too, and a loss in those nodes'
// backward ops names their forward call like any other's.
#pragma once

#include <string>
#include <vector>

namespace c10 {
class Dispatcher;
}

namespace lg::torch_bridge {

// Registers, once, a kernel on kPassingKey for each of `ops` (the ATen ops that pass kKey by
// and take a tensor, "name.overload"), and lets every other op pass kPassingKey by. A key that
// has a fallback already (another copy of the library) is left alone, with a note on stderr.
void register_passing_calls(c10::Dispatcher& d, const std::vector<std::string>& ops);

// Option forward_calls is on for the calling thread's user-level call: its calls that pass kKey
// by go through kPassingKey from here on (when the kernels are registered). The key leaves the
// thread again at its first such user-level call after the option is off, or after the thread
// is switched off; until then the views and in-place ops called inside ops are boxed and passed
// on. One thread-local read when on already.
void watch_passing_calls();

}  // namespace lg::torch_bridge

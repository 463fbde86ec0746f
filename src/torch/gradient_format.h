// The gradient-format contract (option grad_format): the gradient that backward hands to the
// node of a channels-last forward output is channels-last too. Where it is not, a backward step
// downstream -- a node of an op that consumed the output -- returned its grad_input in another
// layout than its forward input had, and this node's ops convert it or run on the slow path.
// The op-level rule cannot see that when the step asked for the layout itself
// (`grad.contiguous()` in a custom autograd.Function, an extension's kernel): the contract can.
#pragma once

#include <cstdint>
#include <string_view>

#include "torch/intercepted_call.h"

namespace lg::torch_bridge {

// After a user-level call that made this thread's autograd nodes [first_node, end_node): each
// channels-last output whose grad_fn is one of them gets its gradient checked when the backward
// pass hands it to that node (a pre-hook on the node, which owns it).
void watch_output_gradients(const Operands& outputs, int64_t first_node, int64_t end_node);

// Before a user-level call with gradients on: each channels-last input whose grad_fn this
// thread made, whichever call made it, gets its gradient checked the same way. This reaches the nodes that
// no seen call made: those of in-place ops and views, which pass the bridge's key by
// (`nn.ReLU(inplace=True)`), and those of custom autograd.Functions.
void watch_input_gradients(const Operands& inputs);

// After a user-level call inside a backward node (`op`): its outputs that could break the
// contract are noted with the op and the node, so that a report can name where the gradient
// was made. The thread keeps the last few (a gradient reaches the next node soon after). A
// gradient whose op was `reported` (the rule found it lost the format) is not reported again
// where it arrives.
void note_gradients_made(const Operands& outputs, std::string_view op, bool reported);

}  // namespace lg::torch_bridge

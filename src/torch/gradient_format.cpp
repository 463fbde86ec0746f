// The gradient-format contract (see gradient_format.h).
#include "torch/gradient_format.h"

#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <ATen/record_function.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/version.h>

#include <layoutguard/guard.h>
#include <layoutguard/torch.h>

#include "core/thread_local_ref.h"
#include "guard/runtime.h"
#include "torch/backward_node.h"
#include "torch/package_hooks.h"
#include "torch/stand_in.h"

namespace lg::torch_bridge {
namespace {

namespace ag = ::torch::autograd;

// Whether a gradient breaks the contract: a dense one whose dims are not in channels-last
// order. An expanded gradient (`y.sum().backward()` hands every element the same 1) has no
// layout to keep, and an ambiguous one (C == 1, or H == W == 1) keeps both. A channels-last
// contiguous one passes whatever the stride of a size-1 dim (the gradient of a squeeze(0)
// comes back as unsqueeze(0), whose batch stride need not suggest channels-last).
bool breaks_contract(const at::Tensor& grad, size_t rank, int64_t min_bytes) {
  if (classify(grad) != Class::Other || grad.dim() != static_cast<int64_t>(rank) ||
      !grad.is_non_overlapping_and_dense() || static_cast<int64_t>(grad.nbytes()) < min_bytes)
    return false;
  return !grad.is_contiguous(rank == 5 ? c10::MemoryFormat::ChannelsLast3d : c10::MemoryFormat::ChannelsLast);
}

// Where a gradient was made: the backward op, its node (as the node was running then).
struct Made {
  c10::weak_intrusive_ptr<c10::TensorImpl> tensor;
  std::string_view op;  // an op table entry's name, which lives as long as the process
  NodeIdentity node;
  bool reported;  // the op's own loss, reported where it was made
};

// The thread's last gradients made, oldest overwritten first. Few are needed: the engine hands
// a node's grad_inputs to their nodes as soon as it has run (summed first where several nodes
// feed one), and a pre-hook asks on the thread that ran them.
struct MadeRing {
  static constexpr size_t kSize = 16;
  std::array<std::optional<Made>, kSize> made;
  size_t next = 0;
  // The last node with a reported op (forward thread, sequence number): every gradient it makes
  // after that carries the loss already reported (group_norm's formula calls contiguous() on
  // its input, reported, and then computes the gradient from it).
  std::pair<uint64_t, int64_t> reported_node{0, -1};

  // The newest note of the tensor: an op that changed it in place later made it last.
  const Made* find(const c10::TensorImpl* impl) const {
    for (size_t i = 1; i <= kSize; ++i) {
      const std::optional<Made>& m = made[(next + kSize - i) % kSize];
      if (m && m->tensor._unsafe_get_target() == impl && !m->tensor.expired()) return &*m;
    }
    return nullptr;
  }
};
thread_local MadeRing t_made;

// Owned by the node (its pre-hooks), so it never outlives it.
class ChannelsLastGradients final : public ag::FunctionPreHook {
 public:
  explicit ChannelsLastGradients(ag::Node& node) : node_(node) {}

  void expect(uint32_t output_nr, const at::Tensor& forward_output) {
    for (const Expected& e : expected_)
      if (e.output_nr == output_nr) return;
    expected_.push_back(Expected{output_nr, Geometry(forward_output)});
  }

  ag::variable_list operator()(const ag::variable_list& grads) override {
    for (const Expected& e : expected_)
      if (e.output_nr < grads.size() && classify(grads[e.output_nr]) == Class::Other) check(e, grads[e.output_nr]);
    return grads;
  }

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
  // Compiled autograd (torch 2.2 on) asks each hook of a node it compiles to trace itself; this
  // one is left out of the compiled graph instead of failing it (docs/torch.md, "What it
  // sees"). The base's method was not const at first, and const later: one of these overrides
  // it, the other is an overload nothing calls. The type is named where both versions declare
  // it (torch::autograd, itself or by a using-declaration).
  void compiled_args(::torch::autograd::CompiledNodeArgs&) const {}
  void compiled_args(::torch::autograd::CompiledNodeArgs&) {}
#endif

 private:
  struct Expected {
    uint32_t output_nr;
    Geometry forward_output;
  };

  void check(const Expected& e, const at::Tensor& grad) const {
    const guard::Mode mode = lg::torch::mode();  // with a mode carried to this thread
    if (mode == guard::Mode::Off) return;
    const guard::Options& options = guard::detail::current_options();
    // Hooks outlive the setting that made them: a graph kept alive checks only while it holds.
    if (!options.grad_format || !breaks_contract(grad, e.forward_output.sizes.size(), options.min_bytes)) return;
    static const std::string op = "autograd::grad_format";
    static const uint32_t op_index = guard::detail::foreign_op_index(op);
    const Tensor stand_ins[] = {e.forward_output.stand_in(), stand_in(grad)};
    if (!stand_ins[0].defined() || !stand_ins[1].defined()) return;  // a dtype layoutguard lacks
    const Made* made = lg::detail::thread_local_ref(t_made).find(grad.unsafeGetTensorImpl());
    if (made != nullptr && made->reported) return;
    const BackwardNode node = made_by(NodeIdentity{node_.name(), node_.thread_id(),
                                                   static_cast<int64_t>(node_.sequence_nr())});
    const MemoryFormat format = grad.dim() == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
    const guard::Finding finding{op, LayoutPolicy::Preserve, format, 0, 0, rule(node.name, e.output_nr, made)};
    hooks::OpCall call{op,       LayoutPolicy::Preserve, {stand_ins, 1}, {stand_ins + 1, 1}, stand_ins[0].device(),
                       "autograd", node.forward_module,  0,              op};
    guard::detail::ForeignCall foreign;
    foreign.finding = &finding;
    foreign.autograd_node = node.name;
    foreign.forward_call = node.forward_call;
    foreign.locate = current_locator();
    foreign.raise = current_raiser();
    guard::detail::after_foreign_op(call, mode, op_index, foreign);
  }

  // The finding's text: what the contract requires, and where the gradient came from.
  static std::string rule(const std::string& node, uint32_t output_nr, const Made* made) {
    std::string text =
        "the gradient-format contract requires the gradient of a channels-last forward output to reach its node "
        "channels-last (input 0: forward output " +
        std::to_string(output_nr) + " of " + node + ", output 0: its gradient as it arrived). ";
    if (made != nullptr) {
      const BackwardNode maker = made_by(made->node);
      text += "It was made by " + std::string(made->op) + " in " + maker.name +
              (maker.forward_module.empty() ? std::string() : " (module " + maker.forward_module + ")") +
              ", the backward of an op that used this output in the forward";
    } else {
      text += "A backward step of an op that used this output in the forward returned it (a grad.contiguous() or "
              "a new tensor in a custom autograd.Function, an extension's kernel)";
    }
    return text +
           ": its grad_input lost the layout of its forward input, and the ops of this node convert it back "
           "or run on the slow path. A custom backward should return gradients in their input's layout "
           "(grad.contiguous(memory_format=torch.channels_last)); for PyTorch's own (a global average pool's "
           "MeanBackward1), docs/torch.md, \"Losses found\", names replacements that keep it";
  }

  ag::Node& node_;
  c10::SmallVector<Expected, 1> expected_;
};

// Checks the gradient of `t`, an output of `node`, when it reaches the node: one hook per node.
void watch(const at::Tensor& t, ag::Node& node) {
  ChannelsLastGradients* hook = nullptr;
  for (const std::unique_ptr<ag::FunctionPreHook>& h : node.pre_hooks())
    if ((hook = dynamic_cast<ChannelsLastGradients*>(h.get())) != nullptr) break;
  if (hook == nullptr) {
    auto fresh = std::make_unique<ChannelsLastGradients>(node);
    hook = fresh.get();
    node.add_pre_hook(std::move(fresh));
  }
  hook->expect(static_cast<uint32_t>(t.output_nr()), t);
}

}  // namespace

void note_gradients_made(const Operands& outputs, std::string_view op, bool reported) {
  MadeRing* ring = nullptr;
  for (const at::Tensor* t : outputs) {
    if (classify(*t) != Class::Other || !t->is_non_overlapping_and_dense()) continue;
    std::optional<NodeIdentity> node = running_node_identity();
    if (!node) return;
    if (ring == nullptr) ring = &lg::detail::thread_local_ref(t_made);
    const std::pair<uint64_t, int64_t> id{node->forward_thread, node->sequence_nr};
    if (reported)
      ring->reported_node = id;
    else
      reported = ring->reported_node == id;
    ring->made[ring->next] = Made{c10::weak_intrusive_ptr<c10::TensorImpl>(t->getIntrusivePtr()), op, std::move(*node), reported};
    ring->next = (ring->next + 1) % MadeRing::kSize;
  }
}

namespace {

// Hooks the nodes of `tensors` that are channels-last, made by this thread, and numbered in
// [first_node, end_node). Only this thread's: another thread may be adding to the same node's
// hooks (the replicas of nn.DataParallel share their inputs' Scatter node) or running them.
void watch_made_in(const Operands& tensors, int64_t first_node, int64_t end_node) {
  const uint64_t thread = at::RecordFunction::currentThreadId();
  for (const at::Tensor* t : tensors) {
    if (classify(*t) != Class::ChannelsLast) continue;
    ag::Node* node = t->grad_fn().get();
    if (node == nullptr || node->thread_id() != thread) continue;
    const auto nr = static_cast<int64_t>(node->sequence_nr());
    if (nr >= first_node && nr < end_node) watch(*t, *node);
  }
}

}  // namespace

void watch_output_gradients(const Operands& outputs, int64_t first_node, int64_t end_node) {
  watch_made_in(outputs, first_node, end_node);  // the nodes this call made
}

void watch_input_gradients(const Operands& inputs) {
  watch_made_in(inputs, 0, std::numeric_limits<int64_t>::max());  // whichever call made them
}

}  // namespace lg::torch_bridge

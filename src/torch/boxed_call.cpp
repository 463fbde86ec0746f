// The boxed fallback's view of a call (intercept_boxed): the ops without an unboxed kernel
// (unboxed_ops.cpp) reach the check with their arguments, then their results, as IValues on the
// op's stack. Kept out of interceptor.cpp so that the compiler does not guess, at each virtual
// call of the check, that the call is a boxed one and inline its code there: most calls that
// reach the check in a training step are unboxed.
#include <ATen/core/dispatch/Dispatcher.h>

#include "torch/dispatch_key.h"
#include "torch/intercepted_call.h"
#include "torch/op_table.h"

namespace lg::torch_bridge {
namespace {

// Visits the tensors of a run of IValues in argument order -- a Tensor, each element of a
// Tensor[] or Tensor?[] -- until `f` returns true; returns whether it did. An absent Tensor?
// is no tensor: the inputs that decide a ConvLike op (input, weight) come before any optional.
template <typename F>
bool any_tensor(const c10::IValue* begin, const c10::IValue* end, F&& f) {
  for (const c10::IValue* v = begin; v != end; ++v) {
    if (v->isTensor()) {
      if (f(v->toTensor())) return true;
    } else if (v->isTensorList()) {
      for (const at::Tensor& t : v->toTensorList())
        if (f(t)) return true;
    } else if (v->isList()) {
      for (const c10::IValue& e : v->toListRef())
        if (e.isTensor() && f(e.toTensor())) return true;
    }
  }
  return false;
}

// Copies of the tensors of a run of IValues (see any_tensor).
void gather(const c10::IValue* begin, const c10::IValue* end, Tensors& out) {
  any_tensor(begin, end, [&](const at::Tensor& t) {
    out.push_back(t);
    return false;
  });
}

// The operands of a run of IValues. Single tensors are borrowed: the results stay on the
// stack until the fallback returns. Lists are copied into `owned` (their elements are not
// IValues of the stack).
void operands_of(const c10::IValue* begin, const c10::IValue* end, Tensors& owned, Operands& out) {
  bool lists = false;
  for (const c10::IValue* v = begin; v != end && !lists; ++v) lists = v->isTensorList() || v->isList();
  if (lists) {
    gather(begin, end, owned);
    for (const at::Tensor& t : owned) out.push_back(&t);
    return;
  }
  for (const c10::IValue* v = begin; v != end; ++v)
    if (v->isTensor()) out.push_back(&v->toTensor());
}

// A call of the boxed fallback: its arguments, then its results, on the stack.
class BoxedCall final : public InterceptedCall {
 public:
  // The op pops its arguments: they do not outlive the call.
  BoxedCall(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack)
      : InterceptedCall(op_entry(op), false), op_(op), keys_(keys), stack_(stack),
        args_(op.schema().arguments().size()) {}

  void redispatch() override {
    op_.redispatchBoxed(keys_below(keys_), stack_);
  }
  bool sets_expectation(Counting counting) const override {
    return any_tensor(first(), first() + args_,
                      [counting](const at::Tensor& t) { return torch_bridge::sets_expectation(t, counting); });
  }
  // Copied: the op pops its arguments, and a boxed caller's stack may own them alone.
  void inputs(Tensors& owned, Operands& in) const override {
    gather(first(), first() + args_, owned);
    for (const at::Tensor& t : owned) in.push_back(&t);
  }
  bool argument_given(int index) const override { return !first()[index].isNone(); }
  void outputs(Tensors& owned, Operands& out) const override {
    operands_of(first_result(), stack_->data() + stack_->size(), owned, out);
  }
  bool output_not_channels_last(bool ambiguous) const override {
    return any_tensor(first_result(), stack_->data() + stack_->size(),
                      [ambiguous](const at::Tensor& t) { return not_channels_last(t, ambiguous); });
  }
  const c10::OperatorHandle& handle() const override { return op_; }
  ::torch::jit::Stack boxed_arguments() const override { return ::torch::jit::Stack(first(), first() + args_); }

 private:
  // The first argument: valid before redispatch() pops them.
  const c10::IValue* first() const { return stack_->data() + stack_->size() - args_; }
  // The first result: valid after redispatch().
  const c10::IValue* first_result() const { return stack_->data() + stack_->size() - op_.schema().returns().size(); }

  const c10::OperatorHandle& op_;
  c10::DispatchKeySet keys_;
  ::torch::jit::Stack* stack_;
  size_t args_;
};

}  // namespace

void intercept_boxed(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) {
  BoxedCall call(op, keys, stack);
  intercept(call);
}

}  // namespace lg::torch_bridge

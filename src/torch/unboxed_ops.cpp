// Unboxed kernels on the bridge's key for the ops a CNN training step calls most. The boxed
// fallback serves every op, but boxing is most of its cost: a convolution's arguments become
// IValues, its int lists heap-allocated lists, before the check has read a stride. These
// kernels take the op's C++ arguments as the dispatcher passes them, hand the same check
// (intercept(), through InterceptedCall) views of them, and redispatch unboxed. Which ops: the
// most called ones of a ResNet-50 training step, with and without CUDA and autocast
// (bench/torch_overhead.py --op-counts), and the multi-tensor ops of the optimizers' steps; the
// list only makes a call cheaper, never decides whether it is checked.
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <ATen/ops/_adaptive_avg_pool2d_backward_ops.h>
#include <ATen/ops/_adaptive_avg_pool2d_ops.h>
#include <ATen/ops/_batch_norm_impl_index_ops.h>
#include <ATen/ops/_convolution_ops.h>
#include <ATen/ops/_foreach_abs_ops.h>
#include <ATen/ops/_foreach_add_ops.h>
#include <ATen/ops/_foreach_div_ops.h>
#include <ATen/ops/_foreach_mul_ops.h>
#include <ATen/ops/_foreach_norm_ops.h>
#include <ATen/ops/_foreach_sqrt_ops.h>
#include <ATen/ops/_foreach_sub_ops.h>
#include <ATen/ops/_local_scalar_dense_ops.h>
#include <ATen/ops/_log_softmax_backward_data_ops.h>
#include <ATen/ops/_log_softmax_ops.h>
#include <ATen/ops/_slow_conv2d_backward_ops.h>
#include <ATen/ops/_slow_conv2d_forward_ops.h>
#include <ATen/ops/_to_copy_ops.h>
#include <ATen/ops/_unsafe_view_ops.h>
#include <ATen/ops/adaptive_avg_pool2d_ops.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/addmm_ops.h>
#include <ATen/ops/batch_norm_ops.h>
#include <ATen/ops/clamp_min_ops.h>
#include <ATen/ops/clone_ops.h>
#include <ATen/ops/contiguous_ops.h>
#include <ATen/ops/conv2d_ops.h>
#include <ATen/ops/convolution_backward_ops.h>
#include <ATen/ops/convolution_ops.h>
#include <ATen/ops/copy_ops.h>
#include <ATen/ops/cross_entropy_loss_ops.h>
#include <ATen/ops/cudnn_batch_norm_backward_ops.h>
#include <ATen/ops/cudnn_batch_norm_ops.h>
#include <ATen/ops/cudnn_convolution_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/empty_like_ops.h>
#include <ATen/ops/flatten_ops.h>
#include <ATen/ops/item_ops.h>
#include <ATen/ops/linear_ops.h>
#include <ATen/ops/log_softmax_ops.h>
#include <ATen/ops/max_pool2d_ops.h>
#include <ATen/ops/max_pool2d_with_indices_backward_ops.h>
#include <ATen/ops/max_pool2d_with_indices_ops.h>
#include <ATen/ops/mean_ops.h>
#include <ATen/ops/mkldnn_convolution_ops.h>
#include <ATen/ops/mm_ops.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/native_batch_norm_backward_ops.h>
#include <ATen/ops/native_batch_norm_ops.h>
#include <ATen/ops/nll_loss_backward_ops.h>
#include <ATen/ops/nll_loss_forward_ops.h>
#include <ATen/ops/nll_loss_nd_ops.h>
#include <ATen/ops/nll_loss_ops.h>
#include <ATen/ops/ones_like_ops.h>
#include <ATen/ops/relu_ops.h>
#include <ATen/ops/reshape_ops.h>
#include <ATen/ops/resize_as_ops.h>
#include <ATen/ops/resize_ops.h>
#include <ATen/ops/sub_ops.h>
#include <ATen/ops/sum_ops.h>
#include <ATen/ops/thnn_conv2d_ops.h>
#include <ATen/ops/threshold_backward_ops.h>
#include <ATen/ops/to_ops.h>
#include <ATen/ops/zeros_like_ops.h>
// Torch 2.x's CPU batch norm (its evaluation form from 2.1 on); 1.13 has native_batch_norm only.
#if __has_include(<ATen/ops/_native_batch_norm_legit_ops.h>)
#include <ATen/ops/_native_batch_norm_legit_ops.h>
#define LG_TORCH_HAS_NATIVE_BATCH_NORM_LEGIT 1
#endif
#if __has_include(<ATen/ops/_native_batch_norm_legit_no_training_ops.h>)
#include <ATen/ops/_native_batch_norm_legit_no_training_ops.h>
#define LG_TORCH_HAS_NATIVE_BATCH_NORM_LEGIT_NO_TRAINING 1
#endif

#include "torch/aten_policy.h"
#include "torch/dispatch_key.h"
#include "torch/intercepted_call.h"
#include "torch/op_table.h"
#include "torch/unboxed_ops.h"

namespace lg::torch_bridge {
namespace {

// ---- The arguments, in the boxed call's terms ----
// A Tensor argument is an input; a Tensor? one when present; a Tensor[] each element. The
// arguments of other types hold no tensor: the ops listed below take no other kind.

template <typename F>
bool visit_input(const at::Tensor& t, F& f) {
  return f(t);
}
template <typename F>
bool visit_input(const c10::optional<at::Tensor>& t, F& f) {
  return t.has_value() && f(*t);
}
template <typename F>
bool visit_input(at::TensorList list, F& f) {
  for (const at::Tensor& t : list)
    if (f(t)) return true;
  return false;
}
template <typename T, typename F>
bool visit_input(const T&, F&) {
  return false;
}

// A MemoryFormat? argument counts as given when present; any other argument always is (the
// boxed call's "not None").
template <typename T>
bool is_given(const c10::optional<T>& v) {
  return v.has_value();
}
template <typename T>
bool is_given(const T&) {
  return true;
}

// ---- The results ----

template <typename T, typename F>
void visit_output(const T&, F&) {}
template <typename F>
void visit_output(const at::Tensor& t, F& f) {
  f(t);
}
template <typename F>
void visit_output(const std::vector<at::Tensor>& list, F& f) {
  for (const at::Tensor& t : list) f(t);
}
template <typename... Ts, typename F>
void visit_output(const std::tuple<Ts...>& results, F& f) {
  std::apply([&](const auto&... r) { (visit_output(r, f), ...); }, results);
}

// The result of the redispatch, kept until the kernel returns it: a value, a reference (an
// in-place op's self), or nothing.
template <typename R>
struct Result {
  std::optional<R> value;
  template <typename Run>
  void set(Run&& run) { value.emplace(run()); }
  const R* get() const { return value ? &*value : nullptr; }
  R take() { return std::move(*value); }
};
template <typename R>
struct Result<R&> {
  R* value = nullptr;
  template <typename Run>
  void set(Run&& run) { value = &run(); }
  const R* get() const { return value; }
  R& take() { return *value; }
};
template <>
struct Result<void> {
  template <typename Run>
  void set(Run&& run) { run(); }
  const int* get() const { return nullptr; }
  void take() {}
};

// ---- The kernel ----

template <typename Op, typename Schema = typename Op::schema>
struct Unboxed;

template <typename Op, typename Ret, typename... Args>
struct Unboxed<Op, Ret(Args...)> {
  static inline const OpEntry* entry = nullptr;  // set when the kernel is registered
  static inline std::optional<c10::OperatorHandle> handle;  // likewise

  class Call final : public InterceptedCall {
   public:
    // The arguments are the caller's, borrowed: they outlive the call.
    Call(c10::DispatchKeySet keys, std::remove_reference_t<Args>&... args)
        : InterceptedCall(*Unboxed::entry, true), keys_(keys), args_(args...) {}

    void redispatch() override {
      result_.set([&]() -> decltype(auto) {
        return std::apply([&](auto&... a) -> decltype(auto) { return Op::redispatch(keys_below(keys_), a...); },
                          args_);
      });
    }
    bool sets_expectation(Counting counting) const override {
      auto expects = [counting](const at::Tensor& t) { return torch_bridge::sets_expectation(t, counting); };
      return std::apply([&](const auto&... a) { return (visit_input(a, expects) || ...); }, args_);
    }
    // Borrowed: the caller holds the arguments until the kernel returns.
    void inputs(Tensors&, Operands& in) const override {
      auto push = [&](const at::Tensor& t) {
        in.push_back(&t);
        return false;
      };
      std::apply([&](const auto&... a) { (visit_input(a, push), ...); }, args_);
    }
    bool argument_given(int index) const override {
      int i = 0;
      bool given = false;
      std::apply([&](const auto&... a) { ((given = i++ == index ? is_given(a) : given), ...); }, args_);
      return given;
    }
    void outputs(Tensors&, Operands& out) const override {
      if (const auto* r = result_.get()) {
        auto push = [&](const at::Tensor& t) { out.push_back(&t); };
        visit_output(*r, push);
      }
    }
    bool output_not_channels_last(bool ambiguous) const override {
      bool found = false;
      if (const auto* r = result_.get()) {
        auto test = [&](const at::Tensor& t) { found = found || not_channels_last(t, ambiguous); };
        visit_output(*r, test);
      }
      return found;
    }
    const c10::OperatorHandle& handle() const override { return *Unboxed::handle; }
    ::torch::jit::Stack boxed_arguments() const override {
      ::torch::jit::Stack stack;
      stack.reserve(sizeof...(Args));
      std::apply([&](const auto&... a) { ::torch::jit::push(stack, a...); }, args_);
      return stack;
    }
    Ret take() { return result_.take(); }

   private:
    c10::DispatchKeySet keys_;
    std::tuple<std::remove_reference_t<Args>&...> args_;
    Result<Ret> result_;
  };

  static Ret kernel(c10::DispatchKeySet keys, Args... args) {
    Call call(keys, args...);
    intercept(call);
    return call.take();
  }
};

template <typename Op>
void register_unboxed(::torch::Library& aten, c10::Dispatcher& dispatcher) {
  const auto op = dispatcher.findSchema({Op::name, Op::overload_name});
  if (!op) return;  // not in this build: nothing calls it
  if (passes_by_key(*op)) return;  // the key lets it pass by (it has a fall-through kernel)
  Unboxed<Op>::entry = &op_entry(*op);
  Unboxed<Op>::handle = *op;
  std::string name = Op::name + std::strlen("aten::");
  if (*Op::overload_name != '\0') name = name + "." + Op::overload_name;
  aten.impl(name.c_str(), ::torch::CppFunction::makeFromUnboxedFunction(TORCH_FN(Unboxed<Op>::kernel)));
}

template <typename... Ops>
void register_all(::torch::Library& aten, c10::Dispatcher& dispatcher) {
  (register_unboxed<Ops>(aten, dispatcher), ...);
}

}  // namespace

void register_unboxed_ops() {
  namespace o = at::_ops;
  // Never destroyed: the kernels must outlive every op of the process.
  static auto* aten = new ::torch::Library(::torch::Library::IMPL, "aten", kKey, __FILE__, __LINE__);
  c10::Dispatcher& d = c10::Dispatcher::singleton();
  // Convolution, batch norm and activations, forward and backward; CUDA's cuDNN and the CPU's
  // (oneDNN, or the im2col path that it takes for 1x1 kernels, small images and bfloat16).
  // Views and in-place ops of self (detach, view, t, add_, relu_...) are not here: the key
  // lets them pass by (passes_by_key), and register_unboxed skips any that would.
  register_all<o::conv2d, o::convolution, o::_convolution, o::cudnn_convolution, o::mkldnn_convolution,
               o::thnn_conv2d, o::_slow_conv2d_forward, o::_slow_conv2d_backward_output_mask, o::resize_as_,
               o::convolution_backward, o::batch_norm, o::_batch_norm_impl_index, o::cudnn_batch_norm,
               o::cudnn_batch_norm_backward, o::native_batch_norm, o::native_batch_norm_backward, o::relu,
               o::clamp_min, o::threshold_backward>(*aten, d);
#ifdef LG_TORCH_HAS_NATIVE_BATCH_NORM_LEGIT
  register_all<o::_native_batch_norm_legit>(*aten, d);
#endif
#ifdef LG_TORCH_HAS_NATIVE_BATCH_NORM_LEGIT_NO_TRAINING
  register_all<o::_native_batch_norm_legit_no_training>(*aten, d);
#endif
  // Pooling, the classifier head and its loss, residual adds.
  register_all<o::max_pool2d, o::max_pool2d_with_indices, o::max_pool2d_with_indices_backward,
               o::adaptive_avg_pool2d, o::_adaptive_avg_pool2d, o::_adaptive_avg_pool2d_backward, o::mean_dim,
               o::sum, o::sum_dim_IntList, o::linear, o::addmm, o::mm, o::cross_entropy_loss, o::log_softmax_int,
               o::_log_softmax, o::_log_softmax_backward_data, o::nll_loss, o::nll_loss_nd, o::nll_loss_forward,
               o::nll_loss_backward, o::add_Tensor, o::sub_Tensor, o::mul_Tensor, o::mul_Scalar,
               o::div_Tensor>(*aten, d);
  // Shape changes composed of other ops.
  register_all<o::_unsafe_view, o::reshape, o::flatten_using_ints>(*aten, d);
  // Casts, copies and fills: autocast's, the optimizer's, and those inside other kernels.
  register_all<o::to_dtype, o::to_dtype_layout, o::to_device, o::to_other, o::_to_copy, o::copy_, o::contiguous,
               o::clone, o::empty_like, o::zeros_like, o::ones_like, o::resize_>(*aten, d);
  // The multi-tensor ops that return new lists, which the optimizers' foreach steps (Adam's
  // _foreach_sqrt; 1.13's _foreach_add) and clip_grad_norm_ (_foreach_norm) call once per step
  // over every parameter: boxed, each list is copied into the stack and out again. Those that
  // update their lists in place pass the key by.
  register_all<o::_foreach_sqrt, o::_foreach_abs, o::_foreach_norm_Scalar, o::_foreach_add_List, o::_foreach_add_Scalar,
               o::_foreach_add_ScalarList, o::_foreach_sub_List, o::_foreach_sub_Scalar, o::_foreach_mul_List,
               o::_foreach_mul_Scalar, o::_foreach_mul_ScalarList, o::_foreach_div_List, o::_foreach_div_Scalar,
               o::_foreach_div_ScalarList>(*aten, d);
  // A tensor's value read as a number: the optimizers' per-parameter step counts (Adam's bias
  // corrections read each one), the GradScaler's. Nothing to check, but each call takes a tensor.
  register_all<o::item, o::_local_scalar_dense>(*aten, d);
}

}  // namespace lg::torch_bridge

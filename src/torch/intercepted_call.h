// One ATen call at the bridge's dispatch key, as the check sees it: the same check serves the
// boxed fallback (every op) and the unboxed kernels of the hottest ops (unboxed_ops.cpp), which
// skip boxing the arguments.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/util/SmallVector.h>
#include <torch/version.h>

namespace c10 {
class OperatorHandle;
}

namespace lg::torch_bridge {

struct OpEntry;

// Most ops have at most a few tensors: no allocation for them.
using Tensors = c10::SmallVector<at::Tensor, 6>;
// The operands a check reads: handles borrowed from the call, or owned by a Tensors.
using Operands = c10::SmallVector<const at::Tensor*, 6>;

enum class Class { NotApplicable, ChannelsLast, Other, Ambiguous };

// The wrappers of vmap and of torch.func's other transforms (grad, jacrev...): a batched
// tensor's sizes and strides are one sample's, and PyTorch raises when asked whether one is
// channels-last; a transform's wrapper repeats the logical strides of what it wraps, a batched
// tensor's too, where a size-1 dim's stride need not fit any format. None is read: the
// transforms run the ops on the real tensors below the bridge's key, as nested calls.
inline constexpr c10::DispatchKeySet kTransformWrapperKeys =
    c10::DispatchKeySet(c10::DispatchKey::FuncTorchBatched) | c10::DispatchKeySet(c10::DispatchKey::Batched) |
    c10::DispatchKeySet(c10::DispatchKey::FuncTorchGradWrapper)
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
    | c10::DispatchKeySet(c10::DispatchKey::BatchedNestedTensor)
#endif
    ;

// A tensor's strides policy, read through the protected accessors (a pointer to one, formed
// through a derived class, calls it on any TensorImpl).
struct StridesPolicy final : c10::TensorImpl {
  StridesPolicy() = delete;
  // Whether a tensor subclass answers for its own strides in Python (`_make_wrapper_subclass`
  // with `dispatch_sizes_strides_policy`): asking it whether it is channels-last runs its
  // __torch_dispatch__, which need not answer (and raises, in the user's program, where plain
  // PyTorch never asks).
  static bool python_custom(const c10::TensorImpl& impl) {
    return (impl.*&StridesPolicy::matches_python_custom)(SizesStridesPolicy::CustomStrides);
  }
  // Whether the TensorImpl computes its contiguity itself (in C++, as functionalization's
  // wrapper does, or in Python as above): only then are PyTorch's cached bits not the answer.
  static bool computes_own_contiguity(const c10::TensorImpl& impl) {
    return (impl.*&StridesPolicy::matches_policy)(SizesStridesPolicy::CustomStrides);
  }
};

// Not a nested tensor (its parts have sizes, it has none to ask), nor one of torch.func's
// wrappers: the part of readable() that the tensor's dispatch keys answer.
inline bool keys_allow_reading(const c10::TensorImpl& impl) {
  return !impl.is_nested() && !impl.key_set().has_any(kTransformWrapperKeys);
}

// Whether the bridge may read a tensor's sizes and strides: a defined, strided one whose
// strides are its own numbers. Not symbolic sizes (torch.compile's fake tensors while it
// traces), not a nested tensor or torch.func's wrappers, not a Python subclass that answers
// for its strides itself.
inline bool readable(const at::Tensor& t) {
  if (!t.defined()) return false;
  const c10::TensorImpl& impl = *t.unsafeGetTensorImpl();
  return impl.layout() == c10::kStrided && !impl.has_symbolic_sizes_strides() && keys_allow_reading(impl) &&
         !StridesPolicy::python_custom(impl);
}

// guard::classify in PyTorch's own terms (the same rule: layoutguard's predicates equal
// PyTorch's), and with it whether a tensor of class Other holds channels-last data all the
// same: a view set the stride of a size-1 dim (x[0].unsqueeze(0), the view_as of a full
// backward hook), so is_contiguous(channels_last) holds where suggest_memory_format() says
// contiguous, and the ops that follow the suggestion reorder the data (the guard's rule for
// such inputs, check.cpp). PyTorch caches each of these bits in the tensor, so both cost a
// few loads, read once for every input of every call.
struct Classified {
  Class layout = Class::NotApplicable;
  bool hides_channels_last = false;  // only for Other
};

// The rule over one tensor's contiguity bits, asked through `bits` (contiguous(format),
// strides_like(format)) for the channels-last format `cl` of its rank. suggest_memory_format()
// of a strided tensor of rank 4 or 5 asks exactly strides_like(cl). Ambiguous: contiguous both
// ways. Else ChannelsLast by the strides, else Other; an Other that is contiguous cannot be
// channels-last contiguous too, so only a tensor that is neither asks for the third bit (a
// channels-last one reads two). Always inlined: out of line, the cached readers would test
// again what classify_in_full has already ruled out (symbolic sizes).
template <typename Bits>
[[gnu::always_inline]] inline Classified classify_bits(const Bits& bits, c10::MemoryFormat cl) {
  if (bits.contiguous(c10::MemoryFormat::Contiguous)) {
    if (bits.contiguous(cl)) return {Class::Ambiguous};
    return {bits.strides_like(cl) ? Class::ChannelsLast : Class::Other};
  }
  if (bits.strides_like(cl)) return {Class::ChannelsLast};
  return {Class::Other, bits.contiguous(cl)};
}

// PyTorch's cached bits, read directly: the public predicates ask the strides policy before
// each one. Only for a tensor whose policy is the default (no symbolic sizes, no custom
// strides), where the *_default readers read and never compute.
struct CachedBits {
  const c10::TensorImpl& impl;
  bool contiguous(c10::MemoryFormat f) const { return impl.is_contiguous_default(f); }
  bool strides_like(c10::MemoryFormat f) const { return impl.is_strides_like_default(f); }
};

// Everything but the common case below, out of line so that the common case stays a few cache
// lines of code: an undefined tensor, and one whose strides policy is not the default (a
// TensorImpl or Python subclass that computes its own contiguity, symbolic sizes).
// intercepted_call.cpp.
[[gnu::cold]] Classified classify_uncommon(const at::Tensor& t);

// Read for every input of every call, and for the outputs of calls with a channels-last
// input. The common case, a strided tensor with the default policy, is a few loads and no call:
// the layout, whose custom form is a virtual call, is asked last, so that the bits are read
// with what is known of the policy.
inline Classified classify_in_full(const at::Tensor& t) {
  const c10::TensorImpl& impl = *t.unsafeGetTensorImpl();
  if (C10_UNLIKELY(!t.defined() || StridesPolicy::computes_own_contiguity(impl) || impl.has_symbolic_sizes_strides()))
    return classify_uncommon(t);
  // The rest of readable() (a Python subclass that answers for its strides has a custom
  // policy), the layout last.
  const int64_t rank = impl.dim();
  if ((rank != 4 && rank != 5) || !keys_allow_reading(impl)) return {};
  const Classified c =
      classify_bits(CachedBits{impl}, rank == 4 ? c10::MemoryFormat::ChannelsLast : c10::MemoryFormat::ChannelsLast3d);
  if (C10_UNLIKELY(impl.layout() != c10::kStrided)) return {};  // sparse, mkldnn: the bits mean nothing
  return c;
}

inline Class classify(const at::Tensor& t) { return classify_in_full(t).layout; }

// Which inputs set an expectation beside channels-last ones, by the options.
struct Counting {
  bool ambiguous = false;  // ambiguous ones (ambiguous=check)
  bool hidden = false;     // those that hide channels-last data (hidden_views=1)
};

// An input that is channels-last, or ambiguous or hiding channels-last data where those count:
// the only inputs that set an expectation.
inline bool sets_expectation(const at::Tensor& t, Counting counting) {
  const Classified c = classify_in_full(t);
  return c.layout == Class::ChannelsLast || (c.layout == Class::Ambiguous && counting.ambiguous) ||
         (c.hides_channels_last && counting.hidden);
}

// An output that is not channels-last, ambiguous ones counting under ambiguous=check.
inline bool not_channels_last(const at::Tensor& out, bool ambiguous) {
  const Class c = classify(out);
  return c == Class::Other || (c == Class::Ambiguous && ambiguous);
}

// What the check needs of a call. The argument visits follow the schema's order: a Tensor, a
// present Tensor?, each element of a Tensor[].
class InterceptedCall {
 public:
  // The op's policy and call count.
  const OpEntry& entry() const { return entry_; }
  // Whether inputs() and argument_given() may still be asked after redispatch(): an unboxed
  // call borrows its caller's arguments; a boxed op pops its own off the stack.
  bool arguments_outlive_call() const { return arguments_outlive_call_; }
  // Runs the rest of the op's dispatch: the keys below the bridge's.
  virtual void redispatch() = 0;
  // Whether an input tensor sets an expectation, as `counting` says (reads the arguments in
  // place).
  virtual bool sets_expectation(Counting counting) const = 0;
  // The input tensors, valid until the call returns (the boxed call copies them into `owned`:
  // the op pops them off its stack).
  virtual void inputs(Tensors& owned, Operands& in) const = 0;
  // Whether argument `index` (a MemoryFormat?) was given.
  virtual bool argument_given(int index) const = 0;
  // The result tensors, after redispatch().
  virtual void outputs(Tensors& owned, Operands& out) const = 0;
  // Whether a result tensor is not channels-last, ambiguous ones counting or not, after
  // redispatch(): the only kind that can have lost the format. Read in place.
  virtual bool output_not_channels_last(bool ambiguous) const = 0;
  // shadow=1 (shadow_run.h): the op, and its arguments as a boxed call has them, asked before
  // redispatch().
  virtual const c10::OperatorHandle& handle() const = 0;
  virtual ::torch::jit::Stack boxed_arguments() const = 0;

 protected:
  // Data, not virtual functions: each would be a call, and a function of its own in every
  // unboxed kernel's code, for what the kernel knows when it makes the call.
  InterceptedCall(const OpEntry& entry, bool arguments_outlive_call)
      : entry_(entry), arguments_outlive_call_(arguments_outlive_call) {}
  ~InterceptedCall() = default;

 private:
  const OpEntry& entry_;
  bool arguments_outlive_call_;
};

// Runs and checks one call on the calling thread, in the thread's mode (interceptor.cpp).
void intercept(InterceptedCall& call);

// The key's boxed fallback: intercept() over the op's stack (the ops without unboxed kernels).
void intercept_boxed(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack);

// Whether an intercepted call runs on this thread now: a call that passes the key by is then
// one of its nested calls, not the user's.
bool inside_intercepted_call();

// Whether option forward_calls holds for a user-level call of this thread now: switched on, in
// a mode other than off (its Scope's, the one carried to it, or the process's), and the
// settings read without error.
bool forward_calls_on();

}  // namespace lg::torch_bridge

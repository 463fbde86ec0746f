// The rerun and the comparison of shadow=1 (see shadow_run.h).
#include "torch/shadow_run.h"

#include <cmath>
#include <cstring>
#include <mutex>
#include <string>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include "guard/shadow.h"
#include "torch/dispatch_key.h"
#include "torch/stand_in.h"

namespace lg::torch_bridge {
namespace {

// A tensor whose values the rerun can copy and the comparison read.
bool comparable(const at::Tensor& t) {
  if (!t.defined()) return true;
  if (!readable(t) || !(t.is_cpu() || t.is_cuda())) return false;
  // A Python subclass (FakeTensor included) answers for its own ops.
  if (t.unsafeGetTensorImpl()->key_set().has(c10::DispatchKey::Python)) return false;
  return !t.is_quantized() && !at::isComplexType(t.scalar_type());
}

// A tensor argument for the rerun: a contiguous copy, detached (no autograd graph is built for
// the rerun). Every tensor is copied: the rerun must never write the caller's tensors, and a
// composite op's schema does not say which it writes (batch_norm's running statistics).
at::Tensor copy_for_rerun(const at::Tensor& t) {
  return t.defined() ? t.detach().clone(at::MemoryFormat::Contiguous) : t;
}

// The flattened tensors of a run of IValues, in InterceptedCall::outputs' order: a Tensor, each
// element of a Tensor[] and each tensor of a Tensor?[].
void flatten(const ::torch::jit::Stack& values, Tensors& out) {
  for (const c10::IValue& v : values) {
    if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) out.push_back(t);
    } else if (v.isList()) {
      for (const c10::IValue& e : v.toListRef())
        if (e.isTensor()) out.push_back(e.toTensor());
    }
  }
}

// The tolerance of a result's dtype. On CUDA a float32 result is held to float16's: cuDNN's
// convolutions run in TF32, with float16's 10-bit mantissa, unless the program turns that off,
// and the two layouts take different algorithms.
std::pair<guard::detail::ShadowTolerance, std::string> tolerance_of(const at::Tensor& t) {
  const std::optional<DType> dtype = lg_dtype_of(t.scalar_type());
  const std::string name = dtype ? std::string(dtype_name(*dtype)) : std::string(c10::toString(t.scalar_type()));
  if (t.is_cuda() && t.scalar_type() == at::kFloat)
    return {guard::detail::shadow_tolerance(kFloat16), "float32 on cuda (TF32)"};
  if (!dtype) return {{0.0, 0.0}, name};
  return {guard::detail::shadow_tolerance(*dtype), name};
}

std::string sizes_and_dtype(const at::Tensor& t) {
  std::string text = "(";
  for (size_t i = 0; i < t.sizes().size(); ++i) text += (i ? "," : "") + std::to_string(t.sizes()[i]);
  return text + ") " + std::string(c10::toString(t.scalar_type()));
}

// How `got` differs from `want`, the rerun's result, if it does beyond the tolerance.
std::optional<ShadowDifference> difference(const at::Tensor& got, const at::Tensor& want, size_t output) {
  if (got.defined() != want.defined())
    return ShadowDifference{output, INFINITY, got.defined() ? "a tensor vs none" : "none vs a tensor"};
  if (!got.defined() || !comparable(got) || !comparable(want)) return std::nullopt;
  if (got.sizes() != want.sizes() || got.scalar_type() != want.scalar_type())
    return ShadowDifference{output, INFINITY, "sizes/dtype " + sizes_and_dtype(got) + " vs " + sizes_and_dtype(want)};
  if (got.numel() == 0) return std::nullopt;
  const auto [tolerance, tolerance_name] = tolerance_of(got);
  const at::Tensor a = got.to(at::kDouble).reshape({-1}), b = want.to(at::kDouble).reshape({-1});
  at::Tensor bad;
  if (at::isFloatingType(got.scalar_type())) {
    const at::Tensor diff = (a - b).abs();
    // NaN against NaN agrees, and so do equal infinities (whose difference is NaN); an
    // infinity against anything else does not (its bound is infinite too).
    bad = diff.gt(b.abs().mul(tolerance.rtol).add(tolerance.atol)) | (a.isnan() != b.isnan()) |
          (a.ne(b) & (a.isinf() | b.isinf()) & ~(a.isnan() | b.isnan()));
  } else {
    bad = got.ne(want).reshape({-1});  // exact, in the dtype itself (int64 beyond 2^53)
  }
  if (!bad.any().item<bool>()) return std::nullopt;
  const at::Tensor ranked = at::where(bad, (a - b).abs().nan_to_num(INFINITY, INFINITY), at::full({}, -1.0, a.options()));
  const int64_t at_index = ranked.argmax().item<int64_t>();
  const double largest = ranked[at_index].item<double>();
  return ShadowDifference{output, largest,
                          guard::detail::shadow_difference_text(largest, at_index, a[at_index].item<double>(),
                                                                b[at_index].item<double>(), tolerance, tolerance_name)};
}

}  // namespace

ShadowRun::ShadowRun(const InterceptedCall& call) : op_(&call.handle()) {
  // The copies are the bridge's own ops: none comes back through the key as the user's.
  c10::impl::ExcludeDispatchKeyGuard unseen(kKey);
  const ::torch::jit::Stack arguments = call.boxed_arguments();
  bool on_cuda[64] = {};
  copies_.reserve(arguments.size());
  for (size_t i = 0; i < arguments.size() && active_; ++i) {
    const c10::IValue& v = arguments[i];
    const auto take = [&](const at::Tensor& t) {
      if (!comparable(t)) {
        active_ = false;
        return t;
      }
      if (t.defined()) {
        inputs_.push_back(t);
        if (t.is_cuda() && t.get_device() >= 0 && t.get_device() < 64) on_cuda[t.get_device()] = true;
      }
      return copy_for_rerun(t);
    };
    if (v.isTensor()) {
      copies_.emplace_back(take(v.toTensor()));
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> list;
      for (const at::Tensor& t : v.toTensorList()) list.push_back(take(t));
      copies_.emplace_back(std::move(list));
    } else if (v.isList()) {
      c10::impl::GenericList list(v.toList().elementType());
      for (const c10::IValue& e : v.toListRef()) list.push_back(e.isTensor() ? c10::IValue(take(e.toTensor())) : e);
      copies_.emplace_back(std::move(list));
    } else if (v.isGenerator()) {
      active_ = false;  // the caller's own random stream: the rerun would draw from it again
    } else {
      copies_.push_back(v);
    }
  }
  if (!active_) return;
  // The default generators the call may draw from: the cpu's and those of its cuda devices.
  try {
    generators_.push_back({at::globalContext().defaultGenerator(c10::Device(c10::kCPU)), {}});
    for (int d = 0; d < 64; ++d)
      if (on_cuda[d]) generators_.push_back({at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, d)), {}});
    for (GeneratorState& g : generators_) {
      std::lock_guard<std::mutex> lock(g.generator.mutex());
      g.state = g.generator.get_state();
    }
  } catch (const std::exception&) {
    active_ = false;  // a generator that cannot say its state (one being captured in a CUDA graph)
  }
}

bool ShadowRun::generators_moved() {
  for (GeneratorState& g : generators_) {
    at::Tensor now;
    {
      std::lock_guard<std::mutex> lock(g.generator.mutex());
      now = g.generator.get_state();
    }
    if (now.nbytes() != g.state.nbytes() || std::memcmp(now.data_ptr(), g.state.data_ptr(), now.nbytes()) != 0)
      return true;
  }
  return false;
}

std::optional<ShadowDifference> ShadowRun::compare(const Operands& got) {
  c10::impl::ExcludeDispatchKeyGuard unseen(kKey);
  if (!active_) return std::nullopt;
  try {
    if (generators_moved()) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  ::torch::jit::Stack stack = std::move(copies_);
  try {
    op_->callBoxed(&stack);
  } catch (const std::exception&) {
    return std::nullopt;  // the op refuses contiguous arguments: nothing to compare with
  }
  Tensors want;
  flatten(stack, want);
  if (want.size() != got.size())
    return ShadowDifference{0, INFINITY,
                            std::to_string(got.size()) + " outputs vs " + std::to_string(want.size()) + " of the rerun"};
  for (size_t i = 0; i < got.size(); ++i)
    if (std::optional<ShadowDifference> d = difference(*got[i], want[i], i)) return d;
  return std::nullopt;
}

}  // namespace lg::torch_bridge

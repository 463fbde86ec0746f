// The rerun and the comparison of shadow=1 (see shadow_run.h).
#include "torch/shadow_run.h"

#include <cmath>
#include <cstring>
#include <mutex>
#include <string>

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include "guard/shadow.h"
#include "torch/dispatch_key.h"
#include "torch/stand_in.h"

namespace lg::torch_bridge {
namespace {

// How many times the contiguous path's distance from the float64 result a result may be and
// still count as rounding: a wrong index is off by the values themselves, far beyond.
constexpr double kRoundingFactor = 8.0;

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

struct Tolerance {
  guard::detail::ShadowTolerance bound;
  std::string of;  // what it is the tolerance of, for the message
};

// The guard's tolerance for a tensor's dtype. On CUDA float32 is held to float16's: cuDNN runs
// float32 convolutions in TF32, with float16's 10-bit mantissa, unless the program turns that
// off, and the two layouts take different algorithms.
Tolerance tolerance_of_dtype(const at::Tensor& t) {
  const std::optional<DType> dtype = lg_dtype_of(t.scalar_type());
  const std::string name = dtype ? std::string(dtype_name(*dtype)) : std::string(c10::toString(t.scalar_type()));
  if (t.is_cuda() && t.scalar_type() == at::kFloat) return {guard::detail::shadow_tolerance(kFloat16), "float32 on cuda (TF32)"};
  if (!dtype) return {{0.0, 0.0}, name};
  return {guard::detail::shadow_tolerance(*dtype), name};
}

// A floating result is computed no more precisely than its least precise floating input: an
// autocast op's float32 statistics of bfloat16 data are held to bfloat16's tolerance.
Tolerance tolerance_of(const at::Tensor& result, const Tensors& inputs) {
  Tolerance loosest = tolerance_of_dtype(result);
  if (!at::isFloatingType(result.scalar_type())) return loosest;
  for (const at::Tensor& t : inputs) {
    if (!at::isFloatingType(t.scalar_type())) continue;
    Tolerance input = tolerance_of_dtype(t);
    if (input.bound.rtol > loosest.bound.rtol) loosest = {input.bound, input.of + " (an input's)"};
  }
  return loosest;
}

std::string sizes_and_dtype(const at::Tensor& t) {
  std::string text = "(";
  for (size_t i = 0; i < t.sizes().size(); ++i) text += (i ? "," : "") + std::to_string(t.sizes()[i]);
  return text + ") " + std::string(c10::toString(t.scalar_type()));
}

// Whether every element of `a` lies within the bound of `b`'s: one pass over both, in their
// own strides, stopping at the first that does not (a NaN or infinity ends the pass too, for
// difference() to judge). The common case: a right kernel's result.
template <typename T>
bool within(const at::Tensor& a, const at::Tensor& b, guard::detail::ShadowTolerance tol) {
  const int64_t rank = a.dim();
  const T* pa = a.data_ptr<T>();
  const T* pb = b.data_ptr<T>();
  const auto sizes = a.sizes();
  const auto sa = a.strides(), sb = b.strides();
  c10::SmallVector<int64_t, 6> index(static_cast<size_t>(rank), 0);
  for (int64_t n = a.numel(); n > 0; --n) {
    const double x = static_cast<double>(*pa), y = static_cast<double>(*pb);
    if (!(std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(y))) return false;
    for (int64_t d = rank - 1; d >= 0; --d) {  // the next element in logical order
      pa += sa[d];
      pb += sb[d];
      if (++index[d] < sizes[d]) break;
      pa -= sa[d] * sizes[d];
      pb -= sb[d] * sizes[d];
      index[d] = 0;
    }
  }
  return true;
}

// The fast test of agreement: a loop on the CPU, a few kernels and one number read on CUDA.
bool agrees(const at::Tensor& got, const at::Tensor& want, guard::detail::ShadowTolerance tol) {
  if (!at::isFloatingType(got.scalar_type())) return at::equal(got, want);
  if (got.is_cpu() && want.is_cpu()) {
    bool ok = false;
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, got.scalar_type(), "layoutguard shadow",
                                    [&] { ok = within<scalar_t>(got, want, tol); });
    return ok;
  }
  return (got - want).abs_().le_(want.abs().mul_(tol.rtol).add_(tol.atol)).all().item<bool>();
}

// How `got` differs from `want`, the rerun's result, if it does beyond the tolerance.
std::optional<ShadowDifference> difference(const at::Tensor& got, const at::Tensor& want, size_t output,
                                           const Tensors& inputs) {
  if (got.defined() != want.defined())
    return ShadowDifference{output, INFINITY, got.defined() ? "a tensor vs none" : "none vs a tensor"};
  if (!got.defined() || !comparable(got) || !comparable(want)) return std::nullopt;
  if (got.sizes() != want.sizes() || got.scalar_type() != want.scalar_type())
    return ShadowDifference{output, INFINITY, "sizes/dtype " + sizes_and_dtype(got) + " vs " + sizes_and_dtype(want)};
  if (got.numel() == 0) return std::nullopt;
  const Tolerance tolerance_and_name = tolerance_of(got, inputs);
  const guard::detail::ShadowTolerance tolerance = tolerance_and_name.bound;
  const std::string& tolerance_name = tolerance_and_name.of;
  if (agrees(got, want, tolerance)) return std::nullopt;
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

// The largest |a - b| over all elements, in float64; NaN counts as infinite.
double largest_difference(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().nan_to_num(INFINITY, INFINITY).max().item<double>();
}

// A floating argument for the float64 rerun: a contiguous float64 copy.
at::Tensor copy_in_float64(const at::Tensor& t) {
  if (!t.defined() || !at::isFloatingType(t.scalar_type())) return copy_for_rerun(t);
  return t.detach().to(at::kDouble, /*non_blocking=*/false, /*copy=*/true, at::MemoryFormat::Contiguous);
}

// The arguments with each tensor, also inside lists, replaced by copy(tensor).
::torch::jit::Stack copied_stack(const ::torch::jit::Stack& arguments, at::Tensor (*copy)(const at::Tensor&)) {
  ::torch::jit::Stack copies;
  copies.reserve(arguments.size());
  for (const c10::IValue& v : arguments) {
    if (v.isTensor()) {
      copies.emplace_back(copy(v.toTensor()));
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> list;
      for (const at::Tensor& t : v.toTensorList()) list.push_back(copy(t));
      copies.emplace_back(std::move(list));
    } else if (v.isList()) {
      c10::impl::GenericList list(v.toList().elementType());
      for (const c10::IValue& e : v.toListRef()) list.push_back(e.isTensor() ? c10::IValue(copy(e.toTensor())) : e);
      copies.emplace_back(std::move(list));
    } else {
      copies.push_back(v);
    }
  }
  return copies;
}

// Runs the op on `arguments` (consumed) and returns its flattened results; none when it
// refuses them.
std::optional<Tensors> run_on(const c10::OperatorHandle& op, ::torch::jit::Stack arguments) {
  try {
    op.callBoxed(&arguments);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  Tensors results;
  flatten(arguments, results);
  return results;
}

}  // namespace

ShadowRun::ShadowRun(const InterceptedCall& call) : op_(&call.handle()) {
  // The copies are the bridge's own ops: none comes back through the key as the user's.
  c10::impl::ExcludeDispatchKeyGuard unseen(kKey);
  const ::torch::jit::Stack arguments = call.boxed_arguments();
  bool on_cuda[64] = {};
  for (const c10::IValue& v : arguments) {
    if (v.isGenerator()) active_ = false;  // the caller's own random stream: a rerun would draw from it again
    const auto note = [&](const at::Tensor& t) {
      if (!comparable(t)) active_ = false;
      if (!t.defined()) return false;
      inputs_.push_back(t);
      if (t.is_cuda() && t.get_device() >= 0 && t.get_device() < 64) on_cuda[t.get_device()] = true;
      return false;
    };
    if (v.isTensor()) {
      note(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) note(t);
    } else if (v.isList()) {
      for (const c10::IValue& e : v.toListRef())
        if (e.isTensor()) note(e.toTensor());
    }
  }
  if (!active_) return;
  // Now: the call may write its arguments (batch norm's running statistics).
  copies_ = copied_stack(arguments, &copy_for_rerun);
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
  // None: the op refuses contiguous arguments, and there is nothing to compare with.
  const std::optional<Tensors> want = run_on(*op_, copies_);
  if (!want) return std::nullopt;
  if (want->size() != got.size())
    return ShadowDifference{0, INFINITY,
                            std::to_string(got.size()) + " outputs vs " + std::to_string(want->size()) + " of the rerun"};
  std::optional<Tensors> exact;  // the float64 rerun, once one output needs it
  for (size_t i = 0; i < got.size(); ++i) {
    std::optional<ShadowDifference> d = difference(*got[i], (*want)[i], i, inputs_);
    if (!d) continue;
    if (std::isinf(d->largest) || !at::isFloatingType(got[i]->scalar_type())) return d;
    // A long reduction (a weight's gradient, batch norm's sums) summed in another order can
    // differ by more than any per-element bound, wherever it cancels to near zero. The same
    // op in float64 tells rounding from a wrong value: the contiguous path's own distance from
    // it measures its rounding, and a right kernel's result is no more than a few times as far.
    // Its copies are made from the first rerun's, taken before the call: an argument that the
    // rerun wrote is one its outputs do not read back (batch norm's running statistics, in
    // training), and one copy of the arguments per call costs less than two.
    if (!exact) exact = run_on(*op_, copied_stack(copies_, &copy_in_float64));
    if (!exact || exact->size() != got.size() || !(*exact)[i].defined() ||
        (*exact)[i].sizes() != got[i]->sizes())
      return d;
    const double own_rounding = largest_difference((*want)[i], (*exact)[i]);
    const double distance = largest_difference(*got[i], (*exact)[i]);
    if (distance <= kRoundingFactor * own_rounding) continue;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "; %.3g from the float64 result, the contiguous path %.3g: more than %g times its rounding", distance,
                  own_rounding, kRoundingFactor);
    d->what += buf;
    return d;
  }
  return std::nullopt;
}

}  // namespace lg::torch_bridge

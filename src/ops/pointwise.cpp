// The pointwise ops' one infer step: validate the operands, promote the dtype, broadcast the
// shape, choose the output (fresh with TensorIterator's strides, in-place self, or out=),
// then hand broadcast operands of one dtype to the kernel of the device.
#include <layoutguard/pointwise.h>

#include <array>
#include <optional>
#include <span>
#include <vector>

#include <layoutguard/factories.h>
#include <layoutguard/type_promotion.h>

#include "core/tensor_internal.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"
#include "dispatch/pointwise_math.h"
#include "ops/scalar_operands.h"

namespace lg {
namespace {

using dispatch::OpId;
using dispatch::PointwiseParams;

using dispatch::DTypeRule;  // each op's rule is stated with its math (dispatch/pointwise_math.h)

// One operand: a tensor, or a Python-style scalar ("wrapped number").
struct Arg {
  Tensor tensor;
  std::optional<Scalar> scalar;
};

// How the result is delivered.
enum class Target { Fresh, InPlace, Out };

struct Call {
  Call(OpId op, std::vector<Arg> a, PointwiseParams p = {})
      : id(op), rule(dispatch::pointwise_rule(op)), args(std::move(a)), params(p) {}
  OpId id;
  DTypeRule rule;
  std::vector<Arg> args;
  PointwiseParams params;
  Target target = Target::Fresh;
  Tensor out;  // the out= tensor (Target::Out)
};

std::string_view name_of(const Call& c) { return dispatch::op_name(c.id); }

DType compute_dtype(const Call& c) {
  // Tensor operands of one dtype and no scalar (most calls) promote to that dtype; anything
  // else goes through result_type.
  const size_t begin = c.rule == DTypeRule::Where ? 1 : 0;
  bool one_dtype = begin < c.args.size();
  for (size_t i = begin; i < c.args.size() && one_dtype; ++i)
    one_dtype = !c.args[i].scalar && c.args[i].tensor.dtype() == c.args[begin].tensor.dtype();
  DType dt;
  if (one_dtype) {
    dt = c.args[begin].tensor.dtype();
  } else {
    std::vector<Tensor> tensors;
    std::vector<Scalar> scalars;
    for (size_t i = begin; i < c.args.size(); ++i)
      c.args[i].scalar ? scalars.push_back(*c.args[i].scalar) : tensors.push_back(c.args[i].tensor);
    dt = result_type(tensors, scalars);
  }
  const std::string_view op = name_of(c);
  switch (c.rule) {
    case DTypeRule::Numeric:
      LG_CHECK_TYPE(dt != kBool, "[", op, "] is not implemented for bool tensors; required a numeric dtype");
      break;
    case DTypeRule::FloatPromote:
      if (!is_floating_point(dt)) dt = kFloat32;
      break;
    case DTypeRule::FloatOnly:
      LG_CHECK_TYPE(is_floating_point(dt), "[", op, "] is not implemented for ", dt,
                    "; required a floating-point dtype (float32, float64, float16, bfloat16)");
      break;
    case DTypeRule::Any:
    case DTypeRule::Compare:
    case DTypeRule::Where: break;
  }
  return dt;
}

// The dtype the kernel writes: bool for comparisons, else the compute dtype.
DType kernel_out_dtype(const Call& c, DType compute) { return c.rule == DTypeRule::Compare ? kBool : compute; }

Tensor as_operand(const Arg& a, DType dt, Device device, IntArrayRef shape) {
  // A scalar operand converts like a tensor cast (u8 + 300 wraps, as in PyTorch), not with
  // fill_'s overflow check: it is made in a dtype that holds it exactly (int64, bool, or
  // float64 for a floating value) and cast below.
  const DType exact = a.scalar && a.scalar->is_floating_point() ? kFloat64 : a.scalar ? a.scalar->default_dtype() : dt;
  const auto convert = [&](Tensor t) {
    return t.dtype() != dt || t.device() != device ? t.to(TensorOptions().dtype(dt).device(device)) : t;
  };
  const auto make_scalar = [&] { return convert(full({}, *a.scalar, TensorOptions().dtype(exact).device(device))); };
  // On a device a scalar costs launches to make; it is made once per value (scalar_operands.h).
  Tensor t = !a.scalar          ? convert(a.tensor)
             : device.is_cpu() ? make_scalar()
                               : detail::cached_scalar_operand(*a.scalar, dt, device, make_scalar);
  // Already the broadcast shape: the operand itself. An expand would make an equal view
  // through the dispatcher, about a quarter of a small op's host time (bench/host_stub).
  if (t.sizes() == shape) return t;
  return t.expand(shape);
}

// layout::pointwise_output_strides from the operands' cached layout flags, for the common call
// whose tensor operands all have the result's shape (no broadcast, no scalar): the rule's fast
// path (contiguous, then channels-last, then equal dense strides) without walking any strides
// again. nullopt where the full rule must decide.
std::optional<std::vector<int64_t>> same_shape_output_strides(const Call& c, IntArrayRef shape) {
  bool all_contiguous = true, all_cl = true, all_dense_equal = true;
  const Tensor* first = nullptr;
  for (const Arg& a : c.args) {
    if (a.scalar || a.tensor.sizes() != shape || a.tensor.dim() == 0) return std::nullopt;
    const Tensor& t = a.tensor;
    if (!first) first = &t;
    all_contiguous = all_contiguous && t.is_contiguous();
    all_cl = all_cl && t.is_contiguous(MemoryFormat::ChannelsLast);
    all_dense_equal = all_dense_equal && t.is_non_overlapping_and_dense() && t.strides() == first->strides();
  }
  if (!first) return std::nullopt;
  if (all_contiguous) return layout::contiguous_strides(shape);
  if (all_cl) return layout::channels_last_strides(shape);
  if (all_dense_equal) return first->strides().vec();
  return std::nullopt;
}

// The result tensor for a call of `shape` and `dtype`, checking in-place and out= targets.
Tensor make_result(const Call& c, IntArrayRef shape, DType dtype, Device device) {
  const std::string_view op = name_of(c);
  if (c.target == Target::InPlace) {
    const Tensor& self = c.args[0].tensor;
    LG_CHECK(self.sizes() == shape, "[", op, "_] the output of shape ", self.sizes(),
             " does not match the broadcast shape ", shape, "; required operands that broadcast to self");
    LG_CHECK_TYPE(can_cast(dtype, self.dtype()), "[", op, "_] the result type ", dtype,
                  " cannot be cast to self's dtype ", self.dtype());
    return self;
  }
  if (c.target == Target::Out) {
    const Tensor& out = c.out;
    LG_CHECK(out.defined(), "[", op, "_out] received an undefined out tensor; required a tensor to write into");
    LG_CHECK(out.device() == device, "[", op, "_out] out is on ", out.device(), " but the operands are on ",
             device, "; required the same device");
    LG_CHECK_TYPE(can_cast(dtype, out.dtype()), "[", op, "_out] the result type ", dtype,
                  " cannot be cast to out's dtype ", out.dtype());
    if (out.sizes() == shape) return out;
    LG_CHECK(out.numel() == 0, "[", op, "_out] out has shape ", out.sizes(), " but the result has shape ",
             shape, "; required an empty out tensor (it is replaced) or one of the result's shape");
  }
  std::optional<std::vector<int64_t>> strides = same_shape_output_strides(c, shape);
  if (!strides) {
    std::vector<layout::Geometry> geometry;
    for (const Arg& a : c.args)
      geometry.push_back(a.scalar ? layout::Geometry{} : layout::Geometry{a.tensor.sizes(), a.tensor.strides()});
    strides = layout::pointwise_output_strides(geometry, op);
  }
  const DType out_dtype = c.target == Target::Out ? c.out.dtype() : dtype;
  return empty_strided(shape, *strides, TensorOptions().dtype(out_dtype).device(device));
}

// The body of every pointwise op: tensors are the call's tensor operands, in argument order.
std::vector<Tensor> compute(const Call& c, std::span<const Tensor> tensors) {
  // The call with `tensors` as its tensor operands: usually the call's own (a copy of the call
  // only when shadow mode passes copies).
  bool own_tensors = true;
  for (size_t i = 0, k = 0; i < c.args.size(); ++i)
    if (!c.args[i].scalar) own_tensors = own_tensors && c.args[i].tensor.is_same(tensors[k++]);
  std::optional<Call> replaced;
  if (!own_tensors) {
    replaced.emplace(c);
    for (size_t i = 0, k = 0; i < replaced->args.size(); ++i)
      if (!replaced->args[i].scalar) replaced->args[i].tensor = tensors[k++];
  }
  const Call& call = own_tensors ? c : *replaced;
  const std::string_view op = name_of(call);

  // The operands' device. As in PyTorch, a 0-dim CPU tensor may join tensors on a device (it
  // is a number that happens to be a tensor); every other operand must be on that device.
  const Tensor* first = nullptr;
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (call.args[i].scalar) continue;
    const Tensor& t = call.args[i].tensor;
    detail::check_defined(t, op, i == 0 ? "self" : "other");
    if (!first || (first->device().is_cpu() && first->dim() == 0 && !t.device().is_cpu())) first = &t;
  }
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (call.args[i].scalar) continue;
    const Tensor& t = call.args[i].tensor;
    const bool cpu_scalar = t.device().is_cpu() && t.dim() == 0;
    LG_CHECK(t.device() == first->device() || cpu_scalar, "[", op, "] operand ", i, " is on ", t.device(),
             " but another operand is on ", first->device(),
             "; required all operands on one device (a 0-dim CPU tensor may join any device)");
  }
  const Device device = first->device();
  detail::check_device_supported(device, op);
  if (call.rule == DTypeRule::Where)
    LG_CHECK_TYPE(call.args[0].tensor.dtype() == kBool, "[where] the condition has dtype ",
                  call.args[0].tensor.dtype(), "; required bool");

  const DType compute_dt = compute_dtype(call);
  const DType result_dt = kernel_out_dtype(call, compute_dt);
  // The broadcast shape: when every tensor operand has the same sizes (most calls), those,
  // without the two vectors broadcast_shapes makes (call.args keeps the sizes alive).
  const Tensor* lead = nullptr;
  bool same_sizes = true;
  for (const Arg& a : call.args) {
    if (a.scalar) continue;
    if (!lead) lead = &a.tensor;
    same_sizes = same_sizes && a.tensor.sizes() == lead->sizes();
  }
  std::vector<int64_t> broadcast;
  if (!lead || !same_sizes) {
    std::vector<IntArrayRef> shapes;
    for (const Arg& a : call.args)
      if (!a.scalar) shapes.push_back(a.tensor.sizes());
    broadcast = layout::broadcast_shapes(shapes, op);
  }
  const IntArrayRef shape = lead && same_sizes ? lead->sizes() : IntArrayRef(broadcast);
  Tensor result = make_result(call, shape, result_dt, device);
  detail::check_no_internal_overlap(result, op);

  // At most three operands (where); a fixed array, not a vector, on every call.
  LG_ASSERT(call.args.size() <= 3, "pointwise ops take at most three operands");
  std::array<Tensor, 3> operand_slots;
  size_t operand_count = 0;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const DType dt = call.rule == DTypeRule::Where && i == 0 ? kBool : compute_dt;
    Tensor t = as_operand(call.args[i], dt, device, shape);
    // Reading bytes the kernel is writing gives wrong values unless it is the same element
    // (in-place): copy a partially overlapping operand first.
    if (!t.is_same(result) && detail::ranges_overlap(result, t) &&
        !(t.sizes() == result.sizes() && t.strides() == result.strides() && t.storage_offset() == result.storage_offset()))
      t = t.clone();
    operand_slots[operand_count++] = std::move(t);
  }
  const std::span<const Tensor> operands(operand_slots.data(), operand_count);
  const dispatch::PointwiseKernel kernel = dispatch::pointwise_kernel_for(call.id, device);
  if (result.numel() > 0) {
    if (result.dtype() == result_dt) {
      kernel(result, operands, call.params);
    } else {  // out= or in-place of another dtype: compute, then cast into place
      Tensor tmp = empty_like(result, TensorOptions().dtype(result_dt));
      kernel(tmp, operands, call.params);
      result.copy_(tmp);
    }
    if (call.target != Target::Fresh) result.bump_version();
  }
  return {result};
}

Tensor run(Call c) {
  std::vector<Tensor> tensors;
  for (const Arg& a : c.args)
    if (!a.scalar) tensors.push_back(a.tensor);
  if (c.target == Target::Out) {
    // out= writes into a caller's tensor: a re-run would write there again, so no shadow.
    auto body = [&](std::span<const Tensor> in) { return compute(c, in); };
    return dispatch::run_op(dispatch::op_info(c.id), tensors, body, false)[0];
  }
  auto body = [&](std::span<const Tensor> in) { return compute(c, in); };
  return dispatch::run_op(dispatch::op_info(c.id), tensors, body, true)[0];
}

Call unary_call(OpId id, const Tensor& x, PointwiseParams p = {}) {
  return Call{id, {Arg{x, std::nullopt}}, p};
}

Call binary_call(OpId id, const Tensor& a, const Tensor& b, PointwiseParams p = {}) {
  return Call{id, {Arg{a, std::nullopt}, Arg{b, std::nullopt}}, p};
}

Call binary_call(OpId id, const Tensor& a, const Scalar& b, PointwiseParams p = {}) {
  return Call{id, {Arg{a, std::nullopt}, Arg{Tensor(), b}}, p};
}

Call in_place(Call c) {
  c.target = Target::InPlace;
  return c;
}

Tensor& out_call(Tensor& out, Call c) {
  c.target = Target::Out;
  c.out = out;
  out = run(std::move(c));
  return out;
}

// add/sub: alpha must not be floating for integral results (ATen's rule).
PointwiseParams alpha_params(std::string_view op, const Tensor& a, const Tensor* b, const Scalar& alpha) {
  const bool integral = a.defined() && !is_floating_point(a.dtype()) &&
                        (!b || (b->defined() && !is_floating_point(b->dtype())));
  LG_CHECK(!(integral && alpha.is_floating_point()), "[", op, "] received the floating alpha ", alpha,
           " for integral operands; required an integer alpha");
  PointwiseParams p;
  p.alpha = alpha.to_double();
  return p;
}

void check_not_bool_sub(const Tensor& a, const Tensor* b) {
  LG_CHECK_TYPE(!(a.defined() && a.dtype() == kBool && (!b || (b->defined() && b->dtype() == kBool))),
                "[sub] subtracting bool tensors is not supported; required numeric tensors "
                "(use logical ops for bool)");
}

PointwiseParams clamp_params(const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  LG_CHECK(min || max, "[clamp] received neither min nor max; required at least one bound");
  PointwiseParams p;
  p.has_lo = min.has_value();
  p.has_hi = max.has_value();
  if (min) p.lo = min->to_double();
  if (max) p.hi = max->to_double();
  return p;
}

PointwiseParams elu_params(const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  PointwiseParams p;
  p.alpha = alpha.to_double();
  p.beta = scale.to_double();
  p.gamma = input_scale.to_double();
  return p;
}

PointwiseParams slope_params(const Scalar& slope) {
  PointwiseParams p;
  p.alpha = slope.to_double();
  return p;
}

void check_pow_scalar(const Tensor& a, const Scalar& b) {
  LG_CHECK(!(a.defined() && !is_floating_point(a.dtype()) && b.is_integral() && b.to_int64() < 0),
           "[pow] integers to negative integer powers are not allowed (exponent ", b,
           "); required a non-negative exponent or a floating-point tensor");
}

}  // namespace

// ---- Unary ----
// The unary ops without parameters: name(x) and its in-place form name_(x).
#define LG_UNARY(name)                                                        \
  Tensor name(const Tensor& x) { return run(unary_call(OpId::name, x)); }     \
  const Tensor& name##_(const Tensor& x) {                                    \
    run(in_place(unary_call(OpId::name, x)));                                 \
    return x;                                                                 \
  }
LG_UNARY(neg)
LG_UNARY(abs)
LG_UNARY(relu)
LG_UNARY(relu6)
LG_UNARY(sigmoid)
LG_UNARY(tanh)
LG_UNARY(silu)
LG_UNARY(hardswish)
LG_UNARY(hardsigmoid)
LG_UNARY(exp)
LG_UNARY(log)
LG_UNARY(sqrt)
LG_UNARY(rsqrt)
LG_UNARY(erf)
#undef LG_UNARY

Tensor leaky_relu(const Tensor& x, const Scalar& slope) {
  return run(unary_call(OpId::leaky_relu, x, slope_params(slope)));
}
const Tensor& leaky_relu_(const Tensor& x, const Scalar& slope) {
  run(in_place(unary_call(OpId::leaky_relu, x, slope_params(slope))));
  return x;
}
Tensor elu(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return run(unary_call(OpId::elu, x, elu_params(alpha, scale, input_scale)));
}
const Tensor& elu_(const Tensor& x, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  run(in_place(unary_call(OpId::elu, x, elu_params(alpha, scale, input_scale))));
  return x;
}
Tensor gelu(const Tensor& x, std::string_view approximate) {
  LG_CHECK(approximate == "none" || approximate == "tanh", "[gelu] received approximate='", approximate,
           "'; required 'none' or 'tanh'");
  PointwiseParams p;
  p.flag = approximate == "tanh";
  return run(unary_call(OpId::gelu, x, p));
}
Tensor clamp(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return run(unary_call(OpId::clamp, x, clamp_params(min, max)));
}
const Tensor& clamp_(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  run(in_place(unary_call(OpId::clamp, x, clamp_params(min, max))));
  return x;
}

// ---- Binary ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return run(binary_call(OpId::add, a, b, alpha_params("add", a, &b, alpha)));
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return run(binary_call(OpId::add, a, b, alpha_params("add", a, nullptr, alpha)));
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_not_bool_sub(a, &b);
  return run(binary_call(OpId::sub, a, b, alpha_params("sub", a, &b, alpha)));
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return run(binary_call(OpId::sub, a, b, alpha_params("sub", a, nullptr, alpha)));
}
Tensor mul(const Tensor& a, const Tensor& b) { return run(binary_call(OpId::mul, a, b)); }
Tensor mul(const Tensor& a, const Scalar& b) { return run(binary_call(OpId::mul, a, b)); }
Tensor div(const Tensor& a, const Tensor& b) { return run(binary_call(OpId::div, a, b)); }
Tensor div(const Tensor& a, const Scalar& b) { return run(binary_call(OpId::div, a, b)); }
Tensor maximum(const Tensor& a, const Tensor& b) { return run(binary_call(OpId::maximum, a, b)); }
Tensor minimum(const Tensor& a, const Tensor& b) { return run(binary_call(OpId::minimum, a, b)); }
Tensor pow(const Tensor& a, const Tensor& b) { return run(binary_call(OpId::pow, a, b)); }
Tensor pow(const Tensor& a, const Scalar& b) {
  check_pow_scalar(a, b);
  return run(binary_call(OpId::pow, a, b));
}
Tensor pow(const Scalar& a, const Tensor& b) {
  return run(Call{OpId::pow, {Arg{Tensor(), a}, Arg{b, std::nullopt}}});
}

const Tensor& add_(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  run(in_place(binary_call(OpId::add, a, b, alpha_params("add_", a, &b, alpha))));
  return a;
}
const Tensor& add_(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  run(in_place(binary_call(OpId::add, a, b, alpha_params("add_", a, nullptr, alpha))));
  return a;
}
const Tensor& sub_(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_not_bool_sub(a, &b);
  run(in_place(binary_call(OpId::sub, a, b, alpha_params("sub_", a, &b, alpha))));
  return a;
}
const Tensor& sub_(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  run(in_place(binary_call(OpId::sub, a, b, alpha_params("sub_", a, nullptr, alpha))));
  return a;
}
const Tensor& mul_(const Tensor& a, const Tensor& b) {
  run(in_place(binary_call(OpId::mul, a, b)));
  return a;
}
const Tensor& mul_(const Tensor& a, const Scalar& b) {
  run(in_place(binary_call(OpId::mul, a, b)));
  return a;
}
const Tensor& div_(const Tensor& a, const Tensor& b) {
  run(in_place(binary_call(OpId::div, a, b)));
  return a;
}
const Tensor& div_(const Tensor& a, const Scalar& b) {
  run(in_place(binary_call(OpId::div, a, b)));
  return a;
}
const Tensor& pow_(const Tensor& a, const Tensor& b) {
  run(in_place(binary_call(OpId::pow, a, b)));
  return a;
}
const Tensor& pow_(const Tensor& a, const Scalar& b) {
  check_pow_scalar(a, b);
  run(in_place(binary_call(OpId::pow, a, b)));
  return a;
}

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return out_call(out, binary_call(OpId::add, a, b, alpha_params("add_out", a, &b, alpha)));
}
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_not_bool_sub(a, &b);
  return out_call(out, binary_call(OpId::sub, a, b, alpha_params("sub_out", a, &b, alpha)));
}
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return out_call(out, binary_call(OpId::mul, a, b));
}
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return out_call(out, binary_call(OpId::div, a, b));
}
Tensor& maximum_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return out_call(out, binary_call(OpId::maximum, a, b));
}
Tensor& minimum_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return out_call(out, binary_call(OpId::minimum, a, b));
}
Tensor& pow_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return out_call(out, binary_call(OpId::pow, a, b));
}

// ---- Comparisons and where ----
#define LG_COMPARE(name)                                                                          \
  Tensor name(const Tensor& a, const Tensor& b) { return run(binary_call(OpId::name, a, b)); } \
  Tensor name(const Tensor& a, const Scalar& b) { return run(binary_call(OpId::name, a, b)); }
LG_COMPARE(eq)
LG_COMPARE(ne)
LG_COMPARE(lt)
LG_COMPARE(le)
LG_COMPARE(gt)
LG_COMPARE(ge)
#undef LG_COMPARE

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return run(Call{OpId::where, {Arg{cond, std::nullopt}, Arg{a, std::nullopt}, Arg{b, std::nullopt}}});
}
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  return run(Call{OpId::where, {Arg{cond, std::nullopt}, Arg{a, std::nullopt}, Arg{Tensor(), b}}});
}
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  return run(Call{OpId::where, {Arg{cond, std::nullopt}, Arg{Tensor(), a}, Arg{b, std::nullopt}}});
}

}  // namespace lg

// The math of every Pointwise-family op, written once for both backends: the CPU kernels
// (src/cpu/pointwise.cpp) and the CUDA kernels (src/cuda/kernels/pointwise.cu, compiled by
// nvcc, or as C++ for tests/cuda_emulation) instantiate these functions per storage type, and
// the infer step (src/ops/pointwise.cpp) reads each op's dtype rule from here. Nothing here
// touches a tensor, so the header stays device-safe: standard math through std:: (nvcc maps
// std::exp(float) to the float function), integers through core/integer_math.h.
//
// Each op of op_list.def's Pointwise family has a struct of its name in pointwise_ops with
//   kRule   how the result dtype follows from the operands' (and so which storage types the
//           backends compile the op for),
//   kArity  Unary, Binary, Compare (two operands, bool result) or Where,
//   apply   the value for one element, computed in C: the storage type, or float for the
//           16-bit floats (both backends widen them and round once, like PyTorch).
// PointwiseMath<OpId::name> is that struct; a Pointwise op without one fails to compile.
#pragma once

#include <cmath>
#include <type_traits>

#include "core/integer_math.h"
#include "dispatch/op_id.h"

namespace lg::dispatch {

// Scalar arguments of a pointwise kernel; the ops that read a field say so in their apply.
struct PointwiseParams {
  double alpha = 1.0;   // add/sub alpha, leaky_relu slope, elu alpha
  double beta = 1.0;    // elu scale
  double gamma = 1.0;   // elu input_scale
  double lo = 0.0, hi = 0.0;  // clamp bounds
  bool has_lo = false, has_hi = false;
  bool flag = false;    // gelu: tanh approximation
};

// How an op's result dtype follows from the promoted dtype of its operands.
enum class DTypeRule {
  Numeric,       // the promoted dtype; bool rejected
  Any,           // the promoted dtype, bool included
  FloatPromote,  // integers and bool promote to float32
  FloatOnly,     // floating dtypes only
  Compare,       // computes in the promoted dtype, returns bool
  Where,         // operand 0 is a bool condition; the others promote
};

enum class PointwiseArity { Unary, Binary, Compare, Where };

// Whether a kernel of an op with `rule` is compiled for a storage type that is (or is not)
// floating-point and bool: the infer step never hands it the others.
LG_HOST_DEVICE constexpr bool rule_admits(DTypeRule rule, bool floating, bool is_bool) {
  switch (rule) {
    case DTypeRule::Numeric: return !is_bool;
    case DTypeRule::FloatPromote:
    case DTypeRule::FloatOnly: return floating;
    default: return true;
  }
}

namespace pointwise_math {

template <typename C>
LG_HOST_DEVICE inline bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  else return false;
}
// Integer add/mul wrap in two's complement like PyTorch's; floats and bool compute plainly.
template <typename C>
LG_HOST_DEVICE inline C add(C a, C b) {
  if constexpr (std::is_same_v<C, bool> || std::is_floating_point_v<C>) return a + b;
  else return integer_math::wrap_add(a, b);
}
template <typename C>
LG_HOST_DEVICE inline C mul(C a, C b) {
  if constexpr (std::is_same_v<C, bool> || std::is_floating_point_v<C>) return a * b;
  else return integer_math::wrap_mul(a, b);
}
template <typename C>
LG_HOST_DEVICE inline C negate(C x) {
  if constexpr (std::is_floating_point_v<C>) return -x;
  else return mul<C>(static_cast<C>(-1), x);
}
// NaN passes through every clamp-like op, as in PyTorch: both comparisons are false for NaN,
// so these selects keep it without a test -- and stay branch-free, so CPU loops vectorise.
template <typename C>
LG_HOST_DEVICE inline C clamp_lo(C x, C lo) { return x < lo ? lo : x; }
template <typename C>
LG_HOST_DEVICE inline C clamp_hi(C x, C hi) { return x > hi ? hi : x; }

}  // namespace pointwise_math

// One struct per op, named as in op_list.def (math functions are called std::-qualified: an
// unqualified exp would find the struct).
namespace pointwise_ops {

using namespace pointwise_math;

template <DTypeRule kR>
struct UnaryOp {
  static constexpr DTypeRule kRule = kR;
  static constexpr PointwiseArity kArity = PointwiseArity::Unary;
};
template <DTypeRule kR>
struct BinaryOp {
  static constexpr DTypeRule kRule = kR;
  static constexpr PointwiseArity kArity = PointwiseArity::Binary;
};
struct CompareOp {
  static constexpr DTypeRule kRule = DTypeRule::Compare;
  static constexpr PointwiseArity kArity = PointwiseArity::Compare;
};

// ---- Unary ----
struct neg : UnaryOp<DTypeRule::Numeric> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return negate<C>(x); }
};
struct abs : UnaryOp<DTypeRule::Numeric> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) {
    if constexpr (std::is_unsigned_v<C>) return x;
    else return x < C(0) ? negate<C>(x) : x;
  }
};
struct relu : UnaryOp<DTypeRule::Numeric> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return clamp_lo<C>(x, C(0)); }
};
struct relu6 : UnaryOp<DTypeRule::Numeric> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return clamp_hi<C>(clamp_lo<C>(x, C(0)), C(6)); }
};
struct leaky_relu : UnaryOp<DTypeRule::FloatOnly> {  // alpha: the negative slope
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams& p) {
    return x > C(0) ? x : static_cast<C>(x * static_cast<C>(p.alpha));
  }
};
struct elu : UnaryOp<DTypeRule::FloatOnly> {  // alpha, beta = scale, gamma = input_scale
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams& p) {
    return x > C(0) ? static_cast<C>(p.beta * x)
                    : static_cast<C>(p.beta * p.alpha * std::expm1(static_cast<C>(x * p.gamma)));
  }
};
struct sigmoid : UnaryOp<DTypeRule::FloatPromote> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return C(1) / (C(1) + std::exp(-x)); }
};
struct tanh : UnaryOp<DTypeRule::FloatPromote> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return std::tanh(x); }
};
struct gelu : UnaryOp<DTypeRule::FloatOnly> {  // flag: the tanh approximation
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams& p) {
    return p.flag ? C(0.5) * x * (C(1) + std::tanh(C(0.7978845608028654) * (x + C(0.044715) * x * x * x)))
                  : C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476)));
  }
};
struct silu : UnaryOp<DTypeRule::FloatOnly> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return x / (C(1) + std::exp(-x)); }
};
struct hardswish : UnaryOp<DTypeRule::FloatOnly> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) {
    return x * clamp_hi<C>(clamp_lo<C>(x + C(3), C(0)), C(6)) / C(6);
  }
};
struct hardsigmoid : UnaryOp<DTypeRule::FloatOnly> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return clamp_hi<C>(clamp_lo<C>(x + C(3), C(0)), C(6)) / C(6); }
};
struct exp : UnaryOp<DTypeRule::FloatPromote> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return std::exp(x); }
};
struct log : UnaryOp<DTypeRule::FloatPromote> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return std::log(x); }
};
struct sqrt : UnaryOp<DTypeRule::FloatPromote> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return std::sqrt(x); }
};
struct rsqrt : UnaryOp<DTypeRule::FloatPromote> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return C(1) / std::sqrt(x); }
};
struct erf : UnaryOp<DTypeRule::FloatPromote> {
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams&) { return std::erf(x); }
};
struct clamp : UnaryOp<DTypeRule::Numeric> {  // has_lo/lo, has_hi/hi
  template <typename C>
  LG_HOST_DEVICE static C apply(C x, const PointwiseParams& p) {
    if (p.has_lo) x = clamp_lo<C>(x, static_cast<C>(p.lo));
    if (p.has_hi) x = clamp_hi<C>(x, static_cast<C>(p.hi));
    return x;
  }
};

// ---- Binary ----
// a + alpha * b; bool add is logical or (bool sub is rejected by the infer step); an integral
// result takes alpha as an integer (ATen refuses a floating alpha there).
template <bool kSubtract, typename C>
LG_HOST_DEVICE inline C add_scaled(C a, C b, double alpha) {
  if constexpr (std::is_same_v<C, bool>) {
    return a || b;
  } else if constexpr (std::is_floating_point_v<C>) {
    const C scaled = static_cast<C>(alpha) * b;
    return kSubtract ? a - scaled : a + scaled;
  } else {
    const C scaled = pointwise_math::mul<C>(static_cast<C>(static_cast<int64_t>(alpha)), b);
    return pointwise_math::add<C>(a, kSubtract ? negate<C>(scaled) : scaled);
  }
}
struct add : BinaryOp<DTypeRule::Any> {  // alpha
  template <typename C>
  LG_HOST_DEVICE static C apply(C a, C b, const PointwiseParams& p) { return add_scaled<false>(a, b, p.alpha); }
};
struct sub : BinaryOp<DTypeRule::Numeric> {  // alpha
  template <typename C>
  LG_HOST_DEVICE static C apply(C a, C b, const PointwiseParams& p) { return add_scaled<true>(a, b, p.alpha); }
};
struct mul : BinaryOp<DTypeRule::Any> {  // bool: logical and
  template <typename C>
  LG_HOST_DEVICE static C apply(C a, C b, const PointwiseParams&) {
    if constexpr (std::is_same_v<C, bool>) return a && b;
    else return pointwise_math::mul<C>(a, b);
  }
};
struct div : BinaryOp<DTypeRule::FloatPromote> {  // true division
  template <typename C>
  LG_HOST_DEVICE static C apply(C a, C b, const PointwiseParams&) { return a / b; }
};
struct maximum : BinaryOp<DTypeRule::Any> {  // NaN wins
  template <typename C>
  LG_HOST_DEVICE static C apply(C a, C b, const PointwiseParams&) {
    return is_nan(a) ? a : is_nan(b) ? b : (a < b ? b : a);
  }
};
struct minimum : BinaryOp<DTypeRule::Any> {  // NaN wins
  template <typename C>
  LG_HOST_DEVICE static C apply(C a, C b, const PointwiseParams&) {
    return is_nan(a) ? a : is_nan(b) ? b : (b < a ? b : a);
  }
};
struct pow : BinaryOp<DTypeRule::Numeric> {  // integers: by squaring, wrapping
  template <typename C>
  LG_HOST_DEVICE static C apply(C a, C b, const PointwiseParams&) {
    if constexpr (std::is_floating_point_v<C>) return std::pow(a, b);
    else return integer_math::int_pow<C>(a, b);
  }
};

// ---- Comparisons ----
struct eq : CompareOp {
  template <typename C>
  LG_HOST_DEVICE static bool apply(C a, C b) { return a == b; }
};
struct ne : CompareOp {
  template <typename C>
  LG_HOST_DEVICE static bool apply(C a, C b) { return a != b; }
};
struct lt : CompareOp {
  template <typename C>
  LG_HOST_DEVICE static bool apply(C a, C b) { return a < b; }
};
struct le : CompareOp {
  template <typename C>
  LG_HOST_DEVICE static bool apply(C a, C b) { return a <= b; }
};
struct gt : CompareOp {
  template <typename C>
  LG_HOST_DEVICE static bool apply(C a, C b) { return a > b; }
};
struct ge : CompareOp {
  template <typename C>
  LG_HOST_DEVICE static bool apply(C a, C b) { return a >= b; }
};

// out = cond ? a : b: a selection, no math; each backend moves the values itself.
struct where {
  static constexpr DTypeRule kRule = DTypeRule::Where;
  static constexpr PointwiseArity kArity = PointwiseArity::Where;
};

}  // namespace pointwise_ops

// PointwiseMath<id>: the struct above for each Pointwise op of op_list.def; for the other ops,
// kIsPointwise is false and nothing else is defined.
template <OpId kId>
struct PointwiseMath {
  static constexpr bool kIsPointwise = false;
};
#define LG_OP(name, family, ...) LG_POINTWISE_MATH_##family(name)
#define LG_POINTWISE_MATH_Pointwise(name)                   \
  template <>                                               \
  struct PointwiseMath<OpId::name> : pointwise_ops::name { \
    static constexpr bool kIsPointwise = true;              \
  };
#define LG_POINTWISE_MATH_Copy(name)
#define LG_POINTWISE_MATH_Conversion(name)
#define LG_POINTWISE_MATH_View(name)
#define LG_POINTWISE_MATH_Conv(name)
#define LG_POINTWISE_MATH_Norm(name)
#define LG_POINTWISE_MATH_Pool(name)
#define LG_POINTWISE_MATH_Join(name)
#define LG_POINTWISE_MATH_Resample(name)
#define LG_POINTWISE_MATH_Linalg(name)
#define LG_POINTWISE_MATH_Reduce(name)
#define LG_POINTWISE_MATH_Composite(name)
#include "dispatch/op_list.def"
#undef LG_OP
#undef LG_POINTWISE_MATH_Pointwise
#undef LG_POINTWISE_MATH_Copy
#undef LG_POINTWISE_MATH_Conversion
#undef LG_POINTWISE_MATH_View
#undef LG_POINTWISE_MATH_Conv
#undef LG_POINTWISE_MATH_Norm
#undef LG_POINTWISE_MATH_Pool
#undef LG_POINTWISE_MATH_Join
#undef LG_POINTWISE_MATH_Resample
#undef LG_POINTWISE_MATH_Linalg
#undef LG_POINTWISE_MATH_Reduce
#undef LG_POINTWISE_MATH_Composite

// A Pointwise op's dtype rule, for the infer step (which has the op only at run time).
template <OpId kId>
constexpr DTypeRule pointwise_rule_of() {
  if constexpr (PointwiseMath<kId>::kIsPointwise) return PointwiseMath<kId>::kRule;
  else return DTypeRule::Any;  // not a pointwise op: never asked
}
inline constexpr DTypeRule kPointwiseRules[kNumOps] = {
#define LG_OP(name, ...) pointwise_rule_of<OpId::name>(),
#include "dispatch/op_list.def"
#undef LG_OP
};
constexpr DTypeRule pointwise_rule(OpId id) { return kPointwiseRules[static_cast<size_t>(id)]; }

}  // namespace lg::dispatch

// CPU kernels of the Pointwise family: one functor per op, applied by the elementwise loop to
// every dtype the op's infer step lets through. Rows with unit strides (dense NHWC and NCHW
// alike, after dim merging) take a branch-free loop the compiler vectorises.
//
// float16 and bfloat16 compute in float32 and round once, like PyTorch. Their rows go through
// float32 blocks on the stack: operands widened with the vector casts of cpu/cast_row.h, the
// functor run over plain floats (a loop the compiler vectorises, which it cannot do through
// the 16-bit codecs), the result narrowed back. The arithmetic is the scalar path's, so the
// bits are too.
#include <algorithm>
#include <cmath>
#include <functional>
#include <type_traits>

#include "core/integer_math.h"
#include "cpu/cast_row.h"
#include "cpu/elementwise.h"
#include "cpu/register.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using cpu::ComputeType;
using cpu::kIsFloating;
using dispatch::OpId;
using dispatch::PointwiseParams;

// Calls fn(std::type_identity<S>{}) for the storage types a family of ops supports; the infer
// step has already rejected the others, so reaching one is a bug.
template <typename Fn>
void visit_floating(DType d, Fn&& fn) {
  visit_dtype(d, [&]<typename S>(std::type_identity<S> t) {
    if constexpr (kIsFloating<S>) fn(t);
    else LG_ASSERT(false, "floating-point kernel reached with ", d);
  });
}
template <typename Fn>
void visit_numeric(DType d, Fn&& fn) {
  visit_dtype(d, [&]<typename S>(std::type_identity<S> t) {
    if constexpr (!std::is_same_v<S, bool>) fn(t);
    else LG_ASSERT(false, "numeric kernel reached with bool");
  });
}

// Elements per float32 block of a 16-bit row: 1 KiB per operand, well inside L1.
constexpr int64_t kWideBlock = 256;

// buf[i] = p[i * stride] as float, for i < n.
template <typename S>
void widen(float* buf, const S* p, int64_t stride, int64_t n) {
  if (stride == 1) {
    cpu::cast_row(buf, p, n);
  } else if (stride == 0) {
    std::fill_n(buf, n, static_cast<float>(p[0]));
  } else {
    for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<float>(p[i * stride]);
  }
}

// p[i * stride] = buf[i] rounded to S, for i < n.
template <typename S>
void narrow(S* p, int64_t stride, const float* buf, int64_t n) {
  if (stride == 1) {
    cpu::cast_row(p, buf, n);
  } else {
    for (int64_t i = 0; i < n; ++i) p[i * stride] = static_cast<S>(buf[i]);
  }
}

// out = f(x), both of storage type S.
template <typename S, typename F>
void unary(const Tensor& out, const Tensor& x, F f) {
  using C = ComputeType<S>;
  cpu::for_each_row<1>(out, {&x}, [&](const cpu::Row<1>& r) {
    S* o = reinterpret_cast<S*>(r.ptr[0]);
    const S* a = reinterpret_cast<const S*>(r.ptr[1]);
    const int64_t so = r.stride[0], sa = r.stride[1];
    if constexpr (cpu::kIs16BitFloat<S>) {
      float wa[kWideBlock], wo[kWideBlock];
      for (int64_t i0 = 0; i0 < r.n; i0 += kWideBlock) {
        const int64_t m = std::min(kWideBlock, r.n - i0);
        widen(wa, a + i0 * sa, sa, m);
        for (int64_t i = 0; i < m; ++i) wo[i] = f(wa[i]);
        narrow(o + i0 * so, so, wo, m);
      }
    } else if (so == 1 && sa == 1) {
      for (int64_t i = 0; i < r.n; ++i) o[i] = static_cast<S>(f(static_cast<C>(a[i])));
    } else {
      for (int64_t i = 0; i < r.n; ++i) o[i * so] = static_cast<S>(f(static_cast<C>(a[i * sa])));
    }
  });
}

// out = f(a, b): inputs of storage type S, out of type O (S, or bool for comparisons).
template <typename S, typename O, typename F>
void binary(const Tensor& out, const Tensor& x, const Tensor& y, F f) {
  using C = ComputeType<S>;
  cpu::for_each_row<2>(out, {&x, &y}, [&](const cpu::Row<2>& r) {
    O* o = reinterpret_cast<O*>(r.ptr[0]);
    const S* a = reinterpret_cast<const S*>(r.ptr[1]);
    const S* b = reinterpret_cast<const S*>(r.ptr[2]);
    const int64_t so = r.stride[0], sa = r.stride[1], sb = r.stride[2];
    if constexpr (cpu::kIs16BitFloat<S>) {
      float wa[kWideBlock], wb[kWideBlock];
      for (int64_t i0 = 0; i0 < r.n; i0 += kWideBlock) {
        const int64_t m = std::min(kWideBlock, r.n - i0);
        widen(wa, a + i0 * sa, sa, m);
        widen(wb, b + i0 * sb, sb, m);
        if constexpr (std::is_same_v<O, S>) {
          for (int64_t i = 0; i < m; ++i) wa[i] = f(wa[i], wb[i]);  // the result replaces a's block
          narrow(o + i0 * so, so, wa, m);
        } else {
          for (int64_t i = 0; i < m; ++i) o[(i0 + i) * so] = static_cast<O>(f(wa[i], wb[i]));
        }
      }
    } else if (so == 1 && sa == 1 && sb == 1) {
      for (int64_t i = 0; i < r.n; ++i) o[i] = static_cast<O>(f(static_cast<C>(a[i]), static_cast<C>(b[i])));
    } else if (so == 1 && sa == 1 && sb == 0) {  // tensor op scalar/broadcast: the bias-add case
      const C bv = static_cast<C>(b[0]);
      for (int64_t i = 0; i < r.n; ++i) o[i] = static_cast<O>(f(static_cast<C>(a[i]), bv));
    } else {
      for (int64_t i = 0; i < r.n; ++i)
        o[i * so] = static_cast<O>(f(static_cast<C>(a[i * sa]), static_cast<C>(b[i * sb])));
    }
  });
}

template <typename C>
inline bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

// Integer add/mul wrap in two's complement like PyTorch's (src/core/integer_math.h).
using integer_math::int_pow;
template <typename C>
inline C int_add(C a, C b) { return integer_math::wrap_add(a, b); }
template <typename C>
inline C int_mul(C a, C b) { return integer_math::wrap_mul(a, b); }

template <typename C>
inline C negate(C x) {
  if constexpr (std::is_floating_point_v<C>) return -x;
  else return int_mul<C>(static_cast<C>(-1), x);
}

// ---- Unary kernels ----

#define LG_FLOAT_UNARY(fn_name, expr)                                                            \
  void fn_name(const Tensor& out, std::span<const Tensor> in, const PointwiseParams& p) {       \
    (void)p;                                                                                      \
    visit_floating(out.dtype(), [&]<typename S>(std::type_identity<S>) {                         \
      using C = ComputeType<S>;                                                                   \
      unary<S>(out, in[0], [&](C x) -> C { return expr; });                                      \
    });                                                                                           \
  }
#define LG_NUMERIC_UNARY(fn_name, expr)                                                          \
  void fn_name(const Tensor& out, std::span<const Tensor> in, const PointwiseParams& p) {       \
    (void)p;                                                                                      \
    visit_numeric(out.dtype(), [&]<typename S>(std::type_identity<S>) {                          \
      using C = ComputeType<S>;                                                                   \
      unary<S>(out, in[0], [&](C x) -> C { return expr; });                                      \
    });                                                                                           \
  }

// NaN passes through every clamp-like op, as in PyTorch: both comparisons are false for NaN,
// so these selects keep it without a test -- and stay branch-free, so the loops vectorise
// (a branch on the sign of random data mispredicts half the time).
template <typename C>
inline C clamp_lo(C x, C lo) { return x < lo ? lo : x; }
template <typename C>
inline C clamp_hi(C x, C hi) { return x > hi ? hi : x; }
template <typename C>
inline C clamp_value(C x, bool has_lo, C lo, bool has_hi, C hi) {
  if (has_lo) x = clamp_lo(x, lo);
  if (has_hi) x = clamp_hi(x, hi);
  return x;
}

LG_NUMERIC_UNARY(neg_cpu, negate<C>(x))
LG_NUMERIC_UNARY(abs_cpu, x < C(0) ? negate<C>(x) : x)
LG_NUMERIC_UNARY(relu_cpu, clamp_lo<C>(x, C(0)))
LG_NUMERIC_UNARY(relu6_cpu, clamp_hi<C>(clamp_lo<C>(x, C(0)), C(6)))
LG_NUMERIC_UNARY(clamp_cpu, clamp_value<C>(x, p.has_lo, static_cast<C>(p.lo), p.has_hi, static_cast<C>(p.hi)))
LG_FLOAT_UNARY(leaky_relu_cpu, x > C(0) ? x : static_cast<C>(x * static_cast<C>(p.alpha)))
LG_FLOAT_UNARY(elu_cpu, x > C(0) ? static_cast<C>(p.beta * x)
                                 : static_cast<C>(p.beta * p.alpha * std::expm1(static_cast<C>(x * p.gamma))))
LG_FLOAT_UNARY(sigmoid_cpu, C(1) / (C(1) + std::exp(-x)))
LG_FLOAT_UNARY(tanh_cpu, std::tanh(x))
LG_FLOAT_UNARY(gelu_cpu,
               p.flag ? C(0.5) * x * (C(1) + std::tanh(C(0.7978845608028654) * (x + C(0.044715) * x * x * x)))
                      : C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476))))
LG_FLOAT_UNARY(silu_cpu, x / (C(1) + std::exp(-x)))
LG_FLOAT_UNARY(hardswish_cpu, x * clamp_hi<C>(clamp_lo<C>(x + C(3), C(0)), C(6)) / C(6))
LG_FLOAT_UNARY(hardsigmoid_cpu, clamp_hi<C>(clamp_lo<C>(x + C(3), C(0)), C(6)) / C(6))
LG_FLOAT_UNARY(exp_cpu, std::exp(x))
LG_FLOAT_UNARY(log_cpu, std::log(x))
LG_FLOAT_UNARY(sqrt_cpu, std::sqrt(x))
LG_FLOAT_UNARY(rsqrt_cpu, C(1) / std::sqrt(x))

#undef LG_FLOAT_UNARY
#undef LG_NUMERIC_UNARY

// ---- Binary kernels ----

template <typename C>
inline C add_value(C a, C b, double alpha, bool subtract) {
  if constexpr (std::is_same_v<C, bool>) {
    return a || b;  // bool add is logical or (bool sub is rejected by infer)
  } else if constexpr (std::is_floating_point_v<C>) {
    const C scaled = static_cast<C>(alpha) * b;
    return subtract ? a - scaled : a + scaled;
  } else {
    const C scaled = int_mul<C>(static_cast<C>(static_cast<int64_t>(alpha)), b);
    return int_add<C>(a, subtract ? negate<C>(scaled) : scaled);
  }
}

template <typename F>
void arithmetic(const Tensor& out, std::span<const Tensor> in, F f) {
  visit_dtype(out.dtype(), [&]<typename S>(std::type_identity<S>) {
    using C = ComputeType<S>;
    binary<S, S>(out, in[0], in[1], [&](C a, C b) -> C { return f(a, b); });
  });
}

void add_cpu(const Tensor& out, std::span<const Tensor> in, const PointwiseParams& p) {
  arithmetic(out, in, [&](auto a, auto b) { return add_value(a, b, p.alpha, false); });
}
void sub_cpu(const Tensor& out, std::span<const Tensor> in, const PointwiseParams& p) {
  arithmetic(out, in, [&](auto a, auto b) { return add_value(a, b, p.alpha, true); });
}
void mul_cpu(const Tensor& out, std::span<const Tensor> in, const PointwiseParams&) {
  arithmetic(out, in, [](auto a, auto b) {
    using C = decltype(a);
    if constexpr (std::is_same_v<C, bool>) return static_cast<bool>(a && b);
    else if constexpr (std::is_floating_point_v<C>) return a * b;
    else return int_mul<C>(a, b);
  });
}
void div_cpu(const Tensor& out, std::span<const Tensor> in, const PointwiseParams&) {
  visit_floating(out.dtype(), [&]<typename S>(std::type_identity<S>) {
    using C = ComputeType<S>;
    binary<S, S>(out, in[0], in[1], [](C a, C b) -> C { return a / b; });
  });
}
void maximum_cpu(const Tensor& out, std::span<const Tensor> in, const PointwiseParams&) {
  arithmetic(out, in, [](auto a, auto b) { return is_nan(a) ? a : is_nan(b) ? b : (a < b ? b : a); });
}
void minimum_cpu(const Tensor& out, std::span<const Tensor> in, const PointwiseParams&) {
  arithmetic(out, in, [](auto a, auto b) { return is_nan(a) ? a : is_nan(b) ? b : (b < a ? b : a); });
}
void pow_cpu(const Tensor& out, std::span<const Tensor> in, const PointwiseParams&) {
  visit_numeric(out.dtype(), [&]<typename S>(std::type_identity<S>) {
    using C = ComputeType<S>;
    binary<S, S>(out, in[0], in[1], [](C a, C b) -> C {
      if constexpr (std::is_floating_point_v<C>) return std::pow(a, b);
      else return int_pow<C>(a, b);
    });
  });
}

template <typename Cmp>
void compare(const Tensor& out, std::span<const Tensor> in, Cmp cmp) {
  visit_dtype(in[0].dtype(), [&]<typename S>(std::type_identity<S>) {
    using C = ComputeType<S>;
    binary<S, bool>(out, in[0], in[1], [&](C a, C b) -> bool { return cmp(a, b); });
  });
}
void eq_cpu(const Tensor& o, std::span<const Tensor> in, const PointwiseParams&) { compare(o, in, std::equal_to<>()); }
void ne_cpu(const Tensor& o, std::span<const Tensor> in, const PointwiseParams&) { compare(o, in, std::not_equal_to<>()); }
void lt_cpu(const Tensor& o, std::span<const Tensor> in, const PointwiseParams&) { compare(o, in, std::less<>()); }
void le_cpu(const Tensor& o, std::span<const Tensor> in, const PointwiseParams&) { compare(o, in, std::less_equal<>()); }
void gt_cpu(const Tensor& o, std::span<const Tensor> in, const PointwiseParams&) { compare(o, in, std::greater<>()); }
void ge_cpu(const Tensor& o, std::span<const Tensor> in, const PointwiseParams&) { compare(o, in, std::greater_equal<>()); }

// out = cond ? a : b; in = {cond (bool), a, b}.
void where_cpu(const Tensor& out, std::span<const Tensor> in, const PointwiseParams&) {
  visit_dtype(out.dtype(), [&]<typename S>(std::type_identity<S>) {
    cpu::for_each_row<3>(out, {&in[0], &in[1], &in[2]}, [&](const cpu::Row<3>& r) {
      S* o = reinterpret_cast<S*>(r.ptr[0]);
      const bool* c = reinterpret_cast<const bool*>(r.ptr[1]);
      const S* a = reinterpret_cast<const S*>(r.ptr[2]);
      const S* b = reinterpret_cast<const S*>(r.ptr[3]);
      for (int64_t i = 0; i < r.n; ++i)
        o[i * r.stride[0]] = c[i * r.stride[1]] ? a[i * r.stride[2]] : b[i * r.stride[3]];
    });
  });
}

}  // namespace

void register_pointwise_kernels(dispatch::KernelTable& table) {
#define LG_REGISTER(op) table.set_pointwise(OpId::op, DeviceType::CPU, op##_cpu, #op "_cpu");
  LG_REGISTER(neg) LG_REGISTER(abs) LG_REGISTER(relu) LG_REGISTER(relu6) LG_REGISTER(leaky_relu)
  LG_REGISTER(elu) LG_REGISTER(sigmoid) LG_REGISTER(tanh) LG_REGISTER(gelu) LG_REGISTER(silu)
  LG_REGISTER(hardswish) LG_REGISTER(hardsigmoid) LG_REGISTER(exp) LG_REGISTER(log)
  LG_REGISTER(sqrt) LG_REGISTER(rsqrt) LG_REGISTER(clamp) LG_REGISTER(add) LG_REGISTER(sub)
  LG_REGISTER(mul) LG_REGISTER(div) LG_REGISTER(maximum) LG_REGISTER(minimum) LG_REGISTER(pow)
  LG_REGISTER(eq) LG_REGISTER(ne) LG_REGISTER(lt) LG_REGISTER(le) LG_REGISTER(gt) LG_REGISTER(ge)
  LG_REGISTER(where)
#undef LG_REGISTER
}

}  // namespace lg

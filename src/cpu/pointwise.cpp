// CPU kernels of the Pointwise family: one template, instantiated for every Pointwise op of
// op_list.def with the op's math from dispatch/pointwise_math.h (shared with CUDA), over every
// storage type the op's dtype rule lets through. Rows with unit strides (dense NHWC and NCHW
// alike, after dim merging) take a branch-free loop the compiler vectorises.
//
// float16 and bfloat16 compute in float32 and round once, like PyTorch. Their rows go through
// float32 blocks on the stack: operands widened with the vector casts of cpu/cast_row.h, the
// functor run over plain floats (a loop the compiler vectorises, which it cannot do through
// the 16-bit codecs), the result narrowed back. The arithmetic is the scalar path's, so the
// bits are too.
#include <algorithm>
#include <type_traits>

#include "cpu/cast_row.h"
#include "cpu/elementwise.h"
#include "cpu/register.h"
#include "dispatch/kernel_table.h"
#include "dispatch/pointwise_math.h"

namespace lg {
namespace {

using cpu::ComputeType;
using cpu::kIsFloating;
using dispatch::OpId;
using dispatch::PointwiseParams;

using dispatch::PointwiseArity;
using dispatch::PointwiseMath;

// Calls fn(std::type_identity<S>{}) for the storage types op kId's dtype rule admits; the infer
// step has already rejected the others, so reaching one is a bug.
template <OpId kId, typename Fn>
void visit_admitted(DType d, Fn&& fn) {
  visit_dtype(d, [&]<typename S>(std::type_identity<S> t) {
    if constexpr (dispatch::rule_admits(PointwiseMath<kId>::kRule, kIsFloating<S>, std::is_same_v<S, bool>)) fn(t);
    else LG_ASSERT(false, dispatch::op_name(kId), " kernel reached with ", d);
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

// out = cond ? a : b; in = {cond (bool), a, b}.
void where_cpu(const Tensor& out, std::span<const Tensor> in) {
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

// The kernel of Pointwise op kId. Comparisons visit their inputs' dtype (the output is bool).
template <OpId kId>
void pointwise_cpu(const Tensor& out, std::span<const Tensor> in, const PointwiseParams& p) {
  using M = PointwiseMath<kId>;
  if constexpr (M::kArity == PointwiseArity::Unary) {
    visit_admitted<kId>(out.dtype(), [&]<typename S>(std::type_identity<S>) {
      using C = ComputeType<S>;
      unary<S>(out, in[0], [&](C x) -> C { return M::template apply<C>(x, p); });
    });
  } else if constexpr (M::kArity == PointwiseArity::Binary) {
    visit_admitted<kId>(out.dtype(), [&]<typename S>(std::type_identity<S>) {
      using C = ComputeType<S>;
      binary<S, S>(out, in[0], in[1], [&](C a, C b) -> C { return M::template apply<C>(a, b, p); });
    });
  } else if constexpr (M::kArity == PointwiseArity::Compare) {
    visit_dtype(in[0].dtype(), [&]<typename S>(std::type_identity<S>) {
      using C = ComputeType<S>;
      binary<S, bool>(out, in[0], in[1], [](C a, C b) -> bool { return M::template apply<C>(a, b); });
    });
  } else {
    where_cpu(out, in);
  }
}

template <OpId kId>
void register_if_pointwise(dispatch::KernelTable& table, std::string_view name) {
  if constexpr (PointwiseMath<kId>::kIsPointwise) table.set_pointwise(kId, DeviceType::CPU, pointwise_cpu<kId>, name);
}

}  // namespace

void register_pointwise_kernels(dispatch::KernelTable& table) {
#define LG_OP(name, ...) register_if_pointwise<OpId::name>(table, #name "_cpu");
#include "dispatch/op_list.def"
#undef LG_OP
}

}  // namespace lg

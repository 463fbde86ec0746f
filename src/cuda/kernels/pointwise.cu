// The Pointwise family on CUDA. One kernel per (input storage type, arity, dense or strided)
// with the op chosen inside: each thread picks its op once, before its element loop, and then
// runs a loop compiled for that op alone (dispatch_op). Picking it per element cost a branch
// tree and an indirect jump per element, which made float16 relu instruction-bound (its SASS
// is discussed in docs/performance.md). The build instantiates 8 dtypes x 4 arities x 2 forms
// instead of a kernel per op and dtype. The math mirrors src/cpu/pointwise.cpp: 16-bit floats
// compute in float, integer add/mul/neg wrap through unsigned arithmetic, NaN passes through
// max/min and the clamps.
#include "core/integer_math.h"
#include "cuda/kernels/device_types.cuh"

namespace lg::cuda::kernels {
namespace {

constexpr int kThreads = 256;

template <typename C>
__device__ inline bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  else return false;
}
// Integer add/mul wrap like the CPU's (one definition for both: src/core/integer_math.h).
template <typename C>
__device__ inline C wrap_add(C a, C b) {
  if constexpr (std::is_same_v<C, bool> || std::is_floating_point_v<C>) return a + b;
  else return integer_math::wrap_add(a, b);
}
template <typename C>
__device__ inline C wrap_mul(C a, C b) {
  if constexpr (std::is_same_v<C, bool> || std::is_floating_point_v<C>) return a * b;
  else return integer_math::wrap_mul(a, b);
}
template <typename C>
__device__ inline C negate(C x) {
  if constexpr (std::is_floating_point_v<C>) return -x;
  else return wrap_mul<C>(static_cast<C>(-1), x);
}
template <typename C>
__device__ inline C clamp_lo(C x, C lo) { return x < lo ? lo : x; }
template <typename C>
__device__ inline C clamp_hi(C x, C hi) { return x > hi ? hi : x; }

using integer_math::int_pow;

// The floating unary math; C is float or double (CUDA's overloads pick the precision).
template <typename C>
__device__ inline C unary_float(PointwiseOp op, C x, const PointwiseParams& p) {
  switch (op) {
    case PointwiseOp::LeakyRelu: return x > C(0) ? x : static_cast<C>(x * static_cast<C>(p.alpha));
    case PointwiseOp::Elu:
      return x > C(0) ? static_cast<C>(p.beta * x) : static_cast<C>(p.beta * p.alpha * expm1(static_cast<C>(x * p.gamma)));
    case PointwiseOp::Sigmoid: return C(1) / (C(1) + exp(-x));
    case PointwiseOp::Tanh: return tanh(x);
    case PointwiseOp::Gelu:
      return p.flag ? C(0.5) * x * (C(1) + tanh(C(0.7978845608028654) * (x + C(0.044715) * x * x * x)))
                    : C(0.5) * x * (C(1) + erf(x * C(0.7071067811865476)));
    case PointwiseOp::Silu: return x / (C(1) + exp(-x));
    case PointwiseOp::Hardswish: return x * clamp_hi<C>(clamp_lo<C>(x + C(3), C(0)), C(6)) / C(6);
    case PointwiseOp::Hardsigmoid: return clamp_hi<C>(clamp_lo<C>(x + C(3), C(0)), C(6)) / C(6);
    case PointwiseOp::Exp: return exp(x);
    case PointwiseOp::Log: return log(x);
    case PointwiseOp::Sqrt: return sqrt(x);
    case PointwiseOp::Rsqrt: return C(1) / sqrt(x);
    default: return x;
  }
}

template <typename C>
__device__ inline C unary(PointwiseOp op, C x, const PointwiseParams& p) {
  switch (op) {
    case PointwiseOp::Neg: return negate<C>(x);
    case PointwiseOp::Abs:
      if constexpr (std::is_unsigned_v<C> || std::is_same_v<C, bool>) return x;
      else return x < C(0) ? negate<C>(x) : x;
    case PointwiseOp::Relu: return clamp_lo<C>(x, C(0));
    case PointwiseOp::Relu6: return clamp_hi<C>(clamp_lo<C>(x, C(0)), C(6));
    case PointwiseOp::Clamp:
      if (p.has_lo) x = clamp_lo<C>(x, static_cast<C>(p.lo));
      if (p.has_hi) x = clamp_hi<C>(x, static_cast<C>(p.hi));
      return x;
    default:
      if constexpr (std::is_floating_point_v<C>) return unary_float<C>(op, x, p);
      else return x;
  }
}

template <typename C>
__device__ inline C binary(PointwiseOp op, C a, C b, const PointwiseParams& p) {
  switch (op) {
    case PointwiseOp::Add:
    case PointwiseOp::Sub: {
      if constexpr (std::is_same_v<C, bool>) {
        return a || b;
      } else if constexpr (std::is_floating_point_v<C>) {
        const C scaled = static_cast<C>(p.alpha) * b;
        return op == PointwiseOp::Sub ? a - scaled : a + scaled;
      } else {
        const C scaled = wrap_mul<C>(static_cast<C>(static_cast<int64_t>(p.alpha)), b);
        return wrap_add<C>(a, op == PointwiseOp::Sub ? negate<C>(scaled) : scaled);
      }
    }
    case PointwiseOp::Mul:
      if constexpr (std::is_same_v<C, bool>) return a && b;
      else return wrap_mul<C>(a, b);
    case PointwiseOp::Div:
      if constexpr (std::is_floating_point_v<C>) return a / b;
      else return a;
    case PointwiseOp::Maximum: return is_nan(a) ? a : is_nan(b) ? b : (a < b ? b : a);
    case PointwiseOp::Minimum: return is_nan(a) ? a : is_nan(b) ? b : (b < a ? b : a);
    case PointwiseOp::Pow:
      if constexpr (std::is_floating_point_v<C>) return pow(a, b);
      else if constexpr (std::is_same_v<C, bool>) return a;
      else return int_pow<C>(a, b);
    default: return a;
  }
}

template <typename C>
__device__ inline bool compare(PointwiseOp op, C a, C b) {
  switch (op) {
    case PointwiseOp::Eq: return a == b;
    case PointwiseOp::Ne: return a != b;
    case PointwiseOp::Lt: return a < b;
    case PointwiseOp::Le: return a <= b;
    case PointwiseOp::Gt: return a > b;
    case PointwiseOp::Ge: return a >= b;
    default: return false;
  }
}

enum class Arity { Unary, Binary, Compare, Where };

// The ops of each arity are one contiguous run of the enum (launch.h keeps that order).
__host__ __device__ constexpr Arity arity_of(PointwiseOp op) {
  if (op == PointwiseOp::Where) return Arity::Where;
  if (op >= PointwiseOp::Eq) return Arity::Compare;
  if (op >= PointwiseOp::Add) return Arity::Binary;
  return Arity::Unary;
}
__host__ __device__ constexpr bool floating_only(PointwiseOp op) {
  return (op >= PointwiseOp::LeakyRelu && op <= PointwiseOp::Rsqrt) || op == PointwiseOp::Div;
}

template <PointwiseOp kOp>
struct OpTag {
  static constexpr PointwiseOp value = kOp;
};

// Calls fn(OpTag<op>{}) where op is the runtime `op`, trying the ops from kFrom on that have
// arity kArity and that storage type S takes (the host never asks an integer type for a
// floating-only op, so those loops are not compiled). An if-chain run once per thread.
template <typename S, Arity kArity, PointwiseOp kFrom = PointwiseOp::Neg, typename Fn>
__device__ inline void dispatch_op(PointwiseOp op, Fn&& fn) {
  if constexpr (kFrom <= PointwiseOp::Where) {
    constexpr auto kNext = static_cast<PointwiseOp>(static_cast<int>(kFrom) + 1);
    if constexpr (arity_of(kFrom) == kArity && (kFloating<S> || !floating_only(kFrom))) {
      if (op == kFrom) {
        fn(OpTag<kFrom>{});
        return;
      }
    }
    if constexpr (kFrom < PointwiseOp::Where) dispatch_op<S, kArity, kNext>(op, fn);
  }
}

// One element: operand offsets in `off` ([0] the output). kOp is a constant here, so the
// switches of unary/binary/compare fold to the op's own code.
template <typename S, Arity kArity, PointwiseOp kOp>
__device__ inline void apply(const Geometry& g, const PointwiseParams& p, const int64_t* off) {
  using T = Storage<S>;
  using C = typename T::Compute;
  if constexpr (kArity == Arity::Unary) {
    const C x = T::load(reinterpret_cast<const S*>(g.data[1])[off[1]]);
    reinterpret_cast<S*>(g.data[0])[off[0]] = T::store(unary<C>(kOp, x, p));
  } else if constexpr (kArity == Arity::Binary) {
    const C a = T::load(reinterpret_cast<const S*>(g.data[1])[off[1]]);
    const C b = T::load(reinterpret_cast<const S*>(g.data[2])[off[2]]);
    reinterpret_cast<S*>(g.data[0])[off[0]] = T::store(binary<C>(kOp, a, b, p));
  } else if constexpr (kArity == Arity::Compare) {
    const C a = T::load(reinterpret_cast<const S*>(g.data[1])[off[1]]);
    const C b = T::load(reinterpret_cast<const S*>(g.data[2])[off[2]]);
    reinterpret_cast<bool*>(g.data[0])[off[0]] = compare<C>(kOp, a, b);
  } else {
    const bool c = reinterpret_cast<const bool*>(g.data[1])[off[1]];
    reinterpret_cast<S*>(g.data[0])[off[0]] = c ? reinterpret_cast<const S*>(g.data[2])[off[2]]
                                                : reinterpret_cast<const S*>(g.data[3])[off[3]];
  }
}

template <Arity kArity>
inline constexpr int kOperands = kArity == Arity::Unary ? 2 : kArity == Arity::Where ? 4 : 3;

// Any strides: offsets decoded per element.
template <typename S, Arity kArity>
__global__ void pointwise_strided(Geometry g, PointwiseOp op, PointwiseParams p) {
  dispatch_op<S, kArity>(op, [&](auto tag) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < g.numel;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      int64_t off[kOperands<kArity>];
      offsets_of<kOperands<kArity>>(g, i, off);
      apply<S, kArity, decltype(tag)::value>(g, p, off);
    }
  });
}

// N consecutive elements of one operand, moved as one aligned load or store.
template <typename E, int N>
struct alignas(sizeof(E) * N) Pack {
  E v[N];
};
template <typename S>
inline constexpr int kPack = 16 / sizeof(S) > 8 ? 8 : static_cast<int>(16 / sizeof(S));

// Dense operands (one unit-stride run each, aligned to their pack), op kOp: each thread moves N
// elements per operand with one vector access; the tail runs element by element.
template <typename S, Arity kArity, PointwiseOp kOp>
__device__ inline void packed_loop(const Geometry& g, const PointwiseParams& p) {
  constexpr int N = kPack<S>;
  using T = Storage<S>;
  using C = typename T::Compute;
  using Out = std::conditional_t<kArity == Arity::Compare, bool, S>;
  const int64_t packs = g.numel / N, first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t v = first; v < packs; v += step) {
    Pack<Out, N> o;
    if constexpr (kArity == Arity::Where) {
      const Pack<bool, N> c = reinterpret_cast<const Pack<bool, N>*>(g.data[1])[v];
      const Pack<S, N> a = reinterpret_cast<const Pack<S, N>*>(g.data[2])[v];
      const Pack<S, N> b = reinterpret_cast<const Pack<S, N>*>(g.data[3])[v];
#pragma unroll
      for (int k = 0; k < N; ++k) o.v[k] = c.v[k] ? a.v[k] : b.v[k];
    } else if constexpr (kArity == Arity::Unary) {
      const Pack<S, N> a = reinterpret_cast<const Pack<S, N>*>(g.data[1])[v];
#pragma unroll
      for (int k = 0; k < N; ++k) o.v[k] = T::store(unary<C>(kOp, T::load(a.v[k]), p));
    } else {
      const Pack<S, N> a = reinterpret_cast<const Pack<S, N>*>(g.data[1])[v];
      const Pack<S, N> b = reinterpret_cast<const Pack<S, N>*>(g.data[2])[v];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        if constexpr (kArity == Arity::Compare) o.v[k] = compare<C>(kOp, T::load(a.v[k]), T::load(b.v[k]));
        else o.v[k] = T::store(binary<C>(kOp, T::load(a.v[k]), T::load(b.v[k]), p));
      }
    }
    reinterpret_cast<Pack<Out, N>*>(g.data[0])[v] = o;
  }
  for (int64_t i = packs * N + first; i < g.numel; i += step) {
    int64_t off[kOperands<kArity>];
#pragma unroll
    for (int k = 0; k < kOperands<kArity>; ++k) off[k] = i;
    apply<S, kArity, kOp>(g, p, off);
  }
}

template <typename S, Arity kArity>
__global__ void pointwise_packed(Geometry g, PointwiseOp op, PointwiseParams p) {
  dispatch_op<S, kArity>(op, [&](auto tag) { packed_loop<S, kArity, decltype(tag)::value>(g, p); });
}

bool aligned(const void* ptr, size_t bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; }

template <typename S, Arity kArity>
cudaError_t launch(const Geometry& g, PointwiseOp op, const PointwiseParams& p, cudaStream_t stream) {
  constexpr int N = kPack<S>;
  bool packed = dense_1d(g) && g.ndim == 1;
  for (int k = 0; packed && k < g.operands; ++k) {
    const bool is_bool = (k == 0 && kArity == Arity::Compare) || (k == 1 && kArity == Arity::Where);
    packed = aligned(g.data[k], (is_bool ? sizeof(bool) : sizeof(S)) * N);
  }
  if (packed) {
    launch_kernel(pointwise_packed<S, kArity>, blocks_for((g.numel + N - 1) / N, kThreads), kThreads, stream, g, op, p);
  } else {
    launch_kernel(pointwise_strided<S, kArity>, blocks_for(g.numel, kThreads), kThreads, stream, g, op, p);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t pointwise(PointwiseOp op, ScalarType input_type, const Geometry& g, const PointwiseParams& p,
                      cudaStream_t stream) {
  if (g.numel == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  visit(input_type, [&](auto s) {
    using S = decltype(s);
    if (floating_only(op) && !kFloating<S>) return;
    switch (arity_of(op)) {
      case Arity::Unary: err = launch<S, Arity::Unary>(g, op, p, stream); break;
      case Arity::Binary: err = launch<S, Arity::Binary>(g, op, p, stream); break;
      case Arity::Compare: err = launch<S, Arity::Compare>(g, op, p, stream); break;
      case Arity::Where: err = launch<S, Arity::Where>(g, op, p, stream); break;
    }
  });
  return err;
}

}  // namespace lg::cuda::kernels

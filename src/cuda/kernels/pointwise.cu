// The Pointwise family on CUDA. One kernel per (input storage type, arity, dense or strided)
// with the op chosen inside: each thread picks its op once, before its element loop, and then
// runs a loop compiled for that op alone (dispatch_op). Picking it per element cost a branch
// tree and an indirect jump per element, which made float16 relu instruction-bound (its SASS
// is discussed in docs/performance.md). The build instantiates 8 dtypes x 4 arities x 2 forms
// instead of a kernel per op and dtype. The math is dispatch/pointwise_math.h, the CPU
// kernels' own: 16-bit floats compute in float, integer add/mul/neg wrap, NaN passes through
// max/min and the clamps.
#include "cuda/kernels/device_types.cuh"
#include "dispatch/pointwise_math.h"

namespace lg::cuda::kernels {
namespace {

using dispatch::OpId;
using dispatch::PointwiseArity;
using dispatch::PointwiseMath;
using dispatch::PointwiseParams;

constexpr int kThreads = 256;

// Whether op kId is pointwise, of arity kArity, and compiled for storage type S (the host
// never asks an integer type for a floating-only op, so those loops are not compiled).
template <typename S, OpId kId, PointwiseArity kArity>
__host__ __device__ constexpr bool takes() {
  using M = PointwiseMath<kId>;
  if constexpr (!M::kIsPointwise) {
    return false;
  } else {
    return M::kArity == kArity && dispatch::rule_admits(M::kRule, kFloating<S>, std::is_same_v<S, bool>);
  }
}

template <OpId kId>
struct OpTag {
  static constexpr OpId value = kId;
};

// Calls fn(OpTag<op>{}) where op is the runtime `op`, trying in op_list.def order the ops that
// takes<> accepts. An if-chain run once per thread.
template <typename S, PointwiseArity kArity, int kFrom = 0, typename Fn>
__device__ inline void dispatch_op(OpId op, Fn&& fn) {
  if constexpr (kFrom < static_cast<int>(dispatch::kNumOps)) {
    constexpr OpId kId = static_cast<OpId>(kFrom);
    if constexpr (takes<S, kId, kArity>()) {
      if (op == kId) {
        fn(OpTag<kId>{});
        return;
      }
    }
    dispatch_op<S, kArity, kFrom + 1>(op, fn);
  }
}

// One element: operand offsets in `off` ([0] the output), op kOp's math inlined.
template <typename S, PointwiseArity kArity, OpId kOp>
__device__ inline void apply(const Geometry& g, const PointwiseParams& p, const int64_t* off) {
  using T = Storage<S>;
  using C = typename T::Compute;
  using M = PointwiseMath<kOp>;
  if constexpr (kArity == PointwiseArity::Unary) {
    const C x = T::load(reinterpret_cast<const S*>(g.data[1])[off[1]]);
    reinterpret_cast<S*>(g.data[0])[off[0]] = T::store(M::template apply<C>(x, p));
  } else if constexpr (kArity == PointwiseArity::Binary) {
    const C a = T::load(reinterpret_cast<const S*>(g.data[1])[off[1]]);
    const C b = T::load(reinterpret_cast<const S*>(g.data[2])[off[2]]);
    reinterpret_cast<S*>(g.data[0])[off[0]] = T::store(M::template apply<C>(a, b, p));
  } else if constexpr (kArity == PointwiseArity::Compare) {
    const C a = T::load(reinterpret_cast<const S*>(g.data[1])[off[1]]);
    const C b = T::load(reinterpret_cast<const S*>(g.data[2])[off[2]]);
    reinterpret_cast<bool*>(g.data[0])[off[0]] = M::template apply<C>(a, b);
  } else {
    const bool c = reinterpret_cast<const bool*>(g.data[1])[off[1]];
    reinterpret_cast<S*>(g.data[0])[off[0]] = c ? reinterpret_cast<const S*>(g.data[2])[off[2]]
                                                : reinterpret_cast<const S*>(g.data[3])[off[3]];
  }
}

template <PointwiseArity kArity>
inline constexpr int kOperands = kArity == PointwiseArity::Unary ? 2 : kArity == PointwiseArity::Where ? 4 : 3;

// Any strides: offsets decoded per element.
template <typename S, PointwiseArity kArity>
__global__ void pointwise_strided(Geometry g, OpId op, PointwiseParams p) {
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
template <typename S, PointwiseArity kArity, OpId kOp>
__device__ inline void packed_loop(const Geometry& g, const PointwiseParams& p) {
  constexpr int N = kPack<S>;
  using T = Storage<S>;
  using C = typename T::Compute;
  using M = PointwiseMath<kOp>;
  using Out = std::conditional_t<kArity == PointwiseArity::Compare, bool, S>;
  const int64_t packs = g.numel / N, first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t v = first; v < packs; v += step) {
    Pack<Out, N> o;
    if constexpr (kArity == PointwiseArity::Where) {
      const Pack<bool, N> c = reinterpret_cast<const Pack<bool, N>*>(g.data[1])[v];
      const Pack<S, N> a = reinterpret_cast<const Pack<S, N>*>(g.data[2])[v];
      const Pack<S, N> b = reinterpret_cast<const Pack<S, N>*>(g.data[3])[v];
#pragma unroll
      for (int k = 0; k < N; ++k) o.v[k] = c.v[k] ? a.v[k] : b.v[k];
    } else if constexpr (kArity == PointwiseArity::Unary) {
      const Pack<S, N> a = reinterpret_cast<const Pack<S, N>*>(g.data[1])[v];
#pragma unroll
      for (int k = 0; k < N; ++k) o.v[k] = T::store(M::template apply<C>(T::load(a.v[k]), p));
    } else {
      const Pack<S, N> a = reinterpret_cast<const Pack<S, N>*>(g.data[1])[v];
      const Pack<S, N> b = reinterpret_cast<const Pack<S, N>*>(g.data[2])[v];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        if constexpr (kArity == PointwiseArity::Compare) o.v[k] = M::template apply<C>(T::load(a.v[k]), T::load(b.v[k]));
        else o.v[k] = T::store(M::template apply<C>(T::load(a.v[k]), T::load(b.v[k]), p));
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

template <typename S, PointwiseArity kArity>
__global__ void pointwise_packed(Geometry g, OpId op, PointwiseParams p) {
  dispatch_op<S, kArity>(op, [&](auto tag) { packed_loop<S, kArity, decltype(tag)::value>(g, p); });
}

bool aligned(const void* ptr, size_t bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; }

template <typename S, PointwiseArity kArity>
cudaError_t launch(const Geometry& g, OpId op, const PointwiseParams& p, cudaStream_t stream) {
  constexpr int N = kPack<S>;
  bool packed = dense_1d(g) && g.ndim == 1;
  for (int k = 0; packed && k < g.operands; ++k) {
    const bool is_bool = (k == 0 && kArity == PointwiseArity::Compare) || (k == 1 && kArity == PointwiseArity::Where);
    packed = aligned(g.data[k], (is_bool ? sizeof(bool) : sizeof(S)) * N);
  }
  if (packed) {
    launch_kernel(pointwise_packed<S, kArity>, blocks_for((g.numel + N - 1) / N, kThreads), kThreads, stream, g, op, p);
  } else {
    launch_kernel(pointwise_strided<S, kArity>, blocks_for(g.numel, kThreads), kThreads, stream, g, op, p);
  }
  return cudaGetLastError();
}

// launch<S, arity of op>, for the op of op_list.def that `op` is; cudaErrorInvalidValue when
// it is no pointwise op or S is not a storage type it takes.
template <typename S, int kFrom = 0>
cudaError_t launch_op(OpId op, const Geometry& g, const PointwiseParams& p, cudaStream_t stream) {
  if constexpr (kFrom < static_cast<int>(dispatch::kNumOps)) {
    constexpr OpId kId = static_cast<OpId>(kFrom);
    if constexpr (PointwiseMath<kId>::kIsPointwise) {
      constexpr PointwiseArity kArity = PointwiseMath<kId>::kArity;
      if constexpr (takes<S, kId, kArity>())
        if (op == kId) return launch<S, kArity>(g, op, p, stream);
    }
    return launch_op<S, kFrom + 1>(op, g, p, stream);
  } else {
    return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t pointwise(OpId op, ScalarType input_type, const Geometry& g, const PointwiseParams& p,
                      cudaStream_t stream) {
  if (g.numel == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  visit(input_type, [&](auto s) {
    using S = decltype(s);
    err = launch_op<S>(op, g, p, stream);
  });
  return err;
}

}  // namespace lg::cuda::kernels

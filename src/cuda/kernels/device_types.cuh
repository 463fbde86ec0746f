// Device-side helpers shared by the .cu files: the storage types behind kernels::ScalarType,
// their compute types (float for the 16-bit floats, as on CPU), and offset decoding of a
// Geometry.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/kernels/launch.h"

#if defined(LG_CUDA_EMULATION)
#include "cuda/kernels/emulation.h"
#endif

namespace lg::cuda::kernels {

template <typename S>
struct Storage {
  using Compute = S;
  __device__ static Compute load(S v) { return v; }
  __device__ static S store(Compute v) { return v; }
};
template <>
struct Storage<__half> {
  using Compute = float;
  __device__ static float load(__half v) { return __half2float(v); }
  __device__ static __half store(float v) { return __float2half_rn(v); }
};
template <>
struct Storage<__nv_bfloat16> {
  using Compute = float;
  __device__ static float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
};

// V elements of T moved as one aligned load or store.
template <typename T, int V>
struct alignas(sizeof(T) * V) Packet {
  T v[V];
};

template <typename S>
inline constexpr bool kFloating = std::is_floating_point_v<typename Storage<S>::Compute>;

// Calls fn(S{}) with the storage type of t; false for an unknown value.
template <typename Fn>
bool visit(ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::Float32: fn(float{}); return true;
    case ScalarType::Float16: fn(__half{}); return true;
    case ScalarType::BFloat16: fn(__nv_bfloat16{}); return true;
    case ScalarType::Float64: fn(double{}); return true;
    case ScalarType::Int64: fn(int64_t{}); return true;
    case ScalarType::Int32: fn(int32_t{}); return true;
    case ScalarType::UInt8: fn(uint8_t{}); return true;
    case ScalarType::Bool: fn(bool{}); return true;
  }
  return false;
}

// Element offsets of operands 0 .. n-1 for linear index i of the iteration space. The loops
// are unrolled over the fixed maximum so every index into the Geometry is a compile-time
// constant: a dynamically indexed kernel parameter would be copied to local memory per thread.
// Dims are divided through the Geometry's precomputed IndexDividers (a multiply-high instead
// of a 64-bit division); the outermost dim takes what is left of i, undivided.
template <int N>
__device__ inline void offsets_of(const Geometry& g, int64_t i, int64_t (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d >= g.ndim) continue;
    int64_t idx = i;
    if (d > 0) {
      uint64_t rest = 0;
      i = static_cast<int64_t>(g.dividers[d].divmod(static_cast<uint64_t>(i), rest));
      idx = static_cast<int64_t>(rest);
    }
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += idx * g.strides[k][d];
  }
}

// Offset of row-major position i < the product of `dims` sizes, with the given strides and the
// sizes' IndexDividers (unrolled over the fixed maximum, like offsets_of; the outermost dim is
// not divided, so its divider is not read).
__device__ inline int64_t row_major_offset(int64_t i, int dims, const int64_t* stride, const IndexDivider* divider) {
  int64_t off = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d >= dims) continue;
    if (d == 0) {
      off += i * stride[0];
    } else {
      uint64_t rest = 0;
      i = static_cast<int64_t>(divider[d].divmod(static_cast<uint64_t>(i), rest));
      off += static_cast<int64_t>(rest) * stride[d];
    }
  }
  return off;
}

// divider[d] = IndexDivider::of(size[d]) for d < dims (host side, before a launch).
inline void set_dividers(IndexDivider* divider, const int64_t* size, int dims) {
  for (int d = 0; d < dims; ++d) divider[d] = IndexDivider::of(static_cast<uint64_t>(size[d]));
}

// Whether every operand runs with unit stride over one merged dim (the dense fast path).
inline bool dense_1d(const Geometry& g) {
  if (g.ndim != 1) return g.ndim == 0;
  for (int k = 0; k < g.operands; ++k)
    if (g.strides[k][0] != 1) return false;
  return true;
}

// kernel<<<grid, block, 0, stream>>>(args...), each argument converted to its parameter's type;
// in the host emulation build (emulation.h) the same kernel runs on host threads instead.
template <typename... Params, typename... Args>
inline void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, const Args&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "launch_kernel: one argument per kernel parameter");
#if defined(LG_CUDA_EMULATION)
  (void)stream;
  emulation::run(grid, block, [&] { kernel(static_cast<Params>(args)...); });
#else
  kernel<<<grid, block, 0, stream>>>(static_cast<Params>(args)...);
#endif
}

// Blocks for a grid-stride loop over n elements.
inline unsigned blocks_for(int64_t n, int threads) {
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

}  // namespace lg::cuda::kernels

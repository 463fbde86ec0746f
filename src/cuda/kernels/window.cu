// Upsampling, pooling and pad on the device: one thread per output element, taken in the
// output's memory order (outputs are dense), so consecutive threads write consecutive
// addresses -- channels in NHWC, W in NCHW -- and read neighbouring input elements.
#include "cuda/kernels/device_types.cuh"

namespace lg::cuda::kernels {
namespace {

constexpr int kThreads = 256;

// The logical (n, c, d, h, w) of the element at offset i of a dense view: (i / stride) % size
// per dim, through the view's IndexDividers (ten 64-bit division routines per element before).
__device__ inline void coords_of(const View5& v, int64_t i, int64_t (&idx)[5]) {
#pragma unroll
  for (int d = 0; d < 5; ++d) {
    const uint64_t step = v.stride_divider[d].quotient(static_cast<uint64_t>(i));
    idx[d] = v.stride[d] == 0 ? 0 : static_cast<int64_t>(v.size_divider[d].remainder(step));
  }
}

// The CPU kernel's start value of a max window: -inf, or the type's lowest value.
template <typename C>
__device__ inline C lowest() {
  if constexpr (std::is_same_v<C, float>) return -__int_as_float(0x7f800000);
  else if constexpr (std::is_same_v<C, double>) return -__longlong_as_double(0x7ff0000000000000LL);
  else if constexpr (std::is_signed_v<C>) return static_cast<C>(C(1) << (sizeof(C) * 8 - 1));
  else return C(0);
}

__device__ inline int64_t numel_of(const View5& v) {
  int64_t n = 1;
#pragma unroll
  for (int d = 0; d < 5; ++d) n *= v.size[d];
  return n;
}

template <typename S>
__global__ void upsample_kernel(InterpArgs a) {
  using T = Storage<S>;
  using C = typename T::Compute;
  const int64_t n = numel_of(a.out);
  const S* x = reinterpret_cast<const S*>(a.in_data);
  S* o = reinterpret_cast<S*>(a.out_data);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c[5];
    coords_of(a.out, i, c);
    const S* base = x + c[0] * a.in.stride[0] + c[1] * a.in.stride[1];
    if (a.taps[0] == 1 && a.taps[1] == 1 && a.taps[2] == 1) {
      o[i] = base[a.index[0][c[2]] * a.in.stride[2] + a.index[1][c[3]] * a.in.stride[3] + a.index[2][c[4]] * a.in.stride[4]];
      continue;
    }
    if constexpr (kFloating<S>) {
      C acc = 0;
      for (int td = 0; td < a.taps[0]; ++td)
        for (int th = 0; th < a.taps[1]; ++th)
          for (int tw = 0; tw < a.taps[2]; ++tw) {
            const int64_t kd = c[2] * a.taps[0] + td, kh = c[3] * a.taps[1] + th, kw = c[4] * a.taps[2] + tw;
            const C w = static_cast<C>(a.weight[0][kd]) * static_cast<C>(a.weight[1][kh]) * static_cast<C>(a.weight[2][kw]);
            acc += w * T::load(base[a.index[0][kd] * a.in.stride[2] + a.index[1][kh] * a.in.stride[3] +
                                    a.index[2][kw] * a.in.stride[4]]);
          }
      o[i] = T::store(acc);
    }
  }
}

template <typename S>
__global__ void pool_kernel(PoolArgs a) {
  using T = Storage<S>;
  using C = typename T::Compute;
  const int64_t n = numel_of(a.out);
  const S* x = reinterpret_cast<const S*>(a.in_data);
  S* o = reinterpret_cast<S*>(a.out_data);
  const int64_t plane_hw = a.in.size[3] * a.in.size[4];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c[5];
    coords_of(a.out, i, c);
    const S* base = x + c[0] * a.in.stride[0] + c[1] * a.in.stride[1];
    const int64_t d0 = a.begin[0][c[2]], d1 = a.end[0][c[2]], h0 = a.begin[1][c[3]], h1 = a.end[1][c[3]];
    const int64_t w0 = a.begin[2][c[4]], w1 = a.end[2][c[4]];
    if (a.max) {
      C best = 0;
      int64_t arg = -1;
      for (int64_t d = d0; d < d1; d += a.dilation[0])
        for (int64_t h = h0; h < h1; h += a.dilation[1])
          for (int64_t w = w0; w < w1; w += a.dilation[2]) {
            const C v = T::load(base[d * a.in.stride[2] + h * a.in.stride[3] + w * a.in.stride[4]]);
            bool take = arg < 0 || v > best;
            if constexpr (std::is_floating_point_v<C>) take = take || v != v;  // NaN wins, as on the CPU
            if (take) {
              best = v;
              arg = d * plane_hw + h * a.in.size[4] + w;
            }
          }
      if (arg < 0) best = lowest<C>();  // a window that lies entirely in the padding
      o[i] = T::store(best);
      if (a.indices != nullptr) {
        const int64_t at = c[0] * a.idx.stride[0] + c[1] * a.idx.stride[1] + c[2] * a.idx.stride[2] +
                           c[3] * a.idx.stride[3] + c[4] * a.idx.stride[4];
        a.indices[at] = arg;
      }
    } else if constexpr (kFloating<S>) {
      C acc = 0;
      for (int64_t d = d0; d < d1; ++d)
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) acc += T::load(base[d * a.in.stride[2] + h * a.in.stride[3] + w * a.in.stride[4]]);
      const int64_t div = a.divisor_override != 0 ? a.divisor_override : a.count[0][c[2]] * a.count[1][c[3]] * a.count[2][c[4]];
      o[i] = T::store(acc / static_cast<C>(div));
    }
  }
}

// Pooling with channels innermost in both tensors (channels_last, no indices asked for): a
// thread pools V neighbouring channels of one output position, reading each window tap as one
// 16-byte packet. Same window tables and results as pool_kernel.
template <typename S, int V>
__global__ void pool_channels_last_kernel(PoolArgs a, int64_t packets, IndexDivider channel_packets) {
  using T = Storage<S>;
  using C = typename T::Compute;
  const S* x = reinterpret_cast<const S*>(a.in_data);
  S* o = reinterpret_cast<S*>(a.out_data);
  for (int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; p < packets;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // p = (((n * D + od) * H + oh) * W + ow) * channel_packets + c0 / V, decoded by dividers.
    uint64_t packet = 0, w = 0, h = 0, d = 0;
    uint64_t rest = channel_packets.divmod(static_cast<uint64_t>(p), packet);
    rest = a.out.size_divider[4].divmod(rest, w);
    rest = a.out.size_divider[3].divmod(rest, h);
    const int64_t n = static_cast<int64_t>(a.out.size_divider[2].divmod(rest, d));
    const int64_t c0 = static_cast<int64_t>(packet) * V, ow = static_cast<int64_t>(w), oh = static_cast<int64_t>(h),
                  od = static_cast<int64_t>(d);
    const S* base = x + n * a.in.stride[0] + c0;
    const int64_t d0 = a.begin[0][od], d1 = a.end[0][od], h0 = a.begin[1][oh], h1 = a.end[1][oh];
    const int64_t w0 = a.begin[2][ow], w1 = a.end[2][ow];
    C acc[V];
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] = 0;
    bool any = false;
    const int64_t step_d = a.max ? a.dilation[0] : 1, step_h = a.max ? a.dilation[1] : 1, step_w = a.max ? a.dilation[2] : 1;
    for (int64_t d = d0; d < d1; d += step_d)
      for (int64_t h = h0; h < h1; h += step_h)
        for (int64_t w = w0; w < w1; w += step_w) {
          const Packet<S, V> in =
              *reinterpret_cast<const Packet<S, V>*>(base + d * a.in.stride[2] + h * a.in.stride[3] + w * a.in.stride[4]);
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const C val = T::load(in.v[v]);
            if (a.max) {
              bool take = !any || val > acc[v];
              if constexpr (std::is_floating_point_v<C>) take = take || val != val;  // NaN wins, as on the CPU
              if (take) acc[v] = val;
            } else {
              acc[v] += val;
            }
          }
          any = true;
        }
    Packet<S, V> out;
    if (a.max) {
#pragma unroll
      for (int v = 0; v < V; ++v) out.v[v] = T::store(any ? acc[v] : lowest<C>());
    } else {
      const int64_t div = a.divisor_override != 0 ? a.divisor_override : a.count[0][od] * a.count[1][oh] * a.count[2][ow];
#pragma unroll
      for (int v = 0; v < V; ++v) out.v[v] = T::store(acc[v] / static_cast<C>(div));
    }
    *reinterpret_cast<Packet<S, V>*>(o + n * a.out.stride[0] + c0 + od * a.out.stride[2] + oh * a.out.stride[3] +
                                      ow * a.out.stride[4]) = out;
  }
}

template <typename E>
__global__ void pad_kernel(PadArgs a) {
  const E* x = reinterpret_cast<const E*>(a.in_data);
  E* o = reinterpret_cast<E*>(a.out_data);
  const E fill = static_cast<E>(a.fill_bits);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < a.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t src = 0;
    bool filled = false;
#pragma unroll
    for (int d = 0; d < kMaxDims; ++d) {
      if (d >= a.rank) continue;
      const int64_t idx = a.out_stride[d] == 0 ? 0 : (i / a.out_stride[d]) % a.out_size[d];
      const int64_t s = a.source[d][idx];
      filled |= s < 0;
      src += s * a.in_stride[d];
    }
    o[i] = filled ? fill : x[src];
  }
}

}  // namespace

namespace {

// Launches kernel<S> over the output of a 5-D view for every dtype but bool.
template <template <typename> class Launch, typename Args>
cudaError_t launch_over_output(const Args& a, ScalarType type, cudaStream_t stream) {
  int64_t n = 1;
  for (int d = 0; d < 5; ++d) n *= a.out.size[d];
  if (n == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (!std::is_same_v<S, bool>) err = Launch<S>::run(a, blocks_for(n, kThreads), stream);
  });
  return err;
}

template <typename S>
struct UpsampleLaunch {
  static cudaError_t run(const InterpArgs& a, unsigned blocks, cudaStream_t stream) {
    launch_kernel(upsample_kernel<S>, blocks, kThreads, stream, a);
    return cudaGetLastError();
  }
};
// Whether every tap and output of the pool is a whole aligned packet of V channels.
template <typename S, int V>
bool packs_channels(const PoolArgs& a) {
  if (a.indices != nullptr || a.in.stride[1] != 1 || a.out.stride[1] != 1 || a.out.size[1] % V != 0) return false;
  if (reinterpret_cast<uintptr_t>(a.in_data) % (sizeof(S) * V) != 0 ||
      reinterpret_cast<uintptr_t>(a.out_data) % (sizeof(S) * V) != 0)
    return false;
  for (int d = 0; d < 5; ++d)
    if (d != 1 && (a.in.stride[d] % V != 0 || a.out.stride[d] % V != 0)) return false;
  return true;
}

template <typename S>
struct PoolLaunch {
  static cudaError_t run(const PoolArgs& a, unsigned blocks, cudaStream_t stream) {
    constexpr int V = sizeof(S) >= 16 ? 1 : static_cast<int>(16 / sizeof(S));
    if constexpr (kFloating<S> || std::is_integral_v<S>) {
      if (a.max || kFloating<S>) {
        if (packs_channels<S, V>(a)) {
          int64_t packets = 1;
          for (int d = 0; d < 5; ++d) packets *= a.out.size[d];
          packets /= V;
          launch_kernel(pool_channels_last_kernel<S, V>, blocks_for(packets, kThreads), kThreads, stream, a, packets,
                        IndexDivider::of(static_cast<uint64_t>(a.out.size[1] / V)));
          return cudaGetLastError();
        }
      }
    }
    launch_kernel(pool_kernel<S>, blocks, kThreads, stream, a);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t upsample(const InterpArgs& a, ScalarType type, cudaStream_t stream) {
  return launch_over_output<UpsampleLaunch>(a, type, stream);
}

cudaError_t pool(const PoolArgs& a, ScalarType type, cudaStream_t stream) {
  return launch_over_output<PoolLaunch>(a, type, stream);
}

cudaError_t pad(const PadArgs& a, int element_bytes, cudaStream_t stream) {
  if (a.numel == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(a.numel, kThreads);
  switch (element_bytes) {
    case 1: launch_kernel(pad_kernel<uint8_t>, blocks, kThreads, stream, a); break;
    case 2: launch_kernel(pad_kernel<uint16_t>, blocks, kThreads, stream, a); break;
    case 4: launch_kernel(pad_kernel<uint32_t>, blocks, kThreads, stream, a); break;
    case 8: launch_kernel(pad_kernel<uint64_t>, blocks, kThreads, stream, a); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace lg::cuda::kernels

// Normalisation on the device: per-group moments (a block per group, a shared-memory tree
// reduction in double) and the elementwise affine map, the host combining the moments into
// statistics (src/cuda/norm_ops.cpp) exactly as the CPU kernel does; and for batch norm on
// dense NCHW or channels-last tensors, per-channel sums, statistics and a packed affine map that
// never leave the device.
#include <algorithm>

#include "cuda/kernels/device_types.cuh"
// After device_types.cuh, which defines __device__ and friends for the emulated build.
#include "cuda/kernels/block_sum.cuh"

namespace lg::cuda::kernels {
namespace {

constexpr int kThreads = 256;

template <typename S>
__global__ void moments_kernel(GroupedView v, const S* x, const double* shift, int power, double* out) {
  __shared__ double partial[kThreads];
  for (int64_t g = blockIdx.x; g < v.groups; g += gridDim.x) {
    const S* base = x + row_major_offset(g, v.outer_dims, v.outer_stride, v.outer_divider);
    const double s = shift != nullptr ? shift[g] : 0.0;
    double acc = 0;
    for (int64_t j = threadIdx.x; j < v.inner_count; j += blockDim.x) {
      const double d = static_cast<double>(Storage<S>::load(base[row_major_offset(j, v.inner_dims, v.inner_stride, v.inner_divider)])) - s;
      acc += power == 1 ? d : d * d;
    }
    const double total = block_sum<kThreads>(partial, acc);
    if (threadIdx.x == 0) out[g] = total;
  }
}

template <typename S>
__global__ void affine_kernel(GroupedView v, const S* x, S* y, const double* mean, const double* scale,
                              const double* shift, const double* w, const double* b) {
  using T = Storage<S>;
  using C = typename T::Compute;
  const int64_t n = v.groups * v.inner_count;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint64_t within = 0;
    const int64_t g = static_cast<int64_t>(v.inner_count_divider.divmod(static_cast<uint64_t>(i), within));
    const int64_t j = static_cast<int64_t>(within);
    const int64_t xo = row_major_offset(g, v.outer_dims, v.outer_stride, v.outer_divider) + row_major_offset(j, v.inner_dims, v.inner_stride, v.inner_divider);
    const int64_t yo =
        row_major_offset(g, v.outer_dims, v.outer_out_stride, v.outer_divider) + row_major_offset(j, v.inner_dims, v.inner_out_stride, v.inner_divider);
    double r = (static_cast<double>(T::load(x[xo])) - mean[g]) * scale[g];
    if (w != nullptr) r *= w[j];
    if (shift != nullptr) r += shift[g];
    if (b != nullptr) r += b[j];
    y[yo] = T::store(static_cast<C>(r));
  }
}

template <typename S>
__global__ void coefficients_kernel(int64_t channels, const S* mean, const S* var, const S* w, const S* b, double eps,
                                    float* scale, float* shift) {
  using T = Storage<S>;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < channels;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double wc = w != nullptr ? static_cast<double>(T::load(w[c])) : 1.0;
    const double bc = b != nullptr ? static_cast<double>(T::load(b[c])) : 0.0;
    const double s = wc / sqrt(static_cast<double>(T::load(var[c])) + eps);
    scale[c] = static_cast<float>(s);
    shift[c] = static_cast<float>(bc - static_cast<double>(T::load(mean[c])) * s);
  }
}

// V neighbours per thread as one 16-byte packet; with channels innermost they are V channels of
// one position (channels % V == 0), otherwise V positions of one channel (inner % V == 0).
template <typename S, int V, bool kChannelsInnermost>
__global__ void channel_affine_kernel(ChannelAffine a, const S* x, S* y, const float* scale, const float* shift) {
  using T = Storage<S>;
  using C = typename T::Compute;
  const int64_t packets = a.numel / V;
  for (int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; p < packets;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = p * V;
    const Packet<S, V> in = reinterpret_cast<const Packet<S, V>*>(x)[p];
    Packet<S, V> out;
    if constexpr (kChannelsInnermost) {
      const int64_t c0 = static_cast<int64_t>(a.channels_divider.remainder(static_cast<uint64_t>(i)));
#pragma unroll
      for (int v = 0; v < V; ++v)
        out.v[v] = T::store(static_cast<C>(static_cast<float>(T::load(in.v[v])) * scale[c0 + v] + shift[c0 + v]));
    } else {
      const int64_t c =
          static_cast<int64_t>(a.channels_divider.remainder(a.inner_divider.quotient(static_cast<uint64_t>(i))));
      const float sc = scale[c], sh = shift[c];
#pragma unroll
      for (int v = 0; v < V; ++v) out.v[v] = T::store(static_cast<C>(static_cast<float>(T::load(in.v[v])) * sc + sh));
    }
    reinterpret_cast<Packet<S, V>*>(y)[p] = out;
  }
}

// Channels innermost: threadIdx.x walks 32 neighbouring channels (coalesced), threadIdx.y and
// blockIdx.y walk the positions; the 8 partial sums of a channel meet in shared memory.
template <typename S>
__global__ void channel_sums_innermost(ChannelAffine a, const S* x, const double* shift_sums, double shift_scale,
                                       int power, double* out) {
  __shared__ double partial[8][33];
  const int64_t c = blockIdx.x * 32 + threadIdx.x, positions = a.numel / a.channels;
  double acc = 0;
  if (c < a.channels) {
    const double shift = shift_sums != nullptr ? shift_sums[c] * shift_scale : 0.0;
    for (int64_t p = blockIdx.y * 8 + threadIdx.y; p < positions; p += static_cast<int64_t>(gridDim.y) * 8) {
      const double d = static_cast<double>(Storage<S>::load(x[p * a.channels + c])) - shift;
      acc += power == 1 ? d : d * d;
    }
  }
  partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < a.channels) {
    double sum = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) sum += partial[k][threadIdx.x];
    atomicAdd(out + c, sum);
  }
}

// NCHW: block (c, chunk) walks its share of channel c's N planes of `inner` elements.
template <typename S>
__global__ void channel_sums_planar(ChannelAffine a, const S* x, const double* shift_sums, double shift_scale, int power,
                                    double* out) {
  __shared__ double partial[kThreads];
  const int64_t c = blockIdx.x, per_channel = a.numel / a.channels;
  const double shift = shift_sums != nullptr ? shift_sums[c] * shift_scale : 0.0;
  double acc = 0;
  for (int64_t i = blockIdx.y * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < per_channel;
       i += static_cast<int64_t>(gridDim.y) * blockDim.x) {
    uint64_t within = 0;
    const int64_t n = static_cast<int64_t>(a.inner_divider.divmod(static_cast<uint64_t>(i), within));
    const int64_t s = static_cast<int64_t>(within);
    const double d = static_cast<double>(Storage<S>::load(x[(n * a.channels + c) * a.inner + s])) - shift;
    acc += power == 1 ? d : d * d;
  }
  const double total = block_sum<kThreads>(partial, acc);
  if (threadIdx.x == 0) atomicAdd(out + c, total);
}

template <typename S>
__global__ void batch_statistics_kernel(BatchStatistics st) {
  using T = Storage<S>;
  const double unbias = st.count > 1 ? st.count / (st.count - 1) : 1.0;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < st.channels;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double mean = st.sums[c] / st.count, var = st.squares[c] / st.count;
    if (st.running_mean != nullptr) {
      S* rm = static_cast<S*>(st.running_mean);
      S* rv = static_cast<S*>(st.running_var);
      rm[c] = T::store(static_cast<typename T::Compute>((1 - st.momentum) * static_cast<double>(T::load(rm[c])) +
                                                        st.momentum * mean));
      rv[c] = T::store(static_cast<typename T::Compute>((1 - st.momentum) * static_cast<double>(T::load(rv[c])) +
                                                        st.momentum * var * unbias));
    }
    const double w = st.w != nullptr ? static_cast<double>(T::load(static_cast<const S*>(st.w)[c])) : 1.0;
    const double b = st.b != nullptr ? static_cast<double>(T::load(static_cast<const S*>(st.b)[c])) : 0.0;
    const double scale = w / sqrt(var + st.eps);
    st.scale[c] = static_cast<float>(scale);
    st.shift[c] = static_cast<float>(b - mean * scale);
  }
}

// The view with its dividers set, as the kernels read it.
ChannelAffine with_dividers(const ChannelAffine& view) {
  ChannelAffine a = view;
  a.channels_divider = IndexDivider::of(static_cast<uint64_t>(a.channels));
  a.inner_divider = IndexDivider::of(static_cast<uint64_t>(a.inner));
  return a;
}

template <typename S, int V>
void launch_channel_affine(const ChannelAffine& a, const char* in, char* out, const float* scale, const float* shift,
                           cudaStream_t stream) {
  const unsigned blocks = blocks_for(a.numel / V, kThreads);
  const S* x = reinterpret_cast<const S*>(in);
  S* y = reinterpret_cast<S*>(out);
  if (a.channels_innermost) launch_kernel(channel_affine_kernel<S, V, true>, blocks, kThreads, stream, a, x, y, scale, shift);
  else launch_kernel(channel_affine_kernel<S, V, false>, blocks, kThreads, stream, a, x, y, scale, shift);
}

}  // namespace

cudaError_t channel_coefficients(int64_t channels, ScalarType stats_type, const void* mean, const void* var,
                                 const void* w, const void* b, double eps, float* scale, float* shift,
                                 cudaStream_t stream) {
  if (channels == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  visit(stats_type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) {
      launch_kernel(coefficients_kernel<S>, blocks_for(channels, kThreads), kThreads, stream, channels,
                    static_cast<const S*>(mean), static_cast<const S*>(var), static_cast<const S*>(w),
                    static_cast<const S*>(b), eps, scale, shift);
      err = cudaGetLastError();
    }
  });
  return err;
}

cudaError_t channel_affine(const ChannelAffine& view, const char* in, char* out, ScalarType type, const float* scale,
                           const float* shift, cudaStream_t stream) {
  if (view.numel == 0) return cudaSuccess;
  const ChannelAffine a = with_dividers(view);
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S> && !std::is_same_v<S, double>) {
      constexpr int V = static_cast<int>(16 / sizeof(S));
      const bool aligned = reinterpret_cast<uintptr_t>(in) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
      const bool packs = aligned && (a.channels_innermost ? a.channels % V == 0 : a.inner % V == 0);
      if (packs) launch_channel_affine<S, V>(a, in, out, scale, shift, stream);
      else launch_channel_affine<S, 1>(a, in, out, scale, shift, stream);
      err = cudaGetLastError();
    }
  });
  return err;
}

cudaError_t channel_sums(const ChannelAffine& view, const char* in, ScalarType type, const double* shift_sums,
                         double shift_scale, int power, double* out, cudaStream_t stream) {
  if (view.numel == 0) return cudaSuccess;
  const ChannelAffine a = with_dividers(view);
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) {
      const S* x = reinterpret_cast<const S*>(in);
      // Enough blocks to fill the device, each thread summing a few dozen elements.
      if (a.channels_innermost) {
        const int64_t gx = (a.channels + 31) / 32, positions = a.numel / a.channels;
        const int64_t gy = std::max<int64_t>(1, std::min<int64_t>((positions + 255) / 256, std::max<int64_t>(1, 4096 / gx)));
        const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(std::min<int64_t>(gy, 65535)));
        launch_kernel(channel_sums_innermost<S>, grid, dim3(32, 8), stream, a, x, shift_sums, shift_scale, power, out);
      } else {
        const int64_t per_channel = a.numel / a.channels;
        const int64_t gy =
            std::max<int64_t>(1, std::min<int64_t>((per_channel + 8191) / 8192, std::max<int64_t>(1, 4096 / a.channels)));
        const dim3 grid(static_cast<unsigned>(a.channels), static_cast<unsigned>(std::min<int64_t>(gy, 65535)));
        launch_kernel(channel_sums_planar<S>, grid, kThreads, stream, a, x, shift_sums, shift_scale, power, out);
      }
      err = cudaGetLastError();
    }
  });
  return err;
}

cudaError_t batch_statistics(const BatchStatistics& st, ScalarType stats_type, cudaStream_t stream) {
  if (st.channels == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  visit(stats_type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) {
      launch_kernel(batch_statistics_kernel<S>, blocks_for(st.channels, kThreads), kThreads, stream, st);
      err = cudaGetLastError();
    }
  });
  return err;
}

namespace {
// The view with its dividers set, as the kernels read it.
GroupedView with_dividers(const GroupedView& view) {
  GroupedView v = view;
  set_dividers(v.outer_divider, v.outer_size, v.outer_dims);
  set_dividers(v.inner_divider, v.inner_size, v.inner_dims);
  v.inner_count_divider = IndexDivider::of(static_cast<uint64_t>(v.inner_count));
  return v;
}
}  // namespace

cudaError_t group_moments(const GroupedView& view, const char* in, ScalarType type, const double* shift, int power,
                          double* out, cudaStream_t stream) {
  if (view.groups == 0) return cudaSuccess;
  const GroupedView v = with_dividers(view);
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) {
      const unsigned blocks = static_cast<unsigned>(v.groups < 65535 * 16 ? v.groups : 65535 * 16);
      launch_kernel(moments_kernel<S>, blocks, kThreads, stream, v, reinterpret_cast<const S*>(in), shift, power, out);
      err = cudaGetLastError();
    }
  });
  return err;
}

cudaError_t group_affine(const GroupedView& view, const char* in, char* out, ScalarType type, const double* mean,
                         const double* scale, const double* shift, const double* w, const double* b, cudaStream_t stream) {
  const int64_t n = view.groups * view.inner_count;
  if (n == 0) return cudaSuccess;
  const GroupedView v = with_dividers(view);
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) {
      launch_kernel(affine_kernel<S>, blocks_for(n, kThreads), kThreads, stream, v, reinterpret_cast<const S*>(in),
                    reinterpret_cast<S*>(out), mean, scale, shift, w, b);
      err = cudaGetLastError();
    }
  });
  return err;
}

}  // namespace lg::cuda::kernels

// group_norm, instance_norm (without running stats) and layer_norm with every step on the
// device (kernels::group_normalize). The view's "planes" are the units the statistics sum over
// (a sample's channel for group and instance norm, a sample for layer norm); each plane's
// elements are the view's inner dims.
//
// Why tiles of planes x elements: in NHWC a channel's elements lie C apart, so a block that
// walks one plane, as norm.cu's moments kernel does, reads one element per 32-byte sector (it
// ran at 5 % of the copy bandwidth on an H200). Here a block is 32 x 8 threads over a tile of
// planes and a chunk of their elements, and the 32 threads of a warp take whichever of the two
// is adjacent in memory: 32 planes side by side when the planes are (channels innermost), or
// 32 consecutive elements of 8 planes otherwise. The inner dims are reordered by stride and
// merged on the host first, so "consecutive elements" are consecutive in memory whenever some
// order of them is (layer norm over (C, H, W) of an NHWC tensor walks C innermost); the
// weights of layer norm follow through their own strides. Partial sums per chunk are combined
// per statistic (by a thread, or by a block when there are many), so the result does not depend
// on the order blocks run in.
#include <algorithm>
#include <vector>

#include "cuda/kernels/device_types.cuh"
// After device_types.cuh, which defines __device__ and friends for the emulated build.
#include "cuda/kernels/block_sum.cuh"

namespace lg::cuda::kernels {
namespace {

constexpr int kLanes = 32, kRows = 8;  // a tile block: kLanes x kRows threads
constexpr int kThreads = kLanes * kRows;
constexpr int kUnroll = 4;             // loads a thread issues before it adds
// About two blocks per resident slot of an H100/H200 (132 SMs x 8 blocks of 256 threads).
constexpr int64_t kTargetBlocks = 2048;

// The view as the kernels walk it (see plane_walk()).
struct PlaneWalk {
  int outer_dims = 0, inner_dims = 0;
  int64_t outer_stride[kMaxDims] = {}, outer_out_stride[kMaxDims] = {};
  int64_t inner_stride[kMaxDims] = {}, inner_out_stride[kMaxDims] = {}, inner_weight_stride[kMaxDims] = {};
  IndexDivider outer_divider[kMaxDims] = {}, inner_divider[kMaxDims] = {};
  IndexDivider per_stat = {}, channels = {};
  int64_t planes = 0, inner_count = 0;
  int64_t chunk = 1, chunks = 1;  // inner elements per block (grid y), and their number
  bool planes_adjacent = false;   // the innermost plane dim has unit stride: lanes take planes
};

struct Dim {
  int64_t size, stride, out_stride, weight_stride;
};

// Drops size-1 dims and merges each dim into the one before it where all its strides compose
// (so the row-major order of the merged index is the row-major order of the original).
std::vector<Dim> merged(const std::vector<Dim>& dims) {
  std::vector<Dim> out;
  for (const Dim& d : dims) {
    if (d.size == 1) continue;
    if (!out.empty()) {
      Dim& o = out.back();
      if (o.stride == d.stride * d.size && o.out_stride == d.out_stride * d.size &&
          o.weight_stride == d.weight_stride * d.size) {
        o.size *= d.size;
        o.stride = d.stride;
        o.out_stride = d.out_stride;
        o.weight_stride = d.weight_stride;
        continue;
      }
    }
    out.push_back(d);
  }
  if (out.empty()) out.push_back(Dim{1, 0, 0, 0});
  return out;
}

PlaneWalk plane_walk(const GroupedView& v, int64_t per_stat, int64_t channels) {
  PlaneWalk w;
  w.planes = v.groups;
  w.inner_count = v.inner_count;
  std::vector<Dim> outer, inner;
  for (int d = 0; d < v.outer_dims; ++d) outer.push_back({v.outer_size[d], v.outer_stride[d], v.outer_out_stride[d], 0});
  // Inner dims: the weight stride is the row-major one of the logical element index (layer
  // norm's weight and bias are dense over the normalised dims); then largest input stride first.
  int64_t logical = 1;
  inner.resize(static_cast<size_t>(v.inner_dims));
  for (int d = v.inner_dims - 1; d >= 0; --d) {
    inner[static_cast<size_t>(d)] = {v.inner_size[d], v.inner_stride[d], v.inner_out_stride[d], logical};
    logical *= v.inner_size[d];
  }
  std::stable_sort(inner.begin(), inner.end(), [](const Dim& a, const Dim& b) { return a.stride > b.stride; });
  outer = merged(outer);
  inner = merged(inner);
  w.outer_dims = static_cast<int>(outer.size());
  w.inner_dims = static_cast<int>(inner.size());
  for (int d = 0; d < w.outer_dims; ++d) {
    w.outer_stride[d] = outer[static_cast<size_t>(d)].stride;
    w.outer_out_stride[d] = outer[static_cast<size_t>(d)].out_stride;
    w.outer_divider[d] = IndexDivider::of(static_cast<uint64_t>(outer[static_cast<size_t>(d)].size));
  }
  for (int d = 0; d < w.inner_dims; ++d) {
    w.inner_stride[d] = inner[static_cast<size_t>(d)].stride;
    w.inner_out_stride[d] = inner[static_cast<size_t>(d)].out_stride;
    w.inner_weight_stride[d] = inner[static_cast<size_t>(d)].weight_stride;
    w.inner_divider[d] = IndexDivider::of(static_cast<uint64_t>(inner[static_cast<size_t>(d)].size));
  }
  w.per_stat = IndexDivider::of(static_cast<uint64_t>(per_stat));
  w.channels = IndexDivider::of(static_cast<uint64_t>(channels));
  w.planes_adjacent = w.outer_stride[w.outer_dims - 1] == 1 && w.inner_stride[w.inner_dims - 1] != 1;
  if (w.inner_count == 0) return w;  // one empty chunk (the launchers return before walking)
  // Chunks: enough blocks to fill the device, but at least 16 elements per thread in a chunk.
  const int64_t tile_planes = w.planes_adjacent ? kLanes : kRows, inner_lanes = w.planes_adjacent ? kRows : kLanes;
  const int64_t tiles = (w.planes + tile_planes - 1) / tile_planes;
  const int64_t wanted = (kTargetBlocks + tiles - 1) / tiles;
  const int64_t most = std::max<int64_t>(1, std::min<int64_t>(w.inner_count / (inner_lanes * 16), 65535));
  w.chunks = std::clamp<int64_t>(wanted, 1, most);
  w.chunk = (w.inner_count + w.chunks - 1) / w.chunks;
  w.chunks = (w.inner_count + w.chunk - 1) / w.chunk;  // no empty chunk at the end
  return w;
}

// The offsets of inner element j: in the input, in the output and in the layer-norm weights.
__device__ inline void inner_offsets(const PlaneWalk& w, int64_t j, int64_t& in, int64_t& out, int64_t& weight) {
  in = out = weight = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d >= w.inner_dims) continue;
    int64_t idx = j;
    if (d > 0) {
      uint64_t rest = 0;
      j = static_cast<int64_t>(w.inner_divider[d].divmod(static_cast<uint64_t>(j), rest));
      idx = static_cast<int64_t>(rest);
    }
    in += idx * w.inner_stride[d];
    out += idx * w.inner_out_stride[d];
    weight += idx * w.inner_weight_stride[d];
  }
}

// The tile position of this thread: its plane and the first of its elements in the block's
// chunk, and the step between its elements.
template <bool kAdjacent>
struct TileLane {
  static constexpr int kTilePlanes = kAdjacent ? kLanes : kRows;
  static constexpr int kInnerLanes = kAdjacent ? kRows : kLanes;
  int64_t plane, begin, end;
  __device__ TileLane(const PlaneWalk& w) {
    const int plane_lane = static_cast<int>(kAdjacent ? threadIdx.x : threadIdx.y);
    const int inner_lane = static_cast<int>(kAdjacent ? threadIdx.y : threadIdx.x);
    plane = static_cast<int64_t>(blockIdx.x) * kTilePlanes + plane_lane;
    const int64_t chunk_begin = static_cast<int64_t>(blockIdx.y) * w.chunk;
    begin = chunk_begin + inner_lane;
    end = chunk_begin + w.chunk < w.inner_count ? chunk_begin + w.chunk : w.inner_count;
  }
};

// partial[chunk * planes + p] = sum over the block's chunk of plane p's elements of
// (x - shift)^power, power 1 or 2, shift the plane's statistic's entry of `stat_shift` (or 0).
template <typename S, bool kAdjacent>
__global__ void plane_moments(PlaneWalk w, const S* x, const double* stat_shift, int power, double* partial) {
  using L = TileLane<kAdjacent>;
  __shared__ double part[kRows][kLanes + 1];
  const L lane(w);
  double acc = 0;
  if (lane.plane < w.planes) {
    const S* base = x + row_major_offset(lane.plane, w.outer_dims, w.outer_stride, w.outer_divider);
    const double shift = stat_shift != nullptr ? stat_shift[w.per_stat.quotient(static_cast<uint64_t>(lane.plane))] : 0.0;
    for (int64_t j = lane.begin; j < lane.end; j += L::kInnerLanes * kUnroll) {
      double d[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t jj = j + u * L::kInnerLanes;
        int64_t in = 0, out = 0, weight = 0;
        if (jj < lane.end) inner_offsets(w, jj, in, out, weight);
        d[u] = jj < lane.end ? static_cast<double>(Storage<S>::load(base[in])) - shift : 0.0;
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc += power == 1 ? d[u] : d[u] * d[u];
    }
  }
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  const bool first_inner_lane = (kAdjacent ? threadIdx.y : threadIdx.x) == 0;
  if (first_inner_lane && lane.plane < w.planes) {
    double total = 0;
    for (int k = 0; k < L::kInnerLanes; ++k) total += kAdjacent ? part[k][threadIdx.x] : part[threadIdx.y][k];
    partial[static_cast<int64_t>(blockIdx.y) * w.planes + lane.plane] = total;
  }
}

// Statistic s covers planes s * per_stat ... + per_stat - 1 and their partial sums in every
// chunk; from their total, out[s] = mean (total / count) or, with `rstd`, 1 / sqrt(total /
// count + eps). Few partial sums per statistic (kFewPartials or less: instance norm, layer norm
// over C, group norm over a few chunks) take a thread per statistic; more take a block. A block
// of 256 threads and eight barriers per statistic is the likely cause of instance norm's 20 us
// over group norm on an H200 (session 17: 8,192 statistics against 1,024; the other launches
// do the same work in both).
constexpr int64_t kFewPartials = 64;

__device__ inline double finish(double total, double count, double eps, bool rstd) {
  return rstd ? 1.0 / sqrt(total / count + eps) : total / count;
}

__global__ void finish_statistics_per_thread(const double* partial, int64_t planes, int64_t chunks, int64_t per_stat,
                                             double count, double eps, bool rstd, double* out) {
  const int64_t stats = planes / per_stat;
  for (int64_t s = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; s < stats;
       s += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double total = 0;
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t q = 0; q < per_stat; ++q) total += partial[c * planes + s * per_stat + q];
    out[s] = finish(total, count, eps, rstd);
  }
}

__global__ void finish_statistics_per_block(const double* partial, int64_t planes, int64_t chunks, int64_t per_stat,
                                            double count, double eps, bool rstd, double* out) {
  __shared__ double red[kThreads];
  const int64_t stats = planes / per_stat, n = chunks * per_stat;
  for (int64_t s = blockIdx.x; s < stats; s += gridDim.x) {
    double acc = 0;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      const int64_t c = k / per_stat;  // consecutive threads read consecutive planes of a chunk
      acc += partial[c * planes + s * per_stat + (k - c * per_stat)];
    }
    const double total = block_sum<kThreads>(red, acc);
    if (threadIdx.x == 0) out[s] = finish(total, count, eps, rstd);
  }
}

void launch_finish_statistics(const PlaneWalk& w, int64_t per_stat, const double* partial, double count, double eps,
                              bool rstd, double* out, cudaStream_t stream) {
  const int64_t stats = w.planes / per_stat;
  if (w.chunks * per_stat <= kFewPartials)
    launch_kernel(finish_statistics_per_thread, blocks_for(stats, kThreads), kThreads, stream, partial, w.planes,
                  w.chunks, per_stat, count, eps, rstd, out);
  else
    launch_kernel(finish_statistics_per_block, static_cast<unsigned>(std::min<int64_t>(stats, 65535 * 8)), kThreads,
                  stream, partial, w.planes, w.chunks, per_stat, count, eps, rstd, out);
}

// y = (x - mean) * (rstd * plane_w[c]) * inner_w[j] + plane_b[c] + inner_b[j] for element j of
// plane p (c = p % channels; the weights are nullable), in double: the CPU kernels' order of
// operations, though not their precision everywhere (CPU layer norm computes in the compute
// type), so the two agree to rounding.
template <typename S, bool kAdjacent>
__global__ void plane_affine(PlaneWalk w, const S* x, S* y, const double* mean, const double* rstd,
                             GroupNormArgs a) {
  using T = Storage<S>;
  using C = typename T::Compute;
  using L = TileLane<kAdjacent>;
  const L lane(w);
  if (lane.plane >= w.planes) return;
  const int64_t s = static_cast<int64_t>(w.per_stat.quotient(static_cast<uint64_t>(lane.plane)));
  uint64_t c = 0;
  w.channels.divmod(static_cast<uint64_t>(lane.plane), c);
  const double m = mean[s];
  const double scale = (a.plane_w != nullptr ? a.plane_w[c] : 1.0) * rstd[s];
  const double shift = a.plane_b != nullptr ? a.plane_b[c] : 0.0;
  const S* in_base = x + row_major_offset(lane.plane, w.outer_dims, w.outer_stride, w.outer_divider);
  S* out_base = y + row_major_offset(lane.plane, w.outer_dims, w.outer_out_stride, w.outer_divider);
  for (int64_t j = lane.begin; j < lane.end; j += L::kInnerLanes * kUnroll) {
    double v[kUnroll];
    int64_t out[kUnroll], weight[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t jj = j + u * L::kInnerLanes;
      int64_t in = 0;
      out[u] = weight[u] = 0;
      if (jj < lane.end) inner_offsets(w, jj, in, out[u], weight[u]);
      v[u] = jj < lane.end ? static_cast<double>(T::load(in_base[in])) : 0.0;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (j + u * L::kInnerLanes >= lane.end) break;
      double r = (v[u] - m) * scale;
      if (a.inner_w != nullptr) r *= a.inner_w[weight[u]];
      r += shift;
      if (a.inner_b != nullptr) r += a.inner_b[weight[u]];
      out_base[out[u]] = T::store(static_cast<C>(r));
    }
  }
}

template <typename S, bool kAdjacent>
cudaError_t normalize_typed(const PlaneWalk& w, const S* x, S* y, const GroupNormArgs& a, cudaStream_t stream) {
  constexpr int kTilePlanes = TileLane<kAdjacent>::kTilePlanes;
  const dim3 grid(static_cast<unsigned>((w.planes + kTilePlanes - 1) / kTilePlanes), static_cast<unsigned>(w.chunks));
  const dim3 block(kLanes, kRows);
  const int64_t stats = w.planes / a.per_stat;
  double* partial = a.workspace;
  double* mean = partial + w.chunks * w.planes;
  double* rstd = mean + stats;
  const double count = static_cast<double>(a.per_stat * w.inner_count);
  launch_kernel(plane_moments<S, kAdjacent>, grid, block, stream, w, x, nullptr, 1, partial);
  launch_finish_statistics(w, a.per_stat, partial, count, a.eps, false, mean, stream);
  launch_kernel(plane_moments<S, kAdjacent>, grid, block, stream, w, x, mean, 2, partial);
  launch_finish_statistics(w, a.per_stat, partial, count, a.eps, true, rstd, stream);
  launch_kernel(plane_affine<S, kAdjacent>, grid, block, stream, w, x, y, mean, rstd, a);
  return cudaGetLastError();
}

bool valid(const GroupedView& v, const GroupNormArgs& a) {
  return a.per_stat >= 1 && v.groups % a.per_stat == 0 && a.channels >= 1 && v.outer_dims >= 0 &&
         v.outer_dims <= kMaxDims && v.inner_dims >= 0 && v.inner_dims <= kMaxDims;
}

}  // namespace

int64_t group_normalize_workspace(const GroupedView& v, const GroupNormArgs& a) {
  if (v.groups == 0 || v.inner_count == 0 || !valid(v, a)) return 0;
  const PlaneWalk w = plane_walk(v, a.per_stat, a.channels);
  return w.chunks * w.planes + 2 * (w.planes / a.per_stat);
}

cudaError_t group_normalize(const GroupedView& v, const char* in, char* out, ScalarType type, const GroupNormArgs& a,
                            cudaStream_t stream) {
  if (!valid(v, a)) return cudaErrorInvalidValue;
  if (v.groups == 0 || v.inner_count == 0) return cudaSuccess;
  if (a.workspace == nullptr) return cudaErrorInvalidValue;
  const PlaneWalk w = plane_walk(v, a.per_stat, a.channels);
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) {
      const S* x = reinterpret_cast<const S*>(in);
      S* y = reinterpret_cast<S*>(out);
      err = w.planes_adjacent ? normalize_typed<S, true>(w, x, y, a, stream) : normalize_typed<S, false>(w, x, y, a, stream);
    }
  });
  return err;
}

}  // namespace lg::cuda::kernels

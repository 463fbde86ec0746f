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
//
// Why 16-byte lanes and one pass: with one 2-byte element per load, a warp moves 64 bytes and a
// thread keeps 8 bytes in flight; written that way, group norm over 32x256x28x28 float16 took
// 81 us on an H100 against 6.7 us for a relu. Where the walked dim is dense, a lane takes 16
// bytes per load: 8 adjacent float16 channels, or 8 consecutive float16 elements of a plane. And
// one pass sums both the deviations from a per-statistic shift and their squares, rather than
// the mean in one pass and the squared deviations from it in a second: three launches and two
// reads of x instead of five and three.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "cuda/kernels/device_types.cuh"
// After device_types.cuh, which defines __device__ and friends for the emulated build.
#include "cuda/kernels/block_sum.cuh"

namespace lg::cuda::kernels {
namespace {

constexpr int kLanes = 32, kRows = 8;  // a tile block: kLanes x kRows threads
constexpr int kThreads = kLanes * kRows;
constexpr int kUnroll = 4;             // loads a thread issues before it adds
constexpr int64_t kMinPerLane = 8;     // the fewest elements a thread sums in a chunk, by default
std::atomic<int64_t> g_min_per_lane{kMinPerLane};  // set_group_normalize_min_per_lane
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
  // Elements a lane moves in one aligned load or store: `vec` adjacent planes when the lanes
  // take planes, `vec` consecutive elements of a plane otherwise (see vector_width()).
  int vec = 1;
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

// The widest lane vector, in elements and at most `most` (what the base pointers' alignment
// allows), for a walk whose lanes run along `along` (the plane dims or the inner dims; `across`
// are the others): `along`'s innermost dim is dense in input and output and a multiple of it
// long, and every other stride of either is a multiple of it. Then a lane's `vec` elements
// never straddle a row, and every vector starts aligned. Otherwise 1 (element by element).
int vector_width(const std::vector<Dim>& along, const std::vector<Dim>& across, int most) {
  for (int v = most; v > 1; v /= 2) {
    const Dim& in = along.back();
    bool ok = in.stride == 1 && in.out_stride == 1 && in.size % v == 0;
    for (size_t d = 0; ok && d + 1 < along.size(); ++d) ok = along[d].stride % v == 0 && along[d].out_stride % v == 0;
    for (size_t d = 0; ok && d < across.size(); ++d) ok = across[d].stride % v == 0 && across[d].out_stride % v == 0;
    if (ok) return v;
  }
  return 1;
}

// `max_vec`: the most elements the base pointers' alignment allows in one 16-byte load (1 when
// they are not 16-byte aligned). Wider lanes can only merge chunks (rounding a chunk up to whole
// vectors), so a workspace sized with max_vec 1 is large enough for any.
PlaneWalk plane_walk(const GroupedView& v, int64_t per_stat, int64_t channels, int max_vec) {
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
  w.vec = w.planes_adjacent ? vector_width(outer, inner, max_vec) : vector_width(inner, outer, max_vec);
  if (w.inner_count == 0) return w;  // one empty chunk (the launchers return before walking)
  // Chunks: enough blocks to fill the device, but at least kMinPerLane elements per thread in a
  // chunk, counted as if element by element (so the workspace is the same for every `vec`).
  const int64_t tile_planes = w.planes_adjacent ? kLanes : kRows, inner_lanes = w.planes_adjacent ? kRows : kLanes;
  const int64_t tiles = (w.planes + tile_planes - 1) / tile_planes;
  const int64_t wanted = (kTargetBlocks + tiles - 1) / tiles;
  const int64_t min_per_lane = g_min_per_lane.load(std::memory_order_relaxed);
  const int64_t most = std::max<int64_t>(1, std::min<int64_t>(w.inner_count / (inner_lanes * min_per_lane), 65535));
  w.chunks = std::clamp<int64_t>(wanted, 1, most);
  w.chunk = (w.inner_count + w.chunks - 1) / w.chunks;
  // A lane's vector of a plane's elements must not cross into the next chunk's.
  if (!w.planes_adjacent) w.chunk = (w.chunk + w.vec - 1) / w.vec * w.vec;
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

// The tile position of this thread: the first of its kPlanes planes, the first of its elements
// in the block's chunk, and the step between its loads. A tile is kLanes lanes of kVec planes
// by kRows rows of elements when the planes are adjacent, kRows planes by kLanes lanes of kVec
// elements otherwise.
template <bool kAdjacent, int kVec>
struct TileLane {
  static constexpr int kPlanes = kAdjacent ? kVec : 1;    // planes per lane
  static constexpr int kElements = kAdjacent ? 1 : kVec;  // consecutive elements per load
  static constexpr int kTilePlanes = kAdjacent ? kLanes * kVec : kRows;
  static constexpr int kStep = kAdjacent ? kRows : kLanes * kVec;
  // Resident blocks per SM the kernels are compiled for. With eight planes per lane,
  // plane_affine's 24 coefficients in double and four 16-byte loads in flight take about 120
  // registers; the 85 that three blocks allow spilled them (as they did with two loads in
  // flight), and eight elements per load spilled a little too.
  static constexpr int kMinBlocks = kVec >= 8 ? 2 : 3;
  int64_t plane, begin, end;
  __device__ TileLane(const PlaneWalk& w) {
    const int plane_lane = static_cast<int>(kAdjacent ? threadIdx.x : threadIdx.y);
    const int inner_lane = static_cast<int>(kAdjacent ? threadIdx.y : threadIdx.x);
    plane = static_cast<int64_t>(blockIdx.x) * kTilePlanes + static_cast<int64_t>(plane_lane) * kPlanes;
    const int64_t chunk_begin = static_cast<int64_t>(blockIdx.y) * w.chunk;
    begin = chunk_begin + static_cast<int64_t>(inner_lane) * kElements;
    end = chunk_begin + w.chunk < w.inner_count ? chunk_begin + w.chunk : w.inner_count;
  }
};

// The value every deviation of statistic s is taken from: the first element of its first
// plane. Sums of x - shift and (x - shift)^2 then lose nothing to an offset much larger than
// the spread, which sums of x and x^2 would.
template <typename S>
__device__ inline double stat_shift(const PlaneWalk& w, const S* x, int64_t stat, int64_t per_stat) {
  const int64_t first = row_major_offset(stat * per_stat, w.outer_dims, w.outer_stride, w.outer_divider);
  return static_cast<double>(Storage<S>::load(x[first]));
}

// One pass over the block's tile: partial[chunk * planes + p] = the sum over the chunk of plane
// p's (x - shift), and partial[(chunks + chunk) * planes + p] that of (x - shift)^2, shift the
// plane's statistic's stat_shift().
template <typename S, bool kAdjacent, int kVec>
__global__ void __launch_bounds__(kThreads, (TileLane<kAdjacent, kVec>::kMinBlocks))
    plane_moments(PlaneWalk w, const S* x, int64_t per_stat, double* partial) {
  using L = TileLane<kAdjacent, kVec>;
  constexpr int P = L::kPlanes;
  __shared__ double part[kRows][kLanes * P + 1];
  const L lane(w);
  double sum[P] = {}, sq[P] = {};
  if (lane.plane < w.planes) {  // planes is a multiple of P (vector_width())
    const S* base = x + row_major_offset(lane.plane, w.outer_dims, w.outer_stride, w.outer_divider);
    double shift[P];
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const auto stat = static_cast<int64_t>(w.per_stat.quotient(static_cast<uint64_t>(lane.plane + k)));
      shift[k] = stat_shift(w, x, stat, per_stat);
    }
    for (int64_t j = lane.begin; j < lane.end; j += L::kStep * kUnroll) {
      Packet<S, kVec> p[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t jj = j + u * L::kStep;
        int64_t in = 0, out = 0, weight = 0;
        if (jj < lane.end) {  // a vector never runs past `end` (plane_walk() rounds the chunk)
          inner_offsets(w, jj, in, out, weight);
          p[u] = *reinterpret_cast<const Packet<S, kVec>*>(base + in);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (j + u * L::kStep >= lane.end) break;
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const int q = kAdjacent ? k : 0;
          const double d = static_cast<double>(Storage<S>::load(p[u].v[k])) - shift[q];
          sum[q] += d;
          sq[q] += d * d;
        }
      }
    }
  }
  // Each slot is one plane of the tile: the sum of its lanes' shares, one moment at a time.
  // (With the lanes over elements, kRows threads add kLanes shares each while the rest wait: a
  // tree over the lanes is the likely better form, not yet timed on a GPU.)
  constexpr int kSlots = kAdjacent ? kLanes * P : kRows, kShares = kAdjacent ? kRows : kLanes;
  const int tid = static_cast<int>(threadIdx.y * kLanes + threadIdx.x);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * L::kTilePlanes;
  for (int moment = 0; moment < 2; ++moment) {
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const double value = moment == 0 ? sum[k] : sq[k];
      if (kAdjacent) part[threadIdx.y][threadIdx.x * P + k] = value;
      else part[threadIdx.y][threadIdx.x] = value;
    }
    __syncthreads();
    for (int slot = tid; slot < kSlots; slot += kThreads) {
      if (first + slot >= w.planes) continue;
      double total = 0;
      for (int k = 0; k < kShares; ++k) total += kAdjacent ? part[k][slot] : part[slot][k];
      partial[(moment * w.chunks + blockIdx.y) * w.planes + first + slot] = total;
    }
    __syncthreads();
  }
}

// Statistic s covers planes s * per_stat ... + per_stat - 1 and their partial sums in every
// chunk; from them, mean[s] = shift + E[d] and rstd[s] = 1 / sqrt(E[d^2] - E[d]^2 + eps), d the
// deviations from stat_shift(). Few partial sums per statistic (kFewPartials or less: instance
// norm, layer norm over C, group norm over a few chunks) take a thread per statistic; more
// take a block.
constexpr int64_t kFewPartials = 64;

template <typename S>
__device__ inline void finish(const PlaneWalk& w, const S* x, int64_t s, int64_t per_stat, double sum, double sq,
                              double count, double eps, double* mean, double* rstd) {
  const double m = sum / count;
  const double var = sq / count - m * m;
  mean[s] = stat_shift(w, x, s, per_stat) + m;
  rstd[s] = 1.0 / sqrt((var > 0 ? var : 0.0) + eps);
}

template <typename S>
__global__ void finish_statistics_per_thread(PlaneWalk w, const S* x, const double* partial, int64_t per_stat,
                                             double count, double eps, double* mean, double* rstd) {
  const int64_t stats = w.planes / per_stat;
  const double* sq_partial = partial + w.chunks * w.planes;
  for (int64_t s = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; s < stats;
       s += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double sum = 0, sq = 0;
    for (int64_t c = 0; c < w.chunks; ++c)
      for (int64_t q = 0; q < per_stat; ++q) {
        sum += partial[c * w.planes + s * per_stat + q];
        sq += sq_partial[c * w.planes + s * per_stat + q];
      }
    finish(w, x, s, per_stat, sum, sq, count, eps, mean, rstd);
  }
}

template <typename S>
__global__ void finish_statistics_per_block(PlaneWalk w, const S* x, const double* partial, int64_t per_stat,
                                            double count, double eps, double* mean, double* rstd) {
  __shared__ double red[kThreads];
  const int64_t stats = w.planes / per_stat, n = w.chunks * per_stat;
  const double* sq_partial = partial + w.chunks * w.planes;
  for (int64_t s = blockIdx.x; s < stats; s += gridDim.x) {
    double sum = 0, sq = 0;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      const int64_t c = k / per_stat;  // consecutive threads read consecutive planes of a chunk
      const int64_t at = c * w.planes + s * per_stat + (k - c * per_stat);
      sum += partial[at];
      sq += sq_partial[at];
    }
    sum = block_sum<kThreads>(red, sum);
    sq = block_sum<kThreads>(red, sq);
    if (threadIdx.x == 0) finish(w, x, s, per_stat, sum, sq, count, eps, mean, rstd);
  }
}

// y = (x - mean) * (rstd * plane_w[c]) * inner_w[j] + plane_b[c] + inner_b[j] for element j of
// plane p (c = p % channels; the weights are nullable), in double: the CPU kernels' order of
// operations, though not their precision everywhere (CPU layer norm computes in the compute
// type), so the two agree to rounding.
template <typename S, bool kAdjacent, int kVec>
__global__ void __launch_bounds__(kThreads, (TileLane<kAdjacent, kVec>::kMinBlocks))
    plane_affine(PlaneWalk w, const S* x, S* y, const double* mean, const double* rstd, GroupNormArgs a) {
  using T = Storage<S>;
  using C = typename T::Compute;
  using L = TileLane<kAdjacent, kVec>;
  constexpr int P = L::kPlanes;
  const L lane(w);
  if (lane.plane >= w.planes) return;
  double m[P], scale[P], shift[P];
#pragma unroll
  for (int k = 0; k < P; ++k) {
    const int64_t s = static_cast<int64_t>(w.per_stat.quotient(static_cast<uint64_t>(lane.plane + k)));
    uint64_t c = 0;
    w.channels.divmod(static_cast<uint64_t>(lane.plane + k), c);
    m[k] = mean[s];
    scale[k] = (a.plane_w != nullptr ? a.plane_w[c] : 1.0) * rstd[s];
    shift[k] = a.plane_b != nullptr ? a.plane_b[c] : 0.0;
  }
  // The weight step between a vector's consecutive elements (kAdjacent: one element per plane).
  const int64_t weight_step = w.inner_weight_stride[w.inner_dims - 1];
  const S* in_base = x + row_major_offset(lane.plane, w.outer_dims, w.outer_stride, w.outer_divider);
  S* out_base = y + row_major_offset(lane.plane, w.outer_dims, w.outer_out_stride, w.outer_divider);
  for (int64_t j = lane.begin; j < lane.end; j += L::kStep * kUnroll) {
    Packet<S, kVec> p[kUnroll];
    int64_t out[kUnroll], weight[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t jj = j + u * L::kStep;
      int64_t in = 0;
      out[u] = weight[u] = 0;
      if (jj < lane.end) {
        inner_offsets(w, jj, in, out[u], weight[u]);
        p[u] = *reinterpret_cast<const Packet<S, kVec>*>(in_base + in);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (j + u * L::kStep >= lane.end) break;
      Packet<S, kVec> r;
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const int q = kAdjacent ? k : 0;
        const int64_t at = weight[u] + (kAdjacent ? 0 : k * weight_step);
        double v = (static_cast<double>(T::load(p[u].v[k])) - m[q]) * scale[q];
        if (a.inner_w != nullptr) v *= a.inner_w[at];
        v += shift[q];
        if (a.inner_b != nullptr) v += a.inner_b[at];
        r.v[k] = T::store(static_cast<C>(v));
      }
      *reinterpret_cast<Packet<S, kVec>*>(out_base + out[u]) = r;
    }
  }
}

template <typename S, bool kAdjacent, int kVec>
cudaError_t normalize_typed(const PlaneWalk& w, const S* x, S* y, const GroupNormArgs& a, cudaStream_t stream) {
  constexpr int kTilePlanes = TileLane<kAdjacent, kVec>::kTilePlanes;
  const dim3 grid(static_cast<unsigned>((w.planes + kTilePlanes - 1) / kTilePlanes), static_cast<unsigned>(w.chunks));
  const dim3 block(kLanes, kRows);
  const int64_t stats = w.planes / a.per_stat;
  double* partial = a.workspace;
  double* mean = partial + 2 * w.chunks * w.planes;
  double* rstd = mean + stats;
  const double count = static_cast<double>(a.per_stat * w.inner_count);
  launch_kernel(plane_moments<S, kAdjacent, kVec>, grid, block, stream, w, x, a.per_stat, partial);
  if (w.chunks * a.per_stat <= kFewPartials)
    launch_kernel(finish_statistics_per_thread<S>, blocks_for(stats, kThreads), kThreads, stream, w, x, partial,
                  a.per_stat, count, a.eps, mean, rstd);
  else
    launch_kernel(finish_statistics_per_block<S>, static_cast<unsigned>(std::min<int64_t>(stats, 65535 * 8)), kThreads,
                  stream, w, x, partial, a.per_stat, count, a.eps, mean, rstd);
  launch_kernel(plane_affine<S, kAdjacent, kVec>, grid, block, stream, w, x, y, mean, rstd, a);
  return cudaGetLastError();
}

// The kernels for the walk's direction and vector width (a width the type's 16 bytes allow).
template <typename S>
cudaError_t normalize_dispatch(const PlaneWalk& w, const S* x, S* y, const GroupNormArgs& a, cudaStream_t stream) {
  constexpr int kMost = 16 / static_cast<int>(sizeof(S));
  cudaError_t err = cudaErrorInvalidValue;
  const auto with = [&]<int V>(std::integral_constant<int, V>) {
    if constexpr (V <= kMost)
      err = w.planes_adjacent ? normalize_typed<S, true, V>(w, x, y, a, stream)
                              : normalize_typed<S, false, V>(w, x, y, a, stream);
  };
  switch (w.vec) {
    case 1: with(std::integral_constant<int, 1>{}); break;
    case 2: with(std::integral_constant<int, 2>{}); break;
    case 4: with(std::integral_constant<int, 4>{}); break;
    case 8: with(std::integral_constant<int, 8>{}); break;
    default: break;
  }
  return err;
}

bool valid(const GroupedView& v, const GroupNormArgs& a) {
  return a.per_stat >= 1 && v.groups % a.per_stat == 0 && a.channels >= 1 && v.outer_dims >= 0 &&
         v.outer_dims <= kMaxDims && v.inner_dims >= 0 && v.inner_dims <= kMaxDims;
}

}  // namespace

int64_t workspace_for(const PlaneWalk& w, const GroupNormArgs& a) {
  return 2 * w.chunks * w.planes + 2 * (w.planes / a.per_stat);
}

int64_t group_normalize_workspace(const GroupedView& v, const GroupNormArgs& a) {
  if (v.groups == 0 || v.inner_count == 0 || !valid(v, a)) return 0;
  return workspace_for(plane_walk(v, a.per_stat, a.channels, 1), a);
}

// The most elements of S one 16-byte load moves from `in` and stores to `out`: 1 unless both
// are 16-byte aligned.
template <typename S>
int widest_lane(const char* in, const char* out) {
  const bool aligned = reinterpret_cast<uintptr_t>(in) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
  return aligned ? 16 / static_cast<int>(sizeof(S)) : 1;
}

cudaError_t group_normalize(const GroupedView& v, const char* in, char* out, ScalarType type, const GroupNormArgs& a,
                            cudaStream_t stream) {
  if (!valid(v, a)) return cudaErrorInvalidValue;
  if (v.groups == 0 || v.inner_count == 0) return cudaSuccess;
  if (a.workspace == nullptr) return cudaErrorInvalidValue;
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) {
      const PlaneWalk w = plane_walk(v, a.per_stat, a.channels, widest_lane<S>(in, out));
      // The chunking may have changed since the workspace was sized (set_group_normalize_min_per_lane).
      if (workspace_for(w, a) <= a.workspace_doubles)
        err = normalize_dispatch(w, reinterpret_cast<const S*>(in), reinterpret_cast<S*>(out), a, stream);
    }
  });
  return err;
}

int group_normalize_lane_width(const GroupedView& v, const GroupNormArgs& a, ScalarType type, const char* in,
                               const char* out) {
  if (!valid(v, a) || v.groups == 0 || v.inner_count == 0) return 0;
  int width = 0;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) width = plane_walk(v, a.per_stat, a.channels, widest_lane<S>(in, out)).vec;
  });
  return width;
}

void set_group_normalize_min_per_lane(int64_t n) {
  g_min_per_lane.store(n >= 1 ? n : kMinPerLane, std::memory_order_relaxed);
}

}  // namespace lg::cuda::kernels

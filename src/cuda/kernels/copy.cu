// Copies on the device: strided copies by element size (a shared-memory tile when the two
// innermost dims swap between source and destination, as between NCHW and NHWC), dtype
// conversion of dense buffers, and fills.
#include <algorithm>
#include <atomic>
#include <utility>

#include "cuda/kernels/device_types.cuh"
#include "cuda/kernels/row_walk.h"
#include "cuda/kernels/short_planes_2byte.cuh"
#include "cuda/kernels/transpose_plan.cuh"

namespace lg::cuda::kernels {
namespace {

constexpr int kThreads = 256;

std::atomic<bool> g_short_planes_2byte{true};  // set_short_planes_2byte_kernel
constexpr int kTile = 32, kTileRows = 8, kTilesPerBlock = 4;

template <typename T>
__global__ void copy_generic(Geometry g) {
  const T* src = reinterpret_cast<const T*>(g.data[1]);
  T* dst = reinterpret_cast<T*>(g.data[0]);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < g.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[2];
    offsets_of<2>(g, i, off);
    dst[off[0]] = src[off[1]];
  }
}

// Tiles of 32V x 32V through shared memory: reads run along rows (unit stride in src), writes
// along cols (unit stride in dst), each thread moving V neighbours as one packet, so a warp
// touches 32 * V * sizeof(T) contiguous bytes per access (V = 2 for float32 and float16: 256-
// and 128-byte warp accesses). Each block walks several tiles down the rows, so blocks live
// long enough to keep loads in flight. With 2-element packets a thread issues all its loads of
// a tile before it stores any to shared memory, so they are in flight together (with float32 in
// 8-byte packets, this took 256 x 256 x 56 x 56 from 77 % to 97-98 % of memcpy on an H200). I is
// int32_t whenever every offset fits. V > 1 needs rows, cols and every stride but the unit ones
// divisible by V, and aligned bases.
template <typename T, typename I, int V>
__global__ void copy_transposed(TransposePlan p) {
  constexpr int kSide = kTile * V;
  constexpr int kTiles = kTilesPerBlock / V > 0 ? kTilesPerBlock / V : 1;
  constexpr int kPerThread = kSide / kTileRows;  // packets a thread moves per tile
  // Packets a thread holds before staging: all 8 of a tile with 2-element packets (float32 and
  // float16, where holding them was measured faster); the other instances stage each packet as
  // it comes, since holding raised their registers (bytes: 40 -> 152, one block per SM) and no
  // run has measured them.
  constexpr int kBatch = V == 2 ? kPerThread : 1;
  // One element of padding keeps the column reads of the write phase on distinct banks.
  __shared__ T tile[kSide][kSide + 1];
  const T* src = reinterpret_cast<const T*>(p.src);
  T* dst = reinterpret_cast<T*>(p.dst);
  const I rows = static_cast<I>(p.rows), cols = static_cast<I>(p.cols);
  const I src_row = static_cast<I>(p.src_row), src_col = static_cast<I>(p.src_col);
  const I dst_row = static_cast<I>(p.dst_row), dst_col = static_cast<I>(p.dst_col);
  const I c0 = static_cast<I>(blockIdx.x) * kSide;
  const int lane = static_cast<int>(threadIdx.x) * V, row = static_cast<int>(threadIdx.y);
  for (I b = blockIdx.z; b < static_cast<I>(p.batches); b += gridDim.z) {
    I dbase, sbase;
    batch_offsets<I>(p, b, dbase, sbase);
    for (int t = 0; t < kTiles; ++t) {
      const I r0 = (static_cast<I>(blockIdx.y) * kTiles + t) * kSide;
      if (r0 >= rows) break;
      const I r = r0 + lane;
#pragma unroll
      for (int g = 0; g < kPerThread; g += kBatch) {
        Packet<T, V> held[kBatch];
#pragma unroll
        for (int i = 0; i < kBatch; ++i) {
          const I c = c0 + row + (g + i) * kTileRows;
          if (r < rows && c < cols) {
            if constexpr (V == 1) held[i].v[0] = src[sbase + r * src_row + c * src_col];
            else held[i] = *reinterpret_cast<const Packet<T, V>*>(src + sbase + r + c * src_col);
          }
        }
#pragma unroll
        for (int i = 0; i < kBatch; ++i) {
          const int k = row + (g + i) * kTileRows;
          if (r < rows && c0 + k < cols) {
#pragma unroll
            for (int v = 0; v < V; ++v) tile[k][lane + v] = held[i].v[v];
          }
        }
      }
      __syncthreads();
      const I c = c0 + lane;
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const int k = row + i * kTileRows;
        const I rr = r0 + k;
        if (rr < rows && c < cols) {
          if constexpr (V == 1) {
            dst[dbase + rr * dst_row + c * dst_col] = tile[lane][k];
          } else {
            Packet<T, V> out;
#pragma unroll
            for (int v = 0; v < V; ++v) out.v[v] = tile[lane + v][k];
            *reinterpret_cast<Packet<T, V>*>(dst + dbase + rr * dst_row + c) = out;
          }
        }
      }
      __syncthreads();
    }
  }
}

// A plane with few columns (fewer than kTile / 4: NCHW <-> NHWC of an RGB image): a block
// stages kThreads rows x cols through shared memory, so both the reads and the writes run
// along whichever side is unit-stride (row after row when the columns are innermost, one
// column at a time across the rows otherwise).
constexpr int kThinCols = kTile / 4;

template <typename T, typename I>
__global__ void copy_thin(TransposePlan p) {
  __shared__ T stage[kThinCols * kThreads];  // row r, column c at r * cols + c
  const T* src = reinterpret_cast<const T*>(p.src);
  T* dst = reinterpret_cast<T*>(p.dst);
  const I rows = static_cast<I>(p.rows), cols = static_cast<I>(p.cols);
  const I chunks = (rows + kThreads - 1) / kThreads;
  const I src_row = static_cast<I>(p.src_row), src_col = static_cast<I>(p.src_col);
  const I dst_row = static_cast<I>(p.dst_row), dst_col = static_cast<I>(p.dst_col);
  const I tid = threadIdx.x;
  for (I block = blockIdx.x; block < chunks * static_cast<I>(p.batches); block += gridDim.x) {
    const I b = block / chunks, r0 = (block % chunks) * kThreads;
    const I n = rows - r0 < kThreads ? rows - r0 : kThreads;
    I dbase, sbase;
    batch_offsets<I>(p, b, dbase, sbase);
    if (src_col == 1) {
      for (I k = tid; k < n * cols; k += kThreads) {
        const I r = k / cols, c = k - r * cols;
        stage[k] = src[sbase + (r0 + r) * src_row + c];
      }
    } else if (tid < n) {
      for (I c = 0; c < cols; ++c) stage[tid * cols + c] = src[sbase + (r0 + tid) * src_row + c * src_col];
    }
    __syncthreads();
    if (dst_col == 1) {
      for (I k = tid; k < n * cols; k += kThreads) {
        const I r = k / cols, c = k - r * cols;
        dst[dbase + (r0 + r) * dst_row + c] = stage[k];
      }
    } else if (tid < n) {
      for (I c = 0; c < cols; ++c) dst[dbase + (r0 + tid) * dst_row + c * dst_col] = stage[tid * cols + c];
    }
    __syncthreads();
  }
}

// NCHW <-> NHWC in the two shapes the square tiles serve badly, both with the plane dense on
// each side: a "planar" side holding M planes of K elements (m * K + k) and an "interleaved"
// side holding K rows of M elements (k * M + m). kPlanarSrc says the source is the planar side:
// NCHW -> NHWC when the planes are short (7x7 maps), NHWC -> NCHW when the channels are (64
// channels over 56x56). Global memory moves in 16-byte packets of V elements on both sides;
// shared memory does the reordering. 2-byte types take copy_short_planes_2byte
// (short_planes_2byte.cuh) instead, which makes fewer and wider shared-memory accesses.
//
// Short planes (K <= kShortPlane, e.g. 7x7 maps of 2048 channels, which would fill a quarter
// of a 64-wide tile): a block takes 256 bytes' worth of whole planes -- one contiguous run on
// the planar side, K runs of 256 bytes on the interleaved side.
template <typename T>
constexpr int kPlaneChunk = static_cast<int>(256 / sizeof(T));

template <typename T, typename I, int V, bool kPlanarSrc>
__global__ void copy_short_planes(const char* src_bytes, char* dst_bytes, TransposePlan p, I K, I M) {
  constexpr int kChunk = kPlaneChunk<T>;
  constexpr int kPad = sizeof(T) >= 4 ? 1 : static_cast<int>(4 / sizeof(T));  // spreads the banks
  constexpr int kRow = kChunk + kPad;
  __shared__ T stage[kShortPlane * kRow];  // element (k, m) at k * kRow + (m - m0)
  const T* src = reinterpret_cast<const T*>(src_bytes);
  T* dst = reinterpret_cast<T*>(dst_bytes);
  const I chunks = (M + kChunk - 1) / kChunk;
  for (I block = blockIdx.x; block < chunks * static_cast<I>(p.batches); block += gridDim.x) {
    const I b = block / chunks, m0 = (block % chunks) * kChunk;
    const I w = M - m0 < kChunk ? M - m0 : kChunk;  // a multiple of V
    I dbase, sbase;
    batch_offsets<I>(p, b, dbase, sbase);
    const T* in = src + sbase;
    T* out = dst + dbase;
    // Planar side: element q of the run is (m, k) = (q / K, q % K); interleaved side: element
    // q of the chunk is (k, m) = (q / w, q % w), and V divides w, so a packet stays in one row.
    // RowWalk keeps both without dividing per element (see row_walk.h). When V divides K (every
    // channel count of ResNet), a planar-side packet is V neighbours of one plane, so its slots
    // are fixed offsets apart. Loading all of a thread's packets before staging any, as
    // copy_transposed does, made this kernel slower on an H200 (float16 7x7 maps
    // NCHW -> NHWC from 84 % to 61 % of memcpy, float32 from 88 % to 74 %), so it stages each
    // packet as it comes.
    const bool whole_rows = K % V == 0;
    const I first = static_cast<I>(threadIdx.x) * V, step = static_cast<I>(blockDim.x) * V;
    if constexpr (kPlanarSrc) {
      RowWalk<I> at(first, step, K);
      for (I q = first; q < w * K; q += step, at.advance()) {
        const Packet<T, V> v = *reinterpret_cast<const Packet<T, V>*>(in + m0 * K + q);
        if (whole_rows) {
#pragma unroll
          for (int e = 0; e < V; ++e) stage[(at.col + e) * kRow + at.row] = v.v[e];
        } else {
          RowWalk<I> e_at = at;
#pragma unroll
          for (int e = 0; e < V; ++e, e_at.next()) stage[e_at.col * kRow + e_at.row] = v.v[e];
        }
      }
    } else {
      RowWalk<I> at(first, step, w);
      for (I q = first; q < K * w; q += step, at.advance()) {
        const Packet<T, V> v = *reinterpret_cast<const Packet<T, V>*>(in + at.row * M + m0 + at.col);
#pragma unroll
        for (int e = 0; e < V; ++e) stage[at.row * kRow + at.col + e] = v.v[e];
      }
    }
    __syncthreads();
    if constexpr (kPlanarSrc) {
      RowWalk<I> at(first, step, w);
      for (I q = first; q < K * w; q += step, at.advance()) {
        Packet<T, V> v;
#pragma unroll
        for (int e = 0; e < V; ++e) v.v[e] = stage[at.row * kRow + at.col + e];
        *reinterpret_cast<Packet<T, V>*>(out + at.row * M + m0 + at.col) = v;
      }
    } else {
      RowWalk<I> at(first, step, K);
      for (I q = first; q < w * K; q += step, at.advance()) {
        Packet<T, V> v;
        if (whole_rows) {
#pragma unroll
          for (int e = 0; e < V; ++e) v.v[e] = stage[(at.col + e) * kRow + at.row];
        } else {
          RowWalk<I> e_at = at;
#pragma unroll
          for (int e = 0; e < V; ++e, e_at.next()) v.v[e] = stage[e_at.col * kRow + e_at.row];
        }
        *reinterpret_cast<Packet<T, V>*>(out + m0 * K + q) = v;
      }
    }
    __syncthreads();
  }
}

// Few planes (M < kThinCols, e.g. an RGB image): a block takes kThreads * V positions of every
// plane -- M runs on the planar side, one contiguous run on the interleaved side, which is also
// the order of the staging buffer.
template <typename T, typename I, int V, bool kPlanarSrc>
__global__ void copy_few_planes(const char* src_bytes, char* dst_bytes, TransposePlan p, I K, I M, I plane_stride) {
  constexpr int kChunk = kThreads * V;
  __shared__ Packet<T, V> stage_packets[kChunk * kThinCols / V];  // element (k, m) at (k - k0) * M + m
  T* stage = reinterpret_cast<T*>(stage_packets);
  const T* src = reinterpret_cast<const T*>(src_bytes);
  T* dst = reinterpret_cast<T*>(dst_bytes);
  const I chunks = (K + kChunk - 1) / kChunk;
  for (I block = blockIdx.x; block < chunks * static_cast<I>(p.batches); block += gridDim.x) {
    const I b = block / chunks, k0 = (block % chunks) * kChunk;
    const I n = K - k0 < kChunk ? K - k0 : kChunk;  // a multiple of V
    I dbase, sbase;
    batch_offsets<I>(p, b, dbase, sbase);
    const T* in = src + sbase;
    T* out = dst + dbase;
    if constexpr (kPlanarSrc) {
      for (I m = 0; m < M; ++m)
        for (I k = threadIdx.x * V; k < n; k += blockDim.x * V) {
          const Packet<T, V> v = *reinterpret_cast<const Packet<T, V>*>(in + m * plane_stride + k0 + k);
#pragma unroll
          for (int e = 0; e < V; ++e) stage[(k + e) * M + m] = v.v[e];
        }
    } else {
      for (I q = threadIdx.x; q < n * M / V; q += blockDim.x)
        stage_packets[q] = reinterpret_cast<const Packet<T, V>*>(in + k0 * M)[q];
    }
    __syncthreads();
    if constexpr (kPlanarSrc) {
      for (I q = threadIdx.x; q < n * M / V; q += blockDim.x)
        reinterpret_cast<Packet<T, V>*>(out + k0 * M)[q] = stage_packets[q];
    } else {
      for (I m = 0; m < M; ++m)
        for (I k = threadIdx.x * V; k < n; k += blockDim.x * V) {
          Packet<T, V> v;
#pragma unroll
          for (int e = 0; e < V; ++e) v.v[e] = stage[(k + e) * M + m];
          *reinterpret_cast<Packet<T, V>*>(out + m * plane_stride + k0 + k) = v;
        }
    }
    __syncthreads();
  }
}

template <typename T>
__global__ void fill_generic(Geometry g, T value) {
  T* dst = reinterpret_cast<T*>(g.data[0]);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < g.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[1];
    offsets_of<1>(g, i, off);
    dst[off[0]] = value;
  }
}

// value converted from S to D as the CPU copy loop does: through the compute types, bool as
// "not zero".
template <typename D, typename S>
__device__ inline D convert(S v) {
  using SC = typename Storage<S>::Compute;
  using DC = typename Storage<D>::Compute;
  const SC s = Storage<S>::load(v);
  if constexpr (std::is_same_v<DC, bool>) return Storage<D>::store(s != SC(0));
  else return Storage<D>::store(static_cast<DC>(s));
}

template <typename D, typename S>
__global__ void convert_kernel(D* out, const S* src, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = convert<D, S>(src[i]);
}

template <typename T>
cudaError_t copy_typed(const Geometry& g, cudaStream_t stream) {
  const int inner = g.ndim - 1;
  // Transposed form: the innermost dim is unit-stride in dst only, and another dim j is
  // unit-stride in src.
  int j = -1;
  if (g.ndim >= 2 && g.strides[0][inner] == 1 && g.strides[1][inner] != 1)
    for (int d = 0; d < inner; ++d)
      if (g.strides[1][d] == 1) j = d;
  if (j >= 0) {
    TransposePlan p{};
    p.src = g.data[1];
    p.dst = g.data[0];
    p.rows = g.sizes[j];
    p.cols = g.sizes[inner];
    p.src_row = g.strides[1][j];
    p.src_col = g.strides[1][inner];
    p.dst_row = g.strides[0][j];
    p.dst_col = g.strides[0][inner];
    p.batches = 1;
    // The largest offset either side reaches; int32 indexing when it fits.
    int64_t reach = 0;
    for (int d = 0; d < g.ndim; ++d) {
      reach += (g.sizes[d] - 1) * (g.strides[0][d] > g.strides[1][d] ? g.strides[0][d] : g.strides[1][d]);
      if (d == j || d == inner) continue;
      p.bsize[p.nb] = g.sizes[d];
      p.bsrc[p.nb] = g.strides[1][d];
      p.bdst[p.nb] = g.strides[0][d];
      ++p.nb;
      p.batches *= g.sizes[d];
    }
    const bool narrow = reach < (int64_t{1} << 31) && g.numel < (int64_t{1} << 31);
    // 16-byte packets on both sides need every offset a multiple of kV elements.
    constexpr int kV = static_cast<int>(16 / sizeof(T));
    bool aligned = reinterpret_cast<uintptr_t>(p.src) % 16 == 0 && reinterpret_cast<uintptr_t>(p.dst) % 16 == 0;
    for (int d = 0; d < p.nb; ++d) aligned = aligned && p.bsrc[d] % kV == 0 && p.bdst[d] % kV == 0;
    const unsigned max_blocks = 65535 * 8;
    if (p.cols < kThinCols || p.rows < kThinCols) {
      // One side is thin: blocks of kThreads positions along the long side.
      if (p.cols >= kThinCols) {  // make the thin side the columns
        std::swap(p.rows, p.cols);
        std::swap(p.src_row, p.src_col);
        std::swap(p.dst_row, p.dst_col);
      }
      // Planar <-> interleaved with whole packets: the packed few-planes kernel.
      const bool planar_src = p.src_row == 1 && p.dst_col == 1 && p.dst_row == p.cols;
      const bool planar_dst = p.dst_row == 1 && p.src_col == 1 && p.src_row == p.cols;
      const int64_t plane_stride = planar_src ? p.src_col : p.dst_col;
      if (aligned && (planar_src || planar_dst) && p.rows % kV == 0 && plane_stride % kV == 0) {
        const int64_t blocks = (p.rows + kThreads * kV - 1) / (kThreads * kV) * p.batches;
        const unsigned grid = static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
        const char* src = static_cast<const char*>(p.src);
        char* dst = static_cast<char*>(p.dst);
        const int64_t K = p.rows, M = p.cols;
        if (narrow && planar_src)
          launch_kernel(copy_few_planes<T, int32_t, kV, true>, grid, kThreads, stream, src, dst, p, K, M, plane_stride);
        else if (narrow)
          launch_kernel(copy_few_planes<T, int32_t, kV, false>, grid, kThreads, stream, src, dst, p, K, M, plane_stride);
        else if (planar_src)
          launch_kernel(copy_few_planes<T, int64_t, kV, true>, grid, kThreads, stream, src, dst, p, K, M, plane_stride);
        else
          launch_kernel(copy_few_planes<T, int64_t, kV, false>, grid, kThreads, stream, src, dst, p, K, M, plane_stride);
        return cudaGetLastError();
      }
      const int64_t chunks = (p.rows + kThreads - 1) / kThreads * p.batches;
      const unsigned blocks = static_cast<unsigned>(chunks < max_blocks ? chunks : max_blocks);
      if (narrow) launch_kernel(copy_thin<T, int32_t>, blocks, kThreads, stream, p);
      else launch_kernel(copy_thin<T, int64_t>, blocks, kThreads, stream, p);
      return cudaGetLastError();
    }
    // A short plane, both sides dense over it (rows unit-stride in src, cols in dst): the packed
    // short-planes kernel, K the short side.
    const bool dense_plane = p.src_col == p.rows && p.dst_row == p.cols;
    if (aligned && dense_plane && std::min(p.rows, p.cols) <= kShortPlane) {
      const bool planar_src = p.rows <= kShortPlane;  // the short side is unit-stride in src
      const int64_t K = planar_src ? p.rows : p.cols, M = planar_src ? p.cols : p.rows;
      if (M % kV == 0) {
        const int64_t blocks = (M + kPlaneChunk<T> - 1) / kPlaneChunk<T> * p.batches;
        const unsigned grid = static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
        const char* src = static_cast<const char*>(p.src);
        char* dst = static_cast<char*>(p.dst);
        if constexpr (sizeof(T) == 2) {
          static_assert(kPlaneChunk<T> == short_planes_2byte::kChunk, "both kernels take chunks of 128 positions");
          if (g_short_planes_2byte.load(std::memory_order_relaxed)) {
            if (narrow && planar_src) launch_kernel(copy_short_planes_2byte<int32_t, true>, grid, kThreads, stream, src, dst, p, K, M);
            else if (narrow) launch_kernel(copy_short_planes_2byte<int32_t, false>, grid, kThreads, stream, src, dst, p, K, M);
            else if (planar_src) launch_kernel(copy_short_planes_2byte<int64_t, true>, grid, kThreads, stream, src, dst, p, K, M);
            else launch_kernel(copy_short_planes_2byte<int64_t, false>, grid, kThreads, stream, src, dst, p, K, M);
            return cudaGetLastError();
          }
        }
        if (narrow && planar_src) launch_kernel(copy_short_planes<T, int32_t, kV, true>, grid, kThreads, stream, src, dst, p, K, M);
        else if (narrow) launch_kernel(copy_short_planes<T, int32_t, kV, false>, grid, kThreads, stream, src, dst, p, K, M);
        else if (planar_src) launch_kernel(copy_short_planes<T, int64_t, kV, true>, grid, kThreads, stream, src, dst, p, K, M);
        else launch_kernel(copy_short_planes<T, int64_t, kV, false>, grid, kThreads, stream, src, dst, p, K, M);
        return cudaGetLastError();
      }
    }
    // Packets of V elements when everything divides: 4 bytes for 1- and 2-byte types, 8 bytes
    // (V = 2) for 4-byte ones, whose tile of 64 x 65 takes 16.6 KB of shared memory.
    constexpr int V = sizeof(T) < 4 ? static_cast<int>(4 / sizeof(T)) : sizeof(T) == 4 ? 2 : 1;
    bool packed = V > 1 && p.rows % V == 0 && p.cols % V == 0 && p.src_col % V == 0 && p.dst_row % V == 0 &&
                  reinterpret_cast<uintptr_t>(p.src) % (V * sizeof(T)) == 0 &&
                  reinterpret_cast<uintptr_t>(p.dst) % (V * sizeof(T)) == 0;
    for (int d = 0; d < p.nb; ++d) packed = packed && p.bsrc[d] % V == 0 && p.bdst[d] % V == 0;
    const int side = kTile * (packed ? V : 1);
    const int tiles = packed ? (kTilesPerBlock / V > 0 ? kTilesPerBlock / V : 1) : kTilesPerBlock;
    const int64_t gx = (p.cols + side - 1) / side;
    const int64_t gy = (p.rows + int64_t{side} * tiles - 1) / (int64_t{side} * tiles);
    if (gy <= 65535 && gx <= 65535) {
      const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                      static_cast<unsigned>(p.batches < 65535 ? p.batches : 65535));
      const dim3 block(kTile, kTileRows);
      if (packed && narrow) launch_kernel(copy_transposed<T, int32_t, V>, grid, block, stream, p);
      else if (packed) launch_kernel(copy_transposed<T, int64_t, V>, grid, block, stream, p);
      else if (narrow) launch_kernel(copy_transposed<T, int32_t, 1>, grid, block, stream, p);
      else launch_kernel(copy_transposed<T, int64_t, 1>, grid, block, stream, p);
      return cudaGetLastError();
    }
  }
  launch_kernel(copy_generic<T>, blocks_for(g.numel, kThreads), kThreads, stream, g);
  return cudaGetLastError();
}

}  // namespace

void set_short_planes_2byte_kernel(bool on) { g_short_planes_2byte.store(on, std::memory_order_relaxed); }

cudaError_t copy_strided(const Geometry& g, int element_bytes, cudaStream_t stream) {
  if (g.numel == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1: return copy_typed<uint8_t>(g, stream);
    case 2: return copy_typed<uint16_t>(g, stream);
    case 4: return copy_typed<uint32_t>(g, stream);
    case 8: return copy_typed<uint64_t>(g, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t fill_strided(const Geometry& g, int element_bytes, uint64_t bits, cudaStream_t stream) {
  if (g.numel == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(g.numel, kThreads);
  switch (element_bytes) {
    case 1: launch_kernel(fill_generic<uint8_t>, blocks, kThreads, stream, g, static_cast<uint8_t>(bits)); break;
    case 2: launch_kernel(fill_generic<uint16_t>, blocks, kThreads, stream, g, static_cast<uint16_t>(bits)); break;
    case 4: launch_kernel(fill_generic<uint32_t>, blocks, kThreads, stream, g, static_cast<uint32_t>(bits)); break;
    case 8: launch_kernel(fill_generic<uint64_t>, blocks, kThreads, stream, g, bits); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t convert_dense(void* out, ScalarType out_type, const void* src, ScalarType src_type, int64_t n,
                          cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  visit(out_type, [&](auto d) {
    using D = decltype(d);
    visit(src_type, [&](auto s) {
      using S = decltype(s);
      launch_kernel(convert_kernel<D, S>, blocks_for(n, kThreads), kThreads, stream, static_cast<D*>(out),
                                                                              static_cast<const S*>(src), n);
      err = cudaGetLastError();
    });
  });
  return err;
}

}  // namespace lg::cuda::kernels

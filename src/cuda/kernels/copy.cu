// Copies on the device: strided copies by element size (a 32x32 shared-memory tile when the two
// innermost dims swap between source and destination, as between NCHW and NHWC), dtype
// conversion of dense buffers, and fills.
#include <utility>

#include "cuda/kernels/device_types.cuh"

namespace lg::cuda::kernels {
namespace {

constexpr int kThreads = 256;
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

// A batched transpose as plain scalars: each batch position holds a (rows x cols) plane that
// is unit-stride along rows in the source and along cols in the destination.
struct TransposePlan {
  const char* src;
  char* dst;
  int64_t rows, cols, batches;
  int64_t src_row, src_col, dst_row, dst_col;  // strides in elements
  int nb;                                      // batch dims, outermost first
  int64_t bsize[kMaxDims], bsrc[kMaxDims], bdst[kMaxDims];
};

// Offsets of batch position b (the dims other than the plane's), unrolled over the fixed
// maximum so no kernel parameter is indexed at run time.
template <typename I>
__device__ inline void batch_offsets(const TransposePlan& p, I b, I& dbase, I& sbase) {
  dbase = 0;
  sbase = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d >= p.nb) continue;
    const I size = static_cast<I>(p.bsize[d]);
    const I idx = b % size;
    b /= size;
    dbase += idx * static_cast<I>(p.bdst[d]);
    sbase += idx * static_cast<I>(p.bsrc[d]);
  }
}

// Tiles of 32 x 32 through shared memory: reads run along rows (unit stride in src), writes
// along cols (unit stride in dst). Each block walks kTilesPerBlock tiles down the rows, so
// blocks live long enough to keep loads in flight. I is int32_t whenever every offset fits.
template <typename T, typename I>
__global__ void copy_transposed(TransposePlan p) {
  __shared__ T tile[kTile][kTile + 1];
  const T* src = reinterpret_cast<const T*>(p.src);
  T* dst = reinterpret_cast<T*>(p.dst);
  const I rows = static_cast<I>(p.rows), cols = static_cast<I>(p.cols);
  const I src_row = static_cast<I>(p.src_row), src_col = static_cast<I>(p.src_col);
  const I dst_row = static_cast<I>(p.dst_row), dst_col = static_cast<I>(p.dst_col);
  const I c0 = static_cast<I>(blockIdx.x) * kTile;
  for (I b = blockIdx.z; b < static_cast<I>(p.batches); b += gridDim.z) {
    I dbase, sbase;
    batch_offsets<I>(p, b, dbase, sbase);
    for (int t = 0; t < kTilesPerBlock; ++t) {
      const I r0 = (static_cast<I>(blockIdx.y) * kTilesPerBlock + t) * kTile;
      if (r0 >= rows) break;
      const I r = r0 + threadIdx.x;
#pragma unroll
      for (int k = threadIdx.y; k < kTile; k += kTileRows) {
        const I c = c0 + k;
        if (r < rows && c < cols) tile[k][threadIdx.x] = src[sbase + r * src_row + c * src_col];
      }
      __syncthreads();
      const I c = c0 + threadIdx.x;
#pragma unroll
      for (int k = threadIdx.y; k < kTile; k += kTileRows) {
        const I rr = r0 + k;
        if (rr < rows && c < cols) dst[dbase + rr * dst_row + c * dst_col] = tile[threadIdx.x][k];
      }
      __syncthreads();
    }
  }
}

// A plane with few columns (NCHW -> NHWC of an RGB image): one thread per row reads its
// columns (coalesced across threads in src) and writes them next to each other in dst.
template <typename T, typename I>
__global__ void copy_thin(TransposePlan p) {
  const T* src = reinterpret_cast<const T*>(p.src);
  T* dst = reinterpret_cast<T*>(p.dst);
  const I rows = static_cast<I>(p.rows), cols = static_cast<I>(p.cols), total = rows * static_cast<I>(p.batches);
  for (I i = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; i < total; i += static_cast<I>(gridDim.x) * blockDim.x) {
    const I b = i / rows, r = i % rows;
    I dbase, sbase;
    batch_offsets<I>(p, b, dbase, sbase);
    const T* s = src + sbase + r * static_cast<I>(p.src_row);
    T* d = dst + dbase + r * static_cast<I>(p.dst_row);
    for (I c = 0; c < cols; ++c) d[c * static_cast<I>(p.dst_col)] = s[c * static_cast<I>(p.src_col)];
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
    if (p.cols < kTile / 4 || p.rows < kTile / 4) {
      // One side is thin: a thread per position along the long side walks the short one.
      const bool thin_cols = p.cols < p.rows;
      if (!thin_cols) {  // swap the roles of rows and cols: a thread per column
        std::swap(p.rows, p.cols);
        std::swap(p.src_row, p.src_col);
        std::swap(p.dst_row, p.dst_col);
      }
      const unsigned blocks = blocks_for(p.rows * p.batches, kThreads);
      if (narrow) copy_thin<T, int32_t><<<blocks, kThreads, 0, stream>>>(p);
      else copy_thin<T, int64_t><<<blocks, kThreads, 0, stream>>>(p);
      return cudaGetLastError();
    }
    const int64_t gx = (p.cols + kTile - 1) / kTile;
    const int64_t gy = (p.rows + kTile * kTilesPerBlock - 1) / (kTile * kTilesPerBlock);
    if (gy <= 65535 && gx <= 65535) {
      const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                      static_cast<unsigned>(p.batches < 65535 ? p.batches : 65535));
      if (narrow) copy_transposed<T, int32_t><<<grid, dim3(kTile, kTileRows), 0, stream>>>(p);
      else copy_transposed<T, int64_t><<<grid, dim3(kTile, kTileRows), 0, stream>>>(p);
      return cudaGetLastError();
    }
  }
  copy_generic<T><<<blocks_for(g.numel, kThreads), kThreads, 0, stream>>>(g);
  return cudaGetLastError();
}

}  // namespace

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
    case 1: fill_generic<uint8_t><<<blocks, kThreads, 0, stream>>>(g, static_cast<uint8_t>(bits)); break;
    case 2: fill_generic<uint16_t><<<blocks, kThreads, 0, stream>>>(g, static_cast<uint16_t>(bits)); break;
    case 4: fill_generic<uint32_t><<<blocks, kThreads, 0, stream>>>(g, static_cast<uint32_t>(bits)); break;
    case 8: fill_generic<uint64_t><<<blocks, kThreads, 0, stream>>>(g, bits); break;
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
      convert_kernel<D, S><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(static_cast<D*>(out),
                                                                              static_cast<const S*>(src), n);
      err = cudaGetLastError();
    });
  });
  return err;
}

}  // namespace lg::cuda::kernels

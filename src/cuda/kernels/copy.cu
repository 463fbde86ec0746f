// Copies on the device: strided copies by element size (a 32x32 shared-memory tile when the two
// innermost dims swap between source and destination, as between NCHW and NHWC), dtype
// conversion of dense buffers, and fills.
#include "cuda/kernels/device_types.cuh"

namespace lg::cuda::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32, kTileRows = 8;

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

// Tiles of 32 x 32 through shared memory: reads run along rows (unit stride in src), writes
// along cols (unit stride in dst).
template <typename T>
__global__ void copy_transposed(TransposePlan p) {
  __shared__ T tile[kTile][kTile + 1];
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kTile, c0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const T* src = reinterpret_cast<const T*>(p.src);
  T* dst = reinterpret_cast<T*>(p.dst);
  for (int64_t b = blockIdx.z; b < p.batches; b += gridDim.z) {
    int64_t rem = b, dbase = 0, sbase = 0;
#pragma unroll
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d >= p.nb) continue;
      const int64_t idx = rem % p.bsize[d];
      rem /= p.bsize[d];
      dbase += idx * p.bdst[d];
      sbase += idx * p.bsrc[d];
    }
    const T* s = src + sbase + (r0 + threadIdx.x) * p.src_row;
#pragma unroll
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t r = r0 + threadIdx.x, c = c0 + k;
      if (r < p.rows && c < p.cols) tile[k][threadIdx.x] = s[c * p.src_col];
    }
    __syncthreads();
    T* d = dst + dbase + (c0 + threadIdx.x) * p.dst_col;
#pragma unroll
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t r = r0 + k, c = c0 + threadIdx.x;
      if (r < p.rows && c < p.cols) d[r * p.dst_row] = tile[threadIdx.x][k];
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
      if (g.strides[1][d] == 1 && g.sizes[d] >= kTile / 4) j = d;
  if (j >= 0 && g.sizes[inner] >= kTile / 4) {
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
    for (int d = 0; d < g.ndim; ++d) {
      if (d == j || d == inner) continue;
      p.bsize[p.nb] = g.sizes[d];
      p.bsrc[p.nb] = g.strides[1][d];
      p.bdst[p.nb] = g.strides[0][d];
      ++p.nb;
      p.batches *= g.sizes[d];
    }
    const int64_t gx = (p.cols + kTile - 1) / kTile, gy = (p.rows + kTile - 1) / kTile;
    if (gy <= 65535) {
      const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                      static_cast<unsigned>(p.batches < 65535 ? p.batches : 65535));
      copy_transposed<T><<<grid, dim3(kTile, kTileRows), 0, stream>>>(p);
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

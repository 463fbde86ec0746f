// Strided element copy with dtype conversion on the CPU: the one loop behind copy_, fill_,
// to(), contiguous() and clone().
//
// The dims are reordered to follow the destination's memory order and merged where both
// sides stay contiguous, so a dense-to-dense copy of one layout becomes a single memcpy. When
// the destination's innermost dim is not the source's (NCHW <-> NHWC), the two dims are walked
// in square tiles so that both the reads and the writes stay within a few cache lines.
// float32 <-> float16/bfloat16 rows go through the vector casts of cpu/cast_row.h.
#include <layoutguard/factories.h>
#include <layoutguard/tensor.h>

#include "cpu/avx2_target.h"
#include "cpu/cast_row.h"
#include "cpu/transpose8.h"
#include "dispatch/kernel_table.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include <omp.h>
#include <xmmintrin.h>  // SSE: part of the x86-64 baseline, so no extra -m flag

#include <layoutguard/dtype.h>

namespace lg {
namespace {

struct Dim {
  int64_t size;
  int64_t dst_stride;
  int64_t src_stride;
};

// Element conversion with the rules of a tensor cast: floats to integers truncate toward zero
// and saturate at int64 (NaN becomes 0) before narrowing, so no cast is undefined behaviour;
// narrower integers wrap, as in PyTorch (-1.0 -> uint8 255).
template <typename D, typename S>
inline D convert(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (std::is_same_v<D, bool>) {
    if constexpr (cpu::kIs16BitFloat<S>)
      return static_cast<float>(v) != 0.0f;
    else
      return v != S(0);
  } else if constexpr (cpu::kIs16BitFloat<S>) {
    return convert<D, float>(static_cast<float>(v));
  } else if constexpr (cpu::kIs16BitFloat<D>) {
    return D(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    int64_t i;
    if (v != v) i = 0;
    else if (v >= S(9.2233720368547758e18)) i = INT64_MAX;
    else if (v <= S(-9.2233720368547758e18)) i = INT64_MIN;
    else i = static_cast<int64_t>(v);
    return static_cast<D>(i);
  } else {
    return static_cast<D>(v);
  }
}

template <typename D, typename S>
void copy_row(D* dst, int64_t dst_stride, const S* src, int64_t src_stride, int64_t n) {
  if constexpr (std::is_same_v<D, S>) {
    if (dst_stride == 1 && src_stride == 1) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(D));
      return;
    }
  }
  if constexpr (cpu::kHasRowCast<D, S>) {
    if (dst_stride == 1 && src_stride == 1) {
      cpu::cast_row(dst, src, n);
      return;
    }
  }
  if (dst_stride == 1 && src_stride == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = convert<D, S>(src[i]);
  } else if (dst_stride == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = convert<D, S>(src[i * src_stride]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = convert<D, S>(src[i * src_stride]);
  }
}

// Transposes one 4x4 block of 4-byte elements: src rows run along b, dst rows along a.
inline void transpose4x4(void* dst, int64_t dst_row_stride, const void* src, int64_t src_row_stride) {
  const auto* s = static_cast<const float*>(src);
  auto* d = static_cast<float*>(dst);
  __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + src_row_stride),
         r2 = _mm_loadu_ps(s + 2 * src_row_stride), r3 = _mm_loadu_ps(s + 3 * src_row_stride);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);  // shuffles only: bit patterns (ints, NaNs) pass unchanged
  _mm_storeu_ps(d, r0);
  _mm_storeu_ps(d + dst_row_stride, r1);
  _mm_storeu_ps(d + 2 * dst_row_stride, r2);
  _mm_storeu_ps(d + 3 * dst_row_stride, r3);
}

// dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols, for any 4-byte
// element: 4x4 blocks through SSE registers, the ragged edges one by one.
template <typename T>
[[gnu::always_inline]] inline void transpose_block_sse(T* dst, int64_t dst_stride, const T* src, int64_t src_stride,
                                                       int64_t rows, int64_t cols) {
  static_assert(sizeof(T) == 4);
  const int64_t rows4 = rows / 4 * 4, cols4 = cols / 4 * 4;
  for (int64_t j = 0; j < cols4; j += 4) {
    for (int64_t i = 0; i < rows4; i += 4)
      transpose4x4(dst + j * dst_stride + i, dst_stride, src + i * src_stride + j, src_stride);
    for (int64_t jj = j; jj < j + 4; ++jj)
      for (int64_t i = rows4; i < rows; ++i) dst[jj * dst_stride + i] = src[i * src_stride + jj];
  }
  for (int64_t j = cols4; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) dst[j * dst_stride + i] = src[i * src_stride + j];
}

#if LG_CPU_AVX2_KERNELS
// The 8x8 blocks of a tile (rows and cols multiples of 8) through AVX registers
// (cpu/transpose8.h). Bit patterns pass unchanged.
LG_AVX2 void transpose_blocks8x8(void* dst_v, int64_t dst_stride, const void* src_v, int64_t src_stride, int64_t rows,
                                 int64_t cols) {
  auto* dst = static_cast<float*>(dst_v);
  const auto* src = static_cast<const float*>(src_v);
  for (int64_t j = 0; j < cols; j += 8)
    for (int64_t i = 0; i < rows; i += 8) {
      const float* s = src + i * src_stride + j;
      float* d = dst + j * dst_stride + i;
      __m256 r[8];
      for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(s + k * src_stride);
      cpu::transpose8(r);
      for (int k = 0; k < 8; ++k) _mm256_storeu_ps(d + k * dst_stride, r[k]);
    }
}
#endif

// transpose_block_sse's result, the part made of whole 8x8 blocks through AVX where the CPU
// has it (run-time check: the build targets baseline x86-64). Not when the source or the
// destination rows are a multiple of 4 KiB apart: eight lines in one L1 set then evict each
// other, and the 4x4 blocks were faster there (NCHW -> NHWC with 2048 channels: 0.34 ms
// against 0.48).
template <typename T>
void transpose_block(T* dst, int64_t dst_stride, const T* src, int64_t src_stride, int64_t rows, int64_t cols) {
#if LG_CPU_AVX2_KERNELS
  const int64_t rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
  const bool set_conflicts = dst_stride * static_cast<int64_t>(sizeof(T)) % 4096 == 0 ||
                             src_stride * static_cast<int64_t>(sizeof(T)) % 4096 == 0;
  if (rows8 > 0 && cols8 > 0 && !set_conflicts && cpu::cpu_has_avx2()) {
    transpose_blocks8x8(dst, dst_stride, src, src_stride, rows8, cols8);
    transpose_block_sse(dst + rows8, dst_stride, src + rows8 * src_stride, src_stride, rows - rows8, cols8);
    transpose_block_sse(dst + cols8 * dst_stride, dst_stride, src + cols8, src_stride, rows, cols - cols8);
    return;
  }
#endif
  transpose_block_sse(dst, dst_stride, src, src_stride, rows, cols);
}

// dst[3 * i + c] = plane_c[i] for i < n: the pixels of a 3-channel image interleaved, four per
// step through SSE shuffles (bit patterns pass unchanged, as in transpose4x4).
inline void interleave3(float* dst, const float* p0, const float* p1, const float* p2, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4, dst += 12) {
    const __m128 r = _mm_loadu_ps(p0 + i), g = _mm_loadu_ps(p1 + i), b = _mm_loadu_ps(p2 + i);
    const __m128 rg_lo = _mm_unpacklo_ps(r, g), rg_hi = _mm_unpackhi_ps(r, g);  // r0 g0 r1 g1, r2 g2 r3 g3
    const __m128 b0_r1 = _mm_shuffle_ps(b, rg_lo, _MM_SHUFFLE(2, 2, 0, 0));       // b0 b0 r1 r1
    const __m128 g1_b1 = _mm_shuffle_ps(rg_lo, b, _MM_SHUFFLE(1, 1, 3, 3));       // g1 g1 b1 b1
    const __m128 b2_r3 = _mm_shuffle_ps(b, rg_hi, _MM_SHUFFLE(2, 2, 2, 2));       // b2 b2 r3 r3
    const __m128 g3_b3 = _mm_shuffle_ps(rg_hi, b, _MM_SHUFFLE(3, 3, 3, 3));       // g3 g3 b3 b3
    _mm_storeu_ps(dst, _mm_shuffle_ps(rg_lo, b0_r1, _MM_SHUFFLE(2, 0, 1, 0)));    // r0 g0 b0 r1
    _mm_storeu_ps(dst + 4, _mm_shuffle_ps(g1_b1, rg_hi, _MM_SHUFFLE(1, 0, 2, 0))); // g1 b1 r2 g2
    _mm_storeu_ps(dst + 8, _mm_shuffle_ps(b2_r3, g3_b3, _MM_SHUFFLE(2, 0, 2, 0))); // b2 r3 g3 b3
  }
  for (; i < n; ++i, dst += 3) {
    dst[0] = p0[i];
    dst[1] = p1[i];
    dst[2] = p2[i];
  }
}

// plane_c[i] = src[3 * i + c] for i < n: interleave3 undone, four pixels per step.
inline void deinterleave3(float* p0, float* p1, float* p2, const float* src, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4, src += 12) {
    const __m128 a = _mm_loadu_ps(src), b = _mm_loadu_ps(src + 4), c = _mm_loadu_ps(src + 8);
    // a = r0 g0 b0 r1, b = g1 b1 r2 g2, c = b2 r3 g3 b3
    const __m128 r2_r3 = _mm_shuffle_ps(b, c, _MM_SHUFFLE(1, 1, 2, 2));  // r2 r2 r3 r3
    const __m128 g0_g1 = _mm_shuffle_ps(a, b, _MM_SHUFFLE(0, 0, 1, 1));  // g0 g0 g1 g1
    const __m128 g2_g3 = _mm_shuffle_ps(b, c, _MM_SHUFFLE(2, 2, 3, 3));  // g2 g2 g3 g3
    const __m128 b0_b1 = _mm_shuffle_ps(a, b, _MM_SHUFFLE(1, 1, 2, 2));  // b0 b0 b1 b1
    const __m128 b2_b3 = _mm_shuffle_ps(c, c, _MM_SHUFFLE(3, 3, 0, 0));  // b2 b2 b3 b3
    _mm_storeu_ps(p0 + i, _mm_shuffle_ps(a, r2_r3, _MM_SHUFFLE(2, 0, 3, 0)));
    _mm_storeu_ps(p1 + i, _mm_shuffle_ps(g0_g1, g2_g3, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm_storeu_ps(p2 + i, _mm_shuffle_ps(b0_b1, b2_b3, _MM_SHUFFLE(2, 0, 2, 0)));
  }
  for (; i < n; ++i, src += 3) {
    p0[i] = src[0];
    p1[i] = src[1];
    p2[i] = src[2];
  }
}

// interleave3 and deinterleave3 for any pair the 3-channel paths take: same-dtype 4-byte
// elements move as bit patterns; float32 <-> float16/bfloat16 go through float32 blocks of
// pixels on the stack and the vector casts, instead of 3-element scalar rows per pixel.
template <typename D, typename S>
void interleave3_as(D* dst, const S* p0, const S* p1, const S* p2, int64_t n) {
  if constexpr (std::is_same_v<D, S>) {
    interleave3(reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(p0), reinterpret_cast<const float*>(p1),
                reinterpret_cast<const float*>(p2), n);
  } else {
    constexpr int64_t kBlock = 256;
    float planes[3][kBlock], pixels[3 * kBlock];
    const S* p[3] = {p0, p1, p2};
    for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
      const int64_t m = std::min(kBlock, n - i0);
      const float* q[3];
      for (int k = 0; k < 3; ++k) {
        if constexpr (std::is_same_v<S, float>) {
          q[k] = p[k] + i0;
        } else {
          cpu::cast_row(planes[k], p[k] + i0, m);
          q[k] = planes[k];
        }
      }
      if constexpr (std::is_same_v<D, float>) {
        interleave3(dst + 3 * i0, q[0], q[1], q[2], m);
      } else {
        interleave3(pixels, q[0], q[1], q[2], m);
        cpu::cast_row(dst + 3 * i0, pixels, 3 * m);
      }
    }
  }
}

template <typename D, typename S>
void deinterleave3_as(D* p0, D* p1, D* p2, const S* src, int64_t n) {
  if constexpr (std::is_same_v<D, S>) {
    deinterleave3(reinterpret_cast<float*>(p0), reinterpret_cast<float*>(p1), reinterpret_cast<float*>(p2),
                  reinterpret_cast<const float*>(src), n);
  } else {
    constexpr int64_t kBlock = 256;
    float planes[3][kBlock], pixels[3 * kBlock];
    D* p[3] = {p0, p1, p2};
    for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
      const int64_t m = std::min(kBlock, n - i0);
      const float* from = nullptr;
      if constexpr (std::is_same_v<S, float>) {
        from = src + 3 * i0;
      } else {
        cpu::cast_row(pixels, src + 3 * i0, 3 * m);
        from = pixels;
      }
      if constexpr (std::is_same_v<D, float>) {
        deinterleave3(p0 + i0, p1 + i0, p2 + i0, from, m);
      } else {
        deinterleave3(planes[0], planes[1], planes[2], from, m);
        for (int k = 0; k < 3; ++k) cpu::cast_row(p[k] + i0, planes[k], m);
      }
    }
  }
}

// a: the destination's innermost dim; b: the source's innermost dim. Square tiles keep the
// lines of both sides in L1 while the other side is walked with a large stride. float32 <->
// float16/bfloat16 tiles are transposed and cast in one pass (cpu/cast_row.h).
template <typename D, typename S>
void copy_tile_pair(D* dst, const S* src, const Dim& a, const Dim& b) {
  constexpr int64_t kTile = 32;
  const bool unit = a.dst_stride == 1 && b.src_stride == 1;
  for (int64_t b0 = 0; b0 < b.size; b0 += kTile) {
    const int64_t cols = std::min(b.size - b0, kTile);
    for (int64_t a0 = 0; a0 < a.size; a0 += kTile) {
      const int64_t rows = std::min(a.size - a0, kTile);
      D* d = dst + b0 * b.dst_stride + a0 * a.dst_stride;
      const S* s = src + a0 * a.src_stride + b0 * b.src_stride;
      if constexpr (std::is_same_v<D, S> && sizeof(D) == 4) {
        if (unit) {
          transpose_block(d, b.dst_stride, s, a.src_stride, rows, cols);
          continue;
        }
      }
      if constexpr (cpu::kHasRowCast<D, S>) {
        if (unit) {
          cpu::cast_transpose(d, b.dst_stride, s, a.src_stride, rows, cols);
          continue;
        }
      }
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i)
          d[j * b.dst_stride + i * a.dst_stride] = convert<D, S>(s[i * a.src_stride + j * b.src_stride]);
    }
  }
}

// Calls body(dst, src) at positions [begin, end) of `outer` (row-major over the outer dims).
template <typename D, typename S, typename Body>
void for_each_outer(D* dst, const S* src, const std::vector<Dim>& outer, int64_t begin,
                    int64_t end, Body&& body) {
  const size_t rank = outer.size();
  std::vector<int64_t> index(rank, 0);
  for (size_t k = rank, rest = static_cast<size_t>(begin); k-- > 0;) {
    index[k] = static_cast<int64_t>(rest % static_cast<size_t>(outer[k].size));
    rest /= static_cast<size_t>(outer[k].size);
    dst += index[k] * outer[k].dst_stride;
    src += index[k] * outer[k].src_stride;
  }
  for (int64_t n = begin; n < end; ++n) {
    body(dst, src);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < outer[k].size) {
        dst += outer[k].dst_stride;
        src += outer[k].src_stride;
        break;
      }
      dst -= (outer[k].size - 1) * outer[k].dst_stride;
      src -= (outer[k].size - 1) * outer[k].src_stride;
      index[k] = 0;
    }
  }
}

// Runs body over all outer positions, split across OpenMP threads when the copy is big enough
// to pay for waking them (a few hundred KiB).
template <typename D, typename S, typename Body>
void parallel_outer(D* dst, const S* src, const std::vector<Dim>& outer, int64_t bytes, Body&& body) {
  int64_t count = 1;
  for (const Dim& d : outer) count *= d.size;
  constexpr int64_t kMinParallelBytes = 256 * 1024;
  if (bytes < kMinParallelBytes || count < 2) {
    for_each_outer(dst, src, outer, 0, count, body);
    return;
  }
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();
    const int64_t begin = count * me / threads, end = count * (me + 1) / threads;
    for_each_outer(dst, src, outer, begin, end, body);
  }
}

// Drops size-1 dims, orders the rest by destination stride (outermost first) and merges
// neighbours that are contiguous with each other on both sides.
std::vector<Dim> normalised_dims(const Tensor& dst, const Tensor& src) {
  std::vector<Dim> dims;
  for (int64_t i = 0; i < dst.dim(); ++i)
    if (dst.size(i) != 1) dims.push_back({dst.size(i), dst.stride(i), src.stride(i)});
  std::stable_sort(dims.begin(), dims.end(), [](const Dim& x, const Dim& y) {
    if (x.dst_stride != y.dst_stride) return x.dst_stride > y.dst_stride;
    return x.src_stride > y.src_stride;
  });
  std::vector<Dim> merged;
  for (const Dim& d : dims) {
    if (!merged.empty()) {
      Dim& prev = merged.back();  // prev is outer to d
      if (prev.dst_stride == d.dst_stride * d.size && prev.src_stride == d.src_stride * d.size) {
        prev = {prev.size * d.size, d.dst_stride, d.src_stride};
        continue;
      }
    }
    merged.push_back(d);
  }
  return merged;
}

template <typename D, typename S>
void copy_typed(D* dst, const S* src, std::vector<Dim> dims, int64_t bytes) {
  if (dims.empty()) {
    *dst = convert<D, S>(*src);
    return;
  }
  const Dim inner = dims.back();
  // The source's innermost dim, if it is not the destination's: tile the pair.
  auto src_inner = std::min_element(dims.begin(), dims.end() - 1, [](const Dim& x, const Dim& y) {
    return x.src_stride < y.src_stride;
  });
  if constexpr ((std::is_same_v<D, S> && sizeof(D) == 4) || cpu::kHasRowCast<D, S>) {
    // A 3-channel NCHW image going to NHWC (the input of every channels-last CNN): too narrow
    // to tile, so each run of pixels is interleaved from the three planes (and back below).
    if (dims.size() >= 2 && inner.size == 3 && inner.dst_stride == 1 && inner.src_stride != 1 &&
        src_inner->src_stride == 1 && src_inner->dst_stride == 3) {
      const Dim b = *src_inner;
      dims.erase(src_inner);
      dims.pop_back();
      parallel_outer(dst, src, dims, bytes, [&](D* d, const S* s) {
        interleave3_as(d, s, s + inner.src_stride, s + 2 * inner.src_stride, b.size);
      });
      return;
    }
    // And back: an NHWC 3-channel image to NCHW planes.
    if (dims.size() >= 2 && inner.dst_stride == 1 && inner.src_stride == 3 && src_inner->size == 3 &&
        src_inner->src_stride == 1) {
      const Dim c = *src_inner;
      dims.erase(src_inner);
      dims.pop_back();
      parallel_outer(dst, src, dims, bytes, [&](D* d, const S* s) {
        deinterleave3_as(d, d + c.dst_stride, d + 2 * c.dst_stride, s, inner.size);
      });
      return;
    }
  }
  const bool transpose = dims.size() >= 2 && inner.src_stride != 1 && src_inner->src_stride == 1 &&
                         inner.size >= 8 && src_inner->size >= 8;
  if (transpose) {
    const Dim b = *src_inner;
    dims.erase(src_inner);
    dims.pop_back();
    parallel_outer(dst, src, dims, bytes, [&](D* d, const S* s) { copy_tile_pair(d, s, inner, b); });
    return;
  }
  dims.pop_back();
  if (dims.empty()) {
    // One long row (a dense same-layout copy): split it so that every thread gets a piece.
    constexpr int64_t kPiece = 64 * 1024;
    const int64_t pieces = (inner.size + kPiece - 1) / kPiece;
    dims.push_back({pieces, kPiece * inner.dst_stride, kPiece * inner.src_stride});
    parallel_outer(dst, src, dims, bytes, [&](D* d, const S* s) {
      const int64_t start = (d - dst) / (inner.dst_stride * kPiece) * kPiece;
      copy_row(d, inner.dst_stride, s, inner.src_stride, std::min(kPiece, inner.size - start));
    });
    return;
  }
  parallel_outer(dst, src, dims, bytes, [&](D* d, const S* s) {
    copy_row(d, inner.dst_stride, s, inner.src_stride, inner.size);
  });
}

// dst[i] = convert(src[i]). The dispatcher's copy_ has already broadcast src to dst's sizes,
// refused a self-overlapping dst and separated overlapping src/dst.
void copy_strided_cpu(const Tensor& dst, const Tensor& src) {
  LG_ASSERT(dst.sizes() == src.sizes(), "copy_strided_cpu needs equal sizes, got ", dst.sizes(),
            " and ", src.sizes());
  if (dst.numel() == 0) return;
  std::vector<Dim> dims = normalised_dims(dst, src);
  visit_dtype(dst.dtype(), [&]<typename D>(std::type_identity<D>) {
    visit_dtype(src.dtype(), [&]<typename S>(std::type_identity<S>) {
      copy_typed<D, S>(static_cast<D*>(dst.data_ptr()), static_cast<const S*>(src.data_ptr()),
                       std::move(dims), static_cast<int64_t>(dst.nbytes() + src.nbytes()));
    });
  });
}

// One element of dst's dtype, broadcast over every position: the copy loop does the rest.
void fill_strided_cpu(const Tensor& dst, const Scalar& value) {
  Tensor one = empty({}, dst.options());
  visit_dtype(dst.dtype(), [&]<typename T>(std::type_identity<T>) {
    *static_cast<T*>(one.data_ptr()) = value.to<T>();
  });
  copy_strided_cpu(dst, one.expand(dst.sizes()));
}

}  // namespace

void register_copy_kernels(dispatch::KernelTable& table) {
  table.set<dispatch::OpId::copy_>(DeviceType::CPU, copy_strided_cpu, "copy_strided_cpu");
  table.set<dispatch::OpId::fill_>(DeviceType::CPU, fill_strided_cpu, "fill_strided_cpu");
  // The shuffles are a copy from a permuted view of the input, in out's memory order: the
  // copy loop is already native for NHWC and NCHW outputs.
  table.set<dispatch::OpId::pixel_shuffle>(DeviceType::CPU, copy_strided_cpu, "shuffle_strided_copy_cpu");
  table.set<dispatch::OpId::pixel_unshuffle>(DeviceType::CPU, copy_strided_cpu, "shuffle_strided_copy_cpu");
  table.set<dispatch::OpId::channel_shuffle>(DeviceType::CPU, copy_strided_cpu, "shuffle_strided_copy_cpu");
}

}  // namespace lg

// Row casts float32 <-> float16/bfloat16, 8 elements per step, with a scalar tail; and the
// transposing casts of NCHW <-> NHWC tiles, 4x4 elements per step.
//
// float16 goes through F16C's vcvtps2ph/vcvtph2ps, which round to nearest even like the
// scalar codec but keep NaN payloads (the codec makes every NaN the quiet 0x7e00) and quiet
// signalling NaNs on the way up (the codec keeps the bits). A step with such a lane is redone
// by the scalar codec; NaNs are rare, so the check (one compare and a movemask) is all the
// common case pays. bfloat16 is integer arithmetic on the float's bits, the codec's formula
// in eight lanes.
#include "cpu/cast_row.h"

#include "cpu/avx2_target.h"

namespace lg::cpu {
namespace {

#if LG_CPU_AVX2_KERNELS

LG_AVX2_F16C void float_to_half(Half* dst, const float* src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      cast_row_scalar(dst + i, src + i, 8);
      continue;
    }
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  cast_row_scalar(dst + i, src + i, n - i);
}

LG_AVX2_F16C void half_to_float(float* dst, const Half* src, int64_t n) {
  const __m128i magnitude = _mm_set1_epi16(0x7fff), infinity = _mm_set1_epi16(0x7c00);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    // NaN: magnitude above infinity's (a signed compare is fine once the sign is masked off).
    if (_mm_movemask_epi8(_mm_cmpgt_epi16(_mm_and_si128(h, magnitude), infinity)) != 0) {
      cast_row_scalar(dst + i, src + i, 8);
      continue;
    }
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  cast_row_scalar(dst + i, src + i, n - i);
}

LG_AVX2_F16C void float_to_bfloat16(BFloat16* dst, const float* src, int64_t n) {
  const __m256i one = _mm256_set1_epi32(1), round = _mm256_set1_epi32(0x7fff);
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), infinity = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x0040);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i high = _mm256_srli_epi32(x, 16);
    // Round to nearest even: add 0x7fff plus the lowest kept bit, then drop the low half.
    // Without NaNs the sum cannot wrap: the largest magnitude left is -inf's 0xff800000.
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(x, _mm256_add_epi32(round, _mm256_and_si256(high, one))), 16);
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, magnitude), infinity);
    const __m256i bits = _mm256_blendv_epi8(rounded, _mm256_or_si256(high, quiet), is_nan);
    // Every lane is below 0x10000, so the unsigned-saturating pack is a plain narrowing.
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), packed);
  }
  cast_row_scalar(dst + i, src + i, n - i);
}

LG_AVX2_F16C void bfloat16_to_float(float* dst, const BFloat16* src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m256i bits = _mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), bits);
  }
  cast_row_scalar(dst + i, src + i, n - i);
}

// The transposing casts work on 4x4 blocks: four 4-element rows of the source are loaded (and
// widened to float), transposed in SSE registers (_MM_TRANSPOSE4_PS), and each resulting
// column is narrowed and stored as one 4-element row of the destination. Ragged edges, and
// float16 blocks holding a NaN, take the scalar codec.

LG_AVX2_F16C inline __m128i narrow_to_half(__m128 v) {
  return _mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

LG_AVX2_F16C inline __m128i narrow_to_bfloat16(__m128 v) {
  const __m128i x = _mm_castps_si128(v), high = _mm_srli_epi32(x, 16);
  const __m128i rounded =
      _mm_srli_epi32(_mm_add_epi32(x, _mm_add_epi32(_mm_set1_epi32(0x7fff), _mm_and_si128(high, _mm_set1_epi32(1)))), 16);
  const __m128i is_nan = _mm_cmpgt_epi32(_mm_and_si128(x, _mm_set1_epi32(0x7fffffff)), _mm_set1_epi32(0x7f800000));
  const __m128i bits = _mm_blendv_epi8(rounded, _mm_or_si128(high, _mm_set1_epi32(0x0040)), is_nan);
  return _mm_packus_epi32(bits, bits);
}

LG_AVX2_F16C inline __m128 widen_half(__m128i h) { return _mm_cvtph_ps(h); }

LG_AVX2_F16C inline __m128 widen_bfloat16(__m128i b) {
  return _mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(b), 16));
}

// float -> 16-bit. kCheckNaN: blocks with a NaN go to the scalar codec (float16 only; the
// bfloat16 narrowing handles NaN itself).
template <typename H, __m128i (*Narrow)(__m128), bool kCheckNaN>
LG_AVX2_F16C void transpose_narrow(H* dst, int64_t dst_stride, const float* src, int64_t src_stride, int64_t rows,
                                   int64_t cols) {
  const int64_t rows4 = rows / 4 * 4, cols4 = cols / 4 * 4;
  for (int64_t j = 0; j < cols4; j += 4) {
    for (int64_t i = 0; i < rows4; i += 4) {
      const float* s = src + i * src_stride + j;
      H* d = dst + j * dst_stride + i;
      __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + src_stride), r2 = _mm_loadu_ps(s + 2 * src_stride),
             r3 = _mm_loadu_ps(s + 3 * src_stride);
      if constexpr (kCheckNaN) {
        const __m128 nan = _mm_or_ps(_mm_cmpunord_ps(r0, r1), _mm_cmpunord_ps(r2, r3));
        if (_mm_movemask_ps(nan) != 0) {
          cast_transpose_scalar(d, dst_stride, s, src_stride, 4, 4);
          continue;
        }
      }
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d), Narrow(r0));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + dst_stride), Narrow(r1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + 2 * dst_stride), Narrow(r2));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + 3 * dst_stride), Narrow(r3));
    }
  }
  cast_transpose_scalar(dst + rows4, dst_stride, src + rows4 * src_stride, src_stride, rows - rows4, cols);
  cast_transpose_scalar(dst + cols4 * dst_stride, dst_stride, src + cols4, src_stride, rows4, cols - cols4);
}

// 16-bit -> float. kCheckNaN: blocks with a float16 NaN go to the scalar codec.
template <typename H, __m128 (*Widen)(__m128i), bool kCheckNaN>
LG_AVX2_F16C void transpose_widen(float* dst, int64_t dst_stride, const H* src, int64_t src_stride, int64_t rows,
                                  int64_t cols) {
  const int64_t rows4 = rows / 4 * 4, cols4 = cols / 4 * 4;
  const __m128i magnitude = _mm_set1_epi16(0x7fff), infinity = _mm_set1_epi16(0x7c00);
  for (int64_t j = 0; j < cols4; j += 4) {
    for (int64_t i = 0; i < rows4; i += 4) {
      const H* s = src + i * src_stride + j;
      float* d = dst + j * dst_stride + i;
      const auto load = [](const H* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); };
      const __m128i h0 = load(s), h1 = load(s + src_stride), h2 = load(s + 2 * src_stride),
                    h3 = load(s + 3 * src_stride);
      if constexpr (kCheckNaN) {
        const __m128i rows01 = _mm_unpacklo_epi64(h0, h1), rows23 = _mm_unpacklo_epi64(h2, h3);
        const __m128i nan = _mm_or_si128(_mm_cmpgt_epi16(_mm_and_si128(rows01, magnitude), infinity),
                                         _mm_cmpgt_epi16(_mm_and_si128(rows23, magnitude), infinity));
        if (_mm_movemask_epi8(nan) != 0) {
          cast_transpose_scalar(d, dst_stride, s, src_stride, 4, 4);
          continue;
        }
      }
      __m128 r0 = Widen(h0), r1 = Widen(h1), r2 = Widen(h2), r3 = Widen(h3);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(d, r0);
      _mm_storeu_ps(d + dst_stride, r1);
      _mm_storeu_ps(d + 2 * dst_stride, r2);
      _mm_storeu_ps(d + 3 * dst_stride, r3);
    }
  }
  cast_transpose_scalar(dst + rows4, dst_stride, src + rows4 * src_stride, src_stride, rows - rows4, cols);
  cast_transpose_scalar(dst + cols4 * dst_stride, dst_stride, src + cols4, src_stride, rows4, cols - cols4);
}

#endif  // LG_CPU_AVX2_KERNELS

}  // namespace

bool vector_casts_supported() { return cpu_has_avx2() && cpu_has_f16c(); }

// The vector loop where the CPU runs it, the scalar codec elsewhere.
#if LG_CPU_AVX2_KERNELS
#define LG_ROW_CAST(vector_loop)                                   \
  if (vector_casts_supported()) return vector_loop(dst, src, n); \
  cast_row_scalar(dst, src, n)
#else
#define LG_ROW_CAST(vector_loop) cast_row_scalar(dst, src, n)
#endif

void cast_row(Half* dst, const float* src, int64_t n) { LG_ROW_CAST(float_to_half); }
void cast_row(float* dst, const Half* src, int64_t n) { LG_ROW_CAST(half_to_float); }
void cast_row(BFloat16* dst, const float* src, int64_t n) { LG_ROW_CAST(float_to_bfloat16); }
void cast_row(float* dst, const BFloat16* src, int64_t n) { LG_ROW_CAST(bfloat16_to_float); }

#undef LG_ROW_CAST

#if LG_CPU_AVX2_KERNELS
#define LG_TRANSPOSE_CAST(vector_loop)                                                       \
  if (vector_casts_supported()) return vector_loop(dst, dst_stride, src, src_stride, rows, cols); \
  cast_transpose_scalar(dst, dst_stride, src, src_stride, rows, cols)
#else
#define LG_TRANSPOSE_CAST(vector_loop) cast_transpose_scalar(dst, dst_stride, src, src_stride, rows, cols)
#endif

void cast_transpose(Half* dst, int64_t dst_stride, const float* src, int64_t src_stride, int64_t rows, int64_t cols) {
  LG_TRANSPOSE_CAST((transpose_narrow<Half, narrow_to_half, true>));
}
void cast_transpose(float* dst, int64_t dst_stride, const Half* src, int64_t src_stride, int64_t rows, int64_t cols) {
  LG_TRANSPOSE_CAST((transpose_widen<Half, widen_half, true>));
}
void cast_transpose(BFloat16* dst, int64_t dst_stride, const float* src, int64_t src_stride, int64_t rows,
                    int64_t cols) {
  LG_TRANSPOSE_CAST((transpose_narrow<BFloat16, narrow_to_bfloat16, false>));
}
void cast_transpose(float* dst, int64_t dst_stride, const BFloat16* src, int64_t src_stride, int64_t rows,
                    int64_t cols) {
  LG_TRANSPOSE_CAST((transpose_widen<BFloat16, widen_bfloat16, false>));
}

#undef LG_TRANSPOSE_CAST

}  // namespace lg::cpu

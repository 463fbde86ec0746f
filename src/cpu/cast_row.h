// Contiguous row casts between float32 and the 16-bit float storage types: the conversions the
// copy loop spends its time in when a model moves to or from float16/bfloat16.
//
// Each cast runs an AVX2 (+F16C for float16) loop when the CPU has those extensions, checked
// once at run time because the build targets baseline x86-64, and the scalar codecs of
// dtype.h otherwise. Both paths give the same bits for every input, NaNs included: lanes the
// hardware would treat differently (float16 NaN payloads, signalling NaNs) take the scalar
// codec, so a result never depends on the machine it ran on.
#pragma once

#include <cstdint>
#include <type_traits>

#include <layoutguard/dtype.h>

namespace lg::cpu {

// Whether the vectorised casts run on this CPU (AVX2 and F16C).
bool vector_casts_supported();

// dst[i] = src[i] converted, for i < n; dst and src do not overlap.
void cast_row(Half* dst, const float* src, int64_t n);
void cast_row(float* dst, const Half* src, int64_t n);
void cast_row(BFloat16* dst, const float* src, int64_t n);
void cast_row(float* dst, const BFloat16* src, int64_t n);

// dst[j * dst_stride + i] = src[i * src_stride + j] converted, for i < rows, j < cols: one tile
// of an NCHW <-> NHWC copy that also changes the dtype, transposed and cast in one pass.
void cast_transpose(Half* dst, int64_t dst_stride, const float* src, int64_t src_stride, int64_t rows, int64_t cols);
void cast_transpose(float* dst, int64_t dst_stride, const Half* src, int64_t src_stride, int64_t rows, int64_t cols);
void cast_transpose(BFloat16* dst, int64_t dst_stride, const float* src, int64_t src_stride, int64_t rows,
                    int64_t cols);
void cast_transpose(float* dst, int64_t dst_stride, const BFloat16* src, int64_t src_stride, int64_t rows,
                    int64_t cols);

// The same casts through the scalar codecs only: the reference the vector path must equal.
template <typename D, typename S>
void cast_row_scalar(D* dst, const S* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = D(static_cast<float>(src[i]));
}

template <typename D, typename S>
void cast_transpose_scalar(D* dst, int64_t dst_stride, const S* src, int64_t src_stride, int64_t rows, int64_t cols) {
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) dst[j * dst_stride + i] = D(static_cast<float>(src[i * src_stride + j]));
}

// The 16-bit float storage types, which compute in float32.
template <typename T>
inline constexpr bool kIs16BitFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// True for the (D, S) pairs cast_row and cast_transpose have vector loops for.
template <typename D, typename S>
inline constexpr bool kHasRowCast =
    (std::is_same_v<S, float> && kIs16BitFloat<D>) || (std::is_same_v<D, float> && kIs16BitFloat<S>);

}  // namespace lg::cpu

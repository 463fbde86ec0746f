// AVX2 reductions over the taps of an NHWC pooling window, in the three orders of pool_taps.h.
// Only called after pool_taps_supported().
#include "cpu/pool_taps.h"

#include <cstdint>
#include <limits>

#include <layoutguard/error.h>

#include "cpu/avx2_target.h"

namespace lg::cpu {

#if LG_CPU_AVX2_KERNELS

bool pool_taps_supported() { return cpu_has_avx2(); }

namespace {

struct SumOp {
  LG_AVX2 static __m256 init() { return _mm256_setzero_ps(); }
  LG_AVX2 static __m256 add(__m256 acc, __m256 v) { return _mm256_add_ps(acc, v); }
  static float init1() { return 0.0f; }
  static float add1(float acc, float v) { return acc + v; }
};

// v replaces the running value when larger or NaN: pooling.cpp's max_keep_nan, lane-wise.
struct MaxOp {
  LG_AVX2 static __m256 init() { return _mm256_set1_ps(-std::numeric_limits<float>::infinity()); }
  LG_AVX2 static __m256 add(__m256 acc, __m256 v) {
    const __m256 take = _mm256_or_ps(_mm256_cmp_ps(v, acc, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_ps(acc, v, take);
  }
  static float init1() { return -std::numeric_limits<float>::infinity(); }
  static float add1(float acc, float v) { return ((v > acc) | (v != v)) ? v : acc; }
};

// Turns the reduction into the output value: the division of the average, nothing for the max.
struct DivideBy {
  float divisor;
  LG_AVX2 __m256 operator()(__m256 s) const { return _mm256_div_ps(s, _mm256_set1_ps(divisor)); }
  float operator()(float s) const { return s / divisor; }
};
struct Keep {
  LG_AVX2 __m256 operator()(__m256 m) const { return m; }
  float operator()(float m) const { return m; }
};

// PREFETCH: also fetch each tap's run 4 KiB ahead (the Streaming order); a prefetch past the
// end of the input is harmless (it never faults).
template <typename Op, bool PREFETCH, typename Finish>
LG_AVX2 void reduce_in_registers(float* out, const float* const* taps, int64_t count, int64_t C, Finish finish) {
  constexpr int64_t kAhead = 1024;  // floats
  int64_t c = 0;
  for (; c + 32 <= C; c += 32) {
    __m256 a0 = Op::init(), a1 = Op::init(), a2 = Op::init(), a3 = Op::init();
    for (int64_t t = 0; t < count; ++t) {
      const float* p = taps[t] + c;
      if constexpr (PREFETCH) {  // an address, never a load: computed as an integer
        const uintptr_t ahead = reinterpret_cast<uintptr_t>(p) + kAhead * sizeof(float);
        _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(ahead + 64), _MM_HINT_T0);
      }
      a0 = Op::add(a0, _mm256_loadu_ps(p));
      a1 = Op::add(a1, _mm256_loadu_ps(p + 8));
      a2 = Op::add(a2, _mm256_loadu_ps(p + 16));
      a3 = Op::add(a3, _mm256_loadu_ps(p + 24));
    }
    _mm256_storeu_ps(out + c, finish(a0));
    _mm256_storeu_ps(out + c + 8, finish(a1));
    _mm256_storeu_ps(out + c + 16, finish(a2));
    _mm256_storeu_ps(out + c + 24, finish(a3));
  }
  for (; c + 8 <= C; c += 8) {
    __m256 a = Op::init();
    for (int64_t t = 0; t < count; ++t) a = Op::add(a, _mm256_loadu_ps(taps[t] + c));
    _mm256_storeu_ps(out + c, finish(a));
  }
  for (; c < C; ++c) {
    float a = Op::init1();
    for (int64_t t = 0; t < count; ++t) a = Op::add1(a, taps[t][c]);
    out[c] = finish(a);
  }
}

// The output holds the running value: init, then every tap in turn, then finish in place.
template <typename Op, typename Finish>
LG_AVX2 void reduce_tap_by_tap(float* out, const float* const* taps, int64_t count, int64_t C, Finish finish) {
  const int64_t vec = C / 8 * 8;
  if (count == 0) {
    for (int64_t c = 0; c < vec; c += 8) _mm256_storeu_ps(out + c, finish(Op::init()));
    for (int64_t c = vec; c < C; ++c) out[c] = finish(Op::init1());
    return;
  }
  for (int64_t t = 0; t < count; ++t) {
    const float* p = taps[t];
    const bool first = t == 0, last = t + 1 == count;
    for (int64_t c = 0; c < vec; c += 8) {
      __m256 a = Op::add(first ? Op::init() : _mm256_loadu_ps(out + c), _mm256_loadu_ps(p + c));
      _mm256_storeu_ps(out + c, last ? finish(a) : a);
    }
    for (int64_t c = vec; c < C; ++c) {
      const float a = Op::add1(first ? Op::init1() : out[c], p[c]);
      out[c] = last ? finish(a) : a;
    }
  }
}

template <typename Op, typename Finish>
void reduce(TapOrder order, float* out, const float* const* taps, int64_t count, int64_t C, Finish finish) {
  switch (order) {
    case TapOrder::InRegisters: reduce_in_registers<Op, false>(out, taps, count, C, finish); return;
    case TapOrder::Streaming: reduce_in_registers<Op, true>(out, taps, count, C, finish); return;
    case TapOrder::TapByTap: reduce_tap_by_tap<Op>(out, taps, count, C, finish); return;
  }
}

}  // namespace

void sum_taps(TapOrder order, float* out, const float* const* taps, int64_t count, int64_t C, float divisor) {
  reduce<SumOp>(order, out, taps, count, C, DivideBy{divisor});
}

void max_taps(TapOrder order, float* out, const float* const* taps, int64_t count, int64_t C) {
  reduce<MaxOp>(order, out, taps, count, C, Keep{});
}

#else

bool pool_taps_supported() { return false; }
void sum_taps(TapOrder, float*, const float* const*, int64_t, int64_t, float) { LG_ASSERT(false, "sum_taps needs AVX2"); }
void max_taps(TapOrder, float*, const float* const*, int64_t, int64_t) { LG_ASSERT(false, "max_taps needs AVX2"); }

#endif

}  // namespace lg::cpu

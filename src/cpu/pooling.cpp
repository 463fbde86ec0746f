// Max and average pooling on CPU (fixed, ceil-mode and adaptive windows alike, 2-D as 3-D).
// NHWC: one output pixel at a time, every window position adds a whole channel run (vectorised
// over C). NCHW: one channel plane at a time, windows walked inside the plane. The input may
// have any strides; out and indices are dense in the layout the infer step chose.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <xmmintrin.h>  // SSE: part of the x86-64 baseline

#include "cpu/avx2_target.h"
#include "cpu/elementwise.h"
#include "cpu/parallel.h"
#include "cpu/pool_taps.h"
#include "cpu/register.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::PoolWindows;

struct Geometry {
  std::array<int64_t, 5> in{}, xs{}, out{}, os{};
  explicit Geometry(const Tensor& x, const Tensor& o) {
    for (int i = 0; i < 5; ++i) {
      in[i] = x.size(i);
      xs[i] = x.stride(i);
      out[i] = o.size(i);
      os[i] = o.stride(i);
    }
  }
  int64_t out_plane() const { return out[2] * out[3] * out[4]; }
};

// Whether NHWC float32 pooling of these tensors runs on the AVX2 tap reductions (pool_taps.h):
// unit-stride channels in and out.
template <typename S>
bool nhwc_taps_path(const Geometry& g) {
  return std::is_same_v<S, float> && g.xs[1] == 1 && g.os[1] == 1 && cpu::pool_taps_supported();
}

// How many times the windows read each input element, on average (1 for 2x2 stride 2 and
// global pooling, 2.2 for the stem's 3x3 stride 2, 8.6 for 3x3 stride 1 on 28x28), and the
// most taps one window has. They pick the order of the AVX2 tap reductions (pool_taps.h):
// from a reuse of 4 on the input is mostly cache hits; below it, windows of up to 16 taps
// stream with prefetches and larger ones (global pooling) go tap by tap.
cpu::TapOrder tap_order(const Geometry& g, const PoolWindows& w) {
  double reuse = 1;
  int64_t most_taps = 1;
  for (int d = 0; d < 3; ++d) {
    int64_t taps = 0, widest = 0;
    for (size_t o = 0; o < w.begin[d].size(); ++o) {
      const int64_t n = w.end[d][o] > w.begin[d][o] ? (w.end[d][o] - w.begin[d][o] - 1) / w.dilation[d] + 1 : 0;
      taps += n;
      widest = std::max(widest, n);
    }
    reuse *= static_cast<double>(taps) / static_cast<double>(std::max<int64_t>(1, g.in[2 + d]));
    most_taps *= widest;
  }
  if (reuse >= 4) return cpu::TapOrder::InRegisters;
  return most_taps <= 16 ? cpu::TapOrder::Streaming : cpu::TapOrder::TapByTap;
}

// Calls pixel(order, o, taps, count, od, oh, ow) for every NHWC output pixel, in parallel: o is
// the pixel's channel run, taps the channel runs of its window's input pixels, order the tap
// order tap_order picked for the whole call.
template <typename Pixel>
void for_each_nhwc_pixel(const float* x, float* o, const Geometry& g, const PoolWindows& w, Pixel&& pixel) {
  const cpu::TapOrder order = tap_order(g, w);
  const int64_t Ch = g.in[1], P = g.out_plane(), HW = g.out[3] * g.out[4];
  cpu::parallel_for(g.in[0] * P, std::max<int64_t>(1, 2048 / std::max<int64_t>(Ch, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<const float*> taps;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / P, p = r % P, od = p / HW, oh = p / g.out[4] % g.out[3], ow = p % g.out[4];
      taps.clear();
      for (int64_t d = w.begin[0][od]; d < w.end[0][od]; d += w.dilation[0])
        for (int64_t h = w.begin[1][oh]; h < w.end[1][oh]; h += w.dilation[1])
          for (int64_t ww = w.begin[2][ow]; ww < w.end[2][ow]; ww += w.dilation[2])
            taps.push_back(x + n * g.xs[0] + d * g.xs[2] + h * g.xs[3] + ww * g.xs[4]);
      pixel(order, o + n * g.os[0] + od * g.os[2] + oh * g.os[3] + ow * g.os[4], taps.data(),
            static_cast<int64_t>(taps.size()), od, oh, ow);
    }
  });
}

template <typename C>
inline bool beats(C v, C best) {
  if constexpr (std::is_floating_point_v<C>) return v > best || std::isnan(v);
  else return v > best;
}

// v replaces best when larger, or NaN: a NaN anywhere in the window wins, as in PyTorch. The
// select form (no branch) lets the compiler vectorise the loops below.
template <typename C>
inline C max_keep_nan(C v, C best) {
  if constexpr (std::is_floating_point_v<C>) return ((v > best) | (v != v)) ? v : best;
  else return v > best ? v : best;
}

// The output columns [lo, hi) whose windows along W are whole and evenly spaced: their maxima
// take `taps` values at begin[lo] + (ow - lo) * stride + k * dilation, with no table lookups.
// Pooling windows have one such run between the clipped edges; adaptive ones may have none.
struct UniformRun {
  int64_t lo = 0, hi = 0, stride = 1, taps = 0;
};

UniformRun uniform_run(const std::vector<int64_t>& begin, const std::vector<int64_t>& end) {
  UniformRun r;
  const int64_t n = static_cast<int64_t>(begin.size());
  int64_t span = 0;
  for (int64_t i = 0; i < n; ++i) span = std::max(span, end[i] - begin[i]);
  if (span <= 0) {  // every window is empty (padding and dilation): the table loop gives -inf
    r.lo = r.hi = n;
    return r;
  }
  while (r.lo < n && end[r.lo] - begin[r.lo] != span) ++r.lo;
  r.hi = r.lo + 1;
  if (r.lo + 1 < n) r.stride = begin[r.lo + 1] - begin[r.lo];
  while (r.hi < n && end[r.hi] - begin[r.hi] == span && begin[r.hi] - begin[r.hi - 1] == r.stride) ++r.hi;
  if (r.lo >= n) r.hi = r.lo;
  return r;
}

// v where v > best or v is NaN, else best, in four lanes: max_keep_nan's rule exactly.
inline __m128 max_keep_nan_ps(__m128 v, __m128 best) {
  const __m128 take = _mm_or_ps(_mm_cmpgt_ps(v, best), _mm_cmpunord_ps(v, v));
  return _mm_or_ps(_mm_and_ps(take, v), _mm_andnot_ps(take, best));
}

// The window reductions of the separable NCHW kernels: a running max (NaN wins) and a sum,
// each on one value and on four float lanes.
struct MaxReduce {
  template <typename C>
  static C init() {
    return std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
  }
  template <typename C>
  static C add(C v, C acc) { return max_keep_nan(v, acc); }
  static __m128 add(__m128 v, __m128 acc) { return max_keep_nan_ps(v, acc); }
};

struct SumReduce {
  template <typename C>
  static C init() { return C(0); }
  template <typename C>
  static C add(C v, C acc) { return acc + v; }
  static __m128 add(__m128 v, __m128 acc) { return _mm_add_ps(acc, v); }
};

// out[ow] = the reduction over k < taps of col[first + ow * stride + k * dilation], for ow in
// [0, count). float32 rows with stride 1 or 2 take four outputs per step (SSE, in the x86-64
// baseline): a stride-2 tap is the even lanes of two loads. col must hold 8 readable values
// past the last one a window uses.
template <typename Reduce, typename C>
void row_reduce(C* out, const C* col, int64_t first, int64_t count, int64_t stride, int64_t dilation, int64_t taps) {
  int64_t ow = 0;
  if constexpr (std::is_same_v<C, float>) {
    if (stride == 1 || stride == 2) {
      const auto tap = [&](int64_t at) {
        const float* p = col + at;
        if (stride == 1) return _mm_loadu_ps(p);
        return _mm_shuffle_ps(_mm_loadu_ps(p), _mm_loadu_ps(p + 4), _MM_SHUFFLE(2, 0, 2, 0));
      };
      for (; ow + 4 <= count; ow += 4) {
        const int64_t at = first + ow * stride;
        __m128 acc = tap(at);
        for (int64_t k = 1; k < taps; ++k) acc = Reduce::add(tap(at + k * dilation), acc);
        _mm_storeu_ps(out + ow, acc);
      }
    }
  }
  for (; ow < count; ++ow) {
    const C* c = col + first + ow * stride;
    C acc = c[0];
    for (int64_t k = 1; k < taps; ++k) acc = Reduce::add(c[k * dilation], acc);
    out[ow] = acc;
  }
}

// The planes [q0, q1) of pool_nchw_separable (below), with its per-thread buffers: the hot
// loops, placement-stable (avx2_target.h). While they sat in the parallel_for lambda, edits
// elsewhere in this file moved the NCHW max pool by 5-18 %.
template <typename Reduce, typename S, typename Finish>
[[LG_PLACEMENT_STABLE]] void pool_nchw_planes(S* o, const S* x, const Geometry& g, const PoolWindows& w,
                                             const UniformRun& run, int64_t w0, int64_t w1, int64_t q0, int64_t q1,
                                             Finish& finish) {
  using C = cpu::ComputeType<S>;
  const C init = Reduce::template init<C>();
  const int64_t Ch = g.in[1], OW = g.out[4], width = w1 - w0;
  std::vector<C> column(static_cast<size_t>(width + 8), init);  // + 8: row_reduce's overread
  std::vector<C> reduced(static_cast<size_t>(OW));
  C* col = column.data() - w0;  // indexed by input column
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t n = q / Ch, c = q % Ch;
    const S* xp = x + n * g.xs[0] + c * g.xs[1];
    S* op = o + n * g.os[0] + c * g.os[1];
    for (int64_t od = 0; od < g.out[2]; ++od)
      for (int64_t oh = 0; oh < g.out[3]; ++oh) {
        std::fill(column.begin(), column.begin() + width, init);
        for (int64_t d = w.begin[0][od]; d < w.end[0][od]; d += w.dilation[0])
          for (int64_t h = w.begin[1][oh]; h < w.end[1][oh]; h += w.dilation[1]) {
            const S* xr = xp + d * g.xs[2] + h * g.xs[3];
            if (g.xs[4] == 1) {
              for (int64_t iw = w0; iw < w1; ++iw) col[iw] = Reduce::add(static_cast<C>(xr[iw]), col[iw]);
            } else {
              for (int64_t iw = w0; iw < w1; ++iw) col[iw] = Reduce::add(static_cast<C>(xr[iw * g.xs[4]]), col[iw]);
            }
          }
        // An output row of the compute type with unit stride receives the reductions directly;
        // others go through `reduced` (a second pass cost 13 % of the stem max pool's time).
        S* orow = op + od * g.os[2] + oh * g.os[3];
        C* dst = reduced.data();
        if constexpr (std::is_same_v<S, C>)
          if (g.os[4] == 1) dst = orow;
        // Clipped or uneven windows (the edges, adaptive pooling) through the tables...
        for (int64_t ow = 0; ow < OW; ++ow) {
          if (ow == run.lo) ow = run.hi;
          if (ow >= OW) break;
          C acc = init;
          for (int64_t iw = w.begin[2][ow]; iw < w.end[2][ow]; iw += w.dilation[2]) acc = Reduce::add(col[iw], acc);
          dst[ow] = acc;
        }
        // ...the run of whole windows without them.
        if (run.hi > run.lo)
          row_reduce<Reduce>(dst + run.lo, col, w.begin[2][run.lo], run.hi - run.lo, run.stride, w.dilation[2],
                             run.taps);
        finish(orow, dst, od, oh);
      }
  }
}

// Pooling on NCHW planes, separably: for each output row, a vertical pass reduces the window's
// input rows across the whole width into one row (unit-stride rows vectorise), then a short
// horizontal pass reduces each output's taps from that row. finish(orow, reduced, od, oh)
// writes the row's outputs from the reduced values, which may already be orow itself. The
// per-output loops took 36 ms (max) and 40 ms (3x3 average) on 2 threads for shapes where this
// takes 3 ms and 4 ms (bench/cpu_ops).
//
// For max, equal values tie toward the left column of the window rather than the top row, so
// of a +0 and a -0 in one window the sign may differ from the indices path; for the average,
// the sum runs in another order than the reference's. Every other value is the same.
// noinline: inlined into max_pool_typed, it made the NHWC loop there 20 % slower (measured).
template <typename Reduce, typename S, typename Finish>
[[gnu::noinline]] void pool_nchw_separable(S* o, const S* x, const Geometry& g, const PoolWindows& w, Finish&& finish) {
  const int64_t N = g.in[0], Ch = g.in[1];
  // The input columns some window reads. With dilation a window starts at its first tap inside
  // the input, so the starts need not grow with ow.
  const int64_t w0 = *std::min_element(w.begin[2].begin(), w.begin[2].end());
  const int64_t w1 = std::max(w0, *std::max_element(w.end[2].begin(), w.end[2].end())), width = w1 - w0;
  const int64_t row_cost = std::max<int64_t>(1, g.out[2] * g.out[3] * width);
  UniformRun run = uniform_run(w.begin[2], w.end[2]);
  run.taps = run.hi > run.lo ? (w.end[2][run.lo] - w.begin[2][run.lo] - 1) / w.dilation[2] + 1 : 0;
  cpu::parallel_for(N * Ch, std::max<int64_t>(1, 32768 / row_cost), [&](int64_t q0, int64_t q1) {
    pool_nchw_planes<Reduce>(o, x, g, w, run, w0, w1, q0, q1, finish);
  });
}

template <typename S>
void max_pool_typed(const Tensor& out, const Tensor& indices, const Tensor& input, const PoolWindows& w) {
  using C = cpu::ComputeType<S>;
  const Geometry g(input, out);
  const S* x = input.data_ptr<S>();
  S* o = out.data_ptr<S>();
  int64_t* ix = indices.defined() ? indices.data_ptr<int64_t>() : nullptr;
  const int64_t N = g.in[0], Ch = g.in[1], P = g.out_plane(), HW = g.out[3] * g.out[4];
  const int64_t plane_hw = g.in[3] * g.in[4];
  const C lowest = MaxReduce::init<C>();
  if constexpr (std::is_same_v<S, float>) {
    if (w.channels_last && !ix && nhwc_taps_path<S>(g)) {
      for_each_nhwc_pixel(x, o, g, w,
                          [&](cpu::TapOrder order, float* op, const float* const* t, int64_t count, int64_t, int64_t,
                              int64_t) { cpu::max_taps(order, op, t, count, Ch); });
      return;
    }
  }
  if (w.channels_last && !ix && g.xs[1] == 1 && g.os[1] == 1) {
    // Values only (max_pool2d without indices, the inference case) over unit-stride channels: a
    // branch-free running max that vectorises -- the loop below, which also tracks the argmax,
    // took 70 ms for ResNet-50's stem pool at batch 16 (now 9 ms). NaN wins as it does there.
    cpu::parallel_for(N * P, std::max<int64_t>(1, 2048 / std::max<int64_t>(Ch, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<C> best(static_cast<size_t>(Ch));
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / P, p = r % P, od = p / HW, oh = p / g.out[4] % g.out[3], ow = p % g.out[4];
        std::fill(best.begin(), best.end(), lowest);
        C* b = best.data();
        for (int64_t d = w.begin[0][od]; d < w.end[0][od]; d += w.dilation[0])
          for (int64_t h = w.begin[1][oh]; h < w.end[1][oh]; h += w.dilation[1])
            for (int64_t ww = w.begin[2][ow]; ww < w.end[2][ow]; ww += w.dilation[2]) {
              const S* xi = x + n * g.xs[0] + d * g.xs[2] + h * g.xs[3] + ww * g.xs[4];
              for (int64_t c = 0; c < Ch; ++c) {
                const C v = static_cast<C>(xi[c]);
                b[c] = max_keep_nan(v, b[c]);
              }
            }
        S* oi = o + n * g.os[0] + od * g.os[2] + oh * g.os[3] + ow * g.os[4];
        for (int64_t c = 0; c < Ch; ++c) oi[c] = static_cast<S>(b[c]);
      }
    });
    return;
  }
  if (w.channels_last) {
    cpu::parallel_for(N * P, std::max<int64_t>(1, 2048 / std::max<int64_t>(Ch, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<C> best(static_cast<size_t>(Ch));
      std::vector<int64_t> arg(static_cast<size_t>(Ch));
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / P, p = r % P, od = p / HW, oh = p / g.out[4] % g.out[3], ow = p % g.out[4];
        std::fill(best.begin(), best.end(), lowest);
        std::fill(arg.begin(), arg.end(), int64_t{-1});
        for (int64_t d = w.begin[0][od]; d < w.end[0][od]; d += w.dilation[0])
          for (int64_t h = w.begin[1][oh]; h < w.end[1][oh]; h += w.dilation[1])
            for (int64_t ww = w.begin[2][ow]; ww < w.end[2][ow]; ww += w.dilation[2]) {
              const S* xi = x + n * g.xs[0] + d * g.xs[2] + h * g.xs[3] + ww * g.xs[4];
              const int64_t flat = d * plane_hw + h * g.in[4] + ww;
              for (int64_t c = 0; c < Ch; ++c) {
                const C v = static_cast<C>(xi[c * g.xs[1]]);
                if (arg[c] < 0 || beats(v, best[c])) {
                  best[c] = v;
                  arg[c] = flat;
                }
              }
            }
        const int64_t base = n * g.os[0] + od * g.os[2] + oh * g.os[3] + ow * g.os[4];
        for (int64_t c = 0; c < Ch; ++c) o[base + c * g.os[1]] = static_cast<S>(best[c]);
        if (ix)
          for (int64_t c = 0; c < Ch; ++c) ix[base + c * g.os[1]] = arg[c];
      }
    });
    return;
  }
  if (!ix) {
    pool_nchw_separable<MaxReduce>(o, x, g, w, [&](S* orow, const C* reduced, int64_t, int64_t) {
      if constexpr (std::is_same_v<S, C>)
        if (reduced == orow) return;
      for (int64_t ow = 0; ow < g.out[4]; ++ow) orow[ow * g.os[4]] = static_cast<S>(reduced[ow]);
    });
    return;
  }
  cpu::parallel_for(N * Ch, std::max<int64_t>(1, 2048 / std::max<int64_t>(P, 1)), [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / Ch, c = q % Ch;
      const S* xp = x + n * g.xs[0] + c * g.xs[1];
      for (int64_t od = 0; od < g.out[2]; ++od)
        for (int64_t oh = 0; oh < g.out[3]; ++oh)
          for (int64_t ow = 0; ow < g.out[4]; ++ow) {
            C best = lowest;
            int64_t arg = -1;
            for (int64_t d = w.begin[0][od]; d < w.end[0][od]; d += w.dilation[0])
              for (int64_t h = w.begin[1][oh]; h < w.end[1][oh]; h += w.dilation[1])
                for (int64_t ww = w.begin[2][ow]; ww < w.end[2][ow]; ww += w.dilation[2]) {
                  const C v = static_cast<C>(xp[d * g.xs[2] + h * g.xs[3] + ww * g.xs[4]]);
                  if (arg < 0 || beats(v, best)) {
                    best = v;
                    arg = d * plane_hw + h * g.in[4] + ww;
                  }
                }
            const int64_t at = n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4];
            o[at] = static_cast<S>(best);
            if (ix) ix[at] = arg;
          }
    }
  });
}

template <typename S>
void avg_pool_typed(const Tensor& out, const Tensor& input, const PoolWindows& w) {
  using C = cpu::ComputeType<S>;
  const Geometry g(input, out);
  const S* x = input.data_ptr<S>();
  S* o = out.data_ptr<S>();
  const int64_t N = g.in[0], Ch = g.in[1], P = g.out_plane(), HW = g.out[3] * g.out[4];
  auto divisor = [&](int64_t od, int64_t oh, int64_t ow) {
    return w.divisor_override != 0 ? w.divisor_override : w.count[0][od] * w.count[1][oh] * w.count[2][ow];
  };
  if constexpr (std::is_same_v<S, float>) {
    if (w.channels_last && nhwc_taps_path<S>(g)) {
      for_each_nhwc_pixel(x, o, g, w,
                          [&](cpu::TapOrder order, float* op, const float* const* t, int64_t count, int64_t od,
                              int64_t oh, int64_t ow) {
                            cpu::sum_taps(order, op, t, count, Ch, static_cast<float>(divisor(od, oh, ow)));
                          });
      return;
    }
  }
  if (w.channels_last) {
    cpu::parallel_for(N * P, std::max<int64_t>(1, 2048 / std::max<int64_t>(Ch, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<C> acc(static_cast<size_t>(Ch));
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / P, p = r % P, od = p / HW, oh = p / g.out[4] % g.out[3], ow = p % g.out[4];
        std::fill(acc.begin(), acc.end(), C(0));
        for (int64_t d = w.begin[0][od]; d < w.end[0][od]; ++d)
          for (int64_t h = w.begin[1][oh]; h < w.end[1][oh]; ++h)
            for (int64_t ww = w.begin[2][ow]; ww < w.end[2][ow]; ++ww) {
              const S* xi = x + n * g.xs[0] + d * g.xs[2] + h * g.xs[3] + ww * g.xs[4];
              if (g.xs[1] == 1) {
                for (int64_t c = 0; c < Ch; ++c) acc[c] += static_cast<C>(xi[c]);
              } else {
                for (int64_t c = 0; c < Ch; ++c) acc[c] += static_cast<C>(xi[c * g.xs[1]]);
              }
            }
        const C div = static_cast<C>(divisor(od, oh, ow));
        const int64_t base = n * g.os[0] + od * g.os[2] + oh * g.os[3] + ow * g.os[4];
        for (int64_t c = 0; c < Ch; ++c) o[base + c * g.os[1]] = static_cast<S>(acc[c] / div);
      }
    });
    return;
  }
  pool_nchw_separable<SumReduce>(o, x, g, w, [&](S* orow, const C* sums, int64_t od, int64_t oh) {
    for (int64_t ow = 0; ow < g.out[4]; ++ow)
      orow[ow * g.os[4]] = static_cast<S>(sums[ow] / static_cast<C>(divisor(od, oh, ow)));
  });
}

void max_pool_cpu(const Tensor& out, const Tensor& indices, const Tensor& input, const PoolWindows& w) {
  if (out.numel() == 0) return;
  visit_dtype(input.dtype(), [&]<typename S>(std::type_identity<S>) {
    if constexpr (!std::is_same_v<S, bool>) max_pool_typed<S>(out, indices, input, w);
    else LG_ASSERT(false, "max pooling reached with bool");
  });
}

void avg_pool_cpu(const Tensor& out, const Tensor& input, const PoolWindows& w) {
  if (out.numel() == 0) return;
  visit_dtype(input.dtype(), [&]<typename S>(std::type_identity<S>) {
    if constexpr (cpu::kIsFloating<S>) avg_pool_typed<S>(out, input, w);
    else LG_ASSERT(false, "average pooling reached with ", input.dtype());
  });
}

}  // namespace

void register_pooling_kernels(dispatch::KernelTable& table) {
  using dispatch::OpId;
  table.set<OpId::max_pool2d>(DeviceType::CPU, max_pool_cpu, "max_pool_cpu");
  table.set<OpId::max_pool3d>(DeviceType::CPU, max_pool_cpu, "max_pool_cpu");
  table.set<OpId::adaptive_max_pool2d>(DeviceType::CPU, max_pool_cpu, "max_pool_cpu");
  table.set<OpId::avg_pool2d>(DeviceType::CPU, avg_pool_cpu, "avg_pool_cpu");
  table.set<OpId::avg_pool3d>(DeviceType::CPU, avg_pool_cpu, "avg_pool_cpu");
  table.set<OpId::adaptive_avg_pool2d>(DeviceType::CPU, avg_pool_cpu, "avg_pool_cpu");
  table.set<OpId::adaptive_avg_pool3d>(DeviceType::CPU, avg_pool_cpu, "avg_pool_cpu");
}

}  // namespace lg

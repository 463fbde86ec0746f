// Reference pooling in float64, written for clarity: row-major (N, C, spatial...) values in,
// row-major values out, each window walked by plain loops straight from PyTorch's definitions
// (ATen's pooling_output_shape, its CPU max and average kernels, the adaptive bins). Inputs come
// from values(t) (tests/support/tensor_testing.h), so any layout of the tested tensor reduces to
// the same logical order; unbatched (C, ...) inputs are passed as (1, C, ...).
//
// 2-D pooling is 3-D pooling over a depth of 1 with the identity window (kernel 1, stride 1, no
// padding) in that dim: one set of loops serves both, and the flat index d * H * W + h * W + w of
// a max is h * W + w for 2-D.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace lg::testing {

// The window of one spatial dim.
struct Window1d {
  int64_t kernel = 1, stride = 1, pad = 0, dilation = 1;
};

// Parameters of a fixed-window pooling, over (D, H, W).
struct PoolParams {
  std::array<Window1d, 3> dims;
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor_override;
};

// The lists as the ops take them (pooling.h): one value stands for every spatial dim, an empty
// stride means stride = kernel_size. `spatial` is 2 or 3; 2-D leaves D at the identity window.
inline PoolParams make_pool_params(int spatial, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                                   const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                                   bool ceil_mode, bool count_include_pad = true,
                                   std::optional<int64_t> divisor_override = std::nullopt) {
  const auto pick = [](const std::vector<int64_t>& v, int i) { return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)]; };
  PoolParams p;
  for (int i = 0; i < spatial; ++i) {
    Window1d& w = p.dims[static_cast<size_t>(3 - spatial + i)];
    w.kernel = pick(kernel, i);
    w.stride = stride.empty() ? w.kernel : pick(stride, i);
    w.pad = pick(padding, i);
    w.dilation = pick(dilation, i);
  }
  p.ceil_mode = ceil_mode;
  p.count_include_pad = count_include_pad;
  p.divisor_override = divisor_override;
  return p;
}

// An (N, C, ...) shape as N, C, D, H, W (D = 1 for 4-D shapes).
struct PoolShape {
  int64_t n, c;
  std::array<int64_t, 3> in;  // D, H, W
};
inline PoolShape pool_shape(const std::vector<int64_t>& sizes) {
  if (sizes.size() == 4) return {sizes[0], sizes[1], {1, sizes[2], sizes[3]}};
  return {sizes[0], sizes[1], {sizes[2], sizes[3], sizes[4]}};
}

// ATen's output size: floor((in + 2p - d(k-1) - 1) / s) + 1, the division rounded toward minus
// infinity (div_rtn), or up with ceil_mode, which then drops a last window that would start in the
// right padding (at or past in + p).
inline int64_t pool_out_size(int64_t in, const Window1d& w, bool ceil_mode) {
  const double span = static_cast<double>(in + 2 * w.pad - w.dilation * (w.kernel - 1) - 1);
  const double q = span / static_cast<double>(w.stride);
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(q) : std::floor(q)) + 1;
  if (ceil_mode && (out - 1) * w.stride >= in + w.pad) --out;
  return out;
}

// The result of a reference pooling: output sizes (batched, same rank as the input), values in
// row-major order and, for max pooling, the flat index within the input plane of each maximum.
struct PoolResult {
  std::vector<int64_t> sizes;
  std::vector<double> values;
  std::vector<int64_t> indices;
  int64_t empty_windows = 0;  // max pooling: windows with no position inside the input
};

// What one output position reads along one dim: the input positions in window order, and the
// first position ATen's max kernel starts from (used only for the index of a window with no
// position inside the input, which ATen reports as -inf at that index).
struct Taps {
  std::vector<int64_t> positions;
  int64_t first = 0;
};

// Max pooling, dim by dim: window o starts at o * stride - pad and reads kernel positions
// dilation apart, skipping those outside [0, in).
inline Taps max_taps(int64_t o, int64_t in, const Window1d& w) {
  Taps t;
  t.first = o * w.stride - w.pad;
  while (t.first < 0) t.first += w.dilation;
  for (int64_t j = 0; j < w.kernel; ++j) {
    const int64_t i = o * w.stride - w.pad + j * w.dilation;
    if (i >= 0 && i < in) t.positions.push_back(i);
  }
  return t;
}

// Adaptive bin o of n over an input of size in: [floor(o * in / n), ceil((o + 1) * in / n)).
inline Taps adaptive_taps(int64_t o, int64_t in, int64_t n) {
  const auto start = static_cast<int64_t>(std::floor(static_cast<double>(o * in) / static_cast<double>(n)));
  const auto end = static_cast<int64_t>(std::ceil(static_cast<double>((o + 1) * in) / static_cast<double>(n)));
  Taps t;
  t.first = start;
  for (int64_t i = start; i < end; ++i) t.positions.push_back(i);
  return t;
}

// Calls fn(n, c, od, oh, ow) for every output position of an (N, C, oD, oH, oW) output in
// row-major order.
template <typename Fn>
void for_each_output(const PoolShape& s, const std::array<int64_t, 3>& out, Fn&& fn) {
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow) fn(n, c, od, oh, ow);
}

// The output sizes in the input's rank: (N, C, oH, oW) or (N, C, oD, oH, oW).
inline std::vector<int64_t> output_sizes(const std::vector<int64_t>& in_sizes, const PoolShape& s,
                                         const std::array<int64_t, 3>& out) {
  if (in_sizes.size() == 4) return {s.n, s.c, out[1], out[2]};
  return {s.n, s.c, out[0], out[1], out[2]};
}

// The maximum of each window, as ATen's CPU kernel picks it: walking the window in (d, h, w)
// order, a value replaces the current one when it is greater or NaN, so the first of equal
// maxima wins and a NaN wins (the last NaN, when there are several).
inline PoolResult max_over(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                           const std::array<int64_t, 3>& out, const std::array<std::vector<Taps>, 3>& taps) {
  const PoolShape s = pool_shape(sizes);
  const int64_t D = s.in[0], H = s.in[1], W = s.in[2];
  PoolResult r;
  r.sizes = output_sizes(sizes, s, out);
  for_each_output(s, out, [&](int64_t n, int64_t c, int64_t od, int64_t oh, int64_t ow) {
    const Taps &td = taps[0][static_cast<size_t>(od)], &th = taps[1][static_cast<size_t>(oh)],
               &tw = taps[2][static_cast<size_t>(ow)];
    double best = -std::numeric_limits<double>::infinity();
    int64_t best_index = (td.first * H + th.first) * W + tw.first;
    bool any = false;
    for (int64_t d : td.positions)
      for (int64_t h : th.positions)
        for (int64_t w : tw.positions) {
          const double v = x[static_cast<size_t>((((n * s.c + c) * D + d) * H + h) * W + w)];
          if (!any || v > best || std::isnan(v)) {
            best = v;
            best_index = (d * H + h) * W + w;
            any = true;
          }
        }
    if (!any) ++r.empty_windows;
    r.values.push_back(best);
    r.indices.push_back(best_index);
  });
  return r;
}

// The sum of each window (positions per dim as given) divided by divisor(od, oh, ow).
template <typename Divisor>
std::vector<double> average_over(const std::vector<double>& x, const PoolShape& s, const std::array<int64_t, 3>& out,
                                 const std::array<std::vector<Taps>, 3>& taps, Divisor&& divisor) {
  const int64_t D = s.in[0], H = s.in[1], W = s.in[2];
  std::vector<double> r;
  for_each_output(s, out, [&](int64_t n, int64_t c, int64_t od, int64_t oh, int64_t ow) {
    double sum = 0;
    for (int64_t d : taps[0][static_cast<size_t>(od)].positions)
      for (int64_t h : taps[1][static_cast<size_t>(oh)].positions)
        for (int64_t w : taps[2][static_cast<size_t>(ow)].positions)
          sum += x[static_cast<size_t>((((n * s.c + c) * D + d) * H + h) * W + w)];
    r.push_back(sum / static_cast<double>(divisor(od, oh, ow)));
  });
  return r;
}

// max_pool2d / max_pool3d (with indices). An output size <= 0 gives empty values: the op must
// reject such parameters.
inline PoolResult ref_max_pool(const std::vector<double>& x, const std::vector<int64_t>& sizes, const PoolParams& p) {
  const PoolShape s = pool_shape(sizes);
  std::array<int64_t, 3> out{};
  std::array<std::vector<Taps>, 3> taps;
  for (size_t i = 0; i < 3; ++i) {
    out[i] = pool_out_size(s.in[i], p.dims[i], p.ceil_mode);
    for (int64_t o = 0; o < out[i]; ++o) taps[i].push_back(max_taps(o, s.in[i], p.dims[i]));
  }
  if (out[0] <= 0 || out[1] <= 0 || out[2] <= 0) return {output_sizes(sizes, s, out), {}, {}};
  return max_over(x, sizes, out, taps);
}

// avg_pool2d / avg_pool3d, per dim as ATen's CPU kernel: window o covers [start, end) with
// start = o * stride - pad and end = min(start + kernel, in + pad) (the window clipped to the
// padded input); its elements are those of [max(start, 0), min(end, in)). The divisor is
// divisor_override when given (any nonzero value, negative included), else the product over the
// dims of end - start with count_include_pad, or of the number of elements without.
inline PoolResult ref_avg_pool(const std::vector<double>& x, const std::vector<int64_t>& sizes, const PoolParams& p) {
  const PoolShape s = pool_shape(sizes);
  std::array<int64_t, 3> out{};
  std::array<std::vector<Taps>, 3> taps;
  std::array<std::vector<int64_t>, 3> padded_len;  // end - start per output index
  for (size_t i = 0; i < 3; ++i) {
    const Window1d& w = p.dims[i];
    out[i] = pool_out_size(s.in[i], w, p.ceil_mode);
    for (int64_t o = 0; o < out[i]; ++o) {
      const int64_t start = o * w.stride - w.pad;
      const int64_t end = std::min(start + w.kernel, s.in[i] + w.pad);
      padded_len[i].push_back(end - start);
      Taps t;
      for (int64_t k = std::max<int64_t>(start, 0); k < std::min(end, s.in[i]); ++k) t.positions.push_back(k);
      taps[i].push_back(t);
    }
  }
  PoolResult r{output_sizes(sizes, s, out), {}, {}};
  if (out[0] <= 0 || out[1] <= 0 || out[2] <= 0) return r;
  r.values = average_over(x, s, out, taps, [&](int64_t od, int64_t oh, int64_t ow) -> int64_t {
    if (p.divisor_override) return *p.divisor_override;
    const std::array<size_t, 3> o{static_cast<size_t>(od), static_cast<size_t>(oh), static_cast<size_t>(ow)};
    int64_t divisor = 1;
    for (size_t i = 0; i < 3; ++i)
      divisor *= p.count_include_pad ? padded_len[i][o[i]] : static_cast<int64_t>(taps[i][o[i]].positions.size());
    return divisor;
  });
  return r;
}

// The adaptive bins of every dim; output_size has one value per spatial dim (2 or 3).
inline std::array<int64_t, 3> adaptive_bins(const PoolShape& s, const std::vector<int64_t>& output_size,
                                            std::array<std::vector<Taps>, 3>& taps) {
  std::array<int64_t, 3> out{1, 1, 1};
  const size_t lead = 3 - output_size.size();
  for (size_t i = 0; i < 3; ++i) {
    if (i >= lead) out[i] = output_size[i - lead];
    for (int64_t o = 0; o < out[i]; ++o) taps[i].push_back(adaptive_taps(o, s.in[i], out[i]));
  }
  return out;
}

// adaptive_avg_pool2d / adaptive_avg_pool3d: the mean of each bin.
inline PoolResult ref_adaptive_avg_pool(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                        const std::vector<int64_t>& output_size) {
  const PoolShape s = pool_shape(sizes);
  std::array<std::vector<Taps>, 3> taps;
  const std::array<int64_t, 3> out = adaptive_bins(s, output_size, taps);
  PoolResult r{output_sizes(sizes, s, out), {}, {}};
  r.values = average_over(x, s, out, taps, [&](int64_t od, int64_t oh, int64_t ow) {
    return taps[0][static_cast<size_t>(od)].positions.size() * taps[1][static_cast<size_t>(oh)].positions.size() *
           taps[2][static_cast<size_t>(ow)].positions.size();
  });
  return r;
}

// adaptive_max_pool2d: the maximum of each bin and its flat index, as max pooling picks them.
inline PoolResult ref_adaptive_max_pool(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                        const std::vector<int64_t>& output_size) {
  const PoolShape s = pool_shape(sizes);
  std::array<std::vector<Taps>, 3> taps;
  const std::array<int64_t, 3> out = adaptive_bins(s, output_size, taps);
  return max_over(x, sizes, out, taps);
}

}  // namespace lg::testing

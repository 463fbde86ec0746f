// Reference resampling ops in float64, written for clarity: row-major values in, row-major values
// out, every output element computed straight from PyTorch's definition (ATen UpSample.h for the
// coordinate maps, F.pad, pixel_shuffle and channel_shuffle). Inputs come from values(t)
// (tests/support/tensor_testing.h), so any layout of the tested tensor reduces to the same
// logical order. Upsampling takes (N, C, H, W) or (N, C, D, H, W) sizes and one scale per
// spatial dim (nullopt: none given); a 2-D case runs as 3-D with a depth of 1 in and out.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/tensor_testing.h"

namespace lg::testing {

using RefScales = std::vector<std::optional<double>>;

// ---- Coordinate maps (ATen UpSample.h) ------------------------------------------------------

// The scale from output to input coordinates of linear and cubic interpolation
// (area_pixel_compute_scale): align_corners maps corner to corner; otherwise a given scale > 0
// maps as 1 / scale, and without one the ratio of the sizes does.
inline double ref_area_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  if (scale && *scale > 0) return 1.0 / *scale;
  return static_cast<double>(in) / static_cast<double>(out);
}

// Nearest: input index floor(dst * scale), clamped to the input, with scale = 1 / given scale
// (when > 0) or in / out.
inline int64_t ref_nearest_index(int64_t dst, int64_t in, int64_t out, std::optional<double> scale) {
  const double s = scale && *scale > 0 ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out);
  return std::min(static_cast<int64_t>(std::floor(static_cast<double>(dst) * s)), in - 1);
}

// Linear: the two input samples around the source coordinate and their weights.
struct LinearTaps {
  int64_t i0, i1;
  double w0, w1;
};
inline LinearTaps ref_linear_taps(int64_t dst, int64_t in, int64_t out, bool align_corners,
                                  std::optional<double> scale) {
  const double s = ref_area_scale(in, out, align_corners, scale);
  const double d = static_cast<double>(dst);
  // Pixel centres: source = (dst + 0.5) * scale - 0.5, clamped at 0 (never below the first sample).
  const double src = align_corners ? s * d : std::max(s * (d + 0.5) - 0.5, 0.0);
  // i0 = floor(src) (kept inside the input, as ATen's guard_index_and_lambda does; the cases
  // tested never need it), i1 the next sample unless i0 is the last one.
  const int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
  const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
  const double lambda = std::clamp(src - static_cast<double>(i0), 0.0, 1.0);
  return {i0, i1, 1.0 - lambda, lambda};
}

// Cubic (Keys, A = -0.75): four input samples x0 - 1 .. x0 + 2 around the source coordinate,
// clamped to the input (the border replicated), and their weights.
struct CubicTaps {
  std::array<int64_t, 4> idx;
  std::array<double, 4> w;
};
inline double ref_cubic1(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }        // |x| <= 1
inline double ref_cubic2(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }  // 1 < |x| < 2
inline CubicTaps ref_cubic_taps(int64_t dst, int64_t in, int64_t out, bool align_corners,
                                std::optional<double> scale) {
  constexpr double A = -0.75;
  const double s = ref_area_scale(in, out, align_corners, scale);
  const double d = static_cast<double>(dst);
  const double src = align_corners ? s * d : s * (d + 0.5) - 0.5;  // no clamping for cubic
  const double x0 = std::floor(src), t = src - x0;
  CubicTaps taps{};
  taps.w = {ref_cubic2(t + 1, A), ref_cubic1(t, A), ref_cubic1(1 - t, A), ref_cubic2(2 - t, A)};
  for (int k = 0; k < 4; ++k)
    taps.idx[k] = std::clamp(static_cast<int64_t>(x0) - 1 + k, int64_t{0}, in - 1);
  return taps;
}

// ---- Upsampling -----------------------------------------------------------------------------

// An (N, C, D, H, W) resampling problem: a 4-D shape gets D = 1 in and out (and no scale there).
struct Resample3d {
  int64_t N = 0, C = 0;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1};
  std::array<std::optional<double>, 3> scale{};
  size_t in_at(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
    return static_cast<size_t>((((n * C + c) * in[0] + d) * in[1] + h) * in[2] + w);
  }
  size_t out_at(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
    return static_cast<size_t>((((n * C + c) * out[0] + d) * out[1] + h) * out[2] + w);
  }
  size_t out_numel() const { return static_cast<size_t>(N * C * out[0] * out[1] * out[2]); }
  // The output, each sample computed by at(n, c, od, oh, ow).
  template <typename At>
  std::vector<double> each_output(At&& at) const {
    std::vector<double> result(out_numel());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t od = 0; od < out[0]; ++od)
          for (int64_t oh = 0; oh < out[1]; ++oh)
            for (int64_t ow = 0; ow < out[2]; ++ow) result[out_at(n, c, od, oh, ow)] = at(n, c, od, oh, ow);
    return result;
  }
};
inline Resample3d resample3d(const std::vector<int64_t>& sizes, const std::vector<int64_t>& out_size,
                             const RefScales& scales) {
  Resample3d r;
  r.N = sizes[0];
  r.C = sizes[1];
  const size_t spatial = sizes.size() - 2, lead = 3 - spatial;  // 2-D: the depth slot stays 1
  for (size_t i = 0; i < spatial; ++i) {
    r.in[lead + i] = sizes[2 + i];
    r.out[lead + i] = out_size[i];
    if (i < scales.size()) r.scale[lead + i] = scales[i];
  }
  return r;
}

// upsample_nearest2d/3d: every output sample copies the input sample at the nearest indices.
inline std::vector<double> ref_upsample_nearest(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                                const std::vector<int64_t>& out_size, const RefScales& scales = {}) {
  const Resample3d r = resample3d(sizes, out_size, scales);
  return r.each_output([&](int64_t n, int64_t c, int64_t od, int64_t oh, int64_t ow) {
    const int64_t id = ref_nearest_index(od, r.in[0], r.out[0], r.scale[0]);
    const int64_t ih = ref_nearest_index(oh, r.in[1], r.out[1], r.scale[1]);
    const int64_t iw = ref_nearest_index(ow, r.in[2], r.out[2], r.scale[2]);
    return x[r.in_at(n, c, id, ih, iw)];
  });
}

// upsample_bilinear2d/trilinear3d: the weighted sum over the 2 x 2 (x 2) input samples, the
// weight of each the product of its per-dim weights.
inline std::vector<double> ref_upsample_linear(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                               const std::vector<int64_t>& out_size, bool align_corners,
                                               const RefScales& scales = {}) {
  const Resample3d r = resample3d(sizes, out_size, scales);
  return r.each_output([&](int64_t n, int64_t c, int64_t od, int64_t oh, int64_t ow) {
    const LinearTaps td = ref_linear_taps(od, r.in[0], r.out[0], align_corners, r.scale[0]);
    const LinearTaps th = ref_linear_taps(oh, r.in[1], r.out[1], align_corners, r.scale[1]);
    const LinearTaps tw = ref_linear_taps(ow, r.in[2], r.out[2], align_corners, r.scale[2]);
    const std::array<int64_t, 2> ds{td.i0, td.i1}, hs{th.i0, th.i1}, ws{tw.i0, tw.i1};
    const std::array<double, 2> dw{td.w0, td.w1}, hw{th.w0, th.w1}, ww{tw.w0, tw.w1};
    double sum = 0;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        for (int e = 0; e < 2; ++e) sum += dw[a] * hw[b] * ww[e] * x[r.in_at(n, c, ds[a], hs[b], ws[e])];
    return sum;
  });
}

// upsample_bicubic2d: the weighted sum over 4 x 4 input samples (4-D sizes only: the depth is 1).
inline std::vector<double> ref_upsample_bicubic(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                                const std::vector<int64_t>& out_size, bool align_corners,
                                                const RefScales& scales = {}) {
  const Resample3d r = resample3d(sizes, out_size, scales);
  return r.each_output([&](int64_t n, int64_t c, int64_t /*od = 0*/, int64_t oh, int64_t ow) {
    const CubicTaps th = ref_cubic_taps(oh, r.in[1], r.out[1], align_corners, r.scale[1]);
    const CubicTaps tw = ref_cubic_taps(ow, r.in[2], r.out[2], align_corners, r.scale[2]);
    double sum = 0;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) sum += th.w[a] * tw.w[b] * x[r.in_at(n, c, 0, th.idx[a], tw.idx[b])];
    return sum;
  });
}

// ---- pad ------------------------------------------------------------------------------------

// Sizes after padding: pad holds (before, after) pairs from the last dim backwards.
inline std::vector<int64_t> ref_pad_sizes(const std::vector<int64_t>& sizes, const std::vector<int64_t>& pad) {
  std::vector<int64_t> out = sizes;
  for (size_t p = 0; p < pad.size() / 2; ++p) out[sizes.size() - 1 - p] += pad[2 * p] + pad[2 * p + 1];
  return out;
}

// The input index along one dim that output index o reads (before: that dim's leading amount),
// or -1 for the constant fill.
inline int64_t ref_pad_source(int64_t o, int64_t before, int64_t in, const std::string& mode) {
  const int64_t i = o - before;  // the position in input coordinates
  if (mode == "constant") return i >= 0 && i < in ? i : -1;
  if (mode == "reflect") {  // mirror about the edge sample, which is not repeated
    if (i < 0) return -i;
    if (i >= in) return 2 * (in - 1) - i;
    return i;
  }
  if (mode == "replicate") return std::clamp(i, int64_t{0}, in - 1);
  return ((i % in) + in) % in;  // circular
}

inline std::vector<double> ref_pad(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                   const std::vector<int64_t>& pad, const std::string& mode, double value = 0) {
  const size_t rank = sizes.size();
  std::vector<int64_t> before(rank, 0);
  for (size_t p = 0; p < pad.size() / 2; ++p) before[rank - 1 - p] = pad[2 * p];
  std::vector<double> out;
  for_each_index(ref_pad_sizes(sizes, pad), [&](const std::vector<int64_t>& o) {
    int64_t at = 0;  // row-major position in x, or -1 for the fill
    for (size_t d = 0; d < rank && at >= 0; ++d) {
      const int64_t i = ref_pad_source(o[d], before[d], sizes[d], mode);
      at = i < 0 ? -1 : at * sizes[d] + i;
    }
    out.push_back(at < 0 ? value : x[static_cast<size_t>(at)]);
  });
  return out;
}

// ---- Shuffles -------------------------------------------------------------------------------

// The product of sizes[from, to).
inline int64_t ref_prod(const std::vector<int64_t>& sizes, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= sizes[d];
  return p;
}

// The element pairs of pixel_shuffle by r over B batches of (C * r * r, H, W) planes: calls
// fn(packed, spread) with the row-major positions of [b][c * r * r + i * r + j][h][w] in the
// (B, C * r * r, H, W) tensor and of [b][c][h * r + i][w * r + j] in the (B, C, H * r, W * r) one.
template <typename Fn>
void ref_pixel_shuffle_pairs(int64_t B, int64_t C, int64_t H, int64_t W, int64_t r, Fn&& fn) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < r; ++i)
          for (int64_t w = 0; w < W; ++w)
            for (int64_t j = 0; j < r; ++j)
              fn(static_cast<size_t>(((b * C * r * r + c * r * r + i * r + j) * H + h) * W + w),
                 static_cast<size_t>(((b * C + c) * H * r + h * r + i) * W * r + w * r + j));
}

// pixel_shuffle of (B..., C * r * r, H, W) (any leading batch dims, flattened to B):
// out[b][c][h * r + i][w * r + j] = in[b][c * r * r + i * r + j][h][w].
inline std::vector<double> ref_pixel_shuffle(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                             int64_t r) {
  const size_t k = sizes.size();
  std::vector<double> out(x.size());
  ref_pixel_shuffle_pairs(ref_prod(sizes, 0, k - 3), sizes[k - 3] / (r * r), sizes[k - 2], sizes[k - 1], r,
                          [&](size_t packed, size_t spread) { out[spread] = x[packed]; });
  return out;
}

// pixel_unshuffle of (B..., C, H * r, W * r): out[b][c * r * r + i * r + j][h][w] =
// in[b][c][h * r + i][w * r + j].
inline std::vector<double> ref_pixel_unshuffle(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                               int64_t r) {
  const size_t k = sizes.size();
  std::vector<double> out(x.size());
  ref_pixel_shuffle_pairs(ref_prod(sizes, 0, k - 3), sizes[k - 3], sizes[k - 2] / r, sizes[k - 1] / r, r,
                          [&](size_t packed, size_t spread) { out[packed] = x[spread]; });
  return out;
}

// channel_shuffle of (N, C, ...) with C = groups * k: out channel g2 * groups + g1 = in channel
// g1 * k + g2.
inline std::vector<double> ref_channel_shuffle(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                               int64_t groups) {
  const int64_t N = sizes[0], C = sizes[1], S = ref_prod(sizes, 2, sizes.size()), k = C / groups;
  std::vector<double> out(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g1 = 0; g1 < groups; ++g1)
      for (int64_t g2 = 0; g2 < k; ++g2)
        for (int64_t s = 0; s < S; ++s)
          out[static_cast<size_t>((n * C + g2 * groups + g1) * S + s)] =
              x[static_cast<size_t>((n * C + g1 * k + g2) * S + s)];
  return out;
}

}  // namespace lg::testing

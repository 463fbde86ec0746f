// What every CPU convolution kernel needs to know about its call, read once from the 5-D
// tensors the infer step hands over, and the strided reads that turn any input layout into the
// matrices the GEMMs take.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include <layoutguard/tensor.h>

#include "dispatch/kernel_signatures.h"

namespace lg::cpu {

struct ConvGeometry {
  int64_t batch = 0, c_in = 0, c_out = 0, groups = 1;
  int64_t cg_in = 0, cg_out = 0;                 // channels per group
  std::array<int64_t, 3> in{}, out{}, k{};      // spatial sizes (D, H, W)
  std::array<int64_t, 3> stride{}, pad{}, dil{};
  std::array<int64_t, 5> x_stride{};             // input strides (N, C, D, H, W), in elements

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return k[0] * k[1] * k[2]; }
  // Input offset of (n, c, d, h, w).
  int64_t x_offset(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
    return n * x_stride[0] + c * x_stride[1] + d * x_stride[2] + h * x_stride[3] + w * x_stride[4];
  }
  // Whether the input, image by image, is a [spatial positions x channels] matrix with unit
  // channel stride and row stride `ld` (dense NHWC; also NHWC slices along C).
  bool input_rows_uniform(int64_t* ld) const;
  // Whether each image's channel planes are dense spatial blocks with plane stride `ld`.
  bool input_planes_uniform(int64_t* ld) const;
  bool pointwise_kernel() const {  // 1x1x1, stride 1, no padding: the convolution is a GEMM
    for (int i = 0; i < 3; ++i)
      if (k[i] != 1 || stride[i] != 1 || pad[i] != 0) return false;
    return true;
  }
};

// Calls tap(x_pixel, w_row) for each kernel tap of output pixel (n, od, oh, ow) that lands
// inside the input, in kernel order (d, h, w): x_pixel is the input pixel at channel 0, w_row
// the tap's row of a (tap, channel)-ordered weight with `row` values per tap. The depthwise
// kernels walk their windows with it.
template <typename T, typename Tap>
void for_each_valid_tap(const ConvGeometry& g, const T* x, const T* w, int64_t row, int64_t n, int64_t od, int64_t oh,
                        int64_t ow, Tap&& tap) {
  const T* wt = w;
  for (int64_t kd = 0; kd < g.k[0]; ++kd) {
    const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
    for (int64_t kh = 0; kh < g.k[1]; ++kh) {
      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
      for (int64_t kw = 0; kw < g.k[2]; ++kw, wt += row) {
        const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dil[2];
        if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2]) continue;
        tap(x + g.x_offset(n, 0, id, ih, iw), wt);
      }
    }
  }
}

// transposed: weight is (C_in, C_out / groups, k...) instead of (C_out, C_in / groups, k...).
ConvGeometry conv_geometry(const Tensor& out, const Tensor& input, const Tensor& weight,
                           const dispatch::ConvParams& params, bool transposed);

// buf[p * ld + c] = x[n, c0 + c, p] for the `count` spatial positions from p0 (row-major over
// D, H, W) and channels c0 .. c0 + cn: an NHWC block of one image, from any input layout.
template <typename T>
void gather_rows(const ConvGeometry& g, const T* x, int64_t n, int64_t p0, int64_t count, int64_t c0,
                 int64_t cn, T* buf, int64_t ld) {
  const int64_t hw = g.in[1] * g.in[2];
  for (int64_t r = 0; r < count; ++r) {
    const int64_t p = p0 + r;
    const T* src = x + g.x_offset(n, c0, p / hw, p / g.in[2] % g.in[1], p % g.in[2]);
    T* dst = buf + r * ld;
    if (g.x_stride[1] == 1) {
      std::memcpy(dst, src, sizeof(T) * static_cast<size_t>(cn));
    } else {
      for (int64_t c = 0; c < cn; ++c) dst[c] = src[c * g.x_stride[1]];
    }
  }
}

// buf[c * ld + p] = x[n, c0 + c, p]: channel planes of one image, from any input layout.
template <typename T>
void gather_planes(const ConvGeometry& g, const T* x, int64_t n, int64_t c0, int64_t cn, T* buf, int64_t ld) {
  for (int64_t c = 0; c < cn; ++c)
    for (int64_t d = 0; d < g.in[0]; ++d)
      for (int64_t h = 0; h < g.in[1]; ++h) {
        const T* src = x + g.x_offset(n, c0 + c, d, h, 0);
        T* dst = buf + c * ld + (d * g.in[1] + h) * g.in[2];
        for (int64_t w = 0; w < g.in[2]; ++w) dst[w] = src[w * g.x_stride[4]];
      }
}

}  // namespace lg::cpu

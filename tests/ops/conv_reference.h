// Reference convolutions in float64, written for clarity: direct loops over NCDHW indices,
// straight from the definition. 2-D cases are passed as 5-D with depth 1.
#pragma once

#include <array>
#include <vector>

#include "support/tensor_testing.h"

namespace lg::testing {

// A 5-D array of doubles in row-major order.
struct Grid5 {
  std::array<int64_t, 5> size{};
  std::vector<double> v;
  double at(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) const {
    return v[static_cast<size_t>((((a * size[1] + b) * size[2] + c) * size[3] + d) * size[4] + e)];
  }
};

inline Grid5 grid5(const Tensor& t) {
  const Tensor u = t.dim() == 4 ? t.unsqueeze(2) : t;
  Grid5 g;
  for (int i = 0; i < 5; ++i) g.size[i] = u.size(i);
  g.v = values(u);
  return g;
}

struct RefConv {
  std::array<int64_t, 3> stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
  int64_t groups = 1;
  std::array<int64_t, 3> out{};  // output spatial sizes
};

// out[n][o][z][y][x] = bias[o] + sum over the group's channels and taps of x * w.
inline std::vector<double> ref_conv(const Grid5& x, const Grid5& w, const std::vector<double>& bias, const RefConv& p) {
  const int64_t N = x.size[0], C_out = w.size[0], cg = w.size[1], og = C_out / p.groups;
  std::vector<double> out;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < C_out; ++o)
      for (int64_t z = 0; z < p.out[0]; ++z)
        for (int64_t y = 0; y < p.out[1]; ++y)
          for (int64_t xx = 0; xx < p.out[2]; ++xx) {
            double acc = bias.empty() ? 0.0 : bias[o];
            const int64_t g = o / og;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t kz = 0; kz < w.size[2]; ++kz)
                for (int64_t ky = 0; ky < w.size[3]; ++ky)
                  for (int64_t kx = 0; kx < w.size[4]; ++kx) {
                    const int64_t iz = z * p.stride[0] - p.pad[0] + kz * p.dil[0];
                    const int64_t iy = y * p.stride[1] - p.pad[1] + ky * p.dil[1];
                    const int64_t ix = xx * p.stride[2] - p.pad[2] + kx * p.dil[2];
                    if (iz < 0 || iz >= x.size[2] || iy < 0 || iy >= x.size[3] || ix < 0 || ix >= x.size[4]) continue;
                    acc += x.at(n, g * cg + c, iz, iy, ix) * w.at(o, c, kz, ky, kx);
                  }
            out.push_back(acc);
          }
  return out;
}

// Transposed: every input element scatters x * w into out at i * stride - pad + k * dil.
inline std::vector<double> ref_conv_transpose(const Grid5& x, const Grid5& w, const std::vector<double>& bias,
                                              const RefConv& p) {
  const int64_t N = x.size[0], C_in = x.size[1], og = w.size[1], C_out = og * p.groups, ig = C_in / p.groups;
  const std::array<int64_t, 3> o = p.out;
  std::vector<double> out(static_cast<size_t>(N * C_out * o[0] * o[1] * o[2]));
  auto at = [&](int64_t n, int64_t c, int64_t z, int64_t y, int64_t xx) -> double& {
    return out[static_cast<size_t>((((n * C_out + c) * o[0] + z) * o[1] + y) * o[2] + xx)];
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C_out; ++c)
      for (int64_t z = 0; z < o[0]; ++z)
        for (int64_t y = 0; y < o[1]; ++y)
          for (int64_t xx = 0; xx < o[2]; ++xx) at(n, c, z, y, xx) = bias.empty() ? 0.0 : bias[c];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ci = 0; ci < C_in; ++ci)
      for (int64_t iz = 0; iz < x.size[2]; ++iz)
        for (int64_t iy = 0; iy < x.size[3]; ++iy)
          for (int64_t ix = 0; ix < x.size[4]; ++ix)
            for (int64_t co = 0; co < og; ++co)
              for (int64_t kz = 0; kz < w.size[2]; ++kz)
                for (int64_t ky = 0; ky < w.size[3]; ++ky)
                  for (int64_t kx = 0; kx < w.size[4]; ++kx) {
                    const int64_t z = iz * p.stride[0] - p.pad[0] + kz * p.dil[0];
                    const int64_t y = iy * p.stride[1] - p.pad[1] + ky * p.dil[1];
                    const int64_t xx = ix * p.stride[2] - p.pad[2] + kx * p.dil[2];
                    if (z < 0 || z >= o[0] || y < 0 || y >= o[1] || xx < 0 || xx >= o[2]) continue;
                    at(n, (ci / ig) * og + co, z, y, xx) += x.at(n, ci, iz, iy, ix) * w.at(ci, co, kz, ky, kx);
                  }
  return out;
}

}  // namespace lg::testing

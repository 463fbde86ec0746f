// conv_geometry and the input-layout tests that let a kernel skip its gather.
#include "cpu/conv_geometry.h"

#include <algorithm>

namespace lg::cpu {

ConvGeometry conv_geometry(const Tensor& out, const Tensor& input, const Tensor& weight,
                           const dispatch::ConvParams& params, bool transposed) {
  ConvGeometry g;
  g.batch = input.size(0);
  g.c_in = input.size(1);
  g.c_out = out.size(1);
  g.groups = params.groups;
  g.cg_in = g.c_in / g.groups;
  g.cg_out = g.c_out / g.groups;
  for (int i = 0; i < 3; ++i) {
    g.in[i] = input.size(2 + i);
    g.out[i] = out.size(2 + i);
    g.k[i] = weight.size(2 + i);
    g.stride[i] = params.stride[i];
    g.pad[i] = params.padding[i];
    g.dil[i] = params.dilation[i];
  }
  for (int i = 0; i < 5; ++i) g.x_stride[i] = input.stride(i);
  (void)transposed;  // the channel counts above read the same for both directions
  return g;
}

bool ConvGeometry::input_rows_uniform(int64_t* ld) const {
  if (c_in > 1 && x_stride[1] != 1) return false;
  // Rows run over (N, D, H, W), W innermost; each dim that varies must step by ld times the
  // number of rows inside it. ld is the stride of the innermost varying dim.
  const std::array<int64_t, 4> sizes{batch, in[0], in[1], in[2]};
  const std::array<int64_t, 4> strides{x_stride[0], x_stride[2], x_stride[3], x_stride[4]};
  int64_t step = std::max<int64_t>(c_in, 1);
  for (int d = 3; d >= 0; --d) {
    if (sizes[d] > 1) {
      step = strides[d];
      break;
    }
  }
  if (step < std::max<int64_t>(c_in, 1)) return false;  // rows would overlap (or broadcast)
  int64_t inner = 1;
  for (int d = 3; d >= 0; --d) {
    if (sizes[d] > 1 && strides[d] != step * inner) return false;
    inner *= sizes[d];
  }
  *ld = step;
  return true;
}

bool ConvGeometry::input_planes_uniform(int64_t* ld) const {
  int64_t inner = 1;
  for (int d = 4; d >= 2; --d) {
    if (in[d - 2] > 1 && x_stride[d] != inner) return false;
    inner *= in[d - 2];
  }
  const int64_t plane = c_in > 1 ? x_stride[1] : inner;
  if (plane < inner) return false;
  *ld = plane;
  return true;
}

}  // namespace lg::cpu

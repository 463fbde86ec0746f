// CPU transposed convolutions (2-D as 3-D with depth 1): a GEMM of the input with the weight
// gives, for every input position, its contribution to each kernel tap; col2im then adds those
// into the output (which starts as the bias). Native in both layouts:
//   NHWC: per image, contributions [positions, taps x C_out] = input rows [positions, C_in] x
//         weight [C_in, taps x C_out]; the scatter adds whole channel runs.
//   NCHW: per image, contributions [C_out x taps, positions] = weight^T x input planes.
// Images go to OpenMP threads (their outputs are disjoint) when there are enough of them;
// otherwise BLAS threads the GEMM.
#include <algorithm>
#include <vector>

#include "cpu/conv_geometry.h"
#include "cpu/gemm.h"
#include "cpu/packed_weights.h"
#include "cpu/parallel.h"
#include "cpu/register.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using cpu::ConvGeometry;
using dispatch::ConvParams;

// Weight (C_in, C_out/groups, kD, kH, kW) orders, outermost first.
constexpr std::array<int, 5> kOrderITapsO{0, 2, 3, 4, 1};  // [i][tap][o]: NHWC
constexpr std::array<int, 5> kOrderIOTaps{0, 1, 2, 3, 4};  // [i][o][tap]: NCHW

// Output position of input position i through kernel offset k, or -1 when outside.
inline int64_t out_pos(int64_t i, int64_t k, int64_t s, int64_t p, int64_t d, int64_t out) {
  const int64_t o = i * s - p + k * d;
  return o >= 0 && o < out ? o : -1;
}

template <typename T>
void init_with_bias(T* out_n, int64_t rows, int64_t c, bool channels_last, const T* bias, int64_t bias_stride) {
  // rows: output positions per image
  if (channels_last) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < c; ++j) out_n[r * c + j] = bias ? bias[j * bias_stride] : T(0);
  } else {
    for (int64_t j = 0; j < c; ++j) std::fill(out_n + j * rows, out_n + (j + 1) * rows, bias ? bias[j * bias_stride] : T(0));
  }
}

template <typename T>
void conv_transpose_nhwc(const ConvGeometry& g, const T* x, const T* w, const T* bias, int64_t bs, T* out) {
  dispatch::note_kernel("conv_transpose_nhwc_gemm_col2im_cpu");
  const int64_t Pin = g.in_plane(), Pout = g.out_plane(), taps = g.taps(), kt = taps * g.cg_out;
  int64_t ld = 0;
  const bool direct = g.input_rows_uniform(&ld);
  const int64_t tile = std::clamp<int64_t>((int64_t{1} << 18) / std::max<int64_t>(kt, 1), 16, 4096);
  auto run_images = [&](int64_t n0, int64_t n1) {
    std::vector<T> cols(static_cast<size_t>(std::min(tile, Pin) * kt));
    std::vector<T> xbuf(direct ? 0 : static_cast<size_t>(std::min(tile, Pin) * g.cg_in));
    for (int64_t n = n0; n < n1; ++n) {
      T* out_n = out + n * Pout * g.c_out;
      init_with_bias(out_n, Pout, g.c_out, true, bias, bs);
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        for (int64_t p0 = 0; p0 < Pin; p0 += tile) {
          const int64_t rows = std::min(tile, Pin - p0);
          const T* a = nullptr;
          int64_t lda = g.cg_in;
          if (direct) {
            a = x + n * g.x_stride[0] + p0 * ld + gi * g.cg_in;
            lda = ld;
          } else {
            cpu::gather_rows(g, x, n, p0, rows, gi * g.cg_in, g.cg_in, xbuf.data(), g.cg_in);
            a = xbuf.data();
          }
          cpu::gemm(false, false, rows, kt, g.cg_in, T(1), a, lda, w + gi * g.cg_in * kt, kt, T(0), cols.data(), kt);
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t p = p0 + r;
            const int64_t id = p / (g.in[1] * g.in[2]), ih = p / g.in[2] % g.in[1], iw = p % g.in[2];
            const T* src = cols.data() + r * kt;
            for (int64_t kd = 0; kd < g.k[0]; ++kd) {
              const int64_t od = out_pos(id, kd, g.stride[0], g.pad[0], g.dil[0], g.out[0]);
              for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                const int64_t oh = out_pos(ih, kh, g.stride[1], g.pad[1], g.dil[1], g.out[1]);
                for (int64_t kw = 0; kw < g.k[2]; ++kw, src += g.cg_out) {
                  const int64_t ow = out_pos(iw, kw, g.stride[2], g.pad[2], g.dil[2], g.out[2]);
                  if (od < 0 || oh < 0 || ow < 0) continue;
                  T* dst = out_n + ((od * g.out[1] + oh) * g.out[2] + ow) * g.c_out + gi * g.cg_out;
                  for (int64_t c = 0; c < g.cg_out; ++c) dst[c] += src[c];
                }
              }
            }
          }
        }
      }
    }
  };
  if (cpu::would_parallelise(g.batch, 1)) cpu::parallel_for(g.batch, 1, run_images);
  else run_images(0, g.batch);
}

template <typename T>
void conv_transpose_nchw(const ConvGeometry& g, const T* x, const T* w, const T* bias, int64_t bs, T* out) {
  dispatch::note_kernel("conv_transpose_nchw_gemm_col2im_cpu");
  const int64_t Pin = g.in_plane(), Pout = g.out_plane(), taps = g.taps(), kt = taps * g.cg_out;
  int64_t ld = 0;
  const bool direct = g.input_planes_uniform(&ld);
  auto run_images = [&](int64_t n0, int64_t n1) {
    std::vector<T> cols(static_cast<size_t>(kt * Pin));
    std::vector<T> xbuf(direct ? 0 : static_cast<size_t>(g.cg_in * Pin));
    for (int64_t n = n0; n < n1; ++n) {
      T* out_n = out + n * Pout * g.c_out;
      init_with_bias(out_n, Pout, g.c_out, false, bias, bs);
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        const T* b = nullptr;
        int64_t ldb = Pin;
        if (direct) {
          b = x + n * g.x_stride[0] + gi * g.cg_in * g.x_stride[1];
          ldb = ld;
        } else {
          cpu::gather_planes(g, x, n, gi * g.cg_in, g.cg_in, xbuf.data(), Pin);
          b = xbuf.data();
        }
        cpu::gemm(true, false, kt, Pin, g.cg_in, T(1), w + gi * g.cg_in * kt, kt, b, ldb, T(0), cols.data(), Pin);
        for (int64_t co = 0; co < g.cg_out; ++co) {
          T* plane = out_n + (gi * g.cg_out + co) * Pout;
          for (int64_t kd = 0; kd < g.k[0]; ++kd)
            for (int64_t kh = 0; kh < g.k[1]; ++kh)
              for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                const T* src = cols.data() + (co * taps + (kd * g.k[1] + kh) * g.k[2] + kw) * Pin;
                for (int64_t id = 0; id < g.in[0]; ++id) {
                  const int64_t od = out_pos(id, kd, g.stride[0], g.pad[0], g.dil[0], g.out[0]);
                  if (od < 0) continue;
                  for (int64_t ih = 0; ih < g.in[1]; ++ih) {
                    const int64_t oh = out_pos(ih, kh, g.stride[1], g.pad[1], g.dil[1], g.out[1]);
                    if (oh < 0) continue;
                    T* orow = plane + (od * g.out[1] + oh) * g.out[2];
                    const T* srow = src + (id * g.in[1] + ih) * g.in[2];
                    for (int64_t iw = 0; iw < g.in[2]; ++iw) {
                      const int64_t ow = out_pos(iw, kw, g.stride[2], g.pad[2], g.dil[2], g.out[2]);
                      if (ow >= 0) orow[ow] += srow[iw];
                    }
                  }
                }
              }
        }
      }
    }
  };
  if (cpu::would_parallelise(g.batch, 1)) cpu::parallel_for(g.batch, 1, run_images);
  else run_images(0, g.batch);
}

template <typename T>
void conv_transpose_typed(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
                          const ConvParams& p) {
  const ConvGeometry g = cpu::conv_geometry(out, input, weight, p, true);
  const T* b = bias.defined() ? bias.data_ptr<T>() : nullptr;
  const int64_t bs = bias.defined() ? bias.stride(0) : 0;
  const Tensor w = cpu::packed_weight(weight, input.dtype(), p.channels_last ? kOrderITapsO : kOrderIOTaps);
  if (p.channels_last) conv_transpose_nhwc(g, input.data_ptr<T>(), w.data_ptr<T>(), b, bs, out.data_ptr<T>());
  else conv_transpose_nchw(g, input.data_ptr<T>(), w.data_ptr<T>(), b, bs, out.data_ptr<T>());
}

void conv_transpose_cpu(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const ConvParams& p) {
  if (out.numel() == 0) return;
  if (input.dtype() == kFloat64) conv_transpose_typed<double>(out, input, weight, bias, p);
  else conv_transpose_typed<float>(out, input, weight, bias, p);
}

}  // namespace

void register_conv_transpose_kernels(dispatch::KernelTable& table) {
  table.set<dispatch::OpId::conv_transpose2d>(DeviceType::CPU, conv_transpose_cpu, "conv_transpose_cpu");
  table.set<dispatch::OpId::conv_transpose3d>(DeviceType::CPU, conv_transpose_cpu, "conv_transpose_cpu");
}

}  // namespace lg

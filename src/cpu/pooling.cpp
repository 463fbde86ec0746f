// Max and average pooling on CPU (fixed, ceil-mode and adaptive windows alike, 2-D as 3-D).
// NHWC: one output pixel at a time, every window position adds a whole channel run (vectorised
// over C). NCHW: one channel plane at a time, windows walked inside the plane. The input may
// have any strides; out and indices are dense in the layout the infer step chose.
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/parallel.h"
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

template <typename C>
inline bool beats(C v, C best) {
  if constexpr (std::is_floating_point_v<C>) return v > best || std::isnan(v);
  else return v > best;
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
  const C lowest = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
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
                b[c] = (v > b[c] || v != v) ? v : b[c];
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
  cpu::parallel_for(N * Ch, std::max<int64_t>(1, 2048 / std::max<int64_t>(P, 1)), [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / Ch, c = q % Ch;
      const S* xp = x + n * g.xs[0] + c * g.xs[1];
      for (int64_t od = 0; od < g.out[2]; ++od)
        for (int64_t oh = 0; oh < g.out[3]; ++oh)
          for (int64_t ow = 0; ow < g.out[4]; ++ow) {
            C acc = 0;
            for (int64_t d = w.begin[0][od]; d < w.end[0][od]; ++d)
              for (int64_t h = w.begin[1][oh]; h < w.end[1][oh]; ++h)
                for (int64_t ww = w.begin[2][ow]; ww < w.end[2][ow]; ++ww)
                  acc += static_cast<C>(xp[d * g.xs[2] + h * g.xs[3] + ww * g.xs[4]]);
            o[n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]] =
                static_cast<S>(acc / static_cast<C>(divisor(od, oh, ow)));
          }
    }
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

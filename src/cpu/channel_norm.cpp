// batch_norm, group_norm and instance_norm on CPU: one kernel, three groupings of statistics.
// Both passes walk the input in its own memory order -- channels innermost for NHWC data
// (per-channel accumulators, vectorised over C), planes for NCHW data -- and the final
// y = (x - mean[n, c]) * a[n, c] + b[n, c] walks the output in its order, so neither layout is converted.
// Statistics are in double: a first pass gives the means, a second the squared deviations.
#include <cmath>
#include <vector>

#include "core/channel_statistics.h"
#include "cpu/elementwise.h"
#include "cpu/parallel.h"
#include "cpu/register.h"
#include "cpu/tensor_values.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::ChannelNormParams;

struct View5 {
  std::array<int64_t, 5> size{}, stride{};
  explicit View5(const Tensor& t) {
    for (int i = 0; i < 5; ++i) {
      size[i] = t.size(i);
      stride[i] = t.stride(i);
    }
  }
  int64_t plane() const { return size[2] * size[3] * size[4]; }
  // Exactly the strides of a dense NDHWC tensor (size-1 dims included), so that pixel r of the
  // flattened (N, D, H, W) starts at element r * C.
  bool dense_channels_last() const {
    return stride[1] == 1 && stride[4] == size[1] && stride[3] == size[1] * size[4] &&
           stride[2] == size[1] * size[4] * size[3] && stride[0] == size[1] * plane();
  }
  // The channel stride is the smallest that varies: iterate channels innermost.
  bool channels_inner() const {
    for (int d = 2; d < 5; ++d)
      if (size[d] > 1 && stride[d] < stride[1]) return false;
    return size[1] > 1;
  }
};

// sums[n * C + c] += sum over space of (x - shift[n * C + c])^power, power 1 or 2.
template <typename S>
void plane_moments(const View5& v, const S* x, const std::vector<double>& shift, int power, std::vector<double>& sums) {
  const int64_t N = v.size[0], C = v.size[1];
  if (v.channels_inner()) {
    cpu::parallel_for(N, 1, [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        double* acc = sums.data() + n * C;
        const double* sh = shift.data() + n * C;
        for (int64_t d = 0; d < v.size[2]; ++d)
          for (int64_t h = 0; h < v.size[3]; ++h)
            for (int64_t w = 0; w < v.size[4]; ++w) {
              const S* row = x + n * v.stride[0] + d * v.stride[2] + h * v.stride[3] + w * v.stride[4];
              for (int64_t c = 0; c < C; ++c) {
                const double e = static_cast<double>(static_cast<cpu::ComputeType<S>>(row[c * v.stride[1]])) - sh[c];
                acc[c] += power == 1 ? e : e * e;
              }
            }
      }
    });
    return;
  }
  cpu::parallel_for(N * C, 4, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / C, c = q % C;
      double acc = 0;
      for (int64_t d = 0; d < v.size[2]; ++d)
        for (int64_t h = 0; h < v.size[3]; ++h) {
          const S* row = x + n * v.stride[0] + c * v.stride[1] + d * v.stride[2] + h * v.stride[3];
          for (int64_t w = 0; w < v.size[4]; ++w) {
            const double e = static_cast<double>(static_cast<cpu::ComputeType<S>>(row[w * v.stride[4]])) - shift[q];
            acc += power == 1 ? e : e * e;
          }
        }
      sums[q] += acc;
    }
  });
}

// y = (x - m[n, c]) * a[n, c] + b[n, c], walking y (dense) in its memory order. Subtracting
// the mean first keeps float32 exact where x equals it (x * a + (b - m * a) would cancel).
// m, a and b hold sample n's values from n * n_step: n_step is C for per-sample statistics,
// 0 when every sample shares them (batch norm), so they are computed and tiled once.
template <typename S>
void apply_affine(const Tensor& out, const Tensor& input, bool channels_last, const std::vector<double>& m,
                  const std::vector<double>& a, const std::vector<double>& b, int64_t n_step) {
  using C_t = cpu::ComputeType<S>;
  const View5 vx(input), vy(out);
  const S* x = input.data_ptr<S>();
  S* y = out.data_ptr<S>();
  const int64_t N = vx.size[0], C = vx.size[1];
  LG_ASSERT(n_step == 0 || n_step == C, "apply_affine: n_step must be 0 or C");
  std::vector<C_t> mf(m.begin(), m.end()), af(a.begin(), a.end()), bf(b.begin(), b.end());
  if (channels_last && vx.stride == vy.stride && vx.dense_channels_last()) {
    // Pixels one after another, C values each: the output is one run per image, and the
    // per-channel values repeat every C elements. Blocks of whole pixels (at least 256
    // values) against copies of m, a, b tiled to the block length make one long vectorised
    // loop; per-pixel rows of 16 or 32 channels with their index arithmetic ran 3-4x slower
    // than the NCHW planes (MobileNetV2's early layers).
    const int64_t P = vx.plane(), k = std::max<int64_t>(1, 256 / std::max<int64_t>(C, 1)), L = k * C;
    cpu::parallel_for(N * P, k * std::max<int64_t>(1, 8192 / std::max<int64_t>(L, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<C_t> mt(static_cast<size_t>(L)), at(static_cast<size_t>(L)), bt(static_cast<size_t>(L));
      int64_t tiled_for = -1;
      for (int64_t r = r0; r < r1;) {
        const int64_t n = r / P, rows = std::min({k, r1 - r, (n + 1) * P - r}), from = n * n_step;
        if (from != tiled_for) {  // k copies of image n's C values (a loop over j % C divided per element)
          for (int64_t q = 0; q < k; ++q) {
            std::copy(mf.begin() + from, mf.begin() + from + C, mt.begin() + q * C);
            std::copy(af.begin() + from, af.begin() + from + C, at.begin() + q * C);
            std::copy(bf.begin() + from, bf.begin() + from + C, bt.begin() + q * C);
          }
          tiled_for = from;
        }
        const S* xi = x + r * C;
        S* yo = y + r * C;
        const int64_t len = rows * C;
        for (int64_t j = 0; j < len; ++j) yo[j] = static_cast<S>((static_cast<C_t>(xi[j]) - mt[j]) * at[j] + bt[j]);
        r += rows;
      }
    });
    return;
  }
  if (channels_last) {
    cpu::parallel_for(N * vx.plane(), std::max<int64_t>(1, 8192 / std::max<int64_t>(C, 1)), [&](int64_t r0, int64_t r1) {
      const int64_t P = vx.plane(), HW = vx.size[3] * vx.size[4];
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / P, p = r % P, d = p / HW, h = p / vx.size[4] % vx.size[3], w = p % vx.size[4];
        const S* xi = x + n * vx.stride[0] + d * vx.stride[2] + h * vx.stride[3] + w * vx.stride[4];
        S* yo = y + n * vy.stride[0] + d * vy.stride[2] + h * vy.stride[3] + w * vy.stride[4];
        const C_t* mr = mf.data() + n * n_step;
        const C_t* ar = af.data() + n * n_step;
        const C_t* br = bf.data() + n * n_step;
        if (vx.stride[1] == 1 && vy.stride[1] == 1) {
          for (int64_t c = 0; c < C; ++c) yo[c] = static_cast<S>((static_cast<C_t>(xi[c]) - mr[c]) * ar[c] + br[c]);
        } else {
          for (int64_t c = 0; c < C; ++c)
            yo[c * vy.stride[1]] = static_cast<S>((static_cast<C_t>(xi[c * vx.stride[1]]) - mr[c]) * ar[c] + br[c]);
        }
      }
    });
    return;
  }
  cpu::parallel_for(N * C, std::max<int64_t>(1, 8192 / std::max<int64_t>(vx.plane(), 1)), [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / C, c = q % C, i = n * n_step + c;
      const C_t mv = mf[i], av = af[i], bv = bf[i];
      for (int64_t d = 0; d < vx.size[2]; ++d)
        for (int64_t h = 0; h < vx.size[3]; ++h) {
          const S* xi = x + n * vx.stride[0] + c * vx.stride[1] + d * vx.stride[2] + h * vx.stride[3];
          S* yo = y + n * vy.stride[0] + c * vy.stride[1] + d * vy.stride[2] + h * vy.stride[3];
          if (vx.stride[4] == 1 && vy.stride[4] == 1) {
            for (int64_t w = 0; w < vx.size[4]; ++w) yo[w] = static_cast<S>((static_cast<C_t>(xi[w]) - mv) * av + bv);
          } else {
            for (int64_t w = 0; w < vx.size[4]; ++w)
              yo[w * vy.stride[4]] = static_cast<S>((static_cast<C_t>(xi[w * vx.stride[4]]) - mv) * av + bv);
          }
        }
    }
  });
}

template <typename S>
void channel_norm_typed(const Tensor& out, const Tensor& input, const ChannelNormParams& p) {
  const View5 v(input);
  const int64_t N = v.size[0], C = v.size[1];
  const S* x = input.data_ptr<S>();
  norm::ChannelStatistics stats(N, C, p.groups, p.across_batch, v.plane());
  if (p.use_input_stats) {
    std::vector<double> zero(static_cast<size_t>(N * C), 0.0), sums(static_cast<size_t>(N * C), 0.0);
    plane_moments(v, x, zero, 1, sums);
    const std::vector<double> shift = stats.set_means(sums);
    std::vector<double> sq(static_cast<size_t>(N * C), 0.0);
    plane_moments(v, x, shift, 2, sq);
    stats.set_variances(sq);
    if (p.running_mean.defined()) {
      std::vector<double> rm = cpu::read_values(p.running_mean), rv = cpu::read_values(p.running_var);
      stats.update_running(rm, rv, p.momentum);
      cpu::write_values(p.running_mean, rm);
      cpu::write_values(p.running_var, rv);
    }
  } else {
    stats.use_running(cpu::read_values(p.running_mean), cpu::read_values(p.running_var));
  }
  const std::vector<double> w = p.weight.defined() ? cpu::read_values(p.weight) : std::vector<double>(C, 1.0);
  const std::vector<double> b = p.bias.defined() ? cpu::read_values(p.bias) : std::vector<double>(C, 0.0);
  const bool shared = stats.per_channel();
  const norm::ChannelStatistics::Affine af = shared ? stats.channel_affine(w, b, p.eps) : stats.affine(w, b, p.eps);
  apply_affine<S>(out, input, p.channels_last, af.mean, af.scale, af.shift, shared ? 0 : C);
}

void channel_norm_cpu(const Tensor& out, const Tensor& input, const ChannelNormParams& p) {
  visit_dtype(input.dtype(), [&]<typename S>(std::type_identity<S>) {
    if constexpr (cpu::kIsFloating<S>) channel_norm_typed<S>(out, input, p);
    else LG_ASSERT(false, "normalisation kernel reached with ", input.dtype());
  });
}

}  // namespace

void register_channel_norm_kernels(dispatch::KernelTable& table) {
  table.set<dispatch::OpId::batch_norm>(DeviceType::CPU, channel_norm_cpu, "channel_norm_cpu");
  table.set<dispatch::OpId::group_norm>(DeviceType::CPU, channel_norm_cpu, "channel_norm_cpu");
  table.set<dispatch::OpId::instance_norm>(DeviceType::CPU, channel_norm_cpu, "channel_norm_cpu");
}

}  // namespace lg

// Upsampling on CPU: one separable kernel for nearest, linear and cubic taps, 2-D as 3-D.
// NHWC: one output pixel at a time; each tap adds a whole channel run (vectorised over C).
// NCHW: one channel plane at a time, taps walked inside the plane. With a single tap per dim
// (nearest) values are copied unchanged, so integer dtypes are exact.
#include <vector>

#include "cpu/avx2_target.h"
#include "cpu/elementwise.h"
#include "cpu/parallel.h"
#include "cpu/register.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::InterpTaps;

struct Geometry {
  std::array<int64_t, 5> in{}, xs{}, out{}, os{};
  Geometry(const Tensor& x, const Tensor& o) {
    for (int i = 0; i < 5; ++i) {
      in[i] = x.size(i);
      xs[i] = x.stride(i);
      out[i] = o.size(i);
      os[i] = o.stride(i);
    }
  }
};

// Per-dim taps as input offsets (index * stride) and compute-type weights.
template <typename C>
struct DimTaps {
  int taps = 1;
  std::vector<int64_t> offset;
  std::vector<C> weight;
  DimTaps(const InterpTaps& t, int dim, int64_t stride) : taps(t.taps[dim]) {
    for (int64_t i : t.index[dim]) offset.push_back(i * stride);
    for (double w : t.weight[dim]) weight.push_back(static_cast<C>(w));
  }
};

// h[ow] = the W taps of output column ow over the input row src, for ow < OW. TAPS is the tap
// count when known at compile time (1, 2, 4), 0 for tw.taps at run time.
template <int TAPS, typename C, typename S>
void interpolate_row(C* h, const S* src, const DimTaps<C>& tw, int64_t OW) {
  const int taps = TAPS > 0 ? TAPS : tw.taps;
  const int64_t* off = tw.offset.data();
  const C* wt = tw.weight.data();
  for (int64_t ow = 0; ow < OW; ++ow) {
    C v = 0;
    for (int e = 0; e < taps; ++e) v += wt[ow * taps + e] * static_cast<C>(src[off[ow * taps + e]]);
    h[ow] = v;
  }
}

// Input rows interpolated along W, kept for the next output rows: upsampling 2x, each input row
// serves about four output rows (two vertical taps, two rows per input row), so each is
// interpolated once instead of four times. Round-robin slots; a row is used right after it is
// looked up, so evicting it later cannot hurt.
template <typename C, typename S>
class InterpolatedRows {
 public:
  InterpolatedRows(const DimTaps<C>& tw, int64_t OW, int slots)
      : tw_(tw), ow_(OW), keys_(static_cast<size_t>(slots), nullptr), rows_(static_cast<size_t>(slots * OW)) {}
  const C* get(const S* src) {
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] == src) return rows_.data() + i * ow_;
    const size_t slot = next_++ % keys_.size();
    C* h = rows_.data() + slot * ow_;
    switch (tw_.taps) {
      case 1: interpolate_row<1>(h, src, tw_, ow_); break;
      case 2: interpolate_row<2>(h, src, tw_, ow_); break;
      case 4: interpolate_row<4>(h, src, tw_, ow_); break;
      default: interpolate_row<0>(h, src, tw_, ow_); break;
    }
    keys_[slot] = src;
    return h;
  }
  void clear() { std::fill(keys_.begin(), keys_.end(), nullptr); }  // a new plane

 private:
  const DimTaps<C>& tw_;
  int64_t ow_;
  std::vector<const S*> keys_;
  std::vector<C> rows_;
  size_t next_ = 0;
};

// One instantiation per layout (NHWC: channels-last output), so that each path is compiled on
// its own: reworking the NCHW loop made the NHWC one, then in the same function, 20 % slower;
// placement-stable for the same reason.
template <typename S, bool NHWC>
[[LG_PLACEMENT_STABLE]] void interp_typed(const Tensor& out, const Tensor& input, const InterpTaps& t) {
  using C = cpu::ComputeType<S>;
  const Geometry g(input, out);
  const S* x = input.data_ptr<S>();
  S* o = out.data_ptr<S>();
  const DimTaps<C> td(t, 0, g.xs[2]), th(t, 1, g.xs[3]), tw(t, 2, g.xs[4]);
  const bool copy_only = td.taps == 1 && th.taps == 1 && tw.taps == 1;
  const int64_t N = g.in[0], Ch = g.in[1], OD = g.out[2], OH = g.out[3], OW = g.out[4];
  const int64_t P = OD * OH * OW, xc = g.xs[1];
  if constexpr (NHWC) {
    cpu::parallel_for(N * P, std::max<int64_t>(1, 4096 / std::max<int64_t>(Ch, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<C> acc(static_cast<size_t>(Ch));
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / P, p = r % P, od = p / (OH * OW), oh = p / OW % OH, ow = p % OW;
        S* dst = o + n * g.os[0] + od * g.os[2] + oh * g.os[3] + ow * g.os[4];  // channel stride 1
        const S* base = x + n * g.xs[0];
        if (copy_only) {
          const S* src = base + td.offset[od] + th.offset[oh] + tw.offset[ow];
          for (int64_t c = 0; c < Ch; ++c) dst[c] = src[c * xc];
          continue;
        }
        std::fill(acc.begin(), acc.end(), C(0));
        for (int a = 0; a < td.taps; ++a)
          for (int b = 0; b < th.taps; ++b)
            for (int e = 0; e < tw.taps; ++e) {
              const C w = td.weight[od * td.taps + a] * th.weight[oh * th.taps + b] * tw.weight[ow * tw.taps + e];
              const S* src = base + td.offset[od * td.taps + a] + th.offset[oh * th.taps + b] + tw.offset[ow * tw.taps + e];
              if (xc == 1)
                for (int64_t c = 0; c < Ch; ++c) acc[c] += w * static_cast<C>(src[c]);
              else
                for (int64_t c = 0; c < Ch; ++c) acc[c] += w * static_cast<C>(src[c * xc]);
            }
        for (int64_t c = 0; c < Ch; ++c) dst[c] = static_cast<S>(acc[c]);
      }
    });
    return;
  }
  cpu::parallel_for(N * Ch, std::max<int64_t>(1, 4096 / std::max<int64_t>(P, 1)), [&](int64_t q0, int64_t q1) {
    std::vector<C> acc(static_cast<size_t>(OW));
    InterpolatedRows<C, S> rows(tw, OW, 2 * td.taps * th.taps);
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / Ch, c = q % Ch;
      const S* plane = x + n * g.xs[0] + c * xc;
      S* dst = o + n * g.os[0] + c * g.os[1];
      rows.clear();
      for (int64_t od = 0; od < OD; ++od)
        for (int64_t oh = 0; oh < OH; ++oh) {
          S* row = dst + od * g.os[2] + oh * g.os[3];
          if (copy_only) {
            const S* src = plane + td.offset[od] + th.offset[oh];
            for (int64_t ow = 0; ow < OW; ++ow) row[ow * g.os[4]] = src[tw.offset[ow]];
            continue;
          }
          // Each input row the (d, h) taps name, interpolated along W (once per plane, in a
          // loop of compile-time tap count) and added with its weight.
          std::fill(acc.begin(), acc.end(), C(0));
          for (int a = 0; a < td.taps; ++a)
            for (int b = 0; b < th.taps; ++b) {
              const C wdh = td.weight[od * td.taps + a] * th.weight[oh * th.taps + b];
              const C* h = rows.get(plane + td.offset[od * td.taps + a] + th.offset[oh * th.taps + b]);
              for (int64_t ow = 0; ow < OW; ++ow) acc[ow] += wdh * h[ow];
            }
          for (int64_t ow = 0; ow < OW; ++ow) row[ow * g.os[4]] = static_cast<S>(acc[ow]);
        }
    }
  });
}

void interp_cpu(const Tensor& out, const Tensor& input, const InterpTaps& taps) {
  visit_dtype(out.dtype(), [&]<typename S>(std::type_identity<S>) {
    if constexpr (std::is_same_v<S, bool>) LG_ASSERT(false, "upsampling of bool is rejected by the infer step");
    else if (taps.channels_last) interp_typed<S, true>(out, input, taps);
    else interp_typed<S, false>(out, input, taps);
  });
}

}  // namespace

void register_upsample_kernels(dispatch::KernelTable& table) {
  using dispatch::OpId;
  table.set<OpId::upsample_nearest2d>(DeviceType::CPU, interp_cpu, "upsample_separable_cpu");
  table.set<OpId::upsample_nearest3d>(DeviceType::CPU, interp_cpu, "upsample_separable_cpu");
  table.set<OpId::upsample_bilinear2d>(DeviceType::CPU, interp_cpu, "upsample_separable_cpu");
  table.set<OpId::upsample_trilinear3d>(DeviceType::CPU, interp_cpu, "upsample_separable_cpu");
  table.set<OpId::upsample_bicubic2d>(DeviceType::CPU, interp_cpu, "upsample_separable_cpu");
}

}  // namespace lg

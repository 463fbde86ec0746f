// layer_norm on CPU: per leading index, mean and variance over the trailing dims, then
// y = (x - mean) * rstd * weight + bias. The trailing dims are walked in the input's memory
// order (largest stride outside), so NHWC and NCHW data are both read sequentially.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/parallel.h"
#include "cpu/register.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::LayerNormParams;

// Offsets of x, y and the (contiguous) weight for each element of the trailing block, in the
// walk order; computed once per call and shared by every leading index.
struct TrailingWalk {
  std::vector<int64_t> x, y, w;
};

TrailingWalk trailing_walk(const Tensor& in, const Tensor& out, int64_t k) {
  const int64_t r = in.dim();
  std::vector<int64_t> dims(static_cast<size_t>(k));
  std::iota(dims.begin(), dims.end(), r - k);
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return in.stride(a) > in.stride(b); });
  std::vector<int64_t> wstride(static_cast<size_t>(r), 0);
  for (int64_t d = r - 1, s = 1; d >= r - k; --d) {
    wstride[d] = s;
    s *= in.size(d);
  }
  TrailingWalk walk;
  std::vector<int64_t> idx(static_cast<size_t>(k), 0);
  int64_t total = 1;
  for (int64_t d : dims) total *= in.size(d);
  for (int64_t e = 0; e < total; ++e) {
    int64_t ox = 0, oy = 0, ow = 0;
    for (int64_t j = 0; j < k; ++j) {
      ox += idx[j] * in.stride(dims[j]);
      oy += idx[j] * out.stride(dims[j]);
      ow += idx[j] * wstride[dims[j]];
    }
    walk.x.push_back(ox);
    walk.y.push_back(oy);
    walk.w.push_back(ow);
    for (int64_t j = k - 1; j >= 0; --j) {
      if (++idx[j] < in.size(dims[j])) break;
      idx[j] = 0;
    }
  }
  return walk;
}

template <typename S>
void layer_norm_typed(const Tensor& out, const Tensor& in, const LayerNormParams& p) {
  using C = cpu::ComputeType<S>;
  const int64_t r = in.dim(), k = p.normalized_dims;
  int64_t M = 1;
  for (int64_t d = 0; d < r - k; ++d) M *= in.size(d);
  const TrailingWalk walk = trailing_walk(in, out, k);
  const int64_t K = static_cast<int64_t>(walk.x.size());
  if (M == 0 || K == 0) return;
  const S* x = in.data_ptr<S>();
  S* y = out.data_ptr<S>();
  const S* w = p.weight.defined() ? p.weight.data_ptr<S>() : nullptr;
  const S* b = p.bias.defined() ? p.bias.data_ptr<S>() : nullptr;
  cpu::parallel_for(M, std::max<int64_t>(1, 4096 / K), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      int64_t bx = 0, by = 0;
      for (int64_t d = r - k - 1, rest = m; d >= 0; --d) {
        bx += rest % in.size(d) * in.stride(d);
        by += rest % in.size(d) * out.stride(d);
        rest /= in.size(d);
      }
      double sum = 0;
      for (int64_t e = 0; e < K; ++e) sum += static_cast<double>(static_cast<C>(x[bx + walk.x[e]]));
      const double mean = sum / K;
      double sq = 0;
      for (int64_t e = 0; e < K; ++e) {
        const double dlt = static_cast<double>(static_cast<C>(x[bx + walk.x[e]])) - mean;
        sq += dlt * dlt;
      }
      const C rstd = static_cast<C>(1.0 / std::sqrt(sq / K + p.eps));
      const C mu = static_cast<C>(mean);
      for (int64_t e = 0; e < K; ++e) {
        C v = (static_cast<C>(x[bx + walk.x[e]]) - mu) * rstd;
        if (w) v *= static_cast<C>(w[walk.w[e]]);
        if (b) v += static_cast<C>(b[walk.w[e]]);
        y[by + walk.y[e]] = static_cast<S>(v);
      }
    }
  });
}

void layer_norm_cpu(const Tensor& out, const Tensor& in, const LayerNormParams& p) {
  visit_dtype(in.dtype(), [&]<typename S>(std::type_identity<S>) {
    if constexpr (cpu::kIsFloating<S>) layer_norm_typed<S>(out, in, p);
    else LG_ASSERT(false, "layer_norm kernel reached with ", in.dtype());
  });
}

}  // namespace

void register_layer_norm_kernels(dispatch::KernelTable& table) {
  table.set<dispatch::OpId::layer_norm>(DeviceType::CPU, layer_norm_cpu, "layer_norm_cpu");
}

}  // namespace lg

// softmax and log_softmax on CPU, in three passes (max, sum of exponentials, write). When the
// softmax dim is innermost in memory (channels of an NHWC tensor) each line is a unit-stride
// run; otherwise a run of lines along the innermost other dim (W of NCHW) is processed at
// once, so the inner loop stays unit-stride either way. Accumulates in float (double for
// float64), as PyTorch does.
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/parallel.h"
#include "cpu/register.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::SoftmaxParams;

template <typename S>
void softmax_typed(const Tensor& out, const Tensor& input, const SoftmaxParams& p) {
  using C = cpu::ComputeType<S>;
  const S* x = input.data_ptr<S>();
  S* o = out.data_ptr<S>();
  const int64_t rank = input.dim();
  if (rank == 0) {  // a single element: softmax 1, log_softmax 0
    o[0] = static_cast<S>(p.log ? C(0) : C(1));
    return;
  }
  const int64_t dim = p.dim, n = input.size(dim), xs = input.stride(dim), os = out.stride(dim);
  // The other dims of size > 1, outermost first in the input's memory order; the innermost
  // of them is the vector run when the softmax dim is not innermost itself.
  std::vector<int64_t> others;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim && input.size(d) != 1) others.push_back(d);
  std::stable_sort(others.begin(), others.end(), [&](int64_t a, int64_t b) { return input.stride(a) > input.stride(b); });
  int64_t run = 1, run_xs = 0, run_os = 0;
  if (!others.empty() && input.stride(others.back()) < xs) {
    run = input.size(others.back());
    run_xs = input.stride(others.back());
    run_os = out.stride(others.back());
    others.pop_back();
  }
  int64_t groups = 1;
  for (int64_t d : others) groups *= input.size(d);
  cpu::parallel_for(groups, std::max<int64_t>(1, 16384 / std::max<int64_t>(n * run, 1)), [&](int64_t g0, int64_t g1) {
    std::vector<C> mx(static_cast<size_t>(run)), sum(static_cast<size_t>(run));
    for (int64_t g = g0; g < g1; ++g) {
      int64_t rem = g, xoff = 0, ooff = 0;
      for (size_t k = others.size(); k-- > 0;) {
        const int64_t d = others[k], i = rem % input.size(d);
        rem /= input.size(d);
        xoff += i * input.stride(d);
        ooff += i * out.stride(d);
      }
      const S* xb = x + xoff;
      S* ob = o + ooff;
      std::fill(mx.begin(), mx.end(), -std::numeric_limits<C>::infinity());
      std::fill(sum.begin(), sum.end(), C(0));
      for (int64_t j = 0; j < n; ++j)
        for (int64_t r = 0; r < run; ++r) mx[r] = std::max(mx[r], static_cast<C>(xb[j * xs + r * run_xs]));
      // A line of -inf only: subtract 0 instead, so the result is NaN-free like PyTorch's.
      for (int64_t r = 0; r < run; ++r)
        if (std::isinf(mx[r]) && mx[r] < 0) mx[r] = 0;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t r = 0; r < run; ++r) sum[r] += std::exp(static_cast<C>(xb[j * xs + r * run_xs]) - mx[r]);
      if (p.log) {
        // (x - max) - log(sum): subtracting the small log last keeps float32 precise near 1e3.
        for (int64_t r = 0; r < run; ++r) sum[r] = std::log(sum[r]);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t r = 0; r < run; ++r)
            ob[j * os + r * run_os] = static_cast<S>((static_cast<C>(xb[j * xs + r * run_xs]) - mx[r]) - sum[r]);
      } else {
        for (int64_t r = 0; r < run; ++r) sum[r] = C(1) / sum[r];
        for (int64_t j = 0; j < n; ++j)
          for (int64_t r = 0; r < run; ++r)
            ob[j * os + r * run_os] = static_cast<S>(std::exp(static_cast<C>(xb[j * xs + r * run_xs]) - mx[r]) * sum[r]);
      }
    }
  });
}

void softmax_cpu(const Tensor& out, const Tensor& input, const SoftmaxParams& p) {
  visit_dtype(out.dtype(), [&]<typename S>(std::type_identity<S>) {
    if constexpr (cpu::kIsFloating<S>) softmax_typed<S>(out, input, p);
    else LG_ASSERT(false, "softmax of a non-floating dtype is rejected by the infer step");
  });
}

}  // namespace

void register_softmax_kernels(dispatch::KernelTable& table) {
  table.set<dispatch::OpId::softmax>(DeviceType::CPU, softmax_cpu, "softmax_cpu");
  table.set<dispatch::OpId::log_softmax>(DeviceType::CPU, softmax_cpu, "softmax_cpu");
}

}  // namespace lg

// sum, mean, amax, amin on CPU. The input's dims are taken in its memory order; when the
// innermost one is kept (channels of an NHWC tensor reduced over H and W), a whole run of
// outputs accumulates at once, vectorised over that dim; when it is reduced (NCHW over H and
// W), each output reduces its elements with the inner loop over unit stride. Floating sums
// accumulate in double, integer sums in uint64 (wrapping as PyTorch's do).
#include <cmath>
#include <numeric>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/parallel.h"
#include "cpu/register.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::ReduceKind;
using dispatch::ReduceParams;

struct Axis {
  int64_t size, in_stride, out_stride;
};

// The accumulator of one output element.
template <typename S>
struct Acc {
  using C = cpu::ComputeType<S>;
  using Sum = std::conditional_t<cpu::kIsFloating<S>, double, uint64_t>;
  static Sum to_sum(S v) {
    if constexpr (cpu::kIsFloating<S>) return static_cast<double>(static_cast<C>(v));
    else return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
  static S from_sum(Sum v) {
    if constexpr (cpu::kIsFloating<S>) return static_cast<S>(static_cast<C>(v));
    else return static_cast<S>(static_cast<int64_t>(v));
  }
  // max / min with NaN winning.
  static C pick(C best, C v, bool max) {
    if constexpr (cpu::kIsFloating<S>)
      if (std::isnan(v) || std::isnan(best)) return std::isnan(best) ? best : v;
    return max ? (v > best ? v : best) : (v < best ? v : best);
  }
};

// Calls fn(offset) for every position of `axes` (odometer order, the last axis fastest).
template <typename Fn>
void for_each_offset(const std::vector<Axis>& axes, Fn&& fn) {
  std::vector<int64_t> idx(axes.size(), 0);
  for (const Axis& a : axes)
    if (a.size == 0) return;
  int64_t off = 0;
  while (true) {
    fn(off);
    size_t k = axes.size();
    while (k > 0) {
      --k;
      if (++idx[k] < axes[k].size) {
        off += axes[k].in_stride;
        break;
      }
      off -= (axes[k].size - 1) * axes[k].in_stride;
      idx[k] = 0;
      if (k == 0) return;
    }
    if (axes.empty()) return;
  }
}

template <typename S>
void reduce_typed(const Tensor& out, const Tensor& input, const ReduceParams& p) {
  using A = Acc<S>;
  using C = typename A::C;
  const S* x = input.data_ptr<S>();
  S* o = out.data_ptr<S>();
  // Dims of size > 1, outermost first in the input's memory order, split into kept and reduced.
  std::vector<int64_t> order;
  for (int64_t d = 0; d < input.dim(); ++d)
    if (input.size(d) != 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return input.stride(a) > input.stride(b); });
  std::vector<Axis> kept, reduced;
  int64_t count = 1;
  for (int64_t d : order) {
    const Axis a{input.size(d), input.stride(d), out.stride(d)};
    if (out.size(d) == 1) {
      reduced.push_back(a);
      count *= a.size;
    } else {
      kept.push_back(a);
    }
  }
  const bool is_max = p.kind == ReduceKind::Max, is_sum = p.kind == ReduceKind::Sum || p.kind == ReduceKind::Mean;
  auto finish = [&](typename A::Sum s) {
    if (p.kind == ReduceKind::Mean) {
      if constexpr (cpu::kIsFloating<S>) return static_cast<S>(static_cast<C>(static_cast<double>(s) / static_cast<double>(count)));
    }
    return A::from_sum(s);
  };
  // Vector mode: the innermost input dim is kept; its run of outputs accumulates together.
  // Scalar mode: the innermost input dim is reduced; it becomes the tight loop of each output.
  const bool vector_mode = !order.empty() && out.size(order.back()) != 1;
  const Axis inner = vector_mode ? kept.back() : Axis{1, 0, 0};
  const Axis run = !vector_mode && !reduced.empty() ? reduced.back() : Axis{1, 0, 0};
  if (vector_mode) kept.pop_back();
  else if (!reduced.empty()) reduced.pop_back();
  int64_t groups = 1;
  for (const Axis& a : kept) groups *= a.size;
  const int64_t L = inner.size, work = std::max<int64_t>(count * L, 1);
  cpu::parallel_for(groups, std::max<int64_t>(1, 16384 / work), [&](int64_t g0, int64_t g1) {
    std::vector<typename A::Sum> sums(static_cast<size_t>(L));
    std::vector<C> best(static_cast<size_t>(L));
    for (int64_t g = g0; g < g1; ++g) {
      int64_t rem = g, xoff = 0, ooff = 0;
      for (size_t k = kept.size(); k-- > 0;) {
        const int64_t i = rem % kept[k].size;
        rem /= kept[k].size;
        xoff += i * kept[k].in_stride;
        ooff += i * kept[k].out_stride;
      }
      const S* base = x + xoff;
      if (is_sum) {
        std::fill(sums.begin(), sums.end(), typename A::Sum(0));
        for_each_offset(reduced, [&](int64_t off) {
          for (int64_t j = 0; j < run.size; ++j) {
            const S* src = base + off + j * run.in_stride;
            for (int64_t l = 0; l < L; ++l) sums[static_cast<size_t>(l)] += A::to_sum(src[l * inner.in_stride]);
          }
        });
        for (int64_t l = 0; l < L; ++l) o[ooff + l * inner.out_stride] = finish(sums[static_cast<size_t>(l)]);
      } else {
        bool first = true;
        for_each_offset(reduced, [&](int64_t off) {
          for (int64_t j = 0; j < run.size; ++j) {
            const S* src = base + off + j * run.in_stride;
            for (int64_t l = 0; l < L; ++l) {
              const C v = static_cast<C>(src[l * inner.in_stride]);
              best[static_cast<size_t>(l)] = first ? v : A::pick(best[static_cast<size_t>(l)], v, is_max);
            }
            first = false;
          }
        });
        for (int64_t l = 0; l < L; ++l) o[ooff + l * inner.out_stride] = static_cast<S>(best[static_cast<size_t>(l)]);
      }
    }
  });
}

void reduce_cpu(const Tensor& out, const Tensor& input, const ReduceParams& p) {
  visit_dtype(out.dtype(), [&]<typename S>(std::type_identity<S>) { reduce_typed<S>(out, input, p); });
}

}  // namespace

void register_reduce_kernels(dispatch::KernelTable& table) {
  using dispatch::OpId;
  table.set<OpId::sum>(DeviceType::CPU, reduce_cpu, "reduce_cpu");
  table.set<OpId::mean>(DeviceType::CPU, reduce_cpu, "reduce_cpu");
  table.set<OpId::amax>(DeviceType::CPU, reduce_cpu, "reduce_cpu");
  table.set<OpId::amin>(DeviceType::CPU, reduce_cpu, "reduce_cpu");
}

}  // namespace lg

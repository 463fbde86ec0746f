// pad on CPU, every mode: a gather through per-dim source maps, walked in out's memory order
// (so channels are the inner loop of an NHWC output and W of an NCHW one). Rows whose source
// is the identity over unit strides are copied as blocks.
#include <algorithm>
#include <numeric>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/parallel.h"
#include "cpu/register.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::PadMap;

template <typename S>
void pad_typed(const Tensor& out, const Tensor& input, const PadMap& map) {
  const int64_t rank = out.dim();
  const S fill = static_cast<S>(static_cast<cpu::ComputeType<S>>(map.value));
  const S* x = input.data_ptr<S>();
  S* o = out.data_ptr<S>();
  if (rank == 0) {
    o[0] = x[0];
    return;
  }
  // Dims outermost first in out's memory order; the innermost one is the row.
  std::vector<int64_t> order(static_cast<size_t>(rank));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return out.stride(a) > out.stride(b); });
  const int64_t inner = order.back();
  const int64_t n_inner = out.size(inner), xs_in = input.stride(inner), os_in = out.stride(inner);
  const std::vector<int64_t>& src_in = map.source[static_cast<size_t>(inner)];
  bool identity = xs_in == 1 && os_in == 1 && input.size(inner) == n_inner;
  for (int64_t i = 0; identity && i < n_inner; ++i) identity = src_in[static_cast<size_t>(i)] == i;
  const int64_t rows = out.numel() / n_inner;
  cpu::parallel_for(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(n_inner, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      // Decode row r into the outer dims (innermost outer dim fastest).
      int64_t rem = r, xoff = 0, ooff = 0;
      bool filled = false;
      for (int64_t k = rank - 2; k >= 0; --k) {
        const int64_t d = order[static_cast<size_t>(k)];
        const int64_t i = rem % out.size(d);
        rem /= out.size(d);
        const int64_t src = map.source[static_cast<size_t>(d)][static_cast<size_t>(i)];
        filled |= src < 0;
        xoff += src * input.stride(d);
        ooff += i * out.stride(d);
      }
      S* dst = o + ooff;
      if (filled) {
        for (int64_t i = 0; i < n_inner; ++i) dst[i * os_in] = fill;
      } else if (identity) {
        std::copy(x + xoff, x + xoff + n_inner, dst);
      } else {
        const S* src = x + xoff;
        for (int64_t i = 0; i < n_inner; ++i) {
          const int64_t s = src_in[static_cast<size_t>(i)];
          dst[i * os_in] = s < 0 ? fill : src[s * xs_in];
        }
      }
    }
  });
}

void pad_cpu(const Tensor& out, const Tensor& input, const PadMap& map) {
  visit_dtype(out.dtype(), [&]<typename S>(std::type_identity<S>) { pad_typed<S>(out, input, map); });
}

}  // namespace

void register_pad_kernels(dispatch::KernelTable& table) {
  table.set<dispatch::OpId::pad>(DeviceType::CPU, pad_cpu, "pad_gather_cpu");
}

}  // namespace lg

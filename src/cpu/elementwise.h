// The CPU loop behind every pointwise kernel: one output and N inputs of the output's sizes
// (stride 0 where broadcast), walked in the output's memory order. Dims of size 1 are dropped
// and dims that stay contiguous for every operand are merged, so a dense NHWC or NCHW operation
// becomes one long row with unit strides -- the same loop serves both layouts at full speed.
// Rows are split across OpenMP threads when there is enough work.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

#include <omp.h>

#include <layoutguard/dtype.h>
#include <layoutguard/tensor.h>

#include "cpu/cast_row.h"

namespace lg::cpu {

// Pointers and strides (in elements) of one row of out and the inputs.
template <size_t N>
struct Row {
  std::array<char*, N + 1> ptr;  // [0] out, [1..N] inputs
  std::array<int64_t, N + 1> stride;
  int64_t n;
};

// Calls row_fn(Row<N>) for every row of out's iteration space.
template <size_t N, typename RowFn>
void for_each_row(const Tensor& out, const std::array<const Tensor*, N>& in, RowFn&& row_fn) {
  const int64_t ndim = out.dim();
  if (out.numel() == 0) return;
  std::array<const Tensor*, N + 1> ops{};
  ops[0] = &out;
  for (size_t k = 0; k < N; ++k) ops[k + 1] = in[k];

  // Dims in the output's memory order, outermost first (larger stride outside; ties keep the
  // logical order), without size-1 dims.
  std::vector<int64_t> order;
  for (int64_t d = 0; d < ndim; ++d)
    if (out.size(d) != 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return out.stride(a) > out.stride(b); });
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, N + 1>> strides;
  for (int64_t d : order) {
    std::array<int64_t, N + 1> s{};
    for (size_t k = 0; k <= N; ++k) s[k] = ops[k]->stride(d);
    if (!sizes.empty()) {
      // Merge into the previous (outer) dim when every operand steps evenly across both.
      bool mergeable = true;
      for (size_t k = 0; k <= N; ++k) mergeable &= strides.back()[k] == s[k] * out.size(d);
      if (mergeable) {
        sizes.back() *= out.size(d);
        strides.back() = s;
        continue;
      }
    }
    sizes.push_back(out.size(d));
    strides.push_back(s);
  }
  if (sizes.empty()) {  // a single element
    sizes.push_back(1);
    strides.push_back({});
  }

  const int64_t inner = sizes.back();
  const int64_t rows = out.numel() / inner;
  std::array<char*, N + 1> base{};
  std::array<int64_t, N + 1> bytes{};
  for (size_t k = 0; k <= N; ++k) {
    base[k] = static_cast<char*>(ops[k]->data_ptr());
    bytes[k] = static_cast<int64_t>(ops[k]->itemsize());
  }
  const size_t outer_dims = sizes.size() - 1;

  auto run_rows = [&](int64_t first, int64_t last) {
    // The multi-index of row `first`, then incremented odometer-style.
    std::vector<int64_t> idx(outer_dims, 0);
    int64_t r = first;
    for (size_t d = outer_dims; d-- > 0;) {
      idx[d] = r % sizes[d];
      r /= sizes[d];
    }
    for (int64_t row = first; row < last; ++row) {
      Row<N> rw;
      for (size_t k = 0; k <= N; ++k) {
        int64_t off = 0;
        for (size_t d = 0; d < outer_dims; ++d) off += idx[d] * strides[d][k];
        rw.ptr[k] = base[k] + off * bytes[k];
        rw.stride[k] = strides.back()[k];
      }
      rw.n = inner;
      row_fn(rw);
      for (size_t d = outer_dims; d-- > 0;) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
  };

  // Threads only pay off past ~32 K elements; split whole rows, or one long row into pieces.
  constexpr int64_t kParallelGrain = 32 * 1024;
  if (out.numel() < kParallelGrain) {
    run_rows(0, rows);
  } else if (rows > 1) {
#pragma omp parallel
    {
      const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      const int64_t chunk = (rows + nt - 1) / nt;
      const int64_t first = std::min(rows, t * chunk), last = std::min(rows, first + chunk);
      if (first < last) run_rows(first, last);
    }
  } else {
    const std::array<int64_t, N + 1> s = strides.back();
#pragma omp parallel
    {
      const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      const int64_t chunk = (inner + nt - 1) / nt;
      const int64_t first = std::min(inner, t * chunk), last = std::min(inner, first + chunk);
      if (first < last) {
        Row<N> rw;
        for (size_t k = 0; k <= N; ++k) {
          rw.ptr[k] = base[k] + first * s[k] * bytes[k];
          rw.stride[k] = s[k];
        }
        rw.n = last - first;
        row_fn(rw);
      }
    }
  }
}

// The type a pointwise kernel computes in for storage type S: float for the 16-bit floats.
template <typename S>
using ComputeType = std::conditional_t<kIs16BitFloat<S>, float, S>;

template <typename T>
inline constexpr bool kIsFloating = std::is_floating_point_v<ComputeType<T>>;

}  // namespace lg::cpu

// Reference reductions and softmax in float64, written for clarity: row-major values in, row-major
// values out, every output gathered by plain loops straight from the definition. Inputs come from
// values(t) (tests/support/tensor_testing.h), so any layout of the tested tensor reduces to the
// same logical order. Dims given to these functions are already wrapped (0 <= d < rank).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace lg::testing {

enum class ReduceOp { Sum, Mean, Amax, Amin };

// Whether each dim of a rank-`rank` tensor is reduced; an empty list reduces every dim.
inline std::vector<bool> reduced_dims(size_t rank, const std::vector<int64_t>& dims) {
  std::vector<bool> reduced(rank, dims.empty());
  for (int64_t d : dims) reduced[static_cast<size_t>(d)] = true;
  return reduced;
}

// The output shape: reduced dims become 1 with keepdim, else disappear.
inline std::vector<int64_t> ref_reduced_sizes(const std::vector<int64_t>& sizes, const std::vector<int64_t>& dims,
                                              bool keepdim) {
  const std::vector<bool> reduced = reduced_dims(sizes.size(), dims);
  std::vector<int64_t> out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!reduced[d]) out.push_back(sizes[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

// sum, mean, amax or amin over dims. The output is in row-major order of the kept dims (the same
// with or without keepdim). NaN propagates through amax and amin; the mean of no elements is
// 0 / 0 = NaN; amax / amin of no elements give -inf / +inf (the ops themselves refuse them).
inline std::vector<double> ref_reduce(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                      const std::vector<int64_t>& dims, ReduceOp op) {
  const std::vector<bool> reduced = reduced_dims(sizes.size(), dims);
  const std::vector<int64_t> out_sizes = ref_reduced_sizes(sizes, dims, true);
  int64_t out_count = 1;
  for (int64_t s : out_sizes) out_count *= s;

  const double inf = std::numeric_limits<double>::infinity();
  const double start = op == ReduceOp::Amax ? -inf : op == ReduceOp::Amin ? inf : 0.0;
  std::vector<double> acc(static_cast<size_t>(out_count), start);
  std::vector<int64_t> count(static_cast<size_t>(out_count), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    // The multi-index of element i, then the row-major position of its output (reduced dims at 0).
    std::vector<int64_t> idx(sizes.size());
    for (int64_t rest = static_cast<int64_t>(i), d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      idx[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    int64_t o = 0;
    for (size_t d = 0; d < sizes.size(); ++d) o = o * out_sizes[d] + (reduced[d] ? 0 : idx[d]);
    double& a = acc[static_cast<size_t>(o)];
    const double v = x[i];
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Mean: a += v; break;
      case ReduceOp::Amax: a = std::isnan(a) || std::isnan(v) ? NAN : std::max(a, v); break;
      case ReduceOp::Amin: a = std::isnan(a) || std::isnan(v) ? NAN : std::min(a, v); break;
    }
    ++count[static_cast<size_t>(o)];
  }
  if (op == ReduceOp::Mean)
    for (size_t o = 0; o < acc.size(); ++o) acc[o] /= static_cast<double>(count[o]);
  return acc;
}

// softmax (or log_softmax with log) along dim: for each line along dim,
// exp(x - max) / sum(exp(x - max)), or x - max - log(sum(exp(x - max))).
inline std::vector<double> ref_softmax(const std::vector<double>& x, const std::vector<int64_t>& sizes, int64_t dim,
                                       bool log) {
  // Row-major element (outer, j, inner) along dim is at (outer * len + j) * inner_count + inner.
  int64_t outer_count = 1, inner_count = 1;
  for (int64_t d = 0; d < dim; ++d) outer_count *= sizes[d];
  for (size_t d = static_cast<size_t>(dim) + 1; d < sizes.size(); ++d) inner_count *= sizes[d];
  const int64_t len = sizes[dim];
  std::vector<double> out(x.size());
  for (int64_t outer = 0; outer < outer_count; ++outer)
    for (int64_t inner = 0; inner < inner_count; ++inner) {
      const auto at = [&](int64_t j) { return static_cast<size_t>((outer * len + j) * inner_count + inner); };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) max = std::max(max, x[at(j)]);
      double sum = 0;
      for (int64_t j = 0; j < len; ++j) sum += std::exp(x[at(j)] - max);
      for (int64_t j = 0; j < len; ++j)
        out[at(j)] = log ? x[at(j)] - max - std::log(sum) : std::exp(x[at(j)] - max) / sum;
    }
  return out;
}

}  // namespace lg::testing

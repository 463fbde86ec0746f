// Reference matrix products in float64, written for clarity: row-major values in, row-major
// values out, every entry a plain dot product straight from the definition. Inputs come from
// values(t) (tests/support/tensor_testing.h), so a transposed, sliced or expanded operand reduces
// to the same logical order as a contiguous one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace lg::testing {

// (n, k) @ (k, m) -> (n, m): out[i][j] = sum over p of a[i][p] * b[p][j]. k == 0 gives zeros.
inline std::vector<double> ref_mm(const std::vector<double>& a, const std::vector<double>& b, int64_t n, int64_t k,
                                  int64_t m) {
  std::vector<double> out(static_cast<size_t>(n * m), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double dot = 0;
      for (int64_t p = 0; p < k; ++p) dot += a[i * k + p] * b[p * m + j];
      out[i * m + j] = dot;
    }
  return out;
}

// (batch, n, k) @ (batch, k, m) -> (batch, n, m): one ref_mm per batch entry.
inline std::vector<double> ref_bmm(const std::vector<double>& a, const std::vector<double>& b, int64_t batch, int64_t n,
                                   int64_t k, int64_t m) {
  std::vector<double> out;
  for (int64_t i = 0; i < batch; ++i) {
    const std::vector<double> ai(a.begin() + i * n * k, a.begin() + (i + 1) * n * k);
    const std::vector<double> bi(b.begin() + i * k * m, b.begin() + (i + 1) * k * m);
    const std::vector<double> oi = ref_mm(ai, bi, n, k, m);
    out.insert(out.end(), oi.begin(), oi.end());
  }
  return out;
}

// beta * self + alpha * (a @ b), with self already broadcast to (n, m). beta == 0 ignores self
// altogether, so NaN or inf in it does not reach the result.
inline std::vector<double> ref_addmm(const std::vector<double>& self, const std::vector<double>& a,
                                     const std::vector<double>& b, int64_t n, int64_t k, int64_t m, double beta,
                                     double alpha) {
  std::vector<double> out = ref_mm(a, b, n, k, m);
  for (size_t i = 0; i < out.size(); ++i) out[i] = (beta == 0 ? 0.0 : beta * self[i]) + alpha * out[i];
  return out;
}

// input (rows, in) @ weight^T + bias, weight (out, in), bias (out) or empty for none. The leading
// dims of an (*, in) input fold into rows: the row-major order is the same.
inline std::vector<double> ref_linear(const std::vector<double>& x, int64_t rows, int64_t in,
                                      const std::vector<double>& weight, int64_t out_features,
                                      const std::vector<double>& bias) {
  std::vector<double> out(static_cast<size_t>(rows * out_features));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out_features; ++o) {
      double dot = bias.empty() ? 0.0 : bias[o];
      for (int64_t i = 0; i < in; ++i) dot += x[r * in + i] * weight[o * in + i];
      out[r * out_features + o] = dot;
    }
  return out;
}

// The result of ref_matmul: values in row-major order and the output shape.
struct MatmulRef {
  std::vector<double> out;
  std::vector<int64_t> sizes;
};

// torch.matmul for operands of rank >= 1. A 1-D left operand (k) acts as the matrix (1, k), a
// 1-D right operand (k) as (k, 1); the batch dims (all but the last two) broadcast right-aligned;
// the dims added for 1-D operands are left out of the result shape, which does not change the
// row-major order of the values.
inline MatmulRef ref_matmul(const std::vector<double>& a, const std::vector<int64_t>& a_sizes,
                            const std::vector<double>& b, const std::vector<int64_t>& b_sizes) {
  const bool a_vec = a_sizes.size() == 1, b_vec = b_sizes.size() == 1;
  const std::vector<int64_t> a_batch(a_sizes.begin(), a_sizes.end() - (a_vec ? 1 : 2));
  const std::vector<int64_t> b_batch(b_sizes.begin(), b_sizes.end() - (b_vec ? 1 : 2));
  const int64_t n = a_vec ? 1 : a_sizes[a_sizes.size() - 2], k = a_sizes.back();
  const int64_t m = b_vec ? 1 : b_sizes.back();
  if ((b_vec ? b_sizes[0] : b_sizes[b_sizes.size() - 2]) != k) throw std::invalid_argument("ref_matmul: inner dims");

  // Broadcast batch shape, right-aligned; a missing dim counts as size 1.
  const size_t rank = std::max(a_batch.size(), b_batch.size());
  const auto size_from_right = [](const std::vector<int64_t>& s, size_t r) {  // r-th dim from the right
    return r < s.size() ? s[s.size() - 1 - r] : int64_t{1};
  };
  std::vector<int64_t> batch(rank);
  for (size_t r = 0; r < rank; ++r) {
    const int64_t sa = size_from_right(a_batch, r), sb = size_from_right(b_batch, r);
    if (sa != sb && sa != 1 && sb != 1) throw std::invalid_argument("ref_matmul: batch dims");
    batch[rank - 1 - r] = sa == 1 ? sb : sa;
  }
  int64_t batch_count = 1;
  for (int64_t s : batch) batch_count *= s;

  MatmulRef r;
  r.sizes = batch;
  if (!a_vec) r.sizes.push_back(n);
  if (!b_vec) r.sizes.push_back(m);
  for (int64_t flat = 0; flat < batch_count; ++flat) {
    // The batch index of this matrix, then the matching row-major matrix number in each operand
    // (index 0 along its broadcast size-1 dims).
    std::vector<int64_t> idx(rank);
    for (int64_t rest = flat, d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      idx[d] = rest % batch[d];
      rest /= batch[d];
    }
    const auto matrix_number = [&](const std::vector<int64_t>& s) {
      int64_t number = 0;
      for (size_t d = 0; d < s.size(); ++d) {
        const int64_t i = idx[rank - s.size() + d];
        number = number * s[d] + (s[d] == 1 ? 0 : i);
      }
      return number;
    };
    const int64_t ma = matrix_number(a_batch), mb = matrix_number(b_batch);
    const std::vector<double> am(a.begin() + ma * n * k, a.begin() + (ma + 1) * n * k);
    const std::vector<double> bm(b.begin() + mb * k * m, b.begin() + (mb + 1) * k * m);
    const std::vector<double> om = ref_mm(am, bm, n, k, m);
    r.out.insert(r.out.end(), om.begin(), om.end());
  }
  return r;
}

}  // namespace lg::testing

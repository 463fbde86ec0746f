// Reference normalisations in float64, written for clarity: row-major values in, row-major
// values out, each statistic gathered by plain loops straight from the definition. Inputs come
// from values(t) (tests/support/tensor_testing.h), so any layout of the tested tensor reduces to
// the same logical order. Absent weight, bias or running statistics are empty vectors.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "support/tensor_testing.h"

namespace lg::testing {

// The result of a normalisation that may update running statistics (empty when none given).
struct NormRef {
  std::vector<double> out, running_mean, running_var;
};

// An (N, C, ...) shape as N, C and the product of the remaining (spatial) sizes, so that the
// row-major element (n, c, s) is at (n * C + c) * S + s.
struct NCS {
  int64_t n, c, s;
};
inline NCS ncs(const std::vector<int64_t>& sizes) {
  int64_t s = 1;
  for (size_t d = 2; d < sizes.size(); ++d) s *= sizes[d];
  return {sizes[0], sizes[1], s};
}

// Mean and biased (divide by count) variance; unbiased() divides by count - 1 instead.
struct Moments {
  double mean = 0, var = 0;
  int64_t count = 0;
  double unbiased() const { return var * static_cast<double>(count) / static_cast<double>(count - 1); }
};
inline Moments moments(const std::vector<double>& v) {
  Moments m;
  m.count = static_cast<int64_t>(v.size());
  for (double e : v) m.mean += e;
  m.mean /= static_cast<double>(m.count);
  for (double e : v) m.var += (e - m.mean) * (e - m.mean);
  m.var /= static_cast<double>(m.count);
  return m;
}

// (x - mean) / sqrt(var + eps) * w[k] + b[k], with w = 1 and b = 0 when absent.
inline double normalise(double x, double mean, double var, double eps, const std::vector<double>& w,
                        const std::vector<double>& b, size_t k) {
  const double xhat = (x - mean) / std::sqrt(var + eps);
  return xhat * (w.empty() ? 1.0 : w[k]) + (b.empty() ? 0.0 : b[k]);
}

// running = (1 - momentum) * running + momentum * batch, element by element.
inline std::vector<double> blend(const std::vector<double>& running, const std::vector<double>& batch, double momentum) {
  std::vector<double> out(running.size());
  for (size_t i = 0; i < running.size(); ++i) out[i] = (1 - momentum) * running[i] + momentum * batch[i];
  return out;
}

// batch_norm: statistics per channel over N and the spatial dims. Training normalises with the
// batch's biased variance and, when running stats are given, blends the batch mean and the
// unbiased variance into them; evaluation normalises with the running stats (left unchanged).
inline NormRef ref_batch_norm(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                              const std::vector<double>& w, const std::vector<double>& b,
                              const std::vector<double>& running_mean, const std::vector<double>& running_var,
                              bool training, double momentum, double eps) {
  const auto [N, C, S] = ncs(sizes);
  NormRef r{std::vector<double>(x.size()), running_mean, running_var};
  std::vector<double> batch_mean(C), batch_var(C);
  for (int64_t c = 0; c < C; ++c) {
    double mean = 0, var = 0;
    if (training) {
      std::vector<double> channel;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) channel.push_back(x[(n * C + c) * S + s]);
      const Moments m = moments(channel);
      mean = m.mean;
      var = m.var;
      batch_mean[c] = m.mean;
      batch_var[c] = m.unbiased();
    } else {
      mean = running_mean[c];
      var = running_var[c];
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) {
        const size_t i = (n * C + c) * S + s;
        r.out[i] = normalise(x[i], mean, var, eps, w, b, c);
      }
  }
  if (training && !running_mean.empty()) {
    r.running_mean = blend(running_mean, batch_mean, momentum);
    r.running_var = blend(running_var, batch_var, momentum);
  }
  return r;
}

// group_norm: per sample, statistics over each group of C / groups consecutive channels and
// all their spatial positions (biased variance); weight and bias are per channel.
inline std::vector<double> ref_group_norm(const std::vector<double>& x, const std::vector<int64_t>& sizes, int64_t groups,
                                          const std::vector<double>& w, const std::vector<double>& b, double eps) {
  const auto [N, C, S] = ncs(sizes);
  const int64_t per_group = C / groups;
  std::vector<double> out(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      // The group's channels are consecutive, so its elements are one contiguous row-major run.
      const size_t first = (n * C + g * per_group) * S, count = per_group * S;
      const Moments m = moments(std::vector<double>(x.begin() + first, x.begin() + first + count));
      for (size_t i = first; i < first + count; ++i) out[i] = normalise(x[i], m.mean, m.var, eps, w, b, (i / S) % C);
    }
  return out;
}

// layer_norm: statistics over the trailing `normalized_dims` dims (biased variance), one set per
// index of the leading dims; weight and bias have the normalized shape (row-major).
inline std::vector<double> ref_layer_norm(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                          size_t normalized_dims, const std::vector<double>& w,
                                          const std::vector<double>& b, double eps) {
  int64_t inner = 1;
  for (size_t d = sizes.size() - normalized_dims; d < sizes.size(); ++d) inner *= sizes[d];
  std::vector<double> out(x.size());
  for (size_t first = 0; first < x.size(); first += inner) {
    const Moments m = moments(std::vector<double>(x.begin() + first, x.begin() + first + inner));
    for (int64_t k = 0; k < inner; ++k) out[first + k] = normalise(x[first + k], m.mean, m.var, eps, w, b, k);
  }
  return out;
}

// instance_norm: statistics per (sample, channel) over the spatial dims (biased variance). With
// running stats given and use_input_stats, each channel's running stats blend in the mean over
// the batch of the per-instance means and unbiased variances (PyTorch repeats the running stats
// per sample, runs batch_norm on (1, N*C, ...), then averages them back over N). Without
// use_input_stats the running stats normalise, as batch_norm's evaluation mode.
inline NormRef ref_instance_norm(const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                 const std::vector<double>& w, const std::vector<double>& b,
                                 const std::vector<double>& running_mean, const std::vector<double>& running_var,
                                 bool use_input_stats, double momentum, double eps) {
  const auto [N, C, S] = ncs(sizes);
  NormRef r{std::vector<double>(x.size()), running_mean, running_var};
  std::vector<double> mean_over_batch(C, 0.0), var_over_batch(C, 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const size_t first = (n * C + c) * S;
      double mean = 0, var = 0;
      if (use_input_stats) {
        const Moments m = moments(std::vector<double>(x.begin() + first, x.begin() + first + S));
        mean = m.mean;
        var = m.var;
        mean_over_batch[c] += m.mean / static_cast<double>(N);
        var_over_batch[c] += m.unbiased() / static_cast<double>(N);
      } else {
        mean = running_mean[c];
        var = running_var[c];
      }
      for (size_t i = first; i < first + S; ++i) r.out[i] = normalise(x[i], mean, var, eps, w, b, c);
    }
  if (use_input_stats && !running_mean.empty()) {
    r.running_mean = blend(running_mean, mean_over_batch, momentum);
    r.running_var = blend(running_var, var_over_batch, momentum);
  }
  return r;
}

}  // namespace lg::testing

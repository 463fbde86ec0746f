// The arithmetic the channel norms (batch_norm, group_norm, instance_norm) share on every
// device: per-(n, c)-plane moments in, statistics per channel or per (n, group) out, the
// running-stat update and the per-plane affine map. Kernels compute only the plane moments and
// the elementwise map, so the CPU and CUDA backends normalise with the same numbers.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace lg::norm {

class ChannelStatistics {
 public:
  // groups: statistics groups per sample (ignored across the batch); plane: elements per (n, c).
  ChannelStatistics(int64_t n, int64_t c, int64_t groups, bool across_batch, int64_t plane)
      : n_(n), c_(c), groups_(groups), across_(across_batch),
        per_group_(across_batch ? 1 : c / groups),
        count_(static_cast<double>((across_batch ? n : c / groups) * plane)),
        mean_(static_cast<size_t>(across_batch ? c : n * groups), 0.0),
        var_(mean_.size(), 0.0) {}

  // Statistic of plane (n, c): the channel over the batch, or (n, group).
  int64_t stat_of(int64_t n, int64_t c) const { return across_ ? c : n * groups_ + c / per_group_; }

  // Sums per plane (row-major (n, c)) -> means; returns the mean of each plane's statistic,
  // the shift the second pass subtracts.
  std::vector<double> set_means(const std::vector<double>& plane_sums) {
    accumulate(plane_sums, mean_);
    std::vector<double> shift(static_cast<size_t>(n_ * c_));
    for (int64_t n = 0; n < n_; ++n)
      for (int64_t c = 0; c < c_; ++c) shift[static_cast<size_t>(n * c_ + c)] = mean_[static_cast<size_t>(stat_of(n, c))];
    return shift;
  }
  // Sums of squared deviations per plane -> biased variances (what normalises).
  void set_variances(const std::vector<double>& plane_squares) { accumulate(plane_squares, var_); }

  // running = (1 - momentum) * running + momentum * batch, the variance unbiased; instance
  // norm's batch statistic is the mean over the batch of the per-sample ones.
  void update_running(std::vector<double>& running_mean, std::vector<double>& running_var, double momentum) const {
    const double unbias = count_ > 1 ? count_ / (count_ - 1) : 1.0;
    for (int64_t c = 0; c < c_; ++c) {
      double m = 0, s = 0;
      for (int64_t n = 0; n < (across_ ? 1 : n_); ++n) {
        m += mean_[static_cast<size_t>(stat_of(n, c))] / (across_ ? 1 : static_cast<double>(n_));
        s += var_[static_cast<size_t>(stat_of(n, c))] / (across_ ? 1 : static_cast<double>(n_));
      }
      running_mean[static_cast<size_t>(c)] = (1 - momentum) * running_mean[static_cast<size_t>(c)] + momentum * m;
      running_var[static_cast<size_t>(c)] = (1 - momentum) * running_var[static_cast<size_t>(c)] + momentum * s * unbias;
    }
  }

  // Normalising with the running stats instead (one statistic per channel).
  void use_running(std::vector<double> mean, std::vector<double> var) {
    mean_ = std::move(mean);
    var_ = std::move(var);
    by_channel_ = true;
  }

  // Per plane: y = (x - mean) * scale + shift.
  struct Affine {
    std::vector<double> mean, scale, shift;
  };
  // One entry per plane, row-major (n, c).
  Affine affine(const std::vector<double>& weight, const std::vector<double>& bias, double eps) const {
    return affine_rows(weight, bias, eps, n_);
  }
  // Whether every sample normalises channel c with the same statistic (batch norm, in training
  // or with running stats): the map is then the same for every n.
  bool per_channel() const { return across_ || by_channel_; }
  // The map of sample 0 alone, one entry per channel: for per_channel() statistics it serves
  // every sample, and costs C square roots instead of N x C.
  Affine channel_affine(const std::vector<double>& weight, const std::vector<double>& bias, double eps) const {
    return affine_rows(weight, bias, eps, 1);
  }

 private:
  Affine affine_rows(const std::vector<double>& weight, const std::vector<double>& bias, double eps,
                     int64_t rows) const {
    Affine a{std::vector<double>(static_cast<size_t>(rows * c_)), std::vector<double>(static_cast<size_t>(rows * c_)),
             std::vector<double>(static_cast<size_t>(rows * c_))};
    for (int64_t n = 0; n < rows; ++n)
      for (int64_t c = 0; c < c_; ++c) {
        const auto k = static_cast<size_t>(by_channel_ ? c : stat_of(n, c));
        const auto i = static_cast<size_t>(n * c_ + c);
        a.mean[i] = mean_[k];
        a.scale[i] = weight[static_cast<size_t>(c)] / std::sqrt(var_[k] + eps);
        a.shift[i] = bias[static_cast<size_t>(c)];
      }
    return a;
  }

  void accumulate(const std::vector<double>& per_plane, std::vector<double>& per_stat) const {
    for (int64_t n = 0; n < n_; ++n)
      for (int64_t c = 0; c < c_; ++c)
        per_stat[static_cast<size_t>(stat_of(n, c))] += per_plane[static_cast<size_t>(n * c_ + c)];
    for (double& v : per_stat) v /= count_;
  }

  int64_t n_, c_, groups_;
  bool across_;
  int64_t per_group_;
  double count_;
  std::vector<double> mean_, var_;
  bool by_channel_ = false;
};

}  // namespace lg::norm

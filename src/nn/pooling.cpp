// Pooling layers.
#include <layoutguard/nn/pooling.h>

#include <layoutguard/pooling.h>

namespace lg::nn {

template <int D>
Tensor MaxPoolNd<D>::forward(const Tensor& input) {
  const MaxPoolOptions& o = options_;
  if constexpr (D == 2)
    return max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
  else
    return max_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

template <int D>
std::string MaxPoolNd<D>::extra_repr() const {
  return "kernel_size=" + to_string(options_.kernel_size()) + ", stride=" +
         to_string(options_.stride().empty() ? options_.kernel_size() : options_.stride()) +
         ", padding=" + to_string(options_.padding());
}

template <int D>
Tensor AvgPoolNd<D>::forward(const Tensor& input) {
  const AvgPoolOptions& o = options_;
  if constexpr (D == 2)
    return avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                      o.divisor_override());
  else
    return avg_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                      o.divisor_override());
}

template <int D>
std::string AvgPoolNd<D>::extra_repr() const {
  return "kernel_size=" + to_string(options_.kernel_size()) + ", stride=" +
         to_string(options_.stride().empty() ? options_.kernel_size() : options_.stride());
}

template <int D>
Tensor AdaptiveAvgPoolNd<D>::forward(const Tensor& input) {
  if constexpr (D == 2)
    return adaptive_avg_pool2d(input, output_size_);
  else
    return adaptive_avg_pool3d(input, output_size_);
}

template <int D>
std::string AdaptiveAvgPoolNd<D>::extra_repr() const {
  return "output_size=" + to_string(output_size_);
}

template class MaxPoolNd<2>;
template class MaxPoolNd<3>;
template class AvgPoolNd<2>;
template class AvgPoolNd<3>;
template class AdaptiveAvgPoolNd<2>;
template class AdaptiveAvgPoolNd<3>;

}  // namespace lg::nn

// Convolution layers.
#include <layoutguard/nn/conv.h>

#include <layoutguard/conv.h>

#include "core/checked_arith.h"
#include "init.h"

namespace lg::nn {
namespace {

template <int D, bool Transposed>
std::string conv_type_name() {
  return std::string(Transposed ? "ConvTranspose" : "Conv") + std::to_string(D) + "d";
}

}  // namespace

template <int D, bool Transposed>
ConvNd<D, Transposed>::ConvNd(Options o) : Module(conv_type_name<D, Transposed>()), options_(std::move(o)) {
  const std::string& n = type_name();
  Options& opt = options_;
  detail::require(opt.in_channels() > 0 && opt.out_channels() > 0, n,
                  "in_channels and out_channels must be positive, got " + std::to_string(opt.in_channels()) +
                      " and " + std::to_string(opt.out_channels()));
  detail::require(opt.groups() > 0 && opt.in_channels() % opt.groups() == 0 && opt.out_channels() % opt.groups() == 0,
                  n, "groups (" + std::to_string(opt.groups()) + ") must be positive and divide in_channels (" +
                         std::to_string(opt.in_channels()) + ") and out_channels (" +
                         std::to_string(opt.out_channels()) + ")");
  opt.kernel_size(detail::expand(n, "kernel_size", opt.kernel_size(), D));
  opt.stride(detail::expand(n, "stride", opt.stride(), D));
  opt.padding(detail::expand(n, "padding", opt.padding(), D));
  opt.output_padding(detail::expand(n, "output_padding", opt.output_padding(), D));
  opt.dilation(detail::expand(n, "dilation", opt.dilation(), D));
  for (int64_t k : opt.kernel_size()) detail::require(k > 0, n, "kernel_size must be positive, got " + to_string(opt.kernel_size()));

  std::vector<int64_t> shape = Transposed
                                   ? std::vector<int64_t>{opt.in_channels(), opt.out_channels() / opt.groups()}
                                   : std::vector<int64_t>{opt.out_channels(), opt.in_channels() / opt.groups()};
  int64_t receptive = 1;
  for (int64_t k : opt.kernel_size()) {
    shape.push_back(k);
    detail::require(!__builtin_mul_overflow(receptive, k, &receptive), n,
                    "kernel_size " + to_string(opt.kernel_size()) + " is too large");
  }
  // PyTorch's fan_in is weight.size(1) * receptive field, for transposed weights too.
  const int64_t fan_in = lg::detail::checked_mul(shape[1], receptive, "[nn::", n, "] fan_in, in_channels / groups (",
                                                 shape[1], ") times the kernel's receptive field");
  const double bound = 1.0 / std::sqrt(double(fan_in));
  weight = detail::uniform(shape, bound, n);
  if (opt.bias()) bias = detail::uniform({opt.out_channels()}, bound, n);
  register_parameter("weight", &weight);
  register_parameter("bias", &bias);
}

template <int D, bool Transposed>
Tensor ConvNd<D, Transposed>::forward(const Tensor& input) {
  const Options& o = options_;
  const std::optional<Tensor> b = bias.defined() ? std::optional<Tensor>(bias) : std::nullopt;
  if constexpr (Transposed) {
    if constexpr (D == 2)
      return conv_transpose2d(input, weight, b, o.stride(), o.padding(), o.output_padding(), o.groups(), o.dilation());
    else
      return conv_transpose3d(input, weight, b, o.stride(), o.padding(), o.output_padding(), o.groups(), o.dilation());
  } else {
    if constexpr (D == 2)
      return conv2d(input, weight, b, o.stride(), o.padding(), o.dilation(), o.groups());
    else
      return conv3d(input, weight, b, o.stride(), o.padding(), o.dilation(), o.groups());
  }
}

template <int D, bool Transposed>
std::string ConvNd<D, Transposed>::extra_repr() const {
  const Options& o = options_;
  std::string s = std::to_string(o.in_channels()) + ", " + std::to_string(o.out_channels()) +
                  ", kernel_size=" + to_string(o.kernel_size()) + ", stride=" + to_string(o.stride());
  if (o.padding() != std::vector<int64_t>(D, 0)) s += ", padding=" + to_string(o.padding());
  if (o.dilation() != std::vector<int64_t>(D, 1)) s += ", dilation=" + to_string(o.dilation());
  if (Transposed && o.output_padding() != std::vector<int64_t>(D, 0))
    s += ", output_padding=" + to_string(o.output_padding());
  if (o.groups() != 1) s += ", groups=" + std::to_string(o.groups());
  if (!o.bias()) s += ", bias=False";
  return s;
}

template class ConvNd<2, false>;
template class ConvNd<3, false>;
template class ConvNd<2, true>;
template class ConvNd<3, true>;

}  // namespace lg::nn

// The resampling ops' infer steps: validate with ATen's rules, turn output sizes and scales
// into per-dim interpolation taps (PyTorch's coordinate mapping, UpSample.h), padding into
// per-dim source maps, and the shuffles into strided views of the input; allocate the output in
// the input's suggested format and hand the rest to the kernel.
#include <layoutguard/resampling.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>

#include <layoutguard/factories.h>

#include "core/tensor_internal.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::InterpTaps;
using dispatch::OpId;

enum class Mode { Nearest, Linear, Cubic };

struct UpsampleCall {
  OpId id;
  int spatial;
  Mode mode;
};

// PyTorch computes coordinates in the op's accumulate type: float for float32 and the 16-bit
// floats, double for float64. Using the same type keeps tap indices identical at boundaries.
template <typename A>
A scale_for(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0);
  if (scale && *scale > 0) return static_cast<A>(1.0 / *scale);
  return static_cast<A>(in) / static_cast<A>(out);
}

// floor(src) within [lo, hi], taken there before the cast: a tiny scale puts a source
// coordinate past int64 (or at inf, or NaN for 0 * inf), whose cast would be undefined. NaN
// comes only from output index 0, which reads the first input element.
template <typename A>
int64_t clamped_floor(A src, int64_t lo, int64_t hi) {
  if (!(src >= static_cast<A>(lo))) return lo;
  if (!(src <= static_cast<A>(hi))) return hi;
  return std::clamp(static_cast<int64_t>(std::floor(src)), lo, hi);
}

template <typename A>
void fill_taps(InterpTaps& t, int lead, Mode mode, int64_t in, int64_t out, bool align_corners,
               std::optional<double> scale) {
  auto& index = t.index[lead];
  auto& weight = t.weight[lead];
  if (mode == Mode::Nearest) {
    t.taps[lead] = 1;
    const float s = scale && *scale > 0 ? static_cast<float>(1.0 / *scale) : static_cast<float>(in) / static_cast<float>(out);
    for (int64_t o = 0; o < out; ++o) {
      index.push_back(clamped_floor(static_cast<float>(o) * s, 0, in - 1));
      weight.push_back(1.0);
    }
    return;
  }
  const A s = scale_for<A>(in, out, align_corners, scale);
  if (mode == Mode::Linear) {
    t.taps[lead] = 2;
    for (int64_t o = 0; o < out; ++o) {
      A src = align_corners ? s * static_cast<A>(o) : s * (static_cast<A>(o) + A(0.5)) - A(0.5);
      if (!(src >= 0)) src = 0;  // NaN too
      if (!(src <= static_cast<A>(in - 1))) src = static_cast<A>(in - 1);  // past the last: it alone
      const auto i0 = static_cast<int64_t>(std::floor(src));  // within [0, in - 1] now
      const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
      const A l1 = std::min(std::max(src - static_cast<A>(i0), A(0)), A(1));
      index.insert(index.end(), {i0, i1});
      weight.insert(weight.end(), {static_cast<double>(A(1) - l1), static_cast<double>(l1)});
    }
    return;
  }
  // Keys' cubic convolution with A = -0.75; the source index is not clamped (taps are).
  t.taps[lead] = 4;
  constexpr A kA = A(-0.75);
  auto near = [&](A x) { return ((kA + 2) * x - (kA + 3)) * x * x + 1; };           // |x| <= 1
  auto far = [&](A x) { return ((kA * x - 5 * kA) * x + 8 * kA) * x - 4 * kA; };  // 1 < |x| < 2
  for (int64_t o = 0; o < out; ++o) {
    A src = align_corners ? s * static_cast<A>(o) : s * (static_cast<A>(o) + A(0.5)) - A(0.5);
    // Two taps beyond either end every tap is clamped to the end element: the coordinate is
    // taken there, where floor and the fraction stay finite (a tiny scale makes it inf).
    if (!(src >= A(-2))) src = A(-2);
    if (!(src <= static_cast<A>(in + 1))) src = static_cast<A>(in + 1);
    const A fl = std::floor(src);
    const int64_t i = static_cast<int64_t>(fl);
    const A x = src - fl;
    const A w[4] = {far(x + 1), near(x), near(1 - x), far(2 - x)};
    for (int k = 0; k < 4; ++k) {
      index.push_back(std::clamp<int64_t>(i - 1 + k, 0, in - 1));
      weight.push_back(static_cast<double>(w[k]));
    }
  }
}

std::string_view name_of(OpId id) { return dispatch::op_name(id); }

Tensor upsample(const UpsampleCall& c, const Tensor& input, IntArrayRef output_size, bool align_corners,
                std::array<std::optional<double>, 3> scales) {
  const std::vector<int64_t> size = output_size.vec();
  auto body = [&](std::span<const Tensor> in) {
    const std::string_view op = name_of(c.id);
    const Tensor& x = in[0];
    detail::check_defined(x, op, "input");
    detail::check_device_supported(x.device(), op);
    LG_CHECK(x.dim() == c.spatial + 2, "[", op, "] expected ", c.spatial + 2, "-D input (N, C, ",
             c.spatial == 2 ? "H, W" : "D, H, W", "), but got input of size ", x.sizes());
    LG_CHECK(static_cast<int>(size.size()) == c.spatial, "[", op, "] expected output_size with ", c.spatial,
             " values, but got ", IntArrayRef(size));
    for (int64_t d = 1; d < x.dim(); ++d)
      LG_CHECK(x.size(d) > 0, "[", op, "] expected input with non-zero channel and spatial sizes (batch may be 0), but got ",
               x.sizes());
    for (int64_t o : size)
      LG_CHECK(o > 0, "[", op, "] output sizes must be greater than 0, but got output_size ", IntArrayRef(size));
    if (c.mode == Mode::Nearest)
      LG_CHECK_TYPE(x.dtype() != kBool, "[", op, "] is not implemented for bool; required a numeric dtype");
    else
      LG_CHECK_TYPE(is_floating_point(x.dtype()), "[", op, "] is not implemented for ", x.dtype(),
                    "; required a floating dtype");
    // The output first: a size too large to allocate fails here with an lg::Error, before the
    // tap tables (one entry per output position) are built.
    std::vector<int64_t> sizes{x.size(0), x.size(1)};
    sizes.insert(sizes.end(), size.begin(), size.end());
    const MemoryFormat fmt = x.suggest_memory_format();
    Tensor out = empty(sizes, x.options(), fmt);
    InterpTaps taps;
    const int lead = 3 - c.spatial;
    taps.index[0] = {0};  // depth 1 for 2-D, replaced below for 3-D
    taps.weight[0] = {1.0};
    for (int i = 0; i < c.spatial && out.numel() > 0; ++i) {  // an empty output reads no table
      taps.index[lead + i].clear();
      taps.weight[lead + i].clear();
      if (x.dtype() == kFloat64)
        fill_taps<double>(taps, lead + i, c.mode, x.size(2 + i), size[i], align_corners, scales[lead + i]);
      else
        fill_taps<float>(taps, lead + i, c.mode, x.size(2 + i), size[i], align_corners, scales[lead + i]);
    }
    taps.channels_last = fmt != MemoryFormat::Contiguous;
    auto kernel = dispatch::kernel_as<dispatch::InterpKernel>(c.id, x.device());
    if (out.numel() > 0) kernel(c.spatial == 2 ? out.unsqueeze(2) : out, c.spatial == 2 ? x.unsqueeze(2) : x, taps);
    return std::vector<Tensor>{out};
  };
  return dispatch::run_op(dispatch::op_info(c.id), std::span<const Tensor>(&input, 1), body, true)[0];
}

// A view of t with dim split into `parts` (their product is t.size(dim)).
Tensor split_dim(const Tensor& t, int64_t dim, std::initializer_list<int64_t> parts) {
  std::vector<int64_t> sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d != dim) {
      sizes.push_back(t.size(d));
      strides.push_back(t.stride(d));
      continue;
    }
    int64_t inner = 1;
    for (int64_t p : parts) inner *= p;
    for (int64_t p : parts) {
      inner /= p;
      sizes.push_back(p);
      strides.push_back(t.stride(d) * inner);
    }
  }
  return detail::make_view(t, sizes, strides, t.storage_offset());
}

// The view of t with its dims in `order` (a permutation), without going through the dispatcher.
Tensor reorder(const Tensor& t, const std::vector<int64_t>& order) {
  std::vector<int64_t> sizes, strides;
  for (int64_t d : order) {
    sizes.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  return detail::make_view(t, sizes, strides, t.storage_offset());
}

// Runs a shuffle op. plan(x) validates the op's own arguments and returns the output sizes and
// a function giving (a view of out, the matching strided view of x) for the copy kernel. The
// output takes the input's suggested format.
template <typename Plan>
Tensor run_shuffle(OpId id, const Tensor& input, Plan&& plan) {
  auto body = [&](std::span<const Tensor> in) {
    const std::string_view op = dispatch::op_name(id);
    const Tensor& x = in[0];
    detail::check_defined(x, op, "input");
    detail::check_device_supported(x.device(), op);
    LG_CHECK(x.dim() >= 3, "[", op, "] expected an input of at least 3 dims, but got input of size ", x.sizes());
    auto [sizes, views] = plan(x);
    Tensor out = empty(sizes, x.options(), x.suggest_memory_format());
    auto kernel = dispatch::kernel_as<dispatch::ShuffleKernel>(id, x.device());
    if (out.numel() > 0) {
      const auto [dst, src] = views(out);
      kernel(dst, src);
    }
    return std::vector<Tensor>{out};
  };
  return dispatch::run_op(dispatch::op_info(id), std::span<const Tensor>(&input, 1), body, true)[0];
}

}  // namespace

Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  return upsample({OpId::upsample_nearest2d, 2, Mode::Nearest}, input, output_size, false, {std::nullopt, scales_h, scales_w});
}
Tensor upsample_nearest3d(const Tensor& input, IntArrayRef output_size, std::optional<double> scales_d,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample({OpId::upsample_nearest3d, 3, Mode::Nearest}, input, output_size, false, {scales_d, scales_h, scales_w});
}
Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners, std::optional<double> scales_h,
                           std::optional<double> scales_w) {
  return upsample({OpId::upsample_bilinear2d, 2, Mode::Linear}, input, output_size, align_corners,
                  {std::nullopt, scales_h, scales_w});
}
Tensor upsample_trilinear3d(const Tensor& input, IntArrayRef output_size, bool align_corners, std::optional<double> scales_d,
                            std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample({OpId::upsample_trilinear3d, 3, Mode::Linear}, input, output_size, align_corners,
                  {scales_d, scales_h, scales_w});
}
Tensor upsample_bicubic2d(const Tensor& input, IntArrayRef output_size, bool align_corners, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  return upsample({OpId::upsample_bicubic2d, 2, Mode::Cubic}, input, output_size, align_corners,
                  {std::nullopt, scales_h, scales_w});
}

Tensor interpolate(const Tensor& input, IntArrayRef size, std::vector<double> scale_factor, std::string_view mode,
                   std::optional<bool> align_corners) {
  detail::check_defined(input, "interpolate", "input");
  LG_CHECK(input.dim() == 4 || input.dim() == 5, "[interpolate] expected 4-D or 5-D input, but got input of size ",
           input.sizes());
  const int spatial = static_cast<int>(input.dim()) - 2;
  LG_CHECK(size.empty() != scale_factor.empty(), "[interpolate] exactly one of size and scale_factor must be given, but got ",
           size.empty() ? "neither" : "both");
  const bool linear_like = mode == "bilinear" || mode == "bicubic" || mode == "trilinear";
  LG_CHECK(mode == "nearest" || linear_like, "[interpolate] mode must be one of nearest, bilinear, bicubic, trilinear, but got '",
           mode, "'");
  LG_CHECK(linear_like || !align_corners.has_value(), "[interpolate] align_corners only applies to the linear and cubic modes, "
           "but got align_corners with mode '", mode, "'");
  LG_CHECK(mode == "nearest" || (spatial == 2) == (mode != "trilinear"), "[interpolate] mode '", mode, "' does not take ",
           input.dim(), "-D input");
  std::vector<int64_t> out(spatial);
  std::array<std::optional<double>, 3> scales;
  if (!size.empty()) {
    LG_CHECK(size.size() == 1 || static_cast<int>(size.size()) == spatial, "[interpolate] size must have 1 or ", spatial,
             " values, but got ", size);
    for (int i = 0; i < spatial; ++i) out[i] = size.size() == 1 ? size[0] : size[i];
  } else {
    LG_CHECK(scale_factor.size() == 1 || static_cast<int>(scale_factor.size()) == spatial,
             "[interpolate] scale_factor must have 1 or ", spatial, " values, but got ", scale_factor.size());
    for (int i = 0; i < spatial; ++i) {
      const double s = scale_factor.size() == 1 ? scale_factor[0] : scale_factor[i];
      LG_CHECK(s > 0 && std::isfinite(s), "[interpolate] scale_factor must be positive and finite, but got ", s);
      const double size_d = std::floor(static_cast<double>(input.size(2 + i)) * s);
      // 2^63 is exactly representable; converting a double at or above it to int64 is undefined.
      LG_CHECK(size_d < 9223372036854775808.0, "[interpolate] scale_factor ", s, " times the input size ",
               input.size(2 + i), " gives an output size beyond int64");
      out[i] = static_cast<int64_t>(size_d);
      scales[3 - spatial + i] = s;
    }
  }
  const bool ac = align_corners.value_or(false);
  if (mode == "nearest")
    return spatial == 2 ? upsample_nearest2d(input, out, scales[1], scales[2])
                        : upsample_nearest3d(input, out, scales[0], scales[1], scales[2]);
  if (mode == "bilinear") return upsample_bilinear2d(input, out, ac, scales[1], scales[2]);
  if (mode == "bicubic") return upsample_bicubic2d(input, out, ac, scales[1], scales[2]);
  return upsample_trilinear3d(input, out, ac, scales[0], scales[1], scales[2]);
}

Tensor pad(const Tensor& input, IntArrayRef pad_in, std::string_view mode_in, std::optional<double> value) {
  const std::vector<int64_t> amounts = pad_in.vec();
  const std::string mode(mode_in);
  auto body = [&](std::span<const Tensor> in) {
    const Tensor& x = in[0];
    detail::check_defined(x, "pad", "input");
    detail::check_device_supported(x.device(), "pad");
    LG_CHECK(mode == "constant" || mode == "reflect" || mode == "replicate" || mode == "circular",
             "[pad] mode must be one of constant, reflect, replicate, circular, but got '", mode, "'");
    LG_CHECK(amounts.size() % 2 == 0, "[pad] padding length must be divisible by 2, but got ", IntArrayRef(amounts));
    const int64_t padded = static_cast<int64_t>(amounts.size()) / 2;
    LG_CHECK(padded <= x.dim(), "[pad] padding length ", amounts.size(), " is too large for input of size ", x.sizes(),
             "; required at most 2 values per dim");
    if (mode != "constant") {
      LG_CHECK(!value.has_value(), "[pad] padding mode '", mode, "' doesn't take a value argument");
      LG_CHECK(padded >= 1 && padded <= 3 && (x.dim() == padded + 1 || x.dim() == padded + 2), "[pad] mode '", mode,
               "' pads the last 1 to 3 dims of a (C, ...) or (N, C, ...) input, but got ", amounts.size(),
               " padding values for input of size ", x.sizes());
      for (int64_t d = 0; d < x.dim() - padded; ++d)
        if (d > 0 || x.dim() == padded + 1)
          LG_CHECK(x.size(d) > 0, "[pad] mode '", mode, "' expects non-zero channel sizes, but got input of size ", x.sizes());
    }
    if (value) detail::check_scalar_fits(*value, x.dtype(), "pad", "value");
    dispatch::PadMap map;
    map.value = value.value_or(0.0);
    std::vector<int64_t> sizes = x.sizes().vec();
    map.source.resize(static_cast<size_t>(x.dim()));
    for (int64_t d = 0; d < x.dim(); ++d) {
      const int64_t k = x.dim() - 1 - d;  // pair index: the last dim comes first
      const int64_t before = k < padded ? amounts[2 * k] : 0, after = k < padded ? amounts[2 * k + 1] : 0;
      const int64_t n = x.size(d);
      if (mode != "constant" && k < padded) {
        LG_CHECK(before >= 0 && after >= 0, "[pad] mode '", mode, "' takes non-negative padding, but got ",
                 IntArrayRef(amounts));
        LG_CHECK(n > 0, "[pad] mode '", mode, "' cannot pad dim ", d, " of size 0 (input of size ", x.sizes(), ")");
        if (mode == "reflect")
          LG_CHECK(before < n && after < n, "[pad] reflect padding (", before, ", ", after,
                   ") must be smaller than the size ", n, " of dim ", d, " (input of size ", x.sizes(), ")");
        if (mode == "circular")
          LG_CHECK(before <= n && after <= n, "[pad] circular padding (", before, ", ", after,
                   ") must be at most the size ", n, " of dim ", d, " (input of size ", x.sizes(), ")");
      }
      const bool beyond_int64 =
          __builtin_add_overflow(n, before, &sizes[d]) || __builtin_add_overflow(sizes[d], after, &sizes[d]);
      LG_CHECK(!beyond_int64 && sizes[d] >= 0, "[pad] the input size ", n, " plus padding ", before, " and ", after,
               beyond_int64 ? " is beyond int64" : " gives a negative output size", " in dim ", d);
    }
    // The output first: a size too large to allocate fails here with an lg::Error, before the
    // index tables below (one entry per output position of a dim) are built.
    Tensor out = empty(sizes, x.options(), x.suggest_memory_format());
    for (int64_t d = 0; d < x.dim() && out.numel() > 0; ++d) {  // an empty output reads no table
      const int64_t k = x.dim() - 1 - d;
      const int64_t before = k < padded ? amounts[2 * k] : 0;
      const int64_t n = x.size(d);
      auto& src = map.source[static_cast<size_t>(d)];
      src.resize(static_cast<size_t>(sizes[d]));
      for (int64_t o = 0; o < sizes[d]; ++o) {
        int64_t i = o - before;
        if (i < 0 || i >= n) {
          if (mode == "constant") i = -1;
          else if (mode == "reflect") i = i < 0 ? -i : 2 * (n - 1) - i;
          else if (mode == "replicate") i = std::clamp<int64_t>(i, 0, n - 1);
          else i = ((i % n) + n) % n;
        }
        src[static_cast<size_t>(o)] = i;
      }
    }
    auto kernel = dispatch::kernel_for<OpId::pad>(x.device());
    if (out.numel() > 0) kernel(out, x, map);
    return std::vector<Tensor>{out};
  };
  return dispatch::run_op(dispatch::op_info(OpId::pad), std::span<const Tensor>(&input, 1), body, true)[0];
}

Tensor pixel_shuffle(const Tensor& input, int64_t r) {
  return run_shuffle(OpId::pixel_shuffle, input, [&](const Tensor& x) {
    LG_CHECK(r > 0, "[pixel_shuffle] upscale_factor must be greater than 0, but got ", r);
    const int64_t c = x.dim() - 3;
    int64_t rr = 0;
    const bool beyond_int64 = __builtin_mul_overflow(r, r, &rr);  // then no channel count divides
    LG_CHECK(!beyond_int64 && x.size(c) % rr == 0, "[pixel_shuffle] expected the channel dim (", x.size(c),
             ") to be divisible by the square of upscale_factor (",
             beyond_int64 ? std::string("beyond int64") : std::to_string(rr), "), input of size ", x.sizes());
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes[c] /= r * r;
    sizes[c + 1] *= r;
    sizes[c + 2] *= r;
    // in (*, C, r_i, r_j, H, W) read as (*, C, H, r_i, W, r_j); out (*, C, H, r_i, W, r_j).
    auto views = [&, c, sizes](const Tensor& out) {
      std::vector<int64_t> order;
      for (int64_t d = 0; d < c + 1; ++d) order.push_back(d);
      order.insert(order.end(), {c + 3, c + 1, c + 4, c + 2});
      return std::pair{split_dim(split_dim(out, c + 2, {x.size(c + 2), r}), c + 1, {x.size(c + 1), r}),
                       reorder(split_dim(x, c, {sizes[c], r, r}), order)};
    };
    return std::pair{sizes, std::function<std::pair<Tensor, Tensor>(const Tensor&)>(views)};
  });
}

Tensor pixel_unshuffle(const Tensor& input, int64_t r) {
  return run_shuffle(OpId::pixel_unshuffle, input, [&](const Tensor& x) {
    LG_CHECK(r > 0, "[pixel_unshuffle] downscale_factor must be greater than 0, but got ", r);
    const int64_t c = x.dim() - 3;
    LG_CHECK(x.size(c + 1) % r == 0 && x.size(c + 2) % r == 0, "[pixel_unshuffle] expected height and width (",
             x.size(c + 1), ", ", x.size(c + 2), ") to be divisible by downscale_factor ", r, ", input of size ", x.sizes());
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes[c] *= r * r;
    sizes[c + 1] /= r;
    sizes[c + 2] /= r;
    // in (*, C, H, r_i, W, r_j) read as (*, C, r_i, r_j, H, W); out (*, C, r_i, r_j, H, W).
    auto views = [&, c, sizes](const Tensor& out) {
      std::vector<int64_t> order;
      for (int64_t d = 0; d < c + 1; ++d) order.push_back(d);
      order.insert(order.end(), {c + 2, c + 4, c + 1, c + 3});
      return std::pair{split_dim(out, c, {x.size(c), r, r}),
                       reorder(split_dim(split_dim(x, c + 2, {sizes[c + 2], r}), c + 1, {sizes[c + 1], r}), order)};
    };
    return std::pair{sizes, std::function<std::pair<Tensor, Tensor>(const Tensor&)>(views)};
  });
}

Tensor channel_shuffle(const Tensor& input, int64_t groups) {
  return run_shuffle(OpId::channel_shuffle, input, [&](const Tensor& x) {
    LG_CHECK(groups > 0, "[channel_shuffle] number of groups must be greater than 0, but got ", groups);
    LG_CHECK(x.size(1) % groups == 0, "[channel_shuffle] the number of channels (", x.size(1),
             ") must be divisible by groups (", groups, ")");
    // in channel g1 * k + g2 -> out channel g2 * groups + g1: in (N, groups, k, ...) read with
    // the two channel dims swapped, out (N, k, groups, ...).
    auto views = [&](const Tensor& out) {
      const int64_t k = x.size(1) / groups;
      std::vector<int64_t> order{0, 2, 1};
      for (int64_t d = 3; d < x.dim() + 1; ++d) order.push_back(d);
      return std::pair{split_dim(out, 1, {k, groups}), reorder(split_dim(x, 1, {groups, k}), order)};
    };
    return std::pair{x.sizes().vec(), std::function<std::pair<Tensor, Tensor>(const Tensor&)>(views)};
  });
}

}  // namespace lg

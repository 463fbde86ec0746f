// Strided element copy with dtype conversion on the CPU: the one loop behind copy_, fill_,
// to(), contiguous() and clone().
//
// The dims are reordered to follow the destination's memory order and merged where both
// sides stay contiguous, so a dense-to-dense copy of one layout becomes a single memcpy. When
// the destination's innermost dim is not the source's (NCHW <-> NHWC), the two dims are walked
// in square tiles so that both the reads and the writes stay within a few cache lines.
#include "core/copy.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include <layoutguard/dtype.h>

namespace lg::detail {
namespace {

struct Dim {
  int64_t size;
  int64_t dst_stride;
  int64_t src_stride;
};

// Element conversion with the rules of a tensor cast: floats to integers truncate toward zero
// and saturate at int64 (NaN becomes 0) before narrowing, so no cast is undefined behaviour;
// narrower integers wrap, as in PyTorch (-1.0 -> uint8 255).
template <typename D, typename S>
inline D convert(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (std::is_same_v<D, bool>) {
    if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>)
      return static_cast<float>(v) != 0.0f;
    else
      return v != S(0);
  } else if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    return convert<D, float>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    return D(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    int64_t i;
    if (v != v) i = 0;
    else if (v >= S(9.2233720368547758e18)) i = INT64_MAX;
    else if (v <= S(-9.2233720368547758e18)) i = INT64_MIN;
    else i = static_cast<int64_t>(v);
    return static_cast<D>(i);
  } else {
    return static_cast<D>(v);
  }
}

template <typename D, typename S>
void copy_row(D* dst, int64_t dst_stride, const S* src, int64_t src_stride, int64_t n) {
  if constexpr (std::is_same_v<D, S>) {
    if (dst_stride == 1 && src_stride == 1) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(D));
      return;
    }
  }
  if (dst_stride == 1 && src_stride == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = convert<D, S>(src[i]);
  } else if (dst_stride == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = convert<D, S>(src[i * src_stride]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = convert<D, S>(src[i * src_stride]);
  }
}

// a: the destination's innermost dim; b: the source's innermost dim.
template <typename D, typename S>
void copy_tile_pair(D* dst, const S* src, const Dim& a, const Dim& b) {
  constexpr int64_t kTile = 32;
  for (int64_t b0 = 0; b0 < b.size; b0 += kTile) {
    const int64_t b1 = std::min(b.size, b0 + kTile);
    for (int64_t a0 = 0; a0 < a.size; a0 += kTile) {
      const int64_t a1 = std::min(a.size, a0 + kTile);
      for (int64_t j = b0; j < b1; ++j) {
        D* d = dst + j * b.dst_stride;
        const S* s = src + j * b.src_stride;
        for (int64_t i = a0; i < a1; ++i) d[i * a.dst_stride] = convert<D, S>(s[i * a.src_stride]);
      }
    }
  }
}

// Walks every position of `outer` (outermost first) and calls body(dst, src) there.
template <typename D, typename S, typename Body>
void for_each_outer(D* dst, const S* src, const std::vector<Dim>& outer, Body&& body) {
  const size_t rank = outer.size();
  std::vector<int64_t> index(rank, 0);
  while (true) {
    body(dst, src);
    size_t k = rank;
    while (k > 0) {
      --k;
      if (++index[k] < outer[k].size) {
        dst += outer[k].dst_stride;
        src += outer[k].src_stride;
        break;
      }
      dst -= (outer[k].size - 1) * outer[k].dst_stride;
      src -= (outer[k].size - 1) * outer[k].src_stride;
      index[k] = 0;
      if (k == 0) return;
    }
    if (rank == 0) return;
  }
}

// Drops size-1 dims, orders the rest by destination stride (outermost first) and merges
// neighbours that are contiguous with each other on both sides.
std::vector<Dim> normalised_dims(const Tensor& dst, const Tensor& src) {
  std::vector<Dim> dims;
  for (int64_t i = 0; i < dst.dim(); ++i)
    if (dst.size(i) != 1) dims.push_back({dst.size(i), dst.stride(i), src.stride(i)});
  std::stable_sort(dims.begin(), dims.end(), [](const Dim& x, const Dim& y) {
    if (x.dst_stride != y.dst_stride) return x.dst_stride > y.dst_stride;
    return x.src_stride > y.src_stride;
  });
  std::vector<Dim> merged;
  for (const Dim& d : dims) {
    if (!merged.empty()) {
      Dim& prev = merged.back();  // prev is outer to d
      if (prev.dst_stride == d.dst_stride * d.size && prev.src_stride == d.src_stride * d.size) {
        prev = {prev.size * d.size, d.dst_stride, d.src_stride};
        continue;
      }
    }
    merged.push_back(d);
  }
  return merged;
}

template <typename D, typename S>
void copy_typed(D* dst, const S* src, std::vector<Dim> dims) {
  if (dims.empty()) {
    *dst = convert<D, S>(*src);
    return;
  }
  const Dim inner = dims.back();
  // The source's innermost dim, if it is not the destination's: tile the pair.
  auto src_inner = std::min_element(dims.begin(), dims.end() - 1, [](const Dim& x, const Dim& y) {
    return x.src_stride < y.src_stride;
  });
  const bool transpose = dims.size() >= 2 && inner.src_stride != 1 && src_inner->src_stride == 1 &&
                         inner.size >= 8 && src_inner->size >= 8;
  if (transpose) {
    const Dim b = *src_inner;
    dims.erase(src_inner);
    dims.pop_back();
    for_each_outer(dst, src, dims, [&](D* d, const S* s) { copy_tile_pair(d, s, inner, b); });
    return;
  }
  dims.pop_back();
  for_each_outer(dst, src, dims, [&](D* d, const S* s) {
    copy_row(d, inner.dst_stride, s, inner.src_stride, inner.size);
  });
}

}  // namespace

void copy_elements_cpu(const Tensor& dst, const Tensor& src) {
  LG_ASSERT(dst.sizes() == src.sizes(), "copy_elements_cpu needs equal sizes, got ", dst.sizes(),
            " and ", src.sizes());
  if (dst.numel() == 0) return;
  std::vector<Dim> dims = normalised_dims(dst, src);
  visit_dtype(dst.dtype(), [&]<typename D>(std::type_identity<D>) {
    visit_dtype(src.dtype(), [&]<typename S>(std::type_identity<S>) {
      copy_typed<D, S>(static_cast<D*>(dst.data_ptr()), static_cast<const S*>(src.data_ptr()),
                       std::move(dims));
    });
  });
}

}  // namespace lg::detail

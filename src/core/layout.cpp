// All stride math of layoutguard. Every rule here is PyTorch's (ATen/c10) and is stated where it
// is implemented; docs/memory-format.md explains the rules as a user meets them.
// Nothing else in the library may recompute these rules.
#include <layoutguard/layout.h>

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <ostream>
#include <span>

#include <layoutguard/error.h>

#include "core/checked_arith.h"
#include "core/enum_checks.h"

namespace lg {

std::string_view memory_format_name(MemoryFormat fmt) {
  switch (fmt) {
    case MemoryFormat::Contiguous: return "contiguous_format";
    case MemoryFormat::ChannelsLast: return "channels_last";
    case MemoryFormat::ChannelsLast3d: return "channels_last_3d";
    case MemoryFormat::Preserve: return "preserve_format";
  }
  return "unknown_format";
}

std::ostream& operator<<(std::ostream& out, MemoryFormat fmt) { return out << memory_format_name(fmt); }

void detail::check_memory_format(MemoryFormat fmt, std::string_view op) {
  LG_CHECK(memory_format_name(fmt) != "unknown_format", "[", op, "] memory format ", static_cast<int>(fmt),
           " is not a MemoryFormat; required: contiguous_format, channels_last, channels_last_3d or "
           "preserve_format");
}

namespace layout {
namespace {

// Visit orders of the channels-last formats, innermost dim first: C, W, H, (D,) N.
constexpr std::array<int64_t, 4> kChannelsLastOrder{1, 3, 2, 0};
constexpr std::array<int64_t, 5> kChannelsLast3dOrder{1, 4, 3, 2, 0};

// Strides for a format whose innermost-first visit order is `order`. No max(size, 1): a zero
// size zeroes every outer stride, as c10's channels-last generators do.
std::vector<int64_t> strides_in_order(IntArrayRef sizes, std::span<const int64_t> order) {
  checked_numel(sizes, "strides");
  std::vector<int64_t> strides(sizes.size());
  int64_t acc = 1;
  for (int64_t d : order) {
    strides[d] = acc;
    LG_CHECK(!__builtin_mul_overflow(acc, sizes[d], &acc), "[strides] sizes ", sizes,
             " need strides beyond int64");
  }
  return strides;
}

// Contiguous in a format: strides equal the generator for `order`, ignoring size-1 dims.
bool is_contiguous_in_order(IntArrayRef sizes, IntArrayRef strides, std::span<const int64_t> order) {
  int64_t expected = 1;
  for (int64_t d : order) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected = detail::saturating_mul(expected, sizes[d]);  // sizes after a zero may pass int64
  }
  return true;
}

bool is_plain_contiguous(IntArrayRef sizes, IntArrayRef strides) {
  for (int64_t s : sizes)
    if (s == 0) return true;  // zero-size tensors are contiguous, whatever their strides
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected = detail::saturating_mul(expected, sizes[i]);  // raw sizes may multiply past int64
  }
  return true;
}

// Strides like a format: non-decreasing along `order` (C first, N last), each dim at least the
// span of the previous, C stride non-zero, no empty dim, and the N tie rule.
bool is_strides_like_order(IntArrayRef sizes, IntArrayRef strides, std::span<const int64_t> order) {
  if (strides[1] == 0) return false;
  int64_t min = 0;
  for (int64_t d : order) {
    if (sizes[d] == 0) return false;
    if (strides[d] < min) return false;
    // When N is reached with the running minimum still at the C stride, C,H,W carried no
    // information: such a tensor cannot be told from NCHW, and NCHW wins.
    if (d == 0 && min == strides[1]) return false;
    min = strides[d];
    // An empty tensor may hold any strides: the span may pass int64 before its zero dim is met.
    if (sizes[d] > 1) min = detail::saturating_mul(min, sizes[d]);
  }
  return true;
}

// Non-overlapping and dense, without short-cuts: sort non-trivial dims by stride; they must
// tile densely.
bool compute_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  const size_t rank = sizes.size();
  if (rank == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t required = 1;
  for (int64_t d : perm) {
    if (sizes[d] < 2) return true;
    if (strides[d] != required) return false;
    required = detail::saturating_mul(required, sizes[d]);
  }
  return true;
}

// TensorIterator's dim ordering: starting from row-major (innermost dim first in the result),
// an insertion sort that steps over pairs on which should_swap(a, b) has no opinion (0)
// instead of stopping at them; +1 moves b inside a, -1 keeps the order.
template <typename ShouldSwap>
std::vector<int64_t> sort_dims_innermost_first(int64_t rank, ShouldSwap&& should_swap) {
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  for (int64_t i = 1; i < rank; ++i) {
    int64_t j = i;
    for (int64_t k = i - 1; k >= 0; --k) {
      const int c = should_swap(perm[k], perm[j]);
      if (c > 0) {
        std::swap(perm[k], perm[j]);
        j = k;
      } else if (c < 0) {
        break;
      }
    }
  }
  return perm;
}

// Every public entry taking raw geometry checks it first: a length mismatch would otherwise
// read past the strides.
void check_geometry(IntArrayRef sizes, IntArrayRef strides, std::string_view op) {
  LG_CHECK(sizes.size() == strides.size(), "[", op, "] sizes ", sizes, " and strides ", strides,
           " must have the same length");
  LG_CHECK(static_cast<int64_t>(sizes.size()) <= kMaxDims, "[", op, "] received rank ", sizes.size(),
           "; layoutguard supports tensors of rank at most ", kMaxDims);
  for (int64_t s : sizes)
    LG_CHECK(s >= 0, "[", op, "] negative size ", s, " in sizes ", sizes, "; sizes must be non-negative");
}

std::span<const int64_t> order_for(MemoryFormat fmt) {
  if (fmt == MemoryFormat::ChannelsLast) return kChannelsLastOrder;
  return kChannelsLast3dOrder;
}

int64_t rank_for(MemoryFormat fmt) { return fmt == MemoryFormat::ChannelsLast ? 4 : 5; }

}  // namespace

std::vector<int64_t> contiguous_strides(IntArrayRef sizes) {
  checked_numel(sizes, "contiguous_strides");
  std::vector<int64_t> strides(sizes.size());
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = acc;
    // Zero sizes count as 1 here, so an empty tensor's strides can exceed its numel.
    LG_CHECK(!__builtin_mul_overflow(acc, std::max<int64_t>(sizes[i], 1), &acc),
             "[contiguous_strides] sizes ", sizes, " need strides beyond int64");
  }
  return strides;
}

std::vector<int64_t> channels_last_strides(IntArrayRef sizes) {
  LG_CHECK(sizes.size() == 4, "required rank 4 tensor to use channels_last format (got rank ",
           sizes.size(), ", sizes ", sizes, ")");
  return strides_in_order(sizes, kChannelsLastOrder);
}

std::vector<int64_t> channels_last_3d_strides(IntArrayRef sizes) {
  LG_CHECK(sizes.size() == 5, "required rank 5 tensor to use channels_last_3d format (got rank ",
           sizes.size(), ", sizes ", sizes, ")");
  return strides_in_order(sizes, kChannelsLast3dOrder);
}

std::vector<int64_t> strides_for(IntArrayRef sizes, MemoryFormat fmt, std::string_view op) {
  lg::detail::check_memory_format(fmt, op);
  checked_numel(sizes, op);  // negative sizes and overflow first: they make strides meaningless
  switch (fmt) {
    case MemoryFormat::Contiguous: return contiguous_strides(sizes);
    case MemoryFormat::ChannelsLast:
    case MemoryFormat::ChannelsLast3d:
      LG_CHECK(static_cast<int64_t>(sizes.size()) == rank_for(fmt), "[", op, "] required rank ",
               rank_for(fmt), " tensor to use ", memory_format_name(fmt), " format (got rank ",
               sizes.size(), ", sizes ", sizes, ")");
      return strides_in_order(sizes, order_for(fmt));
    case MemoryFormat::Preserve: break;
  }
  detail::throw_value_error(detail::str("[", op, "] unsupported memory format preserve_format: ",
                                        "it chooses a layout from an input and cannot be allocated"));
}

bool is_contiguous(IntArrayRef sizes, IntArrayRef strides, MemoryFormat fmt) {
  lg::detail::check_memory_format(fmt, "is_contiguous");
  check_geometry(sizes, strides, "is_contiguous");
  switch (fmt) {
    case MemoryFormat::Contiguous: return is_plain_contiguous(sizes, strides);
    case MemoryFormat::ChannelsLast:
    case MemoryFormat::ChannelsLast3d:
      return static_cast<int64_t>(sizes.size()) == rank_for(fmt) &&
             is_contiguous_in_order(sizes, strides, order_for(fmt));
    case MemoryFormat::Preserve: break;
  }
  return is_plain_contiguous(sizes, strides);  // c10 answers Preserve like Contiguous
}

bool is_strides_like(IntArrayRef sizes, IntArrayRef strides, MemoryFormat fmt) {
  lg::detail::check_memory_format(fmt, "is_strides_like");
  check_geometry(sizes, strides, "is_strides_like");
  if (fmt != MemoryFormat::ChannelsLast && fmt != MemoryFormat::ChannelsLast3d) return false;
  if (static_cast<int64_t>(sizes.size()) != rank_for(fmt)) return false;
  return is_strides_like_order(sizes, strides, order_for(fmt));
}

Flags compute_flags(IntArrayRef sizes, IntArrayRef strides) {
  check_geometry(sizes, strides, "compute_flags");
  Flags f;
  f.contiguous = is_plain_contiguous(sizes, strides);
  const size_t rank = sizes.size();
  if (rank == 4) {
    f.channels_last_contiguous = is_contiguous_in_order(sizes, strides, kChannelsLastOrder);
    f.channels_last_like = is_strides_like_order(sizes, strides, kChannelsLastOrder);
  } else if (rank == 5) {
    f.channels_last_3d_contiguous = is_contiguous_in_order(sizes, strides, kChannelsLast3dOrder);
    f.channels_last_3d_like = is_strides_like_order(sizes, strides, kChannelsLast3dOrder);
  }
  // c10 short-circuits the general test with the format flags.
  f.non_overlapping_and_dense = f.contiguous || f.channels_last_contiguous ||
                                f.channels_last_3d_contiguous ||
                                compute_non_overlapping_and_dense(sizes, strides);
  return f;
}

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  return compute_flags(sizes, strides).non_overlapping_and_dense;
}

MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides, bool exact_match) {
  check_geometry(sizes, strides, "suggest_memory_format");
  if (is_strides_like(sizes, strides, MemoryFormat::ChannelsLast)) {
    if (!exact_match || strides == IntArrayRef(channels_last_strides(sizes)))
      return MemoryFormat::ChannelsLast;
  } else if (is_strides_like(sizes, strides, MemoryFormat::ChannelsLast3d)) {
    if (!exact_match || strides == IntArrayRef(channels_last_3d_strides(sizes)))
      return MemoryFormat::ChannelsLast3d;
  }
  return MemoryFormat::Contiguous;
}

std::vector<int64_t> innermost_first_order(IntArrayRef sizes, IntArrayRef strides) {
  check_geometry(sizes, strides, "dim_order");
  // One operand: stride-0 dims have no say; equal strides put a strictly larger dim outside.
  return sort_dims_innermost_first(static_cast<int64_t>(sizes.size()), [&](int64_t a, int64_t b) {
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] < strides[b]) return -1;
    if (strides[a] > strides[b]) return 1;
    return sizes[a] > sizes[b] ? 1 : 0;
  });
}

std::vector<int64_t> infer_dense_strides(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<int64_t> out(sizes.size());
  int64_t acc = 1;
  for (int64_t d : innermost_first_order(sizes, strides)) {
    out[d] = acc;
    if (sizes[d] > 1) acc = detail::checked_mul(acc, sizes[d], "[strides] dense strides for sizes ", sizes);
  }
  return out;
}

std::vector<int64_t> preserved_strides(IntArrayRef sizes, IntArrayRef strides) {
  check_geometry(sizes, strides, "preserved_strides");
  if (is_non_overlapping_and_dense(sizes, strides)) return strides.vec();
  return infer_dense_strides(sizes, strides);
}

std::string dim_order(IntArrayRef sizes, IntArrayRef strides) {
  const std::vector<int64_t> perm = innermost_first_order(sizes, strides);
  std::string tag;
  for (auto it = perm.rbegin(); it != perm.rend(); ++it) tag += static_cast<char>('a' + *it);
  return tag;
}

std::string format_name(IntArrayRef sizes, IntArrayRef strides) {
  const Flags f = compute_flags(sizes, strides);
  const MemoryFormat suggested = suggest_memory_format(sizes, strides);
  std::string name;
  if (!f.non_overlapping_and_dense) {
    bool expanded = false;
    for (size_t i = 0; i < sizes.size(); ++i) expanded |= (strides[i] == 0 && sizes[i] > 1);
    if (expanded) return "expanded";
    if (suggested == MemoryFormat::ChannelsLast) return "non-dense channels_last-like";
    if (suggested == MemoryFormat::ChannelsLast3d) return "non-dense channels_last_3d-like";
    return "non-dense";
  }
  if (suggested == MemoryFormat::ChannelsLast) name = "channels_last";
  else if (suggested == MemoryFormat::ChannelsLast3d) name = "channels_last_3d";
  else if (f.contiguous) name = "contiguous";
  else name = "permuted";
  // Size-1 dims make one buffer contiguous in several formats at once (docs/memory-format.md,
  // "Ambiguous shapes: when C == 1 or H == W == 1"). Say so: it is
  // exactly why contiguous(channels_last) can be a no-op that leaves NCHW strides behind.
  std::vector<std::string_view> also;
  if (f.contiguous && name != "contiguous") also.push_back("contiguous");
  if (f.channels_last_contiguous && name != "channels_last") also.push_back("channels_last-contiguous");
  if (f.channels_last_3d_contiguous && name != "channels_last_3d")
    also.push_back("channels_last_3d-contiguous");
  if (!also.empty()) {
    name += " (ambiguous: also ";
    for (size_t i = 0; i < also.size(); ++i) name += (i ? ", " : "") + std::string(also[i]);
    name += ")";
  }
  return name;
}

std::vector<int64_t> broadcast_shapes(const std::vector<IntArrayRef>& shapes, std::string_view op) {
  size_t rank = 0;
  for (IntArrayRef s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const IntArrayRef s = shapes[k];
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      const int64_t v = s[i];
      LG_CHECK(v >= 0, "[", op, "] negative size ", v, " in shape ", to_string(shapes[k]), "; sizes must be non-negative");
      if (v == o || v == 1) continue;
      LG_CHECK(o == 1, "[", op, "] the size of tensor a (", o, ") must match the size of tensor b (",
               v, ") at non-singleton dimension ", rank - s.size() + i, " (shapes ",
               to_string(shapes[k]), " and the broadcast of the operands before it)");
      o = v;
    }
  }
  return out;
}

std::vector<int64_t> pointwise_output_strides(const std::vector<Geometry>& inputs, std::string_view op) {
  std::vector<IntArrayRef> shapes;
  for (const Geometry& g : inputs) {
    check_geometry(g.sizes, g.strides, op);
    shapes.push_back(g.sizes);
  }
  const std::vector<int64_t> shape = broadcast_shapes(shapes, op);
  const int64_t rank = static_cast<int64_t>(shape.size());

  // Step 1-2: the fast path, only when every operand has exactly the broadcast shape and
  // 0-dim scalars are not mixed with tensors (so `x + 1` never takes it).
  bool same_shape = true, any_scalar = false, any_tensor = false;
  for (const Geometry& g : inputs) {
    same_shape = same_shape && g.sizes == IntArrayRef(shape);
    (g.sizes.empty() ? any_scalar : any_tensor) = true;
  }
  if (same_shape && !(any_scalar && any_tensor) && !inputs.empty()) {
    bool all_contiguous = true, all_cl = true, all_dense_equal = true;
    for (const Geometry& g : inputs) {
      all_contiguous = all_contiguous && is_plain_contiguous(g.sizes, g.strides);
      all_cl = all_cl && is_contiguous(g.sizes, g.strides, MemoryFormat::ChannelsLast);
      all_dense_equal = all_dense_equal && g.strides == inputs.front().strides &&
                        is_non_overlapping_and_dense(g.sizes, g.strides);
    }
    // Contiguous is asked first: inputs that are both (NC11-CL) come out with plain strides.
    if (all_contiguous) return contiguous_strides(shape);
    if (all_cl) return channels_last_strides(shape);
    if (all_dense_equal) return inputs.front().strides.vec();
  }

  // Step 3a: effective strides, 0 where an operand is broadcast or lacks the dim.
  std::vector<std::vector<int64_t>> eff;
  for (const Geometry& g : inputs) {
    std::vector<int64_t> e(rank, 0);
    const int64_t offset = rank - static_cast<int64_t>(g.sizes.size());
    for (int64_t i = 0; i < static_cast<int64_t>(g.sizes.size()); ++i)
      e[offset + i] = (g.sizes[i] == 1 && shape[offset + i] != 1) ? 0 : g.strides[i];
    eff.push_back(std::move(e));
  }
  // Step 3b: +1 when dim b must move inside dim a. The first operand with an opinion about
  // the pair decides; equal strides decide only when the inner dim is strictly larger.
  const std::vector<int64_t> perm = sort_dims_innermost_first(rank, [&](int64_t a, int64_t b) {
    for (const std::vector<int64_t>& e : eff) {
      if (e[a] == 0 || e[b] == 0) continue;
      if (e[a] < e[b]) return -1;
      if (e[a] > e[b]) return 1;
      if (shape[a] > shape[b]) return 1;
    }
    return 0;
  });
  // Step 3c: an unchanged order allocates like empty(shape); any other order packs the dims
  // with their raw sizes (so a zero size zeroes the outer strides).
  bool identity = true;
  for (int64_t i = 0; i < rank; ++i) identity = identity && perm[i] == rank - 1 - i;
  if (identity) return contiguous_strides(shape);
  std::vector<int64_t> out(rank);
  int64_t acc = 1;
  for (int64_t d : perm) {
    out[d] = acc;
    acc = detail::checked_mul(acc, shape[d], "[strides] strides for sizes ", shape);
  }
  return out;
}

std::optional<std::vector<int64_t>> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                                 IntArrayRef new_sizes) {
  check_geometry(old_sizes, old_strides, "view");
  // Old sizes that no tensor could have (their product overflows) are refused here, so the
  // chunk products below stay within int64 (the tensor fuzzer passed such raw sizes).
  checked_numel(old_sizes, "view");
  for (int64_t s : new_sizes)
    LG_CHECK(s >= 0, "[view] negative size ", s, " in the new sizes ", new_sizes, "; sizes must be non-negative");
  const int64_t new_rank = static_cast<int64_t>(new_sizes.size());
  if (old_sizes.empty()) return std::vector<int64_t>(new_rank, 1);
  // An empty tensor, told by its zero size (the sizes before it may multiply past int64).
  if (std::find(old_sizes.begin(), old_sizes.end(), 0) != old_sizes.end()) {
    if (old_sizes == new_sizes) return old_strides.vec();
    return contiguous_strides(new_sizes);
  }
  // Walk the old dims from the innermost out, cutting them into chunks that are contiguous
  // among themselves; each chunk must be covered exactly by a run of new dims (ATen's
  // computeStride).
  std::vector<int64_t> out(new_rank);
  int64_t view_d = new_rank - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    const bool chunk_ends =
        d == 0 || (old_sizes[d - 1] != 1 &&
                   old_strides[d - 1] != detail::saturating_mul(tensor_numel, chunk_base_stride));
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
      out[view_d] = detail::checked_mul(view_numel, chunk_base_stride, "[view] a stride for sizes ", new_sizes);
      view_numel = detail::saturating_mul(view_numel, new_sizes[view_d]);
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_base_stride = old_strides[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

std::vector<int64_t> infer_size(IntArrayRef shape, int64_t numel, std::string_view op) {
  LG_CHECK(numel >= 0, "[", op, "] received element count ", numel, "; required a non-negative count");
  // Checked here, under the op's name: the tensor made from the shape would say it otherwise.
  LG_CHECK(static_cast<int64_t>(shape.size()) <= kMaxDims, "[", op, "] received a shape of rank ", shape.size(),
           "; layoutguard supports tensors of rank at most ", kMaxDims);
  std::vector<int64_t> out = shape.vec();
  int64_t known = 1;
  std::optional<size_t> infer_at;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      LG_CHECK(!infer_at, "[", op, "] only one dimension can be inferred (-1) in shape ", shape);
      infer_at = i;
    } else {
      LG_CHECK(shape[i] >= 0, "[", op, "] invalid shape dimension ", shape[i], " in shape ", shape);
      LG_CHECK(!__builtin_mul_overflow(known, shape[i], &known), "[", op, "] shape ", shape,
               " has more elements than int64 can count");
    }
  }
  const bool ok = infer_at ? (known != 0 && numel % known == 0) : known == numel;
  LG_CHECK(ok, "[", op, "] shape ", shape, " is invalid for input of size ", numel);
  if (infer_at) out[*infer_at] = numel / known;
  return out;
}

int64_t checked_numel(IntArrayRef sizes, std::string_view op) {
  LG_CHECK(static_cast<int64_t>(sizes.size()) <= kMaxDims, "[", op, "] received rank ",
           sizes.size(), "; layoutguard supports tensors of rank at most ", kMaxDims);
  int64_t numel = 1;
  for (int64_t s : sizes)
    LG_CHECK(s >= 0, "[", op, "] negative size ", s, " in sizes ", sizes,
             "; sizes must be non-negative");
  for (int64_t s : sizes)
    LG_CHECK(!__builtin_mul_overflow(numel, s, &numel), "[", op, "] sizes ", sizes,
             " describe more elements than int64 can count");
  return numel;
}

int64_t wrap_dim(int64_t dim, int64_t rank, std::string_view op) {
  const int64_t r = std::max<int64_t>(rank, 1);  // a 0-dim tensor accepts dims -1 and 0
  LG_CHECK_INDEX(dim >= -r && dim < r, "[", op, "] dimension out of range (expected to be in range of [",
                 -r, ", ", r - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + r : dim;
}

// The end of both of required_storage_elements' messages.
constexpr const char* kBeyondInt64 =
    " address beyond int64; required: a last element's index, the sum of (size - 1) * stride, below 2^63 - 1";

int64_t required_storage_elements(IntArrayRef sizes, IntArrayRef strides, std::string_view op) {
  LG_CHECK(sizes.size() == strides.size(), "[", op, "] sizes ", sizes, " and strides ", strides,
           " must have the same length");
  for (int64_t st : strides)
    LG_CHECK(st >= 0, "[", op, "] negative stride ", st, " in strides ", strides,
             "; strides must be non-negative");
  // A negative size would make (size - 1) * stride negative, or wrap at INT64_MIN (found by
  // the tensor fuzzer through the raw function).
  for (int64_t s : sizes)
    LG_CHECK(s >= 0, "[", op, "] negative size ", s, " in sizes ", sizes, "; sizes must be non-negative");
  for (int64_t s : sizes)
    if (s == 0) return 0;
  int64_t last = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t span = 0;
    LG_CHECK(!__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) &&
                 !__builtin_add_overflow(last, span, &last),
             "[", op, "] sizes ", sizes, " with strides ", strides, kBeyondInt64);
  }
  // The count of elements is one more than the last index: INT64_MAX itself has no count.
  LG_CHECK(last < std::numeric_limits<int64_t>::max(), "[", op, "] sizes ", sizes, " with strides ", strides,
           kBeyondInt64);
  return last + 1;
}

}  // namespace layout
}  // namespace lg

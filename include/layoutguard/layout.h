// Memory formats and all stride math, as pure functions of (sizes, strides).
//
// A tensor stores sizes and strides only; every format property below is derived from them
// with PyTorch's exact rules (docs/memory-format.md explains them from a user's side).
// lg::Tensor caches the flags; these free functions are what it calls, and what tests and the
// `layoutguard explain` tool call on raw stride vectors.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <layoutguard/int_array_ref.h>

namespace lg {

// Contiguous: row-major (NCHW for 4-D). ChannelsLast: NHWC order, rank 4 only.
// ChannelsLast3d: NDHWC order, rank 5 only. Preserve: an argument value meaning "keep the
// input's layout"; no tensor ever *is* Preserve.
enum class MemoryFormat : int8_t { Contiguous, ChannelsLast, ChannelsLast3d, Preserve };

// "contiguous_format", "channels_last", "channels_last_3d", "preserve_format".
std::string_view memory_format_name(MemoryFormat fmt);
std::ostream& operator<<(std::ostream& out, MemoryFormat fmt);

// Highest rank layoutguard supports (dim orders are spelled with the letters a..y).
inline constexpr int64_t kMaxDims = 25;

namespace layout {

// ---- Stride generators: what a freshly allocated tensor of a format gets
// (docs/memory-format.md, "Formats are read from strides"). ----

// Row-major; a size-0 dim counts as 1: (2,3,0,5) -> (15,5,5,1).
std::vector<int64_t> contiguous_strides(IntArrayRef sizes);
// NHWC order without clamping, so a zero size zeroes outer strides: (2,0,4,5) -> (0,1,0,0).
// Throws ValueError "required rank 4 tensor to use channels_last format" for rank != 4.
std::vector<int64_t> channels_last_strides(IntArrayRef sizes);
// NDHWC order; rank 5 only.
std::vector<int64_t> channels_last_3d_strides(IntArrayRef sizes);
// The generator for fmt; `op` names the caller in errors. Preserve is a ValueError here.
std::vector<int64_t> strides_for(IntArrayRef sizes, MemoryFormat fmt, std::string_view op = "empty");

// ---- Predicates (docs/memory-format.md, "Three questions you can ask a layout"). A wrong
// rank answers false; sizes and strides of different lengths are a ValueError, as everywhere in
// this header. ----

// "Is contiguous for fmt": strides equal fmt's generator, ignoring dims of size 1. A zero-size
// tensor is always Contiguous-contiguous. Preserve is answered like Contiguous, as in c10.
bool is_contiguous(IntArrayRef sizes, IntArrayRef strides,
                   MemoryFormat fmt = MemoryFormat::Contiguous);
// Some permutation of the dims makes the tensor contiguous (with c10's short-cuts).
bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);
// "Strides like channels_last": rank 4, strides non-decreasing in the order C,W,H,N with
// the N tie rule; gaps allowed, so NHWC slices count. Rank 5 uses C,W,H,D,N for ChannelsLast3d.
bool is_strides_like(IntArrayRef sizes, IntArrayRef strides, MemoryFormat fmt);
// The format the operators treat the tensor as (question 3 of docs/memory-format.md):
// ChannelsLast or ChannelsLast3d when the strides are like it, else Contiguous. With
// exact_match, the strides must also equal the format's generator literally.
MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides, bool exact_match = false);

// Every flag lg::Tensor caches, computed together.
struct Flags {
  bool contiguous = true;
  bool channels_last_contiguous = false;
  bool channels_last_3d_contiguous = false;
  bool channels_last_like = false;
  bool channels_last_3d_like = false;
  bool non_overlapping_and_dense = true;
};
Flags compute_flags(IntArrayRef sizes, IntArrayRef strides);

// ---- Orders and dense strides. ----

// The dims from innermost to outermost as TensorIterator orders one operand: ascending stride,
// stride-0 dims have no say, equal strides put the larger dim outside.
std::vector<int64_t> innermost_first_order(IntArrayRef sizes, IntArrayRef strides);
// Dense strides that keep the input's dim order (used by Preserve for non-dense inputs).
std::vector<int64_t> infer_dense_strides(IntArrayRef sizes, IntArrayRef strides);
// The strides of empty_like/clone/to with MemoryFormat::Preserve (docs/memory-format.md,
// "Preserve: `clone()`, `to(dtype)` and the `*_like` factories"): a non-overlapping and dense
// input keeps its strides exactly (size-1 dims included); others get infer_dense_strides.
std::vector<int64_t> preserved_strides(IntArrayRef sizes, IntArrayRef strides);
// The dim order outermost first spelled with letters: "abcd" for NCHW, "acdb" for NHWC.
std::string dim_order(IntArrayRef sizes, IntArrayRef strides);
// A short human name: "contiguous", "channels_last", "channels_last_3d", "permuted",
// "non-dense channels_last-like", "expanded", ... with "(ambiguous: ...)" when the tensor is
// contiguous in more than one format.
std::string format_name(IntArrayRef sizes, IntArrayRef strides);

// ---- Pointwise ops: TensorIterator's choice of output strides. ----

// One operand of a pointwise op: its sizes and strides. A Python-style scalar operand is a
// 0-dim geometry (empty sizes).
struct Geometry {
  IntArrayRef sizes;
  IntArrayRef strides;
};

// The broadcast of all shapes, right-aligned. ValueError "[op] the size of tensor a (3) must
// match the size of tensor b (4) at non-singleton dimension 1" when they do not broadcast.
std::vector<int64_t> broadcast_shapes(const std::vector<IntArrayRef>& shapes, std::string_view op);

// The strides of a freshly allocated output of a pointwise op whose inputs, in argument order,
// are `inputs`, by TensorIterator's rule: the fast path (all contiguous / all channels_last-
// contiguous / all dense with equal strides) when every input has the broadcast shape and
// scalars are not mixed with tensors; otherwise the dim permutation recovered from the
// inputs' strides, the first input that is not broadcast in a pair of dims deciding their
// order. An out= tensor of the right shape keeps its own strides and is not asked here.
std::vector<int64_t> pointwise_output_strides(const std::vector<Geometry>& inputs,
                                              std::string_view op = "pointwise");

// ---- Views (docs/memory-format.md, "Views change strides, and so can change the format"). ----

// PyTorch's computeStride: the strides of `new_sizes` viewing the same elements as
// (old_sizes, old_strides), or nullopt when no such view exists.
std::optional<std::vector<int64_t>> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                                 IntArrayRef new_sizes);
// Resolves one -1 in `shape` against numel; ValueError "[op] shape '(2,-1)' is invalid for
// input of size 7" when impossible.
std::vector<int64_t> infer_size(IntArrayRef shape, int64_t numel, std::string_view op);

// ---- Validation helpers shared by every op. ----

// Product of sizes. ValueError for a negative size or when the product overflows int64.
int64_t checked_numel(IntArrayRef sizes, std::string_view op);
// Wraps a possibly negative dim into [0, rank); IndexError naming op when out of range.
// rank 0 accepts dims -1 and 0 as PyTorch does.
int64_t wrap_dim(int64_t dim, int64_t rank, std::string_view op);
// The smallest storage (in elements) that addresses every element: 0 when numel is 0, else
// 1 + sum((size-1)*stride). ValueError for negative sizes or strides, or overflow.
int64_t required_storage_elements(IntArrayRef sizes, IntArrayRef strides, std::string_view op);

}  // namespace layout
}  // namespace lg

// Joining and splitting with ATen's names and defaults. cat's output layout is PyTorch's vote:
// channels_last when every input suggests it (a legacy empty 1-D input and any
// contiguous-suggesting input vote contiguous). split and chunk return views.
#pragma once

#include <vector>

#include <layoutguard/int_array_ref.h>
#include <layoutguard/tensor.h>

namespace lg {

// Concatenates along dim; every input has the same rank, dtype and device and the same sizes
// outside dim. A 1-D empty tensor (legacy) is skipped for the shape, as in PyTorch.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Joins same-shaped tensors along a new dim (cat along dim, then a view that splits it).
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Views of split_size along dim (the last may be smaller).
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0);
// Views of the given sizes along dim; they must add up to size(dim).
std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef split_sizes, int64_t dim = 0);
// `chunks` views (fewer when size(dim) is small) of ceil(size(dim) / chunks) along dim.
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);

}  // namespace lg

// Reductions and softmax with ATen's names and defaults.
//
// sum, mean, amax, amin: the output is contiguous whatever the input's layout, as in PyTorch
// (rank changes, so the guard treats them as RankChanging). An empty dim list reduces
// every dim. Dims may be negative and must not repeat.
//
// softmax, log_softmax keep the input's layout (dense, same dim order) -- PyTorch 1.13 returns
// contiguous output for channels_last input; docs/operators.md lists this.
#pragma once

#include <optional>

#include <layoutguard/dtype.h>
#include <layoutguard/int_array_ref.h>
#include <layoutguard/tensor.h>

namespace lg {

// Sum over dims; integer and bool inputs sum as int64 unless dtype says otherwise. dtype, when
// given, is the dtype the input is cast to before summing (and the output dtype).
Tensor sum(const Tensor& input, IntArrayRef dim = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
// Arithmetic mean over dims; floating inputs (or a floating dtype) only. An empty reduction
// gives NaN.
Tensor mean(const Tensor& input, IntArrayRef dim = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
// Maximum / minimum over dims (NaN propagates); every dtype but the reduction of zero
// elements is an error.
Tensor amax(const Tensor& input, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& input, IntArrayRef dim = {}, bool keepdim = false);

// exp(x - max) / sum(exp(x - max)) along dim; floating dtypes (dtype: cast first).
Tensor softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype = std::nullopt);
// x - max - log(sum(exp(x - max))) along dim.
Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype = std::nullopt);

// Dropout with probability p in [0, 1]: in training, each element is zeroed with probability
// p and the rest scaled by 1 / (1 - p), drawn from the library's generator (lg::manual_seed
// makes it reproducible); the output keeps the input's layout. Not training, or p == 0: returns
// input itself, as ATen does.
Tensor dropout(const Tensor& input, double p = 0.5, bool train = true);

}  // namespace lg

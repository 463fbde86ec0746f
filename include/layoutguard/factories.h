// Tensor factories, named and ordered as in libtorch (torch::empty, torch::zeros_like, ...).
//
// Every factory validates its sizes (no negative size, numel and bytes within int64) and its
// format (ChannelsLast needs rank 4, ChannelsLast3d rank 5, Preserve is not a format to
// allocate). Devices other than the CPU need the CUDA backend.
#pragma once

#include <cstdint>
#include <optional>

#include <layoutguard/layout.h>
#include <layoutguard/scalar.h>
#include <layoutguard/storage.h>
#include <layoutguard/tensor.h>
#include <layoutguard/tensor_options.h>

namespace lg {

// Uninitialised memory with the strides of fmt's generator (layout.h); bool memory on the CPU is
// zeroed, because reading a bool byte other than 0 or 1 is undefined behaviour.
Tensor empty(IntArrayRef sizes, TensorOptions options = {},
             MemoryFormat fmt = MemoryFormat::Contiguous);
// Uninitialised memory with exactly these strides (non-negative; overlap allowed).
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
Tensor zeros(IntArrayRef sizes, TensorOptions options = {});
Tensor ones(IntArrayRef sizes, TensorOptions options = {});
// Without a dtype in options, the dtype follows the value: bool, int64 or float32.
Tensor full(IntArrayRef sizes, const Scalar& fill_value, TensorOptions options = {});
// [start, end) in steps of step; int64 when all three are integers, else float32, unless
// options say otherwise. ValueError for step 0 or a step pointing away from end.
Tensor arange(const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
              TensorOptions options = {});

// Seeds the generator behind rand, randn and randint (and their *_like forms).
void manual_seed(uint64_t seed);
// Uniform in [0, 1); floating dtypes only.
Tensor rand(IntArrayRef sizes, TensorOptions options = {});
// Standard normal; floating dtypes only.
Tensor randn(IntArrayRef sizes, TensorOptions options = {});
// Uniform integers in [low, high); int64 unless options say otherwise.
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions options = {});
Tensor randint(int64_t high, IntArrayRef sizes, TensorOptions options = {});

// Wraps caller-owned memory without copying. `data` must be non-null unless the tensor has no
// elements; `deleter` (optional) runs when the last tensor using the memory is gone. With
// strides given, every addressed element must lie in memory the caller owns.
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, const Deleter& deleter, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const Deleter& deleter,
                 TensorOptions options = {});

// The *_like family: same sizes, dtype and device as t (options override what they set).
// Preserve keeps t's strides when t is dense and t's dim order otherwise; a concrete format
// gets that format's generator strides.
Tensor empty_like(const Tensor& t, MemoryFormat fmt = MemoryFormat::Preserve);
Tensor empty_like(const Tensor& t, TensorOptions options, MemoryFormat fmt = MemoryFormat::Preserve);
Tensor zeros_like(const Tensor& t, MemoryFormat fmt = MemoryFormat::Preserve);
Tensor zeros_like(const Tensor& t, TensorOptions options, MemoryFormat fmt = MemoryFormat::Preserve);
Tensor ones_like(const Tensor& t, MemoryFormat fmt = MemoryFormat::Preserve);
Tensor ones_like(const Tensor& t, TensorOptions options, MemoryFormat fmt = MemoryFormat::Preserve);
Tensor full_like(const Tensor& t, const Scalar& fill_value, MemoryFormat fmt = MemoryFormat::Preserve);
Tensor full_like(const Tensor& t, const Scalar& fill_value, TensorOptions options,
                 MemoryFormat fmt = MemoryFormat::Preserve);
Tensor rand_like(const Tensor& t, MemoryFormat fmt = MemoryFormat::Preserve);
Tensor rand_like(const Tensor& t, TensorOptions options, MemoryFormat fmt = MemoryFormat::Preserve);
Tensor randn_like(const Tensor& t, MemoryFormat fmt = MemoryFormat::Preserve);
Tensor randn_like(const Tensor& t, TensorOptions options, MemoryFormat fmt = MemoryFormat::Preserve);

}  // namespace lg

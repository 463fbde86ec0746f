// Bad input gets a clear lg::Error of the right kind that names the op, what was received and
// what was required -- never a crash or corrupted data.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <layoutguard/cuda.h>
#include <layoutguard/nn/basic.h>
#include <layoutguard/nn/conv.h>
#include <layoutguard/nn/normalization.h>

#include "support/tensor_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;

// Runs fn, expects an exception of type E whose message contains every fragment.
template <typename E, typename Fn>
void expect_error(Fn&& fn, std::initializer_list<const char*> fragments) {
  try {
    fn();
    FAIL("expected an exception");
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string f : fragments) {
      CAPTURE(msg);
      CAPTURE(f);
      CHECK(msg.find(f) != std::string::npos);
    }
  }
}

}  // namespace

TEST_SUITE("errors") {

TEST_CASE("negative sizes and element counts beyond int64 are rejected by every factory") {
  expect_error<lg::ValueError>([] { lg::empty({2, -1, 3}); }, {"[empty]", "negative size -1", "(2,-1,3)"});
  expect_error<lg::ValueError>([] { lg::zeros({-4}); }, {"negative size -4"});
  expect_error<lg::ValueError>([] { lg::empty_strided({2, -3}, {1, 1}); }, {"[empty_strided]", "negative size"});
  const int64_t big = int64_t{1} << 40;
  expect_error<lg::ValueError>([&] { lg::empty({big, big}); }, {"[empty]", "more elements than int64"});
  expect_error<lg::ValueError>([&] { lg::empty({big, 1 << 22}); }, {"[empty]", "bytes"});
  expect_error<lg::ValueError>([&] { lg::empty({big, big}, {}, MemoryFormat::ChannelsLast); },
                               {"more elements than int64"});
  // Empty, yet its contiguous strides (zero sizes count as 1) would not fit int64.
  expect_error<lg::ValueError>([&] { lg::empty({0, big, big}); }, {"strides beyond int64"});
  // Countable but beyond any address space (2^50 bytes): the out-of-memory error, as on a device.
  expect_error<lg::OutOfMemoryError>([] { lg::empty({int64_t{1} << 48}); },
                                     {"[cpu allocator] out of host memory", "1125899906842624 bytes"});
  std::vector<int64_t> too_many(26, 1);
  expect_error<lg::ValueError>([&] { lg::empty(too_many); }, {"rank at most 25"});
}

TEST_CASE("formats at the wrong rank fail with PyTorch's message") {
  expect_error<lg::ValueError>([] { lg::empty({2, 3, 4}, {}, MemoryFormat::ChannelsLast); },
                               {"required rank 4 tensor to use channels_last format"});
  expect_error<lg::ValueError>([] { lg::empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast3d); },
                               {"required rank 5 tensor to use channels_last_3d format"});
  Tensor x3 = lg::zeros({2, 3, 4});
  expect_error<lg::ValueError>([&] { x3.to(MemoryFormat::ChannelsLast); },
                               {"[to]", "required rank 4 tensor to use channels_last format"});
  expect_error<lg::ValueError>([&] { x3.contiguous(MemoryFormat::ChannelsLast); },
                               {"required rank 4 tensor to use channels_last format"});
  expect_error<lg::ValueError>([&] { x3.clone(MemoryFormat::ChannelsLast3d); },
                               {"required rank 5 tensor to use channels_last_3d format"});
  expect_error<lg::ValueError>([&] { lg::empty_like(x3, MemoryFormat::ChannelsLast); },
                               {"required rank 4 tensor"});
  expect_error<lg::ValueError>([] { lg::empty({2, 3}, {}, MemoryFormat::Preserve); },
                               {"[empty]", "unsupported memory format preserve_format"});
  Tensor t = lg::zeros({2, 3}).transpose(0, 1);
  expect_error<lg::ValueError>([&] { t.contiguous(MemoryFormat::Preserve); },
                               {"[contiguous]", "preserve memory format is unsupported"});
  // The predicates never throw.
  CHECK_FALSE(x3.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK_FALSE(x3.is_contiguous(MemoryFormat::ChannelsLast3d));
}

TEST_CASE("an empty tensor whose other sizes multiply past int64 has 0 elements in every dim order") {
  // The tensor fuzzer's finding: (0, 2^32, 2^62 - 1) is valid, and its transpose's numel was a
  // product that overflowed before it reached the 0.
  const int64_t big = (int64_t{1} << 62) - 1;
  const lg::Tensor t = lg::empty({1}).as_strided({0, int64_t{1} << 32, big}, {1, 1, 1});
  CHECK(t.numel() == 0);
  CHECK(t.transpose(0, 2).numel() == 0);
  CHECK(t.permute({1, 2, 0}).numel() == 0);
  CHECK(t.permute({1, 2, 0}).contiguous().numel() == 0);
}

TEST_CASE("the raw layout functions reject mismatched or negative geometry") {
  namespace L = lg::layout;
  expect_error<lg::ValueError>([] { L::is_contiguous({2, 3, 4, 5}, {1, 2}); }, {"[is_contiguous]", "same length"});
  expect_error<lg::ValueError>([] { L::is_non_overlapping_and_dense({2, 3}, {1}); }, {"same length"});
  expect_error<lg::ValueError>([] { L::is_strides_like({2, 3, 4, 5}, {1}, MemoryFormat::ChannelsLast); }, {"same length"});
  expect_error<lg::ValueError>([] { L::suggest_memory_format({2, 3, 4, 5}, {}); }, {"[suggest_memory_format]"});
  expect_error<lg::ValueError>([] { L::infer_dense_strides({2, 3}, {1, 2, 3}); }, {"same length"});
  expect_error<lg::ValueError>([] { L::preserved_strides({2, 3}, {1}); }, {"[preserved_strides]", "same length"});
  expect_error<lg::ValueError>([] { L::preserved_strides({-2, 3}, {3, 1}); }, {"[preserved_strides]", "negative size -2"});
  expect_error<lg::ValueError>([] { L::dim_order({2}, {}); }, {"[dim_order]"});
  expect_error<lg::ValueError>([] { L::format_name({2, 3}, {1}); }, {"same length"});
  expect_error<lg::ValueError>([] { L::view_strides({2, 3}, {3}, {6}); }, {"[view]", "same length"});
  expect_error<lg::ValueError>([] { L::pointwise_output_strides({{{2, 3}, {1}}}, "add"); }, {"[add]", "same length"});
  expect_error<lg::ValueError>([] { L::contiguous_strides({2, -3}); }, {"negative size -3"});
  expect_error<lg::ValueError>([] { L::channels_last_strides({2, -3, 4, 5}); }, {"negative size -3"});
  expect_error<lg::ValueError>([] { L::infer_size({2, -1}, 7, "view"); }, {"[view]", "invalid for input of size 7"});
  expect_error<lg::IndexError>([] { L::wrap_dim(3, 2, "sum"); }, {"[sum]", "[-2, 1], but got 3"});
  // Negative sizes and ranks past kMaxDims (these once gave (-5), (-3,1), (-3) and a tag of
  // punctuation).
  expect_error<lg::ValueError>([] { L::infer_size({-1}, -5, "view"); }, {"[view]", "element count -5"});
  expect_error<lg::ValueError>([] { L::view_strides({2, 3}, {3, 1}, {-2, -3}); }, {"[view]", "negative size -2"});
  expect_error<lg::ValueError>([] { L::required_storage_elements({std::numeric_limits<int64_t>::min(), 2}, {1, 1}, "as_strided"); },
                               {"[as_strided]", "negative size"});
  // Old sizes whose product overflows (the tensor fuzzer's finding: 2^62-1 x 5 in a chunk product).
  expect_error<lg::ValueError>([] { L::view_strides({(int64_t{1} << 62) - 1, 5}, {5, 1}, {5}); },
                               {"[view]", "more elements than int64 can count"});
  expect_error<lg::ValueError>([] { L::broadcast_shapes({{-3}, {1}}, "add"); }, {"[add]", "negative size -3"});
  expect_error<lg::ValueError>([] { L::is_contiguous({2, -3}, {3, 1}); }, {"[is_contiguous]", "negative size -3"});
  const std::vector<int64_t> ones30(30, 1);
  expect_error<lg::ValueError>([&] { L::dim_order(ones30, ones30); }, {"[dim_order]", "rank 30"});
}

TEST_CASE("size sums and printed int64 values stay exact") {
  constexpr int64_t M = std::numeric_limits<int64_t>::max();
  expect_error<lg::ValueError>([] { lg::cat({lg::zeros({0, M}), lg::zeros({0, M})}, 1); },
                               {"[cat]", "more than int64"});
  std::ostringstream printed;
  printed << lg::full({1}, M - 2, lg::kInt64);
  CHECK(printed.str().find("9223372036854775805") != std::string::npos);
}

TEST_CASE("impossible views name the input layout and point to reshape") {
  Tensor cl = lg::empty({2, 3, 4, 5}, {}, MemoryFormat::ChannelsLast);
  expect_error<lg::ValueError>([&] { cl.view({2, 60}); },
                               {"[view]", "(2,60)", "(2,3,4,5):(60,1,15,3)", "use reshape()"});
  expect_error<lg::ValueError>([&] { cl.view({7, -1}); }, {"[view]", "invalid for input of size 120"});
  expect_error<lg::ValueError>([&] { cl.view({-1, -1}); }, {"only one dimension can be inferred"});
  expect_error<lg::ValueError>([&] { cl.reshape({0, -1}); }, {"[reshape]", "invalid for input of size 120"});
  expect_error<lg::ValueError>([&] { cl.view({-2, 60}); }, {"invalid shape dimension -2"});
  expect_error<lg::ValueError>([&] { cl.expand({2, 5, 4, 5}); },
                               {"[expand]", "must match the existing size (3)"});
  expect_error<lg::ValueError>([&] { cl.expand({4, 5}); }, {"[expand]", "greater or equal"});
  expect_error<lg::ValueError>([&] { cl.expand({-1, 2, 3, 4, 5}); }, {"leading, non-existing dimension 0"});
  expect_error<lg::ValueError>([&] { cl.permute({0, 1, 1, 2}); }, {"[permute]", "repeated dim"});
  expect_error<lg::ValueError>([&] { cl.permute({0, 1, 2}); }, {"[permute]", "does not match"});
  expect_error<lg::ValueError>([&] { cl.flatten(2, 1); }, {"[flatten]", "cannot come after"});
  expect_error<lg::ValueError>([&] { cl.slice(1, 0, 2, 0); }, {"[slice]", "step must be positive"});
  expect_error<lg::ValueError>([&] { cl.narrow(1, 1, 3); }, {"[narrow]", "exceeds dimension"});
  expect_error<lg::ValueError>([&] { cl.narrow(1, 1, -1); }, {"[narrow] received length -1; required a non-negative length"});
  // A shape past the rank limit is named by the op given it, not by the tensor it would make.
  std::vector<int64_t> rank26(26, 1);
  rank26[0] = cl.numel();
  expect_error<lg::ValueError>([&] { cl.reshape(rank26); }, {"[reshape] received a shape of rank 26"});
  expect_error<lg::ValueError>([&] { cl.contiguous().view(rank26); }, {"[view] received a shape of rank 26"});
}

TEST_CASE("dims and indices out of range are IndexErrors with the valid range") {
  Tensor t = lg::zeros({2, 3, 4, 5});
  expect_error<lg::IndexError>([&] { t.size(4); }, {"[size]", "expected to be in range of [-4, 3], but got 4"});
  expect_error<lg::IndexError>([&] { t.stride(-5); }, {"[stride]", "but got -5"});
  expect_error<lg::IndexError>([&] { t.transpose(0, 7); }, {"[transpose]"});
  expect_error<lg::IndexError>([&] { t.unsqueeze(6); }, {"[unsqueeze]", "[-5, 4]"});
  expect_error<lg::IndexError>([&] { t.select(1, 3); }, {"[select]", "index 3 is out of bounds for dimension 1 with size 3"});
  expect_error<lg::IndexError>([&] { t.select(1, -4); }, {"[select]", "index -4"});
  expect_error<lg::IndexError>([&] { t.squeeze(9); }, {"[squeeze]"});
  expect_error<lg::IndexError>([&] { t.flatten(0, 4); }, {"[flatten]"});
  expect_error<lg::IndexError>([&] { t.narrow(0, 5, 0); }, {"[narrow]", "start (5)"});
  Tensor s = lg::full({}, 3.0);
  expect_error<lg::IndexError>([&] { s.select(0, 0); }, {"[select]", "0-dim"});
  expect_error<lg::IndexError>([&] { s.slice(0); }, {"[slice]", "0-dim"});
  expect_error<lg::IndexError>([&] { s.size(0); }, {"[size]", "no dimensions"});
  expect_error<lg::IndexError>([&] { s.stride(-1); }, {"[stride]", "no dimensions"});
  CHECK(s.squeeze(0).dim() == 0);  // rank 0 accepts dim 0 and -1, as in PyTorch
  CHECK(s.unsqueeze(-1).dim() == 1);
}

TEST_CASE("as_strided beyond the storage is rejected") {
  Tensor t = lg::zeros({2, 3});
  expect_error<lg::ValueError>([&] { t.as_strided({2, 4}, {4, 1}); },
                               {"[as_strided]", "need 8 elements", "holds 6 elements"});
  expect_error<lg::ValueError>([&] { t.as_strided({2, 3}, {3, 1}, 1); }, {"[as_strided]", "need 7"});
  expect_error<lg::ValueError>([&] { t.as_strided({2, 3}, {-3, 1}); }, {"[as_strided]", "negative stride -3"});
  expect_error<lg::ValueError>([&] { t.as_strided({2, 3}, {3}); }, {"[as_strided]", "same length"});
  expect_error<lg::ValueError>([&] { t.as_strided({2, 3}, {3, 1}, -1); }, {"storage offset must be non-negative"});
  // Within bounds works, including an overlapping geometry and a zero-size one.
  CHECK(t.as_strided({3, 3}, {1, 1}).numel() == 9);
  CHECK(t.as_strided({0, 100}, {100, 1}, 6).numel() == 0);
}

TEST_CASE("arguments near int64's top raise instead of wrapping into a plausible size") {
  constexpr int64_t M = std::numeric_limits<int64_t>::max();
  // as_strided: offset + span past int64 (once a segfault and heap corruption).
  const Tensor bytes = lg::zeros({4}, lg::kUInt8);
  expect_error<lg::ValueError>([&] { bytes.as_strided({1}, {1}, M); }, {"[as_strided]", "more than int64 can count"});
  // expand: an element count past int64 (once numel() == 1 and a sum that never ended).
  expect_error<lg::ValueError>([] { lg::full({1, 1}, 5.f).expand({274177, 67280421310721}); },
                               {"[expand]", "more elements than int64"});
  // slice with a huge step: one element, the plain stride; never a negative size.
  const Tensor t = lg::arange(0, 10, 1, lg::kFloat32);
  CHECK(t.slice(0, 3, 10, M - 5).sizes() == lg::IntArrayRef{1});
  CHECK(t.slice(0, 0, 10, M).sizes() == lg::IntArrayRef{1});
  CHECK(t.slice(0, 3, 10, M - 5).item<float>() == 3.0f);
  CHECK(t.slice(0, 0, 1, 3).stride(0) == 3);  // stride * step whenever it fits, as in PyTorch
  const Tensor sliced = lg::zeros({10, 10}).slice(0, 0, 10, int64_t{1} << 62);  // once stride -2^63
  CHECK(sliced.sizes() == lg::IntArrayRef{1, 10});
  CHECK(sliced.stride(0) == 10);
  // narrow and chunk: start + length and n + chunks overflowed.
  expect_error<lg::ValueError>([&] { t.narrow(0, 1, M); }, {"[narrow]", "exceeds dimension"});
  expect_error<lg::ValueError>([&] { t.narrow(0, -5, M); }, {"[narrow]", "exceeds dimension"});
  CHECK(lg::chunk(t, M).size() == 10);
  CHECK(lg::chunk(t, M - 5).size() == 10);
  // pixel_shuffle: r * r wrapped to 0 (SIGFPE).
  expect_error<lg::ValueError>([] { lg::pixel_shuffle(lg::zeros({1, 4, 2, 2}), int64_t{1} << 32); },
                               {"[pixel_shuffle]", "beyond int64"});
  // conv, pooling and pad size arithmetic.
  const Tensor x = lg::randn({1, 3, 8, 8}), w = lg::randn({4, 3, 3, 3});
  expect_error<lg::ValueError>([&] { lg::conv2d(x, w, std::nullopt, {1}, {0}, {M}); }, {"[conv2d]", "beyond int64"});
  expect_error<lg::ValueError>([&] { lg::conv2d(x, w, std::nullopt, {1}, lg::PaddingMode::Same, {int64_t{1} << 62}); },
                               {"[conv2d]", "beyond int64"});
  expect_error<lg::ValueError>([&] { lg::conv_transpose2d(x, lg::randn({3, 4, 3, 3}), std::nullopt, {1}, {M}); },
                               {"[conv_transpose2d]"});
  expect_error<lg::ValueError>([&] { lg::max_pool2d(x, {3}, {1}, {0}, {M}); }, {"[max_pool2d]", "too small"});
  expect_error<lg::ValueError>([&] { lg::max_pool2d(x, {M}); }, {"[max_pool2d]", "too small"});
  expect_error<lg::ValueError>([&] { lg::pad(x, {M, M}); }, {"[pad]", "beyond int64"});
  expect_error<lg::ValueError>([&] { lg::pad(x, {-M, -M}); }, {"[pad]", "beyond int64"});
  expect_error<lg::ValueError>([&] { lg::pad(x, {-5, -5}); }, {"[pad]", "negative output size"});
  expect_error<lg::ValueError>([&] { lg::interpolate(x, {}, {1e300}); }, {"[interpolate]", "beyond int64"});
  // arange: the count of a valid 2-element range and of a range wider than int64.
  CHECK(lg::arange(0, M, M / 2 + 1).numel() == 2);
  expect_error<lg::ValueError>([] { lg::arange(std::numeric_limits<int64_t>::min(), M); },
                               {"[arange]", "more elements than int64"});
  expect_error<lg::ValueError>([] { lg::arange(0, 5, 1, lg::kBool); }, {"[arange]", "bool"});
}

TEST_CASE("views, convolutions and conv layers whose size products pass int64 raise instead of wrapping") {
  constexpr int64_t big = int64_t{1} << 62;
  // A tensor with a zero-size dim addresses nothing, so any strides are valid for it, and the
  // products of its sizes and strides are not bounded by its storage.
  const Tensor one = lg::zeros({1});
  const Tensor empty_rows = one.as_strided({0, 4, 4}, {1, big, 1});
  expect_error<lg::ValueError>([&] { empty_rows.unsqueeze(1); }, {"[unsqueeze]", "4 * 4611686018427387904", "beyond int64"});
  expect_error<lg::ValueError>([&] { empty_rows.select(1, 3); }, {"[select]", "3 * 4611686018427387904", "beyond int64"});
  expect_error<lg::ValueError>([&] { empty_rows.slice(1, 3, 4); }, {"[slice]", "3 * 4611686018427387904", "beyond int64"});
  CHECK(empty_rows.unsqueeze(3).stride(3) == 1);  // the innermost new dim needs no product
  // The last index at INT64_MAX: one element more than int64 can count.
  constexpr int64_t M = std::numeric_limits<int64_t>::max();
  expect_error<lg::ValueError>([] { lg::layout::required_storage_elements({2}, {M}, "probe"); },
                               {"[probe]", "address beyond int64"});
  const Tensor wide = one.as_strided({0, int64_t{1} << 40, int64_t{1} << 40}, {1, 1, 1});
  expect_error<lg::ValueError>([&] { wide.flatten(1, 2); }, {"[flatten]", "beyond int64"});
  const Tensor tall = one.as_strided({4, 0}, {big, 1});
  expect_error<lg::ValueError>([&] { tall.expand({2, 4, 0}); }, {"[expand]", "beyond int64"});
  // conv with huge groups: weight channels times groups (once wrapped into a plausible count).
  const Tensor no_channels = lg::zeros({1, 0, 4, 4});
  expect_error<lg::ValueError>([&] { lg::conv2d(no_channels, lg::zeros({0, 2, 3, 3}), std::nullopt, {1}, {0}, {1}, big); },
                               {"[conv2d]", "groups=4611686018427387904", "beyond int64"});
  expect_error<lg::ValueError>(
      [&] { lg::conv_transpose2d(no_channels, lg::zeros({0, 2, 3, 3}), std::nullopt, {1}, {0}, {0}, big); },
      {"[conv_transpose2d]", "beyond int64"});
  // nn::Conv2d's fan-in: in_channels / groups times the kernel's receptive field.
  expect_error<lg::ValueError>([&] { lg::nn::Conv2d(lg::nn::Conv2dOptions(big, 1, {3, 3})); },
                               {"[nn::Conv2d] fan_in", "beyond int64"});
}

TEST_CASE("a layer whose parameters cannot be made names itself before the factory") {
  const int64_t big = int64_t{1} << 40;
  // Sizes int64 cannot count (ValueError) and sizes no memory holds (OutOfMemoryError, 2^50 bytes).
  CHECK_THROWS_WITH_AS(lg::nn::Linear(lg::nn::LinearOptions(big, big)),
                       doctest::Contains("[nn::Linear] [empty] sizes (1099511627776,1099511627776)"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::nn::Linear(lg::nn::LinearOptions(int64_t{1} << 24, int64_t{1} << 24)),
                       doctest::Contains("[nn::Linear] [cpu allocator] out of host memory"), lg::OutOfMemoryError);
  CHECK_THROWS_WITH_AS(lg::nn::Conv2d(lg::nn::Conv2dOptions(big, big, {3, 3})),
                       doctest::Contains("[nn::Conv2d] [empty] sizes"), lg::ValueError);
  const int64_t huge = int64_t{1} << 48;
  CHECK_THROWS_WITH_AS(lg::nn::BatchNorm2d(lg::nn::BatchNormOptions(huge)),
                       doctest::Contains("[nn::BatchNorm2d] [cpu allocator]"), lg::OutOfMemoryError);
  CHECK_THROWS_WITH_AS(lg::nn::GroupNorm(lg::nn::GroupNormOptions(1, huge)),
                       doctest::Contains("[nn::GroupNorm] [cpu allocator]"), lg::OutOfMemoryError);
  CHECK_THROWS_WITH_AS(lg::nn::LayerNorm(lg::nn::LayerNormOptions({big, big})),
                       doctest::Contains("[nn::LayerNorm] [empty] sizes"), lg::ValueError);
}

TEST_CASE("dtypes and memory formats made by casting an integer are ValueErrors at every entry point") {
  const auto bad_dtype = static_cast<lg::DType>(42);
  const auto bad_format = static_cast<MemoryFormat>(9);
  // zeros once stored through a null pointer; Module::to once accepted the format silently.
  expect_error<lg::ValueError>([&] { lg::zeros({2}, bad_dtype); }, {"dtype 42 is not a DType", "float32"});
  expect_error<lg::ValueError>([&] { lg::empty({2}, lg::TensorOptions().dtype(bad_dtype)); }, {"dtype 42"});
  float data[2] = {0, 0};
  expect_error<lg::ValueError>([&] { lg::from_blob(data, {2}, lg::TensorOptions().dtype(bad_dtype)); },
                               {"[from_blob]", "dtype 42"});
  const Tensor x = lg::zeros({1, 2, 3, 4});
  expect_error<lg::ValueError>([&] { x.to(bad_dtype); }, {"dtype 42"});
  expect_error<lg::ValueError>([&] { lg::empty({1, 2, 3, 4}, lg::TensorOptions(), bad_format); },
                               {"memory format 9 is not a MemoryFormat", "channels_last"});
  expect_error<lg::ValueError>([&] { x.to(bad_format); }, {"memory format 9"});
  expect_error<lg::ValueError>([&] { x.contiguous(bad_format); }, {"memory format 9"});
  expect_error<lg::ValueError>([&] { (void)x.is_contiguous(bad_format); }, {"[is_contiguous]", "memory format 9"});
  lg::nn::Conv2d conv(lg::nn::Conv2dOptions(2, 2, {3, 3}));
  expect_error<lg::ValueError>([&] { conv.to(bad_format); }, {"[nn::Module::to]", "memory format 9"});
  expect_error<lg::ValueError>([&] { conv.to(bad_dtype); }, {"[nn::Module::to]", "dtype 42"});
}

TEST_CASE("fill values that overflow the dtype are rejected, as in PyTorch; operands keep cast rules") {
  expect_error<lg::ValueError>([] { lg::full({2}, 300, lg::kUInt8); }, {"[fill_]", "300", "uint8"});
  expect_error<lg::ValueError>([] { lg::full({2}, 1e40, lg::kFloat16); }, {"[fill_]", "float16"});
  expect_error<lg::ValueError>([] { lg::zeros({2}, lg::kInt32).fill_(int64_t{10000000000}); }, {"[fill_]", "int32"});
  expect_error<lg::ValueError>([] { lg::full({2}, std::nan(""), lg::kInt64); }, {"[fill_]", "int64"});
  expect_error<lg::ValueError>([] { lg::pad(lg::zeros({1, 1, 2, 2}, lg::kInt32), {1, 1}, "constant", 1e30); },
                               {"[pad]", "int32"});
  expect_error<lg::ValueError>([] { lg::randint(0, int64_t{1} << 60, {3}, lg::kFloat16); }, {"[randint]", "float16"});
  CHECK(lg::full({1}, -1, lg::kUInt8).item<uint8_t>() == 255);  // negative uint8 values wrap
  CHECK(std::isinf(lg::full({1}, INFINITY, lg::kFloat16).item<float>()));
  CHECK(lg::full({1}, 65504.0, lg::kFloat16).item<float>() == 65504.0f);
  expect_error<lg::ValueError>([] { lg::zeros({2}, lg::kUInt8).fill_(-1.0); }, {"[fill_]", "uint8"});  // only integers wrap
  // A scalar operand of a pointwise op converts like a tensor cast: u8 + 300 wraps, a float32
  // tensor times 1e39 is infinity, and a float64 op keeps the scalar's every bit.
  CHECK(lg::add(lg::ones({1}, lg::kUInt8), 300).item<uint8_t>() == 45);
  CHECK(std::isinf(lg::mul(lg::ones({1}), 1e39).item<float>()));
  CHECK(lg::add(lg::ones({1}, lg::kFloat64), 0.1).item<double>() == 1.1);
  CHECK(lg::mul(lg::ones({1}, lg::kFloat64), 1e300).item<double>() == 1e300);
}

TEST_CASE("training norms refuse running stats that share memory") {
  const Tensor x = lg::randn({2, 4, 3, 3});
  expect_error<lg::ValueError>([&] { lg::batch_norm(x, std::nullopt, std::nullopt, lg::zeros({1}).expand({4}), lg::ones({4}), true); },
                               {"[batch_norm]", "single memory location"});
  const Tensor stats = lg::zeros({4});
  expect_error<lg::ValueError>([&] { lg::batch_norm(x, std::nullopt, std::nullopt, stats, stats, true); },
                               {"[batch_norm]", "share memory"});
  expect_error<lg::ValueError>([&] {
    lg::instance_norm(x, std::nullopt, std::nullopt, lg::zeros({1}).expand({4}), lg::ones({4}), true);
  }, {"[instance_norm]", "single memory location"});
  // Evaluation only reads them: an expanded stat is fine there.
  CHECK_NOTHROW(lg::batch_norm(x, std::nullopt, std::nullopt, lg::zeros({1}).expand({4}), lg::ones({1}).expand({4}), false));
}

TEST_CASE("tables sized by a huge output raise OutOfMemoryError or ValueError, not std::bad_alloc") {
  // Outputs beyond int64 or beyond any address space (2^45 x 96 bytes): they fail before an
  // index table of one entry per output position is built, whatever the machine's overcommit.
  const Tensor x = lg::randn({1, 3, 8, 8});
  const auto lg_error_only = [](auto&& fn) {
    try {
      fn();
      FAIL("expected an exception");
    } catch (const lg::Error& e) {
      CHECK(std::string(e.what()).find('[') == 0);
    } catch (const std::bad_alloc&) {
      FAIL("std::bad_alloc escaped");
    }
  };
  lg_error_only([&] { lg::adaptive_max_pool2d(x, {std::numeric_limits<int64_t>::max(), 1}); });
  lg_error_only([&] { lg::upsample_nearest2d(x, {int64_t{1} << 45, 1}); });
  lg_error_only([&] { lg::pad(x, {int64_t{1} << 45, 0}); });
  lg_error_only([&] { lg::pad(x, {int64_t{1} << 45, 0}, "replicate"); });
  // An empty output builds no table at all, however large its other dims.
  CHECK(lg::pad(lg::empty({0, 5}), {0, int64_t{1} << 50}).sizes() == lg::IntArrayRef{0, 5 + (int64_t{1} << 50)});
  CHECK(lg::adaptive_avg_pool2d(lg::empty({0, 1, 4, 4}), {int64_t{1} << 40, 1}).numel() == 0);
  CHECK(lg::upsample_nearest2d(lg::empty({0, 1, 4, 4}), {int64_t{1} << 40, 1}).numel() == 0);
}

TEST_CASE("from_blob refuses null data, and element access checks numel and dtype") {
  expect_error<lg::ValueError>([] { lg::from_blob(nullptr, {2, 3}); },
                               {"[from_blob]", "null data pointer", "(2,3)"});
  CHECK(lg::from_blob(nullptr, {0, 3}).numel() == 0);  // nothing to address
  float buf[4] = {1, 2, 3, 4};
  expect_error<lg::ValueError>([&] { lg::from_blob(buf, {2, -2}); }, {"[from_blob]", "negative size"});
  Tensor t = lg::from_blob(buf, {2, 2});
  expect_error<lg::ValueError>([&] { t.item(); },
                               {"[item]", "4 elements", "(2,2)", "exactly one element"});
  expect_error<lg::TypeError>([&] { t.data_ptr<double>(); },
                              {"[data_ptr]", "expected element type float64", "holds float32"});
  expect_error<lg::TypeError>([&] { t.data_ptr<lg::Half>(); }, {"float16"});
  CHECK(t.data_ptr<float>() == buf);
  CHECK(t.select(0, 1).select(0, 1).item<float>() == 4.0f);
}

TEST_CASE("undefined tensors and bad writes are errors") {
  Tensor u;
  CHECK_FALSE(u.defined());
  expect_error<lg::ValueError>([&] { u.dim(); }, {"undefined"});
  expect_error<lg::ValueError>([&] { lg::zeros({2}).copy_(u); }, {"[copy_]", "undefined tensor as src"});
  expect_error<lg::ValueError>([&] { lg::empty_like(u); }, {"[empty_like]", "undefined"});
  CHECK(lg::describe_layout(u) == "undefined tensor");
  Tensor expanded = lg::zeros({3, 1}).expand({3, 4});
  expect_error<lg::ValueError>([&] { expanded.fill_(1); },
                               {"[fill_]", "more than one element of the written-to tensor"});
  expect_error<lg::ValueError>([&] { expanded.copy_(lg::ones({3, 4})); }, {"[copy_]", "single memory location"});
  expect_error<lg::ValueError>([] { lg::zeros({2, 3}).copy_(lg::ones({4})); },
                               {"[copy_]", "cannot be broadcast", "(4)"});
  expect_error<lg::ValueError>([] { lg::zeros({3}).copy_(lg::ones({2, 3})); }, {"[copy_]", "cannot be broadcast"});
}

TEST_CASE("random and range factories validate their arguments") {
  expect_error<lg::TypeError>([] { lg::rand({2}, lg::kInt64); }, {"[rand]", "int64", "floating dtype"});
  expect_error<lg::TypeError>([] { lg::randn({2}, lg::kBool); }, {"[randn]", "bool"});
  expect_error<lg::TypeError>([] { lg::rand_like(lg::zeros({2}, lg::kInt32)); }, {"[rand_like]"});
  expect_error<lg::ValueError>([] { lg::randint(5, 5, {2}); }, {"[randint]", "low=5 >= high=5"});
  expect_error<lg::ValueError>([] { lg::randint(0, 300, {2}, lg::kUInt8); }, {"[randint]", "does not fit dtype uint8"});
  expect_error<lg::ValueError>([] { lg::arange(0, 10, 0); }, {"[arange]", "step must be nonzero"});
  expect_error<lg::ValueError>([] { lg::arange(10, 0, 1); }, {"[arange]", "inconsistent with step sign"});
}

TEST_CASE("devices: bad specs are ValueErrors and CUDA tensors name what is missing") {
  expect_error<lg::ValueError>([] { lg::Device("gpu"); }, {"[Device]", "\"gpu\""});
  expect_error<lg::ValueError>([] { lg::Device("cuda:x"); }, {"[Device]"});
  expect_error<lg::ValueError>([] { lg::Device("cuda:-1"); }, {"[Device]"});
  expect_error<lg::ValueError>([] { lg::Device(lg::DeviceType::CPU, 3); }, {"cpu device takes no index"});
  CHECK(lg::Device("cuda:1").index() == 1);
  CHECK(lg::Device("cuda") == lg::Device::cuda(0));
  CHECK(lg::Device("cpu") == lg::kCPU);
  CHECK(lg::Device::cuda(2).str() == "cuda:2");
  // A CUDA tensor: NotCompiledError in a CPU-only build, DeviceError naming what is visible
  // when no GPU answers, and a device tensor otherwise.
  if (!LG_HAVE_CUDA) {
    expect_error<lg::NotCompiledError>([] { lg::empty({2}, lg::Device::cuda(0)); }, {"[empty]", "built without CUDA"});
    CHECK_THROWS_AS(lg::zeros({2}).cuda(), lg::NotCompiledError);
  } else if (lg::cuda::device_count() == 0) {
    expect_error<lg::DeviceError>([] { lg::empty({2}, lg::Device::cuda(0)); },
                                  {"[empty]", "cuda:0", "no CUDA devices are visible"});
    CHECK_THROWS_AS(lg::zeros({2}).cuda(), lg::DeviceError);
  } else {
    CHECK(lg::empty({2}, lg::Device::cuda(0)).device() == lg::Device::cuda(0));
  }
  // The stream custom CUDA kernels launch on: the same three answers.
  expect_error<lg::ValueError>([] { lg::cuda::stream(lg::kCPU); }, {"[cuda::stream] received device cpu"});
  if (!LG_HAVE_CUDA) {
    expect_error<lg::NotCompiledError>([] { lg::cuda::stream(); }, {"built without CUDA"});
  } else if (lg::cuda::device_count() == 0) {
    expect_error<lg::DeviceError>([] { lg::cuda::stream(); }, {"[cuda::stream]", "cuda:0", "no CUDA devices are visible"});
  } else {
    CHECK(lg::cuda::stream() == lg::cuda::stream(lg::Device::cuda(0)));
    expect_error<lg::DeviceError>([] { lg::cuda::stream(lg::Device::cuda(lg::cuda::device_count())); }, {"[cuda::stream]"});
  }
}

TEST_CASE("errors carry a lazily symbolised stack trace and are std::runtime_errors") {
  try {
    lg::empty({-1});
    FAIL("expected an exception");
  } catch (const std::runtime_error& e) {
    const auto* lg_error = dynamic_cast<const lg::Error*>(&e);
    REQUIRE(lg_error != nullptr);
    const std::string trace = lg_error->stacktrace();
    CAPTURE(trace);
    CHECK(trace.find("lg::empty") != std::string::npos);
    CHECK(trace.find(".cpp:") != std::string::npos);  // file:line from debug info
    CHECK(lg_error->what_with_stacktrace().find(lg_error->message()) == 0);
  }
}

TEST_CASE("LG_CHECK formats its message only on failure") {
  int evaluated = 0;
  auto costly = [&] {
    ++evaluated;
    return std::string("detail");
  };
  LG_CHECK(1 + 1 == 2, "never shown: ", costly());
  CHECK(evaluated == 0);
  CHECK_THROWS_AS(LG_CHECK(1 + 1 == 3, "shown: ", costly()), lg::ValueError);
  CHECK(evaluated == 1);
  CHECK_THROWS_AS(LG_CHECK_INDEX(false, "x"), lg::IndexError);
  CHECK_THROWS_AS(LG_CHECK_TYPE(false, "x"), lg::TypeError);
  CHECK_THROWS_AS(LG_CHECK_NOT_IMPLEMENTED(false, "x"), lg::NotImplementedError);
  try {
    LG_ASSERT(false, "invariant");
  } catch (const lg::Error& e) {
    CHECK(std::string(e.what()).find("bug in layoutguard") != std::string::npos);
  }
}

TEST_CASE("LAYOUTGUARD_LOG_LEVEL accepts spdlog's levels and rejects anything else") {
  const char* saved = std::getenv("LAYOUTGUARD_LOG_LEVEL");
  const std::string restore = saved ? saved : "";
  setenv("LAYOUTGUARD_LOG_LEVEL", "debug", 1);
  lg::logging::reload_level_from_env();
  CHECK(lg::logging::level() == lg::logging::Level::Debug);
  setenv("LAYOUTGUARD_LOG_LEVEL", "verbose", 1);
  expect_error<lg::ConfigError>([] { lg::logging::reload_level_from_env(); },
                                {"LAYOUTGUARD_LOG_LEVEL='verbose'", "trace, debug, info, warn, error, critical, off"});
  CHECK(lg::logging::parse_level("off", "x") == lg::logging::Level::Off);
  // A Level cast from an integer names no level: refused, the level kept.
  const auto bad = static_cast<lg::logging::Level>(99);
  const lg::logging::Level before = lg::logging::level();
  expect_error<lg::ValueError>([&] { lg::logging::set_level(bad); }, {"[logging::set_level] received level 99"});
  expect_error<lg::ValueError>([&] { lg::logging::write(bad, "x"); }, {"[logging::write] received level 99"});
  expect_error<lg::ValueError>([&] { (void)lg::logging::level_name(bad); }, {"[logging::level_name] received level 99"});
  CHECK(lg::logging::level() == before);
  if (saved) setenv("LAYOUTGUARD_LOG_LEVEL", restore.c_str(), 1);
  else unsetenv("LAYOUTGUARD_LOG_LEVEL");
  lg::logging::reload_level_from_env();
}

TEST_CASE("cuda::Event refuses a CPU device, and names why a CUDA one cannot be used without a GPU") {
  expect_error<lg::ValueError>([] { lg::cuda::Event e(lg::Device::cpu()); },
                               {"[cuda::Event]", "received device cpu", "Device::cuda(i)"});
  if (lg::cuda::is_available()) return;  // a GPU here: tests/cuda/test_cuda_event.cpp times with it
  try {
    lg::cuda::Event e(lg::Device::cuda(0));
    FAIL("expected an exception");
  } catch (const lg::NotCompiledError& e) {  // a build without CUDA
    CHECK(std::string(e.what()).find("built without CUDA") != std::string::npos);
  } catch (const lg::DeviceError& e) {  // CUDA compiled in, no device visible
    CHECK(std::string(e.what()).find("[cuda::Event] received device cuda:0") != std::string::npos);
    CHECK(std::string(e.what()).find("visible") != std::string::npos);
  }
}

}  // TEST_SUITE

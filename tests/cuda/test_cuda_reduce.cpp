// Reductions, softmax and dropout on CUDA against the CPU: contiguous output strides for the
// reductions, the input's layout for softmax, values within tolerance, NaN propagation.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "cuda/cuda_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("sum, mean, amax, amin on CUDA equal the CPU's over layouts, dims and dtypes") {
  const std::vector<std::vector<int64_t>> dim_lists{{1}, {2, 3}, {0, 2}, {-1}, {}};
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16, lg::kFloat64, lg::kInt32, lg::kUInt8})
    for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast})
      for (const auto& dims : dim_lists)
        for (bool keep : {false, true}) {
          CAPTURE(dt);
          CAPTURE(f);
          CAPTURE(lg::to_string(dims));
          CAPTURE(keep);
          const Tensor x = lg::mul(noise_in({3, 6, 5, 7}, f, lg::kFloat32, 1), 20.0).to(dt);
          const Tensor d = x.cuda();
          const Tol tol = kReorderedTol(dt);
          check_same(lg::sum(d, dims, keep), lg::sum(x, dims, keep), tol);
          if (is_floating_point(dt)) check_same(lg::mean(d, dims, keep), lg::mean(x, dims, keep), tol);
          check_same(lg::amax(d, dims, keep), lg::amax(x, dims, keep), {0, 0});
          check_same(lg::amin(d, dims, keep), lg::amin(x, dims, keep), {0, 0});
        }
  Tensor with_nan = noise_in({2, 3, 4}, MemoryFormat::Contiguous, lg::kFloat32, 2);
  with_nan.select(0, 1).select(0, 2).fill_(NAN);
  check_same(lg::amax(with_nan.cuda(), {1, 2}), lg::amax(with_nan, {1, 2}), {0, 0});
  const Tensor sliced = noise_in({4, 8, 6, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 3).slice(1, 0, 8, 2);
  check_same(lg::mean(sliced.cuda(), {2, 3}, true), lg::mean(sliced, {2, 3}, true), kReorderedTol(lg::kFloat32));
  // Few outputs over many elements (one block per output on the device): per channel, and the
  // whole tensor; a NaN in one channel wins its amin.
  Tensor big = noise_in({8, 16, 32, 32}, MemoryFormat::ChannelsLast, lg::kFloat32, 4);
  check_same(lg::sum(big.cuda(), {0, 2, 3}), lg::sum(big, {0, 2, 3}), kReorderedTol(lg::kFloat32));
  check_same(lg::mean(big.cuda(), {}), lg::mean(big, {}), kReorderedTol(lg::kFloat32));
  big.select(1, 5).select(1, 17).fill_(NAN);
  check_same(lg::amin(big.cuda(), {0, 2, 3}), lg::amin(big, {0, 2, 3}), {0, 0});
  const Tensor ints = lg::mul(noise_in({8, 16, 32, 32}, MemoryFormat::ChannelsLast, lg::kFloat32, 5), 50.0).to(lg::kInt32);
  check_same(lg::sum(ints.cuda(), {}), lg::sum(ints, {}), {0, 0});
}

TEST_CASE("softmax and log_softmax on CUDA keep the input's layout and equal the CPU's") {
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16, lg::kFloat64})
    for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast})
      for (int64_t dim = 0; dim < 4; ++dim) {
        CAPTURE(dt);
        CAPTURE(f);
        CAPTURE(dim);
        const Tensor x = lg::mul(noise_in({2, 6, 5, 7}, f, lg::kFloat32, 4), 8.0).to(dt);
        check_same(lg::softmax(x.cuda(), dim), lg::softmax(x, dim), kReorderedTol(dt));
        check_same(lg::log_softmax(x.cuda(), dim), lg::log_softmax(x, dim), kReorderedTol(dt));
      }
}

TEST_CASE("dropout on CUDA: the CPU's mask for the same seed, the input's layout") {
  const Tensor x = noise_in({4, 8, 6, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 5);
  lg::manual_seed(11);
  const Tensor want = lg::dropout(x, 0.3, true);
  lg::manual_seed(11);
  const Tensor got = lg::dropout(x.cuda(), 0.3, true);
  // A mask that differs in one element puts 0 against x / 0.7 there, far outside the bound,
  // which leaves room only for the scale's rounding.
  check_same(got, want, kReorderedTol(lg::kFloat32));
  CHECK(lg::dropout(x.cuda(), 0.3, false).device() == lg::Device::cuda(0));
}

}

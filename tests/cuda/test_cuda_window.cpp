// Upsampling, pooling and pad on CUDA against the CPU kernels: same output (and indices)
// strides, values within the dtype's tolerance (exact where no arithmetic is involved), over
// contiguous, channels_last and channels_last_3d inputs.
#include <cmath>

#include <doctest/doctest.h>

#include <string>

#include "cuda/cuda_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("upsampling on CUDA equals the CPU's in every mode") {
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16, lg::kFloat64})
    for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
      CAPTURE(dt);
      CAPTURE(f);
      const Tensor x = noise_in({2, 5, 7, 9}, f, lg::kFloat32, 1).to(dt);
      const Tensor d = x.cuda();
      const Tol tol = kReorderedTol(dt);
      check_same(lg::upsample_nearest2d(d, {14, 13}), lg::upsample_nearest2d(x, {14, 13}), {0, 0});
      for (bool ac : {false, true}) {
        CAPTURE(ac);
        check_same(lg::upsample_bilinear2d(d, {15, 20}, ac), lg::upsample_bilinear2d(x, {15, 20}, ac), tol);
        check_same(lg::upsample_bicubic2d(d, {5, 17}, ac), lg::upsample_bicubic2d(x, {5, 17}, ac), tol);
      }
      check_same(lg::interpolate(d, {}, {2.0}, "bilinear"), lg::interpolate(x, {}, {2.0}, "bilinear"), tol);
    }
  for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast3d}) {
    CAPTURE(f);
    const Tensor x = noise_in({2, 3, 4, 5, 6}, f, lg::kFloat32, 2);
    check_same(lg::upsample_nearest3d(x.cuda(), {8, 7, 12}), lg::upsample_nearest3d(x, {8, 7, 12}), {0, 0});
    check_same(lg::upsample_trilinear3d(x.cuda(), {8, 7, 12}, false), lg::upsample_trilinear3d(x, {8, 7, 12}, false),
               kReorderedTol(lg::kFloat32));
  }
  const Tensor ints = lg::randint(0, 100, {2, 3, 4, 5}, lg::kInt32).to(MemoryFormat::ChannelsLast);
  check_same(lg::upsample_nearest2d(ints.cuda(), {8, 10}), lg::upsample_nearest2d(ints, {8, 10}), {0, 0});
}

TEST_CASE("pooling on CUDA equals the CPU's, indices included") {
  // 16 channels in channels_last take the packed kernel where no indices are asked for.
  for (int64_t channels : {6, 16})
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16})
    for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
      CAPTURE(dt);
      CAPTURE(f);
      CAPTURE(channels);
      const Tensor x = noise_in({2, channels, 11, 13}, f, lg::kFloat32, 3).to(dt);
      const Tensor d = x.cuda();
      const Tol tol = kReorderedTol(dt);
      const auto [v, i] = lg::max_pool2d_with_indices(x, {3}, {2}, {1}, {1}, true);
      const auto [dv, di] = lg::max_pool2d_with_indices(d, {3}, {2}, {1}, {1}, true);
      check_same(dv, v, {0, 0});
      check_same(di, i, {0, 0});
      check_same(lg::max_pool2d(d, {2}, {}, {0}, {2}), lg::max_pool2d(x, {2}, {}, {0}, {2}), {0, 0});
      check_same(lg::avg_pool2d(d, {3}, {2}, {1}, true, false), lg::avg_pool2d(x, {3}, {2}, {1}, true, false), tol);
      check_same(lg::avg_pool2d(d, {2}, {}, {1}, false, true, -3), lg::avg_pool2d(x, {2}, {}, {1}, false, true, -3), tol);
      check_same(lg::adaptive_avg_pool2d(d, {1, 1}), lg::adaptive_avg_pool2d(x, {1, 1}), tol);
      check_same(lg::adaptive_avg_pool2d(d, {4, 5}), lg::adaptive_avg_pool2d(x, {4, 5}), tol);
      const auto [av, ai] = lg::adaptive_max_pool2d(x, {3, 4});
      const auto [dav, dai] = lg::adaptive_max_pool2d(d, {3, 4});
      check_same(dav, av, {0, 0});
      check_same(dai, ai, {0, 0});
    }
  for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast3d}) {
    CAPTURE(f);
    const Tensor x = noise_in({2, 8, 6, 7, 8}, f, lg::kFloat32, 4);
    const Tol tol = kReorderedTol(lg::kFloat32);
    check_same(lg::max_pool3d(x.cuda(), {2}), lg::max_pool3d(x, {2}), {0, 0});
    check_same(lg::avg_pool3d(x.cuda(), {3}, {2}, {1}), lg::avg_pool3d(x, {3}, {2}, {1}), tol);
    check_same(lg::adaptive_avg_pool3d(x.cuda(), {1, 1, 1}), lg::adaptive_avg_pool3d(x, {1, 1, 1}), tol);
  }
  for (int64_t channels : {3, 4}) {
    const Tensor ints = lg::randint(-50, 50, {2, channels, 8, 8}, lg::kInt64).to(MemoryFormat::ChannelsLast);
    check_same(lg::max_pool2d(ints.cuda(), {2}), lg::max_pool2d(ints, {2}), {0, 0});
  }
  // NaN wins a max window in the packed kernel too.
  Tensor with_nan = lg::zeros({1, 8, 4, 4}).contiguous(MemoryFormat::ChannelsLast);
  with_nan.select(1, 3).select(1, 1).select(1, 1).fill_(std::nan(""));
  check_same(lg::max_pool2d(with_nan.cuda(), {2}), lg::max_pool2d(with_nan, {2}), {0, 0});
}

TEST_CASE("pad on CUDA equals the CPU's in every mode, any rank, with cropping") {
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kInt64, lg::kUInt8})
    for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
      CAPTURE(dt);
      CAPTURE(f);
      const Tensor x = lg::mul(noise_in({2, 3, 5, 6}, f, lg::kFloat32, 5), 40.0).to(dt);
      const Tensor d = x.cuda();
      check_same(lg::pad(d, {1, 2, 3, 0}), lg::pad(x, {1, 2, 3, 0}), {0, 0});
      check_same(lg::pad(d, {1, 1, 2, 2}, "constant", 7.0), lg::pad(x, {1, 1, 2, 2}, "constant", 7.0), {0, 0});
      check_same(lg::pad(d, {-1, 2, 0, -2}), lg::pad(x, {-1, 2, 0, -2}), {0, 0});
      for (std::string mode : {"reflect", "replicate", "circular"}) {
        CAPTURE(mode);
        check_same(lg::pad(d, {2, 1, 1, 3}, mode), lg::pad(x, {2, 1, 1, 3}, mode), {0, 0});
      }
    }
  const Tensor x5 = noise_in({2, 3, 4, 5, 6}, MemoryFormat::ChannelsLast3d, lg::kFloat32, 6);
  check_same(lg::pad(x5.cuda(), {1, 1, 1, 1, 1, 1}, "replicate"), lg::pad(x5, {1, 1, 1, 1, 1, 1}, "replicate"), {0, 0});
  const Tensor x1 = noise_in({7}, MemoryFormat::Contiguous, lg::kFloat32, 7);
  check_same(lg::pad(x1.cuda(), {2, 3}, "constant", -1.0), lg::pad(x1, {2, 3}, "constant", -1.0), {0, 0});
}

}

// Layout rows 62-78 (numbered as in tests/core/test_layout_rows.cpp) that this library has ops
// for (batch_norm, pooling), with the exact strides, and the layout each normalisation keeps.
#include <doctest/doctest.h>

#include "support/op_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

Tensor bn_eval(const Tensor& x) {
  const int64_t c = x.size(1);
  return lg::batch_norm(x, std::nullopt, std::nullopt, lg::zeros({c}), lg::ones({c}), false);
}

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("layout rows 62-66: batch_norm output strides (PyTorch's CPU rule)") {
  CHECK(ls(bn_eval(noise_in({2, 3, 4, 5}, CL, lg::kFloat32, 1))) == "(2,3,4,5)@(60,1,15,3)");  // 62
  const Tensor slice = noise_in({2, 3, 4, 5}, CL, lg::kFloat32, 2).slice(2, 0, 4, 2);
  CHECK(ls(slice) == "(2,3,2,5)@(60,1,30,3)");
  CHECK(ls(bn_eval(slice)) == "(2,3,2,5)@(30,1,15,3)");                                         // 63
  CHECK(ls(bn_eval(noise_in({2, 3, 1, 1}, CL, lg::kFloat32, 3))) == "(2,3,1,1)@(3,1,1,1)");    // 64
  const Tensor transposed = noise_in({2, 3, 4, 5}, CF, lg::kFloat32, 4).transpose(2, 3);
  CHECK(ls(bn_eval(transposed)) == "(2,3,5,4)@(60,20,4,1)");                                    // 65
  const Tensor x5 = noise_in({2, 3, 4, 5, 6}, CL3, lg::kFloat32, 5);
  CHECK(ls(lg::batch_norm(x5, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true)) ==
        "(2,3,4,5,6)@(360,1,90,18,3)");                                                          // 66
}

TEST_CASE("layout rows 67-73: pooling output strides") {
  const Tensor x = noise_in({2, 3, 6, 6}, CL, lg::kFloat32, 6);
  CHECK(ls(lg::max_pool2d(x, {2})) == "(2,3,3,3)@(27,1,9,3)");                   // 67
  CHECK(ls(lg::avg_pool2d(x, {2})) == "(2,3,3,3)@(27,1,9,3)");                   // 68
  CHECK(ls(lg::adaptive_avg_pool2d(x, {1, 1})) == "(2,3,1,1)@(3,1,3,3)");        // 69
  CHECK(ls(lg::adaptive_avg_pool2d(x.contiguous(), {1, 1})) == "(2,3,1,1)@(3,1,1,1)");  // 70
  const Tensor ndense = noise_in({2, 3, 6, 6}, CL, lg::kFloat32, 7).slice(2, 0, 6, 2);
  CHECK(ls(ndense) == "(2,3,3,6)@(108,1,36,3)");
  CHECK(ls(lg::adaptive_max_pool2d(ndense, {3, 3}).first) == "(2,3,3,3)@(27,1,9,3)");   // 71
  CHECK(ls(lg::max_pool2d(x, {6})) == "(2,3,1,1)@(3,1,3,3)");                    // 72
  // 73 as PyTorch main (S): a channels_last_3d input keeps channels_last_3d.
  CHECK(ls(lg::max_pool3d(noise_in({2, 3, 4, 5, 6}, CL3, lg::kFloat32, 8), {2})) == "(2,3,2,2,3)@(36,1,18,9,3)");
  const auto [values_cl, indices_cl] = lg::max_pool2d_with_indices(x, {2});
  CHECK(indices_cl.strides() == values_cl.strides());
  CHECK(indices_cl.dtype() == lg::kInt64);
}

TEST_CASE("pooling values: NHWC and NCHW kernels agree with each other and with hand-computed windows") {
  // 1..16 in a 4x4 plane: max of each 2x2 block is its bottom-right element, mean its centre.
  const Tensor plane = lg::add(lg::arange(16, lg::kFloat32), 1.0).reshape({1, 1, 4, 4});
  const Tensor x = lg::cat({plane, lg::mul(plane, 10.0)}, 1);  // two channels
  for (MemoryFormat fmt : {CF, CL}) {
    CAPTURE(fmt);
    const Tensor xf = x.contiguous(fmt);
    CHECK(values(lg::max_pool2d(xf, {2})) == std::vector<double>{6, 8, 14, 16, 60, 80, 140, 160});
    CHECK(values(lg::avg_pool2d(xf, {2})) == std::vector<double>{3.5, 5.5, 11.5, 13.5, 35, 55, 115, 135});
    CHECK(values(lg::max_pool2d_with_indices(xf, {2}).second) == std::vector<double>{5, 7, 13, 15, 5, 7, 13, 15});
    CHECK(values(lg::adaptive_avg_pool2d(xf, {1, 1})) == std::vector<double>{8.5, 85});
    // padding 1, count_include_pad: the corner window holds 1 real value of 4.
    CHECK(values(lg::avg_pool2d(xf, {2}, {2}, {1})).front() == doctest::Approx(0.25));
    CHECK(values(lg::avg_pool2d(xf, {2}, {2}, {1}, false, false)).front() == doctest::Approx(1.0));
    CHECK(values(lg::avg_pool2d(xf, {2}, {2}, {0}, false, true, 2)).front() == doctest::Approx(7.0));
  }
  const Tensor big = noise_in({2, 5, 9, 7}, CF, lg::kFloat32, 9);
  check_close(values(lg::max_pool2d(big, {3}, {2}, {1}, {1}, true)),
              values(lg::max_pool2d(big.contiguous(CL), {3}, {2}, {1}, {1}, true)), lg::kFloat32);
  check_close(values(lg::adaptive_avg_pool2d(big, {4, 3})), values(lg::adaptive_avg_pool2d(big.contiguous(CL), {4, 3})),
              lg::kFloat32);
}

TEST_CASE("normalisation values: NHWC and NCHW agree, statistics are right, running stats update") {
  const Tensor x = noise_in({2, 4, 3, 5}, CF, lg::kFloat32, 10);
  const Tensor w = noise_in({4}, CF, lg::kFloat32, 11), b = noise_in({4}, CF, lg::kFloat32, 12);
  // Training batch_norm: every channel of the normalised output (no affine) has mean 0, var 1.
  const Tensor y = lg::batch_norm(x.contiguous(CL), std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1, 0);
  CHECK(y.suggest_memory_format() == CL);
  const std::vector<double> v = values(y);
  for (int c = 0; c < 4; ++c) {
    double s = 0, sq = 0;
    for (int n = 0; n < 2; ++n)
      for (int p = 0; p < 15; ++p) {
        const double e = v[(n * 4 + c) * 15 + p];
        s += e;
        sq += e * e;
      }
    CHECK(s / 30 == doctest::Approx(0).epsilon(1e-5).scale(1));
    CHECK(sq / 30 == doctest::Approx(1).epsilon(1e-4));
  }
  const Tensor rm = lg::zeros({4}), rv = lg::ones({4});
  const uint64_t v0 = rm.version();
  (void)lg::batch_norm(x, w, b, rm, rv, true, 0.5);
  CHECK(rm.version() > v0);
  CHECK(values(rm) != std::vector<double>(4, 0.0));
  for (auto [name, f] : std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>>{
           {"batch_norm", [&](const Tensor& t) { return lg::batch_norm(t, w, b, std::nullopt, std::nullopt, true); }},
           {"group_norm", [&](const Tensor& t) { return lg::group_norm(t, 2, w, b); }},
           {"instance_norm", [&](const Tensor& t) { return lg::instance_norm(t, w, b); }},
           {"layer_norm", [&](const Tensor& t) { return lg::layer_norm(t, {3, 5}); }}}) {
    CAPTURE(name);
    const Tensor cf = f(x), cl = f(x.contiguous(CL));
    CHECK(cl.suggest_memory_format() == CL);
    check_close(values(cf), values(cl), lg::kFloat32);
  }
  // group_norm with one channel per group is instance_norm.
  check_close(values(lg::group_norm(x, 4, w, b)), values(lg::instance_norm(x, w, b)), lg::kFloat32);
}

}  // TEST_SUITE

// cat, stack, split, chunk: values over layouts, PyTorch's layout vote with exact strides (spec
// rows 79-84), views for split/chunk, and bad input.
#include <doctest/doctest.h>

#include <layoutguard/testing/doctest.h>

#include "support/guard_testing.h"
#include "support/op_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

// Row-major values of cat, built by hand: for each outer index, the inputs' rows along dim.
std::vector<double> ref_cat(const std::vector<Tensor>& ts, int64_t dim) {
  std::vector<std::vector<double>> vals;
  for (const Tensor& t : ts) vals.push_back(values(t));
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= ts[0].size(d);
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < ts.size(); ++i) {
      const int64_t block = ts[i].numel() / outer;
      out.insert(out.end(), vals[i].begin() + o * block, vals[i].begin() + (o + 1) * block);
    }
  return out;
}

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("cat: values along every dim, mixed layouts and dtypes of one kind") {
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kInt64}) {
    for (int64_t dim = 0; dim < 4; ++dim) {
      CAPTURE(dt);
      CAPTURE(dim);
      std::vector<int64_t> sa{2, 3, 4, 5}, sb{2, 3, 4, 5};
      sb[dim] = 2;
      const Tensor a = noise_in(sa, CL, lg::kFloat32, 1).to(dt), b = noise_in(sb, CF, lg::kFloat32, 2).to(dt);
      const Tensor c = noise_in(sa, CF, lg::kFloat32, 3).to(dt).transpose(2, 3).contiguous().transpose(2, 3);
      check_close(values(lg::cat({a, b, c}, dim)), ref_cat({a, b, c}, dim), lg::kFloat64);
      check_close(values(lg::cat({a, c}, dim - 4)), ref_cat({a, c}, dim), lg::kFloat64);  // negative dim
    }
  }
}

TEST_CASE("cat of dense tensors along their innermost dim: one pass over rows, every width") {
  // All channels_last along C (widths 5, 1, 0 and 32), all contiguous along W, all
  // channels_last_3d along C, and sizes large enough to split across threads: the row path.
  // A contiguous input among channels_last ones takes the strided copies instead.
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kInt64}) {
    CAPTURE(dt);
    const auto cl = [&](std::vector<int64_t> s, uint32_t seed) { return noise_in(s, CL, lg::kFloat32, seed).to(dt); };
    const std::vector<Tensor> nhwc{cl({2, 5, 3, 4}, 11), cl({2, 1, 3, 4}, 12), lg::empty({2, 0, 3, 4}, dt, CL),
                                   cl({2, 32, 3, 4}, 13)};
    // (The empty input votes contiguous, so that output is NCHW and takes the strided copies;
    // without it the output is channels_last and takes the rows.)
    check_close(values(lg::cat(nhwc, 1)), ref_cat(nhwc, 1), lg::kFloat64);
    const std::vector<Tensor> nhwc3{nhwc[0], nhwc[1], nhwc[3]};
    const Tensor y = lg::cat(nhwc3, 1);
    LG_CHECK_CHANNELS_LAST(y);
    check_close(values(y), ref_cat(nhwc3, 1), lg::kFloat64);
    const std::vector<Tensor> rows{noise_in({3, 2, 7, 5}, CF, lg::kFloat32, 14).to(dt),
                                   noise_in({3, 2, 7, 1}, CF, lg::kFloat32, 15).to(dt)};
    check_close(values(lg::cat(rows, 3)), ref_cat(rows, 3), lg::kFloat64);
    const std::vector<Tensor> ndhwc{noise_in({2, 3, 2, 3, 4}, CL3, lg::kFloat32, 16).to(dt),
                                    noise_in({2, 6, 2, 3, 4}, CL3, lg::kFloat32, 17).to(dt)};
    check_close(values(lg::cat(ndhwc, 1)), ref_cat(ndhwc, 1), lg::kFloat64);
    const std::vector<Tensor> big{cl({4, 24, 40, 40}, 18), cl({4, 8, 40, 40}, 19)};  // 200 K values
    check_close(values(lg::cat(big, 1)), ref_cat(big, 1), lg::kFloat64);
    const std::vector<Tensor> mixed{cl({2, 5, 3, 4}, 20), noise_in({2, 3, 3, 4}, CF, lg::kFloat32, 21).to(dt)};
    check_close(values(lg::cat(mixed, 1)), ref_cat(mixed, 1), lg::kFloat64);
  }
}

TEST_CASE("layout rows 79-84: cat and stack output strides") {
  const Tensor a = noise_in({2, 3, 4, 5}, CL, lg::kFloat32, 4), b = noise_in({2, 3, 4, 5}, CL, lg::kFloat32, 5);
  const Tensor cf = noise_in({2, 3, 4, 5}, CF, lg::kFloat32, 6);
  CHECK(ls(lg::cat({a, b}, 1)) == "(2,6,4,5)@(120,1,30,6)");                                 // 79
  CHECK(ls(lg::cat({a, cf}, 1)) == "(2,6,4,5)@(120,20,5,1)");                                // 80
  CHECK(ls(lg::cat({a, lg::empty({0})}, 1)) == "(2,3,4,5)@(60,20,5,1)");                     // 81
  const Tensor nc11_cl = noise_in({2, 3, 1, 1}, CL, lg::kFloat32, 7), nc11 = noise_in({2, 3, 1, 1}, CF, lg::kFloat32, 8);
  CHECK(ls(lg::cat({nc11_cl, nc11}, 1)) == "(2,6,1,1)@(6,1,1,1)");                           // 82
  CHECK(ls(lg::cat({nc11_cl, nc11_cl}, 1)) == "(2,6,1,1)@(6,1,6,6)");
  const Tensor slice = noise_in({2, 3, 4, 5}, CL, lg::kFloat32, 9).narrow(1, 0, 2);
  CHECK(ls(lg::cat({slice, a}, 1)) == "(2,5,4,5)@(100,1,25,5)");                             // 83
  CHECK(ls(lg::stack({a, b}, 0)) == "(2,2,3,4,5)@(120,60,1,15,3)");                          // 84
  check_close(values(lg::stack({a, b}, 0)), ref_cat({a.unsqueeze(0), b.unsqueeze(0)}, 0), lg::kFloat64);
  check_close(values(lg::stack({a, b}, 4)), ref_cat({a.unsqueeze(4), b.unsqueeze(4)}, 4), lg::kFloat64);
  check_close(values(lg::stack({a, b}, 2)), ref_cat({a.unsqueeze(2), b.unsqueeze(2)}, 2), lg::kFloat64);
}

TEST_CASE("split, split_with_sizes and chunk return views with PyTorch's sizes") {
  const Tensor x = noise_in({2, 7, 4, 5}, CL, lg::kFloat32, 10);
  const auto parts = lg::split(x, 3, 1);
  REQUIRE(parts.size() == 3);
  CHECK(parts[2].size(1) == 1);
  CHECK(parts[1].is_alias_of(x));
  CHECK(parts[1].suggest_memory_format() == CL);
  check_close(values(lg::cat(parts, 1)), values(x), lg::kFloat64);
  const auto sized = lg::split_with_sizes(x, {2, 5}, 1);
  CHECK(sized[1].sizes() == lg::IntArrayRef({2, 5, 4, 5}));
  CHECK(lg::chunk(x, 3, 1).size() == 3);  // ceil(7 / 3) = 3 per chunk: 3, 3, 1
  CHECK(lg::chunk(x, 3, 1)[2].size(1) == 1);
  CHECK(lg::chunk(lg::ones({4}), 6).size() == 4);  // fewer chunks than asked
  CleanGuard clean;
  lg::guard::set_options(options_with(lg::guard::Mode::Throw));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::chunk(x, 2, 1));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::cat({x, x}, 1));
}

TEST_CASE("joining: bad input, each with an lg::Error naming the op and the mismatch") {
  const Tensor a = lg::ones({2, 3, 4, 5});
  CHECK_THROWS_WITH_AS(lg::cat({}), doctest::Contains("[cat] expected a non-empty list"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::cat({a, lg::ones({2, 3, 4})}, 1), doctest::Contains("same number of dimensions: got 4 and 3"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::cat({a, lg::ones({2, 3, 4, 5}, lg::kFloat64)}), doctest::Contains("[cat] expected all tensors to have dtype float32, but tensor 1 has float64"), lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::cat({a, lg::ones({2, 3, 5, 5})}, 1), doctest::Contains("Expected size 4 but got size 5 for tensor number 1"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::cat({a, a}, 4), doctest::Contains("[cat]"), lg::IndexError);
  CHECK_THROWS_WITH_AS(lg::cat({a, Tensor()}), doctest::Contains("[cat]"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::stack({a, lg::ones({2, 3, 4, 4})}), doctest::Contains("[stack] expects each tensor to be equal size"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::split(a, 0, 1), doctest::Contains("[split] split_size can only be 0"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::split_with_sizes(a, {1, 1}, 1), doctest::Contains("to sum exactly to 3"), lg::Error);
  // Sizes whose sum would pass int64 (and wrap back to the dim's size) are refused by the sum.
  CHECK_THROWS_WITH_AS(lg::split_with_sizes(lg::arange(4), {int64_t{1} << 62, 1, int64_t{1} << 62, 1, 4}, 0),
                       doctest::Contains("[split_with_sizes] expects split_sizes to sum exactly to 4"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::chunk(a, 0), doctest::Contains("[chunk] number of chunks must be greater than 0"), lg::Error);
}

}  // TEST_SUITE

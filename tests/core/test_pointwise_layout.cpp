// The pointwise output-layout algorithm (TensorIterator's rule): the numbered layout rows 29-47
// and 50 (numbering as in test_layout_rows.cpp) and the "who wins" consequences, on geometries
// alone. (Rows 45, 48 and 49 involve dtypes and out= tensors, which the operators take care of.)
#include <doctest/doctest.h>

#include "support/tensor_testing.h"

namespace {

using lg::layout::Geometry;

struct G {
  std::vector<int64_t> sizes, strides;
  Geometry geometry() const { return {sizes, strides}; }
};

const G kScalar{{}, {}};
const G kCL{{2, 3, 4, 5}, {60, 1, 15, 3}};
const G kCF{{2, 3, 4, 5}, {60, 20, 5, 1}};
const G kNC11CL{{2, 3, 1, 1}, {3, 1, 3, 3}};
const G kN1HWCL{{2, 1, 4, 5}, {20, 1, 5, 1}};

std::string out_strides(std::initializer_list<G> inputs) {
  std::vector<Geometry> g;
  for (const G& in : inputs) g.push_back(in.geometry());
  return lg::to_string(lg::layout::pointwise_output_strides(g, "test"));
}

}  // namespace

TEST_SUITE("layout-rules") {

TEST_CASE("layout rows 29-47, 50: pointwise output strides; the first operand wins") {
  CHECK(out_strides({kCL}) == "(60,1,15,3)");                                    // 29 relu(CL)
  CHECK(out_strides({kCL, kCF}) == "(60,1,15,3)");                               // 30
  CHECK(out_strides({kCF, kCL}) == "(60,20,5,1)");                               // 31
  CHECK(out_strides({kCL, {{3, 1, 1}, {1, 1, 1}}}) == "(60,1,15,3)");            // 32 + bias
  CHECK(out_strides({{{3, 1, 1}, {1, 1, 1}}, kCL}) == "(60,1,15,3)");            // 33 bias +
  CHECK(out_strides({{{1, 3, 4, 5}, {60, 20, 5, 1}}, kCL}) == "(60,20,5,1)");    // 34
  CHECK(out_strides({{{2, 1, 4, 5}, {20, 20, 5, 1}}, kCL}) == "(60,1,15,3)");    // 35
  CHECK(out_strides({kCF, kNC11CL}) == "(60,20,5,1)");                           // 36
  CHECK(out_strides({kNC11CL}) == "(3,1,1,1)");                                  // 37 fast path
  CHECK(out_strides({kNC11CL, kScalar}) == "(3,1,3,3)");                         // 38 + 1
  CHECK(out_strides({kNC11CL, kNC11CL}) == "(3,1,1,1)");                         // 39
  CHECK(out_strides({kN1HWCL}) == "(20,20,5,1)");                                // 40
  CHECK(out_strides({kN1HWCL, kScalar}) == "(20,1,5,1)");                        // 41 * 2.0
  CHECK(out_strides({{{2, 3, 2, 5}, {60, 1, 30, 3}}}) == "(30,1,15,3)");         // 42 neg(slice)
  CHECK(out_strides({{{2, 3, 5, 4}, {60, 20, 1, 5}}, {{2, 3, 5, 4}, {60, 20, 4, 1}}}) ==
        "(60,20,1,5)");                                                          // 43
  CHECK(out_strides({{{2, 3, 5, 4}, {60, 20, 4, 1}}, {{2, 3, 5, 4}, {60, 20, 1, 5}}}) ==
        "(60,20,4,1)");                                                          // 44
  const G cl3{{2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}}, cf5{{2, 3, 4, 5, 6}, {360, 120, 30, 6, 1}};
  CHECK(out_strides({cl3, cf5}) == "(360,1,90,18,3)");                           // 46
  CHECK(out_strides({cf5, cl3}) == "(360,120,30,6,1)");                          // 47
  CHECK(out_strides({{{2, 0, 4, 5}, {0, 1, 0, 0}}}) == "(20,20,5,1)");           // 50
}

TEST_CASE("TensorIterator rule consequences: scalars, broadcasting, rank 5 and zero sizes") {
  CHECK(out_strides({kNC11CL, {{}, {}}}) == "(3,1,3,3)");  // NC11-CL * tensor(3.)
  const G nc111_cl3{{2, 3, 1, 1, 1}, {3, 1, 3, 3, 3}};
  CHECK(out_strides({nc111_cl3}) == "(3,1,1,1,1)");
  CHECK(out_strides({nc111_cl3, kScalar}) == "(3,1,3,3,3)");
  CHECK(out_strides({{{2, 3, 0, 5}, {0, 1, 15, 3}}, kScalar}) == "(0,1,15,3)");
  // addcmul(row(1,1,1,5), CL, CF) -> CL; where(cf_mask, cl, cf) -> CF.
  CHECK(out_strides({{{1, 1, 1, 5}, {5, 5, 5, 1}}, kCL, kCF}) == "(60,1,15,3)");
  CHECK(out_strides({kCF, kCL, kCF}) == "(60,20,5,1)");
  CHECK(out_strides({kCL, {{5}, {1}}}) == "(60,1,15,3)");  // CL + row vector
  CHECK(out_strides({kScalar, kScalar}) == "()");
  CHECK(out_strides({{{3}, {1}}, {{2, 1}, {1, 1}}}) == "(3,1)");  // rank promotion
}

TEST_CASE("shapes that do not broadcast are a ValueError naming the sizes") {
  try {
    out_strides({{{2, 3}, {3, 1}}, {{4}, {1}}});
    FAIL("expected an exception");
  } catch (const lg::ValueError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("[test] the size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1") !=
          std::string::npos);
  }
  CHECK(lg::to_string(lg::layout::broadcast_shapes({{2, 1, 4}, {3, 1}, {}}, "x")) == "(2,3,4)");
}


TEST_CASE("the ops' output strides equal pointwise_output_strides for equal-shape operands of every layout") {
  // src/ops/pointwise.cpp answers operands of the result's shape from their cached layout flags
  // instead of calling pointwise_output_strides; both must give the same strides. Layouts:
  // contiguous, channels-last (4-D and 5-D), a dense permutation, a strided slice, an expanded
  // view, size-1 dims with odd strides; ranks 1 to 5, size-0 dims included; one to three
  // operands in every combination.
  const std::vector<std::vector<int64_t>> shapes{{7}, {3, 1}, {2, 3, 4, 5}, {2, 1, 4, 5}, {2, 3, 1, 1},
                                                 {2, 0, 4, 5}, {2, 3, 4, 5, 6}, {1, 1, 1, 1}};
  for (const auto& shape : shapes) {
    CAPTURE(lg::to_string(shape));
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<lg::Tensor> variants{lg::zeros(shape)};
    if (rank == 4) variants.push_back(lg::zeros(shape).contiguous(lg::MemoryFormat::ChannelsLast));
    if (rank == 5) variants.push_back(lg::zeros(shape).contiguous(lg::MemoryFormat::ChannelsLast3d));
    if (rank >= 2) {
      std::vector<int64_t> swapped = shape;
      std::swap(swapped[0], swapped[rank - 1]);
      variants.push_back(lg::zeros(swapped).transpose(0, rank - 1));  // dense, permuted
      std::vector<int64_t> doubled = shape;
      doubled[rank - 1] *= 2;
      variants.push_back(lg::zeros(doubled).slice(rank - 1, 0, doubled[rank - 1], 2));  // not dense
    }
    std::vector<int64_t> one = shape;
    one[0] = 1;
    variants.push_back(lg::zeros(one).expand(shape));  // stride 0 where the size is not 1
    for (const lg::Tensor& a : variants)
      for (const lg::Tensor& b : variants) {
        CAPTURE(lg::describe_layout(a));
        CAPTURE(lg::describe_layout(b));
        const auto rule = [](std::initializer_list<lg::Tensor> ts) {
          std::vector<Geometry> g;
          for (const lg::Tensor& t : ts) g.push_back({t.sizes(), t.strides()});
          return lg::to_string(lg::layout::pointwise_output_strides(g, "test"));
        };
        CHECK(lg::to_string(lg::relu(a).strides()) == rule({a}));
        CHECK(lg::to_string(lg::add(a, b).strides()) == rule({a, b}));
        CHECK(lg::to_string(lg::where(lg::gt(a, b), a, b).strides()) == rule({lg::gt(a, b), a, b}));
      }
  }
}

}  // TEST_SUITE

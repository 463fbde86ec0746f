// The pointwise output-layout algorithm (spec §3.1): rows 29-47 and 50 of §4.1 and the
// "who wins" consequences, on geometries alone. (Rows 45, 48 and 49 involve dtypes and out=
// tensors, which the operators take care of.)
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

TEST_SUITE("spec") {

TEST_CASE("spec 4.1 rows 29-47, 50: pointwise output strides; the first operand wins") {
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

TEST_CASE("spec 3.1 consequences: scalars, broadcasting, rank 5 and zero sizes") {
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

}  // TEST_SUITE

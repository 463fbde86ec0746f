// Worked layout examples that involve only factories, conversions and views, each with
// PyTorch's exact output strides (as PyTorch 1.13.1 produces them on CPU) and whether the result
// aliases its input. The examples are numbered rows, 1-95 across the suites (the operators'
// rows are in tests/ops), and test names and labels cite those numbers; docs/memory-format.md
// explains the rules they follow.
#include <doctest/doctest.h>

#include <functional>

#include "support/tensor_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using lg::testing::ls;
using lg::testing::strided;

constexpr auto CF = MemoryFormat::Contiguous;
constexpr auto CL = MemoryFormat::ChannelsLast;
constexpr auto CL3 = MemoryFormat::ChannelsLast3d;

enum class Alias { Yes, No, Any };

struct Row {
  const char* name;
  std::vector<int64_t> sizes, strides;  // the input; empty sizes + strides = no input
  std::function<Tensor(const Tensor&)> op;
  const char* expected;
  Alias alias;
};

void check_rows(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    CAPTURE(row.name);
    Tensor input = row.strides.empty() && row.sizes.empty() ? Tensor() : strided(row.sizes, row.strides);
    Tensor out = row.op(input);
    CHECK(ls(out) == row.expected);
    if (row.alias == Alias::Yes) CHECK(out.is_same(input));
    if (row.alias == Alias::No) CHECK_FALSE(out.is_alias_of(input));
  }
}

}  // namespace

TEST_SUITE("layout-rules") {

TEST_CASE("layout rows 1-8: empty() strides for every format match PyTorch") {
  auto mk = [](std::vector<int64_t> sizes, MemoryFormat f) {
    return [sizes, f](const Tensor&) { return lg::empty(sizes, {}, f); };
  };
  check_rows({
      {"1 empty CL", {}, {}, mk({2, 3, 4, 5}, CL), "(2,3,4,5)@(60,1,15,3)", Alias::Any},
      {"2 empty CL N1HW", {}, {}, mk({2, 1, 4, 5}, CL), "(2,1,4,5)@(20,1,5,1)", Alias::Any},
      {"3 empty CL NC11", {}, {}, mk({2, 3, 1, 1}, CL), "(2,3,1,1)@(3,1,3,3)", Alias::Any},
      {"4 empty CL N111", {}, {}, mk({2, 1, 1, 1}, CL), "(2,1,1,1)@(1,1,1,1)", Alias::Any},
      {"5 empty CL zero C", {}, {}, mk({2, 0, 4, 5}, CL), "(2,0,4,5)@(0,1,0,0)", Alias::Any},
      {"6 empty CF zero H", {}, {}, mk({2, 3, 0, 5}, CF), "(2,3,0,5)@(15,5,5,1)", Alias::Any},
      {"7 empty CL3", {}, {}, mk({2, 3, 4, 5, 6}, CL3), "(2,3,4,5,6)@(360,1,90,18,3)", Alias::Any},
      {"8 empty CL3 NC111", {}, {}, mk({2, 3, 1, 1, 1}, CL3), "(2,3,1,1,1)@(3,1,3,3,3)", Alias::Any},
  });
  // Row 4's note: the N111 tensor cannot be tagged; it suggests contiguous anyway.
  CHECK(lg::empty({2, 1, 1, 1}, {}, CL).suggest_memory_format() == CF);
}

TEST_CASE("stride rules: generator table, including zero sizes and size-1 dims") {
  struct G { std::vector<int64_t> sizes; const char* cl; };
  for (const G& g : std::vector<G>{{{2, 3, 4, 5}, "(60,1,15,3)"}, {{2, 1, 4, 5}, "(20,1,5,1)"},
                                   {{2, 3, 1, 1}, "(3,1,3,3)"},   {{2, 1, 1, 1}, "(1,1,1,1)"},
                                   {{2, 3, 1, 5}, "(15,1,15,3)"}, {{2, 3, 4, 1}, "(12,1,3,3)"},
                                   {{2, 0, 4, 5}, "(0,1,0,0)"},   {{2, 3, 0, 5}, "(0,1,15,3)"},
                                   {{0, 3, 4, 5}, "(60,1,15,3)"}}) {
    CAPTURE(lg::to_string(g.sizes));
    CHECK(lg::to_string(lg::layout::channels_last_strides(g.sizes)) == g.cl);
  }
  CHECK(lg::to_string(lg::layout::contiguous_strides({2, 0, 4, 5})) == "(20,20,5,1)");
  CHECK(lg::to_string(lg::layout::channels_last_3d_strides({2, 1, 4, 5, 6})) == "(120,1,30,6,1)");
  CHECK(lg::to_string(lg::layout::channels_last_3d_strides({2, 3, 4, 1, 1})) == "(12,1,3,3,3)");
  CHECK(lg::layout::contiguous_strides({}).empty());
}

TEST_CASE("layout rows 9-28: to, contiguous, clone and empty_like") {
  check_rows({
      {"9 to(CL)", {2, 3, 4, 5}, {60, 20, 5, 1}, [](auto& x) { return x.to(CL); }, "(2,3,4,5)@(60,1,15,3)", Alias::No},
      {"10 N1HW to(CL)", {2, 1, 4, 5}, {20, 20, 5, 1}, [](auto& x) { return x.to(CL); }, "(2,1,4,5)@(20,1,5,1)", Alias::No},
      {"11 N1HW contiguous(CL)", {2, 1, 4, 5}, {20, 20, 5, 1}, [](auto& x) { return x.contiguous(CL); }, "(2,1,4,5)@(20,20,5,1)", Alias::Yes},
      {"12 NC11 to(CL)", {2, 3, 1, 1}, {3, 1, 1, 1}, [](auto& x) { return x.to(CL); }, "(2,3,1,1)@(3,1,3,3)", Alias::No},
      {"13 NC11 contiguous(CL)", {2, 3, 1, 1}, {3, 1, 1, 1}, [](auto& x) { return x.contiguous(CL); }, "(2,3,1,1)@(3,1,1,1)", Alias::Yes},
      {"14 N111 to(CL)", {2, 1, 1, 1}, {1, 1, 1, 1}, [](auto& x) { return x.to(CL); }, "(2,1,1,1)@(1,1,1,1)", Alias::No},
      {"15 NC11-CL contiguous()", {2, 3, 1, 1}, {3, 1, 3, 3}, [](auto& x) { return x.contiguous(); }, "(2,3,1,1)@(3,1,3,3)", Alias::Yes},
      {"16 NC11-CL to(CF)", {2, 3, 1, 1}, {3, 1, 3, 3}, [](auto& x) { return x.to(CF); }, "(2,3,1,1)@(3,1,1,1)", Alias::No},
      {"17 CL-sliced to(CL)", {2, 3, 2, 5}, {60, 1, 30, 3}, [](auto& x) { return x.to(CL); }, "(2,3,2,5)@(60,1,30,3)", Alias::Yes},
      {"18 CL-sliced contiguous(CL)", {2, 3, 2, 5}, {60, 1, 30, 3}, [](auto& x) { return x.contiguous(CL); }, "(2,3,2,5)@(30,1,15,3)", Alias::No},
      {"19 transposed to(CF)", {2, 3, 5, 4}, {60, 20, 1, 5}, [](auto& x) { return x.to(CF); }, "(2,3,5,4)@(60,20,1,5)", Alias::Yes},
      {"20 transposed contiguous()", {2, 3, 5, 4}, {60, 20, 1, 5}, [](auto& x) { return x.contiguous(); }, "(2,3,5,4)@(60,20,4,1)", Alias::No},
      {"21 transposed clone()", {2, 3, 5, 4}, {60, 20, 1, 5}, [](auto& x) { return x.clone(); }, "(2,3,5,4)@(60,20,1,5)", Alias::No},
      {"22 empty_like non-dense permuted", {2, 3, 5, 2}, {60, 20, 1, 10}, [](auto& x) { return lg::empty_like(x); }, "(2,3,5,2)@(30,10,1,5)", Alias::No},
      {"23 empty_like CL[:,0:1]", {2, 1, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return lg::empty_like(x); }, "(2,1,4,5)@(20,1,5,1)", Alias::No},
      {"24 empty_like expanded", {2, 3, 4, 5}, {20, 0, 5, 1}, [](auto& x) { return lg::empty_like(x); }, "(2,3,4,5)@(60,20,5,1)", Alias::No},
      {"25 empty_like N111 strided", {2, 1, 1, 1}, {5, 5, 5, 5}, [](auto& x) { return lg::empty_like(x); }, "(2,1,1,1)@(1,1,1,1)", Alias::No},
      {"26 NC11 clone(CL)", {2, 3, 1, 1}, {3, 1, 1, 1}, [](auto& x) { return x.clone(CL); }, "(2,3,1,1)@(3,1,3,3)", Alias::No},
      {"27 to(CL3)", {2, 1, 4, 5, 6}, {120, 120, 30, 6, 1}, [](auto& x) { return x.to(CL3); }, "(2,1,4,5,6)@(120,1,30,6,1)", Alias::No},
      {"28 contiguous(CL3)", {2, 1, 4, 5, 6}, {120, 120, 30, 6, 1}, [](auto& x) { return x.contiguous(CL3); }, "(2,1,4,5,6)@(120,120,30,6,1)", Alias::Yes},
  });
}

TEST_CASE("layout rows 85-91: views keep or rewrite strides exactly as ATen") {
  check_rows({
      {"85 view(2,3,20)", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.view({2, 3, 20}); }, "(2,3,20)@(60,1,3)", Alias::Any},
      {"86 flatten(1) copies", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.flatten(1); }, "(2,60)@(60,1)", Alias::No},
      {"87 permute(0,2,3,1)", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.permute({0, 2, 3, 1}); }, "(2,4,5,3)@(60,15,3,1)", Alias::Any},
      {"88 x[0].unsqueeze(0)", {1, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.select(0, 0).unsqueeze(0); }, "(1,3,4,5)@(3,1,15,3)", Alias::Any},
      {"89 reshape same shape", {1, 2, 3, 4}, {24, 1, 8, 2}, [](auto& x) { return x.reshape({1, 2, 3, 4}); }, "(1,2,3,4)@(2,1,8,2)", Alias::Any},
      {"90 unsqueeze(2)", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.unsqueeze(2); }, "(2,3,1,4,5)@(60,1,60,15,3)", Alias::Any},
      {"91 reshape(2,3,5,4) is a view", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.reshape({2, 3, 5, 4}); }, "(2,3,5,4)@(60,1,12,3)", Alias::Any},
      {"3.7 flatten(2) is a view", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.flatten(2); }, "(2,3,20)@(60,1,3)", Alias::Any},
      {"3.7 unsqueeze(-1)", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.unsqueeze(-1); }, "(2,3,4,5,1)@(60,1,15,3,1)", Alias::Any},
      {"3.7 view(1,2,12)", {1, 2, 3, 4}, {24, 1, 8, 2}, [](auto& x) { return x.view({1, 2, 12}); }, "(1,2,12)@(2,1,2)", Alias::Any},
      {"3.7 reshape(2,-1) copies", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.reshape({2, -1}); }, "(2,60)@(60,1)", Alias::No},
      {"3.7 NHWC buffer permuted to NCHW", {2, 4, 5, 3}, {60, 15, 3, 1}, [](auto& x) { return x.permute({0, 3, 1, 2}); }, "(2,3,4,5)@(60,1,15,3)", Alias::Any},
  });
  // The suggestions that rows 88-90 change: the first two suggest contiguous although they stay
  // channels_last-contiguous (pytorch#68430, #78611); unsqueeze(2) suggests channels_last_3d.
  Tensor cl1 = strided({1, 3, 4, 5}, {60, 1, 15, 3});
  Tensor r88 = cl1.select(0, 0).unsqueeze(0);
  CHECK(r88.is_contiguous(CL));
  CHECK(r88.suggest_memory_format() == CF);
  CHECK(strided({1, 2, 3, 4}, {24, 1, 8, 2}).reshape({1, 2, 3, 4}).suggest_memory_format() == CF);
  Tensor cl = strided({2, 3, 4, 5}, {60, 1, 15, 3});
  CHECK(cl.unsqueeze(2).suggest_memory_format() == CL3);
  CHECK(cl.unsqueeze(-1).is_contiguous(CL3));
  CHECK(cl.unsqueeze(-1).suggest_memory_format() == CF);
  CHECK(cl.permute({0, 2, 3, 1}).is_contiguous());
  // Views share the storage; flatten(1) of NHWC cannot.
  CHECK(cl.view({2, 3, 20}).is_alias_of(cl));
  CHECK(cl.reshape({2, 3, 5, 4}).is_alias_of(cl));
}

TEST_CASE("stride rules: to(dtype) keeps dense strides exactly and densifies others in their order") {
  check_rows({
      {"dense CL", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.to(lg::kFloat32); }, "(2,3,4,5)@(60,1,15,3)", Alias::No},
      {"NC11-CL keeps size-1 strides", {2, 3, 1, 1}, {3, 1, 3, 3}, [](auto& x) { return x.to(lg::kFloat32); }, "(2,3,1,1)@(3,1,3,3)", Alias::No},
      {"CL sliced", {2, 3, 2, 5}, {60, 1, 30, 3}, [](auto& x) { return x.to(lg::kFloat32); }, "(2,3,2,5)@(30,1,15,3)", Alias::No},
      {"CF sliced+transposed", {2, 3, 5, 2}, {60, 20, 1, 10}, [](auto& x) { return x.to(lg::kFloat16); }, "(2,3,5,2)@(30,10,1,5)", Alias::No},
      {"same dtype aliases", {2, 3, 2, 5}, {60, 1, 30, 3}, [](auto& x) { return x.to(lg::kFloat64); }, "(2,3,2,5)@(60,1,30,3)", Alias::Yes},
      {"copy=true copies", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.to(lg::kFloat64, true); }, "(2,3,4,5)@(60,1,15,3)", Alias::No},
      {"to(CL, copy=true) copies", {2, 3, 4, 5}, {60, 1, 15, 3}, [](auto& x) { return x.to(CL, true); }, "(2,3,4,5)@(60,1,15,3)", Alias::No},
      {"to(dtype, CL)", {2, 3, 4, 5}, {60, 20, 5, 1}, [](auto& x) { return x.to(lg::kFloat16, false, CL); }, "(2,3,4,5)@(60,1,15,3)", Alias::No},
  });
}

TEST_CASE("stride rules: clone and the *_like family with Preserve") {
  using Like = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<const char*, Like>> likes{
      {"clone", [](auto& x) { return x.clone(); }},
      {"empty_like", [](auto& x) { return lg::empty_like(x); }},
      {"zeros_like", [](auto& x) { return lg::zeros_like(x); }},
      {"ones_like", [](auto& x) { return lg::ones_like(x); }},
      {"full_like", [](auto& x) { return lg::full_like(x, 2.5); }},
      {"rand_like", [](auto& x) { return lg::rand_like(x); }},
      {"randn_like", [](auto& x) { return lg::randn_like(x); }},
  };
  struct Case { std::vector<int64_t> sizes, strides; const char* expected; };
  const std::vector<Case> cases{
      {{2, 3, 4, 5}, {60, 1, 15, 3}, "(60,1,15,3)"}, {{2, 3, 5, 4}, {60, 20, 1, 5}, "(60,20,1,5)"},
      {{2, 3, 2, 5}, {60, 1, 30, 3}, "(30,1,15,3)"}, {{2, 3, 5, 2}, {60, 20, 1, 10}, "(30,10,1,5)"},
      {{2, 1, 4, 5}, {60, 1, 15, 3}, "(20,1,5,1)"},  {{2, 3, 4, 5}, {20, 0, 5, 1}, "(60,20,5,1)"},
      {{2, 1, 1, 1}, {5, 5, 5, 5}, "(1,1,1,1)"},
  };
  for (const auto& [name, like] : likes) {
    for (const Case& c : cases) {
      CAPTURE(name);
      CAPTURE(lg::to_string(c.strides));
      CHECK(lg::to_string(like(strided(c.sizes, c.strides)).strides()) == c.expected);
    }
  }
  // An explicit format restrides like .to.
  CHECK(ls(lg::empty_like(strided({2, 3, 1, 1}, {3, 1, 1, 1}), CL)) == "(2,3,1,1)@(3,1,3,3)");
  CHECK(ls(lg::zeros_like(strided({2, 3, 1, 1}, {3, 1, 1, 1}), CL)) == "(2,3,1,1)@(3,1,3,3)");
}

TEST_CASE("stride rules: ambiguous shapes under to, contiguous and clone") {
  struct Amb { std::vector<int64_t> sizes, strides; const char* to; bool to_alias; const char* contig; const char* clone; MemoryFormat s_to, s_contig, s_clone; };
  const std::vector<Amb> rows{
      {{2, 1, 4, 5}, {20, 20, 5, 1}, "(20,1,5,1)", false, "(20,20,5,1)", "(20,1,5,1)", CL, CF, CL},
      {{2, 3, 1, 1}, {3, 1, 1, 1}, "(3,1,3,3)", false, "(3,1,1,1)", "(3,1,3,3)", CL, CF, CL},
      {{2, 1, 1, 1}, {1, 1, 1, 1}, "(1,1,1,1)", false, "(1,1,1,1)", "(1,1,1,1)", CF, CF, CF},
      {{1, 3, 4, 5}, {60, 20, 5, 1}, "(60,1,15,3)", false, "(60,1,15,3)", "(60,1,15,3)", CL, CL, CL},
  };
  for (const Amb& a : rows) {
    Tensor x = strided(a.sizes, a.strides);
    CAPTURE(ls(x));
    Tensor t = x.to(CL), c = x.contiguous(CL), k = x.clone(CL);
    CHECK(lg::to_string(t.strides()) == a.to);
    CHECK(t.is_same(x) == a.to_alias);
    CHECK(lg::to_string(c.strides()) == a.contig);
    CHECK(lg::to_string(k.strides()) == a.clone);
    CHECK(t.suggest_memory_format() == a.s_to);
    CHECK(c.suggest_memory_format() == a.s_contig);
    CHECK(k.suggest_memory_format() == a.s_clone);
  }
  // 5-D analogues.
  Tensor x5 = strided({2, 1, 4, 5, 6}, {120, 120, 30, 6, 1});
  CHECK(ls(x5.to(CL3)) == "(2,1,4,5,6)@(120,1,30,6,1)");
  CHECK(x5.contiguous(CL3).is_same(x5));
  Tensor y5 = strided({2, 3, 1, 1, 1}, {3, 1, 1, 1, 1});
  CHECK(ls(y5.to(CL3)) == "(2,3,1,1,1)@(3,1,3,3,3)");
  CHECK(y5.contiguous(CL3).is_same(y5));
  CHECK(y5.suggest_memory_format() == CF);
  CHECK(y5.to(CL3).suggest_memory_format() == CL3);
  // Going back: contiguous() keeps the CL tag of N1HW-CL/NC11-CL, to(CF) drops it.
  Tensor n1hw_cl = strided({2, 1, 4, 5}, {20, 1, 5, 1});
  CHECK(n1hw_cl.contiguous().is_same(n1hw_cl));
  CHECK(ls(n1hw_cl.to(CF)) == "(2,1,4,5)@(20,20,5,1)");
}

TEST_CASE("stride rules: one buffer can be contiguous in several formats") {
  struct P { std::vector<int64_t> sizes, strides; bool c, cl, cl3; };
  const std::vector<P> rows{
      {{2, 3, 4, 5}, {60, 20, 5, 1}, true, false, false},
      {{2, 3, 4, 5}, {60, 1, 15, 3}, false, true, false},
      {{2, 1, 4, 5}, {20, 20, 5, 1}, true, true, false},
      {{2, 1, 4, 5}, {20, 1, 5, 1}, true, true, false},
      {{2, 3, 1, 1}, {3, 1, 1, 1}, true, true, false},
      {{2, 3, 1, 1}, {3, 1, 3, 3}, true, true, false},
      {{1, 4, 1, 3}, {12, 1, 4, 4}, false, true, false},
      {{2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}, false, false, true},
      {{2, 1, 4, 5, 6}, {120, 1, 30, 6, 1}, true, false, true},
      {{2, 3, 4, 5, 1}, {60, 1, 15, 3, 1}, false, false, true},
      {{2, 0, 4, 5}, {0, 1, 0, 0}, true, true, false},
      {{2, 0, 4, 5}, {20, 20, 5, 1}, true, false, false},
  };
  for (const P& p : rows) {
    Tensor t = strided(p.sizes, p.strides);
    CAPTURE(ls(t));
    CHECK(t.is_contiguous() == p.c);
    CHECK(t.is_contiguous(CL) == p.cl);
    CHECK(t.is_contiguous(CL3) == p.cl3);
    CHECK(lg::layout::is_contiguous(p.sizes, p.strides, CL) == p.cl);
  }
}

TEST_CASE("stride rules: non-overlapping and dense") {
  using lg::layout::is_non_overlapping_and_dense;
  CHECK(is_non_overlapping_and_dense({2, 3, 5, 4}, {60, 20, 1, 5}));
  CHECK_FALSE(is_non_overlapping_and_dense({2, 3, 2, 5}, {60, 1, 30, 3}));
  CHECK_FALSE(is_non_overlapping_and_dense({2, 3, 4, 5}, {20, 0, 5, 1}));
  CHECK_FALSE(is_non_overlapping_and_dense({2, 1, 1, 1}, {5, 5, 5, 5}));
  CHECK(is_non_overlapping_and_dense({2, 0, 4, 5}, {7, 7, 7, 7}));  // empty: contiguous
  CHECK(is_non_overlapping_and_dense({1}, {9}));
  CHECK_FALSE(is_non_overlapping_and_dense({2}, {2}));
  CHECK(is_non_overlapping_and_dense({}, {}));
}

TEST_CASE("stride rules: channels-last inference walkthroughs and exclusions") {
  struct S { std::vector<int64_t> sizes, strides; MemoryFormat suggest; };
  const std::vector<S> rows{
      {{2, 3, 4, 5}, {60, 1, 15, 3}, CL},   {{2, 3, 1, 1}, {3, 1, 1, 1}, CF},
      {{2, 3, 1, 1}, {3, 1, 3, 3}, CL},     {{2, 1, 1, 1}, {1, 1, 1, 1}, CF},
      {{2, 1, 4, 5}, {20, 20, 5, 1}, CF},   {{2, 1, 4, 5}, {20, 1, 5, 1}, CL},
      {{1, 4, 1, 3}, {12, 1, 4, 4}, CF},    {{1, 3, 4, 5}, {3, 1, 15, 3}, CF},
      {{2, 3, 2, 5}, {60, 1, 30, 3}, CL},   {{2, 0, 4, 5}, {0, 1, 0, 0}, CF},
      {{2, 3, 4, 5}, {20, 0, 5, 1}, CF},    {{2, 1, 4, 1}, {4, 1, 1, 1}, CL},
      {{2, 3, 1, 1, 1}, {3, 1, 1, 1, 1}, CF}, {{2, 3, 1, 1, 1}, {3, 1, 3, 3, 3}, CL3},
      {{2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}, CL3}, {{2, 3, 4}, {12, 1, 3}, CF},
  };
  for (const S& s : rows) {
    Tensor t = strided(s.sizes, s.strides);
    CAPTURE(ls(t));
    CHECK(t.suggest_memory_format() == s.suggest);
    CHECK(lg::layout::suggest_memory_format(s.sizes, s.strides) == s.suggest);
  }
  // exact_match compares the size-1 strides literally.
  CHECK(strided({2, 3, 4, 5}, {60, 1, 15, 3}).suggest_memory_format(true) == CL);
  CHECK(strided({2, 3, 2, 5}, {60, 1, 30, 3}).suggest_memory_format(true) == CF);
  // The predicates never throw at a wrong rank.
  CHECK_FALSE(lg::layout::is_strides_like({2, 3, 4}, {12, 1, 3}, CL));
  CHECK_FALSE(lg::layout::is_strides_like({2, 3, 4, 5}, {60, 1, 15, 3}, CF));
}

}  // TEST_SUITE

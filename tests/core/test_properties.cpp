// Property tests over random shapes and strides: every invariant is checked on at least 10,000
// cases, against brute-force definitions where one exists.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "support/tensor_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using lg::testing::ls;
using lg::testing::strided;
using lg::testing::values;

constexpr int kCases = 10000;

struct Rng {
  std::mt19937_64 engine;
  explicit Rng(uint64_t seed) : engine(seed) {}
  int64_t uniform(int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(engine);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(engine); }
  template <typename T>
  const T& pick(const std::vector<T>& v) { return v[uniform(0, static_cast<int64_t>(v.size()) - 1)]; }
};

std::vector<int64_t> random_sizes(Rng& rng, int64_t rank, double zero_chance = 0.03) {
  std::vector<int64_t> sizes(rank);
  for (auto& s : sizes) s = rng.chance(zero_chance) ? 0 : rng.uniform(1, 4);
  return sizes;
}

// A tensor as programs make them: a fresh tensor in some format, then permutes, slices,
// expands and unsqueezes. Values are the storage positions (strided() over arange).
Tensor random_tensor(Rng& rng) {
  const int64_t rank = rng.uniform(0, 5);
  std::vector<int64_t> sizes = random_sizes(rng, rank);
  MemoryFormat fmt = MemoryFormat::Contiguous;
  if (rank == 4 && rng.chance(0.5)) fmt = MemoryFormat::ChannelsLast;
  if (rank == 5 && rng.chance(0.5)) fmt = MemoryFormat::ChannelsLast3d;
  Tensor t = strided(sizes, lg::layout::strides_for(sizes, fmt), rng.uniform(0, 3));
  if (rank >= 2 && rng.chance(0.3)) {
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng.engine);
    t = t.permute(perm);
  }
  if (rank >= 1 && rng.chance(0.35)) {
    const int64_t d = rng.uniform(0, rank - 1);
    t = t.slice(d, rng.uniform(0, 1), rng.uniform(1, 4), rng.uniform(1, 2));
  }
  if (rank >= 1 && rng.chance(0.1)) {
    std::vector<int64_t> target = t.sizes().vec();
    for (size_t d = 0; d < target.size(); ++d)
      if (target[d] == 1 && rng.chance(0.5)) target[d] = rng.uniform(2, 3);
    t = t.expand(target);
  }
  if (t.dim() < 5 && rng.chance(0.15)) t = t.unsqueeze(rng.uniform(0, t.dim()));
  return t;
}

// Raw random geometry for the predicates: strides from a small fixed set (0 for broadcast dims,
// small products of 2 and 3), so that equal strides and exact fits are common.
Tensor random_raw(Rng& rng) {
  static const std::vector<int64_t> kStrides{0, 1, 2, 3, 4, 6, 8, 12, 24, 36};
  const int64_t rank = rng.uniform(1, 5);
  std::vector<int64_t> sizes = random_sizes(rng, rank, 0.05), strides(rank);
  for (auto& s : strides) s = rng.pick(kStrides);
  // Half the cases start from a real generator so that "true" answers are common too.
  if (rng.chance(0.5)) {
    MemoryFormat fmt = rank == 4 && rng.chance(0.6) ? MemoryFormat::ChannelsLast
                       : rank == 5 && rng.chance(0.6) ? MemoryFormat::ChannelsLast3d
                                                      : MemoryFormat::Contiguous;
    strides = lg::layout::strides_for(sizes, fmt);
    for (size_t d = 0; d < strides.size(); ++d)
      if (sizes[d] == 1 && rng.chance(0.5)) strides[d] = rng.pick(kStrides);
  }
  return strided(sizes, strides);
}

// Dims in the memory order of fmt, outermost first (N,H,W,C for ChannelsLast).
std::vector<int64_t> memory_order(MemoryFormat fmt, int64_t rank) {
  if (fmt == MemoryFormat::ChannelsLast) return {0, 2, 3, 1};
  if (fmt == MemoryFormat::ChannelsLast3d) return {0, 2, 3, 4, 1};
  std::vector<int64_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

// Brute force: walking the elements in fmt's memory order visits offsets 0, 1, 2, ...
bool brute_is_contiguous(const Tensor& t, MemoryFormat fmt) {
  if (fmt == MemoryFormat::ChannelsLast && t.dim() != 4) return false;
  if (fmt == MemoryFormat::ChannelsLast3d && t.dim() != 5) return false;
  const std::vector<int64_t> order = memory_order(fmt, t.dim());
  std::vector<int64_t> permuted_sizes;
  for (int64_t d : order) permuted_sizes.push_back(t.size(d));
  int64_t expected = t.storage_offset();
  bool ok = true;
  lg::testing::for_each_index(permuted_sizes, [&](const std::vector<int64_t>& pidx) {
    std::vector<int64_t> idx(t.dim());
    for (size_t i = 0; i < order.size(); ++i) idx[order[i]] = pidx[i];
    ok = ok && lg::testing::offset_of(t, idx) == expected++;
  });
  return ok;
}

// Brute force: the elements occupy each offset of one contiguous range exactly once.
bool brute_is_dense(const Tensor& t) {
  std::set<int64_t> offsets;
  lg::testing::for_each_index(t.sizes(), [&](const std::vector<int64_t>& idx) {
    offsets.insert(lg::testing::offset_of(t, idx));
  });
  if (static_cast<int64_t>(offsets.size()) != t.numel()) return false;
  return *offsets.rbegin() - *offsets.begin() + 1 == t.numel();
}

// The storage offsets of t's elements in row-major order.
std::vector<int64_t> offsets(const Tensor& t) {
  std::vector<int64_t> out;
  lg::testing::for_each_index(t.sizes(), [&](const std::vector<int64_t>& idx) {
    out.push_back(lg::testing::offset_of(t, idx));
  });
  return out;
}

// Brute force: do strides exist that make `shape` address t's elements in row-major order?
bool brute_view_exists(const Tensor& t, const std::vector<int64_t>& shape) {
  const std::vector<int64_t> offs = offsets(t);
  if (offs.empty()) return true;
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> st(rank, 0);
  int64_t unit = 1;  // row-major linear index of the unit vector of dim d
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (shape[d] > 1) st[d] = offs[unit] - offs[0];
    unit *= shape[d];
  }
  int64_t k = 0;
  bool ok = true;
  lg::testing::for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = offs[0];
    for (int64_t d = 0; d < rank; ++d) off += idx[d] * st[d];
    ok = ok && off == offs[k++];
  });
  return ok;
}

// A random shape with the same number of elements as `sizes`.
std::vector<int64_t> random_reshape(Rng& rng, const Tensor& t) {
  std::vector<int64_t> factors;
  int64_t n = t.numel();
  if (n == 0) {
    std::vector<int64_t> shape = random_sizes(rng, rng.uniform(1, 4), 0.0);
    shape[rng.uniform(0, static_cast<int64_t>(shape.size()) - 1)] = 0;
    return shape;
  }
  for (int64_t p = 2; n > 1; ++p)
    while (n % p == 0) factors.push_back(p), n /= p;
  std::shuffle(factors.begin(), factors.end(), rng.engine);
  std::vector<int64_t> shape;
  for (int64_t f : factors) {
    if (shape.empty() || rng.chance(0.5)) shape.push_back(f);
    else shape.back() *= f;
  }
  // Sprinkle size-1 dims: they are where view strides get rewritten.
  while (shape.size() < 6 && rng.chance(0.3))
    shape.insert(shape.begin() + rng.uniform(0, static_cast<int64_t>(shape.size())), 1);
  if (!shape.empty() && rng.chance(0.2)) shape[rng.uniform(0, static_cast<int64_t>(shape.size()) - 1)] = -1;
  return shape;
}

// dim_order() without the letters of size-1 dims.
std::string nontrivial_order(const Tensor& t) {
  std::string out;
  for (char c : t.dim_order())
    if (t.size(c - 'a') > 1) out += c;
  return out;
}

// v converted to dtype and back, with the cast rules a tensor copy uses.
double cast_through(double v, lg::DType dtype) {
  return lg::visit_dtype(dtype, [&]<typename T>(std::type_identity<T>) {
    return static_cast<double>(lg::Scalar(v).to<T>());
  });
}

std::vector<MemoryFormat> formats_for(int64_t rank) {
  std::vector<MemoryFormat> f{MemoryFormat::Contiguous};
  if (rank == 4) f.push_back(MemoryFormat::ChannelsLast);
  if (rank == 5) f.push_back(MemoryFormat::ChannelsLast3d);
  return f;
}

}  // namespace

TEST_SUITE("property") {

TEST_CASE("contiguity predicates agree with the brute-force definition on 10,000 geometries") {
  Rng rng(1);
  int trues = 0;
  for (int i = 0; i < kCases; ++i) {
    Tensor t = random_raw(rng);
    if (t.numel() == 0) continue;  // c10 answers empty tensors by its generator walk instead
    for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast,
                           MemoryFormat::ChannelsLast3d}) {
      CAPTURE(ls(t));
      CAPTURE(f);
      const bool expected = brute_is_contiguous(t, f);
      REQUIRE(t.is_contiguous(f) == expected);
      trues += expected;
    }
  }
  CHECK(trues > 1000);  // the generator really produced contiguous cases of every kind
}

TEST_CASE("non-overlapping-and-dense agrees with the brute-force definition on 10,000 geometries") {
  Rng rng(2);
  int dense = 0;
  for (int i = 0; i < kCases; ++i) {
    Tensor t = random_raw(rng);
    CAPTURE(ls(t));
    const bool expected = t.numel() == 0 || brute_is_dense(t);
    REQUIRE(t.is_non_overlapping_and_dense() == expected);
    dense += expected;
  }
  CHECK(dense > 2000);
  CHECK(dense < kCases - 2000);
}

TEST_CASE("to(fmt) keeps values and is contiguous in fmt unless it aliased a tensor suggesting fmt") {
  Rng rng(3);
  for (int i = 0; i < kCases; ++i) {
    Tensor t = random_tensor(rng);
    for (MemoryFormat f : formats_for(t.dim())) {
      CAPTURE(ls(t));
      CAPTURE(f);
      Tensor out = t.to(f);
      REQUIRE(values(out) == values(t));
      // ATen's alias rule for to(fmt) (the suggested format decides), both ways; a copy gets
      // the format's generator strides. `layoutguard explain` predicts conversions with exactly
      // these rules.
      REQUIRE(out.is_same(t) == (t.suggest_memory_format() == f));
      if (!out.is_same(t)) {
        REQUIRE(out.strides().vec() == lg::layout::strides_for(t.sizes(), f));
        REQUIRE_FALSE(out.is_alias_of(t));
      }
      Tensor c = t.contiguous(f);
      REQUIRE(c.is_contiguous(f));
      REQUIRE(values(c) == values(t));
      REQUIRE(c.is_same(t) == t.is_contiguous(f));
      if (!c.is_same(t)) REQUIRE(c.strides().vec() == lg::layout::strides_for(t.sizes(), f));
    }
  }
}

TEST_CASE("clone(Preserve) keeps dense strides and the dim order of non-dense tensors") {
  Rng rng(4);
  for (int i = 0; i < kCases; ++i) {
    Tensor t = random_tensor(rng);
    CAPTURE(ls(t));
    Tensor c = t.clone();
    REQUIRE(values(c) == values(t));
    REQUIRE(c.is_non_overlapping_and_dense());
    REQUIRE(c.strides().vec() == lg::layout::preserved_strides(t.sizes(), t.strides()));
    if (t.is_non_overlapping_and_dense()) {
      REQUIRE(c.strides() == t.strides());
    } else {
      // Size-1 dims have no place in memory; the order of the others is kept.
      REQUIRE(nontrivial_order(c) == nontrivial_order(t));
      REQUIRE(lg::empty_like(t).strides() == c.strides());
    }
    // to(dtype) follows the same Preserve rule.
    REQUIRE(t.to(lg::kFloat32).strides() == c.strides());
  }
}

TEST_CASE("view and reshape address the same elements as a contiguous copy") {
  Rng rng(5);
  int views = 0, copies = 0;
  for (int i = 0; i < kCases; ++i) {
    Tensor t = random_tensor(rng);
    const std::vector<int64_t> shape = random_reshape(rng, t);
    CAPTURE(ls(t));
    CAPTURE(lg::to_string(shape));
    const std::vector<int64_t> resolved = lg::layout::infer_size(shape, t.numel(), "test");
    const bool possible = brute_view_exists(t, resolved);
    Tensor r = t.reshape(shape);
    REQUIRE(r.sizes() == lg::IntArrayRef(resolved));
    REQUIRE(values(r) == values(t.contiguous()));
    if (possible) {
      Tensor v = t.view(shape);
      // The same storage positions, element for element: a true view.
      REQUIRE(offsets(v) == offsets(t));
      REQUIRE(r.is_alias_of(t));
      ++views;
    } else {
      REQUIRE_THROWS_AS(t.view(shape), lg::ValueError);
      REQUIRE_FALSE(r.is_alias_of(t));
      REQUIRE(r.is_contiguous());
      ++copies;
    }
  }
  CHECK(views > 1000);
  CHECK(copies > 1000);
}

TEST_CASE("copy_ between random layouts and dtypes writes every element once") {
  Rng rng(6);
  const std::vector<lg::DType> dtypes{lg::kFloat32, lg::kFloat16, lg::kBFloat16, lg::kFloat64,
                                      lg::kInt64,   lg::kInt32,   lg::kUInt8};
  for (int i = 0; i < kCases; ++i) {
    Tensor src = random_tensor(rng).to(rng.pick(dtypes));
    // Destinations must not self-overlap: take a fresh tensor in a random dense layout.
    Tensor layout_donor = random_tensor(rng);
    std::vector<int64_t> dst_strides =
        lg::layout::infer_dense_strides(src.sizes(), src.dim() == layout_donor.dim()
                                                         ? layout_donor.strides()
                                                         : src.strides());
    Tensor dst = lg::empty_strided(src.sizes(), dst_strides, rng.pick(dtypes));
    CAPTURE(ls(src));
    CAPTURE(ls(dst));
    dst.copy_(src);
    std::vector<double> expected = values(src);
    for (double& v : expected) v = cast_through(v, dst.dtype());
    REQUIRE(values(dst) == expected);
  }
}

TEST_CASE("a pointwise op on one tensor: fast path for dense inputs, dense dim-order copy otherwise") {
  Rng rng(8);
  for (int i = 0; i < kCases; ++i) {
    Tensor t = random_tensor(rng);
    CAPTURE(ls(t));
    const std::vector<int64_t> out = lg::layout::pointwise_output_strides({{t.sizes(), t.strides()}});
    if (t.numel() > 0 && !t.is_non_overlapping_and_dense()) {
      REQUIRE(out == lg::layout::infer_dense_strides(t.sizes(), t.strides()));
    } else if (t.is_contiguous()) {
      REQUIRE(out == lg::layout::contiguous_strides(t.sizes()));
    } else if (t.is_contiguous(MemoryFormat::ChannelsLast)) {
      REQUIRE(out == lg::layout::channels_last_strides(t.sizes()));
    } else {
      REQUIRE(lg::IntArrayRef(out) == t.strides());
    }
    REQUIRE(lg::layout::is_non_overlapping_and_dense(t.sizes(), out));
  }
}

TEST_CASE("suggest_memory_format decides to()'s aliasing and empty_like's layout") {
  Rng rng(7);
  for (int i = 0; i < kCases; ++i) {
    Tensor t = random_tensor(rng);
    CAPTURE(ls(t));
    const MemoryFormat s = t.suggest_memory_format();
    REQUIRE(t.to(s).is_same(t));
    Tensor like = lg::empty_like(t);
    REQUIRE(like.is_non_overlapping_and_dense());
    // A dense result in the input's order suggests what the input suggests, unless the input
    // is non-dense or zero-size (a size-0 dim never suggests channels_last) or has broadcast dims.
    if (t.is_non_overlapping_and_dense()) REQUIRE(like.suggest_memory_format() == s);
  }
}

}  // TEST_SUITE

// detail::DerivedCache (src/core/derived_cache.h), which keeps CUDA batch norm's evaluation
// coefficients and the norms' float64 weights between forwards: a hit needs the same storages
// at the same versions, offsets, sizes, strides, dtypes and devices and the same parameters;
// anything else makes again. A new version replaces the old entry; a result that is a source
// is not kept; entries and bytes are bounded.
#include <doctest/doctest.h>

#include <layoutguard/layoutguard.h>

#include "core/derived_cache.h"

namespace {

using lg::Tensor;

struct Counted {
  lg::detail::DerivedCache cache{64, int64_t{1} << 20};
  int made = 0;
  Tensor get(std::initializer_list<Tensor> sources, std::initializer_list<int64_t> params = {1}) {
    return cache.get(sources, params, [&] {
      ++made;
      return lg::zeros({1});
    });
  }
};

}  // namespace

TEST_SUITE("tensor") {

TEST_CASE("a derived tensor is made again only when a source or a parameter changes") {
  Counted c;
  const Tensor mean = lg::zeros({8}), var = lg::ones({8});
  const Tensor first = c.get({mean, var});
  CHECK(c.get({mean, var}).is_same(first));
  CHECK(c.get({mean.view({8}), var}).is_same(first));  // another handle on the same state
  CHECK(c.made == 1);

  lg::add_(mean, 1.0);  // in-place ops bump the storage's version
  CHECK(!c.get({mean, var}).is_same(first));
  CHECK(c.made == 2);
  mean.bump_version();  // as after a write through data_ptr
  c.get({mean, var});
  CHECK(c.made == 3);

  c.get({mean, var}, {2});  // another parameter
  c.get({var, mean});       // the sources' order matters
  c.get({mean, Tensor()});  // an absent source
  c.get({mean.clone(), var});  // equal values, another storage
  CHECK(c.made == 7);
  const Tensor wide = lg::zeros({16});
  c.get({wide.slice(0, 0, 16, 2), var});  // another stride
  c.get({wide.slice(0, 8, 16), var});     // another offset
  c.get({wide.slice(0, 0, 8), var});
  c.get({wide.slice(0, 0, 8).to(lg::kFloat64), var});  // another dtype (and storage)
  CHECK(c.made == 11);
  c.get({wide.slice(0, 0, 8), var});
  CHECK(c.made == 11);
}

TEST_CASE("a full derived-tensor cache starts over") {
  Counted c;
  const Tensor t = lg::zeros({4});
  for (int64_t i = 0; i < 64; ++i) c.get({t}, {i});
  CHECK(c.cache.size() == 64);
  CHECK(c.made == 64);
  c.get({t}, {64});
  CHECK(c.cache.size() == 1);
  c.get({t}, {0});
  CHECK(c.made == 66);
}

TEST_CASE("a source's new version replaces its entry, and a result that is a source is not kept") {
  Counted c;
  Tensor w = lg::zeros({8});
  for (int step = 0; step < 10; ++step) {
    c.get({w});
    lg::add_(w, 1.0);
  }
  CHECK(c.made == 10);
  CHECK(c.cache.size() == 1);  // one entry for w, not one per version
  CHECK(c.cache.bytes() == 4);  // lg::zeros({1}) in float32

  lg::detail::DerivedCache passthrough{64, int64_t{1} << 20};
  int made = 0;
  const auto same = [&] {
    return passthrough.get({w}, {}, [&] {
      ++made;
      return w.contiguous();  // already contiguous: w itself
    });
  };
  CHECK(same().is_same(w));
  CHECK(same().is_same(w));
  CHECK(made == 2);
  CHECK(passthrough.size() == 0);  // never holds the caller's tensor
  CHECK(w.use_count() == 1);
}

TEST_CASE("a derived-tensor cache past its byte bound starts over") {
  lg::detail::DerivedCache cache{64, 100};
  const auto get = [&](const Tensor& src, int64_t n) { return cache.get({src}, {n}, [&] { return lg::zeros({n}); }); };
  const Tensor a = lg::zeros({1}), b = lg::zeros({1});
  get(a, 10);  // 40 bytes
  get(b, 12);  // 48 bytes: 88 in all
  CHECK(cache.size() == 2);
  get(a, 5);  // 20 more would pass 100
  CHECK(cache.size() == 1);
  CHECK(cache.bytes() == 20);
}

}  // TEST_SUITE

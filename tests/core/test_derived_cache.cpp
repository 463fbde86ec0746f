// detail::DerivedCache (src/core/derived_cache.h), which keeps CUDA batch norm's evaluation
// coefficients between forwards: a hit needs the same storages at the same versions, offsets,
// sizes, strides, dtypes and devices and the same parameters; anything else makes again.
#include <doctest/doctest.h>

#include <layoutguard/layoutguard.h>

#include "core/derived_cache.h"

namespace {

using lg::Tensor;

struct Counted {
  lg::detail::DerivedCache cache{64};
  int made = 0;
  Tensor get(std::initializer_list<Tensor> sources, std::initializer_list<int64_t> params = {1}) {
    return cache.get(sources, params, [&] {
      ++made;
      return lg::zeros({1});
    });
  }
};

}  // namespace

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

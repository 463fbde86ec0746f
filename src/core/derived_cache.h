// Tensors computed from other tensors, kept until a source changes: the batch-norm scale and
// shift that evaluation derives from the running stats on every forward, for instance.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <vector>

#include <layoutguard/tensor.h>

namespace lg::detail {

// A source is identified by its storage's id (never reused), its version (bumped by every
// in-place op and by Tensor::bump_version after a write through data_ptr), its offset,
// sizes, strides, dtype and device; an undefined source counts as one fixed "absent" value.
// `params` are the caller's other inputs (an epsilon's bits, a channel count), always as many
// for one cache (one call site per cache). A full cache starts over. Thread-safe; make() runs
// outside the lock.
class DerivedCache {
 public:
  explicit DerivedCache(size_t max_entries) : max_entries_(max_entries) {}

  Tensor get(std::initializer_list<Tensor> sources, std::initializer_list<int64_t> params,
             const std::function<Tensor()>& make);
  size_t size() const;

 private:
  size_t max_entries_;
  mutable std::mutex mutex_;
  std::map<std::vector<int64_t>, Tensor> entries_;
};

}  // namespace lg::detail

// Tensors computed from other tensors, kept until a source changes: the batch-norm scale and
// shift that evaluation derives from the running stats on every forward, for instance.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <vector>

#include <layoutguard/tensor.h>

namespace lg::detail {

// A source is identified by its storage's id (never reused), offset, sizes, strides, dtype and
// device, and its state by its version (bumped by every in-place op and by
// Tensor::bump_version after a write through data_ptr); an undefined source counts as one
// fixed "absent" value. `params` are the caller's other inputs (an epsilon's bits, a channel
// count), always as many for one cache (one call site per cache).
//
// One entry per identity: a source's new version replaces the derived tensor made from the
// old one, so a weight updated every step holds one copy, not one per step. A result that
// shares memory with a source (make() had nothing to convert) is returned but not kept, so
// the cache never holds a caller's own tensor. Past max_entries or max_bytes of derived
// tensors the cache starts over. Thread-safe; make() runs outside the lock.
class DerivedCache {
 public:
  DerivedCache(size_t max_entries, int64_t max_bytes) : max_entries_(max_entries), max_bytes_(max_bytes) {}

  Tensor get(std::initializer_list<Tensor> sources, std::initializer_list<int64_t> params,
             const std::function<Tensor()>& make);
  size_t size() const;
  int64_t bytes() const;

 private:
  struct Entry {
    std::vector<int64_t> versions;
    Tensor made;
  };
  size_t max_entries_;
  int64_t max_bytes_;
  mutable std::mutex mutex_;
  std::map<std::vector<int64_t>, Entry> entries_;  // by identity
  int64_t bytes_ = 0;
};

// A double parameter (an epsilon, a fill value) as DerivedCache params take it: its bits, so
// values that print alike stay apart.
inline int64_t double_param(double v) { return std::bit_cast<int64_t>(v); }

}  // namespace lg::detail

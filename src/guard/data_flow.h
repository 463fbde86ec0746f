// Pieces for following data through a run, shared by lg::audit::FlowRecorder (rows) and the
// guard's loss spans (sites, src/guard/spans.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include <layoutguard/hooks.h>
#include <layoutguard/tensor.h>

namespace lg::guard::detail {

// The operand a call is summarised by: its first 4-D/5-D tensor, else its first one.
inline const Tensor* main_operand(std::span<const Tensor> ts) {
  for (const Tensor& t : ts)
    if (t.defined() && (t.dim() == 4 || t.dim() == 5)) return &t;
  return ts.empty() ? nullptr : &ts[0];
}

// The layout-conversion bytes inside the depth-0 call that has not finished yet. Inner calls
// come first and add to it; the depth-0 call takes it. Bytes left by another root call (one
// that raised before its depth-0 record) are not the next call's: they are dropped.
class PendingBytes {
 public:
  void add(const hooks::OpCall& call, int64_t bytes) {
    if (bytes == 0 && bytes_ == 0) return;  // nothing pending, nothing to add: the common call
    if (call.root_op != root_ || call.module_path != module_) {
      bytes_ = 0;
      root_ = call.root_op;
      module_ = call.module_path;
    }
    bytes_ += bytes;
  }
  int64_t take() {
    const int64_t b = bytes_;
    bytes_ = 0;
    root_.clear();
    module_.clear();
    return b;
  }

 private:
  int64_t bytes_ = 0;
  std::string root_, module_;
};

// Which earlier call made a tensor: a value per tensor, keyed by its TensorImpl's address and
// held with a weak reference, so no activation is kept alive for the analysis and an entry
// whose tensor died reads as absent. While the weak reference lives, make_shared's control
// block keeps the address from reuse, so a live tensor never meets a dead one's entry; dead
// entries are swept when the map has doubled.

template <typename V>
class ProducerMap {
 public:
  std::optional<V> find(const Tensor& t) const {
    if (!t.defined() || entries_.empty()) return std::nullopt;
    const auto it = entries_.find(t.impl_ptr().get());
    if (it == entries_.end() || it->second.impl.expired()) return std::nullopt;
    return it->second.value;
  }

  void set(const Tensor& t, V value) {
    if (!t.defined()) return;
    entries_[t.impl_ptr().get()] = Entry{t.impl_ptr(), value};
    if (entries_.size() >= sweep_at_) {
      std::erase_if(entries_, [](const auto& e) { return e.second.impl.expired(); });
      sweep_at_ = std::max<size_t>(kFirstSweep, 2 * entries_.size());
    }
  }

  bool empty() const { return entries_.empty(); }
  void clear() {
    entries_.clear();
    sweep_at_ = kFirstSweep;
  }

 private:
  static constexpr size_t kFirstSweep = 1024;
  struct Entry {
    std::weak_ptr<lg::detail::TensorImpl> impl;
    V value;
  };
  std::unordered_map<const void*, Entry> entries_;
  size_t sweep_at_ = kFirstSweep;
};

}  // namespace lg::guard::detail

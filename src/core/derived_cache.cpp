// DerivedCache: keys made of the sources' identity and state.
#include "core/derived_cache.h"

namespace lg::detail {

Tensor DerivedCache::get(std::initializer_list<Tensor> sources, std::initializer_list<int64_t> params,
                         const std::function<Tensor()>& make) {
  // One allocation for the key: it is built on every call (growing it element by element
  // cost more than the map lookup).
  size_t length = params.size();
  for (const Tensor& t : sources) length += t.defined() ? 7 + 2 * static_cast<size_t>(t.dim()) : 1;
  std::vector<int64_t> key;
  key.reserve(length);
  key.assign(params.begin(), params.end());
  for (const Tensor& t : sources) {
    if (!t.defined()) {
      key.push_back(-1);
      continue;
    }
    for (int64_t v : {static_cast<int64_t>(t.storage().id()), static_cast<int64_t>(t.version()), t.storage_offset(),
                      static_cast<int64_t>(t.dtype()), static_cast<int64_t>(t.device().type()),
                      static_cast<int64_t>(t.device().index()), t.dim()})
      key.push_back(v);
    for (int64_t v : t.sizes()) key.push_back(v);
    for (int64_t v : t.strides()) key.push_back(v);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) return it->second;
  }
  Tensor made = make();
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.size() >= max_entries_) entries_.clear();
  return entries_.emplace(std::move(key), std::move(made)).first->second;
}

size_t DerivedCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace lg::detail

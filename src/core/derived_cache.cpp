// DerivedCache: entries by the sources' identity, checked against their versions.
#include "core/derived_cache.h"

namespace lg::detail {

Tensor DerivedCache::get(std::initializer_list<Tensor> sources, std::initializer_list<int64_t> params,
                         const std::function<Tensor()>& make) {
  // One allocation for the key: it is built on every call (growing it element by element
  // cost more than the map lookup).
  size_t length = params.size();
  for (const Tensor& t : sources) length += t.defined() ? 6 + 2 * static_cast<size_t>(t.dim()) : 1;
  std::vector<int64_t> identity, versions;
  identity.reserve(length);
  versions.reserve(sources.size());
  identity.assign(params.begin(), params.end());
  for (const Tensor& t : sources) {
    if (!t.defined()) {
      identity.push_back(-1);
      versions.push_back(-1);
      continue;
    }
    for (int64_t v : {static_cast<int64_t>(t.storage().id()), t.storage_offset(), static_cast<int64_t>(t.dtype()),
                      static_cast<int64_t>(t.device().type()), static_cast<int64_t>(t.device().index()), t.dim()})
      identity.push_back(v);
    for (int64_t v : t.sizes()) identity.push_back(v);
    for (int64_t v : t.strides()) identity.push_back(v);
    versions.push_back(static_cast<int64_t>(t.version()));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = entries_.find(identity); it != entries_.end() && it->second.versions == versions)
      return it->second.made;
  }
  Tensor made = make();
  for (const Tensor& t : sources)
    if (t.defined() && made.is_alias_of(t)) return made;  // nothing was derived: not kept
  const int64_t made_bytes = static_cast<int64_t>(made.storage().nbytes());
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = entries_.find(identity); it != entries_.end()) {
    bytes_ -= static_cast<int64_t>(it->second.made.storage().nbytes());
    entries_.erase(it);
  }
  if (entries_.size() >= max_entries_ || bytes_ + made_bytes > max_bytes_) {
    entries_.clear();
    bytes_ = 0;
  }
  bytes_ += made_bytes;
  entries_.emplace(std::move(identity), Entry{std::move(versions), made});
  return made;
}

size_t DerivedCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

int64_t DerivedCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

}  // namespace lg::detail

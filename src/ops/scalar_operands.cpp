// The cache behind detail::cached_scalar_operand.
#include "ops/scalar_operands.h"

#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace lg::detail {
namespace {

// (device type, device index, dtype, scalar kind, the value's 8 bytes)
using Key = std::tuple<int, int, int, int, uint64_t>;

Key key_of(const Scalar& value, DType dtype, Device device) {
  uint64_t bits = 0;
  if (value.is_floating_point()) {
    const double d = value.to_double();
    std::memcpy(&bits, &d, sizeof bits);  // -0.0 and 0.0, and each NaN payload, stay apart
  } else {
    bits = static_cast<uint64_t>(value.to_int64());
  }
  return {static_cast<int>(device.type()), device.index(), static_cast<int>(dtype), static_cast<int>(value.kind()),
          bits};
}

}  // namespace

Tensor cached_scalar_operand(const Scalar& value, DType dtype, Device device, const std::function<Tensor()>& make) {
  // Never destroyed: device tensors freed by static destructors could outlive the runtime.
  static auto* mutex = new std::mutex;
  static auto* cache = new std::map<Key, Tensor>;
  const Key key = key_of(value, dtype, device);
  {
    std::lock_guard<std::mutex> lock(*mutex);
    if (auto it = cache->find(key); it != cache->end()) return it->second;
  }
  Tensor made = make();  // outside the lock: it runs ops, which may come back here
  std::lock_guard<std::mutex> lock(*mutex);
  if (cache->size() >= kMaxCachedScalars) cache->clear();
  return cache->emplace(key, std::move(made)).first->second;
}

}  // namespace lg::detail

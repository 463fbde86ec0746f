// The content-keyed cache behind cuda::detail::device_table.
#include "cuda/device_tables.h"

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include <layoutguard/factories.h>

namespace lg::cuda::detail {
namespace {

// Beyond this many cached bytes the cache starts over (tables of live models are far smaller).
constexpr size_t kMaxCachedBytes = size_t{64} << 20;

template <typename T>
Tensor cached(const std::vector<T>& values, DType dtype, Device device) {
  static std::mutex mutex;
  static std::unordered_map<std::string, Tensor> cache;
  static size_t cached_bytes = 0;
  const size_t bytes = values.size() * sizeof(T);
  std::string key(sizeof(int) + 1 + bytes, '\0');
  const int index = device.index();
  std::memcpy(key.data(), &index, sizeof index);
  key[sizeof(int)] = static_cast<char>(dtype);
  if (bytes > 0) std::memcpy(key.data() + sizeof(int) + 1, values.data(), bytes);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Tensor host = empty({static_cast<int64_t>(values.size())}, dtype);
  if (bytes > 0) std::memcpy(host.data_ptr(), values.data(), bytes);
  Tensor table = host.to(device);
  if (cached_bytes + bytes > kMaxCachedBytes) {
    cache.clear();
    cached_bytes = 0;
  }
  cache.emplace(std::move(key), table);
  cached_bytes += bytes;
  return table;
}

}  // namespace

Tensor device_table(const std::vector<int64_t>& values, Device device) { return cached(values, kInt64, device); }
Tensor device_table(const std::vector<double>& values, Device device) { return cached(values, kFloat64, device); }

}  // namespace lg::cuda::detail

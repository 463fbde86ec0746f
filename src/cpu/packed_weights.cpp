// The packed-weight cache: a small LRU list under one mutex. Lookups are per convolution call
// (not per element), so the lock is not on any hot path.
#include "cpu/packed_weights.h"

#include <list>
#include <mutex>
#include <vector>

#include <layoutguard/factories.h>

#include "cpu/elementwise.h"
#include "cpu/panel_gemm.h"

namespace lg::cpu {
namespace {

struct Key {
  uint64_t storage_id = 0;
  uint64_t version = 0;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
  DType dtype = kFloat32, compute = kFloat32;
  std::array<int, 5> order{};
  int64_t panel_groups = 0;  // > 0: the panel GEMM's packing (cpu/panel_gemm.h) of this many groups
  bool operator==(const Key&) const = default;
};

struct Entry {
  Key key;
  std::weak_ptr<const void> storage;  // the source weight's storage; expired -> evict
  Tensor packed;
};

// Bounded by entries and bytes: a ResNet-50 has 53 convolutions and ~100 MB of float32 weights.
constexpr size_t kMaxEntries = 512;
constexpr int64_t kMaxBytes = int64_t{1} << 30;

struct Cache {
  std::mutex mutex;
  std::list<Entry> entries;  // most recently used first
  PackCacheStats stats;
};

Cache& cache() {
  static Cache c;
  return c;
}

// Strides of a dense tensor of `sizes` whose memory order is `order` (outermost first).
std::vector<int64_t> strides_in_order(IntArrayRef sizes, const std::array<int, 5>& order) {
  std::vector<int64_t> strides(5);
  int64_t step = 1;
  for (int i = 4; i >= 0; --i) {
    strides[order[i]] = step;
    step *= std::max<int64_t>(sizes[order[i]], 1);
  }
  return strides;
}

bool has_order(const Tensor& w, const std::array<int, 5>& order) {
  const std::vector<int64_t> want = strides_in_order(w.sizes(), order);
  for (int d = 0; d < 5; ++d)
    if (w.size(d) > 1 && w.stride(d) != want[d]) return false;
  return true;
}

// dst (dense, compute dtype) = src, element by element over the 5-D index space.
template <typename S, typename C>
void convert_into(const Tensor& dst, const Tensor& src) {
  const auto sz = src.sizes();
  const S* s = src.data_ptr<S>();
  C* d = dst.data_ptr<C>();
  for (int64_t a = 0; a < sz[0]; ++a)
    for (int64_t b = 0; b < sz[1]; ++b)
      for (int64_t c = 0; c < sz[2]; ++c)
        for (int64_t e = 0; e < sz[3]; ++e)
          for (int64_t f = 0; f < sz[4]; ++f) {
            const int64_t si = a * src.stride(0) + b * src.stride(1) + c * src.stride(2) + e * src.stride(3) +
                               f * src.stride(4);
            const int64_t di = a * dst.stride(0) + b * dst.stride(1) + c * dst.stride(2) + e * dst.stride(3) +
                               f * dst.stride(4);
            d[di] = static_cast<C>(static_cast<ComputeType<S>>(s[si]));
          }
}

Tensor pack(const Tensor& weight, DType compute, const std::array<int, 5>& order) {
  Tensor out = empty_strided(weight.sizes(), strides_in_order(weight.sizes(), order), TensorOptions().dtype(compute));
  visit_dtype(weight.dtype(), [&]<typename S>(std::type_identity<S>) {
    if constexpr (kIsFloating<S>) {
      if (compute == kFloat64) convert_into<S, double>(out, weight);
      else convert_into<S, float>(out, weight);
    } else {
      LG_ASSERT(false, "packing a ", weight.dtype(), " convolution weight");
    }
  });
  return out;
}

// The NHWC GEMM's B for group gi is [(tap, i) x o] over that group's output channels: the
// (tap, i, o)-ordered weight, columns gi * cg_out onwards, row stride C_out.
Tensor pack_panels_of(const Tensor& weight, int64_t groups) {
  const Tensor plain = weight.dtype() == kFloat32 && has_order(weight, kOrderTapsIO)
                           ? weight
                           : pack(weight, kFloat32, kOrderTapsIO);
  const int64_t c_out = weight.size(0), cg_out = c_out / groups;
  const int64_t k = weight.size(1) * weight.size(2) * weight.size(3) * weight.size(4);
  const int64_t per_group = panel_buffer_size(k, cg_out);
  Tensor out = empty({groups * per_group}, TensorOptions().dtype(kFloat32));
  const float* src = plain.data_ptr<float>();
  for (int64_t gi = 0; gi < groups; ++gi)
    pack_panels(src + gi * cg_out, c_out, k, cg_out, out.data_ptr<float>() + gi * per_group);
  return out;
}

// The cached packing under `key`, built by `build` on a miss.
template <typename Build>
Tensor cached(Key key, const Tensor& weight, Build&& build) {
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
      if (it->key == key) {
        c.entries.splice(c.entries.begin(), c.entries, it);
        ++c.stats.hits;
        return it->packed;
      }
    }
    ++c.stats.misses;
  }
  Tensor packed = build();  // outside the lock: packing takes time

  std::lock_guard<std::mutex> lock(c.mutex);
  c.entries.push_front(Entry{std::move(key), weight.storage().watch(), packed});
  c.stats.bytes += static_cast<int64_t>(packed.nbytes());
  // Drop packings of freed or rewritten weights (their keys can never match again), then the
  // least recently used ones past the bounds.
  for (auto it = std::next(c.entries.begin()); it != c.entries.end();) {
    const bool stale = it->storage.expired() || (it->key.storage_id == c.entries.front().key.storage_id &&
                                                 it->key.version != c.entries.front().key.version);
    if (stale) {
      c.stats.bytes -= static_cast<int64_t>(it->packed.nbytes());
      it = c.entries.erase(it);
    } else {
      ++it;
    }
  }
  while (c.entries.size() > kMaxEntries || (c.stats.bytes > kMaxBytes && c.entries.size() > 1)) {
    c.stats.bytes -= static_cast<int64_t>(c.entries.back().packed.nbytes());
    c.entries.pop_back();
  }
  c.stats.entries = static_cast<int64_t>(c.entries.size());
  return packed;
}

Key key_of(const Tensor& weight, DType compute, const std::array<int, 5>& order, int64_t panel_groups) {
  return Key{weight.storage().id(), weight.version(), weight.storage_offset(), weight.sizes().vec(),
             weight.strides().vec(), weight.dtype(), compute, order, panel_groups};
}

}  // namespace

Tensor packed_weight(const Tensor& weight, DType compute, const std::array<int, 5>& order) {
  LG_ASSERT(weight.dim() == 5, "packed_weight takes 5-D weights");
  if (weight.dtype() == compute && has_order(weight, order)) return weight;
  return cached(key_of(weight, compute, order, 0), weight, [&] { return pack(weight, compute, order); });
}

Tensor packed_weight_panels(const Tensor& weight, int64_t groups) {
  LG_ASSERT(weight.dim() == 5 && groups > 0 && weight.size(0) % groups == 0, "packed_weight_panels of ",
            weight.sizes(), " in ", groups, " groups");
  return cached(key_of(weight, kFloat32, kOrderTapsIO, groups), weight, [&] { return pack_panels_of(weight, groups); });
}

PackCacheStats pack_cache_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  PackCacheStats s = c.stats;
  s.entries = static_cast<int64_t>(c.entries.size());
  return s;
}

void clear_pack_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.entries.clear();
  c.stats = {};
}

}  // namespace lg::cpu

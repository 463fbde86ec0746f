// Helpers shared by the tests: sizes@strides layout strings, element readers, strided builders.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <layoutguard/layoutguard.h>

namespace lg::testing {

// "(2,3,4,5)@(60,1,15,3)": sizes@strides, the notation of the layout rows and docs.
inline std::string ls(const Tensor& t) { return to_string(t.sizes()) + "@" + to_string(t.strides()); }

// Storage offset (in elements, from the tensor's storage start) of the element at idx.
inline int64_t offset_of(const Tensor& t, const std::vector<int64_t>& idx) {
  int64_t off = t.storage_offset();
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.stride(static_cast<int64_t>(d));
  return off;
}

// Calls fn(index) for every multi-index in row-major order.
template <typename Fn>
void for_each_index(IntArrayRef sizes, Fn&& fn) {
  for (int64_t s : sizes)
    if (s == 0) return;
  std::vector<int64_t> idx(sizes.size(), 0);
  while (true) {
    fn(idx);
    size_t k = idx.size();
    while (k > 0) {
      --k;
      if (++idx[k] < sizes[k]) break;
      idx[k] = 0;
      if (k == 0) return;
    }
    if (idx.empty()) return;
  }
}

// The element at idx converted to double (any dtype).
inline double value_at(const Tensor& t, const std::vector<int64_t>& idx) {
  const int64_t rel = offset_of(t, idx) - t.storage_offset();
  return visit_dtype(t.dtype(), [&]<typename T>(std::type_identity<T>) {
    return static_cast<double>(static_cast<const T*>(t.data_ptr())[rel]);
  });
}

// All elements in row-major (logical) order.
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for_each_index(t.sizes(), [&](const std::vector<int64_t>& idx) { out.push_back(value_at(t, idx)); });
  return out;
}

// A tensor with exactly these sizes/strides/offset over a storage whose element k holds k, so
// every element names its own storage position.
inline Tensor strided(IntArrayRef sizes, IntArrayRef strides, int64_t offset = 0,
                      DType dtype = kFloat64) {
  const int64_t needed = layout::required_storage_elements(sizes, strides, "test");
  Tensor base = arange(needed + offset + 1, dtype);
  return base.as_strided(sizes, strides, offset);
}

}  // namespace lg::testing

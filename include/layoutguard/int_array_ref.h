// IntArrayRef: a non-owning view of int64 values (sizes, strides, dims), constructible from a
// brace list or a std::vector, like c10::IntArrayRef. It never outlives the full expression
// it was built in unless it refers to a longer-lived vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <vector>

namespace lg {

class IntArrayRef {
 public:
  constexpr IntArrayRef() = default;
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
// The list's array lives until the end of the full expression that holds the brace list, which
// is as long as an argument needs it; g++ warns because it cannot know the use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  constexpr IntArrayRef(std::initializer_list<int64_t> list)  // NOLINT
      : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  constexpr IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}

  constexpr const int64_t* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const int64_t* begin() const { return data_; }
  constexpr const int64_t* end() const { return data_ + size_; }
  constexpr int64_t operator[](size_t i) const { return data_[i]; }
  constexpr int64_t front() const { return data_[0]; }
  constexpr int64_t back() const { return data_[size_ - 1]; }
  // Elements [begin, end), like c10's slice; the caller keeps begin <= end <= size().
  constexpr IntArrayRef slice(size_t begin, size_t end) const { return {data_ + begin, end - begin}; }
  constexpr IntArrayRef slice(size_t begin) const { return slice(begin, size_); }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

  friend bool operator==(IntArrayRef a, IntArrayRef b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i)
      if (a.data_[i] != b.data_[i]) return false;
    return true;
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

// "(2,3,4,5)": the tuple notation used in every layoutguard message.
std::string to_string(IntArrayRef values);
std::ostream& operator<<(std::ostream& out, IntArrayRef values);

}  // namespace lg

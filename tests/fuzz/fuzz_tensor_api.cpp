// libFuzzer target for the tensor API: random sizes, strides, offsets, dtypes and memory formats
// go into the factories, as_strided, the views, to/contiguous/clone and the layout predicates.
// Every call must give either a tensor whose strides address only its storage (checked here in
// 128-bit arithmetic, independently of the library's own checks) or an lg::Error -- never
// undefined behaviour (UBSan), an out-of-bounds access (ASan: small results are read in full),
// a crash or another exception. Built with clang over the whole CPU library by scripts/fuzz
// (build-fuzz-lib/, -Dfuzz=true) and run for a bounded time by scripts/test.
//
// Input format (tests/fuzz/make_tensor_seeds.py writes the seeds in it): a creator, a dtype
// byte, a rank and that many sizes (and strides), then up to kMaxSteps operations, each an
// opcode byte followed by its arguments, read left to right. Integers are one tag byte: below 0xE0 a small value
// (tag - 16), otherwise an entry of kEdgeValues or 8 raw little-endian bytes. Reading past the end gives zeros, so every input is a valid program.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include <layoutguard/error.h>
#include <layoutguard/factories.h>
#include <layoutguard/layout.h>
#include <layoutguard/tensor.h>

namespace {

using I64 = std::numeric_limits<int64_t>;

// The extremes that overflow size and stride arithmetic, chosen by tags 0xE0 + i (and 0xF0 + i);
// tags 0xEF and 0xFF mean "8 raw bytes follow".
constexpr int64_t kEdgeValues[15] = {
    I64::max(), I64::max() / 2, int64_t{1} << 32, int64_t{1} << 62, I64::min(), int64_t{1} << 31,
    (int64_t{1} << 32) + 1, I64::max() - 1, int64_t{1} << 40, int64_t{3} << 61, -(int64_t{1} << 32),
    int64_t{1} << 61, int64_t{1} << 16, 65535, -1};
constexpr int kMaxSteps = 24;
constexpr int kMaxRank = 8;
// Results up to this many elements are copied in full, so ASan sees every address they name.
constexpr int64_t kReadAllLimit = 1 << 14;

class Program {
 public:
  Program(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  int64_t value() {
    const int tag = byte();
    if (tag < 0xE0) return tag - 16;
    const int edge = (tag - 0xE0) % 16;
    if (edge < 15) return kEdgeValues[edge];
    uint64_t raw = 0;
    for (int i = 0; i < 8; ++i) raw |= uint64_t{byte()} << (8 * i);
    int64_t v;
    std::memcpy(&v, &raw, sizeof v);
    return v;
  }
  std::vector<int64_t> values(size_t n) {
    std::vector<int64_t> out(n);
    for (auto& v : out) v = value();
    return out;
  }
  size_t rank() { return byte() % (kMaxRank + 1); }
  // Mostly the eight dtypes; now and then a value outside the enum, which must be refused.
  lg::DType dtype() {
    const uint8_t b = byte() % 9;
    return b < 8 ? static_cast<lg::DType>(b) : static_cast<lg::DType>(100);
  }
  lg::MemoryFormat format() {
    const uint8_t b = byte() % 5;
    return b < 4 ? static_cast<lg::MemoryFormat>(b) : static_cast<lg::MemoryFormat>(-7);
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_tensor_api: %s\n", what);
  std::abort();
}

// The contract of every tensor the API hands out: sizes and strides agree in length, numel is
// the product of the sizes, and every element it names lies inside its storage.
void check_addresses_only_storage(const lg::Tensor& t) {
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  if (sizes.size() != strides.size()) broken("sizes and strides differ in length");
  for (int64_t s : sizes)
    if (s < 0) broken("negative size");
  // A zero size makes numel 0 whatever the others are: (2^32, 2^62, 0) is a valid tensor.
  __int128 numel = std::find(sizes.begin(), sizes.end(), 0) != sizes.end() ? 0 : 1;
  for (int64_t s : sizes) {
    if (numel == 0) break;
    numel *= s;
    if (numel > I64::max()) broken("numel beyond int64");
  }
  if (numel != t.numel()) broken("numel() is not the product of the sizes");
  if (numel == 0) return;
  if (t.storage_offset() < 0) broken("negative storage offset");
  __int128 last = t.storage_offset();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (strides[d] < 0) broken("negative stride");
    last += __int128{sizes[d] - 1} * strides[d];
  }
  const __int128 bytes = (last + 1) * __int128(lg::itemsize(t.dtype()));
  if (bytes > __int128(t.storage().nbytes())) broken("an element lies beyond the storage");
}

// Copies of more than 4 MiB take about a second each under the sanitizers and find nothing a
// smaller copy would not, so the copying steps skip them -- unless the copy could not exist at
// all (beyond 2^41 bytes), which the library must refuse by itself. scripts/fuzz also caps
// each allocation at 64 MiB, so a factory's large request fails fast as out of memory.
bool copy_too_slow(const lg::Tensor& t) {
  const __int128 bytes = __int128{t.numel()} * lg::itemsize(t.dtype());
  return bytes > (__int128{1} << 22) && bytes <= (__int128{1} << 41);
}

// Copies every element of a small result (the reads happen under ASan) and checks the copy's
// strides are the requested format's.
void read_all(const lg::Tensor& t) {
  if (t.numel() > kReadAllLimit) return;
  const lg::Tensor copy = t.clone(lg::MemoryFormat::Contiguous);
  check_addresses_only_storage(copy);
  if (!copy.is_contiguous()) broken("clone(Contiguous) is not contiguous");
}

// The layout predicates and generators on raw arrays, which callers may pass unchecked.
void ask_layout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, lg::MemoryFormat fmt) {
  try { (void)lg::layout::is_contiguous(sizes, strides, fmt); } catch (const lg::Error&) {}
  try { (void)lg::layout::is_non_overlapping_and_dense(sizes, strides); } catch (const lg::Error&) {}
  try { (void)lg::layout::is_strides_like(sizes, strides, fmt); } catch (const lg::Error&) {}
  try { (void)lg::layout::suggest_memory_format(sizes, strides); } catch (const lg::Error&) {}
  try { (void)lg::layout::compute_flags(sizes, strides); } catch (const lg::Error&) {}
  try { (void)lg::layout::infer_dense_strides(sizes, strides); } catch (const lg::Error&) {}
  try { (void)lg::layout::preserved_strides(sizes, strides); } catch (const lg::Error&) {}
  try { (void)lg::layout::format_name(sizes, strides); } catch (const lg::Error&) {}
  try { (void)lg::layout::required_storage_elements(sizes, strides, "fuzz"); } catch (const lg::Error&) {}
  try { (void)lg::layout::strides_for(sizes, fmt, "fuzz"); } catch (const lg::Error&) {}
  try { (void)lg::layout::view_strides(sizes, strides, strides); } catch (const lg::Error&) {}
}

// A 4 KiB caller-owned block for from_blob; the harness passes it only geometries that fit it,
// since from_blob cannot know the block's size.
alignas(64) unsigned char g_blob[4096];

bool fits_blob(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, lg::DType dtype) {
  __int128 last = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] <= 0) return true;  // empty or refused: nothing is addressed
    if (strides[d] < 0) return true;  // refused
    last += __int128{sizes[d] - 1} * strides[d];
    if (last > I64::max()) return true;  // refused as overflow
  }
  const size_t item = static_cast<size_t>(dtype) < 8 ? lg::itemsize(dtype) : 8;
  return (last + 1) * __int128(item) <= __int128(sizeof g_blob);
}

lg::Tensor create(Program& p) {
  const uint8_t creator = p.byte() % 7;
  const lg::DType dtype = p.dtype();
  const size_t rank = p.rank();
  const std::vector<int64_t> sizes = p.values(rank);
  switch (creator) {
    case 0: return lg::empty(sizes, dtype, p.format());
    case 1: return lg::empty_strided(sizes, p.values(rank), dtype);
    case 2: return lg::zeros(sizes, dtype);
    case 3: return lg::full(sizes, 1.5, dtype);
    case 4: {
      const std::vector<int64_t> strides = p.values(rank);
      if (!fits_blob(sizes, strides, dtype)) return lg::zeros({1}, dtype);
      return lg::from_blob(g_blob, sizes, strides, dtype);
    }
    case 5: {
      const lg::Tensor base = lg::zeros({256}, dtype);
      const std::vector<int64_t> strides = p.values(rank);
      return base.as_strided(sizes, strides, p.value());
    }
    default: {
      const lg::Tensor base = lg::empty({4, 3, 5, 2}, dtype, lg::MemoryFormat::ChannelsLast);
      return lg::empty_like(base, p.format());
    }
  }
}

lg::Tensor step(Program& p, const lg::Tensor& t) {
  const size_t rank = static_cast<size_t>(t.dim());
  switch (p.byte() % 20) {
    case 0: return t.view(p.values(p.rank()));
    case 1: return t.reshape(p.values(p.rank()));
    case 2: { const int64_t a = p.value(); return t.flatten(a, p.value()); }
    case 3: return t.permute(p.values(rank));
    case 4: { const int64_t a = p.value(); return t.transpose(a, p.value()); }
    case 5: return t.squeeze();
    case 6: return t.squeeze(p.value());
    case 7: return t.dim() < kMaxRank ? t.unsqueeze(p.value()) : t;
    case 8: { const int64_t d = p.value(); return t.select(d, p.value()); }
    case 9: { const int64_t d = p.value(), s = p.value(); return t.narrow(d, s, p.value()); }
    case 10: {
      const int64_t d = p.value(), s = p.value(), e = p.value();
      return t.slice(d, s, e, p.value());
    }
    case 11: return t.expand(p.values(p.rank()));
    case 12: {
      const size_t r = p.rank();
      const std::vector<int64_t> sizes = p.values(r);
      const std::vector<int64_t> strides = p.values(r);
      return t.as_strided(sizes, strides, p.value());
    }
    case 13: {
      const lg::MemoryFormat fmt = p.format();
      if (copy_too_slow(t)) return t;
      lg::Tensor out = t.contiguous(fmt);
      if (!out.is_contiguous(fmt)) broken("contiguous(fmt) is not contiguous in fmt");
      return out;
    }
    case 14: {
      const lg::MemoryFormat fmt = p.format();
      const bool copy = p.byte() & 1;
      return copy_too_slow(t) ? t : t.to(fmt, copy);
    }
    case 15: {
      const lg::DType d = p.dtype();
      const bool copy = p.byte() & 1;
      const lg::MemoryFormat fmt = p.format();
      return copy_too_slow(t) ? t : t.to(d, copy, fmt);
    }
    case 16: { const lg::MemoryFormat fmt = p.format(); return copy_too_slow(t) ? t : t.clone(fmt); }
    case 17: { const lg::MemoryFormat fmt = p.format(); return copy_too_slow(t) ? t : lg::zeros_like(t, fmt); }
    case 18: {
      const std::vector<int64_t> strides = p.values(rank);
      ask_layout(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), strides, p.format());
      return t;
    }
    default: {
      const size_t r = p.rank();
      const std::vector<int64_t> sizes = p.values(r);
      const std::vector<int64_t> strides = p.values(p.byte() & 1 ? r : r + 1);  // even: one stride too many
      ask_layout(sizes, strides, p.format());
      return t;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Program p(data, size);
  lg::Tensor t;
  try {
    t = create(p);
  } catch (const lg::Error&) {
    return 0;  // the expected answer to bad input
  }
  check_addresses_only_storage(t);
  for (int i = 0; i < kMaxSteps && !p.done(); ++i) {
    try {
      lg::Tensor next = step(p, t);
      check_addresses_only_storage(next);
      t = std::move(next);
    } catch (const lg::Error&) {
      // refused: keep going from the last good tensor
    }
  }
  try {
    read_all(t);
  } catch (const lg::Error&) {
    // e.g. an out-of-memory error for a copy the fuzzing allocator refuses
  }
  return 0;
}

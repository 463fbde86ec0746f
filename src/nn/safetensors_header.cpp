// safetensors header parsing and validation (see safetensors_header.h).
#include "safetensors_header.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include <layoutguard/error.h>
#include <layoutguard/layout.h>

namespace lg::nn::detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swapping");

// The reference implementation refuses headers above 100 MB; so do we (a corrupt length must
// not make us allocate gigabytes).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

constexpr SafetensorsDType kSafetensorsDTypes[] = {
    {kFloat32, "F32"}, {kFloat16, "F16"}, {kBFloat16, "BF16"}, {kFloat64, "F64"},
    {kInt64, "I64"},   {kInt32, "I32"},   {kUInt8, "U8"},      {kBool, "BOOL"},
};

// JSON nesting deeper than this is rejected while parsing: a header needs depth 3, and
// nlohmann's dump() recurses once per level, so unbounded depth could overflow the stack when an
// error message quotes the value.
constexpr int kMaxJsonDepth = 32;

// A JSON value for an error message, cut to a readable length.
std::string short_dump(const nlohmann::json& v) {
  std::string text = v.dump();
  if (text.size() > 120) text = text.substr(0, 117) + "...";
  return text;
}

[[noreturn]] void fail(std::string_view source, const std::string& problem) {
  throw ValueError("[safetensors] " + std::string(source) + ": " + problem +
                   "; required: a safetensors file (an 8-byte little-endian header length, that many bytes of JSON "
                   "header, then the data section every tensor's data_offsets lie in)");
}

DType parse_dtype(std::string_view source, const std::string& tensor, std::string_view name) {
  for (const SafetensorsDType& d : kSafetensorsDTypes)
    if (d.name == name) return d.dtype;
  fail(source, "tensor \"" + tensor + "\" has dtype \"" + std::string(name) +
                   "\"; supported: F32, F16, BF16, F64, I64, I32, U8, BOOL");
}


uint64_t as_offset(std::string_view source, const std::string& tensor, const nlohmann::json& v,
                   const char* what) {
  if (!v.is_number_unsigned())
    fail(source, "tensor \"" + tensor + "\": " + what + " must be a non-negative integer, got " + short_dump(v));
  return v.get<uint64_t>();
}

SafetensorsEntry parse_entry(std::string_view source, const std::string& name, const nlohmann::json& info) {
  if (!info.is_object()) fail(source, "tensor \"" + name + "\": entry must be a JSON object, got " + short_dump(info));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!info.contains(key)) fail(source, "tensor \"" + name + "\": entry has no \"" + key + "\"");
  SafetensorsEntry e;
  e.name = name;
  if (!info["dtype"].is_string()) fail(source, "tensor \"" + name + "\": dtype must be a string");
  e.dtype = parse_dtype(source, name, info["dtype"].get<std::string>());
  const nlohmann::json& shape = info["shape"];
  if (!shape.is_array()) fail(source, "tensor \"" + name + "\": shape must be an array, got " + short_dump(shape));
  // Element count times item size must not overflow; the byte range check below bounds it.
  uint64_t bytes = itemsize(e.dtype);
  bool overflow = false;
  for (const nlohmann::json& s : shape) {
    if (!s.is_number_unsigned() || s.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(source, "tensor \"" + name + "\": shape entries must be non-negative integers, got " + short_dump(shape));
    const uint64_t n = s.get<uint64_t>();
    if (n != 0 && bytes > std::numeric_limits<uint64_t>::max() / n) overflow = true;
    bytes *= n;
    e.shape.push_back(static_cast<int64_t>(n));
  }
  if (static_cast<int64_t>(e.shape.size()) > kMaxDims)
    fail(source, "tensor \"" + name + "\": shape " + short_dump(shape) + " has " + std::to_string(e.shape.size()) +
                     " dims; layoutguard supports at most " + std::to_string(kMaxDims));
  if (std::find(e.shape.begin(), e.shape.end(), 0) != e.shape.end()) {
    // No bytes, but still contiguous strides: the product of the other dims must fit int64.
    int64_t stride_span = 1;
    for (int64_t n : e.shape)
      if (n != 0 && __builtin_mul_overflow(stride_span, n, &stride_span))
        fail(source, "tensor \"" + name + "\": shape " + short_dump(shape) + " has strides beyond int64");
    overflow = false, bytes = 0;
  }
  const nlohmann::json& offsets = info["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    fail(source, "tensor \"" + name + "\": data_offsets must be [begin, end], got " + short_dump(offsets));
  e.begin = as_offset(source, name, offsets[0], "data_offsets[0]");
  e.end = as_offset(source, name, offsets[1], "data_offsets[1]");
  if (e.end < e.begin)
    fail(source, "tensor \"" + name + "\": data_offsets [" + std::to_string(e.begin) + ", " +
                     std::to_string(e.end) + "] end before they begin");
  if (overflow || bytes != e.end - e.begin)
    fail(source, "tensor \"" + name + "\": shape " + short_dump(shape) + " of " + std::string(info["dtype"].get<std::string>()) +
                     " needs " + (overflow ? std::string("more than 2^64") : std::to_string(bytes)) +
                     " bytes but data_offsets give " + std::to_string(e.end - e.begin));
  return e;
}

// The first pass over a header: each object's keys, for a key given twice, and the nesting,
// refused past kMaxJsonDepth (a SAX handler: nothing is built, every step is O(1) or a set
// insert). Stops at the first finding.
struct HeaderKeyCheck : nlohmann::json_sax<nlohmann::json> {
  std::vector<std::set<std::string>> keys_of_open_objects;
  int open = 0;         // containers open
  std::string entry;    // the top-level key being read
  std::string duplicate, error;
  bool too_deep = false;

  bool value() { return !(too_deep = too_deep || open > kMaxJsonDepth); }
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    if (!value()) return false;
    keys_of_open_objects.emplace_back();
    ++open;
    return true;
  }
  bool key(string_t& key) override {
    if (!value()) return false;
    if (!keys_of_open_objects.back().insert(key).second) {
      duplicate = open == 1 ? "tensor name \"" + key + "\" appears twice in the header"
                            : "key \"" + key + "\" appears twice in the entry \"" + entry + "\"";
      return false;
    }
    if (open == 1) entry = key;
    return true;
  }
  bool end_object() override {
    keys_of_open_objects.pop_back();
    --open;
    return true;
  }
  bool start_array(std::size_t) override {
    if (!value()) return false;
    ++open;
    return true;
  }
  bool end_array() override {
    --open;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error = e.what();
    return false;
  }
};

}  // namespace

std::span<const SafetensorsDType> safetensors_dtypes() { return kSafetensorsDTypes; }

SafetensorsHeader parse_safetensors_header(std::span<const std::byte> bytes, std::string_view source) {
  if (bytes.size() < 8)
    fail(source, "file is " + std::to_string(bytes.size()) + " bytes, shorter than the 8-byte header length");
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > kMaxHeaderBytes)
    fail(source, "header length " + std::to_string(n) + " exceeds the 100 MB limit (corrupt file?)");
  if (n > bytes.size() - 8)
    fail(source, "header length " + std::to_string(n) + " runs past the end of the file (" +
                     std::to_string(bytes.size()) + " bytes)");
  const char* text = reinterpret_cast<const char*>(bytes.data() + 8);

  // Duplicate keys: nlohmann keeps the last value silently, so every object's keys are watched
  // -- tensor names, and the keys inside an entry ("dtype" twice would pick the last one) -- in
  // a pass of its own that builds nothing (nlohmann's parse callback searches the parent
  // object at each object's end: quadratic in the entries, minutes for 80,000), which also
  // bounds the nesting before a DOM is built.
  HeaderKeyCheck check;
  if (!nlohmann::json::sax_parse(text, text + n, &check)) {
    if (check.too_deep) fail(source, "header JSON is nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (!check.duplicate.empty()) fail(source, check.duplicate);
    fail(source, "header is not valid JSON: " + check.error);
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, text + n);
  } catch (const nlohmann::json::exception& e) {
    fail(source, std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) fail(source, "header must be a JSON object, got " + std::string(header.type_name()));

  SafetensorsHeader h;
  h.data_start = 8 + n;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it.value().is_object()) fail(source, "__metadata__ must be an object of strings");
      for (auto m = it.value().begin(); m != it.value().end(); ++m) {
        if (!m.value().is_string())
          fail(source, "__metadata__ value for \"" + m.key() + "\" must be a string, got " + short_dump(m.value()));
        h.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    h.entries.push_back(parse_entry(source, it.key(), it.value()));
  }

  // Against the data section: in range, no overlap, no holes (the format indexes every byte).
  const uint64_t data_size = bytes.size() - h.data_start;
  std::sort(h.entries.begin(), h.entries.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t covered = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const SafetensorsEntry& e : h.entries) {
    if (e.end > data_size)
      fail(source, "tensor \"" + e.name + "\": data_offsets [" + std::to_string(e.begin) + ", " +
                       std::to_string(e.end) + "] run past the end of the data section (" +
                       std::to_string(data_size) + " bytes; file truncated?)");
    if (e.begin < covered)
      fail(source, "tensors \"" + previous->name + "\" and \"" + e.name + "\" overlap at byte " +
                       std::to_string(e.begin) + " of the data section");
    if (e.begin > covered)
      fail(source, "data section bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) +
                       ") belong to no tensor");
    covered = e.end;
    previous = &e;
  }
  if (covered != data_size)
    fail(source, "data section is " + std::to_string(data_size) + " bytes but the tensors cover " +
                     std::to_string(covered) + " (trailing bytes)");
  return h;
}

void check_bool_bytes(std::string_view source, const SafetensorsEntry& e, const std::byte* data) {
  if (e.dtype != kBool) return;
  for (uint64_t i = 0; i < e.end - e.begin; ++i)
    if (std::to_integer<uint8_t>(data[i]) > 1)
      fail(source, "tensor \"" + e.name + "\" (BOOL) holds byte " +
                       std::to_string(std::to_integer<int>(data[i])) + " at element " + std::to_string(i) +
                       "; BOOL bytes must be 0 or 1");
}

}  // namespace lg::nn::detail

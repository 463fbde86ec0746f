// safetensors reading and writing: tensors from a validated header (safetensors_header.cpp),
// and the writer. See include/layoutguard/nn/safetensors.h for the format.
#include <layoutguard/nn/safetensors.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error_tag.h"
#include "core/input_file.h"
#include "safetensors_header.h"

#include <layoutguard/error.h>
#include <layoutguard/factories.h>

namespace lg::nn {
namespace {

using detail::SafetensorsEntry;

[[noreturn]] void fail(std::string_view source, const std::string& problem) {
  throw ValueError("[safetensors] " + std::string(source) + ": " + problem);
}

Tensor copy_out(const SafetensorsEntry& e, const std::byte* data) {
  Tensor t = empty(e.shape, TensorOptions().dtype(e.dtype));
  if (e.end > e.begin) std::memcpy(t.data_ptr(), data, e.end - e.begin);
  return t;
}

// The whole file in memory, 64-byte aligned, freed with the last tensor that views it.
struct FileBuffer {
  std::byte* data = nullptr;
  size_t size = 0;
  ~FileBuffer() { std::free(data); }
};

// Reads `path` whole: a regular file of at most kMaxSafetensorsFileBytes (core/input_file.h),
// so a FIFO or a device named by mistake is an error, never a wait without end. A copy, not a
// memory map: tensors from a map would change, or kill the process with SIGBUS, when the file
// is rewritten or truncated while they live (Python's safetensors save_file and cp both
// rewrite in place).
std::shared_ptr<FileBuffer> read_file(const std::string& path) {
  lg::detail::InputFile file(path, lg::detail::kMaxSafetensorsFileBytes, "nn::load_safetensors",
                             "a safetensors file: a regular file of at most " +
                                 std::to_string(lg::detail::kMaxSafetensorsFileBytes) + " bytes");
  auto buffer = std::make_shared<FileBuffer>();
  buffer->size = static_cast<size_t>(file.size());
  const size_t rounded = (buffer->size + 63) / 64 * 64;
  buffer->data = static_cast<std::byte*>(std::aligned_alloc(64, std::max<size_t>(rounded, 64)));
  if (buffer->data == nullptr)
    fail(path, "cannot allocate " + std::to_string(buffer->size) + " bytes to read it");
  file.read_exactly(buffer->data, buffer->size);
  return buffer;
}

}  // namespace

std::string_view safetensors_dtype_name(DType dtype) {
  for (const detail::SafetensorsDType& d : detail::safetensors_dtypes())
    if (d.dtype == dtype) return d.name;
  throw ValueError("[safetensors] no safetensors name for dtype " + std::string(dtype_name(dtype)));
}

namespace {

TensorFile parse_bytes(std::span<const std::byte> bytes, std::string_view source) {
  const detail::SafetensorsHeader h = detail::parse_safetensors_header(bytes, source);
  TensorFile out;
  out.metadata = h.metadata;
  for (const SafetensorsEntry& e : h.entries) {
    const std::byte* data = bytes.data() + h.data_start + e.begin;
    detail::check_bool_bytes(source, e, data);
    out.tensors.emplace(e.name, copy_out(e, data));
  }
  return out;
}

TensorFile load_file(const std::string& path) {
  const std::shared_ptr<FileBuffer> buffer = read_file(path);
  const std::span<const std::byte> bytes(buffer->data, buffer->size);
  const detail::SafetensorsHeader h = detail::parse_safetensors_header(bytes, path);
  TensorFile out;
  out.metadata = h.metadata;
  for (const SafetensorsEntry& e : h.entries) {
    std::byte* data = buffer->data + h.data_start + e.begin;
    detail::check_bool_bytes(path, e, data);
    const bool aligned = reinterpret_cast<uintptr_t>(data) % itemsize(e.dtype) == 0;
    if (!aligned || e.end == e.begin) {
      out.tensors.emplace(e.name, copy_out(e, data));
      continue;
    }
    // Views the buffer; the deleter keeps it alive as long as any tensor does.
    out.tensors.emplace(e.name, from_blob(data, e.shape, [buffer](void*) {}, TensorOptions().dtype(e.dtype)));
  }
  return out;
}

}  // namespace

// The header's errors ("[safetensors] SOURCE: ...") named after the call the user made.
TensorFile parse_safetensors(std::span<const std::byte> bytes, std::string_view source) {
  return lg::detail::tagged("nn::parse_safetensors", [&] { return parse_bytes(bytes, source); });
}

TensorFile load_safetensors(const std::string& path) {
  return lg::detail::tagged("nn::load_safetensors", [&] { return load_file(path); });
}

std::string safetensors_bytes(const StateDict& tensors, const Metadata& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  // Row-major CPU copies, widest element first: every tensor's bytes then start at a multiple
  // of its item size (the data section starts 8-byte aligned), so a reader can use them in
  // place. The header lists names in order; the data is laid out in this order.
  std::vector<std::pair<std::string, Tensor>> rows;
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == "__metadata__")
      throw ValueError("[safetensors] tensor names must be non-empty and not \"__metadata__\", got \"" + name + "\"");
    if (!t.defined()) throw ValueError("[safetensors] tensor \"" + name + "\" is undefined");
    (void)safetensors_dtype_name(t.dtype());  // an unsupported dtype fails before any copy
    rows.emplace_back(name, t.to(kCPU).contiguous());
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.itemsize() > b.second.itemsize(); });
  uint64_t offset = 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, row] : rows) {
    ranges[name] = {offset, offset + row.nbytes()};
    offset += row.nbytes();
  }
  for (const auto& [name, t] : tensors) {
    const auto& [begin, end] = ranges.at(name);
    header[name] = {{"dtype", safetensors_dtype_name(t.dtype())},
                    {"shape", std::vector<int64_t>(t.sizes().begin(), t.sizes().end())},
                    {"data_offsets", {begin, end}}};
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {  // a name or metadata value that is not UTF-8
    throw ValueError(std::string("[safetensors] tensor names and metadata must be valid UTF-8: ") + e.what());
  }
  // Padding with spaces to a multiple of 8 keeps the data section 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  out += text;
  out.reserve(out.size() + offset);
  for (const auto& [name, row] : rows) out.append(static_cast<const char*>(row.data_ptr()), row.nbytes());
  return out;
}

void save_safetensors(const std::string& path, const StateDict& tensors, const Metadata& metadata) {
  const std::string bytes = safetensors_bytes(tensors, metadata);
  // Written beside the target and renamed over it (core/atomic_file.h): a failed write leaves
  // the old file as it was, and a reader never sees a partly written one.
  lg::detail::replace_file("nn::save_safetensors", "the safetensors file", path, bytes);
}

}  // namespace lg::nn

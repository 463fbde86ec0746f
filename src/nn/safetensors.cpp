// safetensors reading and writing: tensors from a validated header (safetensors_header.cpp),
// and the writer. See include/layoutguard/nn/safetensors.h for the format.
#include <layoutguard/nn/safetensors.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

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

// A private, writable (copy-on-write) mapping of a whole file, unmapped with its last user.
struct Mapping {
  void* address = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (address) munmap(address, size);
  }
};

}  // namespace

std::string_view safetensors_dtype_name(DType dtype) {
  for (const detail::SafetensorsDType& d : detail::safetensors_dtypes())
    if (d.dtype == dtype) return d.name;
  throw ValueError("[safetensors] no safetensors name for dtype " + std::string(dtype_name(dtype)));
}

TensorFile parse_safetensors(std::span<const std::byte> bytes, std::string_view source) {
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

TensorFile load_safetensors(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, "not a regular file");
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->size = static_cast<size_t>(st.st_size);
  if (mapping->size > 0) {
    void* a = ::mmap(nullptr, mapping->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (a == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail(path, std::string("cannot memory-map: ") + std::strerror(err));
    }
    mapping->address = a;
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(mapping->address), mapping->size);

  const detail::SafetensorsHeader h = detail::parse_safetensors_header(bytes, path);
  TensorFile out;
  out.metadata = h.metadata;
  for (const SafetensorsEntry& e : h.entries) {
    std::byte* data = static_cast<std::byte*>(mapping->address) + h.data_start + e.begin;
    detail::check_bool_bytes(path, e, data);
    const bool aligned = reinterpret_cast<uintptr_t>(data) % itemsize(e.dtype) == 0;
    if (!aligned || e.end == e.begin) {
      out.tensors.emplace(e.name, copy_out(e, data));
      continue;
    }
    // Shares the mapping; the deleter keeps it alive as long as any tensor views it.
    out.tensors.emplace(e.name, from_blob(data, e.shape, [mapping](void*) {}, TensorOptions().dtype(e.dtype)));
  }
  return out;
}

std::string safetensors_bytes(const StateDict& tensors, const Metadata& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<Tensor> rows;  // row-major CPU copies, in name order
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == "__metadata__")
      throw ValueError("[safetensors] tensor names must be non-empty and not \"__metadata__\", got \"" + name + "\"");
    if (!t.defined()) throw ValueError("[safetensors] tensor \"" + name + "\" is undefined");
    Tensor row = t.to(kCPU).contiguous();
    const uint64_t n = row.nbytes();
    header[name] = {{"dtype", safetensors_dtype_name(row.dtype())},
                    {"shape", std::vector<int64_t>(row.sizes().begin(), row.sizes().end())},
                    {"data_offsets", {offset, offset + n}}};
    offset += n;
    rows.push_back(std::move(row));
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {  // a name or metadata value that is not UTF-8
    throw ValueError(std::string("[safetensors] tensor names and metadata must be valid UTF-8: ") + e.what());
  }
  // Padding with spaces to a multiple of 8 keeps the data section 8-byte aligned, so a memory
  // map can hand out aligned tensors.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  out += text;
  out.reserve(out.size() + offset);
  for (const Tensor& row : rows) out.append(static_cast<const char*>(row.data_ptr()), row.nbytes());
  return out;
}

void save_safetensors(const std::string& path, const StateDict& tensors, const Metadata& metadata) {
  const std::string bytes = safetensors_bytes(tensors, metadata);
  // Written beside the target and renamed over it: tensors still mapped from the old file keep
  // their bytes (the mapping holds the old inode), and a failed write leaves no half file.
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream f(temp, std::ios::binary | std::ios::trunc);
    if (!f) throw ValueError("[safetensors] " + path + ": cannot open for writing: " + std::strerror(errno));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) {
      std::remove(temp.c_str());
      throw ValueError("[safetensors] " + path + ": write failed: " + std::strerror(errno));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(temp.c_str());
    throw ValueError("[safetensors] " + path + ": cannot replace the file: " + std::strerror(err));
  }
}

}  // namespace lg::nn

// The safetensors header: parsing and validation against the file's size, with no tensor
// code, so the libFuzzer target (tests/fuzz/fuzz_safetensors.cpp) builds from this file alone.
// Internal to src/nn.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <layoutguard/dtype.h>
#include <layoutguard/nn/safetensors.h>

namespace lg::nn::detail {

struct SafetensorsDType {
  DType dtype;
  std::string_view name;  // "F32", ...
};
std::span<const SafetensorsDType> safetensors_dtypes();

// One tensor's header entry, validated: shape x item size == end - begin.
struct SafetensorsEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // relative to the data section
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // sorted by begin; they tile the data section exactly
  Metadata metadata;
  uint64_t data_start = 0;                // 8 + header length
};

// Validates everything about `file` but the tensor bytes; ValueError naming `source` and the
// problem. Never reads outside `file`.
SafetensorsHeader parse_safetensors_header(std::span<const std::byte> file, std::string_view source);

// BOOL tensors must hold bytes 0 and 1 only; `data` is the entry's bytes.
void check_bool_bytes(std::string_view source, const SafetensorsEntry& e, const std::byte* data);

}  // namespace lg::nn::detail

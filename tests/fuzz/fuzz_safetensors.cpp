// libFuzzer target for the safetensors header parser (src/nn/safetensors_header.cpp): any bytes
// must give a validated header or a ValueError -- never a crash, a hang, an out-of-bounds read
// (ASan) or another exception. For every accepted file the invariants the tensor reader relies
// on are checked here too: entries tile the data section exactly and each byte range holds
// exactly shape x item size bytes. Built with clang by scripts/fuzz, run by scripts/test.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include <layoutguard/error.h>

#include "nn/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
  try {
    const lg::nn::detail::SafetensorsHeader h = lg::nn::detail::parse_safetensors_header(file, "fuzz");
    uint64_t covered = 0;
    for (const auto& e : h.entries) {
      uint64_t bytes = lg::itemsize(e.dtype);
      for (int64_t s : e.shape) bytes *= uint64_t(s);
      if (e.begin != covered || e.end - e.begin != bytes || h.data_start + e.end > size) std::abort();
      covered = e.end;
      lg::nn::detail::check_bool_bytes("fuzz", e, file.data() + h.data_start + e.begin);
    }
    if (h.data_start + covered != size) std::abort();
  } catch (const lg::ValueError&) {
    // the expected answer to bad input
  }
  return 0;
}

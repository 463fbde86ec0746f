// safetensors files: the checkpoint format of the Hugging Face ecosystem, and the one torchvision
// weights are exported to for layoutguard (docs/models.md).
//
// A file is an 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [64, 3, 7, 7], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value"}}
// and then the data section: every tensor's bytes, row-major (logical NCHW order), little-endian,
// at [begin, end) relative to the section's start. The reader validates everything before it
// touches data -- header length, JSON, dtypes, shapes against byte ranges, ranges against the
// file, overlaps and holes, duplicate names, bool bytes -- and raises lg::ValueError naming the
// file and the problem; it never reads out of bounds.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include <layoutguard/tensor.h>

namespace lg::nn {

// Tensors by name, sorted by name (the order safetensors writes them in).
using StateDict = std::map<std::string, Tensor>;
using Metadata = std::map<std::string, std::string>;

struct TensorFile {
  StateDict tensors;
  Metadata metadata;  // the header's "__metadata__" (string values only)
};

// Reads `path` whole into one buffer: tensors whose bytes are aligned for their dtype (all of
// them in files save_safetensors wrote) view that buffer, the others are copied out. Nothing
// stays tied to the file: writing into a tensor never changes it, and rewriting or truncating
// the file later never changes a tensor. Tensors are contiguous, on the CPU. `path` must be a
// regular file of at most 256 GiB: lg::ValueError naming what it is otherwise (a FIFO is
// refused, never waited on).
TensorFile load_safetensors(const std::string& path);

// Parses a file already in memory; `source` names it in errors. The tensors are copies.
TensorFile parse_safetensors(std::span<const std::byte> bytes, std::string_view source = "<memory>");

// Writes every tensor (any device, layout or dtype; stored row-major, as PyTorch's
// safetensors.torch.save_file stores a .contiguous() tensor). Names must be non-empty and not
// "__metadata__". The file is replaced only once written whole (a failed save leaves the old
// one as it was); lg::ValueError naming the path if it cannot be written, or is read-only.
void save_safetensors(const std::string& path, const StateDict& tensors, const Metadata& metadata = {});

// The bytes save_safetensors would write.
std::string safetensors_bytes(const StateDict& tensors, const Metadata& metadata = {});

// "F32", "F16", "BF16", "F64", "I64", "I32", "U8", "BOOL".
std::string_view safetensors_dtype_name(DType dtype);

}  // namespace lg::nn

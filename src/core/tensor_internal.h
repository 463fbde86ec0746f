// Helpers shared by the core's tensor code (not part of the public API).
#pragma once

#include <string_view>
#include <vector>

#include <layoutguard/tensor.h>

namespace lg::detail {

// A tensor handle over `storage` with the given geometry; flags are computed here.
Tensor make_tensor(Storage storage, DType dtype, std::vector<int64_t> sizes,
                   std::vector<int64_t> strides, int64_t storage_offset);
// A view of t's storage with new geometry (same dtype).
Tensor make_view(const Tensor& t, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                 int64_t storage_offset);
// t (rank 2 to 5) as 5-D (N, C, D, H, W): size-1 dims inserted at 2, 3, ... -- the view that
// t.unsqueeze(2).unsqueeze(3)... gives, strides included (ATen's stride for a new dim, which
// makes a channels-last 4-D tensor look channels_last_3d). Made directly, not as unsqueeze
// ops: the 5-D kernels of conv, pooling and the norms take every call through it, and each
// dispatched unsqueeze cost about 1.4k host instructions. Callers check the rank.
Tensor view_as_5d(const Tensor& t);

// Throws unless `device` can hold tensors in this build: NotCompiledError for CUDA in a CPU-only
// build, NotImplementedError while the CUDA backend cannot allocate yet.
void check_device_supported(Device device, std::string_view op);
// Implemented by the backend (src/cuda or src/no_cuda): throws unless the non-CPU `device` can
// hold tensors in this build and process (NotCompiledError, or DeviceError naming what is
// visible).
void check_backend_device(Device device, std::string_view op);
// The allocator of a non-CPU device.
Allocator& backend_allocator(Device device);
// ValueError unless t is defined; `what` names the argument ("self", "src", ...).
void check_defined(const Tensor& t, std::string_view op, std::string_view what);
// ValueError when t has a stride-0 dim of size > 1 (writing would hit one location twice).
void check_no_internal_overlap(const Tensor& t, std::string_view op);
// ValueError unless `value` (the argument `what`) converts to `dtype` without overflow, by
// PyTorch's rule: integers within the type's range (uint8 also takes integers -255..-1, which
// wrap), floats within the finite range of a floating dtype (infinity and NaN pass), NaN and
// infinity never into an integer dtype; bool takes anything.
void check_scalar_fits(const Scalar& value, DType dtype, std::string_view op, std::string_view what);
// Whether the element ranges of a and b intersect in the same storage.
bool ranges_overlap(const Tensor& a, const Tensor& b);

}  // namespace lg::detail

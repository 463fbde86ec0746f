// copy_ and fill_ on CUDA, including copies between the CPU and a device. A copy between
// tensors of one dtype laid out densely alike is one cudaMemcpyAsync; any other copy moves
// the dense bytes across once and lets a device kernel do the restriding (the tiled transpose
// for NCHW <-> NHWC) and the dtype conversion, so no host loop touches device data.
#include <cstring>
#include <span>
#include <vector>

#include <layoutguard/factories.h>

#include "core/tensor_internal.h"
#include "cuda/geometry.h"
#include "cuda/register.h"
#include "cuda/runtime.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

namespace kernels = cuda::kernels;
using cuda::detail::make_geometry;
using cuda::detail::scalar_type;
using cuda::detail::stream_for;

// One block of bytes holds all elements of both, in the same positions.
bool same_dense_block(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.is_non_overlapping_and_dense();
}

// A fresh tensor of t's sizes on `device` with dtype `dt`, dense in t's dim order.
Tensor dense_like(const Tensor& t, DType dt, Device device) {
  return empty_strided(t.sizes(), layout::infer_dense_strides(t.sizes(), t.strides()),
                       TensorOptions().dtype(dt).device(device));
}

// dst = src, both on one device (src may be broadcast or of another dtype).
void device_copy(const Tensor& dst, const Tensor& src, cudaStream_t stream) {
  const Device device = dst.device();
  if (dst.dtype() == src.dtype()) {
    if (same_dense_block(dst, src)) {
      LG_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyDeviceToDevice, stream),
                    "copy_");
      return;
    }
    const kernels::Geometry g = make_geometry(dst, {&src}, "copy_");
    cuda::detail::check_launch(kernels::copy_strided(g, static_cast<int>(dst.itemsize()), stream), "copy_strided",
                               "copy_", device);
    return;
  }
  // Another dtype: restride in src's dtype into dst's dense layout, then convert densely.
  const bool dst_dense = dst.is_non_overlapping_and_dense();
  Tensor restrided = src;
  if (!(src.strides() == dst.strides() && src.is_non_overlapping_and_dense() && dst_dense)) {
    restrided = dst_dense ? empty_strided(dst.sizes(), dst.strides(), src.options()) : dense_like(dst, src.dtype(), device);
    device_copy(restrided, src, stream);
  }
  Tensor converted = dst_dense ? dst : dense_like(dst, dst.dtype(), device);
  cuda::detail::check_launch(kernels::convert_dense(converted.data_ptr(), scalar_type(dst.dtype()), restrided.data_ptr(),
                                                    scalar_type(src.dtype()), src.numel(), stream),
                             "convert_dense", "copy_", device);
  if (!dst_dense) device_copy(dst, converted, stream);
}

void host_copy(const Tensor& dst, const Tensor& src) {
  dispatch::kernel_table().get<dispatch::OpId::copy_>(DeviceType::CPU)(dst, src);
}

void copy_cuda(const Tensor& dst, const Tensor& src) {
  if (dst.device().is_cuda() && src.device().is_cuda() && dst.device() != src.device()) {
    // Between devices: the source's dense bytes go across, the destination device restrides.
    // The source side runs on the source device's stream and is finished before the copy reads
    // it; the copy is finished before we return, as the caller may then free `src` and its
    // device hand the block to work on that device's stream, which the copy does not follow.
    cudaStream_t src_stream = stream_for(src.device());
    Tensor packed = src.is_non_overlapping_and_dense() ? src : dense_like(src, src.dtype(), src.device());
    if (!packed.is_same(src)) device_copy(packed, src, src_stream);
    LG_CUDA_CHECK(cudaStreamSynchronize(src_stream), "copy_");
    cudaStream_t dst_stream = stream_for(dst.device());
    Tensor staged = dense_like(src, src.dtype(), dst.device());
    LG_CUDA_CHECK(cudaMemcpyPeerAsync(staged.data_ptr(), dst.device().index(), packed.data_ptr(), src.device().index(),
                                      packed.nbytes(), dst_stream),
                  "copy_");
    LG_CUDA_CHECK(cudaStreamSynchronize(dst_stream), "copy_");
    device_copy(dst, staged, dst_stream);
    return;
  }
  const Device device = dst.device().is_cuda() ? dst.device() : src.device();
  cudaStream_t stream = stream_for(device);
  if (dst.device().is_cuda() && src.device().is_cuda()) return device_copy(dst, src, stream);
  if (dst.device().is_cuda()) {  // host to device
    if (same_dense_block(dst, src)) {
      LG_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyHostToDevice, stream), "copy_");
      LG_CUDA_CHECK(cudaStreamSynchronize(stream), "copy_");  // the host buffer may change once we return
      return;
    }
    Tensor host = src.is_non_overlapping_and_dense() ? src : dense_like(src, src.dtype(), kCPU);
    if (!host.is_same(src)) host_copy(host, src);
    Tensor staged = empty_strided(host.sizes(), host.strides(), TensorOptions().dtype(host.dtype()).device(device));
    LG_CUDA_CHECK(cudaMemcpyAsync(staged.data_ptr(), host.data_ptr(), host.nbytes(), cudaMemcpyHostToDevice, stream),
                  "copy_");
    device_copy(dst, staged, stream);
    LG_CUDA_CHECK(cudaStreamSynchronize(stream), "copy_");
    return;
  }
  // device to host: restride and convert on the device into dst's dense layout, then one copy.
  Tensor staged = src;
  if (!same_dense_block(dst, src)) {
    staged = dst.is_non_overlapping_and_dense()
                 ? empty_strided(dst.sizes(), dst.strides(), TensorOptions().dtype(dst.dtype()).device(device))
                 : dense_like(dst, dst.dtype(), device);
    device_copy(staged, src, stream);
  }
  Tensor host = dst.is_non_overlapping_and_dense() ? dst : dense_like(dst, dst.dtype(), kCPU);
  LG_CUDA_CHECK(cudaMemcpyAsync(host.data_ptr(), staged.data_ptr(), host.nbytes(), cudaMemcpyDeviceToHost, stream),
                "copy_");
  LG_CUDA_CHECK(cudaStreamSynchronize(stream), "copy_");
  if (!host.is_same(dst)) host_copy(dst, host);
}

void fill_cuda(const Tensor& dst, const Scalar& value) {
  uint64_t bits = 0;
  visit_dtype(dst.dtype(), [&]<typename T>(std::type_identity<T>) {
    const T v = value.to<T>();
    std::memcpy(&bits, &v, sizeof(T));
  });
  const kernels::Geometry g = make_geometry(dst, {}, "fill_");
  cuda::detail::check_launch(kernels::fill_strided(g, static_cast<int>(dst.itemsize()), bits, stream_for(dst.device())),
                             "fill_strided", "fill_", dst.device());
}

// cat: each input into its slice of out, on the device (the copy kernels pick the fastest
// path per input, the transposed tile included).
void cat_cuda(const Tensor& out, std::span<const Tensor> inputs, int64_t dim) {
  cudaStream_t stream = stream_for(out.device());
  int64_t offset = 0;
  for (const Tensor& t : inputs) {
    std::vector<int64_t> strides = out.strides().vec();
    std::vector<int64_t> sizes = out.sizes().vec();
    sizes[static_cast<size_t>(dim)] = t.size(dim);
    const Tensor slice = lg::detail::make_view(out, sizes, strides, out.storage_offset() + offset * out.stride(dim));
    if (t.numel() > 0) device_copy(slice, t, stream);
    offset += t.size(dim);
  }
}

}  // namespace

namespace cuda::detail {
void copy_on_device(const Tensor& dst, const Tensor& src) { device_copy(dst, src, stream_for(dst.device())); }
}  // namespace cuda::detail

void register_cuda_copy_kernels(dispatch::KernelTable& table) {
  table.set<dispatch::OpId::copy_>(DeviceType::CUDA, copy_cuda, "copy_cuda");
  table.set<dispatch::OpId::fill_>(DeviceType::CUDA, fill_cuda, "fill_cuda");
  table.set<dispatch::OpId::cat>(DeviceType::CUDA, cat_cuda, "cat_copy_cuda");
  // The shuffles write out from a permuted view of the input: a strided copy, as on the CPU.
  table.set<dispatch::OpId::pixel_shuffle>(DeviceType::CUDA, copy_cuda, "shuffle_strided_copy_cuda");
  table.set<dispatch::OpId::pixel_unshuffle>(DeviceType::CUDA, copy_cuda, "shuffle_strided_copy_cuda");
  table.set<dispatch::OpId::channel_shuffle>(DeviceType::CUDA, copy_cuda, "shuffle_strided_copy_cuda");
}

}  // namespace lg

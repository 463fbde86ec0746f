// CUDA bandwidth against device-to-device cudaMemcpy in the same run: NCHW <-> NHWC conversion
// (copy_ into a preallocated tensor, and contiguous(channels_last) allocating), and pointwise
// relu / add on NHWC tensors. A benchmark, not a test: medians and ratios, no pass/fail.
//
//   build/bench/cuda_ops [--quick]
// Each sample runs the call `reps` times and then waits for the device (lg::cuda::synchronize
// for our ops, cudaDeviceSynchronize for the peer), so both sides are timed the same way.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include <layoutguard/layoutguard.h>

#include "timing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;

double per_call_ms(const std::function<void()>& fn, int reps, bool ours) {
  const lg::bench::Timing t = lg::bench::time_it(
      [&] {
        for (int i = 0; i < reps; ++i) fn();
        if (ours) lg::cuda::synchronize();
        else cudaDeviceSynchronize();
      },
      11);
  return t.median_ms / reps;
}

void row(const char* name, const std::string& shape, double bytes, double ms, double memcpy_ms) {
  std::printf("%-40s %-20s %9.4f ms %8.1f GB/s %6.0f%%\n", name, shape.c_str(), ms, bytes / (ms * 1e-3) / 1e9,
              100.0 * memcpy_ms / ms);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (!lg::cuda::is_available()) {
    std::printf("no usable GPU: %s\n", lg::cuda::probe_report().c_str());
    return 0;
  }
  std::printf("layoutguard %s CUDA bandwidth: %s\n", LG_VERSION, lg::cuda::probe_report().c_str());
  std::printf("bytes moved = read + write; %% = cudaMemcpy D2D time of the same bytes / our time\n\n");
  const std::vector<std::vector<int64_t>> shapes =
      quick ? std::vector<std::vector<int64_t>>{{32, 64, 56, 56}}
            : std::vector<std::vector<int64_t>>{{32, 64, 56, 56}, {256, 256, 56, 56}, {256, 2048, 7, 7}, {256, 3, 224, 224}};
  const int reps = quick ? 5 : 20;
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16}) {
    for (const auto& s : shapes) {
      const std::string shape = lg::to_string(s) + " " + std::string(lg::dtype_name(dt));
      const lg::TensorOptions opts = lg::TensorOptions().dtype(dt).device(lg::Device::cuda(0));
      const Tensor nchw = lg::randn(s).to(opts);
      const Tensor nhwc = nchw.contiguous(MemoryFormat::ChannelsLast);
      const Tensor other = lg::randn(s).to(opts).contiguous(MemoryFormat::ChannelsLast);
      Tensor dst_cl = lg::empty(s, opts, MemoryFormat::ChannelsLast), dst_cf = lg::empty(s, opts);
      const double bytes = static_cast<double>(nchw.nbytes());
      void* a = nchw.data_ptr();
      void* b = dst_cf.data_ptr();
      const double memcpy_ms =
          per_call_ms([&] { cudaMemcpyAsync(b, a, nchw.nbytes(), cudaMemcpyDeviceToDevice, nullptr); }, reps, false);
      row("cudaMemcpy D2D (peer)", shape, 2 * bytes, memcpy_ms, memcpy_ms);
      row("copy_ NCHW -> NHWC", shape, 2 * bytes, per_call_ms([&] { dst_cl.copy_(nchw); }, reps, true), memcpy_ms);
      row("copy_ NHWC -> NCHW", shape, 2 * bytes, per_call_ms([&] { dst_cf.copy_(nhwc); }, reps, true), memcpy_ms);
      row("contiguous(channels_last) (+alloc)", shape, 2 * bytes,
          per_call_ms([&] { (void)nchw.contiguous(MemoryFormat::ChannelsLast); }, reps, true), memcpy_ms);
      row("relu NHWC", shape, 2 * bytes, per_call_ms([&] { (void)lg::relu(nhwc); }, reps, true), memcpy_ms);
      row("add NHWC + NHWC", shape, 3 * bytes, per_call_ms([&] { (void)lg::add(nhwc, other); }, reps, true),
          1.5 * memcpy_ms);
    }
  }
  return 0;
}

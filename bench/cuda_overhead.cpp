// Where a small CUDA op's time goes: host microseconds per call of our ops (enqueue only, the
// device far from busy: one-element tensors) next to the bare runtime calls they are built
// from, then wall microseconds per call over 20 calls and one device wait, for a 12.8 MB
// float16 tensor, the size at which bench/cuda_ops sees every op take the same time. A
// benchmark, not a test: medians, no pass/fail.
//
//   build/bench/cuda_overhead [--quick | --smoke] [--json PATH]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include <layoutguard/layoutguard.h>

#include "report.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;

// Median host microseconds per call over samples of `calls` calls; the device is waited for
// between samples, not inside them.
double host_us(const std::function<void()>& fn, int calls) {
  std::vector<double> samples;
  for (int s = 0; s < 11; ++s) {
    cudaDeviceSynchronize();
    lg::cuda::synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) fn();
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const lg::bench::CommonArgs args = lg::bench::parse_common(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // rows survive a run cut short
  lg::bench::Results results("cuda_overhead", args);
  if (!lg::cuda::is_available()) {
    std::printf("no usable GPU: %s\n", lg::cuda::probe_report().c_str());
    results.set("skipped", "no usable GPU");
    return results.finish();
  }
  const int calls = args.smoke ? 10 : 200;
  const lg::TensorOptions half = lg::TensorOptions().dtype(lg::kFloat16).device(lg::Device::cuda(0));
  const Tensor tiny = lg::ones({1, 1, 1, 1}).to(half).contiguous(MemoryFormat::ChannelsLast);
  Tensor tiny_out = lg::empty_like(tiny);
  const Tensor tiny_nchw = lg::ones({1, 2, 1, 2}).to(half);
  Tensor tiny_nhwc = lg::empty_like(tiny_nchw, MemoryFormat::ChannelsLast);
  void* a = nullptr;
  void* b = nullptr;
  cudaMalloc(&a, 256);
  cudaMalloc(&b, 256);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int device = 0;

  std::printf("host us per call (enqueue only, one-element tensors)\n");
  const auto host_row = [&](const char* name, const std::function<void()>& fn) {
    const double us = host_us(fn, calls);
    std::printf("%-46s %8.2f us\n", name, us);
    results.add({{"section", "host"}, {"case", name}, {"median_us", us}});
  };
  host_row("cudaGetDevice (runtime)", [&] { cudaGetDevice(&device); });
  host_row("cudaSetDevice (runtime)", [&] { cudaSetDevice(0); });
  host_row("cudaMemcpyAsync 256 B D2D (runtime)", [&] { cudaMemcpyAsync(b, a, 256, cudaMemcpyDeviceToDevice, stream); });
  host_row("cudaMallocAsync + cudaFreeAsync 256 B (runtime)", [&] {
    void* p = nullptr;
    cudaMallocAsync(&p, 256, stream);
    cudaFreeAsync(p, stream);
  });
  host_row("lg::empty 1 element (allocator)", [&] { (void)lg::empty({1}, half); });
  host_row("copy_ same layout (one cudaMemcpyAsync)", [&] { tiny_out.copy_(tiny); });
  host_row("copy_ NCHW -> NHWC (copy kernel)", [&] { tiny_nhwc.copy_(tiny_nchw); });
  host_row("relu (alloc + pointwise kernel)", [&] { (void)lg::relu(tiny); });
  host_row("add (alloc + pointwise kernel)", [&] { (void)lg::add(tiny, tiny); });
  host_row("lg::cuda::synchronize (idle device)", [&] { lg::cuda::synchronize(); });

  std::printf("\nwall us per call over %d calls with a device wait at the end, (32,64,56,56) float16\n", 20);
  const Tensor big = lg::randn({32, 64, 56, 56}).to(half).contiguous(MemoryFormat::ChannelsLast);
  Tensor big_out = lg::empty_like(big);
  const Tensor big_nchw = big.contiguous();
  // ours: the calls queue on layoutguard's stream, so lg::cuda::Event pairs around them also
  // give the device's own time per call (the runtime's memcpy row uses another stream).
  const auto device_row = [&](const char* name, const std::function<void()>& fn, bool ours) {
    std::vector<double> samples;
    for (int s = 0; s < 11; ++s) {
      lg::cuda::synchronize();
      cudaDeviceSynchronize();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 20; ++i) fn();
      const auto t_host = std::chrono::steady_clock::now();
      lg::cuda::synchronize();
      cudaDeviceSynchronize();
      const auto t1 = std::chrono::steady_clock::now();
      samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 20);
      if (s == 10)
        std::printf("%-46s host enqueue %6.2f us/call, ", name,
                    std::chrono::duration<double, std::micro>(t_host - t0).count() / 20);
    }
    std::sort(samples.begin(), samples.end());
    std::printf("wall %6.2f us/call", samples[5]);
    double event_us = -1;
    if (ours) {
      lg::cuda::Event start, stop;
      start.record();
      for (int i = 0; i < 20; ++i) fn();
      stop.record();
      event_us = start.elapsed_ms(stop) * 1000.0 / 20;
      std::printf(", device (events) %6.2f us/call", event_us);
    }
    std::printf("\n");
    results.add({{"section", "device"}, {"case", name}, {"median_us", samples[5]}, {"event_us", event_us}});
  };
  device_row("cudaMemcpyAsync D2D 12.8 MB (runtime)",
             [&] { cudaMemcpyAsync(big_out.data_ptr(), big.data_ptr(), big.nbytes(), cudaMemcpyDeviceToDevice, stream); },
             false);
  device_row("copy_ same layout", [&] { big_out.copy_(big); }, true);
  device_row("copy_ NCHW -> NHWC", [&] { big_out.copy_(big_nchw); }, true);
  device_row("relu", [&] { (void)lg::relu(big); }, true);
  device_row("add", [&] { (void)lg::add(big, big); }, true);
  // Five launches, a workspace and the weights made double: host enqueue against device time
  // says whether these ops are host-bound at this size.
  const Tensor gw = lg::rand({64}).to(half), gb = lg::randn({64}).to(half);
  device_row("group_norm, 32 groups", [&] { (void)lg::group_norm(big, 32, gw, gb); }, true);
  device_row("layer_norm over (C, H, W), no weights", [&] { (void)lg::layer_norm(big, {64, 56, 56}); }, true);
  cudaFree(a);
  cudaFree(b);
  cudaStreamDestroy(stream);
  return results.finish();
}

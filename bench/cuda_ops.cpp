// CUDA speed in one run: NCHW <-> NHWC conversion (copy_ into a preallocated tensor, and
// contiguous(channels_last) allocating) and pointwise relu / add on NHWC tensors against
// device-to-device cudaMemcpy of the same bytes; then cuDNN convolution TFLOPS on the 12
// ResNet-50 shapes in float16, NHWC against NCHW. A benchmark, not a test: medians and
// ratios, no pass/fail. Then batch norm on ResNet-50's activation shapes in NHWC, on our
// kernels against cuDNN's norm-forward node (lg::cuda::set_cudnn_batch_norm), in training and
// in evaluation; then group, instance and layer norm on the device against relu.
//
//   build/bench/cuda_ops [--quick | --smoke] [--json PATH] [--conv-only | --bandwidth-only | --norm-only]
//                        [--cudnn-benchmark]
// --cudnn-benchmark: convolutions in cuDNN benchmark mode (the peer: pytorch_conv.py --benchmark)
// --bandwidth-only: the conversion, pointwise and group/instance/layer norm rows, no batch norm
// or convolutions (a minute less on an H200, for device runs short of time)
// --norm-only: the group/instance/layer norm rows alone (seconds)
// Each sample runs the call `reps` times and then waits for the device (lg::cuda::synchronize
// for our ops, cudaDeviceSynchronize for the peer), so both sides are timed the same way.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include <layoutguard/layoutguard.h>

#include "cuda/kernels/launch.h"  // set_short_planes_2byte_kernel
#include "report.h"

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

void row(lg::bench::Results& results, const char* name, const std::string& shape, double bytes, double ms,
         double memcpy_ms) {
  std::printf("%-40s %-20s %9.4f ms %8.1f GB/s %6.0f%%\n", name, shape.c_str(), ms, bytes / (ms * 1e-3) / 1e9,
              100.0 * memcpy_ms / ms);
  results.add({{"section", "cuda_bandwidth"}, {"case", name}, {"shape", shape}, {"median_ms", ms},
               {"gb_per_s", bytes / (ms * 1e-3) / 1e9}, {"pct_of_memcpy", 100.0 * memcpy_ms / ms}});
}

// Batch norm, NHWC, our kernels against cuDNN's (same tensors, same call), as bandwidth: one
// read and one write of the activation in evaluation, and in training the extra reads of the
// statistics passes are not counted (the figure compares the two paths, not a roofline).
void batch_norm_rows(lg::bench::Results& results, int64_t batch, int reps) {
  std::printf("\nbatch_norm NHWC, batch %lld: ours vs cuDNN's norm-forward node\n", static_cast<long long>(batch));
  std::printf("%-34s %-9s %10s %10s %14s\n", "shape", "mode", "ours ms", "cuDNN ms", "cuDNN speed-up");
  const std::vector<std::vector<int64_t>> shapes{
      {batch, 64, 112, 112}, {batch, 256, 56, 56}, {batch, 512, 28, 28}, {batch, 2048, 7, 7}};
  for (lg::DType dt : {lg::kFloat16, lg::kFloat32})
    for (const auto& s : shapes)
      for (bool training : {false, true}) {
        const lg::TensorOptions opts = lg::TensorOptions().dtype(dt).device(lg::Device::cuda(0));
        const lg::TensorOptions stats = lg::TensorOptions().dtype(lg::kFloat32).device(lg::Device::cuda(0));
        const Tensor x = lg::randn(s).to(opts).contiguous(MemoryFormat::ChannelsLast);
        const Tensor w = lg::rand({s[1]}).to(stats), b = lg::randn({s[1]}).to(stats);
        const Tensor rm = lg::zeros({s[1]}, stats), rv = lg::ones({s[1]}, stats);
        const auto call = [&] { (void)lg::batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5); };
        lg::cuda::set_cudnn_batch_norm(false);
        const double ours = per_call_ms(call, reps, true);
        lg::cuda::set_cudnn_batch_norm(true);
        const double cudnn = per_call_ms(call, reps, true);
        lg::cuda::set_cudnn_batch_norm(false);
        const std::string shape = lg::to_string(s) + " " + std::string(lg::dtype_name(dt));
        const char* mode = training ? "training" : "eval";
        std::printf("%-34s %-9s %10.4f %10.4f %13.2fx\n", shape.c_str(), mode, ours, cudnn, ours / cudnn);
        results.add({{"section", "cuda_batch_norm"}, {"shape", shape}, {"mode", mode}, {"ours_ms", ours},
                     {"cudnn_ms", cudnn}, {"gb_per_s_ours", 2.0 * static_cast<double>(x.nbytes()) / (ours * 1e-3) / 1e9}});
      }
}

// group_norm, instance_norm and layer_norm, all on the device: time per call and the bandwidth
// of the minimum traffic of the kernels (the input is read twice -- one pass for the moments,
// one for the affine map -- and the output written once), next to relu on the same tensor. NHWC, and one group_norm row on NCHW input, whose lanes walk a plane's elements
// instead of channels.
void group_norm_rows(lg::bench::Results& results, int64_t batch, int reps) {
  std::printf("\nnormalisation on the device, NHWC, batch %lld (GB/s over the least traffic: 2 reads + 1 write; "
              "relu 1 + 1)\n", static_cast<long long>(batch));
  const std::vector<int64_t> s{batch, 256, 28, 28};
  for (lg::DType dt : {lg::kFloat16, lg::kFloat32}) {
    const lg::TensorOptions opts = lg::TensorOptions().dtype(dt).device(lg::Device::cuda(0));
    const Tensor x = lg::randn(s).to(opts).contiguous(MemoryFormat::ChannelsLast);
    const Tensor w = lg::rand({256}).to(opts), b = lg::randn({256}).to(opts);
    const Tensor lw = lg::rand({256, 28, 28}).to(opts), lb = lg::randn({256, 28, 28}).to(opts);
    const Tensor x_nchw = x.contiguous();
    struct Op {
      std::string name;
      double passes;  // tensors' worth of traffic: reads + writes
      std::function<void()> call;
    };
    std::vector<Op> ops{
        {"relu (reference: 1 read + 1 write)", 2, [&] { (void)lg::relu(x); }},
        {"group_norm, 32 groups", 3, [&] { (void)lg::group_norm(x, 32, w, b); }},
        {"group_norm, 32 groups, NCHW input", 3, [&] { (void)lg::group_norm(x_nchw, 32, w, b); }},
        {"group_norm, 256 groups (instance)", 3, [&] { (void)lg::group_norm(x, 256, w, b); }},
        {"layer_norm over (C, H, W)", 3, [&] { (void)lg::layer_norm(x, {256, 28, 28}, lw, lb); }},
        // ConvNeXt's LayerNorm: over C of the NHWC data seen as (N, H, W, C).
        {"layer_norm over C (N, H, W, C view)", 3, [&] { (void)lg::layer_norm(x.permute({0, 2, 3, 1}), {256}, w, b); }},
    };
    // The chunk length group_normalize plans with (8 elements per thread by default), swept on
    // group_norm in both layouts: a shorter chunk gives more blocks and more partial sums.
    for (int64_t n : {2, 4, 16}) {
      const auto with = [n](const std::function<void()>& f) {
        return [n, f] {
          lg::cuda::kernels::set_group_normalize_min_per_lane(n);
          f();
          lg::cuda::kernels::set_group_normalize_min_per_lane(0);
        };
      };
      ops.push_back({"group_norm, 32 groups, chunk >= " + std::to_string(n), 3,
                     with([&] { (void)lg::group_norm(x, 32, w, b); })});
      ops.push_back({"  same, NCHW input, chunk >= " + std::to_string(n), 3,
                     with([&] { (void)lg::group_norm(x_nchw, 32, w, b); })});
    }
    for (const Op& op : ops) {
      const double ms = per_call_ms(op.call, reps, true);
      const double gb_per_s = op.passes * static_cast<double>(x.nbytes()) / (ms * 1e-3) / 1e9;
      const std::string shape = lg::to_string(s) + " " + std::string(lg::dtype_name(dt));
      std::printf("%-40s %-24s %9.4f ms %8.1f GB/s\n", op.name.c_str(), shape.c_str(), ms, gb_per_s);
      results.add({{"section", "cuda_group_norm"}, {"case", op.name}, {"shape", shape}, {"median_ms", ms},
                   {"gb_per_s", gb_per_s}});
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const lg::bench::CommonArgs args = lg::bench::parse_common(argc, argv);
  const bool quick = args.quick;
  bool conv_only = false, bandwidth_only = false, norm_only = false, benchmark = false;
  for (std::string_view a : args.rest) {
    conv_only |= a == "--conv-only";
    bandwidth_only |= a == "--bandwidth-only";
    norm_only |= a == "--norm-only";
    benchmark |= a == "--cudnn-benchmark";
    const bool known = a == "--conv-only" || a == "--bandwidth-only" || a == "--norm-only" || a == "--cudnn-benchmark";
    if (!known || int{conv_only} + int{bandwidth_only} + int{norm_only} > 1) {
      std::fprintf(stderr,
                   "usage: cuda_ops [--quick|--smoke] [--json PATH] [--conv-only | --bandwidth-only | --norm-only] "
                   "[--cudnn-benchmark]\n");
      return 2;
    }
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // rows survive a run cut short
  lg::bench::Results results("cuda_ops", args);
  if (!lg::cuda::is_available()) {
    std::printf("no usable GPU: %s\n", lg::cuda::probe_report().c_str());
    results.set("skipped", "no usable GPU");
    return results.finish();
  }
  std::printf("layoutguard %s CUDA bandwidth: %s\n", LG_VERSION, lg::cuda::probe_report().c_str());
  std::printf("bytes moved = read + write; %% = cudaMemcpy D2D time of the same bytes / our time\n\n");
  const std::vector<std::vector<int64_t>> shapes =
      args.smoke ? std::vector<std::vector<int64_t>>{{1, 64, 56, 56}}
      : quick    ? std::vector<std::vector<int64_t>>{{32, 64, 56, 56}}
            : std::vector<std::vector<int64_t>>{{32, 64, 56, 56}, {256, 256, 56, 56}, {256, 2048, 7, 7}, {256, 3, 224, 224}};
  const int reps = args.smoke ? 1 : quick ? 5 : 20;
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16}) {
    if (conv_only || norm_only) break;
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
      row(results, "cudaMemcpy D2D (peer)", shape, 2 * bytes, memcpy_ms, memcpy_ms);
      row(results, "copy_ NCHW -> NHWC", shape, 2 * bytes, per_call_ms([&] { dst_cl.copy_(nchw); }, reps, true), memcpy_ms);
      row(results, "copy_ NHWC -> NCHW", shape, 2 * bytes, per_call_ms([&] { dst_cf.copy_(nhwc); }, reps, true), memcpy_ms);
      if (lg::itemsize(dt) == 2 && (s[1] <= 64 || s[2] * s[3] <= 64)) {
        // The same two copies through the short-planes kernel of every element size, which the
        // 2-byte one replaced: both in one run, on one GPU.
        lg::cuda::kernels::set_short_planes_2byte_kernel(false);
        row(results, "copy_ NCHW -> NHWC (generic kernel)", shape, 2 * bytes,
            per_call_ms([&] { dst_cl.copy_(nchw); }, reps, true), memcpy_ms);
        row(results, "copy_ NHWC -> NCHW (generic kernel)", shape, 2 * bytes,
            per_call_ms([&] { dst_cf.copy_(nhwc); }, reps, true), memcpy_ms);
        lg::cuda::kernels::set_short_planes_2byte_kernel(true);
      }
      row(results, "contiguous(channels_last) (+alloc)", shape, 2 * bytes,
          per_call_ms([&] { (void)nchw.contiguous(MemoryFormat::ChannelsLast); }, reps, true), memcpy_ms);
      row(results, "relu NHWC", shape, 2 * bytes, per_call_ms([&] { (void)lg::relu(nhwc); }, reps, true), memcpy_ms);
      row(results, "add NHWC + NHWC", shape, 3 * bytes, per_call_ms([&] { (void)lg::add(nhwc, other); }, reps, true),
          1.5 * memcpy_ms);
    }
  }

  if (!conv_only && !bandwidth_only && !norm_only) batch_norm_rows(results, args.smoke ? 2 : quick ? 32 : 256, reps);
  if (!conv_only) group_norm_rows(results, args.smoke ? 2 : 32, reps);
  if (bandwidth_only || norm_only) return results.finish();

  // cuDNN convolutions, float16, batch 32 (256 without --quick): ours NHWC vs ours NCHW.
  struct Shape {
    int64_t cin, cout, k, stride, h;
  };
  const Shape resnet50[] = {{3, 64, 7, 2, 224},    {64, 64, 1, 1, 56},    {64, 64, 3, 1, 56},   {64, 256, 1, 1, 56},
                            {256, 64, 1, 1, 56},   {128, 128, 3, 1, 28},  {512, 128, 1, 1, 28}, {256, 256, 3, 1, 14},
                            {1024, 256, 1, 1, 14}, {512, 512, 3, 1, 7},   {2048, 512, 1, 1, 7}, {512, 2048, 1, 1, 7}};
  const int64_t batch = args.smoke ? 1 : quick ? 32 : 256;
  lg::cuda::set_cudnn_benchmark(benchmark);
  std::printf("\nconv2d float16 (cuDNN%s), batch %lld: TFLOPS from median times\n", benchmark ? ", benchmark mode" : "",
              static_cast<long long>(batch));
  std::printf("%-22s %12s %12s %10s\n", "layer", "NHWC", "NCHW", "NHWC/NCHW");
  double log_sum = 0;
  int wins = 0, n = 0;
  for (const Shape& s : resnet50) {
    const lg::TensorOptions opts = lg::TensorOptions().dtype(lg::kFloat16).device(lg::Device::cuda(0));
    const int64_t pad = s.k / 2, out = (s.h + 2 * pad - s.k) / s.stride + 1;
    const double flops = 2.0 * static_cast<double>(batch * s.cout * out * out) * static_cast<double>(s.cin * s.k * s.k);
    const Tensor x = lg::randn({batch, s.cin, s.h, s.h}).to(opts), w = lg::randn({s.cout, s.cin, s.k, s.k}).to(opts);
    const Tensor x_cl = x.contiguous(MemoryFormat::ChannelsLast), w_cl = w.contiguous(MemoryFormat::ChannelsLast);
    const double nhwc = per_call_ms([&] { (void)lg::conv2d(x_cl, w_cl, std::nullopt, {s.stride}, {pad}); }, 5, true);
    const double nchw = per_call_ms([&] { (void)lg::conv2d(x, w, std::nullopt, {s.stride}, {pad}); }, 5, true);
    char name[64];
    std::snprintf(name, sizeof(name), "%lld->%lld %lldx%lld s%lld %lld", static_cast<long long>(s.cin),
                  static_cast<long long>(s.cout), static_cast<long long>(s.k), static_cast<long long>(s.k),
                  static_cast<long long>(s.stride), static_cast<long long>(s.h));
    std::printf("%-22s %12.1f %12.1f %9.2fx\n", name, flops / (nhwc * 1e-3) / 1e12, flops / (nchw * 1e-3) / 1e12,
                nchw / nhwc);
    results.add({{"section", "cuda_conv"}, {"layer", name}, {"batch", batch}, {"dtype", "float16"},
                 {"cudnn_benchmark", benchmark}, {"nhwc_ms", nhwc}, {"nchw_ms", nchw},
                 {"nhwc_tflops", flops / (nhwc * 1e-3) / 1e12}, {"nchw_tflops", flops / (nchw * 1e-3) / 1e12}});
    if (args.smoke) break;
    log_sum += std::log(nchw / nhwc);
    wins += nhwc <= nchw;
    ++n;
  }
  std::printf("NHWC faster on %d of %d layers; geomean NHWC speed-up %.2fx\n", wins, n, std::exp(log_sum / n));
  return results.finish();
}

// Throughput of the model zoo: images (clips for r3d_18) per second in channels_last and in
// contiguous (NCHW), at the models' default input sizes, in eval mode with the guard off. The
// ratio column is channels_last / contiguous in the same run; the peer numbers for PyTorch on
// the same machine come from bench/peer/pytorch_models.py (same flags). Each point is the best
// of 3 alternating rounds per format, each round the median of >= 10 calls over >= 1 s.
//
//   models [--quick] [--models resnet18,resnet50,...] [--batches 1,16]
//          [--device cpu|cuda] [--dtype float32|float16|bfloat16]
//   --quick: batch 1 only, one timed run per point
//   --profile: after the timings, per-op times of one forward in each format: host (the time
//              between consecutive top-level ops returning, nothing waited for) and, on CUDA,
//              device (the device synchronised after every op, so each op's own time)
//   --device cuda: every timed call ends with lg::cuda::synchronize(), and cuDNN runs in
//                  benchmark mode (as the PyTorch peer runs with cudnn.benchmark = True)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <omp.h>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>

#include "timing.h"

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Per-op profile of one forward: time between consecutive top-level ops returning, summed by op
// name; with `sync`, each op first waits for the device.
void profile(lg::nn::Module& model, const lg::Tensor& input, bool sync, const char* what) {
  struct Entry {
    double ms = 0;
    int calls = 0;
  };
  std::map<std::string, Entry> by_op;
  auto last = std::chrono::steady_clock::now();
  {
    lg::hooks::ScopedHook hook([&](const lg::hooks::OpCall& call) {
      if (call.depth != 0) return;
      if (sync) lg::cuda::synchronize();
      const auto now = std::chrono::steady_clock::now();
      Entry& e = by_op[std::string(call.op) + " [" + std::string(call.kernel) + "]"];
      e.ms += std::chrono::duration<double, std::milli>(now - last).count();
      ++e.calls;
      last = std::chrono::steady_clock::now();
    });
    if (sync) lg::cuda::synchronize();
    last = std::chrono::steady_clock::now();
    model(input);
  }
  std::vector<std::pair<std::string, Entry>> rows(by_op.begin(), by_op.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  double total = 0;
  for (const auto& r : rows) total += r.second.ms;
  std::printf("  profile (%s), %.2f ms in all:\n", what, total);
  for (const auto& [name, e] : rows)
    std::printf("    %-52s %5d calls %9.3f ms %6.1f%% %8.1f us/call\n", name.c_str(), e.calls, e.ms, 100 * e.ms / total,
                1000 * e.ms / e.calls);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, profiling = false;
  std::vector<std::string> models;
  for (const lg::models::ModelInfo& m : lg::models::model_infos())
    if (m.name != "unet_legacy") models.emplace_back(m.name);
  std::vector<int64_t> batches{1, 16};
  lg::Device device = lg::kCPU;
  lg::DType dtype = lg::kFloat32;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--quick") {
      quick = true;
      batches = {1};
    } else if (a == "--profile") {
      profiling = true;
    } else if (a == "--models" && i + 1 < argc) {
      models = split(argv[++i]);
    } else if (a == "--device" && i + 1 < argc) {
      const std::string_view d = argv[++i];
      if (d != "cpu" && d != "cuda") {
        std::cerr << "models: --device takes cpu or cuda, got " << d << "\n";
        return 2;
      }
      device = d == "cuda" ? lg::Device::cuda(0) : lg::kCPU;
    } else if (a == "--dtype" && i + 1 < argc) {
      const std::string_view d = argv[++i];
      if (d != "float32" && d != "float16" && d != "bfloat16") {
        std::cerr << "models: --dtype takes float32, float16 or bfloat16, got " << d << "\n";
        return 2;
      }
      dtype = d == "float16" ? lg::kFloat16 : d == "bfloat16" ? lg::kBFloat16 : lg::kFloat32;
    } else if (a == "--batches" && i + 1 < argc) {
      batches.clear();
      for (const std::string& b : split(argv[++i])) batches.push_back(std::stoll(b));
    } else {
      std::cerr << "usage: models [--quick] [--profile] [--models a,b] [--batches 1,16] [--device cpu|cuda] "
                   "[--dtype float16]\n";
      return 2;
    }
  }
  const bool cuda = device.is_cuda();
  if (cuda) {
    if (!lg::cuda::is_available()) {
      std::printf("no usable GPU: %s\n", lg::cuda::probe_report().c_str());
      return 0;
    }
    lg::cuda::set_cudnn_benchmark(true);
    std::printf("layoutguard %s model throughput, %s, %s, eval, cuDNN benchmark mode%s\n", LG_VERSION,
                lg::cuda::probe_report().c_str(), std::string(lg::dtype_name(dtype)).c_str(), quick ? " (--quick)" : "");
  } else {
    std::printf("layoutguard %s model throughput, CPU, %s, eval, %d threads%s\n", LG_VERSION,
                std::string(lg::dtype_name(dtype)).c_str(), omp_get_max_threads(), quick ? " (--quick)" : "");
  }
  std::printf("%-16s %5s %-14s %12s %12s %12s %8s\n", "model", "batch", "input", "NCHW img/s", "NHWC img/s",
              "NHWC ms", "NHWC/NCHW");
  for (const std::string& name : models) {
    const lg::models::ModelInfo& info = lg::models::model_info(name);
    const lg::MemoryFormat cl = info.spatial_dims == 3 ? lg::MemoryFormat::ChannelsLast3d : lg::MemoryFormat::ChannelsLast;
    for (int64_t batch : batches) {
      std::vector<int64_t> sizes{batch, 3};
      sizes.insert(sizes.end(), info.size.begin(), info.size.end());
      lg::manual_seed(0);
      const lg::Tensor x = lg::randn(sizes).to(lg::TensorOptions().dtype(dtype).device(device));
      // Both formats' models side by side, timed alternately for `rounds` rounds; each format
      // keeps its best round (the machine's background noise only ever slows a round down).
      std::shared_ptr<lg::nn::Module> models[2];
      lg::Tensor inputs[2];
      for (int f = 0; f < 2; ++f) {
        const lg::MemoryFormat fmt = f == 0 ? lg::MemoryFormat::Contiguous : cl;
        models[f] = lg::models::create_model(name);
        models[f]->eval();
        models[f]->to(dtype);
        models[f]->to(device);
        if (fmt == lg::MemoryFormat::ChannelsLast) lg::nn::utils::convert_conv2d_weight_memory_format(*models[f], fmt);
        if (fmt == lg::MemoryFormat::ChannelsLast3d) lg::nn::utils::convert_conv3d_weight_memory_format(*models[f], fmt);
        inputs[f] = x.to(fmt);
      }
      double best_ms[2] = {0, 0};
      const int rounds = quick ? 1 : 3;
      for (int round = 0; round < rounds; ++round)
        for (int f = 0; f < 2; ++f) {
          const lg::bench::Timing t = lg::bench::time_it(
              [&] {
                (*models[f])(inputs[f]);
                if (cuda) lg::cuda::synchronize();
              },
              quick ? 1 : 10, quick ? 0 : 1000);
          if (round == 0 || t.median_ms < best_ms[f]) best_ms[f] = t.median_ms;
        }
      if (profiling)
        for (int f = 0; f < 2; ++f) {
          const std::string label = name + " batch " + std::to_string(batch) + (f == 0 ? " NCHW" : " NHWC");
          profile(*models[f], inputs[f], false, (label + ", host").c_str());
          if (cuda) profile(*models[f], inputs[f], true, (label + ", device").c_str());
        }
      const double ips[2] = {double(batch) * 1000.0 / best_ms[0], double(batch) * 1000.0 / best_ms[1]};
      const double ms_cl = best_ms[1];
      std::printf("%-16s %5lld %-14s %12.2f %12.2f %12.1f %7.2fx\n", name.c_str(), (long long)batch,
                  lg::to_string(lg::IntArrayRef(sizes).slice(2)).c_str(), ips[0], ips[1], ms_cl, ips[1] / ips[0]);
      std::fflush(stdout);
    }
  }
  return 0;
}

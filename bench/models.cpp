// Throughput of the model zoo: images (clips for r3d_18) per second in channels_last and in
// contiguous (NCHW), in eval mode with the guard off. The ratio column is channels_last /
// contiguous in the same run; the peer numbers for PyTorch on the same machine come from
// bench/peer/pytorch_models.py (same flags). Each point is the best of 3 alternating rounds per
// format, each round the median of >= 10 calls over >= 1 s.
//
//   models [--quick | --smoke] [--json PATH] [--models resnet18,resnet50,...] [--batches 1,16]
//          [--size S] [--formats both|channels_last] [--device cpu|cuda]
//          [--dtype float32|float16|bfloat16] [--runs N] [--profile] [--guard-compare]
//   --quick: batch 1 only, one round of at least 3 calls per point
//   --runs N: at least N timed calls per round (the scaling sweep: --quick --runs 10)
//   --smoke: resnet18, batch 1, 64x64, one call: checks that the program runs
//   --size S: S x S input (S x S x S... for 3-D models: depth kept) instead of the model's default
//   --formats channels_last: skip the contiguous run (the scaling sweep of scripts/bench)
//   --profile: after the timings, per-op times of one forward in each format: host (the time
//              between consecutive top-level ops returning, nothing waited for) and, on CUDA,
//              device (the device synchronised after every op, so each op's own time)
//   --guard-compare: also time the channels_last forward with the guard off and in record
//              mode, alternately (the end-to-end cost of checking every op)
//   --device cuda: every timed call ends with lg::cuda::synchronize(), and cuDNN runs in
//                  benchmark mode (as the PyTorch peer runs with cudnn.benchmark = True)
#include <algorithm>
#include <chrono>
#include <cmath>
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

#include "report.h"

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
  const lg::bench::CommonArgs args = lg::bench::parse_common(argc, argv);
  bool profiling = false, guard_compare = false, both_formats = true;
  int64_t size_override = 0, runs_override = 0;
  std::vector<std::string> models;
  for (const lg::models::ModelInfo& m : lg::models::model_infos())
    if (m.name != "unet_legacy") models.emplace_back(m.name);
  std::vector<int64_t> batches{1, 16};
  if (args.quick) batches = {1};
  if (args.smoke) {
    models = {"resnet18"};
    size_override = 64;
  }
  lg::Device device = lg::kCPU;
  lg::DType dtype = lg::kFloat32;
  const auto usage = [] {
    std::cerr << "usage: models [--quick|--smoke] [--json PATH] [--models a,b] [--batches 1,16] [--size S] "
                 "[--formats both|channels_last] [--device cpu|cuda] [--dtype float16] [--runs N] [--profile] "
                 "[--guard-compare]\n";
    return 2;
  };
  for (size_t i = 0; i < args.rest.size(); ++i) {
    const std::string_view a = args.rest[i];
    const bool has_value = i + 1 < args.rest.size();
    if (a == "--profile") {
      profiling = true;
    } else if (a == "--guard-compare") {
      guard_compare = true;
    } else if (a == "--models" && has_value) {
      models = split(std::string(args.rest[++i]));
    } else if (a == "--runs" && has_value) {
      runs_override = std::stoll(std::string(args.rest[++i]));
      if (runs_override < 1 || runs_override > 1000) {
        std::cerr << "models: --runs must be 1 to 1000, got " << runs_override << "\n";
        return 2;
      }
    } else if (a == "--size" && has_value) {
      size_override = std::stoll(std::string(args.rest[++i]));
      if (size_override < 16) {
        std::cerr << "models: --size must be at least 16, got " << size_override << "\n";
        return 2;
      }
    } else if (a == "--formats" && has_value) {
      const std::string_view f = args.rest[++i];
      if (f != "both" && f != "channels_last") return usage();
      both_formats = f == "both";
    } else if (a == "--device" && has_value) {
      const std::string_view d = args.rest[++i];
      if (d != "cpu" && d != "cuda") {
        std::cerr << "models: --device takes cpu or cuda, got " << d << "\n";
        return 2;
      }
      device = d == "cuda" ? lg::Device::cuda(0) : lg::kCPU;
    } else if (a == "--dtype" && has_value) {
      const std::string_view d = args.rest[++i];
      if (d != "float32" && d != "float16" && d != "bfloat16") {
        std::cerr << "models: --dtype takes float32, float16 or bfloat16, got " << d << "\n";
        return 2;
      }
      dtype = d == "float16" ? lg::kFloat16 : d == "bfloat16" ? lg::kBFloat16 : lg::kFloat32;
    } else if (a == "--batches" && has_value) {
      batches.clear();
      for (const std::string& b : split(std::string(args.rest[++i]))) batches.push_back(std::stoll(b));
    } else {
      return usage();
    }
  }
  lg::bench::Results results("models", args);
  const bool cuda = device.is_cuda();
  if (cuda) {
    if (!lg::cuda::is_available()) {
      std::printf("no usable GPU: %s\n", lg::cuda::probe_report().c_str());
      results.set("skipped", "no usable GPU");
      return results.finish();
    }
    lg::cuda::set_cudnn_benchmark(true);
    std::printf("layoutguard %s model throughput, %s, %s, eval, cuDNN benchmark mode\n", LG_VERSION,
                lg::cuda::probe_report().c_str(), std::string(lg::dtype_name(dtype)).c_str());
  } else {
    std::printf("layoutguard %s model throughput, CPU, %s, eval, %d threads\n", LG_VERSION,
                std::string(lg::dtype_name(dtype)).c_str(), omp_get_max_threads());
  }
  std::printf("%-16s %5s %-14s %12s %12s %12s %8s\n", "model", "batch", "input", "NCHW img/s", "NHWC img/s",
              "NHWC ms", "NHWC/NCHW");
  const int rounds = args.quick ? 1 : 3;
  const int min_runs = runs_override > 0 ? static_cast<int>(runs_override) : args.smoke ? 1 : args.quick ? 3 : 10;
  const double budget_ms = args.quick ? 0 : 1000;
  for (const std::string& name : models) {
    const lg::models::ModelInfo& info = lg::models::model_info(name);
    const lg::MemoryFormat cl = info.spatial_dims == 3 ? lg::MemoryFormat::ChannelsLast3d : lg::MemoryFormat::ChannelsLast;
    for (int64_t batch : batches) {
      std::vector<int64_t> sizes{batch, 3};
      sizes.insert(sizes.end(), info.size.begin(), info.size.end());
      if (size_override > 0)  // the spatial dims; a video model keeps its depth
        for (size_t d = sizes.size() - 2; d < sizes.size(); ++d) sizes[d] = size_override;
      lg::manual_seed(0);
      const lg::Tensor x = lg::randn(sizes).to(lg::TensorOptions().dtype(dtype).device(device));
      // Both formats' models side by side, timed alternately for `rounds` rounds; each format
      // keeps its best round (the machine's background noise only ever slows a round down).
      std::shared_ptr<lg::nn::Module> nets[2];
      lg::Tensor inputs[2];
      for (int f = both_formats ? 0 : 1; f < 2; ++f) {
        const lg::MemoryFormat fmt = f == 0 ? lg::MemoryFormat::Contiguous : cl;
        nets[f] = lg::models::create_model(name);
        nets[f]->eval();
        nets[f]->to(dtype);
        nets[f]->to(device);
        if (fmt == lg::MemoryFormat::ChannelsLast) lg::nn::utils::convert_conv2d_weight_memory_format(*nets[f], fmt);
        if (fmt == lg::MemoryFormat::ChannelsLast3d) lg::nn::utils::convert_conv3d_weight_memory_format(*nets[f], fmt);
        inputs[f] = x.to(fmt);
      }
      const auto forward = [&](int f) {
        (*nets[f])(inputs[f]);
        if (cuda) lg::cuda::synchronize();
      };
      lg::bench::Timing best[2]{};
      for (int round = 0; round < rounds; ++round)
        for (int f = both_formats ? 0 : 1; f < 2; ++f) {
          const lg::bench::Timing t = lg::bench::time_it([&] { forward(f); }, min_runs, budget_ms);
          if (round == 0 || t.median_ms < best[f].median_ms) best[f] = t;
        }
      if (profiling)
        for (int f = both_formats ? 0 : 1; f < 2; ++f) {
          const std::string label = name + " batch " + std::to_string(batch) + (f == 0 ? " NCHW" : " NHWC");
          profile(*nets[f], inputs[f], false, (label + ", host").c_str());
          if (cuda) profile(*nets[f], inputs[f], true, (label + ", device").c_str());
        }
      const double ips_cl = double(batch) * 1000.0 / best[1].median_ms;
      const double ips_cf = both_formats ? double(batch) * 1000.0 / best[0].median_ms : NAN;
      const std::string input = lg::to_string(lg::IntArrayRef(sizes).slice(2));
      std::printf("%-16s %5lld %-14s %12.2f %12.2f %12.1f %7.2fx\n", name.c_str(), (long long)batch, input.c_str(),
                  ips_cf, ips_cl, best[1].median_ms, ips_cl / ips_cf);
      std::fflush(stdout);
      nlohmann::json record{{"section", "models"},   {"model", name},
                            {"batch", batch},        {"input", input},
                            {"device", cuda ? "cuda" : "cpu"},
                            {"dtype", std::string(lg::dtype_name(dtype))},
                            {"channels_last", lg::bench::timing_json(best[1])},
                            {"channels_last_img_per_s", ips_cl},
                            {"peak_rss_mib", lg::bench::peak_rss_mib()}};
      if (both_formats) {
        record["contiguous"] = lg::bench::timing_json(best[0]);
        record["contiguous_img_per_s"] = ips_cf;
      }
      results.add(std::move(record));
      if (guard_compare) {
        // The channels_last forward with the guard off, then in record mode, alternately.
        lg::guard::set_options(lg::guard::parse_options("", "summary=0"));
        lg::bench::Timing off{}, rec{};
        for (int round = 0; round < rounds; ++round) {
          lg::guard::set_mode(lg::guard::Mode::Off);
          const lg::bench::Timing a = lg::bench::time_it([&] { forward(1); }, min_runs, budget_ms);
          lg::guard::set_mode(lg::guard::Mode::Record);
          const lg::bench::Timing b = lg::bench::time_it([&] { forward(1); }, min_runs, budget_ms);
          lg::guard::set_mode(lg::guard::Mode::Off);
          lg::guard::clear_report();
          if (round == 0 || a.median_ms < off.median_ms) off = a;
          if (round == 0 || b.median_ms < rec.median_ms) rec = b;
        }
        std::printf("  guard: off %.2f ms, record %.2f ms (%+.1f%%)\n", off.median_ms, rec.median_ms,
                    100.0 * (rec.median_ms / off.median_ms - 1));
        results.add({{"section", "guard_end_to_end"}, {"model", name}, {"batch", batch}, {"input", input},
                     {"device", cuda ? "cuda" : "cpu"}, {"off", lg::bench::timing_json(off)},
                     {"record", lg::bench::timing_json(rec)},
                     {"record_overhead_pct", 100.0 * (rec.median_ms / off.median_ms - 1)}});
      }
    }
  }
  return results.finish();
}

// What layoutguard_torch adds to one small ATen op from C++: ns per at::add on a 1x8x4x4
// tensor (NCHW and channels_last), one thread, plain libtorch against the bridge switched on
// with the guard off, recording and throwing (no violation: the output keeps the format).
// Medians of repeated batches; the plain run is the peer, measured in the same process.
//   torch_overhead [--calls N] [--batches B]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <layoutguard/guard.h>
#include <layoutguard/torch.h>

namespace {

// ns per call of at::add(a, b) over `calls` calls.
double time_calls(const at::Tensor& a, const at::Tensor& b, int calls) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    at::Tensor c = at::add(a, b);
    (void)c;
  }
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  return took.count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 20000, batches = 21;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--calls" || arg == "--batches") && i + 1 < argc) {
      const int v = std::atoi(argv[++i]);
      if (v <= 0) {
        std::fprintf(stderr, "torch_overhead: %s needs a positive count\n", arg.c_str());
        return 2;
      }
      (arg == "--calls" ? calls : batches) = v;
    } else {
      std::fprintf(stderr, "usage: torch_overhead [--calls N] [--batches B]\n");
      return 2;
    }
  }
  if (std::getenv("LAYOUTGUARD") && std::strcmp(std::getenv("LAYOUTGUARD"), "off") != 0) {
    std::fprintf(stderr, "torch_overhead: run without LAYOUTGUARD (the benchmark switches the bridge itself)\n");
    return 2;
  }
  at::set_num_threads(1);
  lg::guard::set_options(lg::guard::parse_options("off", "summary=0"));
  std::printf("torch %s, %d calls x %d batches, median ns per at::add(1x8x4x4), 1 thread\n",
              std::string(lg::torch::built_torch_version()).c_str(), calls, batches);
  std::printf("%-16s %10s %10s %10s %10s %9s\n", "input", "plain", "bridge off", "record", "throw", "added");
  for (const bool channels_last : {false, true}) {
    at::Tensor a = at::randn({1, 8, 4, 4});
    if (channels_last) a = a.contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor b = a.clone();
    // The four ways take turns batch by batch, so that a slow spell of the machine hits all.
    std::vector<double> samples[4];
    for (int r = 0; r < batches + 1; ++r) {
      for (int way = 0; way < 4; ++way) {
        const double ns = way == 0 ? time_calls(a, b, calls) : [&] {
          lg::torch::Scope scope(way == 1 ? lg::guard::Mode::Off
                                          : way == 2 ? lg::guard::Mode::Record : lg::guard::Mode::Throw);
          return time_calls(a, b, calls);
        }();
        if (r > 0) samples[way].push_back(ns);  // the first round warms up
      }
    }
    double median[4];
    for (int way = 0; way < 4; ++way) {
      std::sort(samples[way].begin(), samples[way].end());
      median[way] = samples[way][samples[way].size() / 2];
    }
    std::printf("%-16s %10.0f %10.0f %10.0f %10.0f %9.0f\n", channels_last ? "channels_last" : "NCHW", median[0],
                median[1], median[2], median[3], median[2] - median[0]);
  }
  return 0;
}

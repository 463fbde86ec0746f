// What layoutguard_torch adds to one small ATen op from C++: ns per at::add on a 1x8x4x4
// tensor (NCHW and channels_last), one thread, plain libtorch against the bridge switched on
// with the guard off, recording and throwing (no violation: the output keeps the format).
// Medians of repeated batches; the plain run is the peer, measured in the same process.
//   torch_overhead [--calls N] [--batches B]
// With --instructions it times nothing: under callgrind (scripts/torch-instructions) it dumps
// the instructions of N calls per way, exact and repeatable where the VM's clock is not, and
// of a small CNN's training step (conv, batch norm, relu, a residual add, pooling, a linear
// layer, backward, SGD; channels_last, 2x8x16x16), where most ATen calls are nested ones, also
// recording with option forward_calls=1.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <layoutguard/guard.h>
#include <layoutguard/torch.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define LG_HAVE_CALLGRIND 1
#endif

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

// A small residual CNN's training step in channels_last: the mix of ATen calls of a real one
// (composite ops and their nested calls, factories inside kernels, autograd, in-place updates)
// at a size where callgrind can count it.
struct SmallNet {
  std::vector<at::Tensor> params;
  at::Tensor x;

  SmallNet() {
    const auto cl = at::MemoryFormat::ChannelsLast;
    auto param = [&](at::Tensor t) {
      params.push_back(t.requires_grad_());
      return params.back();
    };
    param(at::randn({8, 8, 3, 3}).contiguous(cl).mul_(0.1));  // conv 1
    param(at::ones({8}));                                      // batch norm 1
    param(at::zeros({8}));
    param(at::randn({8, 8, 3, 3}).contiguous(cl).mul_(0.1));  // conv 2
    param(at::ones({8}));                                      // batch norm 2
    param(at::zeros({8}));
    param(at::randn({4, 8}).mul_(0.1));                        // linear
    x = at::randn({2, 8, 16, 16}).contiguous(cl);
  }

  // Module scopes as nn.Module hooks push them in Python: the forward ops remember their
  // module for their backward nodes' reports.
  void step() {
    const std::vector<at::Tensor>& p = params;
    at::Tensor y, z, loss;
    {
      lg::torch::ModuleScope stem("stem");
      y = at::relu(at::batch_norm(at::conv2d(x, p[0], {}, 1, 1), p[1], p[2], {}, {}, true, 0.1, 1e-5, false));
    }
    {
      lg::torch::ModuleScope block("block");
      z = at::batch_norm(at::conv2d(y, p[3], {}, 1, 1), p[4], p[5], {}, {}, true, 0.1, 1e-5, false);
      z = at::relu(z + y);
    }
    {
      lg::torch::ModuleScope head("head");
      loss = at::linear(at::adaptive_avg_pool2d(z, {1, 1}).flatten(1), p[6]).sum();
    }
    loss.backward();
    c10::NoGradGuard no_grad;
    for (const at::Tensor& t : p) {
      t.sub_(t.grad(), 0.01);
      t.mutable_grad().zero_();
    }
  }
};

constexpr const char* kWays[4] = {"plain", "bridge off", "record", "throw"};

// Runs `calls` calls of one way inside its Scope (way 0: none, plain libtorch).
template <typename F>
auto in_way(int way, F&& f) {
  if (way == 0) return f();
  lg::torch::Scope scope(way == 1 ? lg::guard::Mode::Off : way == 2 ? lg::guard::Mode::Record : lg::guard::Mode::Throw);
  return f();
}

// One callgrind dump per input and way, named "INPUT WAY", each holding `calls` calls after a
// warm-up outside the count.
int count_instructions(int calls) {
#ifdef LG_HAVE_CALLGRIND
  for (const bool channels_last : {false, true}) {
    at::Tensor a = at::randn({1, 8, 4, 4});
    if (channels_last) a = a.contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor b = a.clone();
    for (int way = 0; way < 4; ++way) {
      in_way(way, [&] {
        time_calls(a, b, 100);
        CALLGRIND_TOGGLE_COLLECT;
        time_calls(a, b, calls);
        CALLGRIND_TOGGLE_COLLECT;
        return 0;
      });
      const std::string name = std::string(channels_last ? "channels_last " : "NCHW ") + kWays[way];
      CALLGRIND_DUMP_STATS_AT(name.c_str());
    }
  }
  // The step's dumps hold `steps` steps each; " /N" tells scripts/callgrind_table.py to divide
  // by N instead of the call count.
  SmallNet net;
  const int steps = 10;
  const auto count_steps = [&](int way, const std::string& name) {
    in_way(way, [&] {
      // The first step, uncounted, from the same line as the rest: with forward_calls=1 each
      // distinct stack is named once, and a step called from another line has other stacks.
      for (int i = 0; i <= steps; ++i) {
        if (i == 1) CALLGRIND_TOGGLE_COLLECT;
        net.step();
      }
      CALLGRIND_TOGGLE_COLLECT;
      return 0;
    });
    const std::string dump = "CNN training step " + name + " /" + std::to_string(steps);
    CALLGRIND_DUMP_STATS_AT(dump.c_str());
  };
  for (int way = 0; way < 3; ++way) count_steps(way, kWays[way]);
  // Option forward_calls in a C++ program: each forward call that makes nodes keeps its stack.
  const lg::guard::Options before = lg::guard::options();
  lg::guard::set_options_keeping_mode("forward_calls=1");
  count_steps(2, "record forward_calls=1");
  lg::guard::set_options(before);
  return 0;
#else
  (void)calls;
  std::fprintf(stderr, "torch_overhead: built without valgrind's callgrind.h; --instructions is unavailable\n");
  return 2;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 20000, batches = 21;
  bool instructions = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--instructions") {
      instructions = true;
    } else if ((arg == "--calls" || arg == "--batches") && i + 1 < argc) {
      const int v = std::atoi(argv[++i]);
      if (v <= 0) {
        std::fprintf(stderr, "torch_overhead: %s needs a positive count\n", arg.c_str());
        return 2;
      }
      (arg == "--calls" ? calls : batches) = v;
    } else {
      std::fprintf(stderr, "usage: torch_overhead [--calls N] [--batches B] [--instructions]\n");
      return 2;
    }
  }
  if (std::getenv("LAYOUTGUARD") && std::strcmp(std::getenv("LAYOUTGUARD"), "off") != 0) {
    std::fprintf(stderr, "torch_overhead: run without LAYOUTGUARD (the benchmark switches the bridge itself)\n");
    return 2;
  }
  at::set_num_threads(1);
  lg::guard::set_options(lg::guard::parse_options("off", "summary=0"));
  if (instructions) {
    std::printf("torch %s, instructions per at::add(1x8x4x4) over %d calls, 1 thread\n",
                std::string(lg::torch::built_torch_version()).c_str(), calls);
    return count_instructions(calls);
  }
  std::printf("torch %s, %d calls x %d batches, median ns per at::add(1x8x4x4), 1 thread\n",
              std::string(lg::torch::built_torch_version()).c_str(), calls, batches);
  std::printf("%-16s %10s %10s %10s %10s %9s\n", "input", "plain", "bridge off", "record", "throw", "added");
  for (const bool channels_last : {false, true}) {
    at::Tensor a = at::randn({1, 8, 4, 4});
    if (channels_last) a = a.contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor b = a.clone();
    // The four ways take turns batch by batch, so that a slow spell of the machine hits all,
    // in an order shuffled each round (a fixed seed), so that no way always follows the same.
    std::vector<double> samples[4];
    std::array<int, 4> order = {0, 1, 2, 3};
    std::mt19937 shuffle_seed(0);
    for (int r = 0; r < batches + 1; ++r) {
      std::shuffle(order.begin(), order.end(), shuffle_seed);
      for (const int way : order) {
        const double ns = in_way(way, [&] { return time_calls(a, b, calls); });
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

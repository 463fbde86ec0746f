// Cost of the dispatcher's hook layer per op, in ns, for tiny ops where it shows most.
// Run it from a normal build and from a -Dhooks=false build: the "no hook registered" row of the
// first minus that of the second is the cost of the fast path's check.
//
//   build/bench/bench_hook_overhead [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <layoutguard/layoutguard.h>

namespace {

// Median over `reps` runs of the mean ns per call of `iters` calls.
double ns_per_op(const std::function<void()>& op, int iters, int reps) {
  for (int i = 0; i < iters / 10; ++i) op();
  std::vector<double> ns;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) op();
    const auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / iters);
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const int iters = quick ? 20000 : 200000, reps = quick ? 5 : 11;
  lg::Tensor t = lg::zeros({2, 3});
  lg::Tensor one = lg::zeros({1});
  struct Case {
    const char* name;
    std::function<void()> op;
  };
  const std::vector<Case> cases{
      {"transpose (view, allocates a TensorImpl)", [&] { (void)t.transpose(0, 1); }},
      {"fill_ of one element (kernel call)", [&] { one.fill_(1.0); }},
  };
  std::printf("layoutguard %s hook overhead (hooks compiled in: %s; median of %d x %d calls)\n",
              LG_VERSION, LG_ENABLE_HOOKS ? "yes" : "no", reps, iters);
  std::printf("%-44s %14s %14s %14s\n", "op", "no hook ns", "no-op hook ns", "recording ns");
  for (const Case& c : cases) {
    const double none = ns_per_op(c.op, iters, reps);
    double noop = -1, recording = -1;
    if (LG_ENABLE_HOOKS) {
      {
        lg::hooks::ScopedHook hook([](const lg::hooks::OpCall&) {});
        noop = ns_per_op(c.op, iters, reps);
      }
      {
        std::vector<std::string> seen;
        seen.reserve(static_cast<size_t>(iters) * (reps + 1));
        lg::hooks::ScopedHook hook([&](const lg::hooks::OpCall& call) {
          if (seen.size() < seen.capacity()) seen.emplace_back(call.op);
        });
        recording = ns_per_op(c.op, iters, reps);
      }
    }
    std::printf("%-44s %14.1f %14.1f %14.1f\n", c.name, none, noop, recording);
  }
  return 0;
}

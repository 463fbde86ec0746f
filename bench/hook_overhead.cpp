// Cost of the dispatcher's hook layer and of the guard per op, in ns, for tiny ops where it
// shows most. Columns: guard off with nothing registered (the fast path), a no-op hook, and the
// guard in record, warn and throw mode on calls that keep their layout (no violation).
// Run it from a normal build and from a -Dhooks=false build (scripts/bench-hooks does both):
// the "off" column of the first minus that of the second is the fast path's cost.
//
//   build/bench/hook_overhead [--quick | --smoke] [--json PATH]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <layoutguard/layoutguard.h>

#include "report.h"

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

// Runs op under guard mode `mode` (nothing collected before), or -1 when hooks are compiled out.
double under_mode(lg::guard::Mode mode, const std::function<void()>& op, int iters, int reps) {
  if (!LG_ENABLE_HOOKS) return -1;
  lg::guard::clear_report();
  lg::guard::Scope scope(mode);
  const double ns = ns_per_op(op, iters, reps);
  lg::guard::clear_report();
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  const lg::bench::CommonArgs args = lg::bench::parse_common(argc, argv);
  lg::bench::Results results("hook_overhead", args);
  results.set("hooks_compiled_in", static_cast<bool>(LG_ENABLE_HOOKS));
  const int iters = args.smoke ? 1000 : args.quick ? 20000 : 200000, reps = args.smoke ? 3 : 11;
  // The guard's own settings come from here, not from the caller's environment; the warn
  // column must not print, and the exit summary would only add noise.
  lg::guard::Options quiet = lg::guard::parse_options("", "summary=0");
  lg::guard::set_options(quiet);

  const lg::Tensor t = lg::zeros({2, 3, 4, 5}).contiguous(lg::MemoryFormat::ChannelsLast);
  const lg::Tensor one = lg::zeros({1});
  const lg::CustomOp identity = lg::register_op("bench.identity", lg::LayoutPolicy::Preserve,
                                                [](const std::vector<lg::Tensor>& in) { return in; });
  const std::vector<lg::Tensor> identity_args{t};
  struct Case {
    const char* name;
    std::function<void()> op;
  };
  const std::vector<Case> cases{
      {"transpose (view: new TensorImpl)", [&] { (void)t.transpose(0, 1); }},
      {"fill_ of one element (kernel call)", [&] { one.fill_(1.0); }},
      {"custom op returning its input (4-D NHWC)", [&] { (void)identity(identity_args); }},
  };
  std::printf("layoutguard %s hook and guard overhead (hooks compiled in: %s; median of %d x %d calls)\n",
              LG_VERSION, LG_ENABLE_HOOKS ? "yes" : "no", reps, iters);
  std::printf("%-42s %9s %9s %9s %9s %9s\n", "op (ns per call)", "off", "no-op hook", "record", "warn",
              "throw");
  for (const Case& c : cases) {
    const double off = ns_per_op(c.op, iters, reps);
    double noop = -1;
    if (LG_ENABLE_HOOKS) {
      lg::hooks::ScopedHook hook([](const lg::hooks::OpCall&) {});
      noop = ns_per_op(c.op, iters, reps);
    }
    const double record = under_mode(lg::guard::Mode::Record, c.op, iters, reps);
    const double warn = under_mode(lg::guard::Mode::Warn, c.op, iters, reps);
    const double thrw = under_mode(lg::guard::Mode::Throw, c.op, iters, reps);
    std::printf("%-42s %9.1f %9.1f %9.1f %9.1f %9.1f\n", c.name, off, noop, record, warn, thrw);
    const auto ns = [](double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
    results.add({{"section", "hook_overhead"}, {"op", c.name}, {"hooks_compiled_in", static_cast<bool>(LG_ENABLE_HOOKS)},
                 {"calls_per_run", iters}, {"runs", reps}, {"off_ns", off}, {"noop_hook_ns", ns(noop)},
                 {"record_ns", ns(record)}, {"warn_ns", ns(warn)}, {"throw_ns", ns(thrw)}});
  }
  std::printf("(-1: not available with hooks compiled out)\n");
  return results.finish();
}

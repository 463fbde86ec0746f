// Bandwidth of layout conversions (NCHW <-> NHWC, dtype casts) against memcpy of the same
// bytes, measured in the same run. Prints a table of medians; no pass/fail.
//
//   build/bench/bench_layout_conversion [--quick | --smoke] [--json PATH] [--shape NxCxHxW]
// --shape: that NCHW shape only, instead of the list below.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <omp.h>

#include <layoutguard/layoutguard.h>

#include "report.h"

namespace {

using lg::bench::Timing;
using lg::bench::time_it;

void report(lg::bench::Results& results, const char* name, const std::string& shape, double bytes_moved, Timing t,
            double memcpy_ms) {
  const double gbs = bytes_moved / (t.median_ms * 1e-3) / 1e9;
  std::printf("%-34s %-16s %9.3f %9.3f %9.3f %8.2f %7.0f%%\n", name, shape.c_str(), t.median_ms,
              t.min_ms, t.max_ms, gbs, 100.0 * memcpy_ms / t.median_ms);
  nlohmann::json r = lg::bench::timing_json(t);
  r.update({{"section", "layout_conversion"}, {"case", name}, {"shape", shape}, {"bytes_moved", bytes_moved},
            {"gb_per_s", gbs}, {"pct_of_memcpy", 100.0 * memcpy_ms / t.median_ms}});
  results.add(std::move(r));
}

}  // namespace

int main(int argc, char** argv) {
  const lg::bench::CommonArgs args = lg::bench::parse_common(argc, argv);
  const bool quick = args.quick;
  lg::bench::Results results("bench_layout_conversion", args);
  const int runs = args.smoke ? 2 : quick ? 10 : 15;
  using lg::MemoryFormat;
  struct Shape { int64_t n, c, h, w; };
  std::vector<Shape> only;
  for (size_t i = 0; i < args.rest.size(); ++i) {
    Shape s{};
    long n = 0, c = 0, h = 0, w = 0;
    const bool ok = args.rest[i] == "--shape" && i + 1 < args.rest.size() &&
                    std::sscanf(std::string(args.rest[i + 1]).c_str(), "%ldx%ldx%ldx%ld", &n, &c, &h, &w) == 4 &&
                    n > 0 && c > 0 && h > 0 && w > 0;
    if (!ok) {
      std::fprintf(stderr, "usage: bench_layout_conversion [--quick|--smoke] [--json PATH] [--shape NxCxHxW]\n");
      return 2;
    }
    s = {n, c, h, w};
    only.push_back(s);
    ++i;
  }
  const std::vector<Shape> shapes = !only.empty() ? only
                                    : args.smoke ? std::vector<Shape>{{1, 64, 56, 56}}
                                    : quick    ? std::vector<Shape>{{8, 64, 56, 56}}
                                          : std::vector<Shape>{{32, 64, 56, 56}, {32, 256, 56, 56},
                                                               {32, 512, 28, 28}, {32, 2048, 7, 7},
                                                               {32, 3, 224, 224}};
  std::printf("layoutguard %s layout-conversion benchmark (%d runs, median; %d OpenMP threads;\n"
              "%% = time of the faster memcpy peer / our time)\n",
              LG_VERSION, runs, omp_get_max_threads());
  std::printf("%-34s %-16s %9s %9s %9s %8s %8s\n", "case", "NCHW shape", "median ms", "min ms",
              "max ms", "GB/s", "%memcpy");
  for (const Shape& s : shapes) {
    const std::string shape = std::to_string(s.n) + "x" + std::to_string(s.c) + "x" +
                              std::to_string(s.h) + "x" + std::to_string(s.w);
    lg::Tensor nchw = lg::rand({s.n, s.c, s.h, s.w});
    lg::Tensor nhwc = nchw.contiguous(MemoryFormat::ChannelsLast);
    lg::Tensor dst_cl = lg::empty_like(nhwc);
    lg::Tensor dst_cf = lg::empty_like(nchw);
    const size_t bytes = nchw.nbytes();
    std::vector<char> a(bytes), b(bytes);
    std::memset(a.data(), 1, bytes);
    const Timing mc1 = time_it([&] { std::memcpy(b.data(), a.data(), bytes); }, runs);
    // The fair ceiling for our threaded copies: memcpy split over the same OpenMP threads.
    const Timing mcn = time_it([&] {
#pragma omp parallel
      {
        const size_t t = static_cast<size_t>(omp_get_thread_num()), n = static_cast<size_t>(omp_get_num_threads());
        const size_t begin = bytes * t / n, end = bytes * (t + 1) / n;
        std::memcpy(b.data() + begin, a.data() + begin, end - begin);
      }
    }, runs);
    const Timing mc = mcn.median_ms < mc1.median_ms ? mcn : mc1;
    // Bytes moved = read + write.
    report(results, "memcpy, 1 thread (peer)", shape, 2.0 * bytes, mc1, mc.median_ms);
    report(results, "memcpy, OpenMP threads (peer)", shape, 2.0 * bytes, mcn, mc.median_ms);
    report(results, "copy_ NCHW -> NCHW", shape, 2.0 * bytes, time_it([&] { dst_cf.copy_(nchw); }, runs), mc.median_ms);
    report(results, "copy_ NCHW -> NHWC", shape, 2.0 * bytes, time_it([&] { dst_cl.copy_(nchw); }, runs), mc.median_ms);
    report(results, "copy_ NHWC -> NCHW", shape, 2.0 * bytes, time_it([&] { dst_cf.copy_(nhwc); }, runs), mc.median_ms);
    report(results, "contiguous(ChannelsLast) (+alloc)", shape, 2.0 * bytes,
           time_it([&] { (void)nchw.contiguous(MemoryFormat::ChannelsLast); }, runs), mc.median_ms);
    // Casts: 4 bytes read and 2 written per element (or the reverse).
    lg::Tensor half_cl = lg::empty_like(nhwc, lg::kFloat16), half_cf = lg::empty_like(nchw, lg::kFloat16);
    lg::Tensor bf16_cl = lg::empty_like(nhwc, lg::kBFloat16);
    report(results, "copy_ f32 NCHW -> f16 NCHW", shape, 1.5 * bytes,
           time_it([&] { half_cf.copy_(nchw); }, runs), mc.median_ms);
    report(results, "copy_ f32 NCHW -> f16 NHWC", shape, 1.5 * bytes,
           time_it([&] { half_cl.copy_(nchw); }, runs), mc.median_ms);
    report(results, "copy_ f16 NHWC -> f32 NCHW", shape, 1.5 * bytes,
           time_it([&] { dst_cf.copy_(half_cl); }, runs), mc.median_ms);
    report(results, "copy_ f32 NHWC -> bf16 NHWC", shape, 1.5 * bytes,
           time_it([&] { bf16_cl.copy_(nhwc); }, runs), mc.median_ms);
    report(results, "copy_ bf16 NHWC -> f32 NCHW", shape, 1.5 * bytes,
           time_it([&] { dst_cf.copy_(bf16_cl); }, runs), mc.median_ms);
  }
  return results.finish();
}

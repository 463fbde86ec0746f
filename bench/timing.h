// How every benchmark program times a call: one warm-up, then the median (with min and max) of
// at least `runs` timed calls, continuing up to `budget_ms` of total time (and 200 calls) so
// fast calls get enough samples for a stable median. Calls compared with each other (ours
// against a peer, NHWC against NCHW) are timed interleaved, round by round, so a slow spell of a
// shared machine lands on all of them alike instead of on whichever ran during it.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace lg::bench {

struct Timing {
  double median_ms, min_ms, max_ms;
  int runs;  // timed calls behind the median
};

// One Timing per function: each warmed up once, then timed once per round; rounds continue
// until `runs`, then while the total stays under budget_ms (at most 200).
inline std::vector<Timing> time_interleaved(const std::vector<std::function<void()>>& fns, int runs,
                                            double budget_ms = 0) {
  for (const auto& fn : fns) fn();
  std::vector<std::vector<double>> ms(fns.size());
  double total = 0;
  for (int round = 0; round < runs || (total < budget_ms && round < 200); ++round) {
    for (size_t i = 0; i < fns.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      fns[i]();
      const auto t1 = std::chrono::steady_clock::now();
      ms[i].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      total += ms[i].back();
    }
  }
  std::vector<Timing> out;
  for (std::vector<double>& m : ms) {
    std::sort(m.begin(), m.end());
    out.push_back({m[m.size() / 2], m.front(), m.back(), static_cast<int>(m.size())});
  }
  return out;
}

inline Timing time_it(const std::function<void()>& fn, int runs, double budget_ms = 0) {
  return time_interleaved({fn}, runs, budget_ms).front();
}

}  // namespace lg::bench

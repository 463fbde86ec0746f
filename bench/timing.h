// How every benchmark program times a call: one warm-up, then the median (with min and max) of
// at least `runs` timed calls, continuing up to `budget_ms` of total time (and 200 calls) so
// fast calls get enough samples for a stable median.
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

inline Timing time_it(const std::function<void()>& fn, int runs, double budget_ms = 0) {
  fn();
  std::vector<double> ms;
  double total = 0;
  while (static_cast<int>(ms.size()) < runs || (total < budget_ms && ms.size() < 200)) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    total += ms.back();
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back(), static_cast<int>(ms.size())};
}

}  // namespace lg::bench

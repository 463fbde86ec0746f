// parallel_for: the one way CPU kernels outside the elementwise loop split work across OpenMP
// threads. Work below `grain` items per thread stays on the calling thread, so small tensors
// pay no thread wake-up.
#pragma once

#include <algorithm>
#include <cstdint>

#include <omp.h>

namespace lg::cpu {

// Calls fn(begin, end) on disjoint sub-ranges covering [0, n), in parallel when n >= 2 * grain.
template <typename Fn>
void parallel_for(int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  const int64_t max_threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int64_t threads = std::min<int64_t>(max_threads, std::max<int64_t>(1, n / std::max<int64_t>(grain, 1)));
  if (threads <= 1) {
    fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t begin = n * t / nt, end = n * (t + 1) / nt;
    if (begin < end) fn(begin, end);
  }
}

// Whether a parallel_for of n items with this grain would use more than one thread; kernels
// that call BLAS use it to choose between threading their own loop (BLAS single-threaded
// inside) and one BLAS call that threads itself -- never both, so threads never multiply.
inline bool would_parallelise(int64_t n, int64_t grain) {
  return !omp_in_parallel() && omp_get_max_threads() > 1 && n >= 2 * std::max<int64_t>(grain, 1);
}

}  // namespace lg::cpu

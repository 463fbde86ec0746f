// The CUDA execution model on host threads, for running the kernels' own source on a machine
// without a GPU (tests/cuda_emulation: the development VM and CI have none). Included by
// device_types.cuh when LG_CUDA_EMULATION is defined and the .cu file is compiled as C++:
// a launch runs its blocks one after another on blockDim host threads (kept between launches);
// __syncthreads is a barrier of the block's threads, and __shared__ arrays are function
// statics, so the threads of a block share them. Only what the emulated kernels use is here
// (double atomicAdd, no warp intrinsics). This checks indexing and synchronisation logic, not
// speed, memory-model subtleties or device math.
#pragma once

#if defined(__CUDACC__)
#error "emulation.h is for host compilation of .cu files only"
#endif

#include <atomic>
#include <barrier>
#include <bit>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <driver_types.h>  // cudaError_t (host-usable)
#include <vector_types.h>  // dim3, uint3 (host-usable)

// The CUDA headers define these as attributes a host compiler ignores; here they must be plain
// functions, and __shared__ storage must be one object per block, not per thread.
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __forceinline__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline
#define __launch_bounds__(...)

namespace lg::cuda::kernels {
// The device math library's float and double overloads and bit casts, as the host's.
using std::erf, std::exp, std::expm1, std::isinf, std::log, std::pow, std::sqrt, std::tanh;
inline float __int_as_float(int bits) { return std::bit_cast<float>(bits); }
inline double __longlong_as_double(long long bits) { return std::bit_cast<double>(bits); }
}  // namespace lg::cuda::kernels

namespace lg::cuda::kernels::emulation {

inline thread_local uint3 thread_index{0, 0, 0};
inline thread_local uint3 block_index{0, 0, 0};
inline dim3 block_dim, grid_dim;
inline std::barrier<>* block_barrier = nullptr;

// Host threads kept for the whole process: a launch wakes the first `threads` of them and
// waits until each has run its share. Starting blockDim threads per block instead made the
// kernel tests spend minutes in the kernel (thread creation), not in the kernels.
class Workers {
 public:
  ~Workers() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  // job(t) on worker t for t < count, concurrently; returns when all have returned.
  void run(unsigned count, const std::function<void(unsigned)>& job) {
    std::unique_lock lock(mutex_);
    while (threads_.size() < count) {
      const unsigned t = static_cast<unsigned>(threads_.size());
      threads_.emplace_back([this, t] { serve(t); });
    }
    job_ = &job;
    active_ = count;
    remaining_ = count;
    ++generation_;
    wake_.notify_all();
    done_.wait(lock, [&] { return remaining_ == 0; });
    job_ = nullptr;
  }

 private:
  void serve(unsigned t) {
    uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (stop_) return;
      if (t >= active_) continue;
      const std::function<void(unsigned)>* job = job_;
      lock.unlock();
      (*job)(t);
      lock.lock();
      if (--remaining_ == 0) done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(unsigned)>* job_ = nullptr;
  uint64_t generation_ = 0;
  unsigned active_ = 0, remaining_ = 0;
  bool stop_ = false;
};

inline Workers& workers() {
  static Workers pool;
  return pool;
}

// What cudaGetLastError() returns after the last launch: a launch shape the device would refuse
// is refused here too, so a CPU test sees the error a GPU run would.
inline cudaError_t last_error = cudaSuccess;
inline cudaError_t take_last_error() { return std::exchange(last_error, cudaSuccess); }

// The device's limits on a launch's shape (every CUDA GPU since compute capability 3.0).
inline bool launchable(dim3 grid, dim3 block) {
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  return grid.x >= 1 && grid.x <= 0x7fffffffu && grid.y >= 1 && grid.y <= 65535 && grid.z >= 1 && grid.z <= 65535 &&
         block.x >= 1 && block.x <= 1024 && block.y >= 1 && block.y <= 1024 && block.z >= 1 && block.z <= 64 &&
         threads <= 1024;
}

// Runs `kernel` over the grid: block after block, each on block.x * block.y * block.z
// threads; a block starts when every thread of the previous one has finished.
inline void run(dim3 grid, dim3 block, const std::function<void()>& kernel) {
  if (!launchable(grid, block)) {
    last_error = cudaErrorInvalidConfiguration;
    return;
  }
  grid_dim = grid;
  block_dim = block;
  const unsigned threads = block.x * block.y * block.z;
  std::barrier<> barrier(threads);
  block_barrier = &barrier;
  workers().run(threads, [&](unsigned t) {
    thread_index = uint3{t % block.x, t / block.x % block.y, t / (block.x * block.y)};
    for (unsigned bz = 0; bz < grid.z; ++bz)
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
          block_index = uint3{bx, by, bz};
          kernel();
          barrier.arrive_and_wait();
        }
  });
  block_barrier = nullptr;
}

}  // namespace lg::cuda::kernels::emulation

#define threadIdx (::lg::cuda::kernels::emulation::thread_index)
#define blockIdx (::lg::cuda::kernels::emulation::block_index)
#define blockDim (::lg::cuda::kernels::emulation::block_dim)
#define gridDim (::lg::cuda::kernels::emulation::grid_dim)
// The float atomics the norm kernels use, on host memory.
inline double atomicAdd(double* address, double value) { return std::atomic_ref<double>(*address).fetch_add(value); }

// The launchers return cudaGetLastError(): here the emulated launch's own (the emulation links
// no CUDA runtime).
#define cudaGetLastError() (::lg::cuda::kernels::emulation::take_last_error())
inline void __syncthreads() { ::lg::cuda::kernels::emulation::block_barrier->arrive_and_wait(); }

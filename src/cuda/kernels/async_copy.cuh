// 16-byte copies from global to shared memory that hold no register while in flight (sm_80's
// cp.async). A thread of a staged transpose can issue every load of its share before any
// arrives: written as plain loads and shared stores, ptxas orders each load right before its
// store (LDG, STS, LDG, STS in the SASS of short_planes_2byte.cuh, even with the
// loads written first), so each thread had one load in flight and waited out a memory latency
// per 16 bytes. Under LG_CUDA_EMULATION the copy is immediate and the wait does nothing.
#pragma once

#include <cstring>

#include "cuda/kernels/device_types.cuh"

namespace lg::cuda::kernels {

// Starts copying 16 bytes (both addresses 16-byte aligned) from global `src` to shared `dst`;
// the bytes are there after wait_async_copies() in the same thread (other threads: after a
// barrier that follows it).
__device__ inline void copy_16_async(void* dst, const void* src) {
#if defined(LG_CUDA_EMULATION)
  std::memcpy(dst, src, 16);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  *static_cast<uint4*>(dst) = *static_cast<const uint4*>(src);  // no cp.async before sm_80
#else
  const auto shared_dst = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const auto global_src = static_cast<unsigned long long>(__cvta_generic_to_global(src));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_dst), "l"(global_src) : "memory");
#endif
}

// Waits for every copy_16_async this thread started.
__device__ inline void wait_async_copies() {
#if !defined(LG_CUDA_EMULATION) && !(defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800)
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

}  // namespace lg::cuda::kernels

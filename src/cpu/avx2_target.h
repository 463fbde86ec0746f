// Where the AVX2 kernels (panel_gemm.cpp, conv_nhwc_grouped.cpp, cast_row.cpp, copy.cpp) and
// the AVX-512 ones (panel_gemm_avx512.cpp; conv_nhwc_depthwise.cpp has both forms) compile, and
// the one place that asks the CPU what it has. The build targets baseline x86-64, so those
// functions carry a per-function target attribute instead of -mavx2, and run only after cpu_has_avx2() (and, where they need them,
// cpu_has_fma(), cpu_has_f16c() or cpu_has_avx512()).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#define LG_CPU_AVX2_KERNELS 1
#include <cpuid.h>
#include <immintrin.h>
#define LG_AVX2_FMA __attribute__((target("avx2,fma")))
#define LG_AVX2_F16C __attribute__((target("avx2,f16c")))
#define LG_AVX2 __attribute__((target("avx2")))
// AVX-512 kernels may inline the AVX2+FMA helpers (GCC inlines only into a superset target,
// and avx512f does not imply fma), so the attribute names both.
#define LG_AVX512 __attribute__((target("avx2,fma,avx512f,avx512vl")))
#else
#define LG_CPU_AVX2_KERNELS 0
#endif

// For a kernel whose hot loops measured 5-20 % faster or slower depending on where unrelated
// code in the same file happened to land: the function starts on a 64-byte boundary and its
// loops on 32-byte ones, so its speed depends on its own code only (pooling.cpp, upsample.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#define LG_PLACEMENT_STABLE gnu::noinline, gnu::aligned(64), gnu::optimize("align-loops=32")
#else
#define LG_PLACEMENT_STABLE gnu::noinline
#endif

namespace lg::cpu {

// Run-time CPU checks, each answered once per process; false where the kernels do not compile.
#if LG_CPU_AVX2_KERNELS
inline bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
inline bool cpu_has_fma() {
  static const bool has = __builtin_cpu_supports("fma");
  return has;
}
// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c",
// and the fuzz build compiles the library with clang.
inline bool cpu_has_f16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  }();
  return has;
}
// AVX-512 foundation and vector-length extensions, with the OS saving the zmm state (the
// compiler's check reads XCR0, so a kernel or hypervisor that disables it answers false).
inline bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  return has;
}
#endif

// Whether the kernels that have an AVX-512 form run it: cpu_has_avx512() unless
// set_avx512_enabled(false) has turned it off for the process, so that the tests and
// bench/cpu_ops --avx2 run the AVX2 forms on a CPU that has both (avx2_target.cpp).
// Internal: not part of the installed API.
bool use_avx512();
void set_avx512_enabled(bool enabled);

#if !LG_CPU_AVX2_KERNELS
inline bool cpu_has_avx2() { return false; }
inline bool cpu_has_fma() { return false; }
inline bool cpu_has_f16c() { return false; }
inline bool cpu_has_avx512() { return false; }
#endif

}  // namespace lg::cpu

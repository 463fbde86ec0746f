// Where the AVX2 kernels (panel_gemm.cpp, conv_nhwc_grouped.cpp, cast_row.cpp, copy.cpp)
// compile. The build targets baseline x86-64, so those functions carry a per-function target
// attribute instead of -mavx2, and run only after a run-time check of the CPU
// (panel_gemm_supported(), vector_casts_supported(), copy.cpp's avx2_supported()).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#define LG_CPU_AVX2_KERNELS 1
#include <immintrin.h>
#define LG_AVX2_FMA __attribute__((target("avx2,fma")))
#define LG_AVX2_F16C __attribute__((target("avx2,f16c")))
#define LG_AVX2 __attribute__((target("avx2")))
#else
#define LG_CPU_AVX2_KERNELS 0
#endif

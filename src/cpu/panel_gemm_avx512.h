// The panel GEMM's AVX-512 kernel (cpu/panel_gemm.h has the contract). panel_gemm() picks it
// when cpu_has_avx512(); tests call it directly to cover it next to the AVX2 kernel.
#pragma once

#include <cstdint>

namespace lg::cpu {

// C = A * B, or C += A * B when `accumulate`, on the calling thread, over pack_panels' B.
// Requires cpu_has_avx512() and k > 0.
void panel_gemm_avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels,
                       bool accumulate, float* c, int64_t ldc);

}  // namespace lg::cpu

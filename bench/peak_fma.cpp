// The machine's measured float32 peak: every OpenMP thread runs independent chains of fused
// multiply-adds on registers, on the widest vectors our kernels use there (AVX-512 when the CPU
// has avx512f and avx512vl, else AVX2+FMA, else SSE multiply-add pairs), so no memory is
// touched. GFLOPS = 2 per FMA lane. The other benchmarks report "% of peak"
// against this figure, measured on the same machine in the same benchmark run.
//
//   build/bench/peak_fma [--quick | --smoke] [--json PATH]
#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>

#include "report.h"

namespace {

constexpr int kChains = 10;  // independent accumulators: enough to cover the FMA latency

// FLOPs done by `iters` rounds of kChains 8-lane FMAs; the result is kept so the loop stays.
__attribute__((target("avx2,fma"))) double fma_avx2(int64_t iters, float* sink) {
  __m256 acc[kChains];
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  for (int64_t i = 0; i < iters; ++i)
#pragma GCC unroll 10
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  _mm256_storeu_ps(sink, sum);
  return 2.0 * 8 * kChains * static_cast<double>(iters);
}

// The same on 16-lane zmm registers (the panel GEMM's AVX-512 kernel).
__attribute__((target("avx512f"))) double fma_avx512(int64_t iters, float* sink) {
  __m512 acc[kChains];
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  for (int64_t i = 0; i < iters; ++i)
#pragma GCC unroll 10
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  _mm512_storeu_ps(sink, sum);
  return 2.0 * 16 * kChains * static_cast<double>(iters);
}

// Baseline x86-64: a multiply and an add per lane, 4 lanes.
double mul_add_sse(int64_t iters, float* sink) {
  __m128 acc[kChains];
  const __m128 a = _mm_set1_ps(0.999999f), b = _mm_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm_set1_ps(static_cast<float>(c));
  for (int64_t i = 0; i < iters; ++i)
#pragma GCC unroll 10
    for (int c = 0; c < kChains; ++c) acc[c] = _mm_add_ps(_mm_mul_ps(acc[c], a), b);
  __m128 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm_add_ps(sum, acc[c]);
  _mm_storeu_ps(sink, sum);
  return 2.0 * 4 * kChains * static_cast<double>(iters);
}

}  // namespace

int main(int argc, char** argv) {
  const lg::bench::CommonArgs args = lg::bench::parse_common(argc, argv);
  if (!args.rest.empty()) {
    std::fprintf(stderr, "usage: peak_fma [--quick|--smoke] [--json PATH]\n");
    return 2;
  }
  lg::bench::Results results("peak_fma", args);
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  const char* isa = avx512 ? "avx512_fma" : avx2 ? "avx2_fma" : "sse";
  const int64_t iters = args.smoke ? 100000 : args.quick ? 20000000 : 100000000;
  const int runs = args.smoke ? 1 : 10;
  for (const int threads : {1, omp_get_max_threads()}) {
    double flops = 0;
    const lg::bench::Timing t = lg::bench::time_it(
        [&] {
          double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
          {
            float sink[16];
            total += avx512 ? fma_avx512(iters, sink) : avx2 ? fma_avx2(iters, sink) : mul_add_sse(iters, sink);
            if (sink[0] == 12345.0f) std::printf(" ");  // keeps the result alive
          }
          flops = total;
        },
        runs);
    const double gflops = flops / (t.median_ms * 1e-3) / 1e9;
    std::printf("float32 peak, %d thread%s (%s): %.1f GFLOPS (median of %d runs)\n", threads, threads == 1 ? "" : "s",
                isa, gflops, t.runs);
    nlohmann::json r = lg::bench::timing_json(t);
    r.update({{"section", "peak"}, {"threads", threads}, {"isa", isa}, {"gflops", gflops}});
    results.add(std::move(r));
  }
  return results.finish();
}

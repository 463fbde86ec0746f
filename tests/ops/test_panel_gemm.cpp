// The panel GEMM behind float32 NHWC convolutions (src/cpu/panel_gemm.h) against a plain float64
// triple loop, on the shapes where blocking goes wrong: row counts around the 6-row tile and the
// 72-row block, column counts around the 16-column panel (masked stores) and the AVX-512 kernel's
// 4-panel strip, k around the 384 and 512 blocks (accumulation across k blocks) and k = 0,
// leading dimensions wider than the matrices, accumulate on and off, A packed (n > 64 on AVX2;
// rows 4 KiB apart on both) and read in place, and both ways panel_gemm_parallel
// splits the work. Columns of C past n and rows of the padding must stay untouched. Serial
// products run on every kernel this CPU has (AVX2's 6 x 16 tile, AVX-512's 6 x 64).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "cpu/panel_gemm.h"

namespace {

struct Case {
  int64_t m, n, k;
  int64_t lda = 0;  // 0: k + 3
};

std::vector<float> noise(size_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(gen);
  return v;
}

// The kernels this CPU runs, narrowest first; says which it cannot run, so a log shows what
// went untested.
std::vector<lg::cpu::PanelKernel> supported_kernels() {
  std::vector<lg::cpu::PanelKernel> kernels;
  for (auto kernel : {lg::cpu::PanelKernel::kAvx2, lg::cpu::PanelKernel::kAvx512})
    if (lg::cpu::panel_kernel_supported(kernel)) kernels.push_back(kernel);
  if (!lg::cpu::panel_kernel_supported(lg::cpu::PanelKernel::kAvx512))
    MESSAGE("the AVX-512 panel kernel is not tested: this CPU lacks avx512f or avx512vl");
  return kernels;
}

// Runs one product (panel_gemm_parallel, or `kernel` on this thread) and checks every element
// of C, and that the guard columns past n and two guard rows past m are untouched.
void check_case(const Case& s, bool accumulate, bool parallel, uint32_t seed,
                lg::cpu::PanelKernel kernel = lg::cpu::PanelKernel::kAvx2) {
  CAPTURE(s.m);
  CAPTURE(s.n);
  CAPTURE(s.k);
  CAPTURE(accumulate);
  CAPTURE(parallel);
  CAPTURE(static_cast<int>(kernel));
  const int64_t lda = s.lda > 0 ? s.lda : s.k + 3, ldb = s.n + 5, ldc = s.n + 7;  // wider than the matrices
  CAPTURE(lda);
  const std::vector<float> a = noise(static_cast<size_t>(s.m * lda), seed);
  const std::vector<float> b = noise(static_cast<size_t>(s.k * ldb), seed + 1);
  const std::vector<float> c0 = noise(static_cast<size_t>((s.m + 2) * ldc), seed + 2);
  std::vector<float> panels(static_cast<size_t>(lg::cpu::panel_buffer_size(s.k, s.n)), NAN);
  lg::cpu::pack_panels(b.data(), ldb, s.k, s.n, panels.data());
  int64_t unwritten = 0;  // every slot is written, padding included
  for (float v : panels) unwritten += std::isnan(v) ? 1 : 0;
  REQUIRE(unwritten == 0);

  std::vector<float> c = c0;
  if (parallel) lg::cpu::panel_gemm_parallel(s.m, s.n, s.k, a.data(), lda, panels.data(), accumulate, c.data(), ldc);
  else lg::cpu::panel_gemm_on(kernel, s.m, s.n, s.k, a.data(), lda, panels.data(), accumulate, c.data(), ldc);

  int64_t bad = 0;
  for (int64_t i = s.m * ldc; i < (s.m + 2) * ldc; ++i) bad += c[i] != c0[i] ? 1 : 0;  // rows past C
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= s.n) {  // outside C: untouched
        if (got != c0[i * ldc + j]) ++bad;
        continue;
      }
      double want = accumulate ? c0[i * ldc + j] : 0.0, scale = std::fabs(want);
      for (int64_t p = 0; p < s.k; ++p) {
        want += static_cast<double>(a[i * lda + p]) * b[p * ldb + j];
        scale += std::fabs(static_cast<double>(a[i * lda + p]) * b[p * ldb + j]);
      }
      if (std::fabs(got - want) > 1e-6 * scale + 1e-6) ++bad;
    }
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_SUITE("ops") {
TEST_CASE("panel GEMM matches a float64 product on tile, panel and block edges") {
  if (!lg::cpu::panel_gemm_supported()) {
    MESSAGE("skipped: this CPU lacks AVX2 or FMA, so convolutions use OpenBLAS and the panel GEMM never runs");
    return;
  }
  const std::vector<Case> cases{
      {1, 1, 1},    {5, 15, 7},   {6, 16, 256}, {7, 17, 257},  {13, 33, 64},   {143, 16, 1},
      {145, 40, 300}, {300, 64, 600}, {2, 3, 0},  {1, 2048, 9},  {61, 8, 513},  {288, 31, 130},
      {71, 16, 511},  {73, 20, 1030}, {145, 100, 300}, {13, 65, 1030},  // n > 64: A packed
      {12, 32, 384},  {11, 31, 385},  {25, 48, 383},  {84, 47, 769},  // AVX-512: k blocks of 384
      {12, 64, 768},  {30, 90, 400},  {19, 96, 50},   // AVX-512: two whole k blocks; a 2-panel strip after a full one
      {13, 50, 1021}, {75, 130, 2045},  // lda = 1024, 2048 floats: rows share L1 sets, so A is packed
      {13, 50, 5, 1024}, {7, 40, 389, 1024}, {73, 90, 400, 2048},  // packed: k < 8, a 3-panel strip, 2 after 4
  };
  const std::vector<lg::cpu::PanelKernel> kernels = supported_kernels();
  uint32_t seed = 1;
  for (const Case& s : cases)
    for (bool accumulate : {false, true}) {
      check_case(s, accumulate, true, seed += 3);
      for (auto kernel : kernels) check_case(s, accumulate, false, seed += 3, kernel);
    }
}

TEST_CASE("panel GEMM with C streamed (non-temporal stores) writes exactly what the cached form writes") {
  if (!lg::cpu::panel_gemm_supported()) {
    MESSAGE("skipped: this CPU lacks AVX2 or FMA, so convolutions use OpenBLAS and the panel GEMM never runs");
    return;
  }
  // C 64-byte aligned with rows a multiple of 16 floats apart, so whole vectors do stream; n = 70
  // adds a masked last panel; ldc = 72 and 84 (288 and 336 bytes) leave rows that are not
  // 64-byte aligned (those store cached); k = 700 has two k blocks (streaming off); accumulate
  // ignores it.
  struct StreamCase {
    int64_t m, n, k, ldc;
  };
  for (const StreamCase& s : {StreamCase{50, 64, 16, 64}, StreamCase{37, 96, 24, 96}, StreamCase{13, 70, 33, 80},
                              StreamCase{20, 48, 700, 48}, StreamCase{400, 96, 16, 96}, StreamCase{25, 64, 20, 72},
                              StreamCase{31, 70, 40, 84}})
    for (bool accumulate : {false, true}) {
      CAPTURE(s.m);
      CAPTURE(s.n);
      CAPTURE(accumulate);
      const std::vector<float> a = noise(static_cast<size_t>(s.m * s.k), 401), b = noise(static_cast<size_t>(s.k * s.n), 402);
      std::vector<float> panels(static_cast<size_t>(lg::cpu::panel_buffer_size(s.k, s.n)));
      lg::cpu::pack_panels(b.data(), s.n, s.k, s.n, panels.data());
      const size_t bytes = static_cast<size_t>(s.m * s.ldc) * sizeof(float);
      float* cached = static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
      float* streamed = static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
      const std::vector<float> c0 = noise(static_cast<size_t>(s.m * s.ldc), 403);
      const auto run = [&](float* c, lg::cpu::CStore store, auto&& gemm) {
        std::copy(c0.begin(), c0.end(), c);
        gemm(c, store);
      };
      for (auto kernel : supported_kernels()) {
        CAPTURE(static_cast<int>(kernel));
        const auto on = [&](float* c, lg::cpu::CStore store) {
          lg::cpu::panel_gemm_on(kernel, s.m, s.n, s.k, a.data(), s.k, panels.data(), accumulate, c, s.ldc, store);
        };
        run(cached, lg::cpu::CStore::kCached, on);
        run(streamed, lg::cpu::CStore::kStreamed, on);
        CHECK(std::equal(cached, cached + s.m * s.ldc, streamed));
      }
      const auto parallel = [&](float* c, lg::cpu::CStore store) {
        lg::cpu::panel_gemm_parallel(s.m, s.n, s.k, a.data(), s.k, panels.data(), accumulate, c, s.ldc, store);
      };
      run(cached, lg::cpu::CStore::kCached, parallel);
      run(streamed, lg::cpu::CStore::kStreamed, parallel);
      CHECK(std::equal(cached, cached + s.m * s.ldc, streamed));
      // The indirect GEMM over the same A: rows as one run each (one k block, so streamed when
      // k <= 384), and as k runs of one float (several blocks past 384: cached).
      std::vector<const float*> one_run(static_cast<size_t>(s.m)), per_float(static_cast<size_t>(s.m * s.k));
      for (int64_t i = 0; i < s.m; ++i) {
        one_run[static_cast<size_t>(i)] = a.data() + i * s.k;
        for (int64_t p = 0; p < s.k; ++p) per_float[static_cast<size_t>(i * s.k + p)] = a.data() + i * s.k + p;
      }
      for (auto kernel : supported_kernels())
        for (bool split : {false, true}) {
          CAPTURE(split);
          const auto indirect = [&](float* c, lg::cpu::CStore store) {
            lg::cpu::panel_gemm_indirect_on(kernel, s.m, s.n, split ? s.k : 1, split ? per_float.data() : one_run.data(),
                                            split ? 1 : s.k, panels.data(), accumulate, c, s.ldc, store);
          };
          run(cached, lg::cpu::CStore::kCached, indirect);
          run(streamed, lg::cpu::CStore::kStreamed, indirect);
          CHECK(std::equal(cached, cached + s.m * s.ldc, streamed));
        }
      std::free(cached);
      std::free(streamed);
    }
}

TEST_CASE("panel GEMM splits rows or panels over threads and each split is exact") {
  if (!lg::cpu::panel_gemm_supported()) {
    MESSAGE("skipped: this CPU lacks AVX2 or FMA, so convolutions use OpenBLAS and the panel GEMM never runs");
    return;
  }
  // Tall: rows split (each thread > 192 rows). Short and wide: panels split, with a partial last
  // panel. Both against the same float64 product.
  check_case({1000, 24, 70}, false, true, 101);
  check_case({49, 520, 300}, true, true, 102);
  check_case({49, 520, 300}, false, true, 103);
}

// Row i of A is runs of run_len floats through an indirection table (the in-place NHWC
// convolution): pointers into one buffer, overlapping as neighbouring pixels' windows do, with
// null runs (zeros) for whole tiles and for single rows inside a tile.
struct IndirectCase {
  int64_t m, n, runs, run_len;
};

void check_indirect(const IndirectCase& s, lg::cpu::PanelKernel kernel, bool accumulate, uint32_t seed) {
  const int64_t k = s.runs * s.run_len, ldc = s.n + 3;
  const std::vector<float> x = noise(static_cast<size_t>(4 * k + 64), seed);
  const std::vector<float> b = noise(static_cast<size_t>(k * s.n), seed + 1);
  const std::vector<float> c0 = noise(static_cast<size_t>((s.m + 2) * ldc), seed + 2);
  std::mt19937 gen(seed + 3);
  std::vector<const float*> table(static_cast<size_t>(s.m * s.runs));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t r = 0; r < s.runs; ++r) {
      const bool null_for_tile = r == 1 && i < 6;           // run 1 of the first tile: skipped
      const bool null_for_row = (i * 7 + r * 3) % 11 == 0;  // scattered rows: read as zeros
      table[static_cast<size_t>(i * s.runs + r)] =
          null_for_tile || null_for_row ? nullptr : x.data() + gen() % static_cast<uint32_t>(3 * k + 64);
    }
  std::vector<float> panels(static_cast<size_t>(lg::cpu::panel_buffer_size(k, s.n)));
  lg::cpu::pack_panels(b.data(), s.n, k, s.n, panels.data());
  std::vector<float> c = c0;
  lg::cpu::panel_gemm_indirect_on(kernel, s.m, s.n, s.runs, table.data(), s.run_len, panels.data(), accumulate,
                                  c.data(), ldc);
  int64_t bad = 0;
  for (int64_t i = s.m * ldc; i < (s.m + 2) * ldc; ++i) bad += c[i] != c0[i] ? 1 : 0;  // rows past C
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      if (j >= s.n) {
        bad += c[i * ldc + j] != c0[i * ldc + j] ? 1 : 0;
        continue;
      }
      double want = accumulate ? c0[i * ldc + j] : 0.0, scale = std::fabs(want);
      for (int64_t r = 0; r < s.runs; ++r) {
        const float* run = table[static_cast<size_t>(i * s.runs + r)];
        for (int64_t p = 0; p < s.run_len && run; ++p) {
          const double term = static_cast<double>(run[p]) * b[(r * s.run_len + p) * s.n + j];
          want += term;
          scale += std::fabs(term);
        }
      }
      bad += std::fabs(c[i * ldc + j] - want) > 1e-6 * scale + 1e-6 ? 1 : 0;
    }
  CHECK(bad == 0);
}

TEST_CASE("panel GEMM through an indirection table (the in-place NHWC convolution) matches a float64 product") {
  if (!lg::cpu::panel_gemm_supported()) {
    MESSAGE("skipped: this CPU lacks AVX2 or FMA, so convolutions use OpenBLAS and the panel GEMM never runs");
    return;
  }
  const std::vector<IndirectCase> cases{
      {13, 70, 3, 7},    // two full tiles and one row; a 4-panel strip and a 1-panel one of 6 columns
      {80, 40, 9, 64},   // 9 taps of 64 channels: run blocks of 6 (AVX-512) or 8 (AVX2) and the rest; two row blocks
      {150, 130, 5, 200},  // runs longer than half a k block: one run per block (AVX-512), two (AVX2)
      {7, 16, 1, 600},   // one run longer than a k block
      {1, 5, 2, 3},
  };
  uint32_t seed = 300;
  for (auto kernel : supported_kernels())
    for (const IndirectCase& s : cases)
      for (bool accumulate : {false, true}) {
        CAPTURE(static_cast<int>(kernel));
        CAPTURE(s.m);
        CAPTURE(accumulate);
        check_indirect(s, kernel, accumulate, seed += 5);
      }
}
}

// The GEMM kernel behind mm, bmm, addmm and linear on CPU. float32 and float64 go to OpenBLAS,
// reading each operand in place when one of its dims is unit-stride (a transposed operand is a
// BLAS transpose flag, not a copy) and packing it otherwise; the 16-bit floats are widened to
// float32 panels; integer dtypes use a plain loop that wraps like PyTorch's. Many small
// matrices thread over the batch with single-threaded BLAS; otherwise BLAS threads itself.
#include <cstring>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/gemm.h"
#include "cpu/parallel.h"
#include "cpu/register.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::GemmParams;

// One operand matrix (rows x cols) as BLAS sees it: a pointer, a transpose flag and a leading
// dim, or a packed row-major copy when its strides fit neither orientation.
template <typename T>
struct BlasMatrix {
  const T* data = nullptr;
  bool trans = false;
  int64_t ld = 1;
  std::vector<T> packed;

  BlasMatrix(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
    const int64_t min_row = std::max<int64_t>(cols, 1), min_col = std::max<int64_t>(rows, 1);
    if ((cs == 1 || cols == 1) && (rows == 1 || rs >= min_row)) {
      data = p;
      ld = rows == 1 ? min_row : rs;
    } else if ((rs == 1 || rows == 1) && (cols == 1 || cs >= min_col)) {
      data = p;
      trans = true;
      ld = cols == 1 ? min_col : cs;
    } else {
      packed.resize(static_cast<size_t>(rows * cols));
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) packed[static_cast<size_t>(i * cols + j)] = p[i * rs + j * cs];
      data = packed.data();
      ld = min_row;
    }
  }
};

// out[b] = beta * c[b] (or 0), the GEMM then accumulates with beta 1.
template <typename T, typename S>
void init_out(T* o, const Tensor& out, int64_t b, const GemmParams& p) {
  const int64_t M = out.size(1), N = out.size(2);
  if (!p.c.defined() || p.beta == 0.0) {
    std::fill(o, o + M * N, T(0));
    return;
  }
  const S* c = p.c.data_ptr<S>() + b * p.c.stride(0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      o[i * N + j] = static_cast<T>(p.beta * static_cast<double>(static_cast<cpu::ComputeType<S>>(c[i * p.c.stride(1) + j * p.c.stride(2)])));
}

// float32 / float64 on BLAS; S is the storage type, T the BLAS type (S widened for 16-bit).
template <typename S, typename T>
void gemm_blas(const Tensor& out, const Tensor& a, const Tensor& b, const GemmParams& p) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  const S* ap = a.data_ptr<S>();
  const S* bp = b.data_ptr<S>();
  S* op = out.data_ptr<S>();
  auto one = [&](int64_t i) {
    const S* ai = ap + i * a.stride(0);
    const S* bi = bp + i * b.stride(0);
    constexpr bool kWiden = !std::is_same_v<S, T>;
    std::vector<T> wide_out;
    T* o = nullptr;
    if constexpr (kWiden) {
      wide_out.resize(static_cast<size_t>(M * N));
      o = wide_out.data();
    } else {
      o = op + i * M * N;
    }
    init_out<T, S>(o, out, i, p);
    if (K > 0) {
      if constexpr (kWiden) {
        std::vector<T> wa(static_cast<size_t>(M * K)), wb(static_cast<size_t>(K * N));
        for (int64_t r = 0; r < M; ++r)
          for (int64_t c = 0; c < K; ++c) wa[static_cast<size_t>(r * K + c)] = static_cast<T>(ai[r * a.stride(1) + c * a.stride(2)]);
        for (int64_t r = 0; r < K; ++r)
          for (int64_t c = 0; c < N; ++c) wb[static_cast<size_t>(r * N + c)] = static_cast<T>(bi[r * b.stride(1) + c * b.stride(2)]);
        cpu::gemm(false, false, M, N, K, static_cast<T>(p.alpha), wa.data(), std::max<int64_t>(K, 1), wb.data(),
                  std::max<int64_t>(N, 1), T(1), o, std::max<int64_t>(N, 1));
      } else {
        const BlasMatrix<T> ma(ai, M, K, a.stride(1), a.stride(2)), mb(bi, K, N, b.stride(1), b.stride(2));
        cpu::gemm(ma.trans, mb.trans, M, N, K, static_cast<T>(p.alpha), ma.data, ma.ld, mb.data, mb.ld, T(1), o,
                  std::max<int64_t>(N, 1));
      }
    }
    if constexpr (kWiden)
      for (int64_t e = 0; e < M * N; ++e) op[i * M * N + e] = static_cast<S>(o[e]);
  };
  // Small matrices in a big batch: thread over the batch (BLAS runs single-threaded inside).
  const int64_t work = M * N * std::max<int64_t>(K, 1);
  if (B > 1 && cpu::would_parallelise(B, std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(work, 1))))
    cpu::parallel_for(B, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) one(i);
    });
  else
    for (int64_t i = 0; i < B; ++i) one(i);
}

// Integer GEMM: accumulates in uint64 so overflow wraps (defined behaviour) as PyTorch's does.
template <typename S>
void gemm_integer(const Tensor& out, const Tensor& a, const Tensor& b, const GemmParams& p) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  const S* ap = a.data_ptr<S>();
  const S* bp = b.data_ptr<S>();
  S* op = out.data_ptr<S>();
  const auto alpha = static_cast<uint64_t>(static_cast<int64_t>(p.alpha));
  const auto beta = static_cast<uint64_t>(static_cast<int64_t>(p.beta));
  cpu::parallel_for(B * M, std::max<int64_t>(1, 4096 / std::max<int64_t>(N * std::max<int64_t>(K, 1), 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t i = r / M, row = r % M;
      const S* ai = ap + i * a.stride(0) + row * a.stride(1);
      const S* bi = bp + i * b.stride(0);
      for (int64_t j = 0; j < N; ++j) {
        uint64_t acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += static_cast<uint64_t>(static_cast<int64_t>(ai[k * a.stride(2)])) *
                 static_cast<uint64_t>(static_cast<int64_t>(bi[k * b.stride(1) + j * b.stride(2)]));
        acc *= alpha;
        if (p.c.defined() && p.beta != 0.0)
          acc += beta * static_cast<uint64_t>(static_cast<int64_t>(
                            p.c.data_ptr<S>()[i * p.c.stride(0) + row * p.c.stride(1) + j * p.c.stride(2)]));
        op[(i * M + row) * N + j] = static_cast<S>(static_cast<int64_t>(acc));
      }
    }
  });
}

void gemm_cpu(const Tensor& out, const Tensor& a, const Tensor& b, const GemmParams& p) {
  visit_dtype(out.dtype(), [&]<typename S>(std::type_identity<S>) {
    if constexpr (std::is_same_v<S, bool>) LG_ASSERT(false, "bool GEMM is rejected by the infer step");
    else if constexpr (std::is_same_v<S, double>) gemm_blas<double, double>(out, a, b, p);
    else if constexpr (cpu::kIsFloating<S>) gemm_blas<S, float>(out, a, b, p);
    else gemm_integer<S>(out, a, b, p);
  });
}

}  // namespace

void register_matmul_kernels(dispatch::KernelTable& table) {
  using dispatch::OpId;
  table.set<OpId::mm>(DeviceType::CPU, gemm_cpu, "gemm_openblas_cpu");
  table.set<OpId::bmm>(DeviceType::CPU, gemm_cpu, "gemm_openblas_cpu");
  table.set<OpId::addmm>(DeviceType::CPU, gemm_cpu, "gemm_openblas_cpu");
  table.set<OpId::linear>(DeviceType::CPU, gemm_cpu, "gemm_openblas_cpu");
}

}  // namespace lg

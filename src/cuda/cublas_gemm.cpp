// mm, bmm, addmm and linear on CUDA through cuBLAS: one strided-batched GEMM per call. The
// row-major product C = A B is cuBLAS's column-major C^T = B^T A^T, so each operand is read in
// place when one of its dims is unit-stride (a transposed operand becomes a transpose flag) and
// made contiguous otherwise. float16 and bfloat16 accumulate in float32; float32 may use TF32
// tensor cores when lg::cuda::set_matmul_allow_tf32 allows it (off by default, as in PyTorch). Integer products have no
// cuBLAS kernel and raise NotImplementedError.

#include <cublas_v2.h>

#include <layoutguard/cuda.h>
#include <layoutguard/pointwise.h>

#include "cuda/gemm_ints.h"
#include "cuda/register.h"
#include "cuda/runtime.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

void cublas_check(cublasStatus_t status, const char* expr, std::string_view op) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw DeviceError(lg::detail::str("[", op, "] cuBLAS call `", expr, "` failed: ", cublasGetStatusName(status), " (",
                                    cublasGetStatusString(status), ")"));
}
#define LG_CUBLAS_CHECK(expr, op) cublas_check((expr), #expr, (op))

cublasHandle_t handle_for(Device device) {
  return cuda::detail::per_device_handle<cublasHandle_t>(device, [](cudaStream_t stream) {
    cublasHandle_t h = nullptr;
    LG_CUBLAS_CHECK(cublasCreate(&h), "cublas");
    LG_CUBLAS_CHECK(cublasSetStream(h, stream), "cublas");
    return h;
  });
}

// One operand (B, rows, cols) as cuBLAS reads it: column-major with a transpose flag.
struct Operand {
  Tensor t;  // the operand, or its contiguous copy
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 1;
};

// Row-major (rows x cols) read as a column-major matrix of (cols x rows) (op N), or its
// transpose (op T) when the rows are the unit-stride dim.
Operand operand(const Tensor& t) {
  const int64_t rows = t.size(1), cols = t.size(2), rs = t.stride(1), cs = t.stride(2);
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= std::max<int64_t>(cols, 1)))
    return {t, CUBLAS_OP_N, rows == 1 ? std::max<int64_t>(cols, 1) : rs};
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= std::max<int64_t>(rows, 1)))
    return {t, CUBLAS_OP_T, cols == 1 ? std::max<int64_t>(rows, 1) : cs};
  const Tensor c = t.contiguous();
  return {c, CUBLAS_OP_N, std::max<int64_t>(cols, 1)};
}

cudaDataType_t data_type(DType dt) {
  switch (dt) {
    case DType::Float16: return CUDA_R_16F;
    case DType::BFloat16: return CUDA_R_16BF;
    case DType::Float64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}

void gemm_cuda(const Tensor& out, const Tensor& a, const Tensor& b, const dispatch::GemmParams& p) {
  const std::string_view op = "gemm (cuBLAS)";
  LG_CHECK_NOT_IMPLEMENTED(is_floating_point(out.dtype()), "[", op, "] has no CUDA kernel for ", out.dtype(),
                           " matrices; required a floating dtype (integer products run on the CPU)");
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  // The operands and cuBLAS's int arguments before anything is written: a product they cannot
  // express leaves out as it was.
  Operand oa, ob;
  cuda::detail::GemmInts g{};
  if (K != 0) {
    oa = operand(a);
    ob = operand(b);
    // Column-major: C^T (N x M, ld N) = op(B^T) (N x K) * op(A^T) (K x M).
    g = cuda::detail::gemm_ints(N, M, K, ob.ld, oa.ld, N, B, op);
  }
  double beta = 0.0;
  if (p.c.defined() && p.beta != 0.0) {
    cuda::detail::copy_on_device(out, p.c);  // out = c, then the GEMM adds alpha A B with beta
    beta = p.beta;
  }
  if (K == 0) {
    if (beta == 0.0) out.fill_(0);
    else if (beta != 1.0) mul_(out, beta);
    return;
  }
  cublasHandle_t handle = handle_for(out.device());
  const cudaDataType_t dt = data_type(out.dtype());
  const bool dbl = out.dtype() == kFloat64;
  const cublasComputeType_t compute = dbl ? CUBLAS_COMPUTE_64F
                                      : out.dtype() == kFloat32 && cuda::matmul_allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                                      : CUBLAS_COMPUTE_32F;
  const double alpha_d = p.alpha, beta_d = beta;
  const float alpha_f = static_cast<float>(p.alpha), beta_f = static_cast<float>(beta);
  const void* alpha = dbl ? static_cast<const void*>(&alpha_d) : static_cast<const void*>(&alpha_f);
  const void* beta_p = dbl ? static_cast<const void*>(&beta_d) : static_cast<const void*>(&beta_f);
  LG_CUBLAS_CHECK(cublasGemmStridedBatchedEx(handle, ob.op, oa.op, g.m, g.n, g.k, alpha, ob.t.data_ptr(), dt, g.lda,
                                             ob.t.stride(0), oa.t.data_ptr(), dt, g.ldb, oa.t.stride(0), beta_p,
                                             out.data_ptr(), dt, g.ldc, M * N, g.batch, compute, CUBLAS_GEMM_DEFAULT),
                  op);
  cuda::detail::check_launch(cudaGetLastError(), "cublasGemmStridedBatchedEx", op, out.device());
}

}  // namespace

void register_cublas_kernels(dispatch::KernelTable& table) {
  using dispatch::OpId;
  table.set<OpId::mm>(DeviceType::CUDA, gemm_cuda, "gemm_cublas");
  table.set<OpId::bmm>(DeviceType::CUDA, gemm_cuda, "gemm_cublas");
  table.set<OpId::addmm>(DeviceType::CUDA, gemm_cuda, "gemm_cublas");
  table.set<OpId::linear>(DeviceType::CUDA, gemm_cuda, "gemm_cublas");
}

}  // namespace lg

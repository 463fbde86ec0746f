// cat on CPU. Along the innermost dim of dense tensors that share one dim order (channels of
// NHWC tensors), one pass over the output's rows copies each input's run into place, so the
// output is written front to back once. Anything else copies each input into its slice of the
// output with the strided copy kernel, which walks both in their shared memory order -- whole
// channel runs for NHWC, planes for NCHW.
#include <cstring>

#include "cpu/avx2_target.h"
#include "cpu/parallel.h"
#include "cpu/register.h"
#include "core/tensor_internal.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

// Whether `t`, with `width` elements along `dim`, is dense with `dim` innermost and the same
// dim order as `out` (out's strides scaled from its own width to `width`).
bool rows_like(const Tensor& t, const Tensor& out, int64_t dim, int64_t width) {
  if (!t.is_non_overlapping_and_dense() || t.stride(dim) != 1) return false;
  const int64_t out_width = out.size(dim);
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == dim || t.size(d) == 1) continue;
    if (out.stride(d) % out_width != 0 || out.stride(d) / out_width * width != t.stride(d)) return false;
  }
  return true;
}

#if LG_CPU_AVX2_KERNELS
// dst[0, bytes) = src[0, bytes), bytes a multiple of 32, in 32-byte AVX moves: the runs of a
// channels-last cat are a few hundred bytes, and a memcpy call per run made the whole cat
// 1.3x slower than this (`cpu_ops --layers-only`, 128 + 32 channels at batch 16).
LG_AVX2 void copy_run_avx(char* dst, const char* src, int64_t bytes) {
  for (int64_t b = 0; b < bytes; b += 32)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + b), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + b)));
}
#endif

void copy_run(char* dst, const char* src, int64_t bytes, bool avx) {
#if LG_CPU_AVX2_KERNELS
  if (avx && bytes % 32 == 0) {
    copy_run_avx(dst, src, bytes);
    return;
  }
#endif
  (void)avx;
  std::memcpy(dst, src, static_cast<size_t>(bytes));
}

// out[r, offset_i : offset_i + width_i] = input_i[r, :] for every row r, rows in parallel.
void cat_rows(const Tensor& out, std::span<const Tensor> inputs, int64_t dim) {
  const int64_t item = static_cast<int64_t>(out.itemsize()), row = out.size(dim) * item;
  const int64_t rows = out.numel() / out.size(dim);
  char* dst = static_cast<char*>(out.data_ptr());
  std::vector<std::pair<const char*, int64_t>> runs;  // each input's data and row bytes
  for (const Tensor& t : inputs)
    if (t.numel() > 0) runs.emplace_back(static_cast<const char*>(t.data_ptr()), t.size(dim) * item);
  const bool avx = cpu::cpu_has_avx2();
  cpu::parallel_for(rows, std::max<int64_t>(1, 65536 / std::max<int64_t>(row, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      char* o = dst + r * row;
      for (const auto& [src, bytes] : runs) {
        copy_run(o, src + r * bytes, bytes, avx);
        o += bytes;
      }
    }
  });
}

void cat_cpu(const Tensor& out, std::span<const Tensor> inputs, int64_t dim) {
  bool as_rows = out.is_non_overlapping_and_dense() && out.stride(dim) == 1 && out.numel() > 0;
  for (const Tensor& t : inputs) as_rows = as_rows && (t.numel() == 0 || rows_like(t, out, dim, t.size(dim)));
  if (as_rows) {
    cat_rows(out, inputs, dim);
    return;
  }
  const auto copy = dispatch::kernel_table().get<dispatch::OpId::copy_>(DeviceType::CPU);
  int64_t offset = 0;
  for (const Tensor& t : inputs) {
    const int64_t n = t.size(dim);
    if (n > 0 && t.numel() > 0) {
      std::vector<int64_t> sizes = out.sizes().vec();
      sizes[dim] = n;
      copy(detail::make_view(out, sizes, out.strides().vec(), out.storage_offset() + offset * out.stride(dim)), t);
    }
    offset += n;
  }
}

}  // namespace

void register_cat_kernels(dispatch::KernelTable& table) {
  table.set<dispatch::OpId::cat>(DeviceType::CPU, cat_cpu, "cat_copy_cpu");
}

}  // namespace lg

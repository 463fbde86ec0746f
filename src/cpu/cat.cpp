// cat on CPU. Along the innermost dim of dense tensors that share one dim order (channels of
// NHWC tensors), one pass over the output's rows copies each input's run into place, so the
// output is written front to back once. Anything else copies each input into its slice of the
// output with the strided copy kernel, which walks both in their shared memory order -- whole
// channel runs for NHWC, planes for NCHW.
#include <cstring>

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

// out[r, offset_i : offset_i + width_i] = input_i[r, :] for every row r, rows in parallel.
void cat_rows(const Tensor& out, std::span<const Tensor> inputs, int64_t dim) {
  const int64_t item = static_cast<int64_t>(out.itemsize()), row = out.size(dim) * item;
  const int64_t rows = out.numel() / out.size(dim);
  char* dst = static_cast<char*>(out.data_ptr());
  std::vector<std::pair<const char*, int64_t>> runs;  // each input's data and row bytes
  for (const Tensor& t : inputs)
    if (t.numel() > 0) runs.emplace_back(static_cast<const char*>(t.data_ptr()), t.size(dim) * item);
  cpu::parallel_for(rows, std::max<int64_t>(1, 65536 / std::max<int64_t>(row, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      char* o = dst + r * row;
      for (const auto& [src, bytes] : runs) {
        std::memcpy(o, src + r * bytes, static_cast<size_t>(bytes));
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

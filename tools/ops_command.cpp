// The operator catalogue printed for people: a compact table, or docs/operators.md. The prose
// per family lives here because it is the documentation of what op_list.def groups together;
// per-op facts come from lg::op_catalogue().
#include "ops_command.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <ostream>
#include <string>

#include <layoutguard/op_catalogue.h>

namespace lg::tools {
namespace {

struct FamilyText {
  std::string_view family, title, text;
};

// In the order the page presents them.
constexpr FamilyText kFamilies[] = {
    {"Copy", "Copies", "`copy_` and `fill_` write into an existing tensor and keep its strides. `copy_strided_cpu` merges "
     "dims that stay contiguous on both sides and transposes 4x4 tiles (SSE) between NCHW and NHWC."},
    {"Conversion", "Conversions", "`contiguous`, `to`, `clone` allocate by PyTorch's rules (docs/memory-format.md) and copy; `stack` is "
     "`cat` and a view. The guard never flags them: the caller asked for the layout."},
    {"View", "Views", "Metadata only: sizes, strides and offset change, storage is shared (docs/memory-format.md, views). The View policy "
     "flags a same-rank view that rewrites a channels_last tensor into another format (an expand over the batch); "
     "slices, `split` and `chunk` keep the input's strides."},
    {"Pointwise", "Pointwise", "One CPU kernel per op over any strides: dense NHWC and NCHW operands become one unit-stride "
     "loop, so channels_last is native, not converted. Output layout: TensorIterator's rule, first "
     "operand wins on ties. Broadcasting and type promotion as in PyTorch; in-place (`relu_`, `add_`, ...) and out= "
     "(`add_out`, ...) forms report under the op's own name. float16 and bfloat16 compute in float32; integer "
     "`add`, `sub`, `mul`, `neg`, `pow` wrap like two's-complement arithmetic."},
    {"Conv", "Convolution", "Output channels_last (channels_last_3d for 5-D) when the input **or** the weight suggests it "
     "(PyTorch main's rule, also for conv3d and the transposed convolutions). The kernel picks a path and "
     "reports its name to hooks and the guard: `conv_nhwc_1x1_gemm_cpu` (1x1 stride 1 on dense NHWC: one GEMM on the "
     "input itself), `conv_nhwc_indirect_gemm_cpu` (float32, one group, 16+ input channels with unit stride, any "
     "kernel, stride, dilation and padding: the input read in place through a table of per-tap pointers, no "
     "im2col), `conv_nhwc_implicit_gemm_cpu` (float32, one group, fewer input channels, dense NHWC, output rows "
     "of 24+ pixels, on AVX-512 CPUs or on AVX2 ones up to 64 outputs: each output row reads its kernel rows in "
     "place), `conv_nhwc_im2col_gemm_cpu`, "
     "`conv_nhwc_depthwise_avx512_cpu` or `conv_nhwc_depthwise_avx2_cpu` (float32 with dense channels on "
     "CPUs with AVX-512 or AVX2; else `conv_nhwc_depthwise_cpu`), `conv_nhwc_grouped_direct_cpu` (groups "
     "of 2, 4, 8 or 16 channels in and out, float32 on AVX2 CPUs) and the NCHW counterparts; transposed: "
     "`conv_transpose_nhwc_gemm_col2im_cpu`, `conv_transpose_nchw_gemm_col2im_cpu`. float32 NHWC GEMMs run our "
     "panel GEMM where the CPU has AVX2 and FMA (an AVX-512 kernel where it has avx512f and avx512vl), everything "
     "else OpenBLAS; weights are "
     "packed once per (storage, version) and reused until an in-place write bumps the version; after "
     "writing into a weight through `data_ptr()`, call `weight.bump_version()`."},
    {"Norm", "Normalisation", "`batch_norm` follows PyTorch's CPU rule exactly (a tensor contiguous in some "
     "format keeps it, contiguous first for ambiguous ones, else the suggested format); `group_norm`, `instance_norm`, "
     "`layer_norm` return the input's suggested format. Statistics in double; NHWC data is walked channels-innermost, "
     "NCHW plane by plane. Training updates the running stats in place. Per-channel parameters may be float32 for float16 or "
     "bfloat16 input. On CUDA, what evaluation derives from the running stats and weights (scale and shift, float32 or "
     "float64 copies) is kept per (storage, version) until an in-place write bumps the version; after writing into a "
     "stat or weight through `data_ptr()`, call `bump_version()` on it."},
    {"Pool", "Pooling", "Output (and int64 indices) in the input's suggested format, channels_last_3d included. One window "
     "kernel pair serves fixed, ceil-mode and adaptive windows: NHWC adds whole channel runs per window position, "
     "NCHW walks each plane. `max_pool2d_with_indices` reports as `max_pool2d`; NaN wins a max window."},
    {"Join", "Joining", "`cat` votes like PyTorch: channels_last only when every input suggests it (a legacy "
     "empty 1-D input votes contiguous). `cat_copy_cpu` copies each input into its slice in the output's order."},
    {"Resample", "Resampling", "Upsampling, `pad` and the shuffles return the input's suggested format. "
     "`upsample_separable_cpu` serves nearest (1 tap), linear (2) and cubic (4 taps, A = -0.75) with PyTorch's "
     "coordinate mapping; NHWC blends whole channel runs per tap. `interpolate` (size or scale_factor) picks the op. "
     "`pad_gather_cpu` maps each output index to its source (constant, reflect, replicate, circular) walking the "
     "output's memory order. The shuffles are a strided copy from a permuted view of the input into the output."},
    {"Linalg", "Linear algebra", "Row-major contiguous outputs, as in PyTorch; the guard treats them as RankChanging. "
     "`gemm_openblas_cpu` reads transposed operands in place through BLAS transpose flags, packs other strides, "
     "widens 16-bit floats to float32 panels and runs integer products in a wrapping loop. `matmul` is composite "
     "(mm or bmm after ATen's reshapes and batch broadcasting); `linear` copies its input only when the leading "
     "dims cannot be merged into one view."},
    {"Reduce", "Reductions and softmax", "`sum`, `mean`, `amax`, `amin` return contiguous output, "
     "as PyTorch does; `reduce_cpu` vectorises over the innermost kept dim (channels of NHWC reduced over H "
     "and W) or runs the innermost reduced dim as the tight loop (NCHW). `softmax` and `log_softmax` keep the "
     "input's layout, even over channels; `softmax_cpu` works on unit-stride runs in either layout."},
    {"Composite", "Composite ops", "No kernel of their own: they run other ops, which the hooks see nested under them. "
     "`dropout` in training draws a mask in the input's layout and writes into a tensor laid out like the input; not "
     "training (or p = 0) it returns the input itself, as ATen does."},
};

std::string code(std::string_view s) { return s.empty() ? std::string("—") : std::string("`").append(s).append("`"); }

}  // namespace

void print_ops_table(std::ostream& out) {
  const auto ops = op_catalogue();
  out << std::left << std::setw(22) << "op" << std::setw(11) << "family" << std::setw(13) << "policy" << std::setw(27)
      << "cpu kernel" << "cuda kernel\n";
  for (const OpDescription& d : ops)
    out << std::setw(22) << d.name << std::setw(11) << d.family << std::setw(13) << d.policy << std::setw(27)
        << d.cpu_kernel << (d.cuda_kernel.empty() ? "-" : d.cuda_kernel) << "\n";
  out << ops.size() << " ops; `layoutguard ops --markdown` adds dtypes and differences from PyTorch\n";
}

void print_ops_markdown(std::ostream& out) {
  const auto ops = op_catalogue();
  out << "# Operators\n\n"
         "<!-- Generated by `layoutguard ops --markdown` from src/dispatch/op_list.def and\n"
         "     tools/ops_command.cpp; the `cli` test fails when this file and the command's output differ. -->\n\n"
         "Every operator goes through the dispatcher and is checked by the layout guard under its policy\n"
         "(`docs/guard.md`): **Preserve** (a channels_last input must give a channels_last output of its rank),\n"
         "**ConvLike** (the same, where input and weight count), **RankChanging** and **Explicit** (never flagged),\n"
         "**View** (same-rank views must not rewrite the format). Each computing op has one CPU kernel that is\n"
         "native for both NHWC and NCHW: no op converts its operands' layout behind the caller's back. The CUDA\n"
         "column lists kernels registered in this build (a CUDA build adds them).\n\n"
      << ops.size() << " ops. Declarations are in `include/layoutguard/<header>`; names, argument order and defaults\n"
         "follow ATen.\n\n"
         "| op | family | policy | header | CPU kernel (NHWC and NCHW) | CUDA kernel | dtypes |\n"
         "|---|---|---|---|---|---|---|\n";
  for (const OpDescription& d : ops)
    out << "| `" << d.name << "` | " << d.family << " | " << d.policy << " | " << d.header << " | " << code(d.cpu_kernel)
        << " | " << code(d.cuda_kernel) << " | " << d.dtypes << " |\n";
  out << "\n## Families\n";
  for (const FamilyText& f : kFamilies) {
    out << "\n### " << f.title << "\n\n";
    std::string line;
    // Wrap the paragraph at 100 columns.
    std::string_view rest = f.text;
    while (!rest.empty()) {
      const size_t space = rest.find(' ');
      const std::string_view word = rest.substr(0, space);
      if (!line.empty() && line.size() + 1 + word.size() > 100) {
        out << line << "\n";
        line.clear();
      }
      if (!line.empty()) line += ' ';
      line += word;
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
    out << line << "\n\nOps: ";
    bool first = true;
    for (const OpDescription& d : ops)
      if (d.family == f.family) {
        out << (first ? "" : ", ") << "`" << d.name << "`";
        first = false;
      }
    out << ".\n";
  }
  out << "\n## Differences from PyTorch\n\n"
         "Layouts are compared with what PyTorch 2.11 returns for channels_last input on CPU and CUDA\n"
         "(`docs/data/pytorch-2.11-layouts.txt`, printed by `bench/peer/pytorch_layouts.py` on an H100 machine).\n"
         "layoutguard keeps channels_last wherever the output has the input's rank and the op is spatially local.\n\n";
  for (const OpDescription& d : ops)
    if (!d.pytorch_difference.empty()) out << "- `" << d.name << "`: " << d.pytorch_difference << ".\n";
  out << "- Operands of a dtype other than the compute dtype are cast before the kernel (layout kept), where\n"
         "  PyTorch casts inside the loop; the values are the same.\n";
}

}  // namespace lg::tools

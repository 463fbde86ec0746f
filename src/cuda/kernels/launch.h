// The plain launchers of layoutguard's own CUDA kernels and the plain data they take. No
// tensor-level header is included here (only the op list and the pointwise math, which are
// device-safe): .cu files stay behind this seam, and the .cpp side turns tensors into these
// structs (src/cuda/geometry.cpp) and checks the returned cudaError_t.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "cuda/kernels/index_divider.h"
#include "dispatch/pointwise_math.h"

namespace lg::cuda::kernels {

// Dims left after dropping size-1 dims and merging the ones every operand steps through evenly;
// the host refuses geometries with more.
constexpr int kMaxDims = 8;
constexpr int kMaxOperands = 4;  // out and up to three inputs

// One elementwise iteration space: sizes outermost first (the output's memory order) and, per
// operand ([0] is the output), its data pointer and strides in elements (0 where broadcast).
struct Geometry {
  int ndim = 0;
  int operands = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};
  IndexDivider dividers[kMaxDims] = {};  // IndexDivider::of(sizes[d]), set with the sizes
  char* data[kMaxOperands] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
};

enum class ScalarType : int { Float32, Float16, BFloat16, Float64, Int64, Int32, UInt8, Bool };

// out = src over any strides, both of one dtype of `element_bytes` (1, 2, 4 or 8) bytes. A copy
// whose two innermost dims are swapped between out and src (NCHW <-> NHWC and every other
// batched transpose) goes through 32x32 tiles in shared memory so reads and writes coalesce.
cudaError_t copy_strided(const Geometry& g, int element_bytes, cudaStream_t stream);
// Whether the short-planes transposes of 2-byte types take their own kernel
// (short_planes_2byte.cuh; on by default) or the generic one of every element size.
// Process-wide; bench/cuda_ops turns it off to time both kernels in one run, and the emulated
// tests check both.
void set_short_planes_2byte_kernel(bool on);
// out[i] = convert(src[i]) for two dense buffers of n elements laid out alike.
cudaError_t convert_dense(void* out, ScalarType out_type, const void* src, ScalarType src_type, int64_t n,
                          cudaStream_t stream);
// Every element of operand 0 set to the `element_bytes`-byte pattern in `bits`.
cudaError_t fill_strided(const Geometry& g, int element_bytes, uint64_t bits, cudaStream_t stream);

// The Pointwise ops (dispatch::PointwiseMath: the math the CPU kernels instantiate too).
// Operand 0 is the output; inputs are already broadcast to its sizes and share `input_type`
// (where: operand 1 is the bool condition, operands 2 and 3 have input_type). Comparisons write
// bool, the others input_type. Returns cudaErrorInvalidValue for a dtype the op does not take
// or an op that is not pointwise.
cudaError_t pointwise(dispatch::OpId op, ScalarType input_type, const Geometry& g, const dispatch::PointwiseParams& p,
                      cudaStream_t stream);

// A 5-D (N, C, D, H, W) view: sizes and strides in elements, with their IndexDividers (set with
// them by cuda::detail::view5; a stride of 0 keeps the divisor 1 and is not divided by).
struct View5 {
  int64_t size[5] = {};
  int64_t stride[5] = {};
  IndexDivider size_divider[5] = {}, stride_divider[5] = {};
};

// Upsampling: output position o of spatial dim i (0 = D, 1 = H, 2 = W) blends taps[i] input
// positions index[i][o * taps[i] + t] with weight[i][...] (device arrays). With one tap per dim
// the kernel copies values (every dtype but bool).
struct InterpArgs {
  View5 out, in;
  char* out_data = nullptr;
  const char* in_data = nullptr;
  int taps[3] = {1, 1, 1};
  const int64_t* index[3] = {};
  const double* weight[3] = {};
};
cudaError_t upsample(const InterpArgs& a, ScalarType type, cudaStream_t stream);

// Pooling: window o of spatial dim i covers begin[i][o], begin + dilation[i], ... below
// end[i][o]; avg divides by the product of count[i][o] (or divisor_override when non-zero);
// max writes int64 flat indices (d * H * W + h * W + w of the input plane) when indices is set.
struct PoolArgs {
  View5 out, in, idx;
  char* out_data = nullptr;
  const char* in_data = nullptr;
  int64_t* indices = nullptr;
  const int64_t* begin[3] = {};
  const int64_t* end[3] = {};
  const int64_t* count[3] = {};
  int64_t dilation[3] = {1, 1, 1};
  int64_t divisor_override = 0;
  bool max = true;
};
cudaError_t pool(const PoolArgs& a, ScalarType type, cudaStream_t stream);

// pad: out[i_0..i_k] = in[source_0[i_0], ...] or the fill where any source index is -1.
// source[d] points at out.size(d) device int64 values.
struct PadArgs {
  int rank = 0;
  int64_t out_size[kMaxDims] = {}, out_stride[kMaxDims] = {}, in_stride[kMaxDims] = {};
  const int64_t* source[kMaxDims] = {};
  char* out_data = nullptr;
  const char* in_data = nullptr;
  int64_t numel = 0;
  uint64_t fill_bits = 0;
};
cudaError_t pad(const PadArgs& a, int element_bytes, cudaStream_t stream);

// sum / mean / amax / amin: out element i (row-major over the kept dims) reduces the input
// elements over the reduced dims. Floating sums accumulate in double, integer sums in uint64
// (wrapping), max/min propagate NaN -- as the CPU kernel does.
enum class ReduceOp : int { Sum, Mean, Max, Min };
struct ReduceArgs {
  int kept = 0, reduced = 0;
  int64_t kept_size[kMaxDims] = {}, kept_in_stride[kMaxDims] = {}, kept_out_stride[kMaxDims] = {};
  int64_t red_size[kMaxDims] = {}, red_stride[kMaxDims] = {};
  IndexDivider kept_divider[kMaxDims] = {}, red_divider[kMaxDims] = {};  // set by reduce() itself
  int64_t outputs = 0, count = 0;
  char* out = nullptr;
  const char* in = nullptr;
  ReduceOp op = ReduceOp::Sum;
};
cudaError_t reduce(const ReduceArgs& a, ScalarType type, cudaStream_t stream);

// softmax / log_softmax: one line per position of the other dims, n elements along the dim.
struct SoftmaxArgs {
  int other = 0;
  int64_t other_size[kMaxDims] = {}, other_in_stride[kMaxDims] = {}, other_out_stride[kMaxDims] = {};
  IndexDivider other_divider[kMaxDims] = {};  // set by softmax() itself
  int64_t lines = 0, n = 0, in_stride = 0, out_stride = 0;
  char* out = nullptr;
  const char* in = nullptr;
  bool log = false;
};
cudaError_t softmax(const SoftmaxArgs& a, ScalarType type, cudaStream_t stream);

// Normalisation. The elements split into groups (a (n, c) plane for the channel norms, a row
// for layer_norm): an outer position (the group) and an inner position (within the group),
// each decoded row-major over its own sizes and strides.
struct GroupedView {
  int outer_dims = 0, inner_dims = 0;
  int64_t outer_size[kMaxDims] = {}, outer_stride[kMaxDims] = {}, outer_out_stride[kMaxDims] = {};
  int64_t inner_size[kMaxDims] = {}, inner_stride[kMaxDims] = {}, inner_out_stride[kMaxDims] = {};
  int64_t groups = 0, inner_count = 0;
  // Set by group_moments() and group_affine() themselves.
  IndexDivider outer_divider[kMaxDims] = {}, inner_divider[kMaxDims] = {}, inner_count_divider = {};
};
// out[g] = sum over group g of (x - shift[g])^power (power 1 or 2; shift may be null), in double.
cudaError_t group_moments(const GroupedView& v, const char* in, ScalarType type, const double* shift, int power,
                          double* out, cudaStream_t stream);
// y = (x - mean[g]) * scale[g] * (w ? w[j] : 1) + (shift ? shift[g] : 0) + (b ? b[j] : 0)
// for element j of group g (w, b, shift may be null).
cudaError_t group_affine(const GroupedView& v, const char* in, char* out, ScalarType type, const double* mean,
                         const double* scale, const double* shift, const double* w, const double* b, cudaStream_t stream);

// group_norm, instance_norm (without running stats) and layer_norm with every step on the
// device (group_norm.cu), in three launches: one pass for the sums of deviations and of their
// squares over each group of the view (a "plane"), the mean and 1 / sqrt(variance + eps) of
// each statistic (per_stat consecutive planes share one: group_norm's channels of a group; 1
// for instance and layer norm), the affine map. plane_w / plane_b (nullable, `channels`
// doubles) weight plane p by entry p % channels (group and instance norm); inner_w / inner_b
// (nullable, inner_count doubles, row-major over the inner dims) weight inner element j (layer
// norm). workspace: group_normalize_workspace(v, args) doubles on the device, and
// workspace_doubles says how many there are.
struct GroupNormArgs {
  int64_t per_stat = 1, channels = 1;
  double eps = 1e-5;
  const double *plane_w = nullptr, *plane_b = nullptr, *inner_w = nullptr, *inner_b = nullptr;
  double* workspace = nullptr;
  int64_t workspace_doubles = 0;  // its length: a walk that would need more is refused
};
// The doubles of workspace group_normalize needs for this view (0 when it has nothing to do or
// the arguments are invalid, which group_normalize refuses).
int64_t group_normalize_workspace(const GroupedView& v, const GroupNormArgs& a);
cudaError_t group_normalize(const GroupedView& v, const char* in, char* out, ScalarType type, const GroupNormArgs& a,
                            cudaStream_t stream);
// The elements a thread of group_normalize moves per load for these operands: 16 bytes' worth
// when the walked dim is dense and long enough and both pointers are 16-byte aligned, else
// fewer, down to 1 (0 for arguments group_normalize refuses). For tests and benchmarks.
int group_normalize_lane_width(const GroupedView& v, const GroupNormArgs& a, ScalarType type, const char* in,
                               const char* out);
// The fewest elements a thread of group_normalize sums per chunk (8 by default; below 1 sets
// it back). Fewer make more, shorter chunks: more blocks to fill the device, more partial sums
// to add. Process-wide, read when a call plans its walk; bench/cuda_ops sweeps it in one run.
void set_group_normalize_min_per_lane(int64_t n);

// Per channel c < channels: scale[c] = w[c] / sqrt(var[c] + eps), shift[c] = b[c] - mean[c] *
// scale[c] (w, b may be null: 1 and 0), computed in double and stored as float, with mean, var, w
// and b all of `stats_type` -- evaluation-mode batch norm on the device, no host round trip.
cudaError_t channel_coefficients(int64_t channels, ScalarType stats_type, const void* mean, const void* var,
                                 const void* w, const void* b, double eps, float* scale, float* shift,
                                 cudaStream_t stream);
// y = x * scale[c] + shift[c] over a dense tensor whose channel of element i is i % channels
// (channels innermost, NHWC) or (i / inner) % channels (NCHW); x and y share their strides.
struct ChannelAffine {
  int64_t numel = 0, channels = 1, inner = 1;
  bool channels_innermost = false;
  IndexDivider channels_divider = {}, inner_divider = {};  // set by the launchers themselves
};
cudaError_t channel_affine(const ChannelAffine& a, const char* in, char* out, ScalarType type, const float* scale,
                           const float* shift, cudaStream_t stream);

// out[c] += sum over channel c's elements of (x - shift_sums[c] * shift_scale)^power (power 1 or
// 2; shift_sums may be null), in double, through atomics: out must start zeroed.
cudaError_t channel_sums(const ChannelAffine& a, const char* in, ScalarType type, const double* shift_sums,
                         double shift_scale, int power, double* out, cudaStream_t stream);
// Training-mode batch norm from the sums above: mean = sums / count, biased var = squares /
// count; the running stats (nullable, of `stats_type`) become (1 - momentum) * running +
// momentum * batch (variance unbiased, as the CPU does), and scale/shift as in
// channel_coefficients (w, b nullable, of `stats_type`).
struct BatchStatistics {
  int64_t channels = 0;
  double count = 0, momentum = 0.1, eps = 1e-5;
  const double *sums = nullptr, *squares = nullptr;
  void *running_mean = nullptr, *running_var = nullptr;
  const void *w = nullptr, *b = nullptr;
  float *scale = nullptr, *shift = nullptr;
};
cudaError_t batch_statistics(const BatchStatistics& s, ScalarType stats_type, cudaStream_t stream);

}  // namespace lg::cuda::kernels

// Convolutions on CUDA through cuDNN 9's backend (graph) API: conv2d/conv3d as a forward
// convolution, the transposed ones as the data gradient of the convolution they invert.
// Tensors reach cuDNN with their own dims and strides, so NHWC runs NHWC: the only conversions
// are ATen's, an input or weight not dense in the output's format is made so first (a recorded
// contiguous()). Execution plans are cached per (device, op, dtypes, dims, strides,
// alignments, convolution parameters). The engine is the first configuration the heuristics
// propose that finalises, or with lg::cuda::set_cudnn_benchmark(true) the fastest of all of
// them, timed once per cache key.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <cudnn.h>

#include <layoutguard/cuda.h>
#include <layoutguard/factories.h>
#include <layoutguard/pointwise.h>

#include "cuda/cudnn_backend.h"
#include "cuda/register.h"
#include "cuda/runtime.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::ConvParams;

using cuda::cudnn::Desc;
using cuda::cudnn::Plan;
using cuda::cudnn::TensorInfo;
using cuda::cudnn::workspace_ptr;
using cuda::cudnn::workspace_tensor;

// The 5-D (N, C, D, H, W) view as cuDNN sees it: 4-D when the depth is a plain size 1.
TensorInfo info(const Tensor& t, int64_t uid, bool drop_depth) {
  TensorInfo i{uid, {}, {}, cuda::cudnn::alignment_of(t.data_ptr())};
  for (int64_t d = 0; d < 5; ++d) {
    if (drop_depth && d == 2) continue;
    i.dims.push_back(t.size(d));
    i.strides.push_back(t.stride(d));
  }
  return i;
}

// The device pointers of one execution, in the order of kUids.
constexpr std::array<int64_t, 3> kUids{'x', 'w', 'y'};
using Pointers = std::array<void*, 3>;

cudnnStatus_t execute(cudnnHandle_t handle, const Desc& plan, const Pointers& pointers, void* workspace,
                      std::string_view op) {
  return cuda::cudnn::execute(handle, plan, kUids, pointers, workspace, op);
}

struct ConvSpec {
  bool transposed;
  std::vector<int64_t> pre, post, stride, dilation;
};

// The execution plans cuDNN can finalise for one convolution, in its heuristics' order of
// preference (mode A, then the fallback list); with `first_only`, just the first of them.
std::vector<Plan> candidate_plans(cudnnHandle_t handle, const ConvSpec& s, const TensorInfo& x, const TensorInfo& w,
                                  const TensorInfo& y, DType dtype, bool first_only, std::string_view op) {
  const cudnnDataType_t dt = cuda::cudnn::data_type(dtype);
  const cudnnDataType_t compute = dtype == kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  auto xd = cuda::cudnn::tensor_desc(x, dt, op), wd = cuda::cudnn::tensor_desc(w, dt, op),
       yd = cuda::cudnn::tensor_desc(y, dt, op);
  Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, op);
  const int64_t spatial = static_cast<int64_t>(s.stride.size());
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial, s.pre.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial, s.post.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial, s.dilation.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial, s.stride.data());
  conv.finalize();

  Desc operation(s.transposed ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                              : CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                 op);
  const double alpha_d = 1.0, beta_d = 0.0;
  const float alpha_f = 1.0f, beta_f = 0.0f;
  if (s.transposed) {
    // The transposed convolution's output is the data gradient of the convolution that maps
    // it to the input: dx = out, dy = input.
    operation.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, *yd);
    operation.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, *wd);
    operation.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, *xd);
    operation.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv);
    if (compute == CUDNN_DATA_DOUBLE) {
      operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_DOUBLE, 1, &alpha_d);
      operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_DOUBLE, 1, &beta_d);
    } else {
      operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha_f);
      operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &beta_f);
    }
  } else {
    operation.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, *xd);
    operation.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, *wd);
    operation.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, *yd);
    operation.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
    if (compute == CUDNN_DATA_DOUBLE) {
      operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_DOUBLE, 1, &alpha_d);
      operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_DOUBLE, 1, &beta_d);
    } else {
      operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha_f);
      operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta_f);
    }
  }
  operation.finalize();

  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  const Desc* ops[1] = {&operation};
  const std::unique_ptr<Desc> graph = cuda::cudnn::operation_graph(handle, ops, status, op);
  LG_CUDNN_CHECK(status, op);
  // With TF32 off, float32 plans skip engines that run on tensor cores.
  const bool no_tf32 = dtype == kFloat32 && !cuda::allow_tf32();
  const auto keep = [no_tf32](cudnnBackendDescriptor_t cfg) {
    return !no_tf32 || !cuda::cudnn::uses_tensor_cores(cfg);
  };
  std::vector<Plan> plans = cuda::cudnn::finalized_plans(handle, *graph, first_only, keep, op);
  if (!plans.empty()) return plans;
  throw NotImplementedError(lg::detail::str("[", op, "] cuDNN has no engine for this convolution (", dtype,
                                            ", input dims ", IntArrayRef(x.dims), " strides ", IntArrayRef(x.strides),
                                            ", weight dims ", IntArrayRef(w.dims), ")"));
}

// A CUDA event for timing, destroyed on every way out (a failed candidate's check throws).
class TimingEvent {
 public:
  explicit TimingEvent(std::string_view op) { LG_CUDA_CHECK(cudaEventCreate(&event_), op); }
  ~TimingEvent() { cudaEventDestroy(event_); }
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
  operator cudaEvent_t() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Benchmark mode: the candidate that runs fastest on the call's own tensors (one warm-up, then
// the best of three timed runs each). Candidates whose workspace cannot be allocated or whose
// execution fails are skipped, as PyTorch's benchmark skips them.
Plan fastest_plan(cudnnHandle_t handle, std::vector<Plan> candidates, Pointers pointers, Device device,
                  std::string_view op) {
  cudaStream_t stream = cuda::detail::stream_for(device);
  const TimingEvent start(op), stop(op);
  size_t best = candidates.size();
  float best_ms = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    Tensor ws;
    try {
      ws = workspace_tensor(candidates[i].workspace, device);
    } catch (const OutOfMemoryError&) {
      continue;
    }
    if (execute(handle, *candidates[i].plan, pointers, workspace_ptr(ws), op) != CUDNN_STATUS_SUCCESS) continue;
    float ms = 0;
    for (int run = 0; run < 3; ++run) {
      LG_CUDA_CHECK(cudaEventRecord(start, stream), op);
      const cudnnStatus_t status = execute(handle, *candidates[i].plan, pointers, workspace_ptr(ws), op);
      LG_CUDA_CHECK(cudaEventRecord(stop, stream), op);
      LG_CUDA_CHECK(cudaEventSynchronize(stop), op);
      float t = 0;
      LG_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop), op);
      if (status != CUDNN_STATUS_SUCCESS) t = INFINITY;
      ms = run == 0 ? t : std::min(ms, t);
    }
    if (std::isfinite(ms) && (best == candidates.size() || ms < best_ms)) {
      best = i;
      best_ms = ms;
    }
  }
  // A failed candidate must not leave its error behind for the next launch check.
  (void)cudaGetLastError();
  if (best == candidates.size()) return std::move(candidates.front());  // none ran: the heuristics' choice raises
  return std::move(candidates[best]);
}

// The plan-cache key: the raw bytes of every number that shapes the plan (built per call, so
// kept cheap: no formatting).
std::string key_of(Device device, const ConvSpec& s, DType dt, const TensorInfo& x, const TensorInfo& w,
                   const TensorInfo& y) {
  std::string k;
  k.reserve(512);
  const auto put = [&k](int64_t v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
  const auto put_all = [&put](const std::vector<int64_t>& v) {
    put(static_cast<int64_t>(v.size()));
    for (int64_t e : v) put(e);
  };
  put(device.index());
  put(s.transposed);
  put(static_cast<int64_t>(dt));
  put(cuda::allow_tf32());
  put(cuda::cudnn_benchmark());
  for (const TensorInfo* t : {&x, &w, &y}) {
    put_all(t->dims);
    put_all(t->strides);
    put(t->alignment);
  }
  for (const std::vector<int64_t>* v : {&s.pre, &s.post, &s.stride, &s.dilation}) put_all(*v);
  return k;
}

void conv_cudnn(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                bool transposed) {
  const std::string_view op = transposed ? "conv_transpose (cuDNN)" : "conv (cuDNN)";
  const Device device = out.device();
  // cuDNN wants input and weight laid out like the output: ATen's conversions, recorded.
  const MemoryFormat fmt = p.channels_last ? MemoryFormat::ChannelsLast3d : MemoryFormat::Contiguous;
  const Tensor x = input.is_contiguous(fmt) ? input : input.contiguous(fmt);
  const Tensor w = weight.is_contiguous(fmt) ? weight : weight.contiguous(fmt);
  // 2-D convolutions arrive as 3-D with a trivial depth; cuDNN gets them back as 2-D.
  const bool drop_depth = x.size(2) == 1 && w.size(2) == 1 && out.size(2) == 1 && p.stride[0] == 1 &&
                          p.padding[0] == 0 && p.dilation[0] == 1;
  ConvSpec s{transposed, {}, {}, {}, {}};
  for (int i = drop_depth ? 1 : 0; i < 3; ++i) {
    const int64_t k = w.size(2 + i), eff = p.dilation[static_cast<size_t>(i)] * (k - 1) + 1;
    // The trailing padding that gives exactly these sizes (the "same" modes can be uneven);
    // in and out are the forward convolution's, which for a transposed one run backwards.
    const int64_t in = transposed ? out.size(2 + i) : x.size(2 + i), o = transposed ? x.size(2 + i) : out.size(2 + i);
    const int64_t pre = p.padding[static_cast<size_t>(i)];
    s.pre.push_back(pre);
    s.post.push_back(std::max<int64_t>(0, (o - 1) * p.stride[static_cast<size_t>(i)] + eff - in - pre));
    s.stride.push_back(p.stride[static_cast<size_t>(i)]);
    s.dilation.push_back(p.dilation[static_cast<size_t>(i)]);
  }
  const TensorInfo xi = info(x, 'x', drop_depth), wi = info(w, 'w', drop_depth), yi = info(out, 'y', drop_depth);
  const Pointers pointers{x.data_ptr(), w.data_ptr(), out.data_ptr()};
  static std::mutex mutex;
  static std::unordered_map<std::string, Plan> cache;
  const bool benchmark = cuda::cudnn_benchmark();
  const std::string key = key_of(device, s, out.dtype(), xi, wi, yi);
  {
    const cuda::cudnn::HandleLock handle(device);
    const Desc* plan = nullptr;
    int64_t workspace = 0;
    {
      // Held while a benchmark times candidates too: two threads must not time on one stream.
      std::lock_guard<std::mutex> lock(mutex);
      auto it = cache.find(key);
      if (it == cache.end()) {
        std::vector<Plan> candidates = candidate_plans(handle.get(), s, xi, wi, yi, out.dtype(), !benchmark, op);
        Plan chosen = benchmark ? fastest_plan(handle.get(), std::move(candidates), pointers, device, op)
                                : std::move(candidates.front());
        it = cache.emplace(key, std::move(chosen)).first;
      }
      plan = it->second.plan.get();  // nodes are stable across rehashing and never erased
      workspace = it->second.workspace;
    }
    const Tensor ws = workspace_tensor(workspace, device);
    cuda::cudnn::check(execute(handle.get(), *plan, pointers, workspace_ptr(ws), op), "cudnnBackendExecute", op);
    cuda::detail::check_launch(cudaGetLastError(), "cudnnBackendExecute", op, device);
  }
  if (bias.defined()) add_(out, bias.view({1, bias.size(0), 1, 1, 1}));
}

// An output with elements from an input or weight without any (no input channels, or a zero
// spatial size that padding makes up for) sums nothing: the bias alone, as on the CPU. cuDNN
// refuses tensors with a zero dim, so they do not reach it.
bool wrote_empty_sum(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (input.numel() != 0 && weight.numel() != 0) return false;
  out.fill_(0);
  if (bias.defined()) add_(out, bias.view({1, bias.size(0), 1, 1, 1}));
  return true;
}

void conv_cuda(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  if (out.numel() == 0 || wrote_empty_sum(out, input, weight, bias)) return;
  conv_cudnn(out, input, weight, bias, p, false);
}
void conv_transpose_cuda(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
                         const ConvParams& p) {
  if (out.numel() == 0 || wrote_empty_sum(out, input, weight, bias)) return;
  conv_cudnn(out, input, weight, bias, p, true);
}

}  // namespace

void register_cudnn_conv_kernels(dispatch::KernelTable& table) {
  using dispatch::OpId;
  table.set<OpId::conv2d>(DeviceType::CUDA, conv_cuda, "conv_cudnn");
  table.set<OpId::conv3d>(DeviceType::CUDA, conv_cuda, "conv_cudnn");
  table.set<OpId::conv_transpose2d>(DeviceType::CUDA, conv_transpose_cuda, "conv_transpose_cudnn");
  table.set<OpId::conv_transpose3d>(DeviceType::CUDA, conv_transpose_cuda, "conv_transpose_cudnn");
}

}  // namespace lg

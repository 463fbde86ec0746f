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
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <cudnn.h>

#include <layoutguard/cuda.h>
#include <layoutguard/factories.h>
#include <layoutguard/pointwise.h>

#include "cuda/register.h"
#include "cuda/runtime.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::ConvParams;

void cudnn_check(cudnnStatus_t status, const char* expr, std::string_view op) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  throw DeviceError(lg::detail::str("[", op, "] cuDNN call `", expr, "` failed: ", cudnnGetErrorString(status),
                                    detail[0] ? " (" : "", detail, detail[0] ? ")" : ""));
}
#define LG_CUDNN_CHECK(expr, op) cudnn_check((expr), #expr, (op))

// A backend descriptor, destroyed with its owner.
class Desc {
 public:
  Desc(cudnnBackendDescriptorType_t type, std::string_view op) : op_(op) {
    LG_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_), op_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  ~Desc() {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  template <typename T>
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const T* values) {
    LG_CUDNN_CHECK(cudnnBackendSetAttribute(d_, name, type, count, values), op_);
  }
  void set_desc(cudnnBackendAttributeName_t name, const Desc& other) {
    cudnnBackendDescriptor_t o = other.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o);
  }
  void finalize() { LG_CUDNN_CHECK(cudnnBackendFinalize(d_), op_); }
  cudnnStatus_t try_finalize() { return cudnnBackendFinalize(d_); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
  std::string op_;
};

cudnnHandle_t handle_for(Device device) {
  static std::mutex mutex;
  static std::map<int, cudnnHandle_t> handles;
  cudaStream_t stream = cuda::detail::stream_for(device);
  std::lock_guard<std::mutex> lock(mutex);
  cudnnHandle_t& h = handles[device.index()];
  if (h == nullptr) {
    LG_CUDNN_CHECK(cudnnCreate(&h), "cudnn");
    LG_CUDNN_CHECK(cudnnSetStream(h, stream), "cudnn");
  }
  return h;
}

cudnnDataType_t data_type(DType dt) {
  switch (dt) {
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

// What cuDNN is told about one tensor.
struct TensorInfo {
  int64_t uid;
  std::vector<int64_t> dims, strides;
  int64_t alignment;
};

// The 5-D (N, C, D, H, W) view as cuDNN sees it: 4-D when the depth is a plain size 1.
TensorInfo info(const Tensor& t, int64_t uid, bool drop_depth) {
  TensorInfo i{uid, {}, {}, 16};
  for (int64_t d = 0; d < 5; ++d) {
    if (drop_depth && d == 2) continue;
    i.dims.push_back(t.size(d));
    i.strides.push_back(t.stride(d));
  }
  const auto address = reinterpret_cast<uintptr_t>(t.data_ptr());
  while (i.alignment > 1 && address % static_cast<uintptr_t>(i.alignment) != 0) i.alignment /= 2;
  return i;
}

struct Plan {
  std::unique_ptr<Desc> plan;
  int64_t workspace = 0;
};

// The device pointers of one execution, in the order of kUids.
constexpr std::array<int64_t, 3> kUids{'x', 'w', 'y'};
using Pointers = std::array<void*, 3>;

cudnnStatus_t execute(cudnnHandle_t handle, const Desc& plan, Pointers pointers, void* workspace, std::string_view op) {
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, op);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, kUids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize();
  return cudnnBackendExecute(handle, plan.get(), pack.get());
}

// The workspace an engine asks for; none (an undefined tensor, a null pointer) for zero bytes.
Tensor workspace_tensor(int64_t bytes, Device device) {
  return bytes > 0 ? empty({bytes}, TensorOptions().dtype(kUInt8).device(device)) : Tensor();
}

void* workspace_ptr(const Tensor& ws) { return ws.defined() ? ws.data_ptr() : nullptr; }

std::unique_ptr<Desc> tensor_desc(const TensorInfo& t, cudnnDataType_t dt, std::string_view op) {
  auto d = std::make_unique<Desc>(CUDNN_BACKEND_TENSOR_DESCRIPTOR, op);
  d->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
  d->set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<int64_t>(t.dims.size()), t.dims.data());
  d->set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<int64_t>(t.strides.size()), t.strides.data());
  d->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &t.uid);
  d->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &t.alignment);
  d->finalize();
  return d;
}

// Whether an engine configuration runs on tensor cores (for float32 data: TF32).
bool uses_tensor_cores(cudnnBackendDescriptor_t config) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "cudnn");
  cudnnBackendDescriptor_t e = engine.get();
  int64_t count = 0;
  if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &e) !=
      CUDNN_STATUS_SUCCESS)
    return true;  // unknown: keep it out when TF32 is off
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               static_cast<int64_t>(notes.size()), &count, notes.data()) != CUDNN_STATUS_SUCCESS)
    return true;
  for (int64_t i = 0; i < count; ++i)
    if (notes[static_cast<size_t>(i)] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE) return true;
  return false;
}

struct ConvSpec {
  bool transposed;
  std::vector<int64_t> pre, post, stride, dilation;
};

// The execution plans cuDNN can finalise for one convolution, in its heuristics' order of
// preference (mode A, then the fallback list); with `first_only`, just the first of them.
std::vector<Plan> candidate_plans(cudnnHandle_t handle, const ConvSpec& s, const TensorInfo& x, const TensorInfo& w,
                                  const TensorInfo& y, DType dtype, bool first_only, std::string_view op) {
  const cudnnDataType_t dt = data_type(dtype);
  const cudnnDataType_t compute = dtype == kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  auto xd = tensor_desc(x, dt, op), wd = tensor_desc(w, dt, op), yd = tensor_desc(y, dt, op);
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

  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, op);
  cudnnBackendDescriptor_t ops[1] = {operation.get()};
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, ops);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  graph.finalize();

  std::vector<Plan> plans;
  for (cudnnBackendHeurMode_t heur_mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, op);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode);
    heur.finalize();
    // Benchmark mode takes every configuration the heuristics know (as PyTorch's benchmark
    // does); otherwise the first few are plenty to find one that finalises.
    int64_t wanted = 8;
    if (!first_only &&
        cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &wanted,
                                 nullptr) != CUDNN_STATUS_SUCCESS)
      wanted = 32;
    wanted = std::clamp<int64_t>(wanted, 1, 256);
    std::vector<std::unique_ptr<Desc>> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < wanted; ++i) {
      configs.push_back(std::make_unique<Desc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, op));
      raw.push_back(configs.back()->get());
    }
    int64_t returned = 0;
    if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, wanted,
                                 &returned, raw.data()) != CUDNN_STATUS_SUCCESS)
      continue;
    for (int64_t i = 0; i < returned; ++i) {
      if (dtype == kFloat32 && !cuda::allow_tf32() && uses_tensor_cores(raw[static_cast<size_t>(i)])) continue;
      auto plan = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, op);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      cudnnBackendDescriptor_t cfg = raw[static_cast<size_t>(i)];
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
      if (plan->try_finalize() != CUDNN_STATUS_SUCCESS) continue;
      Plan p;
      int64_t count = 0;
      LG_CUDNN_CHECK(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                              &count, &p.workspace),
                     op);
      p.plan = std::move(plan);
      plans.push_back(std::move(p));
      if (first_only) return plans;
    }
  }
  if (!plans.empty()) return plans;
  throw NotImplementedError(lg::detail::str("[", op, "] cuDNN has no engine for this convolution (", dtype,
                                            ", input dims ", IntArrayRef(x.dims), " strides ", IntArrayRef(x.strides),
                                            ", weight dims ", IntArrayRef(w.dims), ")"));
}

// Benchmark mode: the candidate that runs fastest on the call's own tensors (one warm-up, then
// the best of three timed runs each). Candidates whose workspace cannot be allocated or whose
// execution fails are skipped, as PyTorch's benchmark skips them.
Plan fastest_plan(cudnnHandle_t handle, std::vector<Plan> candidates, Pointers pointers, Device device,
                  std::string_view op) {
  cudaStream_t stream = cuda::detail::stream_for(device);
  cudaEvent_t start = nullptr, stop = nullptr;
  LG_CUDA_CHECK(cudaEventCreate(&start), op);
  LG_CUDA_CHECK(cudaEventCreate(&stop), op);
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
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
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
  cudnnHandle_t handle = handle_for(device);
  const Pointers pointers{x.data_ptr(), w.data_ptr(), out.data_ptr()};
  static std::mutex mutex;
  static std::unordered_map<std::string, Plan> cache;
  const bool benchmark = cuda::cudnn_benchmark();
  const std::string key = key_of(device, s, out.dtype(), xi, wi, yi);
  const Desc* plan = nullptr;
  int64_t workspace = 0;
  {
    // Held while a benchmark times candidates too: two threads must not time on one stream.
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it == cache.end()) {
      std::vector<Plan> candidates = candidate_plans(handle, s, xi, wi, yi, out.dtype(), !benchmark, op);
      Plan chosen = benchmark ? fastest_plan(handle, std::move(candidates), pointers, device, op)
                              : std::move(candidates.front());
      it = cache.emplace(key, std::move(chosen)).first;
    }
    plan = it->second.plan.get();  // nodes are stable across rehashing and never erased
    workspace = it->second.workspace;
  }
  const Tensor ws = workspace_tensor(workspace, device);
  cudnn_check(execute(handle, *plan, pointers, workspace_ptr(ws), op), "cudnnBackendExecute", op);
  cuda::detail::check_launch(cudaGetLastError(), "cudnnBackendExecute", op, device);
  if (bias.defined()) add_(out, bias.view({1, bias.size(0), 1, 1, 1}));
}

void conv_cuda(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p) {
  if (out.numel() == 0) return;
  conv_cudnn(out, input, weight, bias, p, false);
}
void conv_transpose_cuda(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
                         const ConvParams& p) {
  if (out.numel() == 0) return;
  if (input.numel() == 0) {
    out.fill_(0);
    if (bias.defined()) add_(out, bias.view({1, bias.size(0), 1, 1, 1}));
    return;
  }
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

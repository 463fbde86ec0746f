// batch_norm on cuDNN 9's norm-forward node (backend API, CUDNN_BATCH_NORM mode):
// - training phase: cuDNN computes the batch statistics, normalises, and writes the updated
//   running stats into fresh buffers, which are copied back into the caller's;
// - inference phase: cuDNN takes a mean and an inverse standard deviation, made here from the
//   running stats (one rsqrt over C values).
// The statistics, scale and bias travel as float32 {1, C, 1, 1} tensors, as cuDNN requires for
// every data dtype; stats of other dtypes (a half model's) are converted per call and the
// running stats converted back. The input is described with the canonical strides of its
// format (NCHW or channels-last), so size-1 dims never carry odd strides into cuDNN. Plans are
// cached per (device, phase, running stats, dtype, dims, strides, alignments), a refusal too
// (NOT_SUPPORTED, or any error while the plan is built, which is logged once), so a shape cuDNN
// declines costs one heuristics query, not one per call.
#include "cuda/cudnn_batch_norm.h"

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <layoutguard/cuda.h>
#include <layoutguard/factories.h>
#include <layoutguard/pointwise.h>

#include "core/derived_cache.h"
#include "core/log.h"
#include "cuda/cudnn_backend.h"
#include "cuda/runtime.h"
#include "dispatch/dispatcher.h"

namespace lg::cuda {
namespace {

using cudnn::Desc;
using cudnn::TensorInfo;

constexpr std::string_view kOp = "batch_norm (cuDNN)";

// Unique ids of the graph's tensors (the variant pack names them by these).
enum Uid : int64_t {
  kX = 1,
  kY,
  kScale,
  kBias,
  kMean,
  kInvVariance,
  kEpsilon,
  kMomentum,
  kRunningMeanIn,
  kRunningVarIn,
  kRunningMeanOut,
  kRunningVarOut,
};

// How cuDNN sees the input: dims of the 5-D view (4-D when the depth is 1) and the canonical
// strides of its format, plus the per-channel tensors' dims and strides.
struct Geometry {
  std::vector<int64_t> dims, strides, stat_dims, stat_strides;
};

// Strides of a dense tensor with `dims` whose dims are laid out from outermost to innermost in
// `order`.
std::vector<int64_t> dense_strides(const std::vector<int64_t>& dims, const std::vector<size_t>& order) {
  std::vector<int64_t> strides(dims.size());
  int64_t step = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i]] = step;
    step *= std::max<int64_t>(dims[order[i]], 1);
  }
  return strides;
}

std::optional<Geometry> geometry_of(const Tensor& out, const Tensor& input) {
  if (out.strides() != input.strides()) return std::nullopt;
  // Channels-last is preferred when both descriptions hold (C == 1, or 1x1 maps): the NHWC
  // engines are cuDNN's batch-norm engines.
  const bool channels_last = input.is_contiguous(MemoryFormat::ChannelsLast3d);
  if (!channels_last && !input.is_contiguous()) return std::nullopt;
  Geometry g;
  for (int64_t d = 0; d < 5; ++d)
    if (d != 2 || input.size(2) != 1) g.dims.push_back(input.size(d));
  const size_t rank = g.dims.size();
  std::vector<size_t> order;  // outermost first
  if (channels_last) {
    order.push_back(0);
    for (size_t d = 2; d < rank; ++d) order.push_back(d);
    order.push_back(1);
  } else {
    for (size_t d = 0; d < rank; ++d) order.push_back(d);
  }
  g.strides = dense_strides(g.dims, order);
  g.stat_dims.assign(rank, 1);
  g.stat_dims[1] = input.size(1);
  g.stat_strides.assign(rank, input.size(1));
  g.stat_strides[1] = 1;
  return g;
}

struct PlanKey {
  std::string bytes;
  bool operator==(const PlanKey&) const = default;
};

PlanKey key_of(Device device, bool training, bool running, DType dt, const Geometry& g, int64_t x_align,
               int64_t y_align) {
  PlanKey k;
  const auto put = [&k](int64_t v) { k.bytes.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(device.index());
  put(training);
  put(running);
  put(static_cast<int64_t>(dt));
  put(static_cast<int64_t>(g.dims.size()));
  for (int64_t v : g.dims) put(v);
  for (int64_t v : g.strides) put(v);
  put(x_align);
  put(y_align);
  return k;
}

struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const { return std::hash<std::string>()(k.bytes); }
};

// The plan for one key, or an empty plan when cuDNN declines the graph.
cudnn::Plan build_plan(cudnnHandle_t handle, bool training, bool running, DType dtype, const Geometry& g,
                       int64_t x_align, int64_t y_align) {
  const cudnnDataType_t data = cudnn::data_type(dtype);
  const cudnnDataType_t stat = CUDNN_DATA_FLOAT;
  const auto tensor = [&](int64_t uid, cudnnDataType_t dt, bool per_channel, int64_t align) {
    return cudnn::tensor_desc(
        TensorInfo{uid, per_channel ? g.stat_dims : g.dims, per_channel ? g.stat_strides : g.strides, align}, dt, kOp);
  };
  const auto x = tensor(kX, data, false, x_align), y = tensor(kY, data, false, y_align);
  const auto scale = tensor(kScale, stat, true, 16), bias = tensor(kBias, stat, true, 16);
  const auto mean = tensor(kMean, stat, true, 16), inv_variance = tensor(kInvVariance, stat, true, 16);
  const int64_t rank = static_cast<int64_t>(g.dims.size());

  Desc operation(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, kOp);
  const cudnnBackendNormMode_t mode = CUDNN_BATCH_NORM;
  const cudnnBackendNormFwdPhase_t phase = training ? CUDNN_NORM_FWD_TRAINING : CUDNN_NORM_FWD_INFERENCE;
  operation.set(CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode);
  operation.set(CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase);
  operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, *x);
  operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, *y);
  operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, *scale);
  operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, *bias);
  // Training writes the batch mean and inverse deviation (kept for a backward pass, unused
  // here); inference reads them.
  operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, *mean);
  operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, *inv_variance);
  std::unique_ptr<Desc> epsilon, momentum, rm_in, rv_in, rm_out, rv_out;
  if (training) {
    epsilon = cudnn::scalar_desc(kEpsilon, rank, stat, kOp);
    operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, *epsilon);
    if (running) {
      momentum = cudnn::scalar_desc(kMomentum, rank, stat, kOp);
      rm_in = tensor(kRunningMeanIn, stat, true, 16);
      rv_in = tensor(kRunningVarIn, stat, true, 16);
      rm_out = tensor(kRunningMeanOut, stat, true, 16);
      rv_out = tensor(kRunningVarOut, stat, true, 16);
      operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC, *momentum);
      operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC, *rm_in);
      operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC, *rv_in);
      operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC, *rm_out);
      operation.set_desc(CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC, *rv_out);
    }
  }
  cudnnStatus_t status = operation.try_finalize();
  if (cudnn::is_not_supported(status)) return {};
  cudnn::check(status, "cudnnBackendFinalize(norm forward operation)", kOp);
  const Desc* ops[1] = {&operation};
  const std::unique_ptr<Desc> graph = cudnn::operation_graph(handle, ops, status, kOp);
  if (cudnn::is_not_supported(status)) return {};
  cudnn::check(status, "cudnnBackendFinalize(operation graph)", kOp);
  std::vector<cudnn::Plan> plans = cudnn::finalized_plans(handle, *graph, true, {}, kOp);
  return plans.empty() ? cudnn::Plan{} : std::move(plans.front());
}

// A per-channel float32 tensor cuDNN can read: `t` itself when it already is one (contiguous,
// 16-byte aligned), else a converted copy; `fill` everywhere when t is undefined.
Tensor stat_tensor(const Tensor& t, int64_t channels, double fill, Device device) {
  const TensorOptions f32 = TensorOptions().dtype(kFloat32).device(device);
  if (!t.defined()) return full({channels}, fill, f32);
  if (t.dtype() == kFloat32 && t.is_contiguous() && cudnn::alignment_of(t.data_ptr()) == 16) return t;
  Tensor c = t.to(f32).contiguous();
  return cudnn::alignment_of(c.data_ptr()) == 16 ? c : c.clone();
}

// stat_tensor, kept until t changes (core/derived_cache.h): weights, and in evaluation the
// running stats, are the same on every forward, and converting or filling them took a launch
// and an allocation each per call.
Tensor cached_stat_tensor(const Tensor& t, int64_t channels, double fill, Device device) {
  static auto* cache = new lg::detail::DerivedCache(4096, int64_t{256} << 20);  // never destroyed: device memory
  return cache->get({t}, {channels, lg::detail::double_param(fill), device.index()},
                    [&] { return stat_tensor(t, channels, fill, device); });
}

// 1 / sqrt(running_var + eps) for inference, kept likewise (two launches per call before).
Tensor cached_inv_variance(const Tensor& running_var, double eps, Device device) {
  static auto* cache = new lg::detail::DerivedCache(4096, int64_t{256} << 20);  // never destroyed: device memory
  return cache->get({running_var}, {lg::detail::double_param(eps), device.index()}, [&] {
    return rsqrt(add(running_var.to(TensorOptions().dtype(kFloat32).device(device)), eps));
  });
}

}  // namespace

bool batch_norm_cudnn(const Tensor& out, const Tensor& input, const dispatch::ChannelNormParams& p) {
  if (!p.across_batch || out.numel() == 0) return false;
  const DType dtype = input.dtype();
  if (dtype != kFloat16 && dtype != kBFloat16 && dtype != kFloat32) return false;
  const std::optional<Geometry> g = geometry_of(out, input);
  if (!g) return false;
  const bool training = p.use_input_stats;
  const bool running = training && p.running_mean.defined();
  const Device device = out.device();
  const int64_t x_align = cudnn::alignment_of(input.data_ptr()), y_align = cudnn::alignment_of(out.data_ptr());
  const PlanKey key = key_of(device, training, running, dtype, *g, x_align, y_align);

  static std::mutex mutex;
  static std::unordered_map<PlanKey, cudnn::Plan, PlanKeyHash> cache;
  const Desc* plan = nullptr;
  int64_t workspace = 0;
  {
    // The handle only while cuDNN uses it (building here, executing below): the tensors made
    // in between run ops, whose hooks may run a convolution that takes it too.
    const cudnn::HandleLock handle(device);
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it == cache.end()) {
      cudnn::Plan built;
      try {
        built = build_plan(handle.get(), training, running, dtype, *g, x_align, y_align);
      } catch (const Error& e) {
        // cuDNN also refuses graphs with statuses other than NOT_SUPPORTED (BAD_PARAM at
        // finalize, for a layout its engines lack): that is a decline too, cached like one, so
        // the shape costs one warning, not an exception per call.
        logging::logger().warn("[batch_norm] cuDNN built no plan for {} {} ({}); our kernels take it: {}",
                               dtype_name(dtype), to_string(IntArrayRef(g->dims)),
                               training ? "training" : "inference", e.what());
      }
      it = cache.emplace(key, std::move(built)).first;
    }
    plan = it->second.plan.get();  // nodes are stable across rehashing and never erased
    workspace = it->second.workspace;
  }
  if (plan == nullptr) return false;  // declined: the caller's kernels run

  dispatch::note_kernel("batch_norm_cudnn");
  const int64_t C = input.size(1);
  const TensorOptions f32 = TensorOptions().dtype(kFloat32).device(device);
  const Tensor scale = cached_stat_tensor(p.weight, C, 1.0, device), bias = cached_stat_tensor(p.bias, C, 0.0, device);
  Tensor mean, inv_variance;
  if (training) {
    mean = empty({C}, f32);
    inv_variance = empty({C}, f32);
  } else {
    mean = cached_stat_tensor(p.running_mean, C, 0.0, device);
    inv_variance = cached_inv_variance(p.running_var, p.eps, device);
  }
  // By-value scalars: cuDNN reads them from host memory during the call.
  float epsilon = static_cast<float>(p.eps), momentum = static_cast<float>(p.momentum);
  std::vector<int64_t> uids{kX, kY, kScale, kBias, kMean, kInvVariance};
  std::vector<void*> pointers{input.data_ptr(), out.data_ptr(), scale.data_ptr(), bias.data_ptr(), mean.data_ptr(),
                              inv_variance.data_ptr()};
  Tensor rm_in, rv_in, rm_out, rv_out;
  if (training) {
    uids.push_back(kEpsilon);
    pointers.push_back(&epsilon);
  }
  if (running) {
    rm_in = stat_tensor(p.running_mean, C, 0.0, device);
    rv_in = stat_tensor(p.running_var, C, 1.0, device);
    rm_out = empty({C}, f32);
    rv_out = empty({C}, f32);
    for (auto [uid, ptr] : std::array<std::pair<int64_t, void*>, 5>{{{kMomentum, &momentum},
                                                                    {kRunningMeanIn, rm_in.data_ptr()},
                                                                    {kRunningVarIn, rv_in.data_ptr()},
                                                                    {kRunningMeanOut, rm_out.data_ptr()},
                                                                    {kRunningVarOut, rv_out.data_ptr()}}}) {
      uids.push_back(uid);
      pointers.push_back(ptr);
    }
  }
  {
    const Tensor ws = cudnn::workspace_tensor(workspace, device);
    const cudnn::HandleLock handle(device);
    cudnn::check(cudnn::execute(handle.get(), *plan, uids, pointers, cudnn::workspace_ptr(ws), kOp),
                 "cudnnBackendExecute", kOp);
    cuda::detail::check_launch(cudaGetLastError(), "cudnnBackendExecute", kOp, device);
  }
  if (running) {
    p.running_mean.copy_(rm_out);
    p.running_var.copy_(rv_out);
  }
  return true;
}

}  // namespace lg::cuda

// What every cuDNN op here needs from cuDNN 9's backend (graph) API: checked calls, owned
// descriptors, one handle per device bound to the device's stream, tensor descriptors, engine
// plans from the heuristics, and execution through a variant pack. The ops themselves
// (cudnn_conv.cpp, cudnn_batch_norm.cpp) build their operation and graph and keep their own
// plan caches. Only built when cuDNN is found.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <cudnn.h>

#include <layoutguard/device.h>
#include <layoutguard/tensor.h>

namespace lg::cuda::cudnn {

// Throws lg::DeviceError "[op] cuDNN call `expr` failed: <status> (<cuDNN's last error>)"
// unless status is CUDNN_STATUS_SUCCESS.
void check(cudnnStatus_t status, const char* expr, std::string_view op);

// cuDNN 9 groups its statuses by thousands; 3xxx say "this engine, shape, layout or type is
// not supported", which an op answers by taking another path rather than by failing.
inline bool is_not_supported(cudnnStatus_t status) { return static_cast<int>(status) / 1000 == 3; }

// A backend descriptor, destroyed with its owner.
class Desc {
 public:
  Desc(cudnnBackendDescriptorType_t type, std::string_view op);
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  ~Desc();
  cudnnBackendDescriptor_t get() const { return d_; }
  template <typename T>
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const T* values) {
    check(cudnnBackendSetAttribute(d_, name, type, count, values), "cudnnBackendSetAttribute", op_);
  }
  void set_desc(cudnnBackendAttributeName_t name, const Desc& other);
  void finalize();
  cudnnStatus_t try_finalize() { return cudnnBackendFinalize(d_); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
  std::string op_;
};

// The handle of a device (created on first use, bound to the device's one stream), held by
// this thread while the object lives. cuDNN forbids using one handle from two threads at once,
// and convolution and batch norm build and run their plans with it from any thread: each holds
// it from its plan lookup to its execution. Take it before a plan cache's own mutex.
class HandleLock {
 public:
  explicit HandleLock(Device device);
  cudnnHandle_t get() const { return handle_; }

 private:
  std::unique_lock<std::mutex> lock_;
  cudnnHandle_t handle_;
};

cudnnDataType_t data_type(DType dt);

// What cuDNN is told about one tensor: its unique id in the graph, dims, strides and the
// largest power of two (up to 16) its base address is aligned to.
struct TensorInfo {
  int64_t uid;
  std::vector<int64_t> dims, strides;
  int64_t alignment = 16;
};

// The largest power of two up to 16 that divides the address.
int64_t alignment_of(const void* address);

std::unique_ptr<Desc> tensor_desc(const TensorInfo& t, cudnnDataType_t dt, std::string_view op);
// A scalar passed by value (epsilon, momentum): `rank` dims of size 1; the variant pack then
// carries a host pointer to the value.
std::unique_ptr<Desc> scalar_desc(int64_t uid, int64_t rank, cudnnDataType_t dt, std::string_view op);

// An operation graph of the given finalised operations; the status of its finalisation is in
// `status` (a graph cuDNN cannot express is "not supported", not an error, for some ops).
std::unique_ptr<Desc> operation_graph(cudnnHandle_t handle, std::span<const Desc* const> ops, cudnnStatus_t& status,
                                      std::string_view op);

struct Plan {
  std::unique_ptr<Desc> plan;
  int64_t workspace = 0;
};

// Engine configurations a caller keeps (true) or skips, e.g. tensor-core ones when TF32 is off.
using EngineFilter = std::function<bool(cudnnBackendDescriptor_t config)>;

// The execution plans cuDNN can finalise for a graph, in its heuristics' order of preference
// (mode A, then the fallback list); with `first_only`, just the first of them. Empty when no
// engine takes the graph.
std::vector<Plan> finalized_plans(cudnnHandle_t handle, const Desc& graph, bool first_only, const EngineFilter& keep,
                                  std::string_view op);

// Whether an engine configuration runs on tensor cores (for float32 data: TF32).
bool uses_tensor_cores(cudnnBackendDescriptor_t config);

// Runs a plan with the device (or, for by-value scalars, host) pointers of the given uids.
cudnnStatus_t execute(cudnnHandle_t handle, const Desc& plan, std::span<const int64_t> uids,
                      std::span<void* const> pointers, void* workspace, std::string_view op);

// The workspace an engine asks for; none (an undefined tensor, a null pointer) for zero bytes.
Tensor workspace_tensor(int64_t bytes, Device device);
inline void* workspace_ptr(const Tensor& ws) { return ws.defined() ? ws.data_ptr() : nullptr; }

}  // namespace lg::cuda::cudnn

#define LG_CUDNN_CHECK(expr, op) ::lg::cuda::cudnn::check((expr), #expr, (op))

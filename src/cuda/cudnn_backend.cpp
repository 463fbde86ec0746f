// The shared pieces of the cuDNN backend API: see cudnn_backend.h.
#include "cuda/cudnn_backend.h"

#include <algorithm>
#include <array>

#include <layoutguard/error.h>
#include <layoutguard/factories.h>

#include "cuda/runtime.h"

namespace lg::cuda::cudnn {

void check(cudnnStatus_t status, const char* expr, std::string_view op) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  throw DeviceError(lg::detail::str("[", op, "] cuDNN call `", expr, "` failed: ", cudnnGetErrorString(status),
                                    detail[0] ? " (" : "", detail, detail[0] ? ")" : ""));
}

Desc::Desc(cudnnBackendDescriptorType_t type, std::string_view op) : op_(op) {
  LG_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_), op_);
}

Desc::~Desc() {
  if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
}

void Desc::set_desc(cudnnBackendAttributeName_t name, const Desc& other) {
  cudnnBackendDescriptor_t o = other.get();
  set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o);
}

void Desc::finalize() { LG_CUDNN_CHECK(cudnnBackendFinalize(d_), op_); }

namespace {

// One lock per device index (beyond 64 devices two share one: more waiting, never less safety).
std::mutex& handle_mutex(Device device) {
  static std::array<std::mutex, 64> mutexes;
  return mutexes[static_cast<size_t>(device.index()) % mutexes.size()];
}

}  // namespace

HandleLock::HandleLock(Device device)
    : lock_(handle_mutex(device)),
      handle_(cuda::detail::per_device_handle<cudnnHandle_t>(device, [](cudaStream_t stream) {
        cudnnHandle_t h = nullptr;
        LG_CUDNN_CHECK(cudnnCreate(&h), "cudnn");
        LG_CUDNN_CHECK(cudnnSetStream(h, stream), "cudnn");
        return h;
      })) {}

cudnnDataType_t data_type(DType dt) {
  switch (dt) {
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

int64_t alignment_of(const void* address) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  int64_t alignment = 16;
  while (alignment > 1 && a % static_cast<uintptr_t>(alignment) != 0) alignment /= 2;
  return alignment;
}

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

std::unique_ptr<Desc> scalar_desc(int64_t uid, int64_t rank, cudnnDataType_t dt, std::string_view op) {
  auto d = std::make_unique<Desc>(CUDNN_BACKEND_TENSOR_DESCRIPTOR, op);
  const std::vector<int64_t> ones(static_cast<size_t>(rank), 1);
  const int64_t alignment = 16;
  const bool by_value = true;
  d->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
  d->set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, ones.data());
  d->set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, ones.data());
  d->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  d->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  d->set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
  d->finalize();
  return d;
}

std::unique_ptr<Desc> operation_graph(cudnnHandle_t handle, std::span<const Desc* const> ops, cudnnStatus_t& status,
                                      std::string_view op) {
  auto graph = std::make_unique<Desc>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, op);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const Desc* d : ops) raw.push_back(d->get());
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(raw.size()),
             raw.data());
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  status = graph->try_finalize();
  return graph;
}

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

std::vector<Plan> finalized_plans(cudnnHandle_t handle, const Desc& graph, bool first_only, const EngineFilter& keep,
                                  std::string_view op) {
  std::vector<Plan> plans;
  for (cudnnBackendHeurMode_t heur_mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, op);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode);
    if (heur.try_finalize() != CUDNN_STATUS_SUCCESS) continue;
    // All candidates are wanted for timing (as PyTorch's benchmark takes them); otherwise the
    // first few are plenty to find one that finalises.
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
      cudnnBackendDescriptor_t cfg = raw[static_cast<size_t>(i)];
      if (keep && !keep(cfg)) continue;
      auto plan = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, op);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
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
  return plans;
}

cudnnStatus_t execute(cudnnHandle_t handle, const Desc& plan, std::span<const int64_t> uids,
                      std::span<void* const> pointers, void* workspace, std::string_view op) {
  LG_CHECK(uids.size() == pointers.size(), "[", op, "] cuDNN variant pack: ", uids.size(), " uids but ",
           pointers.size(), " pointers");
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, op);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(pointers.size()),
           pointers.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize();
  return cudnnBackendExecute(handle, plan.get(), pack.get());
}

Tensor workspace_tensor(int64_t bytes, Device device) {
  return bytes > 0 ? empty({bytes}, TensorOptions().dtype(kUInt8).device(device)) : Tensor();
}

}  // namespace lg::cuda::cudnn

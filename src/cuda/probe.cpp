// lg::cuda queries in a CUDA build: device count from the runtime, availability proven by
// running the probe kernel once.
#include <mutex>
#include <string>

#include <cuda_runtime_api.h>

#include <layoutguard/cuda.h>

#include "cuda/kernels/probe.h"

namespace lg::cuda {
namespace {

struct ProbeResult {
  int devices = 0;
  bool kernel_ran = false;
  std::string report;
};

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

ProbeResult run() {
  ProbeResult r;
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  r.report = "CUDA " + version_text(runtime) + " runtime, ";
  // No driver or no device is an answer ("0 devices"), not an error.
  if (cudaGetDeviceCount(&r.devices) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error the failed query left
    r.devices = 0;
  }
  r.report += std::to_string(r.devices) + (r.devices == 1 ? " device" : " devices");
  for (int i = 0; i < r.devices; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    r.report += (i ? ", " : ": ") + std::string(prop.name) + " (sm_" +
                std::to_string(prop.major) + std::to_string(prop.minor) + ")";
  }
  if (r.devices > 0) {
    int observed = 0;
    const cudaError_t err = kernels::run_probe(42, &observed);
    r.kernel_ran = err == cudaSuccess && observed == 42;
    r.report += r.kernel_ran ? "; probe kernel ran"
                             : std::string("; probe kernel failed: ") + cudaGetErrorString(err);
  }
  return r;
}

const ProbeResult& probe() {
  static const ProbeResult result = run();
  return result;
}

}  // namespace

bool is_available() { return probe().kernel_ran; }
int device_count() { return probe().devices; }
std::string probe_report() { return probe().report; }

}  // namespace lg::cuda

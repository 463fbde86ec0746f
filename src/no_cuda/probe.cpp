// lg::cuda queries in a build without CUDA: no devices, ever.
#include <layoutguard/cuda.h>

namespace lg::cuda {

bool is_available() { return false; }
int device_count() { return 0; }
std::string probe_report() { return "built without CUDA (nvcc not found at configure time, or -Dcuda=disabled)"; }

}  // namespace lg::cuda

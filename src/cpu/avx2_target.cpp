// The process-wide switch over the AVX-512 kernel forms (cpu/avx2_target.h).
#include "cpu/avx2_target.h"

#include <atomic>

namespace lg::cpu {
namespace {
std::atomic<bool> avx512_enabled{true};
}  // namespace

bool use_avx512() { return cpu_has_avx512() && avx512_enabled.load(std::memory_order_relaxed); }

void set_avx512_enabled(bool enabled) { avx512_enabled.store(enabled, std::memory_order_relaxed); }

}  // namespace lg::cpu

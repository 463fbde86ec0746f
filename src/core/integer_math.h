// Two's-complement integer arithmetic the way PyTorch computes it, without signed-overflow UB:
// shared by the CPU kernels and the CUDA kernels (callable on the device under nvcc), so both
// backends wrap alike. Header-only and free of library includes so .cu files can use it.
#pragma once

#include <type_traits>

#if defined(__CUDACC__)
#define LG_HOST_DEVICE __host__ __device__
#else
#define LG_HOST_DEVICE
#endif

namespace lg::integer_math {

template <typename C>
LG_HOST_DEVICE inline C wrap_add(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename C>
LG_HOST_DEVICE inline C wrap_mul(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

// Power by squaring; negative exponents give 0 except for bases 1 and -1 (PyTorch's integer
// pow on tensor exponents).
template <typename C>
LG_HOST_DEVICE inline C int_pow(C base, C exp) {
  if constexpr (std::is_signed_v<C>) {
    if (exp < 0) return base == 1 ? C(1) : base == -1 ? (exp % 2 == 0 ? C(1) : C(-1)) : C(0);
  }
  using U = std::make_unsigned_t<C>;
  U result = 1, b = static_cast<U>(base);
  for (auto e = static_cast<U>(exp); e != 0; e >>= 1) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
  }
  return static_cast<C>(result);
}

}  // namespace lg::integer_math

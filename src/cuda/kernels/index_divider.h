// Division of element indices by a fixed size through a multiply-high and a shift: the
// elementwise kernels decode every element's index into coordinates, one division per dim, and
// a 64-bit integer division is a software routine of about a hundred instructions on the GPU.
// The magic number is computed once on the host (make_geometry) for each size. The method is
// the round-up one of Granlund and Montgomery ("Division by invariant integers using
// multiplication", 1994, fig. 4.1): with 2^(s-1) < d <= 2^s and m = floor(2^64 (2^s - d) / d) + 1,
// n / d = (mulhi(n, m) + n) >> s for every n whose sum with mulhi(n, m) fits in 64 bits, which
// holds for n < 2^63 (element indices always are). Header-only and free of library includes;
// tests/core/test_index_divider.cpp checks it against '/' on the host.
#pragma once

#include <cstdint>

#include "core/integer_math.h"  // LG_HOST_DEVICE

namespace lg::cuda::kernels {

__extension__ typedef unsigned __int128 Uint128;  // __extension__: GCC's type, quiet under -Wpedantic

struct IndexDivider {
  uint64_t divisor = 1;
  uint64_t magic = 1;  // the divisor 1: mulhi(n, 1) = 0, shift 0
  uint32_t shift = 0;

  // 1 <= d <= 2^63. d = 0 (a dim of an empty tensor, for which nothing is launched) gives the
  // divisor 1 rather than dividing by zero here.
  static IndexDivider of(uint64_t d) {
    IndexDivider r;
    if (d == 0) return r;
    r.divisor = d;
    while (r.shift < 64 && (uint64_t{1} << r.shift) < d) ++r.shift;
    const Uint128 above = (static_cast<Uint128>(1) << r.shift) - d;  // 2^s - d < d
    r.magic = static_cast<uint64_t>((above << 64) / d) + 1;
    return r;
  }

  // n / d for 0 <= n < 2^63.
  LG_HOST_DEVICE uint64_t quotient(uint64_t n) const {
#if defined(__CUDA_ARCH__)
    const uint64_t high = __umul64hi(n, magic);
#else
    const uint64_t high = static_cast<uint64_t>((static_cast<Uint128>(n) * magic) >> 64);
#endif
    return (high + n) >> shift;
  }
  // n % d for 0 <= n < 2^63.
  LG_HOST_DEVICE uint64_t remainder(uint64_t n) const { return n - quotient(n) * divisor; }
  // n / d, with n % d in `rest`: one step of decoding a row-major index, innermost dim first.
  LG_HOST_DEVICE uint64_t divmod(uint64_t n, uint64_t& rest) const {
    const uint64_t q = quotient(n);
    rest = n - q * divisor;
    return q;
  }
};

}  // namespace lg::cuda::kernels

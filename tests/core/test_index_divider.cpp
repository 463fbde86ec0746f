// IndexDivider, the multiply-high division of the CUDA kernels' index decoding
// (src/cuda/kernels/index_divider.h), against '/' on the host: every divisor up to 4096 and
// every power of two with its neighbours up to 2^63, over numerators at the edges (0, the
// multiples of d and their neighbours, 2^63 - 1) and a million random ones below 2^63.
#include <cstdint>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "cuda/kernels/index_divider.h"

namespace {

using lg::cuda::kernels::IndexDivider;

constexpr uint64_t kLimit = (uint64_t{1} << 63) - 1;  // the largest index the kernels divide

// The numerators around d's multiples and the ends of the range, plus `random_count` random ones.
std::vector<uint64_t> numerators_for(uint64_t d, std::mt19937_64& rng, int random_count) {
  std::vector<uint64_t> n{0, 1, 2, kLimit, kLimit - 1, d - 1, d, d + 1};
  for (uint64_t k : {uint64_t{2}, uint64_t{3}, uint64_t{1000}, kLimit / d})
    if (k > 0 && d <= kLimit / k) {
      n.push_back(k * d - 1);
      n.push_back(k * d);
      if (k * d < kLimit) n.push_back(k * d + 1);
    }
  for (int r = 0; r < random_count; ++r) n.push_back(rng() & kLimit);
  for (int r = 0; r < random_count; ++r) n.push_back(rng() % (uint64_t{1} << 32));
  return n;
}

int mismatches(uint64_t d, std::mt19937_64& rng, int random_count) {
  const IndexDivider div = IndexDivider::of(d);
  int bad = 0;
  for (uint64_t n : numerators_for(d, rng, random_count))
    if (n <= kLimit && div.quotient(n) != n / d) ++bad;
  return bad;
}

}  // namespace

TEST_SUITE("tensor") {
TEST_CASE("IndexDivider divides like '/' for every divisor to 4096 and around every power of two") {
  std::mt19937_64 rng(61);
  for (uint64_t d = 1; d <= 4096; ++d) REQUIRE_MESSAGE(mismatches(d, rng, 100) == 0, "divisor " << d);
  for (int s = 1; s <= 63; ++s) {
    const uint64_t p = uint64_t{1} << s;
    for (uint64_t d : {p - 1, p, p + 1, p + p / 3})
      if (d >= 1 && d <= (uint64_t{1} << 63)) REQUIRE_MESSAGE(mismatches(d, rng, 2000) == 0, "divisor " << d);
  }
  // The sizes merged dims take in practice: 7x7, 56x56, 3136 x 64 channels, batch x maps.
  for (uint64_t d : {uint64_t{49}, uint64_t{3136}, uint64_t{200704}, uint64_t{12845056}, uint64_t{802816} * 256})
    REQUIRE_MESSAGE(mismatches(d, rng, 200000) == 0, "divisor " << d);
}

TEST_CASE("IndexDivider of 1, of 2^63 and of 0") {
  const IndexDivider one = IndexDivider::of(1), top = IndexDivider::of(uint64_t{1} << 63);
  for (uint64_t n : {uint64_t{0}, uint64_t{5}, kLimit}) {
    CHECK(one.quotient(n) == n);
    CHECK(top.quotient(n) == 0);
  }
  CHECK(IndexDivider{}.quotient(12345) == 12345);  // the default is the divisor 1
  CHECK(IndexDivider::of(0).quotient(12345) == 12345);  // an empty dim: no division by zero
  // divmod and remainder: one decoding step.
  const IndexDivider by49 = IndexDivider::of(49);
  uint64_t rest = 0;
  CHECK(by49.divmod(49 * 1000 + 48, rest) == 1000);
  CHECK(rest == 48);
  CHECK(by49.remainder(49 * 7) == 0);
  CHECK(by49.divisor == 49);
}
}  // TEST_SUITE

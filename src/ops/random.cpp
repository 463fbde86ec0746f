// Random factories: one process-wide generator (mt19937_64) seeded by manual_seed.
//
// Values are produced in memory order of the freshly allocated (dense) output, so rand_like of
// a channels_last tensor draws the same stream as rand of its NHWC buffer.
#include <cmath>
#include <mutex>
#include <numbers>
#include <random>

#include <layoutguard/factories.h>

namespace lg {
namespace {

struct Generator {
  std::mutex mutex;
  std::mt19937_64 engine{0x5eed1a7u};
};

Generator& generator() {
  static Generator g;
  return g;
}

void check_floating(DType dtype, std::string_view op) {
  LG_CHECK_TYPE(is_floating_point(dtype), "[", op, "] received dtype ", dtype,
                "; required a floating dtype (float32, float16, bfloat16 or float64)");
}

// Calls draw(engine) once per element of the dense tensor t, in memory order.
template <typename Draw>
void fill_memory_order(const Tensor& t, Draw&& draw) {
  // Device tensors draw the same sequence on the host and receive it in one copy, so a seed
  // gives the same values on every device.
  if (!t.device().is_cpu()) {
    const Tensor host = empty_strided(t.sizes(), t.strides(), TensorOptions().dtype(t.dtype()));
    fill_memory_order(host, draw);
    t.copy_(host);
    return;
  }
  LG_ASSERT(t.is_non_overlapping_and_dense() && t.storage_offset() == 0,
            "random fill needs a fresh dense tensor");
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  visit_dtype(t.dtype(), [&]<typename T>(std::type_identity<T>) {
    T* data = static_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < t.numel(); ++i) data[i] = Scalar(draw(g.engine)).to<T>();
  });
}

// 53 random bits -> a double uniform in [0, 1).
double uniform01(std::mt19937_64& e) { return static_cast<double>(e() >> 11) * 0x1.0p-53; }

void fill_uniform(const Tensor& t) {
  if (t.dtype() == kFloat64) {
    fill_memory_order(t, uniform01);
  } else {
    // 24 bits for float-sized types so that rounding can never produce 1.0.
    fill_memory_order(t, [](std::mt19937_64& e) { return static_cast<float>(e() >> 40) * 0x1.0p-24f; });
  }
}

void fill_normal(const Tensor& t) {
  fill_memory_order(t, [](std::mt19937_64& e) {
    // Box-Muller; 1 - u keeps the logarithm's argument in (0, 1].
    const double u1 = 1.0 - uniform01(e), u2 = uniform01(e);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  });
}

void fill_integers(const Tensor& t, int64_t low, int64_t high) {
  const auto range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  fill_memory_order(t, [&](std::mt19937_64& e) {
    return static_cast<int64_t>(static_cast<uint64_t>(low) + e() % range);
  });
}

void check_randint_range(int64_t low, int64_t high, DType dtype) {
  LG_CHECK(low < high, "[randint] expects low < high, but got low=", low, " >= high=", high);
  int64_t min = INT64_MIN, max = INT64_MAX;
  if (dtype == kInt32) min = INT32_MIN, max = INT32_MAX;
  if (dtype == kUInt8) min = 0, max = 255;
  if (dtype == kBool) min = 0, max = 1;
  // Floating dtypes: the integers every value up to which is exact (2^mantissa digits), as
  // PyTorch bounds them.
  const int digits = dtype == kFloat16 ? 11 : dtype == kBFloat16 ? 8 : dtype == kFloat32 ? 24 : dtype == kFloat64 ? 53 : 0;
  if (digits > 0) min = -(int64_t{1} << digits), max = int64_t{1} << digits;
  LG_CHECK(low >= min && high - 1 <= max, "[randint] the range [", low, ", ", high,
           ") does not fit dtype ", dtype, " (values ", min, "..", max, ")");
}

// empty_like(t, options, fmt) filled by `fill`; floating dtypes only.
Tensor random_like(const Tensor& t, const TensorOptions& options, MemoryFormat fmt,
                   std::string_view op, void (*fill)(const Tensor&)) {
  Tensor out = empty_like(t, options, fmt);
  check_floating(out.dtype(), op);
  fill(out);
  return out;
}

}  // namespace

void manual_seed(uint64_t seed) {
  Generator& g = generator();
  std::lock_guard lock(g.mutex);
  g.engine.seed(seed);
}

Tensor rand(IntArrayRef sizes, TensorOptions options) {
  check_floating(options.dtype(), "rand");
  Tensor t = empty(sizes, options);
  fill_uniform(t);
  return t;
}

Tensor randn(IntArrayRef sizes, TensorOptions options) {
  check_floating(options.dtype(), "randn");
  Tensor t = empty(sizes, options);
  fill_normal(t);
  return t;
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions options) {
  if (!options.has_dtype()) options = options.dtype(kInt64);
  check_randint_range(low, high, options.dtype());
  Tensor t = empty(sizes, options);
  fill_integers(t, low, high);
  return t;
}

Tensor randint(int64_t high, IntArrayRef sizes, TensorOptions options) {
  return randint(0, high, sizes, options);
}

Tensor rand_like(const Tensor& t, MemoryFormat fmt) { return rand_like(t, TensorOptions(), fmt); }
Tensor rand_like(const Tensor& t, TensorOptions options, MemoryFormat fmt) {
  return random_like(t, options, fmt, "rand_like", fill_uniform);
}

Tensor randn_like(const Tensor& t, MemoryFormat fmt) { return randn_like(t, TensorOptions(), fmt); }
Tensor randn_like(const Tensor& t, TensorOptions options, MemoryFormat fmt) {
  return random_like(t, options, fmt, "randn_like", fill_normal);
}

}  // namespace lg

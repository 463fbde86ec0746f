// Deterministic weights and input shared with tests/nn/make_torchvision_reference.py: an integer
// hash gives values on a 2^-24 grid, so Python and C++ build bit-identical float32 tensors.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>

namespace lg::testing {

inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// Value i of stream `stream`, in [0, 1).
inline double hashed_uniform(uint32_t stream, uint64_t i) {
  const uint32_t seed = mix32(stream + 1);
  return double(mix32(uint32_t(i * 0x9E3779B1ull) ^ seed) >> 8) / 16777216.0;
}

// The script's value() rules, by the key's last component and rank.
inline Tensor deterministic_tensor(const std::string& name, IntArrayRef shape, DType dtype, uint32_t stream) {
  const std::string leaf = name.substr(name.rfind('.') + 1);
  if (leaf == "num_batches_tracked") return zeros(shape, TensorOptions().dtype(dtype));
  Tensor t = empty(shape, TensorOptions().dtype(kFloat64));
  double* p = static_cast<double*>(t.data_ptr());
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double u = hashed_uniform(stream, uint64_t(i));
    if (leaf == "running_mean" || leaf == "bias")
      p[i] = (u - 0.5) * 0.2;
    else if (leaf == "running_var" || (leaf == "weight" && shape.size() == 1))
      p[i] = 0.5 + u;
    else
      p[i] = (u * 2 - 1) * std::sqrt(3.0 / double(n / shape[0]));
  }
  // Round through float32 as numpy's astype(float32) does, then to the key's dtype.
  return t.to(kFloat32).to(dtype);
}

// The whole state dict of `model`, stream k for the k-th key in sorted order.
inline nn::StateDict deterministic_state_dict(const nn::Module& model) {
  nn::StateDict out;
  uint32_t k = 0;
  for (const auto& [name, t] : model.state_dict()) out.emplace(name, deterministic_tensor(name, t.sizes(), t.dtype(), k++));
  return out;
}

inline Tensor deterministic_input(IntArrayRef sizes) {
  Tensor t = empty(sizes, TensorOptions().dtype(kFloat64));
  double* p = static_cast<double*>(t.data_ptr());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = hashed_uniform(999999, uint64_t(i)) * 2 - 1;
  return t.to(kFloat32);
}

}  // namespace lg::testing

namespace lg::testing {

// Largest |a - b| over all elements (any layouts, any float dtypes; compared as float64).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  return amax(abs(sub(a.to(kFloat64), b.to(kFloat64)))).item<double>();
}
inline double max_abs(const Tensor& a) { return amax(abs(a.to(kFloat64))).item<double>(); }

}  // namespace lg::testing

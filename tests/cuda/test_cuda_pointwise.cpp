// Every pointwise op on CUDA against the CPU result: same output strides (the infer step is
// shared), values within the dtype's tolerance, over the layout variants, broadcasting with
// a bias, scalar operands, in-place and out= forms.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "cuda/cuda_testing.h"
#include "support/pointwise_cases.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

using Unary = std::function<Tensor(const Tensor&)>;
using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

// Transcendental functions differ by an ulp or two between libm and CUDA's math library.
Tol device_tol(lg::DType dt) {
  switch (dt) {
    case lg::DType::Float64: return {1e-12, 1e-12};
    case lg::DType::Float32: return {1e-6, 2e-6};
    case lg::DType::Float16: return {1e-3, 2e-3};
    case lg::DType::BFloat16: return {1e-2, 1e-2};
    default: return {0, 0};
  }
}

std::vector<std::pair<std::string, Tensor>> inputs(lg::DType dt, bool positive) {
  auto make = [&](std::vector<int64_t> sizes, MemoryFormat fmt, uint32_t seed) {
    Tensor t = noise_in(sizes, fmt, lg::kFloat32, seed);
    if (positive) t = lg::add(lg::abs(t), 0.25);
    else t = lg::mul(t, 4.0);
    return t.to(dt);
  };
  return {
      {"contiguous", make({2, 6, 5, 7}, MemoryFormat::Contiguous, 1)},
      {"channels_last", make({2, 6, 5, 7}, MemoryFormat::ChannelsLast, 2)},
      {"non-dense slice", make({2, 12, 5, 7}, MemoryFormat::ChannelsLast, 3).slice(1, 0, 12, 2)},
      {"permuted", make({2, 6, 7, 5}, MemoryFormat::Contiguous, 4).transpose(2, 3)},
      {"N1HW channels_last", make({2, 1, 5, 7}, MemoryFormat::ChannelsLast, 5)},
      {"zero-size", lg::empty({2, 0, 5, 7}, lg::TensorOptions().dtype(dt), MemoryFormat::ChannelsLast)},
      {"5-D channels_last_3d", make({2, 3, 4, 5, 6}, MemoryFormat::ChannelsLast3d, 6)},
  };
}

using lg::testing::check_same;
void check_same(const Tensor& got_dev, const Tensor& want) {
  lg::testing::check_same(got_dev, want, device_tol(want.dtype()));
}

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("unary ops on CUDA equal the CPU's over layouts and float dtypes") {
  // Every unary op of the test table, and the parameters the table's calls leave at defaults.
  std::vector<std::tuple<std::string, Unary, bool>> ops;
  for (const UnaryCase& c : unary_cases()) ops.emplace_back(std::string(c.op), c.call, c.inputs == Inputs::Positive);
  ops.emplace_back("leaky_relu 0.2", [](const Tensor& x) { return lg::leaky_relu(x, 0.2); }, false);
  ops.emplace_back("elu 1.5 1.2 0.8", [](const Tensor& x) { return lg::elu(x, 1.5, 1.2, 0.8); }, false);
  ops.emplace_back("gelu tanh", [](const Tensor& x) { return lg::gelu(x, "tanh"); }, false);
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16, lg::kFloat64})
    for (const auto& [name, f, positive] : ops)
      for (const auto& [layout, x] : inputs(dt, positive)) {
        CAPTURE(dt);
        CAPTURE(name);
        CAPTURE(layout);
        check_same(f(x.cuda()), f(x));
      }
}

TEST_CASE("integer unary and binary ops on CUDA wrap like the CPU's") {
  for (lg::DType dt : {lg::kInt64, lg::kInt32, lg::kUInt8}) {
    CAPTURE(dt);
    const Tensor a = lg::mul(noise_in({3, 4, 5, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 7), 120.0).to(dt);
    const Tensor b = lg::mul(noise_in({3, 4, 5, 6}, MemoryFormat::Contiguous, lg::kFloat32, 8), 120.0).to(dt);
    const Tensor da = a.cuda(), db = b.cuda();
    check_same(lg::neg(da), lg::neg(a));
    check_same(lg::abs(da), lg::abs(a));
    check_same(lg::relu(da), lg::relu(a));
    check_same(lg::add(da, db, 3), lg::add(a, b, 3));
    check_same(lg::sub(da, db), lg::sub(a, b));
    check_same(lg::mul(da, db), lg::mul(a, b));
    check_same(lg::maximum(da, db), lg::maximum(a, b));
    check_same(lg::minimum(da, db), lg::minimum(a, b));
    check_same(lg::pow(da, lg::full({}, 3, dt)), lg::pow(a, lg::full({}, 3, dt)));
    check_same(lg::lt(da, db), lg::lt(a, b));
    check_same(lg::div(da, db), lg::div(a, b));  // true division: float32 on both
  }
}

TEST_CASE("binary ops, comparisons and where on CUDA equal the CPU's, with broadcasting and scalars") {
  std::vector<std::pair<std::string, Binary>> ops;
  for (const BinaryCase& c : binary_cases()) {
    if (c.positive_first) ops.emplace_back(std::string(c.op), [&c](const Tensor& a, const Tensor& b) { return c.call(lg::abs(a), b); });
    else ops.emplace_back(std::string(c.op), c.call);
  }
  ops.emplace_back("where", [](const Tensor& a, const Tensor& b) { return lg::where(lg::gt(a, 0.0), a, b); });
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16}) {
    const auto xs = inputs(dt, false);
    const Tensor cf = xs[0].second, cl = xs[1].second;
    const Tensor bias = noise_in({6, 1, 1}, MemoryFormat::Contiguous, lg::kFloat32, 11).to(dt);
    const std::vector<std::tuple<std::string, Tensor, Tensor>> pairs{
        {"CL op CL", cl, cl},       {"CL op CF", cl, cf},          {"CF op CL", cf, cl},
        {"CL op bias", cl, bias},   {"bias op CL", bias, cl},      {"slice op CL", xs[2].second, cl},
        {"permuted op CF", xs[3].second, cf},
    };
    for (const auto& [name, f] : ops)
      for (const auto& [pair, a, b] : pairs) {
        CAPTURE(dt);
        CAPTURE(name);
        CAPTURE(pair);
        check_same(f(a.cuda(), b.cuda()), f(a, b));
      }
    CAPTURE(dt);
    check_same(lg::add(cl.cuda(), 2.0), lg::add(cl, 2.0));
    check_same(lg::mul(cl.cuda(), 0.5), lg::mul(cl, 0.5));
    check_same(lg::pow(2.0, cl.cuda()), lg::pow(2.0, cl));
  }
}

TEST_CASE("the strided kernels decode eight unmerged dims of odd sizes") {
  // Two operands permuted differently keep all eight dims apart, so every element's index is
  // divided by seven sizes (the IndexDividers of the Geometry) and the outermost takes the rest.
  const std::vector<int64_t> sizes{2, 3, 5, 2, 7, 3, 2, 3};
  const Tensor a = noise_in(sizes, MemoryFormat::Contiguous, lg::kFloat32, 31).permute({7, 0, 5, 2, 6, 1, 4, 3});
  const Tensor b = noise_in(sizes, MemoryFormat::Contiguous, lg::kFloat32, 32).permute({1, 3, 0, 6, 2, 7, 5, 4});
  const Tensor b_like_a = b.contiguous().view(a.sizes());  // same sizes as a, other strides
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16}) {
    CAPTURE(dt);
    const Tensor x = a.to(dt);
    const Tensor yt = b_like_a.to(dt).transpose(0, 7).contiguous().transpose(0, 7);  // strides unlike x's
    check_same(lg::add(x.cuda(), yt.cuda()), lg::add(x, yt));
    check_same(lg::relu(x.cuda()), lg::relu(x));
    Tensor dst = lg::zeros(x.sizes(), lg::TensorOptions().dtype(dt).device(lg::Device::cuda(0)));
    Tensor dst_view = dst.transpose(2, 5);
    dst_view.copy_(x.cuda().transpose(2, 5));  // the generic copy kernel: both sides strided
    check_same(dst, x.contiguous());  // dst keeps its own (contiguous) strides
  }
}

TEST_CASE("Python-scalar operands on CUDA, made once per value and reused, equal the CPU's every time") {
  // The device keeps one 0-dim tensor per (dtype, value) (src/ops/scalar_operands.h): a second
  // `x + 1.0` must read the same 1.0, in-place forms must not write into it, and equal numbers
  // of another dtype or kind (1 and 1.0, 0.0 and -0.0) must not be mixed up.
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16, lg::kFloat64}) {
    CAPTURE(dt);
    const Tensor x = lg::mul(noise_in({2, 6, 5, 7}, MemoryFormat::ChannelsLast, lg::kFloat32, 31), 4.0).to(dt);
    const Tensor d = x.cuda();
    for (int round = 0; round < 2; ++round) {
      CAPTURE(round);
      check_same(lg::add(d, 1.0), lg::add(x, 1.0));
      check_same(lg::mul(d, 0.5), lg::mul(x, 0.5));
      check_same(lg::sub(d, int64_t{3}), lg::sub(x, int64_t{3}));
      check_same(lg::div(d, -0.0), lg::div(x, -0.0));
      check_same(lg::div(d, 0.0), lg::div(x, 0.0));
      Tensor in_place = d.clone();
      lg::add_(in_place, 1.0);
      lg::add_(in_place, 1.0);
      check_same(in_place, lg::add(x, 2.0));
    }
  }
  const Tensor i = lg::arange(0, 24, 1, lg::TensorOptions().dtype(lg::kInt32)).view({1, 2, 3, 4});
  for (int round = 0; round < 2; ++round) {
    check_same(lg::add(i.cuda(), int64_t{300}), lg::add(i, int64_t{300}));
    check_same(lg::mul(i.cuda(), true), lg::mul(i, true));
  }
}

TEST_CASE("in-place and out= forms on CUDA keep the destination's strides") {
  const Tensor x = noise_in({2, 6, 5, 7}, MemoryFormat::ChannelsLast, lg::kFloat32, 12);
  Tensor d = x.cuda();
  lg::relu_(d);
  check_same(d, lg::relu(x));
  lg::add_(d, 1.0);
  check_same(d, lg::add(lg::relu(x), 1.0));
  Tensor out = lg::empty({2, 6, 5, 7}, lg::Device::cuda(0), MemoryFormat::ChannelsLast);
  lg::mul_out(out, x.cuda(), x.contiguous().cuda());
  check_same(out, lg::mul(x, x));
}

}

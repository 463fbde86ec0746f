// The CUDA copy and pointwise kernels' own source, run on host threads (emulation.h), against
// the CPU backend: every transpose kernel the copy launcher picks (square tiles scalar and
// packed, short planes with and without the packet dividing the plane, few planes, thin
// planes), the generic copy over eight unmerged dims, fill, and the pointwise ops in their
// packed and strided forms with the op dispatch of pointwise.cu. The Geometry comes from
// make_geometry, as on the device, with host pointers. In the ASan+UBSan build this also
// catches a kernel reading or writing outside its tensors. Timing and the device's memory
// model are not what this checks: the GPU suite (tests/cuda) is.
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include <layoutguard/layoutguard.h>

#include "cuda/geometry.h"
#include "cuda/kernels/launch.h"
#include "support/op_testing.h"
#include "support/transpose_shapes.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using lg::dispatch::OpId;
using namespace lg::testing;
namespace kernels = lg::cuda::kernels;

std::vector<uint8_t> bytes_in_order(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const uint8_t*>(c.data_ptr());
  return std::vector<uint8_t>(p, p + c.nbytes());
}

// dst.copy_(src) through the emulated kernels::copy_strided; dst keeps its strides.
void emulated_copy(const Tensor& dst, const Tensor& src) {
  const kernels::Geometry g = lg::cuda::detail::make_geometry(dst, {&src}, "copy_");
  REQUIRE(kernels::copy_strided(g, static_cast<int>(src.itemsize()), nullptr) == cudaSuccess);
}

}  // namespace

TEST_SUITE("cuda-emulation") {

TEST_CASE("emulated NCHW <-> NHWC copies equal the CPU's, through every transpose kernel") {
  // Every transpose kernel (support/transpose_shapes.h); 2-byte types run twice: with their own
  // short-planes kernel and with the generic one.
  const std::vector<std::vector<int64_t>>& shapes = lg::testing::transpose_kernel_shapes();
  for (lg::DType dt : {lg::kUInt8, lg::kFloat16, lg::kBFloat16, lg::kFloat32, lg::kFloat64})
    for (const auto& shape : shapes)
      for (bool own_kernel : {true, false}) {
        if (!own_kernel && lg::itemsize(dt) != 2) continue;
        kernels::set_short_planes_2byte_kernel(own_kernel);
        CAPTURE(dt);
        CAPTURE(lg::to_string(shape));
        CAPTURE(own_kernel);
        const Tensor x = lg::mul(noise_in(shape, MemoryFormat::Contiguous, lg::kFloat32, 21), 50.0).to(dt);
        const Tensor to_cl = lg::empty(shape, lg::TensorOptions().dtype(dt), MemoryFormat::ChannelsLast);
        emulated_copy(to_cl, x);
        CHECK(bytes_in_order(to_cl) == bytes_in_order(x));
        const Tensor back = lg::empty(shape, lg::TensorOptions().dtype(dt));
        emulated_copy(back, to_cl);
        CHECK(bytes_in_order(back) == bytes_in_order(x));
      }
  kernels::set_short_planes_2byte_kernel(true);
}

TEST_CASE("emulated copies off the packet alignment, over eight unmerged dims, and 5-D") {
  // A base one element off the 16-byte alignment: the scalar tiles.
  const Tensor flat = lg::mul(noise_in({1 + 2 * 64 * 8 * 8}, MemoryFormat::Contiguous, lg::kFloat32, 23), 50.0)
                          .to(lg::kFloat16);
  const Tensor off = flat.narrow(0, 1, 2 * 64 * 8 * 8).view({2, 64, 8, 8});
  REQUIRE(reinterpret_cast<uintptr_t>(off.data_ptr()) % 4 != 0);
  const Tensor off_cl = lg::empty({2, 64, 8, 8}, lg::TensorOptions().dtype(lg::kFloat16), MemoryFormat::ChannelsLast);
  emulated_copy(off_cl, off);
  CHECK(bytes_in_order(off_cl) == bytes_in_order(off));
  // Both sides permuted differently: the generic kernel, seven divided dims.
  const Tensor a = noise_in({2, 3, 5, 2, 7, 3, 2, 3}, MemoryFormat::Contiguous, lg::kFloat32, 31)
                       .permute({7, 0, 5, 2, 6, 1, 4, 3});
  const Tensor dst = lg::zeros(a.sizes()).transpose(2, 5);
  emulated_copy(dst, a.transpose(2, 5));
  CHECK(bytes_in_order(dst.transpose(2, 5)) == bytes_in_order(a));
  const Tensor x5 = noise_in({2, 37, 3, 9, 10}, MemoryFormat::Contiguous, lg::kFloat32, 22);
  const Tensor d5 = lg::empty(x5.sizes(), {}, MemoryFormat::ChannelsLast3d);
  emulated_copy(d5, x5);
  CHECK(bytes_in_order(d5) == bytes_in_order(x5));
}

TEST_CASE("empty tensors: a Geometry with a dim of size 0 is made and nothing is launched") {
  // make_geometry keeps size-0 dims; their divider must not divide by zero on the host.
  const Tensor x = lg::empty({2, 0, 5, 7}, {}, MemoryFormat::ChannelsLast);
  const Tensor y = lg::empty({2, 0, 5, 7});
  const kernels::Geometry g = lg::cuda::detail::make_geometry(y, {&x}, "copy_");
  CHECK(g.numel == 0);
  CHECK(kernels::copy_strided(g, 4, nullptr) == cudaSuccess);
  CHECK(kernels::pointwise(OpId::relu, kernels::ScalarType::Float32, g, {}, nullptr) == cudaSuccess);
}

TEST_CASE("empty tensors whose other dims multiply past int64 give empty launch arguments, not overflow") {
  // numel is 0, so the sizes 2^40 x 2^40 are legal; their product is not. Under UBSan a product
  // of them in the host helpers would be reported.
  const int64_t huge = int64_t{1} << 40;
  // Dims 0 and 2 step evenly (stride 2^40 = 2^40 x stride 1), so make_geometry would merge them.
  const Tensor x = lg::empty({1}).as_strided({huge, 0, huge}, {huge, 0, 1});
  const kernels::Geometry g = lg::cuda::detail::make_geometry(x, {&x}, "copy_");
  CHECK(g.numel == 0);
  CHECK(kernels::copy_strided(g, 4, nullptr) == cudaSuccess);
  const Tensor sums = lg::empty({1}).as_strided({1, 0, 1}, {1, 1, 1});
  CHECK(lg::cuda::detail::reduce_args(sums, x).count == 0);
  CHECK(lg::cuda::detail::softmax_args(x, x, 1, false).lines == 0);
}

TEST_CASE("emulated fill writes every element of a strided view and nothing else") {
  const Tensor base = lg::zeros({2, 16, 6, 6}).contiguous(MemoryFormat::ChannelsLast);
  const Tensor view = base.slice(1, 0, 16, 2);
  const kernels::Geometry g = lg::cuda::detail::make_geometry(view, {}, "fill_");
  const float value = 2.5f;
  uint32_t bits = 0;
  std::memcpy(&bits, &value, 4);
  REQUIRE(kernels::fill_strided(g, 4, bits, nullptr) == cudaSuccess);
  const std::vector<double> v = values(base.contiguous());
  int64_t filled = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    const int64_t c = i / 36 % 16;
    CHECK(v[static_cast<size_t>(i)] == (c % 2 == 0 ? 2.5 : 0.0));
    filled += v[static_cast<size_t>(i)] == 2.5;
  }
  CHECK(filled == 2 * 8 * 36);
}

TEST_CASE("emulated pointwise kernels equal the CPU ops, packed and strided, op picked per thread") {
  struct Case {
    std::string name;
    OpId op;
    lg::dispatch::PointwiseParams params;
    std::function<Tensor(const Tensor&, const Tensor&)> cpu;
    bool positive = false;
  };
  lg::dispatch::PointwiseParams none, clamp_params, add_params, leaky;
  clamp_params.lo = -1.0;
  clamp_params.hi = 2.0;
  clamp_params.has_lo = clamp_params.has_hi = true;
  add_params.alpha = 0.5;
  leaky.alpha = 0.2;
  const std::vector<Case> cases{
      {"neg", OpId::neg, none, [](const Tensor& a, const Tensor&) { return lg::neg(a); }},
      {"abs", OpId::abs, none, [](const Tensor& a, const Tensor&) { return lg::abs(a); }},
      {"relu", OpId::relu, none, [](const Tensor& a, const Tensor&) { return lg::relu(a); }},
      {"relu6", OpId::relu6, none, [](const Tensor& a, const Tensor&) { return lg::relu6(a); }},
      {"leaky_relu", OpId::leaky_relu, leaky, [](const Tensor& a, const Tensor&) { return lg::leaky_relu(a, 0.2); }},
      {"sigmoid", OpId::sigmoid, none, [](const Tensor& a, const Tensor&) { return lg::sigmoid(a); }},
      {"tanh", OpId::tanh, none, [](const Tensor& a, const Tensor&) { return lg::tanh(a); }},
      {"silu", OpId::silu, none, [](const Tensor& a, const Tensor&) { return lg::silu(a); }},
      {"hardswish", OpId::hardswish, none, [](const Tensor& a, const Tensor&) { return lg::hardswish(a); }},
      {"sqrt", OpId::sqrt, none, [](const Tensor& a, const Tensor&) { return lg::sqrt(a); }, true},
      {"clamp", OpId::clamp, clamp_params, [](const Tensor& a, const Tensor&) { return lg::clamp(a, -1.0, 2.0); }},
      {"add", OpId::add, add_params, [](const Tensor& a, const Tensor& b) { return lg::add(a, b, 0.5); }},
      {"sub", OpId::sub, none, [](const Tensor& a, const Tensor& b) { return lg::sub(a, b); }},
      {"mul", OpId::mul, none, [](const Tensor& a, const Tensor& b) { return lg::mul(a, b); }},
      {"maximum", OpId::maximum, none, [](const Tensor& a, const Tensor& b) { return lg::maximum(a, b); }},
      {"lt", OpId::lt, none, [](const Tensor& a, const Tensor& b) { return lg::lt(a, b); }},
  };
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16})
    for (const Case& c : cases) {
      const bool unary = c.op < OpId::add;  // op_list.def lists the unary ops before add
      // 2x8x9x7 = 1008 elements: packets and a tail; the bias broadcast is strided.
      Tensor a = noise_in({2, 8, 9, 7}, MemoryFormat::ChannelsLast, lg::kFloat32, 41);
      if (c.positive) a = lg::add(lg::abs(a), 0.25);
      a = lg::mul(a, 3.0).to(dt);
      const Tensor b = lg::mul(noise_in({2, 8, 9, 7}, MemoryFormat::ChannelsLast, lg::kFloat32, 42), 3.0).to(dt);
      const Tensor bias = noise_in({8, 1, 1}, MemoryFormat::Contiguous, lg::kFloat32, 43).to(dt);
      std::vector<std::pair<std::string, Tensor>> others{{"dense", b}};
      if (!unary) others.push_back({"bias", bias.expand(a.sizes())});
      if (unary) others.push_back({"strided", a.slice(3, 0, 7, 2)});
      for (const auto& [form, other] : others) {
        CAPTURE(dt);
        CAPTURE(c.name);
        CAPTURE(form);
        const Tensor in = unary && form == "strided" ? other : a;
        const Tensor want = c.cpu(in, other);
        const Tensor out = lg::empty_like(want);
        const kernels::Geometry g = unary ? lg::cuda::detail::make_geometry(out, {&in}, "pointwise")
                                          : lg::cuda::detail::make_geometry(out, {&in, &other}, "pointwise");
        REQUIRE(kernels::pointwise(c.op, lg::cuda::detail::scalar_type(dt), g, c.params, nullptr) == cudaSuccess);
        check_close(values(out), values(want), tol_for(dt));
      }
    }
}

TEST_CASE("emulated integer ops wrap, and comparisons and where take every operand form, as on the CPU") {
  for (lg::DType dt : {lg::kInt64, lg::kInt32, lg::kUInt8}) {
    CAPTURE(dt);
    const Tensor a = lg::mul(noise_in({3, 4, 5, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 71), 120.0).to(dt);
    const Tensor b = lg::mul(noise_in({3, 4, 5, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 72), 120.0).to(dt);
    lg::dispatch::PointwiseParams add3;
    add3.alpha = 3.0;
    const std::vector<std::tuple<OpId, lg::dispatch::PointwiseParams, Tensor>> cases{
        {OpId::add, add3, lg::add(a, b, 3)}, {OpId::mul, {}, lg::mul(a, b)},       {OpId::sub, {}, lg::sub(a, b)},
        {OpId::maximum, {}, lg::maximum(a, b)}, {OpId::eq, {}, lg::eq(a, b)},     {OpId::ge, {}, lg::ge(a, b)}};
    for (const auto& [op, params, want] : cases) {
      CAPTURE(static_cast<int>(op));
      const Tensor out = lg::empty_like(want);
      const kernels::Geometry g = lg::cuda::detail::make_geometry(out, {&a, &b}, "pointwise");
      REQUIRE(kernels::pointwise(op, lg::cuda::detail::scalar_type(dt), g, params, nullptr) == cudaSuccess);
      CHECK(values(out) == values(want));
    }
    // Floating-only ops are refused for integers, not computed.
    const Tensor out = lg::empty_like(a);
    const kernels::Geometry g = lg::cuda::detail::make_geometry(out, {&a}, "pointwise");
    CHECK(kernels::pointwise(OpId::exp, lg::cuda::detail::scalar_type(dt), g, {}, nullptr) == cudaErrorInvalidValue);
  }
  // where(cond, x, y): the bool condition is operand 1, packed (dense) and strided (broadcast y).
  const Tensor x = noise_in({2, 8, 5, 7}, MemoryFormat::ChannelsLast, lg::kFloat32, 73);
  const Tensor cond = lg::gt(x, 0.0);
  for (const Tensor& y : {noise_in({2, 8, 5, 7}, MemoryFormat::ChannelsLast, lg::kFloat32, 74),
                          noise_in({8, 1, 1}, MemoryFormat::Contiguous, lg::kFloat32, 75).expand(x.sizes())}) {
    const Tensor want = lg::where(cond, x, y);
    const Tensor out = lg::empty_like(want);
    const kernels::Geometry g = lg::cuda::detail::make_geometry(out, {&cond, &x, &y}, "pointwise");
    REQUIRE(kernels::pointwise(OpId::where, kernels::ScalarType::Float32, g, {}, nullptr) == cudaSuccess);
    CHECK(values(out) == values(want));
  }
}

TEST_CASE("emulated dense dtype conversion equals the CPU's casts") {
  const Tensor x = lg::mul(noise_in({3, 7, 11}, MemoryFormat::Contiguous, lg::kFloat32, 76), 300.0);
  for (lg::DType to : {lg::kFloat16, lg::kBFloat16, lg::kFloat64, lg::kInt32, lg::kUInt8, lg::kBool}) {
    CAPTURE(to);
    // uint8 from values it can hold: a float outside its range has no defined conversion.
    const Tensor src = to == lg::kUInt8 ? lg::clamp(lg::abs(x), 0.0, 250.0) : x;
    const Tensor want = src.to(to);
    const Tensor out = lg::empty_like(want);
    REQUIRE(kernels::convert_dense(out.data_ptr(), lg::cuda::detail::scalar_type(to), src.data_ptr(),
                                   kernels::ScalarType::Float32, src.numel(), nullptr) == cudaSuccess);
    CHECK(values(out) == values(want));
  }
}

}  // TEST_SUITE

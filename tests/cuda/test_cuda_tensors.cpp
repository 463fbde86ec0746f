// CUDA tensors: allocation, device errors, copies between the CPU and the device in every
// layout and dtype (values exact, strides as on the CPU), conversions on the device, fill_,
// item, out of memory, ops without a CUDA kernel, the guard on device tensors.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <layoutguard/config.h>
#if LG_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuda/kernels/launch.h"  // set_short_planes_2byte_kernel
#endif

#include "support/op_testing.h"
#include "support/tensor_testing.h"
#include "support/transpose_shapes.h"

namespace {

// Whether 2-byte short-planes copies take their own kernel (the default) or the generic one.
// Without CUDA compiled in, the suite skips before any test runs.
void use_2byte_short_planes_kernel(bool on) {
#if LG_HAVE_CUDA
  lg::cuda::kernels::set_short_planes_2byte_kernel(on);
#else
  (void)on;
#endif
}

using lg::Device;
using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

const Device kGpu = Device::cuda(0);

// The CPU tensors a copy must reproduce: every layout variant of the op tests.
std::vector<std::pair<std::string, Tensor>> layouts(lg::DType dt) {
  std::vector<std::pair<std::string, Tensor>> v;
  const Tensor base = noise_in({2, 6, 5, 7}, MemoryFormat::Contiguous, lg::kFloat32, 3);
  v.push_back({"contiguous", base.to(dt)});
  v.push_back({"channels_last", base.to(dt).to(MemoryFormat::ChannelsLast)});
  v.push_back({"permuted", base.to(dt).permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2}).transpose(2, 3)});
  v.push_back({"non-dense slice", base.to(dt).to(MemoryFormat::ChannelsLast).slice(1, 1, 5).slice(3, 0, 7, 2)});
  v.push_back({"N1HW", base.to(dt).slice(1, 0, 1).to(MemoryFormat::ChannelsLast)});
  v.push_back({"NC11", base.to(dt).slice(2, 0, 1).slice(3, 0, 1).to(MemoryFormat::ChannelsLast)});
  v.push_back({"zero-size", lg::empty({2, 0, 5, 7}, lg::TensorOptions().dtype(dt), MemoryFormat::ChannelsLast)});
  v.push_back({"broadcast", base.to(dt).slice(0, 0, 1).expand({3, 6, 5, 7})});
  v.push_back({"5-D channels_last_3d",
               noise_in({2, 3, 4, 5, 6}, MemoryFormat::ChannelsLast3d, lg::kFloat32, 4).to(dt)});
  return v;
}

const lg::DType kAllTypes[] = {lg::kFloat32, lg::kFloat16, lg::kBFloat16, lg::kFloat64,
                               lg::kInt64,   lg::kInt32,   lg::kUInt8,    lg::kBool};

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("device errors name the device and what is visible") {
  const int n = lg::cuda::device_count();
  try {
    (void)lg::empty({2}, Device::cuda(n));
    FAIL("expected a DeviceError");
  } catch (const lg::DeviceError& e) {
    const std::string what = e.what();
    CHECK(what.find("[empty]") != std::string::npos);
    CHECK(what.find("cuda:" + std::to_string(n)) != std::string::npos);
    CHECK(what.find("visible") != std::string::npos);
  }
}

TEST_CASE("empty on the device: PyTorch's strides, 256-byte aligned device memory") {
  const Tensor t = lg::empty({2, 3, 4, 5}, kGpu, MemoryFormat::ChannelsLast);
  CHECK(t.device() == kGpu);
  CHECK(ls(t) == "(2,3,4,5)@(60,1,15,3)");
  CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 256 == 0);
#if LG_HAVE_CUDA
  cudaPointerAttributes attrs{};
  REQUIRE(cudaPointerGetAttributes(&attrs, t.data_ptr()) == cudaSuccess);
  CHECK(attrs.type == cudaMemoryTypeDevice);
#endif
  CHECK(ls(lg::empty({2, 3, 4, 5, 6}, kGpu, MemoryFormat::ChannelsLast3d)) == "(2,3,4,5,6)@(360,1,90,18,3)");
}

TEST_CASE("cuda() and cpu() keep every layout's strides and every value, in every dtype") {
  for (lg::DType dt : kAllTypes)
    for (const auto& [name, x] : layouts(dt)) {
      CAPTURE(dt);
      CAPTURE(name);
      const Tensor d = x.cuda();
      CHECK(d.device() == kGpu);
      CHECK(d.dtype() == dt);
      CHECK(ls(d) == ls(x.clone()));  // to(device) allocates like clone (Preserve)
      const Tensor back = d.cpu();
      CHECK(ls(back) == ls(d));
      CHECK(values(back) == values(x));
    }
}

TEST_CASE("conversions on the device match the CPU's exactly: formats, dtypes, both at once") {
  const MemoryFormat formats[] = {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast};
  for (lg::DType from : kAllTypes)
    for (const auto& [name, x0] : layouts(from)) {
      if (x0.dim() != 4) continue;
      // cuda() allocates like clone(): broadcast and non-dense inputs arrive dense, so the CPU
      // side starts from the clone too (to() and contiguous() may return their input as is).
      const Tensor x = x0.clone(), d = x0.cuda();
      for (MemoryFormat fmt : formats) {
        CAPTURE(from);
        CAPTURE(name);
        CAPTURE(fmt);
        const Tensor want = x.contiguous(fmt), got = d.contiguous(fmt);
        CHECK(ls(got) == ls(want));
        CHECK(values(got.cpu()) == values(want));
        for (lg::DType to : {lg::kFloat32, lg::kFloat16, lg::kInt32, lg::kBool}) {
          CAPTURE(to);
          const Tensor want_t = x.to(to, false, fmt), got_t = d.to(to, false, fmt);
          CHECK(ls(got_t) == ls(want_t));
          CHECK(values(got_t.cpu()) == values(want_t));
        }
      }
    }
}

TEST_CASE("NCHW <-> NHWC on the device through partial tiles, thin planes and 5-D, in 1/2/4/8-byte dtypes") {
  // Every transpose kernel (support/transpose_shapes.h); 2-byte types run twice: with their own
  // short-planes kernel and with the generic one.
  const std::vector<std::vector<int64_t>>& shapes = lg::testing::transpose_kernel_shapes();
  for (lg::DType dt : {lg::kUInt8, lg::kFloat16, lg::kBFloat16, lg::kFloat32, lg::kFloat64})
    for (const auto& shape : shapes)
      for (bool own_kernel : {true, false}) {
        if (!own_kernel && lg::itemsize(dt) != 2) continue;
        use_2byte_short_planes_kernel(own_kernel);
        CAPTURE(dt);
        CAPTURE(lg::to_string(shape));
        CAPTURE(own_kernel);
        const Tensor x = lg::mul(noise_in(shape, MemoryFormat::Contiguous, lg::kFloat32, 21), 50.0).to(dt);
        const Tensor to_cl = x.cuda().contiguous(MemoryFormat::ChannelsLast);
        CHECK(values(to_cl.cpu()) == values(x));
        CHECK(ls(to_cl) == ls(x.contiguous(MemoryFormat::ChannelsLast)));
        const Tensor back = to_cl.contiguous();
        CHECK(values(back.cpu()) == values(x));
        CHECK(ls(back) == ls(x));
      }
  use_2byte_short_planes_kernel(true);
  // A base one element off the packet alignment must take the scalar tiles.
  for (lg::DType dt : {lg::kUInt8, lg::kFloat16}) {
    const Tensor flat = lg::mul(noise_in({1 + 2 * 64 * 8 * 8}, MemoryFormat::Contiguous, lg::kFloat32, 23), 50.0).to(dt);
    const Tensor x = flat.narrow(0, 1, 2 * 64 * 8 * 8).view({2, 64, 8, 8});
    const Tensor moved = x.cuda().narrow(0, 0, 2);  // same shape; device copy is dense again
    const Tensor dev_flat = flat.cuda();
    const Tensor off = dev_flat.narrow(0, 1, 2 * 64 * 8 * 8).view({2, 64, 8, 8});
    REQUIRE(reinterpret_cast<uintptr_t>(off.data_ptr()) % 4 != 0);
    CHECK(values(off.contiguous(MemoryFormat::ChannelsLast).cpu()) == values(x));
    CHECK(values(moved.contiguous(MemoryFormat::ChannelsLast).cpu()) == values(x));
  }
  const Tensor x5 = noise_in({2, 37, 3, 9, 10}, MemoryFormat::Contiguous, lg::kFloat32, 22);
  const Tensor d5 = x5.cuda().contiguous(MemoryFormat::ChannelsLast3d);
  CHECK(values(d5.cpu()) == values(x5));
  CHECK(values(d5.contiguous().cpu()) == values(x5));
}

TEST_CASE("copy_ between host and device into non-dense destinations, with dtype conversion") {
  const Tensor src = noise_in({2, 8, 6, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 9);
  // Device destination: every other channel of a channels_last tensor, float16.
  Tensor dev_big = lg::zeros({2, 16, 6, 6}, lg::TensorOptions().dtype(lg::kFloat16).device(kGpu)).contiguous(MemoryFormat::ChannelsLast);
  Tensor dev_view = dev_big.slice(1, 0, 16, 2);
  dev_view.copy_(src);
  Tensor host_big = lg::zeros({2, 16, 6, 6}, lg::kFloat16).contiguous(MemoryFormat::ChannelsLast);
  host_big.slice(1, 0, 16, 2).copy_(src);
  CHECK(values(dev_big.cpu()) == values(host_big));
  // Host destination: a transposed float64 view filled from the device.
  Tensor host_dst = lg::zeros({2, 8, 6, 6}, lg::kFloat64).transpose(2, 3);
  host_dst.copy_(src.cuda());
  CHECK(values(host_dst) == values(src.to(lg::kFloat64)));
  // Broadcast source from the host.
  Tensor dev_dst = lg::empty({4, 8, 6, 6}, kGpu, MemoryFormat::ChannelsLast);
  dev_dst.copy_(src.slice(0, 0, 1));
  CHECK(values(dev_dst.cpu()) == values(src.slice(0, 0, 1).expand({4, 8, 6, 6})));
  // Device to device between layouts, in place.
  Tensor dev_cf = lg::empty({2, 8, 6, 6}, kGpu);
  dev_cf.copy_(src.cuda());
  CHECK(values(dev_cf.cpu()) == values(src));
}

TEST_CASE("fill_, zeros, full and item on the device") {
  Tensor t = lg::full({3, 4, 5, 6}, 2.5, lg::TensorOptions().device(kGpu));
  CHECK(t.device() == kGpu);
  for (double v : values(t.cpu())) CHECK(v == 2.5);
  Tensor cl = lg::zeros({3, 4, 5, 6}, lg::TensorOptions().device(kGpu)).contiguous(MemoryFormat::ChannelsLast);
  cl.slice(1, 1, 3).fill_(7);  // a non-dense view
  const std::vector<double> got = values(cl.cpu());
  Tensor want = lg::zeros({3, 4, 5, 6});
  want.slice(1, 1, 3).fill_(7);
  CHECK(got == values(want));
  for (lg::DType dt : kAllTypes) {
    CAPTURE(dt);
    const Tensor one = lg::full({}, 1, lg::TensorOptions().dtype(dt).device(kGpu));
    CHECK(one.item().to<double>() == 1.0);
  }
}

TEST_CASE("out of memory is an OutOfMemoryError with the sizes asked for and free") {
  try {
    (void)lg::empty({int64_t{1} << 46}, lg::TensorOptions().device(kGpu));  // 256 TiB
    FAIL("expected OutOfMemoryError");
  } catch (const lg::OutOfMemoryError& e) {
    const std::string what = e.what();
    CHECK(what.find("tried to allocate 281474976710656 bytes") != std::string::npos);
    CHECK(what.find("MiB free of") != std::string::npos);
  }
  // The device is still usable afterwards.
  CHECK(lg::ones({1}, lg::TensorOptions().device(kGpu)).item().to<double>() == 1.0);
}

TEST_CASE("registry: every computing op of the list has a CUDA kernel in this build") {
  for (const lg::OpDescription& d : lg::op_catalogue()) {
    CAPTURE(d.name);
    const bool computes = d.family != "View" && d.family != "Conversion" && d.family != "Composite";
    if (computes) CHECK_FALSE(d.cuda_kernel.empty());
  }
}

TEST_CASE("operands on different devices are an error naming both") {
  const Tensor a = lg::ones({2, 3}), b = lg::ones({2, 3}, lg::TensorOptions().device(kGpu));
  CHECK_THROWS_AS((void)lg::add(a, b), lg::ValueError);
  // A 0-dim CPU tensor is a number and joins any device, as in PyTorch.
  const Tensor two = lg::full({}, 2.0);
  const Tensor sum = lg::add(b, two);
  CHECK(sum.device() == kGpu);
  CHECK(values(sum.cpu()) == std::vector<double>(6, 3.0));
  CHECK(lg::mul(two, b).device() == kGpu);
  CHECK_THROWS_AS((void)lg::cat({a, b}, 0), lg::ValueError);
}

TEST_CASE("the guard checks CUDA ops by their metadata: a custom CUDA kernel that drops channels_last is flagged") {
  static const lg::CustomOp drop = lg::register_op(
      "test_cuda.drop_layout", lg::LayoutPolicy::Preserve,
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in.at(0).contiguous()}; },
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in.at(0).contiguous()}; });
  const Tensor x = noise_in({2, 3, 4, 5}, MemoryFormat::ChannelsLast, lg::kFloat32, 5).cuda();
  lg::guard::Scope scope(lg::guard::Mode::Throw);
  CHECK_NOTHROW((void)lg::relu(x));
  CHECK_NOTHROW((void)lg::add(x, x));
  try {
    (void)drop({x});
    FAIL("expected LayoutViolation");
  } catch (const lg::LayoutViolation& e) {
    const std::string what = e.what();
    CHECK(what.find("test_cuda.drop_layout") != std::string::npos);
    CHECK(what.find("cuda:0") != std::string::npos);
  }
}

TEST_CASE("sync debug mode runs the same ops and reports no error when there is none") {
  lg::cuda::set_sync_debug(true);
  CHECK(lg::cuda::sync_debug());
  const Tensor x = noise_in({4, 8, 6, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 6).cuda();
  CHECK(values(lg::relu(x).cpu()) == values(lg::relu(x.cpu())));
  lg::cuda::set_sync_debug(false);
  lg::cuda::synchronize();
}

}

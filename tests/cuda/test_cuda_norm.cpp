// The normalisation ops on CUDA against the CPU: same output strides (PyTorch's batch_norm rule,
// the suggested format for the others), values within tolerance, running statistics updated
// alike in training, evaluation with running stats.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include <layoutguard/hooks.h>

#include "cuda/cuda_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

Tol norm_device_tol(lg::DType dt) {
  switch (dt) {
    case lg::DType::Float64: return {1e-10, 1e-10};
    case lg::DType::Float32: return {1e-5, 1e-5};
    case lg::DType::Float16: return {5e-3, 5e-3};
    default: return {3e-2, 3e-2};
  }
}

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("batch_norm on CUDA: training updates the running stats like the CPU, evaluation uses them") {
  // 6 channels take the scalar channel-affine kernel, 16 channels (and 24-element planes) the
  // packed one; float64 the general per-plane kernel. The larger shapes spread each channel's
  // sums over many blocks (atomics). Each case runs on our kernels and again offered to cuDNN.
  for (bool on_cudnn : {false, true})
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{4, 6, 5, 7}, std::vector<int64_t>{2, 16, 4, 6},
                                            std::vector<int64_t>{8, 64, 20, 20}, std::vector<int64_t>{4, 8, 128, 128}})
    for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kBFloat16, lg::kFloat64})
      for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
        CAPTURE(on_cudnn);
        CAPTURE(dt);
        CAPTURE(f);
        CAPTURE(lg::to_string(shape));
        const CudnnBatchNorm cudnn(on_cudnn);
        const int64_t C = shape[1];
        const Tensor x = noise_in(shape, f, lg::kFloat32, 1).to(dt);
        const lg::DType pdt = dt == lg::kFloat64 ? lg::kFloat64 : lg::kFloat32;  // parameters and stats
        const Tensor w = noise_in({C}, MemoryFormat::Contiguous, pdt, 2);
        const Tensor b = noise_in({C}, MemoryFormat::Contiguous, pdt, 3);
        Tensor rm = lg::zeros({C}, pdt), rv = lg::ones({C}, pdt);
        Tensor drm = rm.cuda(), drv = rv.cuda();
        const Tensor want = lg::batch_norm(x, w, b, rm, rv, true, 0.2, 1e-5);
        const Tensor got = lg::batch_norm(x.cuda(), w.cuda(), b.cuda(), drm, drv, true, 0.2, 1e-5);
        check_same(got, want, norm_device_tol(dt));
        check_same(drm, rm, {1e-6, 1e-5});
        check_same(drv, rv, {1e-6, 1e-5});
        check_same(lg::batch_norm(x.cuda(), w.cuda(), b.cuda(), drm, drv, false),
                   lg::batch_norm(x, w, b, rm, rv, false), norm_device_tol(dt));
        check_same(lg::batch_norm(x.cuda(), std::nullopt, std::nullopt, drm, drv, false),
                   lg::batch_norm(x, std::nullopt, std::nullopt, rm, rv, false), norm_device_tol(dt));
      }
  const Tensor x5 = noise_in({2, 3, 4, 5, 6}, MemoryFormat::ChannelsLast3d, lg::kFloat32, 4);
  check_same(lg::batch_norm(x5.cuda(), std::nullopt, std::nullopt, std::nullopt, std::nullopt, true),
             lg::batch_norm(x5, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true), norm_device_tol(lg::kFloat32));
}

TEST_CASE("batch_norm evaluation on CUDA reuses its coefficients only while the stats are unchanged") {
  // Our kernels cache the scale and shift, the cuDNN path its float32 stats and 1/sqrt(var+eps),
  // per (stats' storages, versions, views, eps): a second forward reuses them; changing a stat
  // in place, through copy_, or eps must not.
  for (bool on_cudnn : {false, true}) {
    CAPTURE(on_cudnn);
    const CudnnBatchNorm mode(on_cudnn);
    const Tensor x = noise_in({2, 8, 5, 7}, MemoryFormat::ChannelsLast, lg::kFloat32, 11).to(lg::kFloat16);
    const Tensor w = noise_in({8}, MemoryFormat::Contiguous, lg::kFloat32, 12);
    const Tensor b = noise_in({8}, MemoryFormat::Contiguous, lg::kFloat32, 13);
    Tensor rm = noise_in({8}, MemoryFormat::Contiguous, lg::kFloat32, 14), rv = lg::add(lg::abs(rm), 0.5);
    const Tensor dw = w.cuda(), db = b.cuda(), drm = rm.cuda(), drv = rv.cuda(), dx = x.cuda();
    const auto both = [&](double eps) {
      check_same(lg::batch_norm(dx, dw, db, drm, drv, false, 0.1, eps), lg::batch_norm(x, w, b, rm, rv, false, 0.1, eps),
                 norm_device_tol(lg::kFloat16));
    };
    both(1e-5);
    both(1e-5);
    lg::add_(rm, 0.25);
    lg::add_(drm, 0.25);
    both(1e-5);
    rv.copy_(lg::add(rv, 1.0));
    drv.copy_(lg::add(drv, 1.0));
    both(1e-5);
    both(1e-1);
    both(1e-5);
    lg::mul_(w, 3.0);
    lg::mul_(dw, 3.0);
    both(1e-5);
    // Stats of mixed dtypes (a float16 mean beside a float32 variance, converted before the
    // cache) and a strided view of them.
    const Tensor rm16 = rm.to(lg::kFloat16);
    check_same(lg::batch_norm(dx, dw, db, rm16.cuda(), drv, false), lg::batch_norm(x, w, b, rm16, rv, false),
               norm_device_tol(lg::kFloat16));
    const Tensor wide = lg::stack({rv, rm}, 1);  // rv at even positions
    check_same(lg::batch_norm(dx, dw, db, drm, wide.cuda().select(1, 0), false), lg::batch_norm(x, w, b, rm, rv, false),
               norm_device_tol(lg::kFloat16));
  }
}

TEST_CASE("group_norm and layer_norm on CUDA follow their weights when they change between calls") {
  // Their float64 copies of the weights are cached per (storage, version, view).
  const Tensor x = noise_in({2, 8, 5, 6}, MemoryFormat::ChannelsLast, lg::kFloat32, 21);
  Tensor w = noise_in({8}, MemoryFormat::Contiguous, lg::kFloat32, 22), b = lg::zeros({8});
  Tensor lw = noise_in({6}, MemoryFormat::Contiguous, lg::kFloat32, 23);
  Tensor dw = w.cuda(), db = b.cuda(), dlw = lw.cuda();
  const Tensor dx = x.cuda();
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    check_same(lg::group_norm(dx, 4, dw, db), lg::group_norm(x, 4, w, b), norm_device_tol(lg::kFloat32));
    check_same(lg::layer_norm(dx, {6}, dlw, std::nullopt), lg::layer_norm(x, {6}, lw, std::nullopt),
               norm_device_tol(lg::kFloat32));
    lg::mul_(w, -2.0);
    lg::mul_(dw, -2.0);
    b.copy_(lg::add(b, 0.5));
    db.copy_(lg::add(db, 0.5));
    lg::add_(lw, 1.0);
    lg::add_(dlw, 1.0);
  }
}

TEST_CASE("batch_norm on cuDNN: takes dense float16/bfloat16/float32, declines the rest, and equals the CPU either way") {
  const CudnnBatchNorm cudnn(true);
  std::vector<std::string> kernels;
  lg::hooks::ScopedHook hook([&](const lg::hooks::OpCall& c) {
    if (c.depth == 0 && c.op == "batch_norm") kernels.push_back(std::string(c.kernel));
  });
  // x_dev: the device input when it is not x.cuda() (a strided view made on the device: .cuda()
  // of a strided CPU tensor gives a dense one).
  const auto run = [&](const Tensor& x, bool training, lg::DType stats_dtype, bool affine, bool running,
                       const Tensor& x_dev = Tensor()) {
    const int64_t C = x.size(1);
    const Tensor w = affine ? noise_in({C}, MemoryFormat::Contiguous, lg::kFloat32, 12).to(stats_dtype) : Tensor();
    const Tensor b = affine ? noise_in({C}, MemoryFormat::Contiguous, lg::kFloat32, 13).to(stats_dtype) : Tensor();
    Tensor rm = running ? noise_in({C}, MemoryFormat::Contiguous, lg::kFloat32, 14).to(stats_dtype) : Tensor();
    Tensor rv = running ? lg::add(lg::abs(noise_in({C}, MemoryFormat::Contiguous, lg::kFloat32, 15)), 0.5).to(stats_dtype)
                        : Tensor();
    const auto opt = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
    const auto dev = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t.cuda()) : std::nullopt; };
    Tensor drm = running ? rm.cuda() : Tensor(), drv = running ? rv.cuda() : Tensor();
    // The CPU reference runs first, so that the hook sees the CUDA call alone.
    const Tensor want = lg::batch_norm(x, opt(w), opt(b), opt(rm), opt(rv), training, 0.3, 1e-4);
    kernels.clear();
    const Tensor got = lg::batch_norm(x_dev.defined() ? x_dev : x.cuda(), dev(w), dev(b), opt(drm), opt(drv), training,
                                      0.3, 1e-4);
    check_same(got, want, norm_device_tol(x.dtype()));
    if (running) {
      const Tol stats_tol = stats_dtype == lg::kFloat32 ? Tol{1e-6, 1e-5} : norm_device_tol(stats_dtype);
      check_same(drm, rm, stats_tol);
      check_same(drv, rv, stats_tol);
    }
    REQUIRE(kernels.size() == 1);
    return kernels.front();
  };
  // The case cuDNN must take: a float16 NHWC ResNet layer in training (every cudnn-frontend
  // batch-norm sample uses it). The inference phase of the norm-forward node built no plan on an
  // H100 with cuDNN 9.19, and bfloat16 and float32 may be declined; the values
  // hold either way.
  for (lg::DType dt : {lg::kFloat16, lg::kBFloat16, lg::kFloat32})
    for (bool training : {true, false}) {
      CAPTURE(dt);
      CAPTURE(training);
      const Tensor x = noise_in({8, 64, 14, 14}, MemoryFormat::ChannelsLast, lg::kFloat32, 16).to(dt);
      const std::string kernel = run(x, training, lg::kFloat32, true, true);
      if (dt == lg::kFloat16 && training) CHECK(kernel == "batch_norm_cudnn");
      else CHECK((kernel == "batch_norm_cudnn" || kernel == "channel_norm_cuda"));
    }
  // N * H * W = 2: the unbiased running variance PyTorch keeps is twice the biased one, so the
  // running-stat check inside run() tells them apart.
  (void)run(noise_in({2, 8, 1, 1}, MemoryFormat::ChannelsLast, lg::kFloat32, 20).to(lg::kFloat16), true,
            lg::kFloat32, true, true);
  // Every variant cuDNN may take or decline; the values hold either way.
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{4, 3, 7, 5}, std::vector<int64_t>{32, 8, 1, 1},
                                            std::vector<int64_t>{2, 8, 3, 4, 5}, std::vector<int64_t>{2, 40, 9, 11}})
    for (lg::DType dt : {lg::kFloat16, lg::kFloat32})
      for (bool channels_last : {false, true})
        for (bool training : {true, false})
          for (int variant = 0; variant < 3; ++variant) {
            // 0: float32 stats, affine; 1: stats in the input's dtype (a half model), affine;
            // 2: no weight or bias, and in training no running stats.
            CAPTURE(lg::to_string(shape));
            CAPTURE(dt);
            CAPTURE(channels_last);
            CAPTURE(training);
            CAPTURE(variant);
            const MemoryFormat f = !channels_last      ? MemoryFormat::Contiguous
                                   : shape.size() == 5 ? MemoryFormat::ChannelsLast3d
                                                       : MemoryFormat::ChannelsLast;
            const Tensor x = noise_in(shape, f, lg::kFloat32, 17).to(dt);
            (void)run(x, training, variant == 1 ? dt : lg::kFloat32, variant != 2, variant != 2 || !training);
          }
  // Declined: float64, and a strided input; our kernels answer.
  CHECK(run(noise_in({2, 8, 5, 5}, MemoryFormat::ChannelsLast, lg::kFloat64, 18), true, lg::kFloat64, true, true) ==
        "channel_norm_cuda");
  const Tensor full = noise_in({2, 8, 5, 10}, MemoryFormat::Contiguous, lg::kFloat32, 19);
  const Tensor strided_dev = full.cuda().slice(3, 0, 10, 2);
  REQUIRE(!strided_dev.is_non_overlapping_and_dense());
  CHECK(run(full.slice(3, 0, 10, 2), true, lg::kFloat32, true, true, strided_dev) == "channel_norm_cuda");
}

TEST_CASE("group_norm, instance_norm and layer_norm on CUDA equal the CPU's and keep channels_last") {
  for (lg::DType dt : {lg::kFloat32, lg::kFloat16, lg::kFloat64})
    for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
      CAPTURE(dt);
      CAPTURE(f);
      const Tol tol = norm_device_tol(dt);
      const Tensor x = noise_in({3, 8, 5, 6}, f, lg::kFloat32, 5).to(dt);
      const Tensor w = noise_in({8}, MemoryFormat::Contiguous, lg::kFloat32, 6).to(dt);
      const Tensor b = noise_in({8}, MemoryFormat::Contiguous, lg::kFloat32, 7).to(dt);
      check_same(lg::group_norm(x.cuda(), 4, w.cuda(), b.cuda()), lg::group_norm(x, 4, w, b), tol);
      Tensor rm = lg::zeros({8}, dt), rv = lg::ones({8}, dt);
      Tensor drm = rm.cuda(), drv = rv.cuda();
      check_same(lg::instance_norm(x.cuda(), w.cuda(), b.cuda(), drm, drv, true, 0.1, 1e-5),
                 lg::instance_norm(x, w, b, rm, rv, true, 0.1, 1e-5), tol);
      check_same(drm, rm, tol);
      check_same(drv, rv, tol);
      const Tensor lw = noise_in({5, 6}, MemoryFormat::Contiguous, lg::kFloat32, 8).to(dt);
      const Tensor lb = noise_in({5, 6}, MemoryFormat::Contiguous, lg::kFloat32, 9).to(dt);
      check_same(lg::layer_norm(x.cuda(), {5, 6}, lw.cuda(), lb.cuda()), lg::layer_norm(x, {5, 6}, lw, lb), tol);
      check_same(lg::layer_norm(x.cuda(), {6}), lg::layer_norm(x, {6}), tol);
    }
}

TEST_CASE("group_norm and layer_norm on CUDA over maps of many chunks, in 16-byte lanes and element by element") {
  // 64 channels and a 20 x 24 map: every float type takes 16-byte lanes in NHWC (adjacent
  // channels) and in NCHW (a plane's 480 elements); the view of 63 of 64 channels starts
  // misaligned and goes element by element. Each statistic spans several chunks.
  for (lg::DType dt : {lg::kFloat16, lg::kBFloat16, lg::kFloat32})
    for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
      CAPTURE(dt);
      CAPTURE(f);
      const Tol tol = norm_device_tol(dt);
      const Tensor x = lg::add(noise_in({4, 64, 20, 24}, f, lg::kFloat32, 11), 2.0).to(dt);
      const Tensor w = noise_in({64}, MemoryFormat::Contiguous, lg::kFloat32, 12).to(dt);
      const Tensor b = noise_in({64}, MemoryFormat::Contiguous, lg::kFloat32, 13).to(dt);
      check_same(lg::group_norm(x.cuda(), 32, w.cuda(), b.cuda()), lg::group_norm(x, 32, w, b), tol);
      check_same(lg::group_norm(x.cuda(), 1), lg::group_norm(x, 1), tol);
      const Tensor part = x.narrow(1, 1, 63), dpart = x.cuda().narrow(1, 1, 63);
      check_same(lg::group_norm(dpart, 7), lg::group_norm(part, 7), tol);
      const Tensor nhwc = x.permute({0, 2, 3, 1});  // ConvNeXt's layer norm over C
      check_same(lg::layer_norm(x.cuda().permute({0, 2, 3, 1}), {64}, w.cuda(), b.cuda()), lg::layer_norm(nhwc, {64}, w, b),
                 tol);
    }
}

}

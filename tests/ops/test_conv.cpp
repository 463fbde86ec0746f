// Convolutions against the float64 reference: 2-D and 3-D, transposed, stride, padding
// (numbers, lg::kSame, lg::kValid), dilation, groups, depthwise, bias; every input layout variant with
// contiguous and channels_last weights; the output layout rule (input OR weight suggests
// channels_last) with exact strides, layout rows 51-61 (numbered as in
// tests/core/test_layout_rows.cpp); the packed-weight cache; bad input.
#include <algorithm>

#include <doctest/doctest.h>

#include <layoutguard/testing/doctest.h>

#include "cpu/avx2_target.h"
#include "cpu/packed_weights.h"
#include "cpu/panel_gemm.h"
#include "ops/conv_reference.h"
#include "support/guard_testing.h"
#include "support/op_testing.h"

namespace {

using lg::DType;
using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;

constexpr TolTable conv_tol{.f64 = {1e-10, 1e-10}, .f32 = {1e-4, 1e-4}, .f16 = {1e-2, 2e-3}, .bf16 = {6e-2, 1e-2}};

struct Case2d {
  std::string name;
  std::vector<int64_t> x;  // N, C, H, W
  std::vector<int64_t> w;  // O, C/groups, kH, kW
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
  bool bias;
};

const std::vector<Case2d>& cases_2d() {
  static const std::vector<Case2d> cases{
      {"3x3 pad 1 with bias", {2, 4, 7, 6}, {6, 4, 3, 3}, {1}, {1}, {1}, 1, true},
      {"3x3 stride 2 dilation 2", {2, 3, 9, 8}, {4, 3, 3, 3}, {2}, {0}, {2}, 1, false},
      {"1x1 (a plain GEMM)", {2, 5, 4, 4}, {3, 5, 1, 1}, {1}, {0}, {1}, 1, true},
      {"1x1 stride 2", {2, 5, 5, 4}, {3, 5, 1, 1}, {2}, {0}, {1}, 1, false},
      {"groups 2", {2, 4, 5, 5}, {6, 2, 3, 3}, {1}, {1}, {1}, 2, true},
      {"groups 4 (ResNeXt-like), stride 2, dilation 2", {2, 16, 9, 8}, {8, 4, 3, 3}, {2}, {2}, {2}, 4, true},
      // Narrow groups with as many inputs as outputs: the NHWC direct kernel
      // (cpu/conv_nhwc_grouped.h) -- 6-pixel tiles, a remainder tile, border pixels.
      {"groups of 4 (ResNeXt stage 1) with bias", {2, 16, 7, 15}, {16, 4, 3, 3}, {1}, {1}, {1}, 4, true},
      {"groups of 2, stride 2, dilation 2", {2, 8, 9, 12}, {8, 2, 3, 3}, {2}, {2}, {2}, 4, false},
      {"groups of 8, 2x3 kernel, per-dim padding", {1, 32, 6, 13}, {32, 8, 2, 3}, {1}, {0, 1}, {1}, 4, true},
      {"groups of 16, no padding", {2, 32, 5, 9}, {32, 16, 3, 3}, {1}, {0}, {1}, 2, false},
      {"depthwise stride 2", {2, 4, 7, 7}, {4, 1, 3, 3}, {2}, {1}, {1}, 4, true},
      {"depthwise multiplier 2", {1, 3, 5, 6}, {6, 1, 3, 3}, {1}, {1}, {1}, 3, false},
      // Depthwise widths that reach every part of the AVX2 NHWC kernel: 32-channel blocks,
      // 8-channel steps and a scalar tail.
      {"depthwise 45 channels, dilation 2", {2, 45, 7, 9}, {45, 1, 3, 3}, {1}, {2}, {2}, 45, true},
      {"depthwise 70 channels, stride 2", {1, 70, 9, 8}, {70, 1, 3, 3}, {2}, {1}, {1}, 70, false},
      {"2x3 kernel, per-dim stride and padding", {2, 3, 6, 7}, {4, 3, 2, 3}, {1, 2}, {1, 0}, {1}, 1, true},
  };
  return cases;
}

// Input layouts: contiguous, channels_last, permuted, non-dense channels_last slice, and a
// batch broadcast (stride 0).
std::vector<std::pair<std::string, Tensor>> input_variants(const std::vector<int64_t>& s, DType dt, uint32_t seed) {
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  return {
      {"contiguous", noise_in(s, CF, dt, seed)},
      {"channels_last", noise_in(s, CL, dt, seed)},
      {"permuted", noise_in({N, C, W, H}, CF, dt, seed).transpose(2, 3)},
      {"non-dense channels_last slice", noise_in({N, C, H * 2, W}, CL, dt, seed).slice(2, 0, H * 2, 2)},
      {"batch broadcast", noise_in({1, C, H, W}, CL, dt, seed).expand({N, C, H, W})},
  };
}

std::vector<double> bias_values(const Tensor& b) { return b.defined() ? values(b) : std::vector<double>{}; }

MemoryFormat expected_format(const Tensor& x, const Tensor& w, MemoryFormat cl) {
  return x.suggest_memory_format() == cl || w.suggest_memory_format() == cl ? cl : CF;
}

void check_conv2d(const Case2d& c, const Tensor& x, const Tensor& w, const Tensor& b, DType dt) {
  const Tensor y = lg::conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  RefConv p;
  const auto expand = [](const std::vector<int64_t>& v, int i) { return v.size() == 1 ? v[0] : v[i]; };
  p.groups = c.groups;
  p.out[0] = 1;
  for (int i = 0; i < 2; ++i) {
    p.stride[1 + i] = expand(c.stride, i);
    p.pad[1 + i] = expand(c.padding, i);
    p.dil[1 + i] = expand(c.dilation, i);
    p.out[1 + i] = (x.size(2 + i) + 2 * p.pad[1 + i] - p.dil[1 + i] * (w.size(2 + i) - 1) - 1) / p.stride[1 + i] + 1;
  }
  REQUIRE(y.sizes() == lg::IntArrayRef({x.size(0), w.size(0), p.out[1], p.out[2]}));
  CHECK(y.dtype() == dt);
  const MemoryFormat fmt = expected_format(x, w, CL);
  CHECK(ls(y) == ls(lg::empty(y.sizes(), lg::TensorOptions(), fmt)));
  check_close(values(y), rounded(ref_conv(grid5(x), grid5(w), bias_values(b), p), dt), conv_tol(dt));
}

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("conv2d: values and output layout over every case, input layout and weight layout (float32)") {
  for (const Case2d& c : cases_2d()) {
    for (const auto& [xname, x] : input_variants(c.x, lg::kFloat32, 1)) {
      for (MemoryFormat wfmt : {CF, CL}) {
        CAPTURE(c.name);
        CAPTURE(xname);
        CAPTURE(wfmt);
        const Tensor w = noise_in(c.w, wfmt, lg::kFloat32, 2);
        const Tensor b = c.bias ? noise_in({c.w[0]}, CF, lg::kFloat32, 3) : Tensor();
        check_conv2d(c, x, w, b, lg::kFloat32);
      }
    }
  }
}

TEST_CASE("conv2d: float64, float16 and bfloat16 in both layouts") {
  for (DType dt : {lg::kFloat64, lg::kFloat16, lg::kBFloat16}) {
    for (const Case2d& c : cases_2d()) {
      for (MemoryFormat fmt : {CF, CL}) {
        CAPTURE(dt);
        CAPTURE(c.name);
        CAPTURE(fmt);
        const Tensor x = noise_in(c.x, fmt, dt, 4);
        const Tensor w = noise_in(c.w, fmt, dt, 5);
        const Tensor b = c.bias ? noise_in({c.w[0]}, CF, dt, 6) : Tensor();
        check_conv2d(c, x, w, b, dt);
      }
    }
  }
}

TEST_CASE("conv2d: padding kSame (odd and even kernels, dilation) and kValid") {
  for (MemoryFormat fmt : {CF, CL}) {
    CAPTURE(fmt);
    const Tensor x = noise_in({2, 3, 6, 7}, fmt, lg::kFloat32, 7);
    for (int64_t k : {3, 4}) {
      for (int64_t d : {1, 2}) {
        CAPTURE(k);
        CAPTURE(d);
        const Tensor w = noise_in({4, 3, k, k}, fmt, lg::kFloat32, 8);
        const Tensor y = lg::conv2d(x, w, std::nullopt, {1}, lg::kSame, {d});
        REQUIRE(y.sizes() == lg::IntArrayRef({2, 4, 6, 7}));
        RefConv p;
        p.dil = {1, d, d};
        const int64_t total = d * (k - 1);
        p.pad = {0, total / 2, total / 2};  // the extra pad of an even total goes on the far side
        p.out = {1, 6, 7};
        check_close(values(y), ref_conv(grid5(x), grid5(w), {}, p), conv_tol(lg::kFloat32));
      }
    }
    const Tensor w = noise_in({4, 3, 3, 3}, fmt, lg::kFloat32, 9);
    CHECK(values(lg::conv2d(x, w, std::nullopt, {1}, lg::kValid)) == values(lg::conv2d(x, w)));
  }
}

TEST_CASE("conv2d: unbatched input, zero batch, one output pixel") {
  const Tensor w = noise_in({4, 3, 3, 3}, CL, lg::kFloat32, 10);
  const Tensor x = noise_in({3, 5, 5}, CF, lg::kFloat32, 11);
  const Tensor y = lg::conv2d(x, w, std::nullopt, {1}, {1});
  CHECK(y.sizes() == lg::IntArrayRef({4, 5, 5}));
  check_close(values(y), values(lg::conv2d(x.unsqueeze(0), w, std::nullopt, {1}, {1})), conv_tol(lg::kFloat32));

  const Tensor empty_batch = lg::conv2d(lg::empty({0, 3, 5, 5}, lg::TensorOptions(), CL), w);
  CHECK(empty_batch.sizes() == lg::IntArrayRef({0, 4, 3, 3}));

  // Layout row 58: a channels_last output of spatial size 1x1 gets (O,1,O,O) strides.
  const Tensor one = lg::conv2d(noise_in({2, 3, 3, 3}, CL, lg::kFloat32, 12), noise_in({4, 3, 3, 3}, CF, lg::kFloat32, 13));
  CHECK(ls(one) == "(2,4,1,1)@(4,1,4,4)");
}

TEST_CASE("conv3d: values and channels_last_3d over layouts, strides, groups, depthwise, dtypes") {
  struct Case3d {
    std::vector<int64_t> x, w, stride, padding, dilation;
    int64_t groups;
  };
  const std::vector<Case3d> cases{
      {{2, 3, 4, 5, 6}, {4, 3, 3, 3, 3}, {1}, {1}, {1}, 1},
      {{1, 4, 5, 6, 5}, {6, 2, 2, 3, 3}, {2, 1, 2}, {0, 1, 1}, {1}, 2},
      {{2, 4, 4, 5, 5}, {4, 1, 3, 3, 3}, {1}, {1}, {1, 2, 1}, 4},
      {{2, 3, 3, 4, 4}, {5, 3, 1, 1, 1}, {1}, {0}, {1}, 1},
      {{1, 16, 3, 4, 9}, {16, 4, 3, 3, 3}, {1}, {1}, {1}, 4},  // narrow groups in 3-D
      {{1, 40, 3, 5, 6}, {40, 1, 3, 3, 3}, {1}, {1}, {1}, 40},  // depthwise in 3-D, 32 + 8 channels
  };
  for (DType dt : {lg::kFloat32, lg::kFloat64, lg::kFloat16}) {
    for (const Case3d& c : cases) {
      for (MemoryFormat xf : {CF, CL3}) {
        for (MemoryFormat wf : {CF, CL3}) {
          CAPTURE(dt);
          CAPTURE(lg::to_string(c.x));
          CAPTURE(xf);
          CAPTURE(wf);
          const Tensor x = noise_in(c.x, xf, dt, 14), w = noise_in(c.w, wf, dt, 15), b = noise_in({c.w[0]}, CF, dt, 16);
          const Tensor y = lg::conv3d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
          RefConv p;
          p.groups = c.groups;
          for (int i = 0; i < 3; ++i) {
            p.stride[i] = c.stride.size() == 1 ? c.stride[0] : c.stride[i];
            p.pad[i] = c.padding.size() == 1 ? c.padding[0] : c.padding[i];
            p.dil[i] = c.dilation.size() == 1 ? c.dilation[0] : c.dilation[i];
            p.out[i] = (c.x[2 + i] + 2 * p.pad[i] - p.dil[i] * (c.w[2 + i] - 1) - 1) / p.stride[i] + 1;
          }
          CHECK(ls(y) == ls(lg::empty(y.sizes(), lg::TensorOptions(), expected_format(x, w, CL3))));
          check_close(values(y), rounded(ref_conv(grid5(x), grid5(w), values(b), p), dt), conv_tol(dt));
        }
      }
    }
  }
}

TEST_CASE("conv_transpose2d and conv_transpose3d: values, output_padding, groups, dilation, layouts") {
  struct CaseT {
    std::vector<int64_t> x, w, stride, padding, output_padding, dilation;
    int64_t groups;
  };
  const std::vector<CaseT> cases{
      {{2, 3, 4, 5}, {3, 4, 3, 3}, {2}, {1}, {1}, {1}, 1},
      {{2, 4, 3, 3}, {4, 3, 2, 2}, {2}, {0}, {0}, {1}, 2},
      {{1, 2, 4, 4}, {2, 2, 3, 3}, {1}, {0}, {0}, {2}, 1},
      {{2, 3, 4, 4}, {3, 5, 1, 1}, {1}, {0}, {0}, {1}, 1},
      {{2, 3, 2, 3, 3}, {3, 2, 2, 3, 3}, {2, 1, 2}, {0, 1, 1}, {1, 0, 0}, {1}, 1},
  };
  for (DType dt : {lg::kFloat32, lg::kFloat64, lg::kBFloat16}) {
    for (const CaseT& c : cases) {
      const int spatial = static_cast<int>(c.x.size()) - 2;
      const MemoryFormat cl = spatial == 2 ? CL : CL3;
      for (MemoryFormat xf : {CF, cl}) {
        for (MemoryFormat wf : {CF, cl}) {
          CAPTURE(dt);
          CAPTURE(lg::to_string(c.x));
          CAPTURE(xf);
          CAPTURE(wf);
          const Tensor x = noise_in(c.x, xf, dt, 17), w = noise_in(c.w, wf, dt, 18);
          const Tensor b = noise_in({c.w[1] * c.groups}, CF, dt, 19);
          const Tensor y = spatial == 2
                               ? lg::conv_transpose2d(x, w, b, c.stride, c.padding, c.output_padding, c.groups, c.dilation)
                               : lg::conv_transpose3d(x, w, b, c.stride, c.padding, c.output_padding, c.groups, c.dilation);
          RefConv p;
          p.groups = c.groups;
          const int lead = 3 - spatial;
          for (int i = 0; i < spatial; ++i) {
            auto pick = [&](const std::vector<int64_t>& v) { return v.size() == 1 ? v[0] : v[i]; };
            p.stride[lead + i] = pick(c.stride);
            p.pad[lead + i] = pick(c.padding);
            p.dil[lead + i] = pick(c.dilation);
            p.out[lead + i] = (c.x[2 + i] - 1) * pick(c.stride) - 2 * pick(c.padding) +
                              pick(c.dilation) * (c.w[2 + i] - 1) + pick(c.output_padding) + 1;
          }
          if (spatial == 2) p.out[0] = 1;
          CHECK(ls(y) == ls(lg::empty(y.sizes(), lg::TensorOptions(), expected_format(x, w, cl))));
          check_close(values(y), rounded(ref_conv_transpose(grid5(x), grid5(w), values(b), p), dt), conv_tol(dt));
        }
      }
    }
  }
}

TEST_CASE("layout rows 51-61: convolution output strides") {
  const auto f32 = lg::kFloat32;
  const Tensor x_cl = noise_in({2, 3, 6, 6}, CL, f32, 20), x_cf = noise_in({2, 3, 6, 6}, CF, f32, 21);
  const Tensor w_cf = noise_in({4, 3, 3, 3}, CF, f32, 22), w_cl = noise_in({4, 3, 3, 3}, CL, f32, 23);
  CHECK(ls(lg::conv2d(x_cl, w_cf)) == "(2,4,4,4)@(64,1,16,4)");  // 51
  CHECK(ls(lg::conv2d(x_cf, w_cl)) == "(2,4,4,4)@(64,1,16,4)");  // 52
  CHECK(ls(lg::conv2d(x_cf, w_cf)) == "(2,4,4,4)@(64,16,4,1)");  // 53
  // 54: a 1x1 weight .to(CL) is ambiguous and suggests CL, so the output is CL.
  const Tensor w1 = noise_in({4, 3, 1, 1}, CF, f32, 24).to(CL);
  CHECK(ls(w1) == "(4,3,1,1)@(3,1,3,3)");
  CHECK(ls(lg::conv2d(x_cf, w1)) == "(2,4,6,6)@(144,1,24,4)");
  // 55, 56: an N1HW input tagged by contiguous(CL) still suggests CF; by to(CL) it suggests CL.
  const Tensor n1 = noise_in({2, 1, 6, 6}, CF, f32, 25), w_n1 = noise_in({4, 1, 3, 3}, CF, f32, 26);
  CHECK(ls(lg::conv2d(n1.contiguous(CL), w_n1)) == "(2,4,4,4)@(64,16,4,1)");
  const Tensor n1_cl = lg::empty_strided({2, 1, 6, 6}, {36, 1, 6, 1});
  n1_cl.copy_(n1);
  CHECK(ls(lg::conv2d(n1_cl, w_n1)) == "(2,4,4,4)@(64,1,16,4)");
  // 57: float64 keeps the rule.
  CHECK(ls(lg::conv2d(x_cl.to(lg::kFloat64), w_cf.to(lg::kFloat64))) == "(2,4,4,4)@(64,1,16,4)");
  // 58: a 1x1 output.
  CHECK(ls(lg::conv2d(noise_in({2, 3, 3, 3}, CL, f32, 27), w_cf)) == "(2,4,1,1)@(4,1,4,4)");
  // 60 (PyTorch main, S3): conv3d of a channels_last_3d input is channels_last_3d.
  CHECK(ls(lg::conv3d(noise_in({2, 4, 5, 6, 7}, CL3, f32, 28), noise_in({3, 4, 3, 3, 3}, CF, f32, 29))) ==
        "(2,3,3,4,5)@(180,1,60,15,3)");
  // 61 (PyTorch main, S4): conv_transpose2d of a channels_last input is channels_last.
  CHECK(ls(lg::conv_transpose2d(x_cl, noise_in({3, 4, 3, 3}, CF, f32, 30))) == "(2,4,8,8)@(256,1,32,4)");
  // S5: a channels_last weight alone makes the transposed output channels_last.
  CHECK(ls(lg::conv_transpose2d(x_cf, noise_in({3, 4, 3, 3}, CL, f32, 31))) == "(2,4,8,8)@(256,1,32,4)");
}

TEST_CASE("packed weights are reused while the weight is unchanged and rebuilt after in-place writes") {
  lg::cpu::clear_pack_cache();
  const Tensor x = noise_in({1, 3, 5, 5}, CL, lg::kFloat32, 32);
  const Tensor w = noise_in({4, 3, 3, 3}, CF, lg::kFloat32, 33);  // NHWC path needs a repack
  const Tensor y1 = lg::conv2d(x, w);
  CHECK(lg::cpu::pack_cache_stats().misses == 1);
  const Tensor y2 = lg::conv2d(x, w);
  CHECK(lg::cpu::pack_cache_stats().hits == 1);
  CHECK(values(y1) == values(y2));

  const uint64_t v0 = w.version();
  lg::mul_(w, 2.0);  // in-place: bumps the version, so the packing is stale
  CHECK(w.version() > v0);
  const Tensor y3 = lg::conv2d(x, w);
  CHECK(lg::cpu::pack_cache_stats().misses == 2);
  check_close(values(y3), values(lg::mul(y1, 2.0)), conv_tol(lg::kFloat32));
  CHECK(lg::cpu::pack_cache_stats().entries == 1);  // the stale packing was dropped

  w.copy_(noise_in({4, 3, 3, 3}, CF, lg::kFloat32, 34));
  const Tensor y4 = lg::conv2d(x, w);
  check_close(values(y4), values(lg::conv2d(x.contiguous(), w.contiguous(CL))), conv_tol(lg::kFloat32));

  // A weight already in the kernel's order and dtype is used as it is, without packing: the
  // NCHW path reads (O, I, kH, kW) contiguous weights directly.
  const int64_t misses = lg::cpu::pack_cache_stats().misses;
  (void)lg::conv2d(x.contiguous(), w.contiguous());
  CHECK(lg::cpu::pack_cache_stats().misses == misses);
}

TEST_CASE("convolutions keep channels_last under the guard, shadow mode agrees, kernels are named") {
  CleanGuard clean;
  lg::guard::set_options(options_with(lg::guard::Mode::Throw, "shadow=1"));
  const Tensor x = noise_in({2, 3, 6, 6}, CL, lg::kFloat32, 35);
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::conv2d(x, noise_in({4, 3, 3, 3}, CF, lg::kFloat32, 36), std::nullopt, {1}, {1}));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::conv_transpose2d(x, noise_in({3, 4, 3, 3}, CF, lg::kFloat32, 37)));
  LG_CHECK_NO_LAYOUT_VIOLATIONS(lg::conv3d(noise_in({1, 2, 3, 4, 4}, CL3, lg::kFloat32, 38),
                                           noise_in({2, 2, 1, 1, 1}, CF, lg::kFloat32, 39)));
  const Tensor w1 = noise_in({4, 3, 1, 1}, CL, lg::kFloat32, 40), w3 = noise_in({4, 3, 3, 3}, CF, lg::kFloat32, 41);
  const Tensor wd = noise_in({3, 1, 3, 3}, CF, lg::kFloat32, 42), xc = x.contiguous();
  const Tensor x16 = noise_in({1, 16, 5, 5}, CL, lg::kFloat32, 43), wg = noise_in({16, 4, 3, 3}, CF, lg::kFloat32, 44);
  std::vector<std::string> kernels;
  lg::hooks::ScopedHook hook([&](const lg::hooks::OpCall& c) {
    if (c.depth == 0) kernels.push_back(std::string(c.op) + ":" + std::string(c.kernel));
  });
  (void)lg::conv2d(x, w1);
  (void)lg::conv2d(xc, w3);
  (void)lg::conv2d(x, wd, std::nullopt, {1}, {1}, {1}, 3);
  // Narrow groups: the direct kernel where the CPU has AVX2 and FMA, the im2col GEMM elsewhere.
  (void)lg::conv2d(x16, wg, std::nullopt, {1}, {1}, {1}, 4);
  const std::string grouped = lg::cpu::panel_gemm_supported() ? "conv2d:conv_nhwc_grouped_direct_cpu"
                                                              : "conv2d:conv_nhwc_im2col_gemm_cpu";
  // Depthwise: the AVX-512 form where the CPU has it, else the AVX2 one, else the portable loop.
  const std::string depthwise = !lg::cpu::panel_gemm_supported() ? "conv2d:conv_nhwc_depthwise_cpu"
                                : lg::cpu::panel_kernel_supported(lg::cpu::PanelKernel::kAvx512)
                                    ? "conv2d:conv_nhwc_depthwise_avx512_cpu"
                                    : "conv2d:conv_nhwc_depthwise_avx2_cpu";
  CHECK(kernels == std::vector<std::string>{"conv2d:conv_nhwc_1x1_gemm_cpu", "conv2d:conv_nchw_im2col_gemm_cpu",
                                            depthwise, grouped});
}

// Convolutions with 16+ input channels and one group: on AVX2+FMA CPUs, channels_last input
// takes conv_nhwc_indirect_gemm_cpu.
const std::vector<Case2d>& tap_cases() {
  static const std::vector<Case2d> cases{
      {"3x3 pad 1, 20 outputs (partial panel), bias", {2, 16, 7, 9}, {20, 16, 3, 3}, {1}, {1}, {1}, 1, true},
      {"3x3 stride 2 dilation 2 pad 2, 130 outputs", {1, 24, 9, 11}, {130, 24, 3, 3}, {2}, {2}, {2}, 1, false},
      {"5x5 pad 2: 25 taps of 32 channels over several k blocks", {3, 32, 9, 9}, {40, 32, 5, 5}, {1}, {2}, {1}, 1, true},
      {"1x1 stride 2 (a downsample)", {2, 64, 10, 10}, {48, 64, 1, 1}, {2}, {0}, {1}, 1, false},
      {"7x7 map, one image, 200 outputs: strips of columns over threads", {1, 48, 7, 7}, {200, 48, 3, 3}, {1}, {1},
       {1}, 1, true},
      {"30x30 maps: pixels over threads", {2, 16, 30, 30}, {24, 16, 3, 3}, {1}, {1}, {1}, 1, false},
      {"padding wider than the kernel: whole tiles of zeros", {1, 16, 3, 4}, {8, 16, 3, 3}, {1}, {3}, {1}, 1, true},
  };
  return cases;
}

// Depthwise shapes for the vector kernel's pieces: runs of 8, 4, 2 and 1 outputs inside the
// input, border outputs on both sides, channel chunks of 16, 8 and single channels.
const std::vector<Case2d>& depthwise_cases() {
  static const std::vector<Case2d> cases{
      {"depthwise 27 channels, 3x3 pad 1, 30 wide: 28 inside = 3 x 8 + 4", {2, 27, 5, 30}, {27, 1, 3, 3}, {1}, {1}, {1},
       27, true},
      {"depthwise 5x5 stride 2 dilation 2 pad 3, 48 channels", {1, 48, 13, 23}, {48, 1, 5, 5}, {2}, {3}, {2}, 48, false},
      {"depthwise padding wider than the kernel: one output inside", {1, 16, 3, 3}, {16, 1, 3, 3}, {1}, {4}, {1}, 16,
       true},
      {"depthwise 1x7 kernel, 9 wide, 24 channels: 3 inside = 2 + 1", {1, 24, 4, 9}, {24, 1, 1, 7}, {1}, {0, 3}, {1},
       24, false},
      {"depthwise 7 channels, 2x2 stride 2", {2, 7, 6, 8}, {7, 1, 2, 2}, {2}, {0}, {1}, 7, true},
      // Fewer rows than two per thread, many channels: 200 = 12 x 16 + 8 (an 8-channel tail).
      {"depthwise 200 channels, 5 rows", {1, 200, 5, 5}, {200, 1, 3, 3}, {1}, {1}, {1}, 200, true},
      {"depthwise 960 channels, 7x7 (MobileNetV2's last block at batch 1)", {1, 960, 7, 7}, {960, 1, 3, 3}, {1}, {1},
       {1}, 960, false},
  };
  return cases;
}

// Runs every input layout and both weight layouts of `cases` against the reference.
void check_cases(const std::vector<Case2d>& cases, uint32_t seed) {
  for (const Case2d& c : cases) {
    CAPTURE(c.name);
    const Tensor b = c.bias ? noise_in({c.w[0]}, CF, lg::kFloat32, seed++) : Tensor();
    for (const auto& [xname, x] : input_variants(c.x, lg::kFloat32, seed++)) {
      CAPTURE(xname);
      for (MemoryFormat wf : {CF, CL}) check_conv2d(c, x, noise_in(c.w, wf, lg::kFloat32, seed++), b, lg::kFloat32);
    }
  }
}

// The kernel names the top-level ops of run() report.
template <typename Fn>
std::vector<std::string> top_level_kernels(Fn&& run) {
  std::vector<std::string> kernels;
  lg::hooks::ScopedHook hook([&](const lg::hooks::OpCall& c) {
    if (c.depth == 0) kernels.push_back(std::string(c.kernel));
  });
  run();
  return kernels;
}

// Checks that conv2d(x, w, padding 1) runs `kernel` where the CPU has AVX2 and FMA, and the
// im2col GEMM elsewhere (saying what went untested).
void check_nhwc_kernel(const Tensor& x, const Tensor& w, const std::string& kernel) {
  const std::vector<std::string> ran = top_level_kernels([&] { (void)lg::conv2d(x, w, std::nullopt, {1}, {1}); });
  if (lg::cpu::panel_gemm_supported()) {
    CHECK(ran == std::vector<std::string>{kernel});
  } else {
    CHECK(ran == std::vector<std::string>{"conv_nhwc_im2col_gemm_cpu"});
    MESSAGE(kernel << " is not tested: this CPU lacks AVX2 or FMA");
  }
}

// Turns the AVX-512 kernel forms off for its scope, so a CPU that has them tests the AVX2 ones.
struct Avx2Only {
  Avx2Only() : before_(lg::cpu::use_avx512()) { lg::cpu::set_avx512_enabled(false); }
  ~Avx2Only() { lg::cpu::set_avx512_enabled(before_); }
  Avx2Only(const Avx2Only&) = delete;
  Avx2Only& operator=(const Avx2Only&) = delete;

 private:
  bool before_;
};

TEST_CASE("conv2d: output rows of 24+ pixels, read in place (no im2col), against the reference") {
  // Fewer than 16 input channels, so on AVX2+FMA CPUs these take conv_nhwc_implicit_gemm_cpu
  // for channels_last input (on AVX2 without AVX-512 only up to 64 outputs): every output row
  // one panel_gemm_indirect over the input, the pixels at the left and right padding
  // through im2col, kernel rows in the top or bottom padding skipped. Elsewhere they check the
  // im2col GEMM on wide rows.
  const std::vector<Case2d> cases{
      {"stem-like 7x7 stride 2 pad 3, bias", {2, 3, 9, 56}, {8, 3, 7, 7}, {2}, {3}, {1}, 1, true},
      {"3x3 pad 1, 20 outputs (partial panel)", {1, 15, 5, 30}, {20, 15, 3, 3}, {1}, {1}, {1}, 1, false},
      {"3x3 stride 2, 70 outputs (a strip of 4 panels and one of 1)", {2, 8, 7, 50}, {70, 8, 3, 3}, {2}, {1}, {1}, 1,
       true},
      {"dilation 2 along H only", {1, 4, 9, 27}, {5, 4, 3, 3}, {1}, {2, 1}, {2, 1}, 1, false},
      {"5x3 kernel, no W padding", {1, 6, 6, 28}, {3, 6, 5, 3}, {1}, {1, 0}, {1}, 1, true},
      {"1x1 stride 2", {1, 12, 4, 52}, {16, 12, 1, 1}, {2}, {0}, {1}, 1, false},
      {"padding 4 around a 3x3 kernel: whole rows of zeros", {1, 3, 4, 26}, {4, 3, 3, 3}, {1}, {4}, {1}, 1, true},
      {"7x7 of 12 channels: K = 588, two k blocks of kernel rows", {2, 12, 9, 30}, {8, 12, 7, 7}, {1}, {3}, {1}, 1,
       false},
      {"input narrower than the kernel, padding 12: no pixel read in place", {1, 4, 3, 2}, {5, 4, 3, 3}, {1}, {12},
       {1}, 1, true},
  };
  uint32_t seed = 700;
  for (const Case2d& c : cases) {
    CAPTURE(c.name);
    const Tensor b = c.bias ? noise_in({c.w[0]}, CF, lg::kFloat32, seed++) : Tensor();
    for (const auto& [xname, x] : input_variants(c.x, lg::kFloat32, seed++)) {
      CAPTURE(xname);
      for (MemoryFormat wf : {CF, CL}) check_conv2d(c, x, noise_in(c.w, wf, lg::kFloat32, seed++), b, lg::kFloat32);
    }
  }
  // conv3d with one depth tap takes the same path: depth stride and padding pick the input
  // plane (a padded plane: every run null), checked against the NCDHW kernel.
  const Tensor x3 = noise_in({2, 5, 3, 4, 30}, CL3, lg::kFloat32, 780), w3 = noise_in({6, 5, 1, 3, 3}, CF, lg::kFloat32, 781);
  const Tensor b3 = noise_in({6}, CF, lg::kFloat32, 782);
  for (const std::vector<int64_t>& pad : {std::vector<int64_t>{0, 1, 1}, std::vector<int64_t>{1, 0, 2}}) {
    CAPTURE(pad[0]);
    const Tensor got = lg::conv3d(x3, w3, b3, {2, 1, 1}, pad);
    LG_CHECK_MEMORY_FORMAT(got, lg::MemoryFormat::ChannelsLast3d);
    check_close(values(got), values(lg::conv3d(x3.contiguous(), w3, b3, {2, 1, 1}, pad)), conv_tol(lg::kFloat32));
  }
  check_nhwc_kernel(noise_in({1, 3, 8, 48}, CL, lg::kFloat32, 790), noise_in({4, 3, 3, 3}, CL, lg::kFloat32, 791),
                    "conv_nhwc_implicit_gemm_cpu");
}

TEST_CASE("conv2d and conv3d with 16+ input channels, read tap by tap in place, against the reference") {
  // On AVX2+FMA CPUs these take conv_nhwc_indirect_gemm_cpu for channels_last input: one GEMM
  // over all output pixels whose A rows are pointers to each tap's channels, null (zeros) in the
  // padding. Elsewhere they check the im2col GEMM.
  check_cases(tap_cases(), 900);
  // A channel slice of an NHWC tensor: channels dense, pixels 40 floats apart for 32 channels.
  const Tensor wide = noise_in({2, 40, 6, 8}, CL, lg::kFloat32, 950);
  const Tensor sliced = wide.slice(1, 4, 36), ws = noise_in({12, 32, 3, 3}, CL, lg::kFloat32, 951);
  REQUIRE(sliced.stride(1) == 1);
  REQUIRE(sliced.stride(3) == 40);
  check_close(values(lg::conv2d(sliced, ws, std::nullopt, {1}, {1})),
              values(lg::conv2d(sliced.contiguous(), ws, std::nullopt, {1}, {1})), conv_tol(lg::kFloat32));
  // conv3d: 27 taps, a strided depth and a dilated depth, against the NCDHW kernel.
  const Tensor x3 = noise_in({2, 16, 5, 6, 7}, CL3, lg::kFloat32, 960), w3 = noise_in({10, 16, 3, 3, 3}, CF, lg::kFloat32, 961);
  const Tensor b3 = noise_in({10}, CF, lg::kFloat32, 962);
  const Tensor got3 = lg::conv3d(x3, w3, b3, {2, 1, 1}, {1, 1, 0}, {1, 2, 1});
  LG_CHECK_MEMORY_FORMAT(got3, lg::MemoryFormat::ChannelsLast3d);
  check_close(values(got3), values(lg::conv3d(x3.contiguous(), w3, b3, {2, 1, 1}, {1, 1, 0}, {1, 2, 1})),
              conv_tol(lg::kFloat32));
  check_nhwc_kernel(noise_in({1, 16, 5, 5}, CL, lg::kFloat32, 970), noise_in({4, 16, 3, 3}, CL, lg::kFloat32, 971),
                    "conv_nhwc_indirect_gemm_cpu");
}

TEST_CASE("NHWC convolutions with an output past 24 MiB (streamed to memory) match the NCHW path") {
  // Each output is over 24 MiB, so on AVX2+FMA CPUs the panel GEMM writes it with non-temporal
  // stores (cpu::CStore::kStreamed): a 1x1 (65536 pixels x 100 channels; rows of 100 floats are
  // not all 64-byte aligned, so some vectors take the cached store), a 3-channel 7x7 stem (row
  // by row) and a 16-channel 3x3 (tap by tap, K = 144: one k block). Both instruction sets where
  // the CPU has AVX-512.
  struct Big {
    std::vector<int64_t> x, w;
    int64_t stride, pad;
  };
  uint32_t seed = 1400;
  for (const Big& c : {Big{{1, 8, 256, 256}, {100, 8, 1, 1}, 1, 0}, Big{{2, 3, 448, 448}, {64, 3, 7, 7}, 2, 3},
                       Big{{1, 16, 300, 300}, {72, 16, 3, 3}, 1, 1}}) {
    CAPTURE(c.w[2]);
    const Tensor x = noise_in(c.x, CL, lg::kFloat32, seed++), w = noise_in(c.w, CL, lg::kFloat32, seed++);
    const std::vector<double> want =
        values(lg::conv2d(x.contiguous(), w.contiguous(), std::nullopt, {c.stride}, {c.pad}));
    const Tensor got = lg::conv2d(x, w, std::nullopt, {c.stride}, {c.pad});
    REQUIRE(got.numel() * 4 > (int64_t{24} << 20));
    LG_CHECK_CHANNELS_LAST(got);
    check_close(values(got), want, conv_tol(lg::kFloat32));
    if (lg::cpu::panel_kernel_supported(lg::cpu::PanelKernel::kAvx512)) {
      const Avx2Only avx2_only;
      check_close(values(lg::conv2d(x, w, std::nullopt, {c.stride}, {c.pad})), want, conv_tol(lg::kFloat32));
    }
  }
}

TEST_CASE("NHWC depthwise on the vector kernel, each piece of a row, against the reference") {
  // conv_nhwc_depthwise_avx512_cpu or _avx2_cpu for channels_last input on AVX2+FMA CPUs.
  check_cases(depthwise_cases(), 1000);
}

TEST_CASE("NHWC convolutions in their AVX2 form on a CPU that also has AVX-512") {
  if (!lg::cpu::panel_kernel_supported(lg::cpu::PanelKernel::kAvx512)) {
    MESSAGE("skipped: this CPU has no AVX-512, so the other tests already ran the AVX2 forms");
    return;
  }
  const Avx2Only avx2_only;
  const std::vector<std::string> kernels = top_level_kernels([] {
    check_cases(tap_cases(), 1100);
    check_cases(depthwise_cases(), 1200);
    check_cases(cases_2d(), 1300);
  });
  const auto ran = [&](const std::string& name) { return std::find(kernels.begin(), kernels.end(), name) != kernels.end(); };
  CHECK(ran("conv_nhwc_indirect_gemm_cpu"));
  CHECK(ran("conv_nhwc_depthwise_avx2_cpu"));
  CHECK(!ran("conv_nhwc_depthwise_avx512_cpu"));
}

TEST_CASE("NHWC depthwise: a strided bias and the portable path agree with the NCHW kernel") {
  // The vector kernel copies a strided bias into a dense row first; NCHW runs a separate kernel,
  // and a channel-strided input (not dense channels) takes the portable NHWC loop.
  const Tensor x = noise_in({2, 45, 6, 7}, CL, lg::kFloat32, 51), w = noise_in({45, 1, 3, 3}, CF, lg::kFloat32, 52);
  const Tensor bias = noise_in({90}, CF, lg::kFloat32, 53).slice(0, 0, 90, 2);
  REQUIRE(bias.stride(0) == 2);
  const Tensor want = lg::conv2d(x.contiguous(), w, bias, {1}, {1}, {1}, 45);
  const Tensor got = lg::conv2d(x, w, bias, {1}, {1}, {1}, 45);
  LG_CHECK_CHANNELS_LAST(got);
  check_close(values(got), values(want), conv_tol(lg::kFloat32));
  const Tensor strided_channels = noise_in({2, 90, 6, 7}, CL, lg::kFloat32, 51).slice(1, 0, 90, 2);
  const Tensor portable = lg::conv2d(strided_channels, w, bias, {1}, {1}, {1}, 45);
  check_close(values(portable), values(lg::conv2d(strided_channels.contiguous(), w, bias, {1}, {1}, {1}, 45)),
              conv_tol(lg::kFloat32));
}

TEST_CASE("bad input: each with an lg::Error naming the op and the mismatch") {
  const Tensor x = lg::ones({2, 3, 6, 6}), w = lg::ones({4, 3, 3, 3});
  CHECK_THROWS_WITH_AS(lg::conv2d(lg::ones({3, 6}), w), doctest::Contains("[conv2d] expected 3-D (unbatched) or 4-D"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, lg::ones({4, 3, 3})), doctest::Contains("expected a 4-D weight"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(lg::ones({2, 5, 6, 6}), w), doctest::Contains("to have 3 channels, but got 5"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, lg::ones({5, 1, 3, 3}), std::nullopt, {1}, {0}, {1}, 3),
                       doctest::Contains("expected weight to be divisible by 3"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w, lg::ones({3})), doctest::Contains("expected bias to be 1-dimensional with 4"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w, std::nullopt, {0}), doctest::Contains("non-positive stride"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w, std::nullopt, {1}, {-1}), doctest::Contains("negative padding"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w, std::nullopt, {1}, {0}, {0}), doctest::Contains("dilation should be greater than zero"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w, std::nullopt, {1}, {0}, {1}, 0), doctest::Contains("non-positive groups"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w, std::nullopt, {1, 1, 1}), doctest::Contains("stride has 3 values"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(lg::ones({2, 3, 2, 2}), w), doctest::Contains("Kernel size can't be greater than actual input size"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w, std::nullopt, {2}, lg::kSame), doctest::Contains("padding=kSame is not supported for strided"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w, std::nullopt, {1}, static_cast<lg::PaddingMode>(7)), doctest::Contains("required kSame or kValid"), lg::Error);
  // An empty padding list picks the named-padding overload with PaddingMode{}: refused, as an
  // empty stride or dilation is, never taken for "same".
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w, std::nullopt, {1}, {}), doctest::Contains("received padding mode 0; required kSame or kValid"),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w.to(lg::kFloat64)), doctest::Contains("input type (float32) and weight type (float64)"), lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::conv2d(x, w, lg::ones({4}, lg::kFloat16)), doctest::Contains("bias type (float16)"), lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::conv2d(x.to(lg::kInt32), w.to(lg::kInt32)), doctest::Contains("not implemented for int32"), lg::TypeError);
  CHECK_THROWS_WITH_AS(lg::conv2d(Tensor(), w), doctest::Contains("[conv2d]"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv_transpose2d(x, lg::ones({4, 2, 3, 3})), doctest::Contains("to have 4 channels, but got 3"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv_transpose2d(x, lg::ones({3, 2, 3, 3}), std::nullopt, {1}, {0}, {1}),
                       doctest::Contains("output padding must be smaller than either stride or dilation"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv_transpose2d(lg::ones({1, 3, 1, 1}), lg::ones({3, 2, 1, 1}), std::nullopt, {1}, {1}),
                       doctest::Contains("required every output size > 0"), lg::Error);
  CHECK_THROWS_WITH_AS(lg::conv3d(lg::ones({3, 6, 6}), w), doctest::Contains("[conv3d] expected 4-D (unbatched) or 5-D"), lg::Error);
}

}  // TEST_SUITE

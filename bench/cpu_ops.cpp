// CPU operator speed against peers in the same run: the 12 ResNet-50 convolution shapes
// (performance_anchors.md section 4) at batch 1 and 16 -- ours in NHWC and NCHW, and oneDNN's
// direct API (NHWC activations, pre-packed weights) when it is installed -- and the same for 16
// MobileNetV2 layers (1x1 with few channels, depthwise 3x3), then max and average pooling in both layouts against oneDNN's, and pointwise and NCHW<->NHWC conversion
// bandwidth against memcpy of the same bytes, and evaluation batch norm on small maps against
// relu6. A benchmark, not a test: it prints medians (min, max) and ratios, never pass/fail.
//
//   build/bench/cpu_ops [--quick | --smoke] [--json PATH] [--avx2]
//                       [--conv-only | --mobilenet-only | --pool-only | --layers-only | --bandwidth-only |
//                        --small-maps-only]
//   (threads: OMP_NUM_THREADS, default all cores)
// --quick: batch 1 only; --smoke: the first row of each table and the smallest bandwidth case;
// --conv-only (ResNet-50), --mobilenet-only, --pool-only, --layers-only, --bandwidth-only,
// --small-maps-only: that table only.
// --avx2: our kernels with an AVX-512 form run their AVX2 form instead (to time both on one CPU).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <omp.h>

#include <layoutguard/layoutguard.h>

#include "cpu/avx2_target.h"  // set_avx512_enabled: --avx2
#include "report.h"

#if LG_BENCH_HAVE_DNNL
#include <dnnl.hpp>
#endif

namespace {

using lg::bench::Timing;

struct ConvShape {
  int64_t cin, cout, k, stride, h;
  int64_t groups = 1;
};

// ResNet-50's distinct convolution shapes (stem, then one per stage and kind).
const std::vector<ConvShape> kResNet50{
    {3, 64, 7, 2, 224},    {64, 64, 1, 1, 56},    {64, 64, 3, 1, 56},   {64, 256, 1, 1, 56},
    {256, 64, 1, 1, 56},   {128, 128, 3, 1, 28},  {512, 128, 1, 1, 28}, {256, 256, 3, 1, 14},
    {1024, 256, 1, 1, 14}, {512, 512, 3, 1, 7},   {2048, 512, 1, 1, 7}, {512, 2048, 1, 1, 7},
};

// MobileNetV2's layers at 224x224 (one per distinct kind and stage): 1x1 expansions and
// projections with few channels, and the depthwise 3x3 convolutions (groups = channels).
const std::vector<ConvShape> kMobileNetV2{
    {32, 16, 1, 1, 112},   {16, 96, 1, 1, 112},     {96, 96, 3, 2, 112, 96},   {24, 144, 1, 1, 56},
    {144, 144, 3, 1, 56, 144}, {144, 24, 1, 1, 56}, {32, 192, 1, 1, 28},      {192, 192, 3, 1, 28, 192},
    {64, 384, 1, 1, 14},   {384, 384, 3, 1, 14, 384}, {384, 64, 1, 1, 14},   {96, 576, 1, 1, 14},
    {160, 960, 1, 1, 7},   {960, 960, 3, 1, 7, 960},  {960, 160, 1, 1, 7},   {320, 1280, 1, 1, 7},
};

double conv_flops(const ConvShape& s, int64_t batch) {
  const int64_t pad = s.k / 2, out = (s.h + 2 * pad - s.k) / s.stride + 1;
  return 2.0 * static_cast<double>(batch * s.cout * out * out) * static_cast<double>(s.cin / s.groups * s.k * s.k);
}

#if LG_BENCH_HAVE_DNNL
// oneDNN forward inference with NHWC activations and weights reordered once into its preferred
// (blocked) format: the strongest configuration oneDNN offers for this layer.
struct DnnlConv {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::convolution_forward prim;
  dnnl::memory src, wei, dst;

  DnnlConv(const ConvShape& s, int64_t batch, const lg::Tensor& x_nhwc, const lg::Tensor& w_oihw, const lg::Tensor& y_nhwc) {
    using dnnl::memory;
    const int64_t pad = s.k / 2, out = (s.h + 2 * pad - s.k) / s.stride + 1;
    const memory::dims src_dims{batch, s.cin, s.h, s.h}, dst_dims{batch, s.cout, out, out};
    // Grouped weights are (g, O/g, I/g, kH, kW): the same memory as our (O, I/g, kH, kW).
    const memory::dims wei_dims = s.groups == 1 ? memory::dims{s.cout, s.cin, s.k, s.k}
                                                : memory::dims{s.groups, s.cout / s.groups, s.cin / s.groups, s.k, s.k};
    const memory::desc src_md(src_dims, memory::data_type::f32, memory::format_tag::nhwc);
    const memory::desc dst_md(dst_dims, memory::data_type::f32, memory::format_tag::nhwc);
    const memory::desc wei_any(wei_dims, memory::data_type::f32, memory::format_tag::any);
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               src_md, wei_any, dst_md, {s.stride, s.stride}, {pad, pad}, {pad, pad});
    const dnnl::convolution_forward::primitive_desc pd(desc, eng);
    src = memory(src_md, eng, x_nhwc.data_ptr());
    dst = memory(dst_md, eng, y_nhwc.data_ptr());
    const auto user_tag = s.groups == 1 ? memory::format_tag::oihw : memory::format_tag::goihw;
    memory wei_user({wei_dims, memory::data_type::f32, user_tag}, eng, w_oihw.data_ptr());
    wei = memory(pd.weights_desc(), eng);
    dnnl::reorder(wei_user, wei).execute(strm, wei_user, wei);
    prim = dnnl::convolution_forward(pd);
    strm.wait();
  }
  void run() {
    prim.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    strm.wait();
  }
};
#endif

// One table of conv2d layers, ours in both layouts against oneDNN: `model` names the shapes in
// the title, `section` tags the JSON records.
void conv_table(lg::bench::Results& results, bool quick, bool smoke, int runs, const char* model,
                const std::vector<ConvShape>& shapes, const char* section) {
  std::printf("\n%s conv2d fp32, %d threads: GFLOPS as median (min-max time ms)\n", model, omp_get_max_threads());
  std::printf("%-22s %5s %20s %20s %20s %8s %8s\n", "layer", "batch", "ours NHWC", "ours NCHW", "oneDNN NHWC",
              "NHWC/NCHW", "NHWC/oneDNN");
  std::vector<double> ratio_dnnl;
  int nhwc_wins = 0, layers = 0;
  for (int64_t batch : {int64_t{1}, int64_t{16}}) {
    for (const ConvShape& s : shapes) {
      if (quick && batch == 16) continue;
      if (smoke && &s != &shapes.front()) continue;
      const int64_t pad = s.k / 2;
      const lg::Tensor x_cl = lg::randn({batch, s.cin, s.h, s.h}).contiguous(lg::MemoryFormat::ChannelsLast);
      const lg::Tensor x_cf = x_cl.contiguous();
      const lg::Tensor w_cf = lg::randn({s.cout, s.cin / s.groups, s.k, s.k});
      const lg::Tensor w_cl = w_cf.contiguous(lg::MemoryFormat::ChannelsLast);
      const double gf = conv_flops(s, batch) / 1e9;
      std::vector<std::function<void()>> calls{
          [&] { (void)lg::conv2d(x_cl, w_cl, std::nullopt, {s.stride}, {pad}, {1}, s.groups); },
          [&] { (void)lg::conv2d(x_cf, w_cf, std::nullopt, {s.stride}, {pad}, {1}, s.groups); }};
#if LG_BENCH_HAVE_DNNL
      const lg::Tensor y = lg::conv2d(x_cl, w_cl, std::nullopt, {s.stride}, {pad}, {1}, s.groups);
      DnnlConv peer(s, batch, x_cl, w_cf, y);
      calls.push_back([&] { peer.run(); });
#endif
      const std::vector<Timing> timed = lg::bench::time_interleaved(calls, runs, 900);
      const Timing &nhwc = timed[0], &nchw = timed[1];
      char name[64];
      if (s.groups == 1)
        std::snprintf(name, sizeof name, "%ld->%ld %ldx%ld s%ld %ld", static_cast<long>(s.cin), static_cast<long>(s.cout),
                      static_cast<long>(s.k), static_cast<long>(s.k), static_cast<long>(s.stride), static_cast<long>(s.h));
      else
        std::snprintf(name, sizeof name, "dw%ld %ldx%ld s%ld %ld", static_cast<long>(s.cin), static_cast<long>(s.k),
                      static_cast<long>(s.k), static_cast<long>(s.stride), static_cast<long>(s.h));
      auto cell = [&](const Timing& t) {
        static char buf[4][48];
        static int slot = 0;
        char* b = buf[slot++ % 4];
        std::snprintf(b, 48, "%6.1f (%.2f-%.2f)", gf / (t.median_ms * 1e-3), t.min_ms, t.max_ms);
        return b;
      };
      std::string dnnl_cell = "n/a";
      double dnnl_ratio = NAN;
      nlohmann::json record{{"section", section},
                            {"layer", name},
                            {"batch", batch},
                            {"gflop", gf},
                            {"nhwc", lg::bench::timing_json(nhwc)},
                            {"nchw", lg::bench::timing_json(nchw)}};
#if LG_BENCH_HAVE_DNNL
      const Timing& dn = timed[2];
      dnnl_cell = cell(dn);
      dnnl_ratio = dn.median_ms / nhwc.median_ms;
      ratio_dnnl.push_back(dnnl_ratio);
      record["onednn_nhwc"] = lg::bench::timing_json(dn);
#endif
      results.add(std::move(record));
      const double vs_nchw = nchw.median_ms / nhwc.median_ms;
      nhwc_wins += vs_nchw >= 1.0 ? 1 : 0;
      ++layers;
      std::printf("%-22s %5ld %20s %20s %20s %8.2fx %8.2fx\n", name, static_cast<long>(batch), cell(nhwc), cell(nchw),
                  dnnl_cell.c_str(), vs_nchw, dnnl_ratio);
    }
  }
  double log_sum = 0;
  for (double r : ratio_dnnl) log_sum += std::log(r);
  std::printf("NHWC >= our NCHW on %d of %d layers; NHWC / oneDNN geomean: %s\n", nhwc_wins, layers,
              ratio_dnnl.empty() ? "n/a (oneDNN not built in)"
                                 : (std::to_string(std::exp(log_sum / static_cast<double>(ratio_dnnl.size()))) + "x").c_str());
}

#if LG_BENCH_HAVE_DNNL
// oneDNN pooling (forward inference: no workspace) on tensors of ours, in their layout.
struct DnnlPool {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::pooling_forward prim;
  dnnl::memory src, dst;

  DnnlPool(const lg::Tensor& x, const lg::Tensor& y, bool max, int64_t k, int64_t stride, int64_t pad, bool nhwc) {
    using dnnl::memory;
    const auto tag = nhwc ? memory::format_tag::nhwc : memory::format_tag::nchw;
    const memory::desc src_md(memory::dims(x.sizes().begin(), x.sizes().end()), memory::data_type::f32, tag);
    const memory::desc dst_md(memory::dims(y.sizes().begin(), y.sizes().end()), memory::data_type::f32, tag);
    // avg_pool2d's default count_include_pad=True is oneDNN's include-padding average.
    const auto alg = max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_include_padding;
    const dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_md, {stride, stride},
                                           {k, k}, {pad, pad}, {pad, pad});
    prim = dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(desc, eng));
    src = memory(src_md, eng, x.data_ptr());
    dst = memory(dst_md, eng, y.data_ptr());
  }
  void run() {
    prim.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    strm.wait();
  }
};
#endif

// max_pool2d without indices (inference) and avg_pool2d, both layouts, against oneDNN in the
// same layout: ResNet's stem pool (3x3 s2 p1 on 64x112x112), a 2x2 s2 max pool, DenseNet's
// transition average (2x2 s2) and Inception's branch average (3x3 s1 p1).
void pool_table(lg::bench::Results& results, bool quick, bool smoke, int runs) {
  struct PoolShape {
    bool max;
    int64_t c, h, k, stride, pad;
  };
  const int64_t batch = smoke || quick ? 1 : 16;
  std::printf("\npooling fp32 (max: values only), batch %ld, %d threads: median (min-max) ms\n", static_cast<long>(batch),
              omp_get_max_threads());
  std::printf("%-28s %22s %22s %22s %22s\n", "pool", "ours NHWC", "oneDNN NHWC", "ours NCHW", "oneDNN NCHW");
  const PoolShape shapes[] = {{true, 64, 112, 3, 2, 1}, {true, 256, 56, 2, 2, 0}, {false, 256, 56, 2, 2, 0},
                              {false, 256, 28, 3, 1, 1}};
  for (const PoolShape& s : shapes) {
    if (smoke && &s != &shapes[0]) continue;
    const lg::Tensor x_cl = lg::randn({batch, s.c, s.h, s.h}).contiguous(lg::MemoryFormat::ChannelsLast);
    const lg::Tensor x_cf = x_cl.contiguous();
    const auto pool = [&](const lg::Tensor& x) {
      return s.max ? lg::max_pool2d(x, {s.k}, {s.stride}, {s.pad}) : lg::avg_pool2d(x, {s.k}, {s.stride}, {s.pad});
    };
    std::vector<std::function<void()>> calls{[&] { (void)pool(x_cl); }, [&] { (void)pool(x_cf); }};
#if LG_BENCH_HAVE_DNNL
    const lg::Tensor y_cl = pool(x_cl), y_cf = y_cl.contiguous();
    DnnlPool peer_cl(x_cl, y_cl, s.max, s.k, s.stride, s.pad, true), peer_cf(x_cf, y_cf, s.max, s.k, s.stride, s.pad, false);
    calls.push_back([&] { peer_cl.run(); });
    calls.push_back([&] { peer_cf.run(); });
#endif
    const std::vector<Timing> timed = lg::bench::time_interleaved(calls, runs, 900);
    char name[64];
    std::snprintf(name, sizeof name, "%s %ldx%ld s%ld p%ld %ldx%ldx%ld", s.max ? "max" : "avg", static_cast<long>(s.k),
                  static_cast<long>(s.k), static_cast<long>(s.stride), static_cast<long>(s.pad), static_cast<long>(s.c),
                  static_cast<long>(s.h), static_cast<long>(s.h));
    const auto cell = [](const Timing* t) {
      char b[48] = "n/a";
      if (t) std::snprintf(b, sizeof b, "%.3f (%.3f-%.3f)", t->median_ms, t->min_ms, t->max_ms);
      return std::string(b);
    };
    const bool peer = timed.size() == 4;
    std::printf("%-28s %22s %22s %22s %22s\n", name, cell(&timed[0]).c_str(), cell(peer ? &timed[2] : nullptr).c_str(),
                cell(&timed[1]).c_str(), cell(peer ? &timed[3] : nullptr).c_str());
    nlohmann::json record{{"section", "cpu_pool"},
                          {"pool", name},
                          {"batch", batch},
                          {"nhwc", lg::bench::timing_json(timed[0])},
                          {"nchw", lg::bench::timing_json(timed[1])}};
    if (peer) {
      record["onednn_nhwc"] = lg::bench::timing_json(timed[2]);
      record["onednn_nchw"] = lg::bench::timing_json(timed[3]);
    }
    results.add(std::move(record));
  }
}

// Layers whose NHWC and NCHW kernels differ in kind, our two layouts side by side (no peer):
// MobileNetV2's 3x3 depthwise convolutions, 2x bilinear upsampling (U-Net decoders) and a
// DenseNet-style cat of 32 new channels onto 128.
void layers_table(lg::bench::Results& results, bool quick, bool smoke, int runs) {
  struct Layer {
    const char* name;
    std::vector<int64_t> shape;
    std::function<lg::Tensor(const lg::Tensor&)> op;
  };
  const int64_t batch = smoke || quick ? 1 : 16;
  const auto depthwise = [](int64_t c, int64_t stride) {
    const lg::Tensor w = lg::randn({c, 1, 3, 3}), b = lg::randn({c});
    return [=](const lg::Tensor& x) { return lg::conv2d(x, w, b, {stride}, {1}, {1}, c); };
  };
  const lg::Tensor grow_cl = lg::randn({batch, 32, 56, 56}).contiguous(lg::MemoryFormat::ChannelsLast);
  const lg::Tensor grow_cf = grow_cl.contiguous();
  const std::vector<Layer> layers{
      {"depthwise 3x3 s1", {batch, 144, 56, 56}, depthwise(144, 1)},
      {"depthwise 3x3 s2", {batch, 96, 112, 112}, depthwise(96, 2)},
      {"depthwise 3x3 s1", {batch, 960, 7, 7}, depthwise(960, 1)},
      {"bilinear 2x", {batch, 64, 56, 56},
       [](const lg::Tensor& x) { return lg::upsample_bilinear2d(x, {2 * x.size(2), 2 * x.size(3)}, false); }},
      {"cat +32 channels", {batch, 128, 56, 56},
       [&](const lg::Tensor& x) { return lg::cat({x, x.is_contiguous() ? grow_cf : grow_cl}, 1); }},
  };
  std::printf("\nlayers fp32, batch %ld, %d threads: median (min-max) ms\n", static_cast<long>(batch), omp_get_max_threads());
  std::printf("%-22s %-18s %22s %22s %9s\n", "layer", "input", "ours NHWC", "ours NCHW", "NCHW/NHWC");
  for (const Layer& l : layers) {
    if (smoke && &l != &layers.front()) continue;
    const lg::Tensor x_cl = lg::randn(l.shape).contiguous(lg::MemoryFormat::ChannelsLast), x_cf = x_cl.contiguous();
    const std::vector<Timing> t =
        lg::bench::time_interleaved({[&] { (void)l.op(x_cl); }, [&] { (void)l.op(x_cf); }}, runs, 600);
    char nhwc[48], nchw[48];
    std::snprintf(nhwc, sizeof nhwc, "%.3f (%.3f-%.3f)", t[0].median_ms, t[0].min_ms, t[0].max_ms);
    std::snprintf(nchw, sizeof nchw, "%.3f (%.3f-%.3f)", t[1].median_ms, t[1].min_ms, t[1].max_ms);
    std::printf("%-22s %-18s %22s %22s %8.2fx\n", l.name, lg::to_string(l.shape).c_str(), nhwc, nchw,
                t[1].median_ms / t[0].median_ms);
    results.add({{"section", "cpu_layers"},
                 {"layer", l.name},
                 {"shape", lg::to_string(l.shape)},
                 {"nhwc", lg::bench::timing_json(t[0])},
                 {"nchw", lg::bench::timing_json(t[1])}});
  }
}

void bandwidth_table(lg::bench::Results& results, bool quick, bool smoke, int runs) {
  const int64_t n = smoke ? 1 : quick ? 8 : 32;
  const std::vector<int64_t> shape{n, 64, 56, 56};
  const lg::Tensor x = lg::randn(shape).contiguous(lg::MemoryFormat::ChannelsLast), y = lg::randn(shape).contiguous(lg::MemoryFormat::ChannelsLast);
  const lg::Tensor x_cf = x.contiguous();
  // The 16-bit float rows: a model run in half precision on the CPU spends its pointwise time
  // here (PyTorch computes these in float32 and rounds once, as we do).
  const lg::Tensor xh = x.to(lg::DType::Float16), yh = y.to(lg::DType::Float16);
  const lg::Tensor xb = x.to(lg::DType::BFloat16), yb = y.to(lg::DType::BFloat16);
  // Inference batch norm, a per-channel scale and shift: as memory-bound as relu in both
  // layouts, also with MobileNet's 16 channels at 112x112 (the same number of elements).
  const lg::Tensor narrow = lg::randn({n, 16, 112, 112}).contiguous(lg::MemoryFormat::ChannelsLast);
  const lg::Tensor narrow_cf = narrow.contiguous();
  const auto bn = [](const lg::Tensor& t) {
    const int64_t c = t.size(1);
    return lg::batch_norm(t, lg::ones({c}), lg::zeros({c}), lg::zeros({c}), lg::ones({c}), false);
  };
  const size_t bytes = static_cast<size_t>(x.nbytes());
  std::vector<char> a(bytes), b(bytes);
  std::memset(a.data(), 1, bytes);
  std::memset(b.data(), 2, bytes);
  // Every case interleaved with memcpy, its yardstick.
  const std::vector<Timing> timed = lg::bench::time_interleaved(
      {[&] { std::memcpy(b.data(), a.data(), bytes); }, [&] { (void)lg::relu(x); }, [&] { (void)lg::add(x, y); },
       [&] { (void)x_cf.contiguous(lg::MemoryFormat::ChannelsLast); }, [&] { (void)x.contiguous(); },
       [&] { (void)lg::relu(xh); }, [&] { (void)lg::add(xh, yh); }, [&] { (void)lg::relu(xb); },
       [&] { (void)lg::add(xb, yb); }, [&] { (void)bn(x); }, [&] { (void)bn(x_cf); }, [&] { (void)bn(narrow); },
       [&] { (void)bn(narrow_cf); }},
      runs, 300 * 13);
  const Timing& mc = timed[0];
  std::printf("\nbandwidth, %s (%.0f MB per fp32 operand), %d threads: GB/s and %% of memcpy (read+write of the same bytes)\n",
              lg::to_string(shape).c_str(), bytes / 1e6, omp_get_max_threads());
  auto row = [&](const char* name, double traffic, const Timing& t) {
    // traffic: bytes read + written, in fp32 operands (memcpy: 2; a binary fp32 op: 3).
    const double gbs = traffic * bytes / (t.median_ms * 1e-3) / 1e9;
    const double memcpy_gbs = 2.0 * bytes / (mc.median_ms * 1e-3) / 1e9;
    std::printf("%-40s %8.3f ms %8.1f GB/s %6.0f%%\n", name, t.median_ms, gbs, 100.0 * gbs / memcpy_gbs);
    nlohmann::json r = lg::bench::timing_json(t);
    r.update({{"section", "cpu_bandwidth"}, {"case", name}, {"shape", lg::to_string(shape)}, {"gb_per_s", gbs},
              {"pct_of_memcpy", 100.0 * gbs / memcpy_gbs}});
    results.add(std::move(r));
  };
  row("memcpy", 2.0, mc);
  row("relu NHWC", 2.0, timed[1]);
  row("add NHWC + NHWC", 3.0, timed[2]);
  row("NCHW -> NHWC (contiguous(channels_last))", 2.0, timed[3]);
  row("NHWC -> NCHW (contiguous())", 2.0, timed[4]);
  row("float16 relu NHWC", 1.0, timed[5]);
  row("float16 add NHWC + NHWC", 1.5, timed[6]);
  row("bfloat16 relu NHWC", 1.0, timed[7]);
  row("bfloat16 add NHWC + NHWC", 1.5, timed[8]);
  row("batch_norm (eval) NHWC", 2.0, timed[9]);
  row("batch_norm (eval) NCHW", 2.0, timed[10]);
  row("batch_norm (eval) NHWC, C=16 at 112x112", 2.0, timed[11]);
  row("batch_norm (eval) NCHW, C=16 at 112x112", 2.0, timed[12]);
}

// Batch norm in evaluation on MobileNetV2's small late maps, where per-call set-up rather than
// bandwidth decides: its time against relu6 on the same tensor (the same bytes in and out, no
// parameters), interleaved in one run. MobileNetV2 at batch 1 makes 52 such calls.
void small_map_table(lg::bench::Results& results, bool smoke, int runs) {
  const std::vector<std::vector<int64_t>> shapes =
      smoke ? std::vector<std::vector<int64_t>>{{1, 960, 7, 7}}
            : std::vector<std::vector<int64_t>>{{1, 960, 7, 7}, {1, 576, 14, 14}, {16, 960, 7, 7}};
  std::printf("\nbatch_norm (eval) against relu6 on small NHWC maps, ms: median (min-max)\n");
  std::printf("%-18s %24s %24s %10s\n", "shape", "batch_norm", "relu6", "bn/relu6");
  for (const std::vector<int64_t>& shape : shapes) {
    const int64_t c = shape[1];
    const lg::Tensor x = lg::randn(shape).contiguous(lg::MemoryFormat::ChannelsLast);
    const lg::Tensor w = lg::randn({c}), b = lg::randn({c}), mean = lg::randn({c}), var = lg::rand({c});
    const int reps = shape[0] > 1 ? 20 : 200;  // per sample: small calls are timed in batches
    const std::vector<Timing> t = lg::bench::time_interleaved(
        {[&] {
           for (int i = 0; i < reps; ++i) (void)lg::batch_norm(x, w, b, mean, var, false);
         },
         [&] {
           for (int i = 0; i < reps; ++i) (void)lg::relu6(x);
         }},
        runs, 300);
    std::printf("%-18s %12.4f (%.4f-%.4f) %12.4f (%.4f-%.4f) %9.2fx\n", lg::to_string(shape).c_str(),
                t[0].median_ms / reps, t[0].min_ms / reps, t[0].max_ms / reps, t[1].median_ms / reps,
                t[1].min_ms / reps, t[1].max_ms / reps, t[0].median_ms / t[1].median_ms);
    results.add({{"section", "cpu_small_maps"},
                 {"shape", lg::to_string(shape)},
                 {"batch_norm_ms", t[0].median_ms / reps},
                 {"relu6_ms", t[1].median_ms / reps},
                 {"ratio", t[0].median_ms / t[1].median_ms}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  const lg::bench::CommonArgs args = lg::bench::parse_common(argc, argv);
  const int runs = args.smoke ? 2 : 10;
  lg::bench::Results results("cpu_ops", args);
#if LG_BENCH_HAVE_DNNL
  const dnnl_version_t* v = dnnl_version();
  results.set("onednn", std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch));
#else
  results.set("onednn", nullptr);
#endif
  std::printf("layoutguard %s CPU operator benchmark (%s)\n", LG_VERSION, args.smoke ? "smoke" : args.quick ? "quick" : "full");
  std::string_view only;  // one table: --conv-only, --mobilenet-only, --pool-only, --layers-only, --bandwidth-only
                          // or --small-maps-only
  for (std::string_view a : args.rest) {
    if (only.empty() && (a == "--conv-only" || a == "--mobilenet-only" || a == "--pool-only" || a == "--layers-only" ||
                         a == "--bandwidth-only" || a == "--small-maps-only")) {
      only = a;
    } else if (a == "--avx2") {
      lg::cpu::set_avx512_enabled(false);
      std::printf("AVX-512 kernel forms off: ours run their AVX2 forms (oneDNN keeps its own choice)\n");
    } else {
      std::fprintf(stderr,
                   "usage: cpu_ops [--quick|--smoke] [--json PATH] [--avx2] "
                   "[--conv-only | --mobilenet-only | --pool-only | --layers-only | --bandwidth-only |\n"
                   "        --small-maps-only]\n");
      return 2;
    }
  }
  results.set("avx512_kernels", lg::cpu::use_avx512());
  const auto wanted = [&](std::string_view flag) { return only.empty() || only == flag; };
  if (wanted("--conv-only")) conv_table(results, args.quick, args.smoke, runs, "ResNet-50", kResNet50, "cpu_conv");
  if (wanted("--mobilenet-only"))
    conv_table(results, args.quick, args.smoke, runs, "MobileNetV2", kMobileNetV2, "cpu_conv_mobilenet");
  if (wanted("--pool-only")) pool_table(results, args.quick, args.smoke, runs);
  if (wanted("--layers-only")) layers_table(results, args.quick, args.smoke, runs);
  if (wanted("--bandwidth-only")) bandwidth_table(results, args.quick, args.smoke, runs);
  if (wanted("--small-maps-only")) small_map_table(results, args.smoke, runs);
  return results.finish();
}

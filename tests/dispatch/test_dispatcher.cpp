// The dispatcher and hooks: every op is registered and hooked exactly once, nesting and
// re-entrancy, module paths, errors, threads. (These registry self-tests are never deleted.)
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "dispatch/kernel_table.h"
#include "dispatch/op_id.h"
#include "support/pointwise_cases.h"
#include "support/tensor_testing.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using lg::dispatch::OpId;

struct Seen {
  std::string op;
  int depth;
  std::string kernel;
  std::string module;
  size_t inputs, outputs;
};

// Collects every OpCall on this thread.
struct Recorder {
  std::vector<Seen> calls;
  lg::hooks::ScopedHook hook{[this](const lg::hooks::OpCall& c) {
    calls.push_back({std::string(c.op), c.depth, std::string(c.kernel), std::string(c.module_path),
                     c.inputs.size(), c.outputs.size()});
  }};
  std::vector<std::string> at_depth0() const {
    std::vector<std::string> out;
    for (const Seen& s : calls)
      if (s.depth == 0) out.push_back(s.op);
    return out;
  }
};

// Operands for the pointwise samples, made once outside any recorder (zeros/ones run fill_).
struct SampleInputs {
  Tensor z = lg::zeros({2}), o = lg::ones({2}), b = lg::ones({2}, lg::kBool);
  Tensor x4 = lg::ones({1, 2, 4, 4}), w4 = lg::ones({2, 2, 3, 3});
  Tensor x5 = lg::ones({1, 2, 3, 4, 4}), w5 = lg::ones({2, 2, 3, 3, 3});
  Tensor m = lg::ones({2, 2}), m3 = lg::ones({2, 2, 2}), p4 = lg::ones({1, 4, 2, 2});
};
const SampleInputs& in() {
  static const SampleInputs inputs;
  return inputs;
}

// One sample call per op that is not in the pointwise test table (support/pointwise_cases.h
// has one call of each unary and binary pointwise op); the self-test below fails for an op of
// op_list.def that has neither.
const std::map<std::string_view, std::function<void()>> kSamples{
    {"copy_", [] { lg::empty({2, 3}).copy_(lg::empty({3})); }},
    {"fill_", [] { lg::empty({2, 3}).fill_(1); }},
    {"contiguous", [] { (void)lg::empty_strided({3, 2}, {1, 3}).contiguous(); }},
    {"to", [] { (void)lg::empty({2, 3, 4, 5}).to(MemoryFormat::ChannelsLast); }},
    {"clone", [] { (void)lg::empty({2, 3}).clone(); }},
    {"view", [] { (void)lg::empty({2, 3}).view({6}); }},
    {"reshape", [] { (void)lg::empty({2, 3}).reshape({3, 2}); }},
    {"flatten", [] { (void)lg::empty({2, 3}).flatten(); }},
    {"permute", [] { (void)lg::empty({2, 3}).permute({1, 0}); }},
    {"transpose", [] { (void)lg::empty({2, 3}).transpose(0, 1); }},
    {"squeeze", [] { (void)lg::empty({2, 1}).squeeze(); }},
    {"unsqueeze", [] { (void)lg::empty({2, 3}).unsqueeze(0); }},
    {"select", [] { (void)lg::empty({2, 3}).select(0, 1); }},
    {"narrow", [] { (void)lg::empty({2, 3}).narrow(1, 0, 2); }},
    {"slice", [] { (void)lg::empty({2, 3}).slice(1, 0, 2); }},
    {"expand", [] { (void)lg::empty({2, 1}).expand({2, 4}); }},
    {"as_strided", [] { (void)lg::empty({2, 3}).as_strided({3}, {2}); }},
    {"where", [] { (void)lg::where(in().b, in().z, in().z); }},
    {"conv2d", [] { (void)lg::conv2d(in().x4, in().w4); }},
    {"conv3d", [] { (void)lg::conv3d(in().x5, in().w5); }},
    {"conv_transpose2d", [] { (void)lg::conv_transpose2d(in().x4, in().w4); }},
    {"conv_transpose3d", [] { (void)lg::conv_transpose3d(in().x5, in().w5); }},
    {"batch_norm", [] { (void)lg::batch_norm(in().x4, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true); }},
    {"group_norm", [] { (void)lg::group_norm(in().x4, 2); }},
    {"layer_norm", [] { (void)lg::layer_norm(in().x4, {4}); }},
    {"instance_norm", [] { (void)lg::instance_norm(in().x4); }},
    {"max_pool2d", [] { (void)lg::max_pool2d(in().x4, {2}); }},
    {"max_pool3d", [] { (void)lg::max_pool3d(in().x5, {2}); }},
    {"avg_pool2d", [] { (void)lg::avg_pool2d(in().x4, {2}); }},
    {"avg_pool3d", [] { (void)lg::avg_pool3d(in().x5, {2}); }},
    {"adaptive_avg_pool2d", [] { (void)lg::adaptive_avg_pool2d(in().x4, {1, 1}); }},
    {"adaptive_avg_pool3d", [] { (void)lg::adaptive_avg_pool3d(in().x5, {1, 1, 1}); }},
    {"adaptive_max_pool2d", [] { (void)lg::adaptive_max_pool2d(in().x4, {1, 1}); }},
    {"cat", [] { (void)lg::cat({in().z, in().o}); }},
    {"stack", [] { (void)lg::stack({in().z, in().o}); }},
    {"split", [] { (void)lg::split(in().z, 1); }},
    {"chunk", [] { (void)lg::chunk(in().z, 2); }},
    {"upsample_nearest2d", [] { (void)lg::upsample_nearest2d(in().x4, {8, 8}); }},
    {"upsample_nearest3d", [] { (void)lg::upsample_nearest3d(in().x5, {6, 8, 8}); }},
    {"upsample_bilinear2d", [] { (void)lg::upsample_bilinear2d(in().x4, {8, 8}, false); }},
    {"upsample_trilinear3d", [] { (void)lg::upsample_trilinear3d(in().x5, {6, 8, 8}, false); }},
    {"upsample_bicubic2d", [] { (void)lg::upsample_bicubic2d(in().x4, {8, 8}, false); }},
    {"pad", [] { (void)lg::pad(in().x4, {1, 1}); }},
    {"pixel_shuffle", [] { (void)lg::pixel_shuffle(in().p4, 2); }},
    {"pixel_unshuffle", [] { (void)lg::pixel_unshuffle(in().x4, 2); }},
    {"channel_shuffle", [] { (void)lg::channel_shuffle(in().x4, 2); }},
    {"mm", [] { (void)lg::mm(in().m, in().m); }},
    {"bmm", [] { (void)lg::bmm(in().m3, in().m3); }},
    {"addmm", [] { (void)lg::addmm(in().m, in().m, in().m); }},
    {"linear", [] { (void)lg::linear(in().m, in().m); }},
    {"matmul", [] { (void)lg::matmul(in().m, in().m); }},
    {"sum", [] { (void)lg::sum(in().x4, {1}); }},
    {"mean", [] { (void)lg::mean(in().x4, {2, 3}); }},
    {"amax", [] { (void)lg::amax(in().x4); }},
    {"amin", [] { (void)lg::amin(in().x4); }},
    {"softmax", [] { (void)lg::softmax(in().x4, 1); }},
    {"log_softmax", [] { (void)lg::log_softmax(in().x4, 1); }},
    {"dropout", [] { (void)lg::dropout(in().x4, 0.5, true); }},
};

}  // namespace

TEST_SUITE("dispatch") {

TEST_CASE("registry self-test: every computing op has a CPU kernel") {
  for (size_t i = 0; i < lg::dispatch::kNumOps; ++i) {
    const auto id = static_cast<OpId>(i);
    CAPTURE(lg::dispatch::op_name(id));
    const auto family = lg::dispatch::op_family(id);
    const bool computes = family != lg::dispatch::OpFamily::View && family != lg::dispatch::OpFamily::Conversion &&
                          family != lg::dispatch::OpFamily::Composite;
    const auto& slot = lg::dispatch::kernel_table().slot(id, lg::DeviceType::CPU);
    CHECK(!slot.empty() == computes);
    if (computes) CHECK_FALSE(slot.name().empty());
  }
}

TEST_CASE("a kernel comes back only as the type it was registered with") {
  using lg::dispatch::KernelSlot;
  const KernelSlot slot(+[](const Tensor&, const Tensor&) {}, "copy_test");
  CHECK(slot.name() == "copy_test");
  const bool typed_lookup_works = slot.as<lg::dispatch::KernelSignature<OpId::copy_>::type>(OpId::copy_) != nullptr;
  CHECK(typed_lookup_works);
  try {
    (void)slot.as<lg::dispatch::PointwiseKernel>(OpId::copy_);
    FAIL("a pointwise lookup of a copy kernel was not refused");
  } catch (const lg::Error& e) {  // an internal assertion: a bug, not bad input
    CHECK(std::string(e.what()).find("[layoutguard internal]") != std::string::npos);
    CHECK(std::string(e.what()).find("copy_ was registered with another signature") != std::string::npos);
  }
  // The table's lookup for a device without the kernel names op and device.
  if (lg::dispatch::kernel_table().slot(OpId::relu, lg::DeviceType::CUDA).empty())
    CHECK_THROWS_AS(lg::dispatch::pointwise_kernel_for(OpId::relu, lg::Device::cuda(0)), lg::NotImplementedError);
}

TEST_CASE("registry self-test: a counting hook sees every op exactly once at depth 0") {
  // The sample of op `name`: its own, or its row of the pointwise test table.
  const auto sample_of = [](std::string_view name) -> std::function<void()> {
    if (auto it = kSamples.find(name); it != kSamples.end()) return it->second;
    for (const auto& c : lg::testing::unary_cases())
      if (c.op == name) return [&c] { (void)c.call(in().o); };
    for (const auto& c : lg::testing::binary_cases())
      if (c.op == name) return [&c] { (void)c.call(in().o, in().o); };
    return nullptr;
  };
  // Every key of kSamples names an op (a misspelt key would leave its op without a sample).
  for (const auto& entry : kSamples) {
    CAPTURE(entry.first);
    CHECK(std::find(lg::dispatch::kOpNames.begin(), lg::dispatch::kOpNames.end(), entry.first) !=
          lg::dispatch::kOpNames.end());
  }
  for (size_t i = 0; i < lg::dispatch::kNumOps; ++i) {
    const std::string name(lg::dispatch::op_name(static_cast<OpId>(i)));
    CAPTURE(name);
    const std::function<void()> sample = sample_of(name);
    REQUIRE_MESSAGE(sample, "no sample call: add one to kSamples or to the pointwise test table");
    Tensor warm = lg::empty({1});  // factories outside the recorder
    (void)in();
    Recorder rec;
    sample();
    CHECK(rec.at_depth0() == std::vector<std::string>{name});
  }
}

TEST_CASE("nested ops are reported innermost first with depth and kernel") {
  Tensor x = lg::rand({2, 3, 4, 5});
  Recorder rec;
  Tensor y = x.to(MemoryFormat::ChannelsLast);
  REQUIRE(rec.calls.size() >= 2);
  const Seen& last = rec.calls.back();
  CHECK(last.op == "to");
  CHECK(last.depth == 0);
  CHECK(last.kernel == "composite");
  bool saw_copy = false;
  for (const Seen& s : rec.calls)
    if (s.op == "copy_") {
      saw_copy = true;
      CHECK(s.depth == 1);
      CHECK(s.kernel == "copy_strided_cpu");
      CHECK(s.inputs == 2);
      CHECK(s.outputs == 1);
    }
  CHECK(saw_copy);
  rec.calls.clear();
  (void)y.flatten(1);  // must copy: reshape -> clone -> copy_, then view
  std::map<std::string, int> depth;
  for (const Seen& s : rec.calls) depth[s.op] = s.depth;
  CHECK(depth["flatten"] == 0);
  CHECK(depth["reshape"] == 1);
  CHECK(depth["clone"] == 2);
  CHECK(depth["copy_"] == 3);
}

TEST_CASE("ops called inside a hook are not hooked again") {
  int calls = 0;
  lg::hooks::ScopedHook hook([&](const lg::hooks::OpCall&) {
    ++calls;
    (void)lg::empty({2}).clone();  // would recurse forever without the re-entrancy guard
  });
  (void)lg::empty({2, 3}).transpose(0, 1);
  CHECK(calls == 1);
}

TEST_CASE("module scopes join into the path hooks see") {
  Recorder rec;
  {
    lg::guard::ModuleScope layer("layer1");
    lg::guard::ModuleScope block("0");
    lg::guard::ModuleScope conv("conv2");
    CHECK(lg::guard::module_path() == "layer1.0.conv2");
    (void)lg::empty({2, 3}).view({6});
  }
  CHECK(lg::guard::module_path().empty());
  (void)lg::empty({2, 3}).view({6});
  REQUIRE(rec.calls.size() == 2);
  CHECK(rec.calls[0].module == "layer1.0.conv2");
  CHECK(rec.calls[1].module.empty());
}

TEST_CASE("a failing op reports nothing and leaves the depth balanced") {
  Recorder rec;
  CHECK_THROWS_AS((void)lg::empty({2, 3}).transpose(0, 1).view({6}), lg::ValueError);
  rec.calls.clear();
  (void)lg::empty({2, 3}).view({6});
  REQUIRE(rec.calls.size() == 1);
  CHECK(rec.calls[0].depth == 0);
}

// An application's own error class: it may carry more than its message, so no op rewrites it.
struct AppError : lg::ValueError {
  using lg::ValueError::ValueError;
};

// Runs fn and returns the message of the E it must raise ("" when it raised nothing).
template <typename E, typename Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("an error raised below an op gets that op's tag in front, keeping its class and trace") {
  // Both paths: the fast one (no listener) and the slow one a hook turns on.
  for (const bool hooked : {false, true}) {
    CAPTURE(hooked);
    std::optional<lg::hooks::ScopedHook> hook;
    if (hooked) hook.emplace([](const lg::hooks::OpCall&) {});
    // The allocator's error for an output past any address space (2^52 bytes), from conv2d.
    const Tensor x = lg::ones({1, 1, 1, 1}).expand({int64_t{1} << 50, 1, 1, 1});
    const std::string oom = message_of<lg::OutOfMemoryError>([&] { (void)lg::conv2d(x, lg::ones({1, 1, 1, 1})); });
    CHECK(oom.starts_with("[conv2d] [cpu allocator] out of host memory"));
    // The factory's error for sizes int64 cannot count, from upsampling.
    const std::string big = message_of<lg::ValueError>(
        [&] { (void)lg::upsample_nearest2d(x, std::vector<int64_t>{1 << 20, 1 << 20}); });
    CHECK(big.starts_with("[upsample_nearest2d] [empty] sizes"));
    // The op's own error keeps its single tag, also in the forms an op tags itself with: in
    // place (add_), out= (add_out), split_with_sizes running as split.
    const std::string own = message_of<lg::ValueError>([] { (void)lg::conv2d(lg::ones({1, 2, 3, 3}), lg::ones({1, 3, 1, 1})); });
    CHECK(own.starts_with("[conv2d] "));
    CHECK(!own.starts_with("[conv2d] [conv2d]"));
    const Tensor small = lg::zeros({2, 3}), wide = lg::zeros({4, 2, 3});
    CHECK(message_of<lg::ValueError>([&] { lg::add_(small, wide); }).starts_with("[add_] "));
    Tensor out = lg::zeros({5});
    CHECK(message_of<lg::ValueError>([&] { lg::add_out(out, wide, wide); }).starts_with("[add_out] "));
    CHECK(message_of<lg::ValueError>([&] { (void)lg::split_with_sizes(small, {1, 5}); }).starts_with("[split_with_sizes] "));
  }
  // A custom op's kernel: an untagged lg::Error is named after the op, in its own class; an
  // application's subclass and a non-lg exception pass unchanged.
  const lg::CustomOp plain = lg::register_op("retag_plain", lg::LayoutPolicy::Preserve,
                                             [](const std::vector<Tensor>&) -> std::vector<Tensor> {
                                               throw lg::IndexError("index 7 is past 3");
                                             });
  CHECK(message_of<lg::IndexError>([&] { plain({lg::ones({2})}); }) == "[retag_plain] index 7 is past 3");
  const lg::CustomOp app = lg::register_op("retag_app", lg::LayoutPolicy::Preserve,
                                           [](const std::vector<Tensor>&) -> std::vector<Tensor> {
                                             throw AppError("the application's words");
                                           });
  CHECK(message_of<AppError>([&] { app({lg::ones({2})}); }) == "the application's words");
  const lg::CustomOp other = lg::register_op("retag_other", lg::LayoutPolicy::Preserve,
                                             [](const std::vector<Tensor>&) -> std::vector<Tensor> {
                                               throw std::out_of_range("not an lg::Error");
                                             });
  CHECK(message_of<std::out_of_range>([&] { other({lg::ones({2})}); }) == "not an lg::Error");
  // A broken invariant keeps its marker first (the CLI exits 3 on it).
  const lg::CustomOp broken = lg::register_op("retag_internal", lg::LayoutPolicy::Preserve,
                                              [](const std::vector<Tensor>&) -> std::vector<Tensor> {
                                                LG_ASSERT(false, "a probe");
                                                return {};
                                              });
  CHECK(message_of<lg::Error>([&] { broken({lg::ones({2})}); }).starts_with("[layoutguard internal] assertion `false`"));
}

TEST_CASE("a re-tagged error keeps the stack trace of the error it replaces") {
  const lg::Error cause("[helper] went wrong");
  const lg::DeviceError retagged("[op] [helper] went wrong", cause);
  CHECK(retagged.message() == "[op] [helper] went wrong");
  CHECK(std::string(retagged.what()) == retagged.message());
  CHECK(!cause.stacktrace().empty());
  CHECK(retagged.stacktrace() == cause.stacktrace());
}

TEST_CASE("hooks are removed by handle and by scope; none left means the fast path") {
  const size_t before = lg::hooks::count();
  int n = 0;
  lg::hooks::Handle h = lg::hooks::add([&](const lg::hooks::OpCall& c) { n += c.op == "clone"; });
  (void)lg::empty({2}).clone();
  lg::hooks::remove(h);
  lg::hooks::remove(h);  // a second remove is harmless
  (void)lg::empty({2}).clone();
  CHECK(n == 1);
  CHECK(lg::hooks::count() == before);
  CHECK_THROWS_AS(lg::hooks::add(lg::hooks::Hook()), lg::ValueError);
}

TEST_CASE("eight threads running ops under one counting hook give exact counts") {
  std::atomic<int> clones{0}, copies{0};
  lg::hooks::ScopedHook hook([&](const lg::hooks::OpCall& c) {
    if (c.op == "clone") ++clones;
    if (c.op == "copy_") ++copies;
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([] {
      lg::guard::ModuleScope scope("worker");
      for (int i = 0; i < 200; ++i) (void)lg::empty({4, 4}).clone();
    });
  for (std::thread& t : threads) t.join();
  CHECK(clones == 1600);
  CHECK(copies == 1600);
}

}  // TEST_SUITE

// nn modules: registration and traversal, state dicts (strict and not, with every mismatch
// listed), train/eval, Module::to rank rules, PyTorch's weight-conversion utilities (strides
// taken from PyTorch 2.15, including 1x1 kernels and single-channel weights), module paths in
// violations, and bad layer arguments.
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <limits>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>
#include <layoutguard/testing/doctest.h>

#include "support/guard_testing.h"
#include "support/tensor_testing.h"
#include "nn/deterministic_weights.h"

namespace {

using lg::MemoryFormat;
using lg::Tensor;
using namespace lg::testing;
namespace nn = lg::nn;

std::vector<int64_t> strides_of(const Tensor& t) { return {t.strides().begin(), t.strides().end()}; }

// A small model with every kind of child: conv, norm, activation, nested Sequential, linear.
struct Tiny : nn::Module {
  Tiny() : Module("Tiny") {
    conv = register_module("conv", std::make_shared<nn::Conv2d>(nn::Conv2dOptions(3, 8, {3}).padding({1})));
    bn = register_module("bn", std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions(8)));
    body = register_module("body", std::make_shared<nn::Sequential>());
    body->push_back(std::make_shared<nn::ReLU>());
    body->push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions(8, 8, {1}).bias(false)));
    fc = register_module("fc", std::make_shared<nn::Linear>(nn::LinearOptions(8, 2)));
    register_buffer("scale", &scale);
    scale = lg::ones({1});
  }
  Tensor forward(const Tensor& x) override {
    return (*fc)(lg::mean((*body)((*bn)((*conv)(x))), {2, 3}));
  }
  std::shared_ptr<nn::Conv2d> conv;
  std::shared_ptr<nn::BatchNorm2d> bn;
  std::shared_ptr<nn::Sequential> body;
  std::shared_ptr<nn::Linear> fc;
  Tensor scale;
};

std::vector<std::string> names(const nn::NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& [n, t] : named) out.push_back(n);
  return out;
}

}  // namespace

TEST_SUITE("nn") {

TEST_CASE("Module: parameters, buffers, children and modules by dotted name, in registration order") {
  Tiny m;
  CHECK(names(m.named_parameters()) ==
        std::vector<std::string>{"conv.weight", "conv.bias", "bn.weight", "bn.bias", "body.1.weight", "fc.weight", "fc.bias"});
  CHECK(names(m.named_buffers()) == std::vector<std::string>{"scale", "bn.running_mean", "bn.running_var",
                                                             "bn.num_batches_tracked"});
  CHECK(names(m.named_parameters(false)).empty());
  CHECK(m.named_children().size() == 4);
  std::vector<std::string> modules;
  for (auto& [n, mod] : m.named_modules()) modules.push_back(n + ":" + mod->type_name());
  std::string joined;
  for (const std::string& s : modules) joined += s + " ";
  CAPTURE(joined);
  CHECK(modules == std::vector<std::string>{":Tiny", "conv:Conv2d", "bn:BatchNorm2d", "body:Sequential", "body.0:ReLU",
                                            "body.1:Conv2d", "fc:Linear"});
  CHECK(m.state_dict().size() == 11);
  CHECK(m.state_dict().at("bn.num_batches_tracked").dtype() == lg::kInt64);
  CHECK(m.state_dict().at("bn.num_batches_tracked").dim() == 0);
  CHECK(m.conv->weight.is_same(m.state_dict().at("conv.weight")));
  CHECK(contains(m.describe(), "body.1  Conv2d(8, 8, kernel_size=(1,1)"));
}

TEST_CASE("Module: train/eval reach every child; BatchNorm counts batches only in training") {
  Tiny m;
  lg::manual_seed(3);
  const Tensor x = lg::randn({2, 3, 5, 5});
  m(x);
  CHECK(m.bn->num_batches_tracked.item<int64_t>() == 1);
  m.eval();
  CHECK_FALSE(m.body->is_training());
  const Tensor mean_before = m.bn->running_mean.clone();
  m(x);
  CHECK(m.bn->num_batches_tracked.item<int64_t>() == 1);
  CHECK(values(m.bn->running_mean) == values(mean_before));
}

TEST_CASE("Module::load_state_dict: values copied into the members' own layout; every problem listed at once") {
  Tiny a, b;
  a.to(MemoryFormat::ChannelsLast);
  const Tensor before = a.conv->weight;
  a.load_state_dict(b.state_dict());
  CHECK(values(a.conv->weight) == values(b.conv->weight));
  CHECK(a.conv->weight.is_same(before));  // copied in place: layout and identity kept
  CHECK(a.conv->weight.is_contiguous(MemoryFormat::ChannelsLast));

  nn::StateDict sd = b.state_dict();
  sd.erase("fc.bias");
  sd.erase("bn.running_var");
  sd["extra.weight"] = lg::zeros({1});
  sd["conv.weight"] = lg::zeros({8, 3, 5, 5});
  try {
    a.load_state_dict(sd);
    FAIL("a mismatched state dict loaded");
  } catch (const lg::ValueError& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(contains(what, "missing keys (2):\n    bn.running_var\n    fc.bias"));
    CHECK(contains(what, "unexpected keys (1):\n    extra.weight"));
    CHECK(contains(what, "shape mismatches (1):\n    conv.weight: checkpoint (8,3,5,5), model (8,3,3,3)"));
  }
  // Non-strict: missing and unexpected keys are fine, shape mismatches are not.
  sd["conv.weight"] = b.conv->weight;
  CHECK_NOTHROW(a.load_state_dict(sd, false));
  sd["conv.weight"] = lg::zeros({1});
  CHECK_THROWS_WITH_AS(a.load_state_dict(sd, false), doctest::Contains("shape mismatches"), lg::ValueError);
  // A checkpoint without num_batches_tracked loads strictly, as in PyTorch (the count stays).
  nn::StateDict no_count = b.state_dict();
  no_count.erase("bn.num_batches_tracked");
  a.bn->num_batches_tracked.fill_(5);
  CHECK_NOTHROW(a.load_state_dict(no_count));
  CHECK(a.bn->num_batches_tracked.item<int64_t>() == 5);
  // Dtypes convert: a float16 checkpoint loads into float32 members.
  nn::StateDict half = b.state_dict();
  half["fc.weight"] = half["fc.weight"].to(lg::kFloat16);
  a.load_state_dict(half);
  CHECK(a.fc->weight.dtype() == lg::kFloat32);
}

TEST_CASE("Module::to(MemoryFormat): only rank 4 (ChannelsLast) or rank 5 (ChannelsLast3d) tensors change") {
  Tiny m;
  auto c3 = std::make_shared<nn::Conv3d>(nn::Conv3dOptions(2, 3, {3}));
  m.to(MemoryFormat::ChannelsLast);
  CHECK(strides_of(m.conv->weight) == std::vector<int64_t>{27, 1, 9, 3});
  // A 1x1 kernel is "contiguous" both ways; to() restrides it as PyTorch's module.to does.
  CHECK(strides_of(std::static_pointer_cast<nn::Conv2d>((*m.body)[1])->weight) == std::vector<int64_t>{8, 1, 8, 8});
  CHECK(strides_of(m.fc->weight) == std::vector<int64_t>{8, 1});
  CHECK(m.bn->weight.is_contiguous());
  c3->to(MemoryFormat::ChannelsLast);  // PyTorch raises here; we leave rank-5 tensors alone
  CHECK(c3->weight.is_contiguous());
  c3->to(MemoryFormat::ChannelsLast3d);
  CHECK(strides_of(c3->weight) == std::vector<int64_t>{54, 1, 18, 6, 2});
  m.to(MemoryFormat::ChannelsLast3d);  // no rank-5 tensors: nothing changes
  CHECK(m.conv->weight.is_contiguous(MemoryFormat::ChannelsLast));
  m.to(MemoryFormat::Contiguous);
  CHECK(strides_of(m.conv->weight) == std::vector<int64_t>{27, 9, 3, 1});
  CHECK_THROWS_WITH_AS(m.to(MemoryFormat::Preserve), doctest::Contains("preserve_format"), lg::ValueError);
}

TEST_CASE("Module::to(DType) converts floating tensors only; to(Device) without CUDA is a clear error") {
  Tiny m;
  m.to(lg::kFloat16);
  CHECK(m.conv->weight.dtype() == lg::kFloat16);
  CHECK(m.bn->running_var.dtype() == lg::kFloat16);
  CHECK(m.bn->num_batches_tracked.dtype() == lg::kInt64);
  CHECK_THROWS_AS(m.to(lg::kInt32), lg::TypeError);
  m.to(lg::kCPU);
  // The op's error named after the call the user made.
  if (!lg::cuda::is_available()) {
    std::string message;
    try {
      m.to(lg::Device::cuda(0));
    } catch (const lg::Error& e) {
      message = e.what();
    }
    CHECK(message.starts_with("[nn::Module::to] ["));
  }
}

TEST_CASE("convert_conv2d/3d_weight_memory_format: PyTorch's strides, 1x1 and single-channel weights included") {
  struct Case {
    std::shared_ptr<nn::Module> m;
    std::vector<int64_t> strides;  // from PyTorch 2.15
  };
  const std::vector<Case> cases = {
      {std::make_shared<nn::Conv2d>(nn::Conv2dOptions(8, 4, {3})), {72, 1, 24, 8}},
      {std::make_shared<nn::Conv2d>(nn::Conv2dOptions(256, 64, {1})), {256, 1, 256, 256}},
      {std::make_shared<nn::Conv2d>(nn::Conv2dOptions(1, 4, {3})), {9, 1, 3, 1}},
      {std::make_shared<nn::ConvTranspose2d>(nn::ConvTranspose2dOptions(8, 4, {3})), {36, 1, 12, 4}},
      {std::make_shared<nn::ConvTranspose2d>(nn::ConvTranspose2dOptions(1, 1, {1})), {1, 1, 1, 1}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.m->describe());
    auto& weight = c.m->type_name() == "Conv2d" ? std::static_pointer_cast<nn::Conv2d>(c.m)->weight
                                                : std::static_pointer_cast<nn::ConvTranspose2d>(c.m)->weight;
    const Tensor before = weight.clone();
    nn::Module& r = nn::utils::convert_conv2d_weight_memory_format(*c.m, MemoryFormat::ChannelsLast);
    CHECK(&r == c.m.get());
    CHECK(strides_of(weight) == c.strides);
    CHECK(values(weight) == values(before));
  }
  const std::vector<Case> cases3d = {
      {std::make_shared<nn::Conv3d>(nn::Conv3dOptions(2, 3, {3})), {54, 1, 18, 6, 2}},
      {std::make_shared<nn::Conv3d>(nn::Conv3dOptions(2, 4, {1})), {2, 1, 2, 2, 2}},
      {std::make_shared<nn::ConvTranspose3d>(nn::ConvTranspose3dOptions(2, 3, {3})), {81, 1, 27, 9, 3}},
  };
  for (const Case& c : cases3d) {
    CAPTURE(c.m->describe());
    nn::utils::convert_conv3d_weight_memory_format(*c.m, MemoryFormat::ChannelsLast3d);
    CHECK(strides_of(c.m->named_parameters()[0].second) == c.strides);
  }
}

TEST_CASE("convert_conv2d_weight_memory_format: recursive, convs only; back to contiguous; bad formats rejected") {
  Tiny m;
  auto c3 = std::make_shared<nn::Conv3d>(nn::Conv3dOptions(2, 3, {3}));
  nn::utils::convert_conv2d_weight_memory_format(m, MemoryFormat::ChannelsLast);
  nn::utils::convert_conv2d_weight_memory_format(*c3, MemoryFormat::ChannelsLast);
  CHECK(strides_of(m.conv->weight) == std::vector<int64_t>{27, 1, 9, 3});
  CHECK(m.body->named_parameters()[0].second.is_contiguous(MemoryFormat::ChannelsLast));
  CHECK(strides_of(m.fc->weight) == std::vector<int64_t>{8, 1});  // non-conv layers untouched
  CHECK(strides_of(m.conv->bias) == std::vector<int64_t>{1});
  CHECK(c3->weight.is_contiguous());  // the 2-D utility leaves 3-D convs alone
  nn::utils::convert_conv3d_weight_memory_format(m, MemoryFormat::ChannelsLast3d);
  CHECK(strides_of(m.conv->weight) == std::vector<int64_t>{27, 1, 9, 3});  // and vice versa
  nn::utils::convert_conv2d_weight_memory_format(m, MemoryFormat::Contiguous);
  CHECK(strides_of(m.conv->weight) == std::vector<int64_t>{27, 9, 3, 1});
  CHECK_THROWS_WITH_AS(nn::utils::convert_conv2d_weight_memory_format(m, MemoryFormat::ChannelsLast3d),
                       doctest::Contains("convert_conv2d_weight_memory_format"), lg::ValueError);
  CHECK_THROWS_AS(nn::utils::convert_conv3d_weight_memory_format(m, MemoryFormat::ChannelsLast), lg::ValueError);
}

TEST_CASE("Module paths: a violation inside a module names its dotted path") {
  CleanGuard clean;
  Tiny m;
  m.eval();
  const lg::CustomOp bad = lg::register_op("nn_test_contiguous_relu", lg::LayoutPolicy::Preserve,
                                           lg::KernelLayouts::ContiguousOnly,
                                           [](const std::vector<Tensor>& in) { return std::vector<Tensor>{lg::relu(in[0])}; });
  struct Bad : nn::Module {
    explicit Bad(lg::CustomOp op) : Module("Bad"), op_(std::move(op)) {}
    Tensor forward(const Tensor& x) override { return op_({x})[0]; }
    lg::CustomOp op_;
  };
  m.body->push_back(std::make_shared<Bad>(bad));
  nn::utils::convert_conv2d_weight_memory_format(m, MemoryFormat::ChannelsLast);
  lg::guard::Scope scope(lg::guard::Mode::Throw);
  try {
    m(lg::randn({1, 3, 4, 4}).to(MemoryFormat::ChannelsLast));
    FAIL("no violation");
  } catch (const lg::LayoutViolation& v) {
    CHECK(v.info().module_path == "body.2");
    CHECK(v.info().op == "nn_test_contiguous_relu");
  }
}

TEST_CASE("Module: tied tensors stay tied through to() and the weight utilities; shared modules name every place") {
  // b's weight is a's (weight tying): converting must give both slots one new tensor.
  auto seq = std::make_shared<nn::Sequential>();
  auto a = std::make_shared<nn::Conv2d>(nn::Conv2dOptions(4, 4, {3}));
  auto b = std::make_shared<nn::Conv2d>(nn::Conv2dOptions(4, 4, {3}));
  b->weight = a->weight;
  seq->push_back(a);
  seq->push_back(b);
  seq->push_back(a);  // the same module twice: visited twice, converted once
  seq->to(lg::kFloat16);
  CHECK(a->weight.dtype() == lg::kFloat16);
  CHECK(a->weight.is_same(b->weight));
  seq->to(MemoryFormat::ChannelsLast);
  CHECK(a->weight.is_same(b->weight));
  CHECK(a->weight.is_contiguous(MemoryFormat::ChannelsLast));
  nn::utils::convert_conv2d_weight_memory_format(*seq, MemoryFormat::Contiguous);
  CHECK(a->weight.is_same(b->weight));
  CHECK(a->weight.is_contiguous());
  CHECK_FALSE(a->bias.is_same(b->bias));  // untied tensors stay apart
  // a is visited twice (registered twice) but each distinct weight is copied once: a's (tied to
  // b's) and nothing else, counted as copy_ calls.
  int copies = 0;
  {
    lg::hooks::ScopedHook count([&](const lg::hooks::OpCall& c) { copies += c.depth == 0 && c.op == "copy_"; });
    nn::utils::convert_conv2d_weight_memory_format(*seq, MemoryFormat::ChannelsLast);
  }
  CHECK(copies == 1);
  CHECK(a->weight.is_same(b->weight));
  auto lone = std::make_shared<nn::Conv2d>(nn::Conv2dOptions(2, 2, {3}));
  nn::Sequential twice;
  twice.push_back(lone);
  twice.push_back(lone);
  copies = 0;
  {
    lg::hooks::ScopedHook count([&](const lg::hooks::OpCall& c) { copies += c.depth == 0 && c.op == "copy_"; });
    nn::utils::convert_conv2d_weight_memory_format(twice, MemoryFormat::ChannelsLast);
  }
  CHECK(copies == 1);  // an untied weight in a module registered twice: converted once too
  // The shared module's path lists both places it was registered under.
  CHECK(a->name() == "0|2");
  CHECK(b->name() == "1");
}

TEST_CASE("Module: a tensor or module reached twice is listed once, as in PyTorch; state_dict keeps every name") {
  auto seq = std::make_shared<nn::Sequential>();
  auto a = std::make_shared<nn::Conv2d>(nn::Conv2dOptions(2, 2, {1}));
  auto b = std::make_shared<nn::Conv2d>(nn::Conv2dOptions(2, 2, {1}));
  b->weight = a->weight;  // tied
  seq->push_back(a);
  seq->push_back(b);
  seq->push_back(a);  // shared
  std::vector<std::string> params;
  for (const auto& [n, t] : seq->named_parameters()) params.push_back(n);
  CHECK(params == std::vector<std::string>{"0.weight", "0.bias", "1.bias"});
  CHECK(seq->parameters().size() == 3);
  std::vector<std::string> modules;
  for (const auto& [n, m] : seq->named_modules()) modules.push_back(n);
  CHECK(modules == std::vector<std::string>{"", "0", "1"});
  CHECK(seq->state_dict().size() == 6);  // 0.*, 1.*, 2.*: every place, as PyTorch's state_dict
  auto bn = std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions(2));
  nn::Sequential twice;
  twice.push_back(bn);
  twice.push_back(bn);
  CHECK(twice.named_buffers().size() == 3);  // running_mean, running_var, num_batches_tracked once
  // Two slots of one module holding one tensor: once, with recurse or without.
  struct TwoSlots : nn::Module {
    Tensor a = lg::zeros({2}), b = a;
    TwoSlots() : Module("TwoSlots") {
      register_parameter("a", &a);
      register_parameter("b", &b);
    }
    Tensor forward(const Tensor& x) override { return x; }
  };
  TwoSlots two;
  CHECK(two.named_parameters(false).size() == 1);
  CHECK(two.named_parameters(true).size() == 1);
  CHECK(two.state_dict().size() == 2);
}

TEST_CASE("Module: a tree deeper than the stack allows nested calls is walked, converted and freed") {
  // A chain of containers `depth` deep with a conv at the bottom.
  const auto chain = [](int depth) {
    auto root = std::make_shared<nn::Sequential>();
    nn::Sequential* at = root.get();
    for (int i = 0; i < depth; ++i) {
      auto next = std::make_shared<nn::Sequential>();
      at->push_back(next);
      at = next.get();
    }
    at->push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions(2, 2, {1})));
    return root;
  };
  std::shared_ptr<nn::Sequential> root = chain(100000);
  CHECK(root->state_dict().size() == 2);
  CHECK(root->named_parameters().size() == 2);
  root->to(lg::kFloat64);
  nn::utils::convert_conv2d_weight_memory_format(*root, MemoryFormat::ChannelsLast);
  CHECK(root->parameters()[0].dtype() == lg::kFloat64);
  CHECK(root->parameters()[0].is_contiguous(MemoryFormat::ChannelsLast));
  root.reset();  // 100,000 levels of destructors, one after another
  // Listing every module names each by its whole path, so its memory grows with the square of
  // the depth (as in PyTorch): checked on a shallower chain.
  root = chain(3000);
  const auto modules = root->named_modules();
  CHECK(modules.size() == 3002);
  CHECK(modules.back().first.size() == 2 * 3001 - 1);  // "0.0. ... .0"
  CHECK(root->describe().find("Conv2d(") != std::string::npos);
}

TEST_CASE("BatchNorm: num_batches_tracked wraps at int64's end instead of overflowing") {
  nn::BatchNorm2d bn(nn::BatchNormOptions(2));
  bn.num_batches_tracked.fill_(std::numeric_limits<int64_t>::max());
  bn(lg::randn({2, 2, 3, 3}));
  CHECK(bn.num_batches_tracked.item<int64_t>() == std::numeric_limits<int64_t>::min());
}

TEST_CASE("AdaptiveAvgPool2d/3d take one output size for every spatial dim") {
  nn::AdaptiveAvgPool2d p2({1});
  CHECK(p2(lg::randn({2, 3, 5, 7})).sizes().vec() == std::vector<int64_t>{2, 3, 1, 1});
  nn::AdaptiveAvgPool3d p3({2});
  CHECK(p3(lg::randn({1, 2, 4, 5, 6})).sizes().vec() == std::vector<int64_t>{1, 2, 2, 2, 2});
  nn::AdaptiveAvgPool2d p23({2, 3});
  CHECK(p23(lg::randn({1, 1, 4, 6})).sizes().vec() == std::vector<int64_t>{1, 1, 2, 3});
}

TEST_CASE("convert_conv2d_weight_memory_format: a conv without a 4-D weight is an error naming the utility and the layer") {
  auto seq = std::make_shared<nn::Sequential>();
  seq->push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions(2, 2, {3})));
  auto broken = std::make_shared<nn::Conv2d>(nn::Conv2dOptions(2, 2, {3}));
  broken->weight = lg::zeros({2, 2, 3});
  seq->push_back(broken);
  CHECK_THROWS_WITH_AS(nn::utils::convert_conv2d_weight_memory_format(*seq, MemoryFormat::ChannelsLast),
                       doctest::Contains("[nn::utils::convert_conv2d_weight_memory_format] the Conv2d at \"1\" has a weight of"),
                       lg::ValueError);
  // Checked before anything changed: the good conv was not converted either.
  CHECK(std::static_pointer_cast<nn::Conv2d>((*seq)[0])->weight.is_contiguous());
  broken->weight = Tensor();
  CHECK_THROWS_WITH_AS(nn::utils::convert_conv2d_weight_memory_format(*seq, MemoryFormat::ChannelsLast),
                       doctest::Contains("has no weight; required a 4-D weight"), lg::ValueError);
}

TEST_CASE("nn layers: bad arguments and inputs raise lg::Error naming the layer") {
  using nn::Conv2dOptions;
  CHECK_THROWS_WITH_AS(nn::Conv2d(Conv2dOptions(3, 8, {3}).groups(2)), doctest::Contains("[nn::Conv2d] groups (2)"),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(nn::Conv2d(Conv2dOptions(0, 8, {3})), doctest::Contains("must be positive"), lg::ValueError);
  CHECK_THROWS_WITH_AS(nn::Conv2d(Conv2dOptions(3, 8, {3, 3, 3})), doctest::Contains("kernel_size must have 1 or 2"),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(nn::Conv3d(nn::Conv3dOptions(3, 8, {3}).stride({1, 2})), doctest::Contains("stride"), lg::ValueError);
  CHECK_THROWS_AS(nn::BatchNorm2d(nn::BatchNormOptions(0)), lg::ValueError);
  CHECK_THROWS_AS(nn::GroupNorm(nn::GroupNormOptions(3, 8)), lg::ValueError);
  // Negative sizes are named by the layer, not by the factory that would have failed on them.
  CHECK_THROWS_WITH_AS(nn::GroupNorm(nn::GroupNormOptions(2, -4)), doctest::Contains("num_channels must be positive"),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(nn::LayerNorm(nn::LayerNormOptions({-3})), doctest::Contains("must be positive"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::models::DenseNet(32, {-5, 1}, 64, 4, 10), doctest::Contains("block_config"), lg::ValueError);
  CHECK_THROWS_AS(nn::Dropout(1.5), lg::ValueError);
  CHECK_THROWS_AS(nn::Linear(nn::LinearOptions(0, 2)), lg::ValueError);
  nn::BatchNorm2d bn(nn::BatchNormOptions(4));
  CHECK_THROWS_WITH_AS(bn(lg::zeros({2, 4, 3})), doctest::Contains("expected 4D input (got 3D input"), lg::ValueError);
  nn::Conv2d conv(Conv2dOptions(3, 8, {3}));
  CHECK_THROWS_AS(conv(lg::zeros({1, 4, 5, 5})), lg::Error);  // wrong channel count: the op says so
  nn::Sequential s;
  CHECK_THROWS_AS(s[0], lg::IndexError);
  // A module below itself (directly or through another) is refused where it is registered, and
  // the tree stays walkable; a module shared by two parents is no cycle.
  auto a = std::make_shared<nn::Sequential>(), b = std::make_shared<nn::Sequential>();
  CHECK_THROWS_WITH_AS(a->push_back(a), doctest::Contains("[nn::Module] Sequential: child \"0\" is this module or holds it"),
                       lg::ValueError);
  b->push_back(std::make_shared<nn::ReLU>());
  a->push_back(b);
  CHECK_THROWS_AS(b->push_back(a), lg::ValueError);
  auto shared = std::make_shared<nn::ReLU>();
  auto c = std::make_shared<nn::Sequential>();
  c->push_back(shared);
  c->push_back(shared);
  a->push_back(c);
  CHECK(a->named_modules().size() == 5);  // a, b, b.0, c, and the shared ReLU once (at c.0)
  // A null slot is refused where it is registered (every walk reads through it).
  struct NullSlot : nn::Module {
    explicit NullSlot(bool parameter) : Module("NullSlot") {
      if (parameter) register_parameter("p", nullptr);
      else register_buffer("b", nullptr);
    }
    Tensor forward(const Tensor& x) override { return x; }
  };
  CHECK_THROWS_WITH_AS(NullSlot(true), doctest::Contains("[nn::Module] NullSlot: parameter \"p\" is registered with a null slot"),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(NullSlot(false), doctest::Contains("buffer \"b\" is registered with a null slot"), lg::ValueError);
  // Channel counts the model builders would compute past int64 are the builder's error.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  CHECK_THROWS_WITH_AS(lg::models::ResNet("bottleneck", {1, 1, 1, 1}, 10, kMax / 2, 64),
                       doctest::Contains("[nn::ResNet] width_per_group 64 times groups"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::models::ResNet("bottleneck", {1, 1, 1, 1}, 10, 1, kMax),
                       doctest::Contains("[nn::ResNet] width_per_group 9223372036854775807 makes a bottleneck width"),
                       lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::models::DenseNet(kMax / 2, {1}, 64, 4, 10),
                       doctest::Contains("[nn::DenseNet] bn_size 4 times growth_rate"), lg::ValueError);
  CHECK_THROWS_WITH_AS(lg::models::DenseNet(kMax / 2, {3}, 64, 1, 10),
                       doctest::Contains("[nn::DenseNet] block 1 of 3 layers times growth_rate"), lg::ValueError);
  // A momentum that would turn the running statistics into NaN.
  CHECK_THROWS_WITH_AS(nn::BatchNorm2d(nn::BatchNormOptions(4).momentum(std::nan(""))),
                       doctest::Contains("[nn::BatchNorm2d] momentum must be finite"), lg::ValueError);
  CHECK_NOTHROW(nn::BatchNorm2d(nn::BatchNormOptions(4).momentum(std::nan("")).track_running_stats(false)));
  const Tensor x4 = lg::randn({2, 4, 2, 2});
  Tensor rm = lg::zeros({4}), rv = lg::ones({4});
  CHECK_THROWS_WITH_AS(lg::batch_norm(x4, std::nullopt, std::nullopt, rm, rv, true, INFINITY, 1e-5),
                       doctest::Contains("[batch_norm] received momentum inf; required a finite momentum"), lg::ValueError);
  CHECK(lg::testing::max_abs_diff(rm, lg::zeros({4})) == 0);  // untouched
  CHECK_NOTHROW(lg::batch_norm(x4, std::nullopt, std::nullopt, rm, rv, false, std::nan(""), 1e-5));  // eval: unused
}

TEST_CASE("nn layers: forward equals the functional op, in both formats") {
  lg::manual_seed(11);
  const Tensor x = lg::randn({2, 4, 8, 8});
  nn::Conv2d conv(nn::Conv2dOptions(4, 6, {3}).stride({2}).padding({1}).groups(2));
  CHECK(max_abs_diff(conv(x), lg::conv2d(x, conv.weight, conv.bias, {2}, {1}, {1}, 2)) == 0);
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(4, 2, {2}).stride({2}));
  CHECK(up(x).sizes() == lg::IntArrayRef({2, 2, 16, 16}));
  nn::GroupNorm gn(nn::GroupNormOptions(2, 4));
  CHECK(max_abs_diff(gn(x), lg::group_norm(x, 2)) == 0);
  nn::LayerNorm ln(nn::LayerNormOptions({8}));
  CHECK(max_abs_diff(ln(x), lg::layer_norm(x, {8})) == 0);
  nn::MaxPool2d mp(nn::MaxPoolOptions({2}));
  nn::AvgPool2d ap(nn::AvgPoolOptions({2}));
  nn::AdaptiveAvgPool2d aap(std::vector<int64_t>{1, 1});
  const Tensor xc = x.to(MemoryFormat::ChannelsLast);
  for (nn::Module* m : std::vector<nn::Module*>{&mp, &ap, &aap, &gn}) {
    CAPTURE(m->type_name());
    const Tensor a = (*m)(x), b = (*m)(xc);
    CHECK(max_abs_diff(a, b) <= 1e-5 * (1 + max_abs(a)));
    CHECK(b.is_contiguous(MemoryFormat::ChannelsLast));
  }
  nn::Upsample us(nn::UpsampleOptions().scale_factor({2.0, 2.0}).mode("bilinear").align_corners(false));
  CHECK(us(xc).sizes() == lg::IntArrayRef({2, 4, 16, 16}));
  CHECK(us(xc).is_contiguous(MemoryFormat::ChannelsLast));
  nn::Flatten fl;
  CHECK(fl(x).sizes() == lg::IntArrayRef({2, 256}));
  nn::Dropout d(0.5);
  d.eval();
  CHECK(max_abs_diff(d(x), x) == 0);
  nn::Identity id;
  CHECK(id(x).is_same(x));
  for (nn::Module* a : std::vector<nn::Module*>{new nn::ReLU, new nn::ReLU6, new nn::SiLU, new nn::GELU, new nn::Hardswish,
                                                new nn::Sigmoid}) {
    CAPTURE(a->type_name());
    CHECK((*a)(xc).is_contiguous(MemoryFormat::ChannelsLast));
    delete a;
  }
  // inplace=True (torchvision's ResNet and MobileNetV2): the input itself comes back, overwritten
  // with the out-of-place result, its strides kept; the module prints it as PyTorch does.
  for (nn::Module* a : std::vector<nn::Module*>{new nn::ReLU(true), new nn::ReLU6(true), new nn::SiLU(true),
                                                new nn::Hardswish(true)}) {
    CAPTURE(a->type_name());
    const Tensor input = lg::mul(xc, 8.0);  // values past ReLU6's 6
    const Tensor want = a->type_name() == "ReLU"    ? lg::relu(input)
                        : a->type_name() == "ReLU6" ? lg::relu6(input)
                        : a->type_name() == "SiLU"  ? lg::silu(input)
                                                    : lg::hardswish(input);
    const std::vector<int64_t> strides_before = input.strides().vec();
    const Tensor got = (*a)(input);
    CHECK(got.is_same(input));
    CHECK(input.strides().vec() == strides_before);
    CHECK(max_abs_diff(got, want) == 0);
    // PyTorch prints ReLU(inplace=True), ReLU6(inplace=True), SiLU(inplace=True), Hardswish().
    CHECK(a->extra_repr() == (a->type_name() == "Hardswish" ? "" : "inplace=True"));
    delete a;
  }
  CHECK(nn::ReLU().extra_repr().empty());
}

}  // TEST_SUITE

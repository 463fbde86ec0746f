// A pure libtorch C++ program under layoutguard_torch: no Python anywhere. It checks that
//  - linking the library and setting LAYOUTGUARD switches the main thread on (no code change);
//  - throw mode raises lg::LayoutViolation at the user-level op, with the nested root cause;
//  - a backward-only loss is caught on autograd's side and names the backward node;
//  - a double-backward pass's nodes are reported in the module of the node that made them;
// The losses chosen happen in torch 1.13 and 2.x alike (softmax over C, sort's backward).
//  - record mode collects into the same report as layoutguard's own ops, with module paths;
//  - the gradient contract names the parameter;
//  - a Scope's mode holds on the threads PyTorch hands the scope's work to (at::launch here;
//    autograd's CUDA device threads alike), and on a std::thread given a Handover;
//  - a thread switched off pays for no RecordFunction callback;
//  - shadow=1 raises lg::ShadowMismatch where an op of the app's own computes wrong values for
//    channels-last input;
//  - a Mode cast from an integer is refused; with --bad-unboxed-switch (and a bad
//    LAYOUTGUARD_TORCH_UNBOXED), a thread switched on at load raises the ConfigError at its ops;
//    with --bad-settings TEXT (and a bad LAYOUTGUARD or LAYOUTGUARD_OPTIONS), the first op
//    raises lg::ConfigError with the native guard's text, and so does every op after it.
// Run with LAYOUTGUARD=record. Prints "N passed, N failed"-style lines; exits non-zero on failure.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/Parallel.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <layoutguard/report.h>
#include <layoutguard/torch.h>
#include <layoutguard/torch_contracts.h>

namespace {

int g_failed = 0, g_passed = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  (ok ? g_passed : g_failed) += 1;
}

at::Tensor channels_last_image() {
  return torch::randn({2, 8, 6, 6}).contiguous(at::MemoryFormat::ChannelsLast).requires_grad_();
}

const lg::guard::ViolationRecord* find(const lg::guard::Report& r, const std::string& op) {
  for (const lg::guard::ViolationRecord& v : r.violations)
    if (v.first.op == op) return &v;
  return nullptr;
}

// A forward call in a function of the app's own, not inlined into main, for option
// forward_calls: `line` is the line of the call, which a report of its backward op names.
[[gnu::noinline]] at::Tensor sorted_along_channels(const at::Tensor& x, int& line) {
  line = __LINE__ + 1;
  return std::get<0>(at::sort(x, 1));
}

// An in-place op, which passes the bridge's key by, makes the node of sigmoid's backward.
[[gnu::noinline]] at::Tensor sigmoid_in_place(const at::Tensor& x, int& line) {
  at::Tensor y = x * 2;
  line = __LINE__ + 1;
  y.sigmoid_();
  return y;
}

// Whether `f`, run in a child process, ends it by an uncaught exception whose message (on its
// stderr, from std::terminate) contains `text`: a destructor's lg::Error.
template <typename F>
bool ends_the_program(F f, const std::string& text) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return false;
  const pid_t child = fork();
  if (child == 0) {
    dup2(pipe_ends[1], STDERR_FILENO);
    f();
    _exit(0);
  }
  close(pipe_ends[1]);
  std::string err;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_ends[0], buffer, sizeof buffer)) > 0;) err.append(buffer, static_cast<size_t>(n));
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && err.find(text) != std::string::npos;
}

// Whether f throws an E whose message contains `text`.
template <typename E, typename F>
bool refuses(F f, const std::string& text) {
  try {
    f();
  } catch (const E& e) {
    if (std::string(e.what()).find(text) != std::string::npos) return true;
    std::printf("  (raised: %s)\n", e.what());
  }
  return false;
}

// An op of the app's own whose CPU kernel doubles its input, but for channels-last input writes
// the values in NCHW order into the channels-last output's memory: the right layout, the wrong
// values.
at::Tensor scrambled_double(const at::Tensor& x) {
  at::Tensor out = at::empty_like(x);
  if (x.dim() == 4 && x.is_contiguous(at::MemoryFormat::ChannelsLast) && !x.is_contiguous())
    out.as_strided({x.numel()}, {1}).copy_(x.contiguous().view({-1}) * 2);
  else
    out.copy_(x * 2);
  return out;
}

TORCH_LIBRARY(lg_cpp_app, m) { m.def("scrambled_double(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(lg_cpp_app, CPU, m) { m.impl("scrambled_double", TORCH_FN(scrambled_double)); }

at::Tensor call_scrambled_double(const at::Tensor& x) {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("lg_cpp_app::scrambled_double", "").typed<at::Tensor(const at::Tensor&)>();
  return op.call(x);
}

// Run with LAYOUTGUARD=record and a bad LAYOUTGUARD_TORCH_UNBOXED: the thread is switched on
// at load all the same, and its ops, enable() and a Scope raise the ConfigError; threads that
// take its state along start, and their ops raise it.
int bad_unboxed_switch() {
  expect(lg::torch::enabled(), "a bad LAYOUTGUARD_TORCH_UNBOXED: the main thread is switched on at load");
  const char* text = "LAYOUTGUARD_TORCH_UNBOXED='maybe' is not a switch";
  at::Tensor x;
  {
    lg::torch::Scope off(lg::guard::Mode::Off);  // no op of the bridge, no error
    x = channels_last_image();
  }
  expect(lg::torch::enabled(), "an Off scope's exit switches the thread on again, without raising");
  expect(refuses<lg::ConfigError>([&] { (void)at::softmax(x, 1); }, text), "the first op raises the ConfigError");
  expect(refuses<lg::ConfigError>([&] { (void)at::relu(x); }, text), "every op raises it");
  expect(refuses<lg::ConfigError>([] { lg::torch::enable(); }, text), "enable() raises it");
  bool started_on = false, op_raised = false, task_on = false;
  std::thread worker([&, handover = lg::torch::Handover::here()] {
    handover.adopt();  // does not raise: a thread that runs no op must start
    started_on = lg::torch::enabled();
    op_raised = refuses<lg::ConfigError>([&] { (void)at::relu(x); }, text);
    lg::torch::disable();
    lg::torch::HandoverScope task(handover);
    task_on = lg::torch::enabled();
  });
  worker.join();
  expect(started_on && op_raised, "a thread given the state starts switched on, and its ops raise it");
  expect(task_on, "a HandoverScope switches on without raising");
  lg::torch::disable();
  expect(refuses<lg::ConfigError>([] { lg::torch::Scope s(lg::guard::Mode::Throw); }, text), "a Scope raises it");
  expect(!lg::torch::enabled() && lg::guard::mode() == lg::guard::Mode::Record,
         "the refused Scope leaves the thread as it was");
  bool ran = true;
  try {
    (void)at::softmax(channels_last_image(), 1);
  } catch (const std::exception&) {
    ran = false;
  }
  expect(ran, "a thread switched off runs its ops");
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

// Run with a bad LAYOUTGUARD or LAYOUTGUARD_OPTIONS: linking and setting LAYOUTGUARD switch the
// thread on; the values are read at the first op, which raises the native guard's ConfigError
// (`text`, a part of it), as does every op after it: a C++ program cannot run unchecked by
// mistake. An Off scope runs its ops.
int bad_settings(const std::string& text) {
  expect(lg::torch::enabled(), "a bad setting: the main thread is switched on at load all the same");
  at::Tensor x;
  {
    lg::torch::Scope off(lg::guard::Mode::Off);  // the bridge is not asked: no error
    x = channels_last_image();
  }
  expect(refuses<lg::ConfigError>([&] { (void)at::softmax(x, 1); }, text), "the first op raises lg::ConfigError");
  expect(refuses<lg::ConfigError>([&] { (void)at::relu(x); }, text), "the next op raises it again");
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--bad-unboxed-switch") return bad_unboxed_switch();
  if (argc == 3 && std::string(argv[1]) == "--bad-settings") return bad_settings(argv[2]);
  const char* env = std::getenv("LAYOUTGUARD");
  expect(env != nullptr && std::string(env) == "record", "run with LAYOUTGUARD=record");
  expect(lg::torch::enabled(), "linking the library and setting LAYOUTGUARD switched the main thread on");
  expect(lg::torch::built_torch_version().size() > 0, "built against torch " + std::string(lg::torch::built_torch_version()));

  // Record mode: a forward loss inside a module scope, with the nested root cause.
  {
    lg::torch::ModuleScope scope("head");
    at::Tensor y = at::softmax(channels_last_image(), 1);
    (void)y;
  }
  lg::guard::Report r = lg::guard::report();
  const lg::guard::ViolationRecord* softmax = find(r, "aten::softmax");
  expect(softmax != nullptr, "record: aten::softmax over C reported");
  expect(softmax && softmax->first.module_path == "head", "record: at module path 'head'");
  expect(softmax && softmax->first.depth == 0, "record: at the user-level op (depth 0)");
  expect(find(r, "aten::_softmax") == nullptr, "record: the nested aten::_softmax is not reported a second time");
  expect(softmax && softmax->first.root_cause == "aten::_softmax", "record: root cause aten::_softmax");

  // A backward-only loss (torch 1.13 and 2.x alike): sort's forward keeps channels_last, the
  // backward that scatters the gradient back does not.
  lg::guard::clear_report();
  at::Tensor x = channels_last_image();
  at::Tensor y = std::get<0>(at::sort(x, 1));
  y.backward(torch::randn_like(y).contiguous(at::MemoryFormat::ChannelsLast));
  r = lg::guard::report();
  const lg::guard::ViolationRecord* sorted = find(r, "aten::value_selecting_reduction_backward");
  expect(sorted != nullptr, "backward: sort's backward reported");
  expect(sorted && sorted->first.autograd_node == "SortBackward0", "backward: names the autograd node");
  expect(find(r, "aten::sort") == nullptr, "backward: the forward is not reported");
  expect(sorted && sorted->first.forward_call.empty(), "backward: no forward call kept without forward_calls=1");

  // forward_calls=1 in a C++ program: the node's forward call is the app's innermost frame
  // outside libtorch and layoutguard, named from its debug information when reported.
  {
    const lg::guard::Options before = lg::guard::options();
    lg::guard::set_options_keeping_mode("forward_calls=1:summary=0");
    lg::guard::clear_report();
    int line = 0;
    at::Tensor z = sorted_along_channels(channels_last_image(), line);
    z.backward(torch::randn_like(z).contiguous(at::MemoryFormat::ChannelsLast));
    const lg::guard::Report kept = lg::guard::report();
    const lg::guard::ViolationRecord* named = find(kept, "aten::value_selecting_reduction_backward");
    // The debug information names a function of an anonymous namespace without it.
    const std::string site = "cpp_app.cpp:" + std::to_string(line) + " in ";
    expect(named && named->first.forward_call.find(site) != std::string::npos &&
               named->first.forward_call.ends_with("sorted_along_channels"),
           "forward_calls: sort's backward names the C++ forward call " + site +
               (named ? " (got '" + named->first.forward_call + "')" : std::string()));
    std::string dump;
    try {
      lg::torch::Scope throwing(lg::guard::Mode::Throw);
      at::Tensor w = sorted_along_channels(channels_last_image(), line);
      w.backward(torch::randn_like(w).contiguous(at::MemoryFormat::ChannelsLast));
    } catch (const lg::LayoutViolation& e) {
      dump = e.what();
    }
    expect(dump.find("made by the forward call at: ") != std::string::npos && dump.find(site) != std::string::npos,
           "forward_calls: the throw's dump names the C++ forward call");

    // The node of an in-place op: a mean's contiguous gradient makes sigmoid_backward lose the
    // format (torch 1.13 to 2.11 on the CPU).
    lg::guard::clear_report();
    sigmoid_in_place(channels_last_image(), line).mean({2, 3}).sum().backward();
    const lg::guard::Report in_place = lg::guard::report();
    const lg::guard::ViolationRecord* sigmoid = find(in_place, "aten::sigmoid_backward");
    if (sigmoid == nullptr && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR > 11))) {
      std::printf("skipped: sigmoid_backward keeps channels_last on torch %s\n", TORCH_VERSION);
    } else {
      const std::string in_place_site = "cpp_app.cpp:" + std::to_string(line) + " in ";
      expect(sigmoid && sigmoid->first.forward_call.find(in_place_site) != std::string::npos &&
                 sigmoid->first.forward_call.ends_with("sigmoid_in_place"),
             "forward_calls: an in-place op's node names its C++ call " + in_place_site +
                 (sigmoid ? " (got '" + sigmoid->first.forward_call + "')" : std::string()));
    }
    lg::guard::set_options(before);
  }

  // Double backward (a gradient penalty): a BackwardOrigin whose pass builds a graph has the
  // nodes that pass makes reported in the module of the node that made them.
  lg::guard::clear_report();
  {
    at::Tensor image = channels_last_image();
    at::Tensor weight = torch::randn({8, 8, 3, 3}).contiguous(at::MemoryFormat::ChannelsLast).requires_grad_();
    at::Tensor out;
    {
      lg::torch::ModuleScope scope("critic");
      out = at::conv2d(image, weight, {}, 1, 1);
    }
    at::Tensor penalty;
    {
      lg::torch::BackwardOrigin origin(0, /*builds_graph=*/true);
      penalty = torch::autograd::grad({out.sum()}, {image}, {}, true, true)[0].pow(2).sum();
    }
    penalty.backward();
  }
  r = lg::guard::report();
  const lg::guard::ViolationRecord* second = nullptr;
  for (const lg::guard::ViolationRecord& v : r.violations)
    if (v.first.autograd_node.find("BackwardBackward") != std::string::npos) second = &v;
  // _convolution_double_backward loses the format on the CPU in torch 1.13 to 2.11.
  if (second == nullptr && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR > 11)))
    std::printf("skipped: no double-backward op loses the format on torch %s\n", TORCH_VERSION);
  else
    expect(second != nullptr && second->first.module_path == "critic",
           "double backward: a loss in the second pass, in the module of the node that made its node");

  // Throw mode: lg::LayoutViolation at the op, its text the whole dump.
  {
    lg::torch::Scope throwing(lg::guard::Mode::Throw);
    try {
      at::Tensor z = at::log_softmax(channels_last_image(), 1);
      expect(false, "throw: log_softmax over C raised");
    } catch (const lg::LayoutViolation& e) {
      const std::string text = e.what();
      expect(e.op() == "aten::log_softmax", "throw: raised at aten::log_softmax");
      expect(text.find("order=acdb channels_last") != std::string::npos, "throw: the dump shows the input's layout");
      expect(text.find("stack trace") != std::string::npos, "throw: the dump has a stack trace");
    }
  }

  // The gradient contract.
  lg::guard::clear_report();
  at::Tensor param = torch::randn({4, 8, 3, 3});
  at::Tensor grad = torch::randn({4, 8, 3, 3}).contiguous(at::MemoryFormat::ChannelsLast);
  const int check_line = __LINE__ + 1;
  expect(!lg::torch::check_gradient("layer1.conv.weight", param, grad), "gradient contract: strides differ");
  r = lg::guard::report();
  const lg::guard::ViolationRecord* contract = find(r, "autograd::grad_strides");
  expect(contract && contract->first.module_path == "layer1.conv.weight", "gradient contract: names the parameter");
  const std::string check_site = "cpp_app.cpp:" + std::to_string(check_line) + " in main";
  expect(contract && contract->first.source_location.ends_with(check_site),
         "gradient contract: at the program's line that checked, " + check_site +
             (contract ? " (got '" + contract->first.source_location + "')" : std::string()));
  expect(lg::torch::check_gradient("same", param, param.clone()), "gradient contract: equal strides pass");
  {
    // A module tree after backward(), whose gradients are then given strides of their own: the
    // weights are NCHW and their .grad channels-last; `head` is registered twice (as `head` and
    // `tied`): one report under its first name.
    struct Head : torch::nn::Module {
      torch::nn::Conv2d conv{nullptr};
      Head() { conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 8, 3).padding(1))); }
    };
    struct Net : torch::nn::Module {
      torch::nn::Conv2d body{nullptr};
      std::shared_ptr<Head> head;
      Net() {
        body = register_module("body", torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 8, 3).padding(1)));
        head = register_module("head", std::make_shared<Head>());
        register_module("tied", head);
      }
    };
    Net net;
    {
      lg::torch::Scope quiet(lg::guard::Mode::Off);  // the step's own ops are not this test's
      net.head->conv(net.body(channels_last_image())).sum().backward();
      for (const at::Tensor& w : {net.body->weight, net.head->conv->weight})
        w.mutable_grad() = w.grad().contiguous(at::MemoryFormat::ChannelsLast);
    }
    lg::guard::clear_report();
    expect(!lg::torch::check_gradients(net), "check_gradients: differing strides fail");
    r = lg::guard::report();
    std::vector<std::string> named;
    for (const auto& v : r.violations)
      if (v.first.op == "autograd::grad_strides") named.push_back(v.first.module_path);
    std::sort(named.begin(), named.end());
    expect(named == std::vector<std::string>{"body.weight", "head.conv.weight"},
           "check_gradients: each differing parameter once, by its first name");
    net.body->weight.mutable_grad() = net.body->weight.grad().contiguous();
    expect(lg::torch::check_gradients(*net.body), "check_gradients: matching strides pass");
  }

  // The gradient-format contract (grad_format=1): a mean over H and W hands back a contiguous
  // gradient (torch 1.13 to 2.11), which arrives at the node of the channels-last ReLU output it
  // pooled; in record mode a report, in throw mode lg::LayoutViolation out of backward().
  {
    const lg::guard::Options before = lg::guard::options();
    lg::guard::set_options_keeping_mode("grad_format=1:summary=0");
    const auto pooled_step = [] {
      at::Tensor features;
      {
        lg::torch::ModuleScope scope("body");
        features = at::relu(channels_last_image());
      }
      features.mean({2, 3}).sum().backward();
    };
    lg::guard::clear_report();
    pooled_step();
    const lg::guard::ViolationRecord* arrived = find(lg::guard::report(), "autograd::grad_format");
    expect(arrived && arrived->first.autograd_node == "ReluBackward0" && arrived->first.module_path == "body",
           "grad_format: the pool's contiguous gradient, at the ReLU's node and module");
    expect(arrived && arrived->first.rule.find("It was made by ") != std::string::npos &&
               arrived->first.rule.find("in MeanBackward") != std::string::npos,
           "grad_format: the rule names the backward op that made the gradient");
    bool raised = false;
    try {
      lg::torch::Scope throwing(lg::guard::Mode::Throw);
      pooled_step();
    } catch (const lg::LayoutViolation& e) {
      raised = e.op() == "autograd::grad_format";
    }
    expect(raised, "grad_format: throw mode raises lg::LayoutViolation out of backward()");
    lg::guard::set_options(before);
  }

  // A scope's mode reaches the work it hands to another thread, with the process mode off.
  lg::guard::clear_report();
  lg::guard::set_mode(lg::guard::Mode::Off);
  {
    lg::torch::Scope recording(lg::guard::Mode::Record);
    std::promise<void> done;
    at::launch([&done] {
      at::Tensor s = at::softmax(channels_last_image(), 1);
      done.set_value();
    });
    done.get_future().wait();
  }
  expect(find(lg::guard::report(), "aten::softmax") != nullptr,
         "a Scope's mode holds on the at::launch thread it hands work to");
  lg::guard::clear_report();
  (void)at::softmax(channels_last_image(), 1);
  expect(lg::guard::report().violations.empty(), "after the Scope, the process mode (off) holds again");

  // A thread of our own takes the starter's state along with a Handover: switched on in the
  // Scope's mode for its life, or off when the starter is off; a HandoverScope does the same
  // for one task of a thread that already runs. The process mode is still off.
  {
    lg::torch::Handover in_record, in_off;
    {
      lg::torch::Scope recording(lg::guard::Mode::Record);
      in_record = lg::torch::Handover::here();
      lg::torch::Scope quiet(lg::guard::Mode::Off);
      in_off = lg::torch::Handover::here();
    }
    bool on = false, off = true;
    lg::guard::Mode mode = lg::guard::Mode::Off, in_own_scope = lg::guard::Mode::Record;
    std::thread recorder([&] {
      in_record.adopt();
      on = lg::torch::enabled();
      mode = lg::torch::mode();
      (void)at::softmax(channels_last_image(), 1);
      // The thread's own guard::Scope comes before the carried mode.
      lg::guard::Scope own(lg::guard::Mode::Off);
      in_own_scope = lg::torch::mode();
      (void)at::log_softmax(channels_last_image(), 1);
    });
    recorder.join();
    std::thread quiet([&] {
      in_off.adopt();
      off = !lg::torch::enabled();
      (void)at::log_softmax(channels_last_image(), 1);
    });
    quiet.join();
    expect(on && mode == lg::guard::Mode::Record, "Handover: a thread started in a Record scope records");
    expect(off, "Handover: a thread started in an Off scope stays off");
    expect(in_own_scope == lg::guard::Mode::Off, "Handover: the thread's own guard::Scope comes first");
    lg::guard::Report started = lg::guard::report();
    expect(find(started, "aten::softmax") != nullptr && find(started, "aten::log_softmax") == nullptr,
           "Handover: only the recording thread's loss is reported");

    lg::guard::clear_report();
    bool task_records = false, after_task_off = false, off_task_off = false;
    std::thread pool_thread([&] {
      {
        lg::torch::HandoverScope task(in_record);
        task_records = lg::torch::enabled() && lg::torch::mode() == lg::guard::Mode::Record;
        (void)at::softmax(channels_last_image(), 1);
      }
      after_task_off = !lg::torch::enabled();
      in_record.adopt();
      {
        lg::torch::HandoverScope task(in_off);
        off_task_off = !lg::torch::enabled();
        (void)at::log_softmax(channels_last_image(), 1);
      }
    });
    pool_thread.join();
    expect(task_records && after_task_off, "HandoverScope: one task runs in the handed-over Record scope");
    expect(off_task_off, "HandoverScope: a task handed over from an Off scope runs off");
    started = lg::guard::report();
    expect(find(started, "aten::softmax") != nullptr && find(started, "aten::log_softmax") == nullptr,
           "HandoverScope: only the recording task's loss is reported");
  }
  lg::guard::set_mode(lg::guard::Mode::Record);

  // An Off scope takes the thread off the bridge while it lives, and nests.
  lg::guard::clear_report();
  lg::torch::enable();
  {
    lg::torch::Scope quiet(lg::guard::Mode::Off);
    expect(!lg::torch::enabled(), "an Off scope stops intercepting");
    (void)at::softmax(channels_last_image(), 1);
    {
      lg::torch::Scope loud(lg::guard::Mode::Record);
      expect(lg::torch::enabled(), "a Record scope inside an Off scope intercepts");
      (void)at::softmax(channels_last_image(), 1);
    }
    expect(!lg::torch::enabled(), "the inner scope's exit puts the Off scope's state back");
  }
  expect(lg::torch::enabled(), "the Off scope's exit switches the thread on again");
  const lg::guard::ViolationRecord* quiet_softmax = find(lg::guard::report(), "aten::softmax");
  expect(quiet_softmax != nullptr && quiet_softmax->count == 1, "only the Record scope's softmax is reported");

  // shadow=1: the app's op reruns on a contiguous copy, and the difference raises in record mode.
  {
    const lg::guard::Options before = lg::guard::options();
    lg::guard::set_options_keeping_mode("shadow=1:summary=0");
    const at::Tensor image = torch::randn({2, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast);
    expect(refuses<lg::ShadowMismatch>([&] { (void)call_scrambled_double(image); },
                                       "[layoutguard] shadow: lg_cpp_app::scrambled_double output 0 differs"),
           "shadow=1: a wrong channels-last kernel raises lg::ShadowMismatch");
    expect(refuses<lg::ShadowMismatch>([&] { (void)call_scrambled_double(image); },
                                       "input 0: float32 cpu (2,3,4,4):(48,1,12,3) order=acdb channels_last"),
           "shadow=1: the mismatch shows the operands' layouts");
    bool right = true;
    try {
      right = at::allclose(call_scrambled_double(image.contiguous()), image * 2);
      (void)at::relu(image);
    } catch (const lg::ShadowMismatch& e) {
      right = false;
      std::printf("  (raised: %s)\n", e.what());
    }
    expect(right, "shadow=1: contiguous input, and ATen's own relu, raise nothing");
    lg::guard::set_options(before);
  }

  // A Mode cast from an integer is refused, and leaves the thread as it was.
  const auto bad_mode = static_cast<lg::guard::Mode>(7);
  const bool was_on = lg::torch::enabled();
  expect(refuses<lg::ValueError>([&] { lg::torch::Scope s(bad_mode); }, "[lg::torch::Scope] mode 7 is not"),
         "Scope refuses a Mode that is not one");
  expect(refuses<lg::ValueError>([&] { lg::torch::enable(bad_mode); }, "[lg::torch::enable] mode 7 is not"),
         "enable refuses a Mode that is not one");
  lg::torch::Handover bad_handover;
  bad_handover.switched_on = true;
  bad_handover.scope_mode = bad_mode;
  expect(refuses<lg::ValueError>([&] { lg::torch::HandoverScope s(bad_handover); }, "HandoverScope] mode 7"),
         "HandoverScope refuses a Mode that is not one");
  expect(refuses<lg::ValueError>([&] { bad_handover.adopt(); }, "Handover::adopt] mode 7"),
         "Handover::adopt refuses a Mode that is not one");
  expect(lg::torch::enabled() == was_on && lg::torch::mode() == lg::guard::Mode::Record,
         "a refused Mode changes nothing");

  // Switching on twice, off and on again.
  lg::torch::enable();
  lg::torch::enable();
  lg::torch::disable();
  expect(!lg::torch::enabled(), "disable() switches the thread off");
  // Backward nodes are named without a RecordFunction callback for every thread: PyTorch
  // without the bridge (another thread, or after disable()) builds no RecordFunction for them.
  expect(!at::hasGlobalCallbacks(), "no RecordFunction callback for every thread");
  expect(!at::hasThreadLocalCallbacks(), "disable() removes the thread's node callback");
  lg::torch::enable();
  expect(lg::torch::enabled(), "enable() twice is harmless");
#if TORCH_VERSION_MAJOR >= 2
  expect(!at::hasThreadLocalCallbacks(), "torch 2 keeps the running node itself: no callback");
#else
  expect(at::hasThreadLocalCallbacks(), "torch 1.13: enable() gives the thread its node callback");
#endif

  // Scopes that end in another order than they began (held by unique_ptr): while the inner one
  // lives its mode holds, and once both have ended the thread is as it was before them.
  {
    const auto records_softmax = [] {
      lg::guard::clear_report();
      (void)at::softmax(channels_last_image(), 1);
      return find(lg::guard::report(), "aten::softmax") != nullptr;
    };
    auto outer = std::make_unique<lg::torch::Scope>(lg::guard::Mode::Throw);
    auto inner = std::make_unique<lg::torch::Scope>(lg::guard::Mode::Off);
    outer.reset();
    expect(lg::torch::mode() == lg::guard::Mode::Off && !lg::torch::enabled() && !records_softmax(),
           "scopes out of order: the inner Off scope still holds after the outer one ended");
    inner.reset();
    expect(lg::torch::mode() == lg::guard::Mode::Record && lg::torch::enabled() && records_softmax(),
           "scopes out of order: after both, the thread records again as before them");
    auto a = std::make_unique<lg::guard::Scope>(lg::guard::Mode::Off);
    auto b = std::make_unique<lg::guard::Scope>(lg::guard::Mode::Warn);
    auto c = std::make_unique<lg::guard::Scope>(lg::guard::Mode::Throw);
    b.reset();
    a.reset();
    expect(lg::guard::mode() == lg::guard::Mode::Throw, "guard scopes out of order: the innermost live one holds");
    c.reset();
    expect(lg::guard::mode() == lg::guard::Mode::Record, "guard scopes out of order: after all, the process's mode");
    lg::guard::clear_report();
  }

  // A HandoverScope or a BackwardOrigin opened inside a Scope that ends first: the inner one's
  // state holds while it lives, and after both the thread is as it was before them.
  {
    auto scope = std::make_unique<lg::torch::Scope>(lg::guard::Mode::Throw);
    auto origin = std::make_unique<lg::torch::BackwardOrigin>(7);
    scope.reset();
    expect(lg::torch::backward_origin() == 7u, "a BackwardOrigin that outlives its Scope still holds");
    origin.reset();
    expect(lg::torch::mode() == lg::guard::Mode::Record && !lg::torch::backward_origin() && lg::torch::enabled(),
           "BackwardOrigin after its Scope: once both ended, the thread is as before them");
    lg::torch::disable();
    auto on = std::make_unique<lg::torch::Scope>(lg::guard::Mode::Throw);
    auto task = std::make_unique<lg::torch::HandoverScope>(lg::torch::Handover{});  // from a thread that was off
    expect(!lg::torch::enabled(), "a HandoverScope from a thread that was off switches off");
    on.reset();
    expect(!lg::torch::enabled(), "a HandoverScope that outlives its Scope keeps the thread off");
    task.reset();
    expect(!lg::torch::enabled() && lg::torch::mode() == lg::guard::Mode::Record && !lg::torch::Handover::here().switched_on,
           "HandoverScope after its Scope: once both ended, the thread is off again, as before them");
    lg::torch::enable();
  }

  // A scope belongs to its thread: destroyed on another, it ends the program with an lg::Error
  // rather than switch either thread.
  const auto destroyed_elsewhere = [](auto make) {
    return [make] {
      auto scope = make();
      std::thread([&] { scope.reset(); }).join();
    };
  };
  expect(ends_the_program(destroyed_elsewhere([] { return std::make_unique<lg::torch::Scope>(lg::guard::Mode::Warn); }),
                          "[lg::torch::Scope] destroyed on another thread"),
         "a Scope destroyed on another thread ends the program");
  expect(ends_the_program(destroyed_elsewhere([] {
                            return std::make_unique<lg::torch::HandoverScope>(lg::torch::Handover{true, std::nullopt});
                          }),
                          "[lg::torch::HandoverScope] destroyed on another thread"),
         "a HandoverScope destroyed on another thread ends the program");
  expect(ends_the_program(destroyed_elsewhere([] { return std::make_unique<lg::torch::BackwardOrigin>(7, true); }),
                          "[lg::torch::BackwardOrigin] destroyed on another thread"),
         "a BackwardOrigin destroyed on another thread ends the program");

  // set_raiser decides how the gradient contract raises in throw mode, as for an op.
  {
    lg::torch::Scope throwing(lg::guard::Mode::Throw);
    lg::torch::set_raiser([](const lg::LayoutViolation& v) { throw std::runtime_error("raised: " + v.op()); });
    const at::Tensor weight = torch::randn({4, 8, 3, 3});
    expect(refuses<std::runtime_error>([&] {
             (void)lg::torch::check_gradient("w", weight, torch::randn({4, 8, 3, 3}).contiguous(at::MemoryFormat::ChannelsLast));
           }, "raised: autograd::grad_strides"),
           "the gradient contract raises through set_raiser");
    lg::torch::set_raiser(nullptr);
    lg::guard::clear_report();
  }

  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

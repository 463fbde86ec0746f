// Ops in a static object's destructor, and scopes of static storage duration, at exit: they
// run after the main thread's thread_locals and the library's function-local statics are
// destroyed. Each op must run and the process must exit cleanly (a crash is this test's
// failure; meson checks the exit status). With LAYOUTGUARD=throw the destructor's op must
// raise: the process-wide mode checks it, outside every module path (the static ModuleScope's
// path lived in the thread's state).
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <torch/torch.h>

#include <layoutguard/report.h>
#include <layoutguard/torch.h>
#include <layoutguard/violation.h>

namespace {

at::Tensor softmax_over_channels() {
  return at::softmax(torch::ones({2, 8, 6, 6}).contiguous(at::MemoryFormat::ChannelsLast), 1);
}

lg::torch::Scope g_whole_program(lg::guard::Mode::Record);  // the program's mode
lg::torch::ModuleScope g_app("app");                       // every op's module

// Constructed after the scopes, so destroyed before them: its op runs inside both.
struct LossAtExit {
  ~LossAtExit() {
    const char* mode = std::getenv("LAYOUTGUARD");
    const bool throws = mode != nullptr && std::string_view(mode) == "throw";
    try {
      const at::Tensor y = softmax_over_channels();
      std::printf("the static destructor's op ran: %.0f\n", y.sum().item<float>());
      if (throws) fail("the static destructor's op did not raise under LAYOUTGUARD=throw");
    } catch (const lg::LayoutViolation& e) {
      if (!throws) fail("the static destructor's op raised, with LAYOUTGUARD not throw");
      if (e.op() != "aten::softmax" || !e.module_path().empty())
        fail("the static destructor's op raised for another op or module than aten::softmax at the top level");
      std::printf("ok: the static destructor's op raised, at the top level\n");
    }
  }
  // A destructor cannot return the exit status: the message and status go out at once.
  [[noreturn]] static void fail(const char* what) {
    std::printf("FAILED: %s\n", what);
    std::fflush(stdout);
    std::_Exit(1);
  }
} g_loss_at_exit;

}  // namespace

int main() {
  // A loss in main makes the guard's own statics (the stack's name cache, the records) first.
  (void)softmax_over_channels();
  const lg::guard::Report r = lg::guard::report();
  const bool ok = r.violations.size() == 1 && r.violations[0].first.op == "aten::softmax" &&
                  r.violations[0].first.module_path == "app";
  std::printf("%s: main's loss recorded in module 'app' by the static scopes\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

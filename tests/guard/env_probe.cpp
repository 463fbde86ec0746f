// A program configured only through the real LAYOUTGUARD / LAYOUTGUARD_OPTIONS environment: it
// calls a custom op that loses channels_last three times and prints one line per call. With
// the argument set_mode (or set_options) it switches the guard to throw through that API after
// the first call. With module_scope_elsewhere or mode_scope_elsewhere it makes that scope and
// destroys it on another thread, which must end the program with the scope's lg::Error. With
// uncaught or quick_exit it ends after its three calls by an exception that leaves main, or by
// std::quick_exit(3). With modules each call runs in a module of its own: three distinct
// violations. Driven by tests/guard/test_guard_env.cpp.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <layoutguard/layoutguard.h>

int main(int argc, char** argv) {
  const std::string api = argc > 1 ? argv[1] : "";
  if (api == "module_scope_elsewhere" || api == "mode_scope_elsewhere") {
    auto module = api == "module_scope_elsewhere" ? std::make_unique<lg::guard::ModuleScope>("moved") : nullptr;
    auto mode = api == "mode_scope_elsewhere" ? std::make_unique<lg::guard::Scope>(lg::guard::Mode::Off) : nullptr;
    std::thread([&] {
      module.reset();
      mode.reset();
    }).join();
    std::printf("scope ended elsewhere without an error\n");
    return 0;
  }
  const lg::CustomOp drop = lg::register_op(
      "probe.drop_layout", lg::LayoutPolicy::Preserve,
      [](const std::vector<lg::Tensor>& in) { return std::vector<lg::Tensor>{in.at(0).clone(lg::MemoryFormat::Contiguous)}; });
  // empty() is not an op, so making the input cannot raise the environment's ConfigError.
  const lg::Tensor x = lg::empty({2, 8, 4, 4}, {}, lg::MemoryFormat::ChannelsLast);
  for (int i = 0; i < 3; ++i) {
    // "modules": each call in a module of its own, three distinct violations.
    std::optional<lg::guard::ModuleScope> module;
    if (api == "modules") module.emplace("m" + std::to_string(i));
    try {
      drop({x});
      std::printf("call: ok\n");
    } catch (const lg::LayoutViolation& e) {
      const std::string text = e.what();
      std::printf("call: LayoutViolation: %s\n", text.substr(0, text.find('\n')).c_str());
    } catch (const lg::ConfigError& e) {
      std::printf("call: ConfigError: %s\n", e.what());
    }
    std::fflush(stdout);
    if (i == 0 && api == "set_mode") lg::guard::set_mode(lg::guard::Mode::Throw);
    if (i == 0 && api == "set_options") lg::guard::set_options(lg::guard::parse_options("throw", "summary=0"));
  }
  if (api == "uncaught") throw std::runtime_error("the program's own error");
  if (api == "quick_exit") std::quick_exit(3);
  return 0;
}

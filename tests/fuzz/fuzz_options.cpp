// libFuzzer target for the guard's settings parser: the bytes up to the first newline are
// LAYOUTGUARD, the rest LAYOUTGUARD_OPTIONS. Any input must give Options or a ConfigError --
// never a crash, a hang, another exception or a sanitizer report. Built with clang by
// scripts/fuzz and run for a bounded time by scripts/test.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <layoutguard/error.h>
#include <layoutguard/guard.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t newline = text.find('\n');
  const std::string_view mode = text.substr(0, newline);
  const std::string_view options = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
  try {
    const lg::guard::Options o = lg::guard::parse_options(mode, options);
    (void)lg::guard::describe_options(o);
    (void)o.is_exempt("conv2d", "layer1.0.conv2");
  } catch (const lg::ConfigError&) {
    // the expected answer to bad input
  }
  return 0;
}

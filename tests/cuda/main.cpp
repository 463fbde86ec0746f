// The doctest main of the CUDA suite: without a usable GPU (or without a CUDA build) the whole
// program reports itself skipped through meson's exit code 77, with the reason on stdout.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include <layoutguard/layoutguard.h>

int main(int argc, char** argv) {
  if (!lg::cuda::is_available()) {
    std::printf("skipped: no usable GPU (%s)\n", lg::cuda::probe_report().c_str());
    return 77;
  }
  std::printf("%s\n", lg::cuda::probe_report().c_str());
  doctest::Context context(argc, argv);
  return context.run();
}

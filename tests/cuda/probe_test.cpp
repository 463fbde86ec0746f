// The CUDA probe on a real device: it must find the GPU and run the probe kernel. Without a GPU
// (or without a CUDA build) the test reports itself skipped through meson's exit code 77, with
// the reason on stdout.
#include <cstdio>

#include <layoutguard/layoutguard.h>

int main() {
  const std::string report = lg::cuda::probe_report();
  if (!LG_HAVE_CUDA) {
    std::printf("skipped: %s\n", report.c_str());
    return 77;
  }
  if (lg::cuda::device_count() == 0) {
    std::printf("skipped: no GPU visible (%s)\n", report.c_str());
    return 77;
  }
  std::printf("%s\n", report.c_str());
  if (!lg::cuda::is_available()) {
    std::printf("FAIL: a device is visible but the probe kernel did not run\n");
    return 1;
  }
  return 0;
}

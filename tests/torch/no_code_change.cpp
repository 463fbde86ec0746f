// A libtorch program without a line of layoutguard. Linked with pkg-config layoutguard-torch,
// also under --as-needed (which drops a library the program calls nothing of), it is checked
// once LAYOUTGUARD is set: the softmax over C below loses channels_last on every torch.
#include <cstdio>

#include <ATen/ATen.h>

int main() {
  const at::Tensor x = at::randn({2, 8, 6, 6}).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor y = at::softmax(x, 1);
  std::printf("softmax: %s\n", y.is_contiguous(at::MemoryFormat::ChannelsLast) ? "channels_last" : "contiguous");
  return 0;
}

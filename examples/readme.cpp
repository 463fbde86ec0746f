#include <layoutguard/layoutguard.h>
#include <iostream>

int main() {
  lg::Tensor x = lg::randn({10, 3, 32, 32});                 // NCHW: (3072, 1024, 32, 1)
  lg::Tensor y = x.to(lg::MemoryFormat::ChannelsLast);       // NHWC: (3072, 1, 96, 3)
  std::cout << lg::describe_layout(y) << "\n";
  // float32 cpu (10,3,32,32):(3072,1,96,3) order=acdb channels_last

  lg::Tensor t = lg::empty({4, 1, 4, 4});                    // C == 1: both formats at once
  std::cout << t.is_contiguous(lg::MemoryFormat::ChannelsLast) << "\n";      // 1
  std::cout << t.contiguous(lg::MemoryFormat::ChannelsLast).is_same(t) << "\n"; // 1: no-op
  std::cout << lg::to_string(t.to(lg::MemoryFormat::ChannelsLast).strides()) << "\n"; // (16,1,4,1)
}

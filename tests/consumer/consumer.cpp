// A tiny application built the way users build against an installed layoutguard:
//   c++ -std=c++20 consumer.cpp $(pkg-config --cflags --libs layoutguard)
#include <iostream>

#include <layoutguard/layoutguard.h>

int main() {
  lg::Tensor x = lg::ones({2, 3, 4, 5}).to(lg::MemoryFormat::ChannelsLast);
  const bool ok = x.is_contiguous(lg::MemoryFormat::ChannelsLast) &&
                  x.suggest_memory_format() == lg::MemoryFormat::ChannelsLast &&
                  x.strides() == lg::IntArrayRef{60, 1, 15, 3};
  std::cout << lg::describe_layout(x) << "\n";
  try {
    lg::empty({2, 3}, {}, lg::MemoryFormat::ChannelsLast);
    return 1;
  } catch (const lg::Error& e) {
    std::cout << "caught: " << e.what() << "\n";
  }
  return ok ? 0 : 1;
}

// LG_NN_ARG: one option of a layer's options struct, libtorch style: a field with a chainable
// setter and a getter of the same name, e.g. Conv2dOptions(3, 64, {7}).stride({2}).bias(false).
#pragma once

#define LG_NN_ARG(T, name)                        \
 public:                                          \
  auto& name(const T& value) {                    \
    name##_ = value;                              \
    return *this;                                 \
  }                                               \
  const T& name() const noexcept { return name##_; } \
                                                  \
 private:                                         \
  T name##_

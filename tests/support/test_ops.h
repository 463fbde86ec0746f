// Test-only custom ops with known layout behaviour, registered once per process.
#pragma once

#include <layoutguard/layoutguard.h>

namespace lg::testing {

using Tensors = std::vector<Tensor>;

// Preserve op whose kernel returns a contiguous copy: loses channels_last on purpose.
inline const CustomOp& drop_layout() {
  static const CustomOp op = register_op("test.drop_layout", LayoutPolicy::Preserve,
                                         [](const Tensors& in) { return Tensors{in.at(0).clone(MemoryFormat::Contiguous)}; });
  return op;
}

// Preserve op that keeps the input's layout (clone with Preserve).
inline const CustomOp& keep_layout() {
  static const CustomOp op = register_op("test.keep_layout", LayoutPolicy::Preserve,
                                         [](const Tensors& in) { return Tensors{in.at(0).clone()}; });
  return op;
}

// Preserve op with only a contiguous kernel: the dispatcher's layout fallback converts its
// channels-last inputs, so its output is contiguous. The kernel rejects anything else.
inline const CustomOp& contiguous_only() {
  static const CustomOp op = register_op(
      "test.contiguous_only", LayoutPolicy::Preserve, KernelLayouts::ContiguousOnly, [](const Tensors& in) {
        LG_CHECK(in.at(0).is_contiguous(), "[test.contiguous_only] kernel got a non-contiguous input");
        return Tensors{in.at(0).clone(MemoryFormat::Contiguous)};
      });
  return op;
}

// Two outputs: the first keeps the layout, the second is contiguous.
inline const CustomOp& split_two() {
  static const CustomOp op = register_op("test.split_two", LayoutPolicy::Preserve, [](const Tensors& in) {
    return Tensors{in.at(0).clone(), in.at(0).clone(MemoryFormat::Contiguous)};
  });
  return op;
}

// In place: writes in[0] into the tensor in[1] ("out=") and returns it.
inline const CustomOp& copy_into() {
  static const CustomOp op = register_op("test.copy_into", LayoutPolicy::Preserve, [](const Tensors& in) {
    in.at(1).copy_(in.at(0));
    return Tensors{in.at(1)};
  });
  return op;
}

// ConvLike: output N x O x H x W laid out as the kernel decides (contiguous here), whatever the
// input or weight format.
inline const CustomOp& fake_conv() {
  static const CustomOp op = register_op("test.fake_conv", LayoutPolicy::ConvLike, [](const Tensors& in) {
    const Tensor& x = in.at(0);
    const Tensor& w = in.at(1);
    return Tensors{zeros({x.size(0), w.size(0), x.size(2), x.size(3)})};
  });
  return op;
}

// Keeps the layout but computes a wrong value for non-contiguous input (memory element 1 is
// overwritten): the bug class shadow=1 exists for. Right on contiguous input.
inline const CustomOp& wrong_nhwc() {
  static const CustomOp op = register_op("test.wrong_nhwc", LayoutPolicy::Preserve, [](const Tensors& in) {
    const Tensor& x = in.at(0);
    Tensor out = x.clone();
    if (!x.is_contiguous()) out.as_strided({1}, {1}, out.storage_offset() + 1).fill_(1000.0);
    return Tensors{out};
  });
  return op;
}

}  // namespace lg::testing

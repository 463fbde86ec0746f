// The uncommon tensors of classify_in_full, out of line (intercepted_call.h).
#include "torch/intercepted_call.h"

namespace lg::torch_bridge {
namespace {

// PyTorch's public predicates: they ask the strides policy, so they are right for any tensor
// readable() lets through, also one that computes its own contiguity.
struct AskedBits {
  const c10::TensorImpl& impl;
  bool contiguous(c10::MemoryFormat f) const { return impl.is_contiguous(f); }
  bool strides_like(c10::MemoryFormat f) const { return impl.is_strides_like(f); }
};

}  // namespace

Classified classify_uncommon(const at::Tensor& t) {
  if (!readable(t)) return {};
  const c10::TensorImpl& impl = *t.unsafeGetTensorImpl();
  const int64_t rank = impl.dim();
  if (rank != 4 && rank != 5) return {};
  return classify_bits(AskedBits{impl}, rank == 4 ? c10::MemoryFormat::ChannelsLast : c10::MemoryFormat::ChannelsLast3d);
}

}  // namespace lg::torch_bridge

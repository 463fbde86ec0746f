// Converting the tensors of a module tree (to(dtype), to(memory_format), the weight-format
// utilities) without untying shared ones. `b->weight = a->weight` makes two slots hold one
// tensor; converting each slot on its own would give each a copy of its own, and training one
// would no longer move the other. PyTorch keeps such ties because it swaps the data inside the
// one Parameter object. Here each distinct tensor is converted once and every slot holding it
// gets that result. Internal to src/nn.
#pragma once

#include <utility>
#include <vector>

#include <layoutguard/tensor.h>

namespace lg::nn::detail {

class TiedConversion {
 public:
  // convert(t) once per distinct tensor; the same result for every later slot holding t, and t
  // itself for a tensor this conversion produced (a module registered in two places is
  // visited twice).
  // `t` must be the slot itself (not a copy of the handle): a tensor no one else holds cannot be
  // tied, so its original is not remembered and is freed as soon as its slot takes the result
  // -- remembering every original would keep the whole old model alive until the end.
  template <class Convert>
  Tensor operator()(const Tensor& t, Convert&& convert) {
    for (const auto& [from, to] : done_) {
      if (from.is_same(t)) return to;
      if (to.is_same(t)) return t;
    }
    Tensor result = convert(t);
    // The original only while someone else holds it; the result always, so that a slot visited
    // again (a module registered twice) is recognised as done.
    done_.emplace_back(t.use_count() == 1 ? Tensor() : t, result);
    return result;
  }

 private:
  std::vector<std::pair<Tensor, Tensor>> done_;  // a few hundred tensors at most: a linear scan
};

}  // namespace lg::nn::detail

// shadow=1 for ATen ops: a user-level call that has a channels-last input runs a second time,
// below the bridge's key, on contiguous copies of its tensor arguments, and ATen's own ops
// compare the two results value by value. It catches channels-last kernels that compute wrong
// values, which a layout check cannot see. This file only computes; interceptor.cpp decides
// which calls take part and raises what it finds.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Generator.h>
#include <ATen/core/stack.h>

#include "torch/intercepted_call.h"

namespace lg::torch_bridge {

// How a rerun's results differ from the call's.
struct ShadowDifference {
  size_t output = 0;     // the first output that differs, in the order of InterceptedCall::outputs
  double largest = 0.0;  // its largest difference (infinity: other sizes, dtype, or NaN against a number)
  std::string what;      // "largest difference ... at flat index ..." or "sizes/dtype ..."
};

class ShadowRun {
 public:
  // Takes the copies and the default random generators' states: before the call runs, so that
  // the copies hold what the call read (batch norm writes its running statistics). Inactive
  // when an argument cannot be copied and compared: a tensor that is not a plain strided one
  // on the cpu or cuda (sparse, a Python subclass, a fake tensor while torch.compile traces),
  // of a complex or quantized dtype, or a Generator given: such a call is not compared.
  explicit ShadowRun(const InterceptedCall& call);
  bool active() const { return active_; }

  // After the call ran: runs it again on the copies, the key left out, and compares its
  // results with `got` (the call's outputs). None when they agree, and when the call drew
  // random numbers from a default generator (dropout inside a composite op): its values
  // depend on the order in which the kernel visits memory. A floating output beyond the
  // per-element tolerance is judged against a third run in float64: it differs only when it
  // is several times as far from that as the contiguous path's own result.
  std::optional<ShadowDifference> compare(const Operands& got);

  // The call's tensor arguments as the copies were taken of them (a boxed call pops its own).
  const Tensors& inputs() const { return inputs_; }

 private:
  struct GeneratorState {
    at::Generator generator;
    at::Tensor state;
  };

  bool generators_moved();

  const c10::OperatorHandle* op_;
  ::torch::jit::Stack copies_;  // contiguous, in the arguments' dtypes
  Tensors inputs_;
  std::vector<GeneratorState> generators_;
  bool active_ = true;
};

}  // namespace lg::torch_bridge

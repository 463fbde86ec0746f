// The one comparison every CUDA test makes: a device result against the CPU's for the same
// call -- on the device, with the CPU's sizes, strides and dtype, and values within `tol`.
#pragma once

#include <doctest/doctest.h>

#include "support/op_testing.h"

namespace lg::testing {

inline void check_same(const Tensor& got_dev, const Tensor& want, Tol tol) {
  REQUIRE(got_dev.device() == Device::cuda(0));
  CHECK(ls(got_dev) == ls(want));
  CHECK(got_dev.dtype() == want.dtype());
  check_close(values(got_dev.cpu()), values(want), tol);
}

}  // namespace lg::testing

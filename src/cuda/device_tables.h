// Small read-only tables (window bounds, interpolation taps, pad source maps) on the device,
// cached by content. A host-to-device copy of fresh host memory must wait for the stream (the
// host buffer may change once the copy call returns), so copying the tables per call would
// stall every pooling, upsampling or pad op until the device caught up; the same layer asks
// for the same tables on every forward, so after the first call a lookup replaces the copy.
#pragma once

#include <vector>

#include <layoutguard/device.h>
#include <layoutguard/tensor.h>

namespace lg::cuda::detail {

// A 1-D device tensor holding `values` (int64 or float64). The returned tensor keeps the table
// alive for the caller's kernel even when the cache drops it.
Tensor device_table(const std::vector<int64_t>& values, Device device);
Tensor device_table(const std::vector<double>& values, Device device);

}  // namespace lg::cuda::detail

// layoutguard: the umbrella header. Include this one; it brings the whole public API.
#pragma once

#include <layoutguard/config.h>
#include <layoutguard/conv.h>
#include <layoutguard/cuda.h>
#include <layoutguard/custom_op.h>
#include <layoutguard/device.h>
#include <layoutguard/dtype.h>
#include <layoutguard/error.h>
#include <layoutguard/factories.h>
#include <layoutguard/guard.h>
#include <layoutguard/hooks.h>
#include <layoutguard/int_array_ref.h>
#include <layoutguard/joining.h>
#include <layoutguard/layout.h>
#include <layoutguard/layout_policy.h>
#include <layoutguard/log.h>
#include <layoutguard/normalization.h>
#include <layoutguard/pointwise.h>
#include <layoutguard/pooling.h>
#include <layoutguard/report.h>
#include <layoutguard/scalar.h>
#include <layoutguard/storage.h>
#include <layoutguard/tensor.h>
#include <layoutguard/tensor_options.h>
#include <layoutguard/type_promotion.h>
#include <layoutguard/violation.h>

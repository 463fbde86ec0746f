// What `layoutguard audit` and `layoutguard run` share: the flags that pick a model, its
// weights, format, dtype and device, and the code that builds the model that way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>

#include "arguments.h"

namespace lg::tools {

struct ModelSetup {
  std::string model = "resnet50";
  MemoryFormat format = MemoryFormat::ChannelsLast;  // ChannelsLast3d for 3-D models
  std::string convert = "weights";                   // weights | module | none
  DType dtype = kFloat32;
  Device device = kCPU;
  int64_t batch = 1;
  std::vector<int64_t> size;  // spatial sizes after (N, C)
  std::string weights;        // safetensors file; empty: random weights
};

// The flags every model command accepts.
inline const std::vector<std::string_view> kModelFlags = {"model", "format", "convert", "dtype", "device",
                                                          "batch", "size",   "weights"};

ModelSetup parse_model_setup(const Flags& flags);

// The model, built, loaded (strictly) from setup.weights if given, in eval mode, converted to
// the setup's dtype, device and format.
std::shared_ptr<nn::Module> build_model(const ModelSetup& setup);

// A seeded random input of the setup's shape, dtype, device and format.
Tensor make_input(const ModelSetup& setup);

// "channels_last" (or "channels_last_3d") / "contiguous".
std::string format_label(const ModelSetup& setup);

}  // namespace lg::tools

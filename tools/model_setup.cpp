#include "model_setup.h"

namespace lg::tools {

ModelSetup parse_model_setup(const Flags& f) {
  ModelSetup s;
  std::vector<std::string_view> names;
  for (const models::ModelInfo& m : models::model_infos()) names.emplace_back(m.name);
  s.model = f.choice("model", s.model, names);  // UsageError listing the models, with a guess
  const models::ModelInfo& info = models::model_info(s.model);

  const std::string fmt = f.choice("format", "channels_last", {"channels_last", "contiguous"});
  s.format = fmt == "contiguous"    ? MemoryFormat::Contiguous
             : info.spatial_dims == 3 ? MemoryFormat::ChannelsLast3d
                                      : MemoryFormat::ChannelsLast;
  s.convert = f.choice("convert", "weights", {"weights", "module", "none"});
  const std::string dt = f.choice("dtype", "float32", {"float32", "float16", "bfloat16"});
  s.dtype = dt == "float16" ? kFloat16 : dt == "bfloat16" ? kBFloat16 : kFloat32;
  s.device = f.choice("device", "cpu", {"cpu", "cuda"}) == "cuda" ? Device::cuda(0) : kCPU;
  // Said here, naming the flag, rather than by the first op that moves a tensor there.
  if (s.device.is_cuda() && !cuda::is_available())
    throw UsageError("[layoutguard] --device cuda: no CUDA device can be used here (" + cuda::probe_report() +
                     "); run on a machine with an NVIDIA GPU, or use --device cpu");
  s.batch = f.integer("batch", 1, 1, 4096);
  s.size = info.size;
  if (f.has("size")) {
    const std::vector<int64_t> v = f.sizes("size", info.spatial_dims == 3 ? 3 : 2);
    // H: square; HxW; TxHxW (3-D models): the given sizes replace the trailing ones.
    if (v.size() == 1) std::fill(s.size.end() - 2, s.size.end(), v[0]);
    else std::copy(v.begin(), v.end(), s.size.end() - v.size());
  }
  s.weights = f.path("weights");
  return s;
}

std::shared_ptr<nn::Module> build_model(const ModelSetup& s) {
  std::shared_ptr<nn::Module> model = models::create_model(s.model);
  if (!s.weights.empty()) model->load_state_dict(nn::load_safetensors(s.weights).tensors, /*strict=*/true);
  model->eval();
  model->to(s.device);
  if (s.dtype != kFloat32) model->to(s.dtype);
  if (s.format == MemoryFormat::Contiguous || s.convert == "none") return model;
  if (s.convert == "module") {
    model->to(s.format);
  } else if (s.format == MemoryFormat::ChannelsLast3d) {
    nn::utils::convert_conv3d_weight_memory_format(*model, s.format);
  } else {
    nn::utils::convert_conv2d_weight_memory_format(*model, s.format);
  }
  return model;
}

Tensor make_input(const ModelSetup& s) {
  std::vector<int64_t> sizes{s.batch, 3};
  sizes.insert(sizes.end(), s.size.begin(), s.size.end());
  manual_seed(0);
  return randn(sizes).to(TensorOptions().dtype(s.dtype).device(s.device), false, s.format);
}

std::string format_label(const ModelSetup& s) { return std::string(memory_format_name(s.format)); }

}  // namespace lg::tools

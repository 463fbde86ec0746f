// examples/torch/train_step.py in libtorch C++: a small segmentation-style network trained for
// one step in channels_last. Its decoder upsamples with bicubic interpolation, which loses
// channels_last on the CPU: in the backward, and on PyTorch 1.13 in the forward too. Linking
// liblayoutguard_torch is all the program does for the guard; the environment switches it on:
//
//   LAYOUTGUARD=throw ./train_step                                  # stops at the loss, with a dump
//   LAYOUTGUARD=throw LAYOUTGUARD_OPTIONS=forward_calls=1 ./train_step
//                              # a loss in backward also names the forward call: this file's line
//   LAYOUTGUARD=record ./train_step --fixed                         # bilinear: no loss
//
// The module scope gives reports the path "decoder", as nn.Module hooks do in Python.
#include <cstdio>
#include <cstring>
#include <exception>

#include <torch/torch.h>

#include <layoutguard/guard.h>
#include <layoutguard/torch.h>

namespace {

namespace F = torch::nn::functional;

struct DecoderImpl : torch::nn::Module {
  DecoderImpl(int64_t channels, bool bicubic)
      : bicubic(bicubic), conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, channels, 3).padding(1)))) {}

  torch::Tensor forward(torch::Tensor x) {
    const auto mode = bicubic ? F::InterpolateFuncOptions::mode_t(torch::kBicubic)
                              : F::InterpolateFuncOptions::mode_t(torch::kBilinear);
    x = F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}).mode(mode).align_corners(false));  // the upsampling
    return torch::relu(conv(x));
  }

  bool bicubic;
  torch::nn::Conv2d conv;
};
TORCH_MODULE(Decoder);

struct NetImpl : torch::nn::Module {
  explicit NetImpl(bool bicubic)
      : stem(register_module("stem", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3).stride(2).padding(1)))),
        decoder(register_module("decoder", Decoder(16, bicubic))),
        head(register_module("head", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 2, 1)))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor features = torch::relu(stem(x));
    {
      lg::torch::ModuleScope scope("decoder");  // the module path of the ops inside
      features = decoder(features);
    }
    return head(features);
  }

  torch::nn::Conv2d stem;
  Decoder decoder;
  torch::nn::Conv2d head;
};
TORCH_MODULE(Net);

// Parameters converted as Module::to(memory_format) does in Python: the 4-D ones.
void to_channels_last(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : model.parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
}

}  // namespace

int main(int argc, char** argv) {
  const bool fixed = argc > 1 && std::strcmp(argv[1], "--fixed") == 0;
  torch::manual_seed(0);
  Net model(!fixed);
  to_channels_last(*model);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
  const torch::Tensor x = torch::randn({2, 3, 32, 32}).contiguous(torch::MemoryFormat::ChannelsLast);
  const torch::Tensor target = torch::randint(0, 2, {2, 32, 32});
  try {
    const torch::Tensor loss = F::cross_entropy(model->forward(x), target);
    loss.backward();
    opt.step();
    std::printf("step done (%s), loss %.3f\n", fixed ? "bilinear" : "bicubic", loss.item<double>());
  } catch (const lg::LayoutViolation& e) {  // LAYOUTGUARD=throw: the dump names op, operands, module, stack
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  if (lg::guard::mode() == lg::guard::Mode::Record)
    std::printf("violations recorded: %zu\n", lg::guard::report().violations.size());
  return 0;
}

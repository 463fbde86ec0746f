// The "Memory Format API" part of PyTorch's channels_last tutorial, in C++ with layoutguard.
// Each line prints what PyTorch prints for the same Python statement.
#include <iostream>
#include <string>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>

namespace {

// Python's tuple spelling, "(3072, 1, 96, 3)", so the output reads like the tutorial's.
std::string py(lg::IntArrayRef values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + ")";
}

const char* py(bool b) { return b ? "True" : "False"; }

}  // namespace

int main() {
  using lg::MemoryFormat;
  const int64_t N = 10, C = 3, H = 32, W = 32;

  std::cout << "# A 4-D tensor is allocated contiguous (NCHW) by default\n";
  lg::Tensor x = lg::empty({N, C, H, W});
  std::cout << "x.stride()                                  " << py(x.strides()) << "\n";

  std::cout << "\n# to(channels_last) keeps the dimension order, changes the strides\n";
  x = x.to(MemoryFormat::ChannelsLast);
  std::cout << "x.shape                                     " << py(x.sizes()) << "\n";
  std::cout << "x.stride()                                  " << py(x.strides()) << "\n";

  std::cout << "\n# and back to contiguous\n";
  x = x.to(MemoryFormat::Contiguous);
  std::cout << "x.stride()                                  " << py(x.strides()) << "\n";

  std::cout << "\n# Alternative option: contiguous(channels_last)\n";
  x = x.contiguous(MemoryFormat::ChannelsLast);
  std::cout << "x.stride()                                  " << py(x.strides()) << "\n";

  std::cout << "\n# Format checks\n";
  std::cout << "x.is_contiguous(channels_last)              "
            << py(x.is_contiguous(MemoryFormat::ChannelsLast)) << "\n";

  std::cout << "\n# Special case: C == 1 (and H == W == 1) is contiguous in both formats\n";
  lg::Tensor special_x = lg::empty({4, 1, 4, 4});
  std::cout << "special_x.is_contiguous(channels_last)      "
            << py(special_x.is_contiguous(MemoryFormat::ChannelsLast)) << "\n";
  std::cout << "special_x.is_contiguous(contiguous_format)  "
            << py(special_x.is_contiguous(MemoryFormat::Contiguous)) << "\n";
  // Why to() is the way to tag such a tensor: contiguous() sees nothing to do.
  std::cout << "special_x.contiguous(channels_last).stride() "
            << py(special_x.contiguous(MemoryFormat::ChannelsLast).strides()) << "\n";
  std::cout << "special_x.to(channels_last).stride()        "
            << py(special_x.to(MemoryFormat::ChannelsLast).strides()) << "\n";

  std::cout << "\n# Allocate directly in channels_last\n";
  x = lg::empty({N, C, H, W}, {}, MemoryFormat::ChannelsLast);
  std::cout << "x.stride()                                  " << py(x.strides()) << "\n";

  std::cout << "\n# clone preserves the memory format\n";
  lg::Tensor y = x.clone();
  std::cout << "y.stride()                                  " << py(y.strides()) << "\n";

  std::cout << "\n# to(dtype) preserves the memory format\n";
  y = x.to(lg::kFloat16);
  std::cout << "x.to(float16).stride()                      " << py(y.strides()) << "\n";

  std::cout << "\n# to(cuda) preserves the memory format\n";
  if (lg::cuda::is_available()) {
    std::cout << "x.cuda().stride()                           " << py(x.cuda().strides()) << "\n";
  } else {
    std::cout << "(skipped: " << lg::cuda::probe_report() << ")\n";
  }

  std::cout << "\n# empty_like and the other *_like factories preserve the memory format\n";
  y = lg::empty_like(x);
  std::cout << "torch.empty_like(x).stride()                " << py(y.strides()) << "\n";

  std::cout << "\n# Pointwise operations keep channels_last\n";
  const lg::Tensor a = lg::randn({N, C, H, W}).to(MemoryFormat::ChannelsLast);
  const lg::Tensor b = lg::randn({N, C, H, W}).to(MemoryFormat::ChannelsLast);
  const lg::Tensor z = a + b;
  std::cout << "z = x + y; z.is_contiguous(channels_last)    " << py(z.is_contiguous(MemoryFormat::ChannelsLast)) << "\n";
  std::cout << "z.stride()                                  " << py(z.strides()) << "\n";
  std::cout << "relu(z).stride()                            " << py(lg::relu(z).strides()) << "\n";

  std::cout << "\n# Convolution with channels_last weight and input (Conv2d(8, 4, 3), float16)\n";
  // model = torch.nn.Conv2d(8, 4, 3).half(); model = model.to(memory_format=torch.channels_last)
  lg::manual_seed(0);
  auto model = std::make_shared<lg::nn::Conv2d>(lg::nn::Conv2dOptions(8, 4, {3}));
  model->to(lg::kFloat16);
  model->to(MemoryFormat::ChannelsLast);
  lg::Tensor input = lg::randint(1, 10, {2, 8, 4, 4}, lg::kFloat32);
  input = input.to(lg::TensorOptions().dtype(lg::kFloat16), false, MemoryFormat::ChannelsLast);
  const lg::Tensor out = (*model)(input);
  std::cout << "out.is_contiguous(channels_last)             " << py(out.is_contiguous(MemoryFormat::ChannelsLast)) << "\n";
  std::cout << "out.stride()                                " << py(out.strides()) << "\n";

  std::cout << "\n# Converting an existing model, and checking that every operator keeps channels_last\n";
  // The tutorial wraps every torch function to find the one that returns NCHW; layoutguard's
  // guard does that for every operator. A ResNet-18 converted with
  // convert_conv2d_weight_memory_format keeps channels_last end to end:
  auto resnet = lg::models::resnet18();
  resnet->eval();
  lg::nn::utils::convert_conv2d_weight_memory_format(*resnet, MemoryFormat::ChannelsLast);
  const lg::Tensor image = lg::randn({1, 3, 64, 64}).to(MemoryFormat::ChannelsLast);
  {
    lg::guard::Scope checks(lg::guard::Mode::Throw);
    const lg::Tensor logits = (*resnet)(image);
    std::cout << "resnet18 under LAYOUTGUARD=throw: no violation, logits " << py(logits.sizes()) << "\n";
  }
  // A model with one operator that only has an NCHW kernel (a custom op, as third-party code
  // often ships) loses channels_last there, and the guard names the op and the module:
  auto unet = lg::models::create_model("unet_legacy");
  unet->eval();
  lg::nn::utils::convert_conv2d_weight_memory_format(*unet, MemoryFormat::ChannelsLast);
  try {
    lg::guard::Scope checks(lg::guard::Mode::Throw);
    (*unet)(lg::randn({1, 3, 32, 32}).to(MemoryFormat::ChannelsLast));
  } catch (const lg::LayoutViolation& v) {
    std::cout << "unet_legacy under LAYOUTGUARD=throw: " << v.op() << " in module " << v.module_path()
              << " lost channels_last\n";
    const std::string what = v.what();
    std::cout << what.substr(0, what.find("  module:")) ;  // the operand dump (the trace follows)
  }

  std::cout << "\n# layoutguard's own description of a layout\n";
  std::cout << lg::describe_layout(x) << "\n";
  std::cout << lg::describe_layout(special_x) << "\n";
  return 0;
}

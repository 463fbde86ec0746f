// The documentation example of torch.nn.utils.convert_conv2d_weight_memory_format, in C++:
//
//   input = torch.randint(1, 10, (2, 8, 4, 4), dtype=torch.float16)
//   model = nn.Sequential(nn.Conv2d(8, 4, 3)).half()
//   model = nn.utils.convert_conv2d_weight_memory_format(model, torch.channels_last)
//   out = model(input)
//
// Only the weight is converted; the input stays NCHW. Convolution follows the weight
// (ConvLike: channels_last wins if the input or the weight suggests it), so `out` is
// channels_last -- and every later layer keeps it. Runs on the CPU, and on CUDA when a GPU is
// visible.
#include <iostream>
#include <memory>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>

namespace {

void run_on(lg::Device device) {
  const char* tag = device.is_cuda() ? "cuda: " : "";
  lg::manual_seed(0);
  auto model = std::make_shared<lg::nn::Sequential>();
  model->push_back(std::make_shared<lg::nn::Conv2d>(lg::nn::Conv2dOptions(8, 4, {3})));
  model->to(device);
  model->to(lg::kFloat16);
  const lg::Tensor input =
      lg::randint(1, 10, {2, 8, 4, 4}, lg::TensorOptions().dtype(lg::kFloat16).device(device));

  // named_parameters() returns a fresh list: hold the Tensor (a handle), not a reference into it.
  const lg::Tensor weight = model->named_parameters()[0].second;
  std::cout << tag << "weight before: " << lg::describe_layout(weight) << "\n";
  lg::nn::utils::convert_conv2d_weight_memory_format(*model, lg::MemoryFormat::ChannelsLast);
  std::cout << tag << "weight after:  " << lg::describe_layout(model->named_parameters()[0].second) << "\n";
  std::cout << tag << "input:         " << lg::describe_layout(input) << "\n";
  const lg::Tensor out = (*model)(input);
  std::cout << tag << "out:           " << lg::describe_layout(out) << "\n";
  std::cout << tag << "out.is_contiguous(channels_last) = "
            << (out.is_contiguous(lg::MemoryFormat::ChannelsLast) ? "True" : "False") << "\n";
}

}  // namespace

int main() {
  try {
    run_on(lg::kCPU);
    if (lg::cuda::is_available()) {
      run_on(lg::Device::cuda(0));
    } else {
      std::cout << "(skipped: CUDA part: " << lg::cuda::probe_report() << ")\n";
    }
    return 0;
  } catch (const lg::Error& e) {
    std::cerr << "convert_weights: " << e.what() << "\n";
    return 2;
  }
}

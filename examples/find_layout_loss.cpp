// An application with a custom operator that only has an NCHW kernel -- the everyday way a
// channels_last model silently drops back to NCHW. Run it with the guard on:
//
//   LAYOUTGUARD=throw ./find_layout_loss
//
// and the first operator that returns NCHW for a channels_last input stops the program with a
// dump of every operand, the module path ("head.blur") and a stack trace. Then the same run
// under lg::audit::FlowRecorder prints every op's layout and the loss span: the blur lost
// channels_last, and the next conv gave it back. The fix shown at the end: give the op a
// kernel that accepts any layout (or convert around it on purpose).
#include <iostream>
#include <memory>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>

namespace {

// A 3x3 box blur per channel, written the way much third-party code is: for NCHW only. The
// registration says so (ContiguousOnly), so the dispatcher hands it NCHW copies.
lg::Tensor box_blur_nchw(const lg::Tensor& x) {
  const lg::Tensor w = lg::full({x.size(1), 1, 3, 3}, 1.0 / 9.0, x.options());
  return lg::conv2d(x.contiguous(), w, std::nullopt, {1}, {1}, {1}, x.size(1)).contiguous();
}

const lg::CustomOp& blur_op(lg::KernelLayouts layouts) {
  static const lg::CustomOp nchw_only = lg::register_op(
      "app.box_blur", lg::LayoutPolicy::Preserve, lg::KernelLayouts::ContiguousOnly,
      [](const std::vector<lg::Tensor>& in) { return std::vector<lg::Tensor>{box_blur_nchw(in[0])}; });
  // The fixed version: the same math through an op that keeps the input's layout.
  static const lg::CustomOp any_layout = lg::register_op(
      "app.box_blur_any_layout", lg::LayoutPolicy::Preserve, lg::KernelLayouts::Any,
      [](const std::vector<lg::Tensor>& in) {
        const lg::Tensor& x = in[0];
        const lg::Tensor w = lg::full({x.size(1), 1, 3, 3}, 1.0 / 9.0, x.options());
        return std::vector<lg::Tensor>{lg::conv2d(x, w, std::nullopt, {1}, {1}, {1}, x.size(1))};
      });
  return layouts == lg::KernelLayouts::ContiguousOnly ? nchw_only : any_layout;
}

class Blur : public lg::nn::Module {
 public:
  explicit Blur(lg::KernelLayouts layouts) : Module("Blur"), layouts_(layouts) {}
  lg::Tensor forward(const lg::Tensor& x) override { return blur_op(layouts_)({x})[0]; }

 private:
  lg::KernelLayouts layouts_;
};

// backbone (conv, batch norm, relu) -> head (blur, 1x1 conv).
std::shared_ptr<lg::nn::Sequential> make_app(lg::KernelLayouts blur_layouts) {
  auto backbone = std::make_shared<lg::nn::Sequential>();
  backbone->push_back(std::make_shared<lg::nn::Conv2d>(lg::nn::Conv2dOptions(3, 16, {3}).padding({1})));
  backbone->push_back(std::make_shared<lg::nn::BatchNorm2d>(lg::nn::BatchNormOptions(16)));
  backbone->push_back(std::make_shared<lg::nn::ReLU>());
  auto head = std::make_shared<lg::nn::Sequential>();
  head->push_back("blur", std::make_shared<Blur>(blur_layouts));
  head->push_back("proj", std::make_shared<lg::nn::Conv2d>(lg::nn::Conv2dOptions(16, 8, {1})));
  auto app = std::make_shared<lg::nn::Sequential>();
  app->push_back("backbone", backbone);
  app->push_back("head", head);
  app->eval();
  lg::nn::utils::convert_conv2d_weight_memory_format(*app, lg::MemoryFormat::ChannelsLast);
  return app;
}

}  // namespace

int main() {
  lg::manual_seed(0);
  const lg::Tensor image = lg::randn({2, 3, 32, 32}).to(lg::MemoryFormat::ChannelsLast);
  std::cout << "guard mode: " << lg::guard::mode_name(lg::guard::mode()) << "\n";
  try {
    auto app = make_app(lg::KernelLayouts::ContiguousOnly);
    const lg::Tensor out = (*app)(image);
    std::cout << "finished; output " << out.dim_order()
              << (lg::guard::mode() == lg::guard::Mode::Off ? "  (no checks ran: try LAYOUTGUARD=throw)\n" : "\n");
  } catch (const lg::LayoutViolation& v) {
    std::cout << "layout lost at op " << v.op() << ", module " << v.module_path() << "\n\n" << v.what() << "\n";
  }

  // The whole flow rather than the first loss: a FlowRecorder keeps a row per op, and its loss
  // spans say what ran in NCHW after the blur and which op gave channels_last back. Record mode
  // for this run, so that the loss does not stop it under LAYOUTGUARD=throw.
  {
    auto app = make_app(lg::KernelLayouts::ContiguousOnly);  // built first: its set-up ops are no rows
    lg::guard::Scope record(lg::guard::Mode::Record);
    lg::audit::FlowRecorder flow;
    (void)(*app)(image);
    std::cout << "\nthe layout flow, recorded:\n" << flow.text();
  }

  std::cout << "\nwith the any-layout kernel:\n";
  auto fixed = make_app(lg::KernelLayouts::Any);
  const lg::Tensor out = (*fixed)(image);
  std::cout << "finished; output " << lg::describe_layout(out) << "\n";
  return 0;
}

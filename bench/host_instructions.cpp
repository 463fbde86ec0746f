// Host instructions per call of small CUDA ops: what layoutguard itself executes to enqueue one
// op (dispatch, guard, infer, allocator, geometry, launcher), counted by callgrind, so a change
// to that path can be judged on a noisy VM where microseconds cannot. Run it through
// scripts/host-overhead, which loads bench/host_stub's libcudart (no GPU needed; kernels do not
// run, so every result tensor holds garbage) and turns callgrind's dumps into a table. With the
// real runtime on a GPU machine the counts include the runtime's own instructions.
//
//   valgrind --tool=callgrind --collect-atstart=no build/bench/host_instructions [CALLS]
// Each op is warmed up, then CALLS calls (default 200) are collected and dumped under the op's
// name; the table divides each dump's instruction count by CALLS.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <valgrind/callgrind.h>

#include <layoutguard/layoutguard.h>
#include <layoutguard/nn.h>

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 200;
  if (argc > 2 || calls < 1) {
    std::fprintf(stderr, "usage: host_instructions [CALLS >= 1]\n");
    return 2;
  }
  if (!lg::cuda::is_available()) {
    std::printf("no usable CUDA runtime: %s\n", lg::cuda::probe_report().c_str());
    return 77;
  }
  std::printf("%s\n", lg::cuda::probe_report().c_str());
  using lg::MemoryFormat;
  using lg::Tensor;
  const lg::TensorOptions half = lg::TensorOptions().dtype(lg::kFloat16).device(lg::Device::cuda(0));
  const Tensor tiny = lg::ones({1, 1, 1, 1}).to(half);
  const Tensor tiny_nchw = lg::ones({1, 2, 1, 2}).to(half);
  Tensor tiny_nhwc = lg::empty_like(tiny_nchw, MemoryFormat::ChannelsLast);
  const Tensor maps = lg::ones({1, 4, 2, 2}).to(half).contiguous(MemoryFormat::ChannelsLast);
  const Tensor cpu = lg::ones({1, 1, 1, 1});
  const lg::TensorOptions f32 = lg::TensorOptions().device(lg::Device::cuda(0));
  const Tensor mean = lg::zeros({4}, f32), var = lg::ones({4}, f32), gamma = lg::ones({4}, f32),
               beta = lg::zeros({4}, f32);
  // Batch norm on layoutguard's kernels: cuDNN's node builds no plan for evaluation on a GPU
  // (our kernels then run), and under the stub runtime cuDNN cannot start at all.
  lg::cuda::set_cudnn_batch_norm(false);
  // The layers as a model calls them: a named module (its guard::ModuleScope) around the op.
  auto relu_layer = std::make_shared<lg::nn::ReLU>(true);
  auto bn_layer = std::make_shared<lg::nn::BatchNorm2d>(lg::nn::BatchNormOptions(4));
  lg::nn::Sequential block;
  block.push_back(bn_layer);
  block.push_back(relu_layer);
  block.to(lg::Device::cuda(0));
  block.to(lg::kFloat16);
  block.eval();
  Tensor maps_cf = lg::ones({1, 4, 2, 2}).to(half).contiguous(MemoryFormat::ChannelsLast);
  const std::vector<std::pair<std::string, std::function<void()>>> ops{
      {"lg::empty 1 element (cuda)", [&] { (void)lg::empty({1, 1, 1, 1}, half); }},
      {"copy_ NCHW -> NHWC (cuda)", [&] { tiny_nhwc.copy_(tiny_nchw); }},
      {"contiguous(channels_last) (cuda)", [&] { (void)tiny_nchw.contiguous(lg::MemoryFormat::ChannelsLast); }},
      {"relu (cuda)", [&] { (void)lg::relu(tiny); }},
      {"add (cuda)", [&] { (void)lg::add(tiny, tiny); }},
      {"add 1.0 (cuda)", [&] { (void)lg::add(tiny, 1.0); }},
      {"group_norm 2 groups, affine (cuda)", [&] { (void)lg::group_norm(maps, 2, gamma, beta); }},
      {"batch_norm eval (cuda)", [&] { (void)lg::batch_norm(maps, gamma, beta, mean, var, false); }},
      {"max_pool2d 2x2 (cuda)", [&] { (void)lg::max_pool2d(maps, {2, 2}); }},
      {"nn BatchNorm2d + ReLU(inplace), eval (cuda)", [&] { (void)block(maps_cf); }},
      {"relu (cpu)", [&] { (void)lg::relu(cpu); }},
  };
  for (const auto& [name, fn] : ops) {
    for (int i = 0; i < 20; ++i) fn();
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < calls; ++i) fn();
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT(name.c_str());
  }
  std::printf("calls per op: %d\n", calls);
  return 0;
}

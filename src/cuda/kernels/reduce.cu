// Reductions and softmax on the device: one thread per output element (per line for softmax).
// Correct for any strides; threads of an NHWC reduction over H and W read neighbouring
// channels, so that common case coalesces. A reduction to few outputs over many elements (a
// full sum) takes one block per output instead: one thread would walk the whole tensor alone.
#include "cuda/kernels/device_types.cuh"
#include "cuda/kernels/block_sum.cuh"

namespace lg::cuda::kernels {
namespace {

constexpr int kThreads = 256;

template <typename S>
__global__ void reduce_kernel(ReduceArgs a) {
  using T = Storage<S>;
  using C = typename T::Compute;
  const S* x = reinterpret_cast<const S*>(a.in);
  S* o = reinterpret_cast<S*>(a.out);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < a.outputs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const S* base = x + row_major_offset(i, a.kept, a.kept_in_stride, a.kept_divider);
    S* dst = o + row_major_offset(i, a.kept, a.kept_out_stride, a.kept_divider);
    if (a.op == ReduceOp::Sum || a.op == ReduceOp::Mean) {
      if constexpr (kFloating<S>) {
        double acc = 0;
        for (int64_t j = 0; j < a.count; ++j)
          acc += static_cast<double>(T::load(base[row_major_offset(j, a.reduced, a.red_stride, a.red_divider)]));
        if (a.op == ReduceOp::Mean) acc /= static_cast<double>(a.count);
        *dst = T::store(static_cast<C>(acc));
      } else {
        uint64_t acc = 0;
        for (int64_t j = 0; j < a.count; ++j)
          acc += static_cast<uint64_t>(static_cast<int64_t>(base[row_major_offset(j, a.reduced, a.red_stride, a.red_divider)]));
        *dst = static_cast<S>(static_cast<int64_t>(acc));
      }
    } else {
      const bool max = a.op == ReduceOp::Max;
      C best = T::load(base[0]);
      for (int64_t j = 1; j < a.count; ++j) {
        const C v = T::load(base[row_major_offset(j, a.reduced, a.red_stride, a.red_divider)]);
        if constexpr (std::is_floating_point_v<C>) {
          if (v != v || best != best) {
            if (best == best) best = v;
            continue;
          }
        }
        best = max ? (v > best ? v : best) : (v < best ? v : best);
      }
      *dst = T::store(best);
    }
  }
}

// max or min of two values; a NaN wins, as in the one-thread kernel (and on the CPU).
template <typename C>
__device__ __forceinline__ C pick(C best, C v, bool max) {
  if constexpr (std::is_floating_point_v<C>) {
    if (v != v) return v;
    if (best != best) return best;
  }
  return max ? (v > best ? v : best) : (v < best ? v : best);
}

// Below this many outputs, with at least kThreads elements each, one block per output.
constexpr int64_t kBlockPerOutputBelow = 16384;

// One block per output: each thread folds every kThreads-th element (it has at least one:
// count >= kThreads), then the partial results meet in shared memory (block_fold, which
// leaves it free for the next output).
template <typename S>
__global__ void __launch_bounds__(kThreads) reduce_block_kernel(ReduceArgs a) {
  using T = Storage<S>;
  using C = typename T::Compute;
  using Acc = std::conditional_t<kFloating<S>, double, uint64_t>;
  __shared__ Acc sums[kThreads];
  __shared__ C bests[kThreads];
  const S* x = reinterpret_cast<const S*>(a.in);
  S* o = reinterpret_cast<S*>(a.out);
  const int t = static_cast<int>(threadIdx.x);
  const bool sum = a.op == ReduceOp::Sum || a.op == ReduceOp::Mean, max = a.op == ReduceOp::Max;
  for (int64_t i = blockIdx.x; i < a.outputs; i += gridDim.x) {
    const S* base = x + row_major_offset(i, a.kept, a.kept_in_stride, a.kept_divider);
    const auto element = [&](int64_t j) { return base[row_major_offset(j, a.reduced, a.red_stride, a.red_divider)]; };
    S* dst = o + row_major_offset(i, a.kept, a.kept_out_stride, a.kept_divider);
    if (sum) {
      Acc acc = 0;
      for (int64_t j = t; j < a.count; j += kThreads) {
        if constexpr (kFloating<S>) acc += static_cast<double>(T::load(element(j)));
        else acc += static_cast<uint64_t>(static_cast<int64_t>(element(j)));
      }
      const Acc total = block_fold<kThreads>(sums, acc, [](Acc l, Acc r) { return l + r; });
      if (t == 0) {
        if constexpr (kFloating<S>)
          *dst = T::store(static_cast<C>(a.op == ReduceOp::Mean ? total / static_cast<double>(a.count) : total));
        else
          *dst = static_cast<S>(static_cast<int64_t>(total));
      }
    } else {
      C best = T::load(element(t));
      for (int64_t j = t + kThreads; j < a.count; j += kThreads) best = pick(best, T::load(element(j)), max);
      const C total = block_fold<kThreads>(bests, best, [max](C l, C r) { return pick(l, r, max); });
      if (t == 0) *dst = T::store(total);
    }
  }
}

template <typename S>
__global__ void softmax_kernel(SoftmaxArgs a) {
  using T = Storage<S>;
  using C = typename T::Compute;
  const S* x = reinterpret_cast<const S*>(a.in);
  S* o = reinterpret_cast<S*>(a.out);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < a.lines;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const S* in = x + row_major_offset(i, a.other, a.other_in_stride, a.other_divider);
    S* out = o + row_major_offset(i, a.other, a.other_out_stride, a.other_divider);
    C mx = T::load(in[0]);
    for (int64_t j = 1; j < a.n; ++j) {
      const C v = T::load(in[j * a.in_stride]);
      mx = v > mx ? v : mx;
    }
    if (isinf(mx) && mx < 0) mx = 0;  // a line of -inf: NaN-free, as on the CPU
    C sum = 0;
    for (int64_t j = 0; j < a.n; ++j) sum += exp(T::load(in[j * a.in_stride]) - mx);
    if (a.log) {
      const C ls = log(sum);
      for (int64_t j = 0; j < a.n; ++j) out[j * a.out_stride] = T::store((T::load(in[j * a.in_stride]) - mx) - ls);
    } else {
      const C inv = C(1) / sum;
      for (int64_t j = 0; j < a.n; ++j) out[j * a.out_stride] = T::store(exp(T::load(in[j * a.in_stride]) - mx) * inv);
    }
  }
}

}  // namespace

cudaError_t reduce(const ReduceArgs& args, ScalarType type, cudaStream_t stream) {
  if (args.outputs == 0) return cudaSuccess;
  ReduceArgs a = args;
  set_dividers(a.kept_divider, a.kept_size, a.kept);
  set_dividers(a.red_divider, a.red_size, a.reduced);
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if (a.outputs < kBlockPerOutputBelow && a.count >= kThreads)
      launch_kernel(reduce_block_kernel<S>, static_cast<unsigned>(a.outputs), kThreads, stream, a);
    else
      launch_kernel(reduce_kernel<S>, blocks_for(a.outputs, kThreads), kThreads, stream, a);
    err = cudaGetLastError();
  });
  return err;
}

cudaError_t softmax(const SoftmaxArgs& args, ScalarType type, cudaStream_t stream) {
  if (args.lines == 0 || args.n == 0) return cudaSuccess;
  SoftmaxArgs a = args;
  set_dividers(a.other_divider, a.other_size, a.other);
  cudaError_t err = cudaErrorInvalidValue;
  visit(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (kFloating<S>) {
      launch_kernel(softmax_kernel<S>, blocks_for(a.lines, kThreads), kThreads, stream, a);
      err = cudaGetLastError();
    }
  });
  return err;
}

}  // namespace lg::cuda::kernels

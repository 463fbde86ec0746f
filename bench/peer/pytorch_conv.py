"""The peer of bench/cuda_ops's convolution table: PyTorch's F.conv2d on the same 12 ResNet-50
shapes, float16, NHWC and NCHW, timed the same way (median of 11 samples of 5 calls, each sample
ended by a device synchronisation). cudnn.benchmark stays False by default so that both sides use
cuDNN's heuristics; pass --benchmark to let PyTorch time candidate engines.

Run on the GPU machine:  python3 bench/peer/pytorch_conv.py [--quick] [--benchmark]"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

SHAPES = [(3, 64, 7, 2, 224), (64, 64, 1, 1, 56), (64, 64, 3, 1, 56), (64, 256, 1, 1, 56),
          (256, 64, 1, 1, 56), (128, 128, 3, 1, 28), (512, 128, 1, 1, 28), (256, 256, 3, 1, 14),
          (1024, 256, 1, 1, 14), (512, 512, 3, 1, 7), (2048, 512, 1, 1, 7), (512, 2048, 1, 1, 7)]


def per_call_ms(fn, reps=5, samples=11):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3 / reps)
    return statistics.median(times)


def main():
    quick = "--quick" in sys.argv
    torch.backends.cudnn.benchmark = "--benchmark" in sys.argv
    batch = 32 if quick else 256
    print(f"PyTorch {torch.__version__}, {torch.cuda.get_device_name(0)}, cudnn.benchmark="
          f"{torch.backends.cudnn.benchmark}: conv2d float16, batch {batch}, TFLOPS from median times")
    print(f"{'layer':22s} {'NHWC':>12s} {'NCHW':>12s} {'NHWC/NCHW':>10s}")
    with torch.inference_mode():
        for cin, cout, k, s, h in SHAPES:
            pad = k // 2
            out = (h + 2 * pad - k) // s + 1
            flops = 2.0 * batch * cout * out * out * cin * k * k
            x = torch.randn(batch, cin, h, h, device="cuda", dtype=torch.float16)
            w = torch.randn(cout, cin, k, k, device="cuda", dtype=torch.float16)
            xc, wc = x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last)
            nhwc = per_call_ms(lambda: F.conv2d(xc, wc, None, s, pad))
            nchw = per_call_ms(lambda: F.conv2d(x, w, None, s, pad))
            name = f"{cin}->{cout} {k}x{k} s{s} {h}"
            print(f"{name:22s} {flops / nhwc / 1e9:12.1f} {flops / nchw / 1e9:12.1f} {nchw / nhwc:9.2f}x")


if __name__ == "__main__":
    main()

"""A channels_last conv -> batch_norm -> relu training step on the device named by argv[1] (cpu,
cuda), for comparing what the bridge records on two devices with `layoutguard diff`: batch_norm's
backward is where CUDA and CPU builds have differed (PyTorch issue 107199)."""
import sys

import torch

device = torch.device(sys.argv[1] if len(sys.argv) > 1 else "cpu")
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                          torch.nn.Conv2d(16, 16, 1), torch.nn.GroupNorm(4, 16), torch.nn.AdaptiveAvgPool2d(1))
net = net.to(device=device, memory_format=torch.channels_last).train()
x = torch.randn(4, 8, 16, 16, device=device).contiguous(memory_format=torch.channels_last)
net(x).sum().backward()
print(f"norm step done on {device}")

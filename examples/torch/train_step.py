"""A small segmentation-style network trained for one step in channels_last. Its decoder
upsamples with bicubic interpolation, which PyTorch computes in NCHW on CPU in the backward,
and on 1.13 in the forward too, where the next convolution converts back. Run it under the guard:

    python3 -m layoutguard_torch examples/torch/train_step.py              # warn: the loss is logged
    LAYOUTGUARD=throw python3 -m layoutguard_torch examples/torch/train_step.py
    python3 -m layoutguard_torch examples/torch/train_step.py --fixed      # bilinear: no loss
"""
import sys

import torch
import torch.nn.functional as F


class Decoder(torch.nn.Module):
    def __init__(self, channels, mode):
        super().__init__()
        self.mode = mode
        self.conv = torch.nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        x = F.interpolate(x, scale_factor=2, mode=self.mode, align_corners=False)
        return torch.relu(self.conv(x))


class Net(torch.nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.decoder = Decoder(16, mode)
        self.head = torch.nn.Conv2d(16, 2, 1)

    def forward(self, x):
        return self.head(self.decoder(torch.relu(self.stem(x))))


def main():
    mode = "bilinear" if "--fixed" in sys.argv else "bicubic"
    torch.manual_seed(0)
    model = Net(mode).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(2, 3, 32, 32).contiguous(memory_format=torch.channels_last)
    target = torch.randint(0, 2, (2, 32, 32))
    loss = F.cross_entropy(model(x), target)
    loss.backward()
    opt.step()
    print(f"step done ({mode}), loss {loss.item():.3f}")


if __name__ == "__main__":
    main()

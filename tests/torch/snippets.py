"""PyTorch snippets that lose channels_last under Debian's torch 1.13 on CPU, each with the
user-level ATen op the bridge must name. Found by running PyTorch itself: the forward output's
strides, and the raw gradient (torch.autograd.grad, before AccumulateGrad restores the leaf's
layout) for the backward-only ones. `Snippet.loses()` repeats that finding on whatever torch and
device runs the tests (LG_TORCH_TEST_DEVICE, default cpu), since another build may keep a format
that 1.13 loses, or lose one it keeps."""
import os

import torch
import torch.nn.functional as F

DEVICE = torch.device(os.environ.get("LG_TORCH_TEST_DEVICE", "cpu"))

# The build the op names below were found on: elsewhere a loss may surface at another op.
REFERENCE_BUILD = torch.__version__.startswith("1.13") and DEVICE.type == "cpu"


def image(*sizes):
    """A channels_last leaf that wants gradients."""
    torch.manual_seed(0)
    return torch.randn(*sizes, device=DEVICE).to(memory_format=torch.channels_last).requires_grad_()


def is_channels_last(t):
    return t.dim() != 4 or t.is_contiguous(memory_format=torch.channels_last)


def backward_of(y):
    """Runs y's backward with a channels_last incoming gradient when y is an image."""
    g = torch.randn_like(y)
    if y.dim() == 4:
        g = g.contiguous(memory_format=torch.channels_last)
    y.backward(g)


class Snippet:
    def __init__(self, name, op, forward, backward_only=False, root_cause=None, node=None):
        self.name = name
        self.op = op                  # the user-level op the violation must name
        self.forward = forward        # x -> y
        self.backward_only = backward_only
        self.root_cause = root_cause  # the nested op named as the root cause, if any
        self.node = node              # the autograd node of a backward-only loss

    def run(self):
        y = self.forward(image(2, 8, 6, 6))
        if self.backward_only:
            backward_of(y)
        return y

    def loses(self):
        """Where plain PyTorch (no guard) loses the format here: "forward" (the output), "backward"
        (the raw gradient of the input, for a backward-only snippet), or None."""
        x = image(2, 8, 6, 6)
        y = self.forward(x)
        if not is_channels_last(y):
            return "forward"
        if not self.backward_only:
            return None
        g = torch.randn_like(y)
        if y.dim() == 4:
            g = g.contiguous(memory_format=torch.channels_last)
        (grad,) = torch.autograd.grad(y, x, g)
        return None if is_channels_last(grad) else "backward"


SNIPPETS = [
    Snippet("circular pad", "aten::pad", lambda x: F.pad(x, (1, 1, 1, 1), mode="circular")),
    Snippet("reflect pad", "aten::pad", lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect")),
    Snippet("replicate pad", "aten::pad", lambda x: F.pad(x, (1, 1, 1, 1), mode="replicate")),
    Snippet("softmax over C", "aten::softmax", lambda x: torch.softmax(x, 1)),
    Snippet("log_softmax over C", "aten::log_softmax", lambda x: torch.log_softmax(x, 1)),
    Snippet("bicubic upsample", "aten::upsample_bicubic2d",
            lambda x: F.interpolate(x, scale_factor=2, mode="bicubic")),
    Snippet("instance norm", "aten::instance_norm", lambda x: F.instance_norm(x)),
    Snippet("layer norm over (C, H, W)", "aten::layer_norm", lambda x: F.layer_norm(x, x.shape[1:])),
    Snippet("cumsum over C", "aten::cumsum", lambda x: torch.cumsum(x, 1)),
    Snippet("add of a contiguous and a channels_last tensor", "aten::add",
            lambda x: torch.ones(x.shape, device=x.device) + x),
    Snippet("cat of mixed formats", "aten::cat", lambda x: torch.cat([torch.ones(x.shape, device=x.device), x], 1)),
    Snippet("grid_sample", "aten::grid_sampler",
            lambda x: F.grid_sample(x, torch.zeros(x.shape[0], 3, 3, 2, device=x.device), align_corners=False)),
    # The derivative formula makes the incoming gradient contiguous before the kernel runs.
    Snippet("group_norm backward", "aten::contiguous", lambda x: F.group_norm(x, 2),
            backward_only=True, node="NativeGroupNormBackward0"),
    Snippet("sort over C, backward", "aten::value_selecting_reduction_backward",
            lambda x: torch.sort(x, 1)[0], backward_only=True, node="SortBackward0"),
    Snippet("mse_loss backward", "aten::mse_loss_backward",
            lambda x: F.mse_loss(x, torch.zeros_like(x), reduction="none"), backward_only=True,
            node="MseLossBackward0"),
]
# Plain torch 2.0 on the CPU crashes (SIGSEGV) in group_norm's backward of a channels_last
# tensor, guard or not (2.1 does not).
CRASH_PLAIN_TORCH = ({"group_norm backward"} if torch.__version__.startswith("2.0.") and DEVICE.type == "cpu"
                     else set())
SNIPPETS = [s for s in SNIPPETS if s.name not in CRASH_PLAIN_TORCH]

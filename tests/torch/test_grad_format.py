"""The gradient-format contract (LAYOUTGUARD_OPTIONS grad_format=1): the gradient of a
channels-last forward output must reach its autograd node channels-last. Where PyTorch itself
hands back a dense gradient of another layout is decided by plain PyTorch (a tensor hook, the
guard off), so the same cases hold on every torch and device; the reference build (1.13, CPU)
pins the nodes and ops the reports name."""
import inspect
import os
import unittest

import torch
import torch.nn.functional as F

import layoutguard_torch as lgt
import lg_unittest
from snippets import DEVICE, REFERENCE_BUILD, SNIPPETS, backward_of, image

SETTINGS = os.environ.get("LAYOUTGUARD_OPTIONS", "")
WITH_CONTRACT = f"{SETTINGS}:grad_format=1" if SETTINGS else "grad_format=1"


class ContiguousGrad(torch.autograd.Function):
    """Identity forward; its backward makes the gradient contiguous, as extension code often does."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.contiguous()


class Net(torch.nn.Module):
    def __init__(self, head, inplace=False):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.relu = torch.nn.ReLU(inplace=inplace)
        self.head = head

    def forward(self, x):
        return self.head(self.relu(self.conv(x)))


def channels_last_net(head, inplace=False):
    torch.manual_seed(0)
    return Net(head, inplace).to(device=DEVICE, memory_format=torch.channels_last)


def custom_function_head(y):
    return ContiguousGrad.apply(y).sum((2, 3))


# Global pooling heads, as models end: (name, head).
HEADS = [
    ("adaptive_avg_pool2d(1)", lambda y: torch.flatten(F.adaptive_avg_pool2d(y, 1), 1)),
    ("mean over H, W", lambda y: y.mean((2, 3))),
    ("avg_pool2d over the whole image", lambda y: torch.flatten(F.avg_pool2d(y, y.shape[-2:]), 1)),
    ("sum over H, W", lambda y: y.sum((2, 3)) / (y.shape[2] * y.shape[3])),
]


def gradient_of_relu_output(head):
    """The gradient that reaches the ReLU's output in plain PyTorch (no guard)."""
    net = channels_last_net(head)
    seen = []
    x = image(2, 8, 6, 6)
    y = net.relu(net.conv(x))
    y.register_hook(lambda g: seen.append(g))
    net.head(y).sum().backward()
    return seen[0]


def breaks_contract(g):
    """Not channels-last, and not expanded: an expanded gradient (a sum's) has no layout to keep."""
    return 0 not in g.stride() and not g.is_contiguous(memory_format=torch.channels_last)


def run_backward(y):
    y.backward()


BACKWARD_LINE = inspect.getsourcelines(run_backward)[1] + 1


def step(net, mode="record"):
    lgt.clear_report()
    with lgt.guard(mode):
        net(image(2, 8, 6, 6)).sum().backward()
    return lgt.report()["violations"]


class GradFormat(unittest.TestCase):
    def setUp(self):
        lgt.set_options(WITH_CONTRACT)

    def tearDown(self):
        lgt.set_options(SETTINGS)
        lgt.clear_report()

    def test_off_unless_asked(self):
        lgt.set_options(SETTINGS)
        self.assertEqual(step(channels_last_net(custom_function_head)), [])

    def test_a_custom_backward_that_makes_the_gradient_contiguous(self):
        (v,) = step(channels_last_net(custom_function_head))
        self.assertEqual(v["op"], "autograd::grad_format")
        self.assertEqual(v["kernel"], "autograd")
        self.assertEqual(v["autograd_node"], "ReluBackward0")  # the node whose output's gradient it is
        self.assertEqual(v["module"], "relu")
        self.assertEqual(v["signature"], "channels_last->contiguous")
        self.assertEqual(v["inputs"][0]["strides"], [288, 1, 48, 8])   # the forward output
        self.assertEqual(v["outputs"][0]["strides"], [288, 36, 6, 1])  # its gradient as it arrived
        self.assertIn("It was made by aten::contiguous in ContiguousGradBackward,", v["rule"])

    def test_throw_raises_at_the_backward_call_with_the_maker(self):
        net = channels_last_net(custom_function_head)
        with self.assertRaises(lgt.LayoutViolationError) as raised, lgt.guard("throw"):
            run_backward(net(image(2, 8, 6, 6)).sum())  # the forward too: its nodes are hooked as they are made
        text = str(raised.exception)
        self.assertIn("autograd::grad_format", text)
        self.assertIn("aten::contiguous in ContiguousGradBackward", text)
        self.assertIn(f"at: {run_backward.__code__.co_filename}:{BACKWARD_LINE} in run_backward\n", text)

    def test_pooling_heads_are_reported_exactly_where_pytorch_loses(self):
        losing = []
        for name, head in HEADS:
            with self.subTest(name):
                loses = breaks_contract(gradient_of_relu_output(head))
                if loses:
                    losing.append(name)
                for inplace in (False, True):  # an in-place ReLU's node is reached through the head's input
                    violations = step(channels_last_net(head, inplace))
                    ops = [(v["op"], v["autograd_node"], v["module"]) for v in violations]
                    self.assertEqual(ops, [("autograd::grad_format", "ReluBackward0", "relu")] if loses else [],
                                     f"{name}, inplace={inplace}: plain PyTorch {'loses' if loses else 'keeps'}")
                    if loses and REFERENCE_BUILD:
                        self.assertIn("It was made by aten::div in MeanBackward1", violations[0]["rule"])
        if REFERENCE_BUILD:
            self.assertEqual(losing, ["adaptive_avg_pool2d(1)", "mean over H, W"])

    def test_a_loss_reported_at_its_backward_op_is_not_reported_again_where_it_arrives(self):
        in_backward = [s for s in SNIPPETS if s.backward_only and s.loses() == "backward"]
        if REFERENCE_BUILD:
            self.assertGreaterEqual(len(in_backward), 3)
        for s in in_backward:
            with self.subTest(s.name):
                net = channels_last_net(s.forward)
                lgt.clear_report()
                with lgt.guard("record"):
                    backward_of(net(image(2, 8, 6, 6)))
                ops = [v["op"] for v in lgt.report()["violations"]]
                self.assertTrue(ops, f"{s.name}: its backward loss must be reported")  # else nothing was at stake
                self.assertNotIn("autograd::grad_format", ops, f"{s.name}: {ops}")
                if REFERENCE_BUILD:
                    self.assertEqual(ops, [s.op])

    def test_a_channels_last_model_with_a_kept_gradient_reports_nothing(self):
        kept = HEADS[2][1]  # avg_pool2d over the whole image
        self.assertFalse(breaks_contract(gradient_of_relu_output(kept)), "plain PyTorch keeps the layout here")
        self.assertEqual(step(channels_last_net(kept)), [])

    def test_a_channels_last_gradient_with_any_batch_stride_passes(self):
        # Batch 1, squeezed: the gradient comes back through unsqueeze(0), whose batch stride
        # (8) is not what channels-last suggests, though its elements lie in channels-last order.
        hwc = torch.randn(6, 6, 8, device=DEVICE).permute(2, 0, 1)
        net = channels_last_net(lambda y: (y.squeeze(0) * hwc).sum())
        seen = []
        lgt.clear_report()
        with lgt.guard("record"):
            y = net.relu(net.conv(image(1, 8, 6, 6)))
            y.register_hook(lambda g: seen.append(g.stride()))
            net.head(y).backward()
        self.assertEqual(seen, [(8, 1, 48, 8)])
        self.assertEqual(lgt.report()["violations"], [])

    def test_hooks_made_under_the_option_are_quiet_once_it_is_off(self):
        net = channels_last_net(custom_function_head)
        with lgt.guard("record"):
            loss = net(image(2, 8, 6, 6)).sum()  # hooked while the option is on
        lgt.set_options(SETTINGS)
        lgt.clear_report()
        with lgt.guard("record"):
            loss.backward()
        self.assertEqual(lgt.report()["violations"], [])


if __name__ == "__main__":
    lg_unittest.main()

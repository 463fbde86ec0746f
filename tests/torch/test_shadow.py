"""shadow=1 on ATen ops: a user-level call with a channels-last input runs again on contiguous
copies of its arguments, and a result that differs raises ShadowMismatchError in every mode,
naming the op, the output, the largest difference, the operands, the module and the user's line.
A kernel that computes right values is never flagged: the snippets and a training step of
torchvision's resnet18 run clean. Ops drawing random numbers are not compared, and the rerun
never moves the random stream, never writes the caller's tensors (batch norm's statistics)."""
import os
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.nn.functional as F

import layoutguard_torch as lgt
import lg_unittest
from snippets import DEVICE, SNIPPETS

OPTIONS = "summary=0"

# Custom ops with a CPU kernel each, as a user's extension would register them.
_lib = torch.library.Library("lgshadow", "DEF")
_lib.define("scrambled_double(Tensor x) -> Tensor")
_lib.define("noisy(Tensor x) -> Tensor")
_lib.define("channel_sums(Tensor x) -> Tensor")


def _scrambled_double(x):
    """2 * x, but for a channels-last input it writes the values in NCHW order into the NHWC
    memory of a channels-last output: the right layout, the wrong values."""
    out = torch.empty_like(x)
    if x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous():
        out.as_strided((x.numel(),), (1,)).copy_(x.contiguous().view(-1) * 2)
    else:
        out.copy_(x * 2)
    return out


def _noisy(x):
    """x plus uniform noise drawn inside the kernel: random, although no tag says so."""
    return x + torch.rand_like(x)


def _channel_sums(x):
    """Each element replaced by its channel's sum, summed in memory order: for channels-last
    input over rows of C, otherwise per channel plane. Right either way, rounded differently."""
    if x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous():
        sums = x.permute(0, 2, 3, 1).reshape(-1, x.shape[1]).sum(0)
    else:
        sums = x.sum((0, 2, 3))
    return torch.empty_like(x).copy_(sums.view(1, -1, 1, 1).expand_as(x))


_lib.impl("scrambled_double", _scrambled_double, "CPU")
_lib.impl("channel_sums", _channel_sums, "CPU")
_lib.impl("noisy", _noisy, "CPU")


def channels_last_image(*sizes):
    return torch.randn(*sizes).contiguous(memory_format=torch.channels_last)


class Doubler(torch.nn.Module):
    def forward(self, x):
        return torch.ops.lgshadow.scrambled_double(x)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Doubler()

    def forward(self, x):
        return self.head(x)


class Scramble(torch.autograd.Function):
    """Identity forward; the backward doubles the gradient through the scrambling kernel."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return torch.ops.lgshadow.scrambled_double(grad)


# A whole program under the runner, with ATen's own relu replaced on the CPU by one that
# scrambles channels-last data as _scrambled_double does: an ATen op with an unboxed kernel at
# the bridge (a boxed one under LAYOUTGUARD_TORCH_UNBOXED=0, as the -boxed suite runs).
WRONG_ATEN_RELU = """
import warnings
import torch
warnings.simplefilter("ignore")  # "Overriding a previously registered kernel"
lib = torch.library.Library("aten", "IMPL")
def scrambled_relu(x):
    out = torch.empty_like(x)
    if x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous():
        out.as_strided((x.numel(),), (1,)).copy_(x.contiguous().view(-1).clamp_min(0))
    else:
        out.copy_(x.clamp_min(0))
    return out
lib.impl("relu", scrambled_relu, "CPU")
x = torch.randn(2, 3, 4, 4)
torch.relu(x)  # NCHW: nothing to compare with
torch.relu(x.contiguous(memory_format=torch.channels_last))
print("not caught")
"""


def run_under_runner(program, options):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "program.py")
        with open(script, "w") as f:
            f.write(program)
        env = dict(os.environ, LAYOUTGUARD="warn", LAYOUTGUARD_OPTIONS=options)
        return subprocess.run([sys.executable, "-m", "layoutguard_torch", script], env=env, capture_output=True,
                              text=True, timeout=300)


class ShadowTest(unittest.TestCase):
    def setUp(self):
        lgt.set_options("shadow=1:" + OPTIONS)
        lgt.clear_report()

    def tearDown(self):
        lgt.set_options(OPTIONS)
        lgt.clear_report()


class WrongValues(ShadowTest):
    def test_a_wrong_channels_last_kernel_raises_in_every_mode(self):
        x = channels_last_image(2, 3, 4, 4)
        for mode in ("throw", "warn", "record"):
            with self.subTest(mode):
                with self.assertRaises(lgt.ShadowMismatchError) as caught, lgt.guard(mode):
                    torch.ops.lgshadow.scrambled_double(x)
                self.assertIsInstance(caught.exception, RuntimeError)
                text = str(caught.exception)
                self.assertTrue(text.startswith("[layoutguard] shadow: lgshadow::scrambled_double output 0 differs "
                                                "from the result on contiguous inputs: largest difference "), text)
                self.assertIn("tolerance 0.000010 + 0.000100 * |expected| for float32", text)
                self.assertIn("input 0: float32 cpu (2,3,4,4):(48,1,12,3) order=acdb channels_last", text)
                self.assertIn("output 0: float32 cpu (2,3,4,4):(48,1,12,3) order=acdb channels_last", text)
                self.assertIn("allow=lgshadow::scrambled_double in LAYOUTGUARD_OPTIONS", text)
                # Doubling is exact in float32: the float64 rerun finds no rounding at all.
                self.assertIn("from the float64 result, the contiguous path 0: more than 8 times its rounding", text)

    def test_a_wrong_aten_kernel_stops_a_program_under_the_runner(self):
        run = run_under_runner(WRONG_ATEN_RELU, "shadow=1:summary=0")
        self.assertNotEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("layoutguard_torch.ShadowMismatchError: [layoutguard] shadow: aten::relu output 0 differs",
                      run.stderr)
        self.assertRegex(run.stderr, r"\n  at: \S*program\.py:16 in <module>\n")
        self.assertNotIn("not caught", run.stdout)
        run = run_under_runner(WRONG_ATEN_RELU, "summary=0")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("not caught", run.stdout)

    def test_the_dump_names_the_module_and_the_users_line(self):
        net = Net()
        x = channels_last_image(2, 3, 4, 4)
        with self.assertRaises(lgt.ShadowMismatchError) as caught, lgt.guard("throw"):
            net(x)
        text = str(caught.exception)
        self.assertIn("\n  module: head\n", text)
        self.assertRegex(text, r"\n  at: \S*test_shadow\.py:\d+ in forward\n")
        self.assertIn("stack trace (most recent call first):", text)

    def test_a_backward_op_is_compared_and_names_its_node(self):
        x = channels_last_image(2, 3, 4, 4).requires_grad_()
        with self.assertRaises(lgt.ShadowMismatchError) as caught, lgt.guard("record"):
            # The product gives the gradient distinct values, in channels-last strides (a sum's
            # alone is an expanded scalar, whose scrambling changes nothing).
            (Scramble.apply(x) * channels_last_image(2, 3, 4, 4)).sum().backward()
        self.assertIn("\n  autograd node: ScrambleBackward (a backward op)\n", str(caught.exception))

    def test_the_largest_difference_is_the_one_reported(self):
        x = torch.zeros(1, 2, 2, 2).contiguous(memory_format=torch.channels_last)
        x[0, 1, 0, 0] = 5.0
        with self.assertRaises(lgt.ShadowMismatchError) as caught, lgt.guard("throw"):
            torch.ops.lgshadow.scrambled_double(x)
        # The 10 that belongs at (0,1,0,0), flat index 4, lands at (0,0,1,0), flat index 2: two
        # elements are wrong by 10, and the first is named.
        self.assertIn("largest difference 10 at flat index 2 (got 10, expected 0;", str(caught.exception))

    def test_off_by_default_and_under_allow_and_for_contiguous_inputs(self):
        x = channels_last_image(2, 3, 4, 4)
        with lgt.guard("throw"):
            torch.ops.lgshadow.scrambled_double(x.contiguous())  # nothing to compare with
        lgt.set_options("shadow=1:allow=lgshadow::scrambled_double:" + OPTIONS)
        with lgt.guard("throw"):
            torch.ops.lgshadow.scrambled_double(x)
        lgt.set_options(OPTIONS)
        with lgt.guard("throw"):
            torch.ops.lgshadow.scrambled_double(x)
        lgt.set_options("shadow=1:" + OPTIONS)
        with lgt.guard("off"):
            torch.ops.lgshadow.scrambled_double(x)


class RightValues(ShadowTest):
    def test_the_snippets_compute_the_same_values_in_both_layouts(self):
        for s in SNIPPETS:
            with self.subTest(s.name), lgt.guard("record"):
                s.run()

    def test_a_resnet18_training_step_compares_clean(self):
        import torchvision
        torch.manual_seed(0)
        model = torchvision.models.resnet18(num_classes=10).to(DEVICE).to(memory_format=torch.channels_last)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x = channels_last_image(2, 3, 64, 64).to(DEVICE)
        with lgt.guard("record"):
            loss = F.cross_entropy(model(x), torch.tensor([1, 7], device=DEVICE))
            loss.backward()
            optimizer.step()
        self.assertGreater(lgt.report()["checked_calls"], 100)

    def test_a_long_sum_rounded_in_another_order_is_not_a_difference(self):
        torch.manual_seed(0)
        x = torch.randn(16, 4, 64, 64) * 100
        x = (x - x.mean(dim=(0, 2, 3), keepdim=True)).contiguous(memory_format=torch.channels_last)
        # The two orders of summation differ far beyond float32's per-element bound (the sums
        # cancel to near zero), yet each is as close to the float64 sum as the other.
        lgt.set_options(OPTIONS)
        gap = (_channel_sums(x) - _channel_sums(x.contiguous())).abs().max().item()
        self.assertGreater(gap, 1e-5 + 1e-4 * _channel_sums(x).abs().max().item())
        lgt.set_options("shadow=1:" + OPTIONS)
        with lgt.guard("throw"):
            torch.ops.lgshadow.channel_sums(x)

    def test_models_whose_long_reductions_round_differently_compare_clean(self):
        # Their weight gradients and batch-norm sums miss float32's per-element bound in places.
        import torchvision
        for name, amp in (("efficientnet_b0", False), ("efficientnet_b0", True), ("mnasnet0_5", False),
                          ("mnasnet0_5", True), ("inception_v3", False)):
            with self.subTest(name, amp=amp):
                torch.manual_seed(0)
                kwargs = {"aux_logits": False, "init_weights": False} if name == "inception_v3" else {}
                model = getattr(torchvision.models, name)(num_classes=10, **kwargs)
                model = model.to(DEVICE).to(memory_format=torch.channels_last)
                size = 160 if name == "inception_v3" else 96
                x = channels_last_image(2, 3, size, size).to(DEVICE)
                with lgt.guard("record"):
                    with torch.autocast(torch.device(DEVICE).type, dtype=torch.bfloat16, enabled=amp):
                        loss = F.cross_entropy(model(x), torch.tensor([1, 7], device=DEVICE))
                    loss.backward()

    def test_batch_norm_updates_its_statistics_once(self):
        x = channels_last_image(4, 3, 5, 5)
        stats = []
        for options in (OPTIONS, "shadow=1:" + OPTIONS):
            lgt.set_options(options)
            bn = torch.nn.BatchNorm2d(3).to(memory_format=torch.channels_last)
            with lgt.guard("throw"):
                bn(x)
            stats.append((bn.running_mean.clone(), bn.running_var.clone(), int(bn.num_batches_tracked)))
        self.assertTrue(torch.equal(stats[0][0], stats[1][0]) and torch.equal(stats[0][1], stats[1][1]))
        self.assertEqual(stats[0][2], stats[1][2])


class RandomOps(ShadowTest):
    def run_twice(self, f):
        """f's result and the random stream after it, with shadow=1 and without."""
        runs = []
        for options in ("shadow=1:" + OPTIONS, OPTIONS):
            lgt.set_options(options)
            torch.manual_seed(7)
            with lgt.guard("throw"):
                y = f()
            runs.append((y, torch.rand(4)))
        return runs

    def test_dropout_is_not_compared_and_draws_once(self):
        x = channels_last_image(2, 8, 6, 6)
        (y1, after1), (y2, after2) = self.run_twice(lambda: F.dropout(x, 0.5, training=True))
        self.assertTrue(torch.equal(y1, y2))
        self.assertTrue(torch.equal(after1, after2))

    def test_an_untagged_op_that_draws_is_not_compared_and_draws_once(self):
        x = channels_last_image(2, 3, 4, 4)
        (y1, after1), (y2, after2) = self.run_twice(lambda: torch.ops.lgshadow.noisy(x))
        self.assertTrue(torch.equal(y1, y2))
        self.assertTrue(torch.equal(after1, after2))

    def test_a_compared_op_leaves_the_random_stream_alone(self):
        x = channels_last_image(2, 8, 6, 6)
        (y1, after1), (y2, after2) = self.run_twice(lambda: F.avg_pool2d(torch.relu(x), 2))
        self.assertTrue(torch.equal(y1, y2))
        self.assertTrue(torch.equal(after1, after2))


if __name__ == "__main__":
    lg_unittest.main()

"""The policies that the schema and the exception table (src/torch/aten_policies.def) give ATen
ops, each on a call whose output plain PyTorch does not make channels_last from a channels_last
input: a factory from `self`, an `out=` op, a reduction with keepdim, a rank-changing op, a
caller-chosen memory_format. None of these is a loss, so none may be reported, although the
bridge sees each call (the op table counts it). Beside each, a call of the same op that the
policy does not cover is reported where PyTorch loses the format, so that a policy applied too
widely fails as well. On a torch or device other than 1.13's CPU, the outputs' formats are
printed rather than asserted: another build may keep a format."""
import os
import unittest

import torch
import torch.nn.functional as F

import layoutguard_torch as lgt
import lg_unittest

DEVICE = torch.device(os.environ.get("LG_TORCH_TEST_DEVICE", "cpu"))
REFERENCE_BUILD = torch.__version__.startswith("1.13") and DEVICE.type == "cpu"


def image(c=8, side=6):
    torch.manual_seed(0)
    return torch.randn(2, c, side, side, device=DEVICE).contiguous(memory_format=torch.channels_last)


def channels_last(t):
    return t.is_contiguous(memory_format=torch.channels_last)


def recorded(call):
    """Runs call() under record mode; returns its result, the violations' ops and the ops counted."""
    lgt.clear_report()
    with lgt.guard("record"):
        out = call()
    report = lgt.report()
    lgt.clear_report()
    return out, [v["op"] for v in report["violations"]], {o["op"] for o in report["ops"] if o["calls"]}


# (name, op counted by the bridge, call of a channels_last x): no violation is reported. Each
# output is an NCHW tensor of rank 4 on the reference build, but for the ops in KEPT_THERE.
NOT_LOSSES = [
    # Factories from self (the table's Factory rule): new sizes, contiguous by design.
    ("new_empty", "aten::new_empty", lambda x: x.new_empty(x.shape)),
    ("new_zeros", "aten::new_zeros", lambda x: x.new_zeros(x.shape)),
    ("new_ones", "aten::new_ones", lambda x: x.new_ones(x.shape)),
    ("new_full", "aten::new_full", lambda x: x.new_full(x.shape, 2.0)),
    ("new_empty_strided", "aten::new_empty_strided", lambda x: x.new_empty_strided(x.shape, (288, 36, 6, 1))),
    # out=: the result is the tensor the caller gave (the schema's Tensor(a!)).
    ("add out=", "aten::add", lambda x: torch.add(x, x, out=torch.empty(x.shape, device=x.device))),
    ("softmax out=", "aten::_softmax",
     lambda x: torch._softmax(x, 1, False, out=torch.empty(x.shape, device=x.device))),
    # A reduction with keepdim: the output is smaller than the input, not its image.
    ("amax keepdim", "aten::amax", lambda x: x.amax(2, keepdim=True)),
    ("sum keepdim", "aten::sum", lambda x: x.sum(3, keepdim=True)),
    # Rank-changing ops (the table): channels move into space or out of it, or a matrix product.
    # 1.13's CPU kernels of the shuffles keep channels_last; a build whose kernels do not may
    # not report them either.
    ("pixel_shuffle", "aten::pixel_shuffle", lambda x: F.pixel_shuffle(x, 2)),
    ("pixel_unshuffle", "aten::pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2)),
    ("channel_shuffle", "aten::channel_shuffle", lambda x: F.channel_shuffle(x, 2)),
    ("linear over W", "aten::linear", lambda x: F.linear(x, torch.randn(5, x.shape[3], device=x.device))),
    ("matmul over H, W", "aten::matmul", lambda x: torch.matmul(x, torch.randn(x.shape[3], 4, device=x.device))),
    # The caller chose the format: a given memory_format, or strides.
    ("contiguous", "aten::contiguous", lambda x: x.contiguous()),
    ("clone to contiguous_format", "aten::clone", lambda x: x.clone(memory_format=torch.contiguous_format)),
    ("to contiguous_format", "aten::to", lambda x: x.to(memory_format=torch.contiguous_format)),
    ("empty_like contiguous_format", "aten::empty_like",
     lambda x: torch.empty_like(x, memory_format=torch.contiguous_format)),
]

KEPT_THERE = {"pixel_shuffle", "pixel_unshuffle", "channel_shuffle"}

# The same ops outside their policy's reach: reported exactly where PyTorch loses the format.
LOSSES = [
    # Softmax over C without out=: the result is the op's own, and 1.13 makes it contiguous.
    ("softmax", "aten::softmax", lambda x: torch.softmax(x, 1)),
    # add without out=: the result follows its first operand, contiguous here.
    ("add of contiguous and channels_last", "aten::add",
     lambda x: torch.add(torch.ones(x.shape, device=x.device), x)),
]


class NotLosses(unittest.TestCase):
    def test_policies_report_nothing_for_calls_that_are_no_loss(self):
        for name, op, call in NOT_LOSSES:
            with self.subTest(name):
                x = image()
                out, violations, counted = recorded(lambda: call(x))
                print(f"  {DEVICE.type} torch {torch.__version__}: {name}: {tuple(out.shape)} "
                      f"strides {out.stride()} ({'channels_last' if channels_last(out) else 'not channels_last'})")
                self.assertEqual(violations, [], f"{name}: reported {violations}")
                self.assertIn(op, counted, f"{name}: the bridge did not see {op}")
                if REFERENCE_BUILD:
                    # Without the policy this would be a loss: a rank-4 output that is not
                    # channels_last, from a channels_last input.
                    self.assertEqual(out.dim(), 4, name)
                    self.assertEqual(channels_last(out), name in KEPT_THERE, name)

    def test_a_default_memory_format_is_checked(self):
        # clone, empty_like and to without a memory_format preserve it: checked, and kept.
        for name, op, call in [("clone", "aten::clone", lambda x: x.clone()),
                               ("empty_like", "aten::empty_like", lambda x: torch.empty_like(x)),
                               ("to", "aten::to", lambda x: x.to(torch.float64))]:
            with self.subTest(name):
                x = image()
                out, violations, counted = recorded(lambda: call(x))
                self.assertTrue(channels_last(out), name)
                self.assertEqual(violations, [], name)
                self.assertIn(op, counted, f"{name}: the bridge did not see {op}")

    def test_broadcast_tensors_returns_views(self):
        # broadcast_tensors returns each tensor expanded, a view the schema does not mark: result
        # 1 is the NCHW target's, and a channels_last tensor broadcast over a size-1 batch or
        # row has a stride of 0 there, which is no format, as expand's is. mse_loss and
        # l1_loss call it with the target.
        x, target = image(), torch.randn(2, 8, 6, 6, device=DEVICE)
        one = x[:1].contiguous(memory_format=torch.channels_last)
        rows = torch.randn(2, 8, 1, 6, device=DEVICE).contiguous(memory_format=torch.channels_last)
        self.assertFalse(channels_last(one.expand(2, 8, 6, 6)))
        for name, call in [("broadcast_tensors", lambda: torch.broadcast_tensors(x, target)),
                           ("broadcast over N", lambda: torch.broadcast_tensors(one, target)),
                           ("broadcast over H", lambda: torch.broadcast_tensors(rows, target)),
                           ("mse_loss", lambda: F.mse_loss(x, target)), ("l1_loss", lambda: F.l1_loss(x, target)),
                           ("mse_loss broadcast", lambda: F.mse_loss(one, target, reduction="none"))]:
            with self.subTest(name):
                _, violations, counted = recorded(call)
                self.assertEqual(violations, [], name)
                self.assertIn("aten::broadcast_tensors", counted, name)
        with lgt.guard("throw"):
            F.mse_loss(x, target)

    def test_unflattening_a_buffer_is_no_loss(self):
        # DDP's constructor, and gradient all-reduces over one flat buffer, make views of a 1-D
        # buffer shaped like channels_last tensors: the buffer's order decides their strides.
        from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors
        grads = [image(), torch.randn(8, device=DEVICE)]
        _, violations, counted = recorded(lambda: _unflatten_dense_tensors(_flatten_dense_tensors(grads), grads))
        self.assertEqual(violations, [])
        self.assertIn("aten::unflatten_dense_tensors", counted)

    def test_a_factory_inside_an_op_is_the_root_cause(self):
        # new_empty called by PyTorch inside circular padding is no user call: the loss is
        # pad's, with new_empty as its root cause.
        if not REFERENCE_BUILD:
            self.skipTest(f"the nested op was found on 1.13's CPU; this is torch {torch.__version__} on {DEVICE}")
        lgt.clear_report()
        with lgt.guard("record"):
            F.pad(image(), (1, 1, 1, 1), mode="circular")
        (v,) = lgt.report()["violations"]
        lgt.clear_report()
        self.assertEqual((v["op"], v["root_cause"]), ("aten::pad", "aten::new_empty"))


class Losses(unittest.TestCase):
    def test_the_same_ops_outside_their_policy_are_reported(self):
        for name, op, call in LOSSES:
            with self.subTest(name):
                x = image()
                out, violations, _ = recorded(lambda: call(x))
                lost = out.dim() == 4 and not channels_last(out)
                self.assertEqual(violations, [op] if lost else [], name)
                if REFERENCE_BUILD:
                    self.assertTrue(lost, f"{name}: 1.13 loses the format here")

    def test_a_keepdim_reduction_over_a_size_one_dim_is_checked(self):
        # Its output has the input's sizes: no reduction, so Preserve; the format is kept.
        x = torch.randn(2, 8, 1, 6, device=DEVICE).contiguous(memory_format=torch.channels_last)
        out, violations, counted = recorded(lambda: x.amax(2, keepdim=True))
        self.assertEqual(tuple(out.shape), (2, 8, 1, 6))
        self.assertEqual(violations, [] if channels_last(out) else ["aten::amax"])
        self.assertIn("aten::amax", counted)
        if REFERENCE_BUILD:
            # 1.13 returns it contiguous, strides (48, 6, 6, 1): a loss the keepdim rule must not hide.
            self.assertEqual(violations, ["aten::amax"])

    def test_the_backward_of_a_keepdim_reduction_is_checked(self):
        # max(dim, keepdim=True)'s backward (value_selecting_reduction_backward) carries the
        # forward's keepdim, but its output is larger than its input: the gradient spread back
        # to the input's sizes, an image of the channels_last input.
        x = image().requires_grad_()
        weight = torch.randn(2, 8, 1, 6, device=DEVICE).contiguous(memory_format=torch.channels_last)

        def step():
            arrived = []  # the gradient as the backward op made it (x.grad takes x's strides)
            x.register_hook(arrived.append)
            (weight * x.max(2, keepdim=True)[0]).sum().backward()
            return arrived[0]

        grad, violations, counted = recorded(step)
        self.assertIn("aten::value_selecting_reduction_backward", counted)
        self.assertEqual(violations, [] if channels_last(grad) else ["aten::value_selecting_reduction_backward"])
        if REFERENCE_BUILD:
            # 1.13 spreads it into a contiguous tensor of zeros: strides (288, 36, 6, 1).
            self.assertEqual(violations, ["aten::value_selecting_reduction_backward"])


class CustomOps(unittest.TestCase):
    def test_an_op_defined_after_another_was_freed_has_its_own_policy(self):
        # A Library freed takes its ops' definitions along; an op defined later may get the
        # freed schema's address. It is still its own op: its name, its policy (no longer the
        # view's that lived there), its arguments.
        import gc
        x = image()
        view = torch.library.Library("lgpolicies", "DEF")
        view.define("alias_of(Tensor(a) x) -> Tensor(a)")
        view.impl("alias_of", lambda t: t.contiguous(), "CPU")
        _, violations, counted = recorded(lambda: torch.ops.lgpolicies.alias_of(x.cpu()))
        self.assertEqual((violations, "lgpolicies::alias_of" in counted), ([], True))
        del view
        gc.collect()
        lossy = torch.library.Library("lgpolicies", "DEF")
        lossy.define("drop_format(Tensor x) -> Tensor")
        lossy.impl("drop_format", lambda t: t.contiguous(), "CPU")
        _, violations, counted = recorded(lambda: torch.ops.lgpolicies.drop_format(x.cpu()))
        self.assertEqual(violations, ["lgpolicies::drop_format"])
        self.assertIn("lgpolicies::drop_format", counted)
        self.assertNotIn("lgpolicies::alias_of", counted)


def hiding_view(x):
    """x[0].unsqueeze(0) of an NHWC batch: channels_last data (is_contiguous(channels_last))
    under a size-1 batch stride that makes PyTorch suggest contiguous_format."""
    v = x[0].unsqueeze(0)
    assert v.is_contiguous(memory_format=torch.channels_last) and v.stride()[0] != v[0].numel(), v.stride()
    return v


class HiddenChannelsLast(unittest.TestCase):
    """An input that hides channels-last data (hidden_views=1, the default): the ops that follow
    the suggested format reorder the data, and the op that does is the loss; those that keep
    the data in channels-last order are not. The view itself passes the bridge by."""

    def test_an_op_that_reorders_the_data_is_reported(self):
        v = hiding_view(image())
        for name, op, call in [("avg_pool2d", "aten::avg_pool2d", lambda: F.avg_pool2d(v, 2)),
                               ("bilinear upsample", "aten::upsample_bilinear2d",
                                lambda: F.interpolate(v, scale_factor=2, mode="bilinear", align_corners=False)),
                               ("softmax over C", "aten::softmax", lambda: torch.softmax(v, 1))]:
            with self.subTest(name):
                out, violations, _ = recorded(call)
                holds = out.is_contiguous(memory_format=torch.channels_last)
                self.assertEqual(violations, [] if holds else [op])
                if REFERENCE_BUILD:
                    self.assertFalse(holds, f"{name}: 1.13 returns NCHW here")

    def test_the_rule_says_why_and_what_restores_the_strides(self):
        v = hiding_view(image())
        lgt.clear_report()
        with lgt.guard("record"):
            out = F.avg_pool2d(v, 2)
        violations = lgt.report()["violations"]
        lgt.clear_report()
        if out.is_contiguous(memory_format=torch.channels_last):
            self.skipTest(f"torch {torch.__version__} on {DEVICE.type} keeps channels_last here")
        (v0,) = violations
        self.assertIn("under strides that suggest contiguous_format", v0["rule"])
        self.assertIn("x.to(memory_format=channels_last)", v0["rule"])
        # The advice holds: to() restores the strides where contiguous() returns the view as it is.
        self.assertEqual(v.contiguous(memory_format=torch.channels_last).stride(), v.stride())
        restored = v.to(memory_format=torch.channels_last)
        out, violations, _ = recorded(lambda: F.avg_pool2d(restored, 2))
        self.assertEqual(violations, [])
        self.assertTrue(channels_last(out))

    def test_ops_that_keep_the_data_in_order_are_not_reported(self):
        v = hiding_view(image())
        weight = torch.randn(4, 8, 3, 3, device=DEVICE).contiguous(memory_format=torch.channels_last)
        for name, call in [("add", lambda: v + 1), ("relu", lambda: F.relu(v)),
                           ("conv2d with a channels_last weight", lambda: F.conv2d(v, weight))]:
            with self.subTest(name):
                out, violations, _ = recorded(call)
                self.assertTrue(out.is_contiguous(memory_format=torch.channels_last), out.stride())
                self.assertEqual(violations, [])

    def test_a_full_backward_hook_hides_it_from_the_next_module(self):
        # The hook's view_as rewrites the batch stride of the hooked module's batch-1 output.
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.GroupNorm(2, 8)).to(
            device=DEVICE, memory_format=torch.channels_last)
        model[0].register_full_backward_hook(lambda module, grad_in, grad_out: None)
        x = torch.randn(1, 4, 6, 6, device=DEVICE).contiguous(memory_format=torch.channels_last)
        lgt.clear_report()
        with lgt.guard("record"):
            out = model(x)
        violations = [(v["op"], v["module"]) for v in lgt.report()["violations"]]
        lgt.clear_report()
        self.assertEqual(violations, [] if channels_last(out) else [("aten::group_norm", "1")])
        if REFERENCE_BUILD:
            self.assertFalse(channels_last(out))

    def test_hidden_views_0_leaves_them_out(self):
        v = hiding_view(image())
        settings = os.environ.get("LAYOUTGUARD_OPTIONS", "")
        try:
            lgt.set_options(f"{settings}:hidden_views=0" if settings else "hidden_views=0")
            out, violations, counted = recorded(lambda: F.avg_pool2d(v, 2))
        finally:
            lgt.set_options(settings)
        self.assertEqual(violations, [])
        self.assertIn("aten::avg_pool2d", counted)


if __name__ == "__main__":
    lg_unittest.main()

"""The native guard's settings, outputs and tools on PyTorch programs, and the bad inputs: a
bad LAYOUTGUARD value, a missing suppressions file, a torch the package was not built for,
enabling from many threads at once, and a second copy of the library."""
import contextlib
import importlib.util
import inspect
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest
import zipfile
from xml.etree import ElementTree

import torch

import layoutguard_torch as lgt
import lg_unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.environ["LG_TOOL"]

# A two-layer program with one loss (softmax over C inside module "head") and one kept format.
PROGRAM = """
import torch, sys
class Head(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, 1)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 8, 3, padding=1)
        self.head = Head()
    def forward(self, x):
        return self.head(self.conv(x))
fmt = torch.channels_last if (len(sys.argv) < 2 or sys.argv[1] == "cl") else torch.contiguous_format
net = Net().to(memory_format=fmt)
x = torch.randn(2, 4, 8, 8).contiguous(memory_format=fmt)
net(x).sum().backward()
print("program done")
"""

# The end of a program: one loss (softmax over C), and the count of violations it printed.
SOFTMAX_COUNTED = """torch.softmax(torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last), 1)
print("violations:", len(lgt.report()["violations"]))
"""


def failures_in_threads(target, count):
    """Runs `target` on `count` threads at once; returns the exceptions they raised (a thread's
    own exception is only printed)."""
    failures = []

    def run():
        try:
            target()
        except Exception as e:  # noqa: BLE001 - returned to the test, which fails on any
            failures.append(e)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def torch_version():
    """(major, minor) of the torch under test: "2.11.0+cu130" -> (2, 11)."""
    return tuple(int(part) for part in torch.__version__.split(".")[:2])


def take_contract_findings():
    """The parameters the gradient contract named since the report was last cleared; clears it."""
    found = [v["module"] for v in lgt.report()["violations"] if v["op"] == "autograd::grad_strides"]
    lgt.clear_report()
    return found


def run_program(env_extra, args=(), program=PROGRAM, module_runner=True):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "program.py")
        with open(script, "w") as f:
            f.write(program)
        env = dict(os.environ)
        env.pop("LAYOUTGUARD_OPTIONS", None)
        env.update(env_extra)
        cmd = [sys.executable] + (["-m", "layoutguard_torch"] if module_runner else []) + [script, *args]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


class Outputs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_runner_with_the_mode_off_switches_nothing_on(self):
        probe = PROGRAM + "import layoutguard_torch as lgt\nprint('enabled', lgt.enabled(), lgt.module_path_tracking())\n"
        for value in ("off", "0", ""):
            run = run_program({"LAYOUTGUARD": value}, program=probe)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("enabled False False", run.stdout)
            self.assertNotIn("violation", run.stderr)
        run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": "summary=0"}, program=probe)
        self.assertIn("enabled True True", run.stdout)

    def test_report_file_has_the_native_schema_and_module_path(self):
        path = os.path.join(self.tmp, "report.json")
        run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": f"report={path}:summary=0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(path) as f:
            report = json.load(f)
        (v,) = report["violations"]
        self.assertEqual(v["op"], "aten::softmax")
        self.assertEqual(v["module"], "head")
        self.assertEqual(v["formats_in"], "channels_last")
        self.assertIn("program.py:5 in forward", v["source_location"])
        for key in ("policy", "rule", "signature", "inputs", "outputs", "count", "first_backtrace"):
            self.assertIn(key, v)
        self.assertGreater(report["checked_calls"], 0)
        self.assertTrue(any(o["op"] == "aten::conv2d" for o in report["ops"]))

    def test_paths_and_lines_that_are_not_utf8(self):
        # A directory named in Latin-1: Python holds its name with lone surrogates. The package
        # imports from it and still tells its own frames from the user's, set_options() writes
        # the report there, and a suppressions line in Latin-1 shows its stray byte as \xe9 in
        # the report file, report() and summary().
        latin1 = os.path.join(os.fsencode(self.tmp), b"caf\xe9")
        os.mkdir(latin1)
        os.symlink(os.fsencode(os.path.dirname(os.path.dirname(lgt.__file__))), os.path.join(latin1, b"python"))
        with open(os.path.join(latin1, b"supp.txt"), "wb") as f:
            f.write(b"aten::relu:caf\xe9\n")
        # CPython 3.12 imports no extension module from such a directory (its loader encodes
        # the path strictly): there the package is imported from where it lies.
        program = """import os, sys
if sys.version_info < (3, 12):
    sys.path.insert(0, os.path.join(sys.argv[1], "python"))
import torch, layoutguard_torch as lgt
assert sys.version_info >= (3, 12) or lgt.__file__.startswith(sys.argv[1]), lgt.__file__
lgt.enable("record")
lgt.set_options(f"report={sys.argv[1]}/report.json:suppressions={sys.argv[1]}/supp.txt:summary=0")
x = torch.randn(1, 2, 4, 4).contiguous(memory_format=torch.channels_last)
torch.nn.functional.pad(x, (1, 1, 1, 1), mode="circular")
report = lgt.report()
print(report["violations"][0]["source_location"])
print(report["suppressions"][0]["module"])
print("caf\\\\xe9" in lgt.summary())
"""
        run = run_program({}, args=[latin1], program=program, module_runner=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        location, module, in_summary = run.stdout.splitlines()
        line = program.splitlines().index("torch.nn.functional.pad(x, (1, 1, 1, 1), mode=\"circular\")") + 1
        self.assertRegex(location, rf"program\.py:{line} in <module>$")
        self.assertEqual((module, in_summary), ("caf\\xe9", "True"))
        with open(os.path.join(latin1, b"report.json")) as f:
            report = json.load(f)
        self.assertEqual(report["suppressions"][0]["module"], "caf\\xe9")
        self.assertEqual(report["violations"][0]["op"], "aten::pad")

    def test_nested_0_sees_user_level_calls_only(self):
        reports = {}
        for nested in ("1", "0"):
            path = os.path.join(self.tmp, f"report-{nested}.json")
            run = run_program({"LAYOUTGUARD": "record",
                               "LAYOUTGUARD_OPTIONS": f"nested={nested}:report={path}:summary=0"})
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(path) as f:
                reports[nested] = json.load(f)
        traced, alone = reports["1"], reports["0"]
        (v,) = alone["violations"]
        self.assertEqual((v["op"], v["module"]), ("aten::softmax", "head"))
        self.assertNotIn("root_cause", v)  # the nested aten::_softmax ran unseen
        self.assertEqual(traced["violations"][0]["root_cause"], "aten::_softmax")
        # nested=1 also hands the guard the copies inside user-level ops (the conversion ledger).
        self.assertLess(alone["checked_calls"], traced["checked_calls"])
        ops = lambda r: {o["op"] for o in r["ops"] if o["calls"]}
        self.assertLessEqual(ops(alone), ops(traced))
        self.assertIn("aten::conv2d", ops(alone))

    def test_ops_without_a_tensor_argument_skip_the_bridge(self):
        # Factories called by the user or inside kernels pass the key by (a fall-through
        # kernel): they cannot lose a format. Those that take a tensor (new_zeros, empty_like,
        # a root cause when nested) are still intercepted.
        x = torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)
        lgt.clear_report()
        with lgt.guard("record"):
            torch.zeros(2, 4, 6, 6)
            torch.empty(3)
            x.new_zeros(2, 4, 6, 6)
            torch.add(x, x)
        ops = {o["op"] for o in lgt.report()["ops"]}
        lgt.clear_report()
        self.assertIn("aten::add", ops)
        self.assertIn("aten::new_zeros", ops)
        self.assertNotIn("aten::zeros", ops)
        self.assertNotIn("aten::empty", ops)

    def test_views_and_in_place_ops_with_kernels_of_their_own_skip_the_bridge(self):
        # Their results alias self: they cannot change a format the caller did not ask for.
        # Ops composed of other ops (reshape, flatten) and those told a memory_format are seen.
        x = torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)
        lgt.clear_report()
        with lgt.guard("record"):
            y = x.detach().permute(0, 2, 3, 1).permute(0, 3, 1, 2)[:, 1:3]
            y.relu_().add_(1).mul_(2)
            x.reshape(2, 4, 36)
            x.flatten(1)
            x.contiguous()
            y.clone()
        ops = {o["op"] for o in lgt.report()["ops"]}
        lgt.clear_report()
        for seen in ("aten::reshape", "aten::flatten", "aten::contiguous", "aten::clone"):
            self.assertIn(seen, ops)
        for unseen in ("aten::detach", "aten::permute", "aten::slice", "aten::relu_", "aten::add_", "aten::mul_"):
            self.assertNotIn(unseen, ops)

    def test_backward_ops_are_reported_in_the_module_that_made_their_node(self):
        # The forward site of each node is the module path in force when it was made, kept
        # from the module stack's changes, also for nodes of ops the bridge never sees.
        import snippets
        losing = [s for s in snippets.SNIPPETS if s.backward_only and s.loses() == "backward"]
        if not losing:
            self.skipTest(f"no snippet loses the format in backward only on torch {torch.__version__}")
        snippet = losing[0]

        class Inner(torch.nn.Module):
            def __init__(self, loses):
                super().__init__()
                self.loses = loses
                self.p, self.q = torch.nn.Identity(), torch.nn.Identity()

            def forward(self, x):
                y = (x * 2).add_(1).view(x.shape)  # the nodes of an in-place op and a view between
                if self.loses == "switching on here":  # the thread was off while the path grew
                    with lgt.guard("record"):
                        return snippet.forward(y)
                if self.loses == "after its children":  # back from block.1.p and block.1.q
                    y = self.q(self.p(y) * 1) * 1
                return snippet.forward(y) if self.loses else y

        class Outer(torch.nn.Module):
            def __init__(self, loses):
                super().__init__()
                self.first = torch.nn.Identity()
                self.block = torch.nn.Sequential(torch.nn.Identity(), Inner(loses))

            def forward(self, x):
                return self.block(self.first(x))

        for inside, expected in ((True, "block.1"), (False, ""), ("switching on here", "block.1"),
                                 ("after its children", "block.1")):
            lgt.clear_report()
            with lgt.guard("off" if inside == "switching on here" else "record"):
                y = Outer(inside)(snippets.image(2, 8, 6, 6))
            with lgt.guard("record"):
                snippets.backward_of(y if inside else snippet.forward(y))
            found = [v for v in lgt.report()["violations"] if v["op"] == snippet.op]
            lgt.clear_report()
            self.assertTrue(found, snippet.name)
            self.assertEqual(found[0].get("module", ""), expected, snippet.name)
            self.assertTrue(found[0].get("autograd_node"))

    def test_checkpointed_forward_keeps_its_module_paths(self):
        # Activation checkpointing runs the forward again inside a backward node: a module
        # itself (reentrant or not) or a function that calls modules, each called outside every
        # module call. Its ops are reported in the modules that run them, under the paths they
        # have in the model; a memory_format it asks for is still the user's; and a parameter
        # inside it is checked once, after the outermost backward.
        import torch.utils.checkpoint as checkpoint

        class Head(torch.nn.Module):
            def forward(self, x):
                return torch.softmax(x, 1)  # loses channels_last

        class AskedFor(torch.nn.Module):  # conversions the user asks for: no loss, also when recomputed
            def forward(self, y):
                return y.contiguous(memory_format=torch.channels_last).contiguous(memory_format=torch.contiguous_format)

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
                self.head = Head()
                self.asked_for = AskedFor()
                # Saves its input: torch 2 stops a recomputation once the last tensor saved in
                # it is made again, from inside that op, so the softmax must not be the last.
                self.out = torch.nn.Conv2d(8, 8, 1)

            def forward(self, x):
                y = self.head(self.conv(x))
                return self.out(self.asked_for(y))

        class Net(torch.nn.Module):
            def __init__(self, form):
                super().__init__()
                self.stem = torch.nn.Conv2d(4, 8, 1)
                self.block = Block()
                self.form = form

            def forward(self, x):
                x = self.stem(x)
                if self.form == "function":
                    block = self.block
                    run = lambda t: block.out(block.asked_for(block.head(block.conv(t))))
                    return checkpoint.checkpoint(run, x, use_reentrant=False)
                return checkpoint.checkpoint(self.block, x, use_reentrant=self.form == "reentrant")

        for form in ("reentrant", "not reentrant", "function"):
            with self.subTest(form=form):
                torch.manual_seed(0)
                net = Net(form).to(memory_format=torch.channels_last)
                net.block.conv.weight.grad = torch.zeros(net.block.conv.weight.shape)  # contiguous
                x = torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)
                with lgt.guard("record"), torch.no_grad():
                    net.block(net.stem(x))  # called alone once: an outermost module too
                lgt.clear_report()
                with lgt.guard("record"):
                    net(x.requires_grad_(form == "reentrant")).sum().backward()
                found = lgt.report()["violations"]
                lgt.clear_report()
                softmax = [v for v in found if v["op"] == "aten::softmax"]
                # In the forward, and again where it is recomputed inside a node: the same forward
                # op at the same line, one record counted twice, no backward op of the node.
                self.assertEqual([(v["module"], v["count"]) for v in softmax], [("block.head", 2)], found)
                self.assertNotIn("autograd_node", softmax[0], found)
                self.assertNotIn("aten::contiguous", [v["op"] for v in found])
                contract = [(v["module"], v["count"]) for v in found if v["op"] == "autograd::grad_strides"]
                self.assertEqual(contract, [("block.conv.weight", 1)])
                for v in found:
                    self.assertTrue(v["module"].startswith("block."), v)

    def test_convolutions_with_unconverted_weights_are_listed(self):
        # A channels_last input meets an NCHW weight: PyTorch keeps the format (no violation)
        # and converts the weight at every call. The report lists the module, with or without
        # an events file (which hands every call to the guard in full).
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Conv2d(4, 4, 3))
        net[1].to(memory_format=torch.channels_last)
        x = torch.randn(1, 3, 8, 8).contiguous(memory_format=torch.channels_last)
        events = os.path.join(self.tmp, "events.jsonl")
        try:
            for options in ("summary=0", f"summary=0:events={events}"):
                with self.subTest(options=options):
                    lgt.set_options(options)
                    lgt.clear_report()
                    with lgt.guard("record"):
                        net(x)
                        net(x)
                    report = lgt.report()
                    self.assertEqual(report["violations"], [])
                    self.assertEqual([(w["op"], w["module"], w["weight_format"], w["count"])
                                      for w in report["unconverted_weights"]],
                                     [("aten::conv2d", "0", "contiguous", 2)], report["unconverted_weights"])
        finally:
            lgt.set_options(os.environ.get("LAYOUTGUARD_OPTIONS", ""))

    def test_a_format_the_programs_code_asks_for_inside_a_node_is_its_choice(self):
        # Inside a backward node, outside every module: a checkpointed function run again, a
        # Python autograd Function's backward, a tensor hook. A memory_format that code asks
        # for is a conversion, as it is in the forward. The softmax's loss is still one: in
        # the forward, and again as the node's (code outside every module counts as the node's).
        import torch.utils.checkpoint as checkpoint
        conv = torch.nn.Conv2d(3, 4, 3).to(memory_format=torch.channels_last)

        def part(x):
            y = conv(x).contiguous(memory_format=torch.contiguous_format)
            # relu saves the last tensor: torch 2 stops the recomputation inside it, not the softmax
            return (torch.softmax(conv(x), 1) * y).relu()

        class ToNCHW(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return (g * 2).contiguous()

        x = torch.randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last)
        for form in ("reentrant", "not reentrant", "function", "hook"):
            with self.subTest(form=form):
                lgt.clear_report()
                t = x.clone().requires_grad_()
                with lgt.guard("record"):
                    if form == "function":
                        out = conv(ToNCHW.apply(t))
                    elif form == "hook":  # the gradient that reaches t, conv's channels_last one
                        t.register_hook(lambda g: g.contiguous())
                        out = conv(t)
                    else:
                        out = checkpoint.checkpoint(part, t, use_reentrant=form == "reentrant")
                    out.sum().backward()
                report = lgt.report()
                ops = [v["op"] for v in report["violations"]]
                self.assertEqual(ops, [] if form in ("function", "hook") else ["aten::softmax"] * 2, report)
                calls = {c["op"]: c for c in report["ops"]}
                self.assertGreaterEqual(calls["aten::contiguous"]["conversions"], 1, report)

    def test_a_backward_pass_inside_recomputed_forward_code_is_the_nodes_own(self):
        # Forward code that computes a gradient itself (a force from an energy) starts a
        # backward pass of its own; run again inside a checkpoint's node, that pass's nodes
        # are still derivative formulas: their format requests are checked as Preserve.
        import snippets
        import torch.utils.checkpoint as checkpoint
        group_norm = next((s for s in snippets.SNIPPETS if s.name == "group_norm backward"), None)
        if group_norm is None:
            self.skipTest(f"group_norm's backward of a channels_last tensor crashes plain torch {torch.__version__}")
        if group_norm.loses() != "backward":
            self.skipTest(f"group_norm's backward keeps channels_last on torch {torch.__version__}")

        class Force(torch.nn.Module):
            def forward(self, x):
                with torch.enable_grad():
                    t = x.detach().requires_grad_()
                    (g,) = torch.autograd.grad(torch.nn.functional.group_norm(t, 2).pow(2).sum(), t)
                return x * g  # saves x and g: the backward recomputes this module

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = torch.nn.Conv2d(4, 8, 1)
                self.force = Force()

            def forward(self, x):
                return checkpoint.checkpoint(self.force, self.stem(x), use_reentrant=True)

        def losses():
            found = [v for v in lgt.report()["violations"] if v["op"] == group_norm.op]
            lgt.clear_report()
            self.assertEqual({v["module"] for v in found}, {"force"}, found)
            return sum(v["count"] for v in found)

        net = Net().to(memory_format=torch.channels_last)
        x = torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)
        lgt.clear_report()
        with lgt.guard("record"):
            y = net(x)
        in_forward = losses()
        self.assertGreater(in_forward, 0)
        with lgt.guard("record"):
            y.sum().backward()
        self.assertEqual(losses(), in_forward)  # the recomputation's pass, as the forward's

    def test_double_backward_nodes_are_reported_in_the_module_that_made_them(self):
        # A gradient penalty differentiates the gradient (create_graph=True): the first pass's
        # nodes make the second pass's nodes, which get the module of the node that made them,
        # not the module path of the autograd.grad() call.
        class Critic(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
                self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1, stride=2)
                self.fc = torch.nn.Linear(8, 1)

            def forward(self, x):
                x = torch.nn.functional.leaky_relu(self.c2(torch.nn.functional.leaky_relu(self.c1(x), 0.2)), 0.2)
                return self.fc(torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))

        class Step(torch.nn.Module):  # the penalty's passes run inside a module of their own
            def forward(self, critic, x, how):
                out = critic(x)
                if how == "grad":
                    (g,) = torch.autograd.grad(out.sum(), x, create_graph=True)
                else:
                    out.sum().backward(create_graph=True)
                    g = x.grad
                return out.mean() + ((g.flatten(1).norm(dim=1) - 1) ** 2).mean()

        for how in ("grad", "backward"):
            with self.subTest(how=how):
                torch.manual_seed(0)
                critic = Critic().to(memory_format=torch.channels_last)
                x = torch.randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last).requires_grad_()
                lgt.clear_report()
                with lgt.guard("record"):
                    Step()(critic, x, how).backward()
                found = [v for v in lgt.report()["violations"]
                         if v.get("autograd_node", "").endswith("BackwardBackward0")]
                lgt.clear_report()
                if not found and torch_version() > (2, 11):
                    self.skipTest(f"no double-backward op loses the format on torch {torch.__version__}")
                # _convolution_double_backward returns contiguous gradients on the CPU. The
                # critic is called by a module that does not hold it: its class name.
                self.assertEqual(sorted({v["module"] for v in found}), ["Critic.c1", "Critic.c2"], found)

    def test_gradient_contract_sees_a_replaced_parameter(self):
        # The contract checks each root's parameters after backward; torch 2.x keeps the list
        # between checks until a parameter or module is registered. A parameter replaced after
        # the first check, whose .grad then comes back contiguous, is named.
        net = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, padding=1)).to(memory_format=torch.channels_last)
        x = torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)

        def contract_violations():
            return [v for v in lgt.report()["violations"] if v["op"] == "autograd::grad_strides"]

        lgt.clear_report()
        with lgt.guard("record"):
            net(x).sum().backward()
            self.assertEqual(contract_violations(), [])
            net[0].weight = torch.nn.Parameter(net[0].weight.detach().clone())
            net[0].weight.grad = torch.zeros(net[0].weight.shape)  # contiguous: accumulated into
            net(x).sum().backward()
        found = contract_violations()
        lgt.clear_report()
        self.assertEqual([v["module"] for v in found], ["0.weight"])

    def test_gradient_contract_covers_modules_named_by_their_class(self):
        # A module called by one whose tree does not hold it (passed in as an argument) is
        # named by its class there, and is the top of a tree of its own for the contract.
        class Step(torch.nn.Module):
            def forward(self, critic, x):
                return critic(x)

        critic = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3)).to(memory_format=torch.channels_last)
        critic[0].weight.grad = torch.zeros(critic[0].weight.shape)  # contiguous, the weight not
        x = torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)
        lgt.clear_report()
        with lgt.guard("record"):
            Step()(critic, x).sum().backward()
        self.assertEqual(take_contract_findings(), ["0.weight"])

    def test_gradient_contract_says_when_only_size_one_dims_differ(self):
        # A 1x1 convolution's weight is both contiguous and channels_last: a contiguous .grad
        # holds its elements in the same order, yet DDP compares the strides and warns. The
        # report is kept, and says so; a 3x3 weight's says nothing of the kind.
        net = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 1), torch.nn.Conv2d(8, 8, 3))
        net = net.to(memory_format=torch.channels_last)
        for conv in net:
            conv.weight.grad = torch.zeros(conv.weight.shape)
        lgt.clear_report()
        with lgt.guard("record"):
            lgt.check_gradients(net)
        rules = {v["module"]: v["rule"] for v in lgt.report()["violations"] if v["op"] == "autograd::grad_strides"}
        lgt.clear_report()
        self.assertEqual(sorted(rules), ["0.weight", "1.weight"])
        self.assertIn("only dims of size 1 differ", rules["0.weight"])
        self.assertNotIn("size 1", rules["1.weight"])

    def test_gradient_contract_names_the_line_that_checked(self):
        # After backward() the report is at the backward() line; on demand at the call's. A
        # .grad kept from before accumulates in place, so its channels-last strides stay.
        net = torch.nn.Conv2d(4, 8, 3)
        net.weight.grad = torch.zeros(net.weight.shape).contiguous(memory_format=torch.channels_last)
        test = "in test_gradient_contract_names_the_line_that_checked"
        lgt.clear_report()
        with lgt.guard("record"):
            net(torch.randn(1, 4, 8, 8)).sum().backward(); line = inspect.currentframe().f_lineno  # noqa: E702
            sites = [v["source_location"] for v in lgt.report()["violations"] if v["op"] == "autograd::grad_strides"]
            self.assertEqual(sites, [f"{__file__}:{line} {test}"])
            lgt.clear_report()
            lgt.check_gradients(net); line = inspect.currentframe().f_lineno  # noqa: E702
            sites = [v["source_location"] for v in lgt.report()["violations"] if v["op"] == "autograd::grad_strides"]
            self.assertEqual(sites, [f"{__file__}:{line} {test}"])
        lgt.clear_report()

    def test_gradient_contract_on_demand_takes_a_module_or_modules(self):
        class Net(torch.nn.Module):  # not iterable, as most models are not
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(4, 8, 1)

        net = Net().to(memory_format=torch.channels_last)
        net.conv.weight.grad = torch.zeros(net.conv.weight.shape)  # contiguous, the weight not

        lgt.clear_report()
        with lgt.guard("record"):
            lgt.check_gradients(net)
            self.assertEqual(take_contract_findings(), ["conv.weight"])
            # A module inside another one given is checked as part of it, under its name there.
            lgt.check_gradients([net.conv, net])
            self.assertEqual(take_contract_findings(), ["conv.weight"])
            lgt.check_gradients([net.conv])
            self.assertEqual(take_contract_findings(), ["weight"])
            # Names and order as named_parameters() gives them: nested containers, a module
            # reached twice and a parameter shared by two modules count once, under the first name.
            tied = torch.nn.Conv2d(8, 8, 1).to(memory_format=torch.channels_last)
            tied.weight.grad = torch.zeros(tied.weight.shape)
            other = torch.nn.Conv2d(8, 8, 1)
            other.weight = tied.weight
            outer = torch.nn.Sequential(net, torch.nn.Sequential(tied, net.conv), torch.nn.ModuleDict({"o": other}))
            outer[2]["o"].bias.grad = torch.zeros(8)  # same strides: no finding
            expected = [name for name, p in outer.named_parameters()
                        if p.grad is not None and p.grad.stride() != p.stride()]
            self.assertEqual(expected, ["0.conv.weight", "1.0.weight"])
            lgt.check_gradients(outer)
            self.assertEqual(take_contract_findings(), expected)
            for bad in (42, [net, "conv"]):
                with self.assertRaises(TypeError) as caught:
                    lgt.check_gradients(bad)
                self.assertIn("needs torch.nn.Module objects", str(caught.exception))
            # Iterables of characters, bytes or keys are refused whole, named as passed.
            for bad, shown in (("", "got str ''"), (b"ab", "got bytes b'ab'"), ({"a": net}, "got dict {'a': ")):
                with self.assertRaises(TypeError) as caught:
                    lgt.check_gradients(bad)
                self.assertIn(f"needs a torch.nn.Module or an iterable of them, {shown}", str(caught.exception))
            # A parameter without elements has no layout to keep.
            empty = torch.nn.Module()
            empty.p = torch.nn.Parameter(torch.empty(0, 3, 4, 4).contiguous(memory_format=torch.channels_last))
            empty.p.grad = torch.zeros(0, 3, 4, 4)
            self.assertNotEqual(empty.p.stride(), empty.p.grad.stride())
            lgt.check_gradients(empty)
            # An endless iterable fails at its first item that is not a module, without
            # listing it first.
            with self.assertRaises(TypeError) as caught:
                lgt.check_gradients(itertools.chain([net], itertools.count()))
            self.assertIn("got int", str(caught.exception))
            self.assertEqual(take_contract_findings(), [])
        # In throw mode the contract raises the package's LayoutViolationError, on demand and
        # after backward(), as an op's violation does.
        with lgt.guard("throw"):
            with self.assertRaises(lgt.LayoutViolationError) as caught:
                lgt.check_gradients(net)
            self.assertIn("autograd::grad_strides", str(caught.exception))
            with self.assertRaises(lgt.LayoutViolationError):
                net.conv(torch.randn(1, 4, 4, 4)).sum().backward()
        lgt.clear_report()

    def test_gradient_contract_reads_torchscript_modules(self):
        # A scripted module keeps its parameters in C++, not in the instance dicts the walk
        # reads: its named_parameters() lists them, as the root and as a child alike. The
        # contract after backward used to raise TypeError at the user's backward() there.
        scripted = torch.jit.script(torch.nn.Sequential(torch.nn.Conv2d(4, 8, 1)).to(memory_format=torch.channels_last))
        outer = torch.nn.Sequential(scripted)
        x = torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)

        lgt.clear_report()
        with lgt.guard("record"):
            scripted(x).sum().backward()
            outer(x).sum().backward()
            self.assertEqual(take_contract_findings(), [])
            weight = getattr(scripted, "0").weight
            weight.grad = torch.zeros(weight.shape)  # contiguous, the weight channels_last
            lgt.check_gradients(scripted)
            self.assertEqual(take_contract_findings(), ["0.weight"])
            lgt.check_gradients(outer)
            self.assertEqual(take_contract_findings(), ["0.0.weight"])
            # Both stay roots of the automatic contract while alive: leave nothing for later tests.
            weight.grad = None

    def test_gradient_contract_keeps_its_roots_by_identity(self):
        # The outermost modules called are the contract's roots: a module class without a hash
        # (__eq__ alone) is called as in plain PyTorch, and two modules that compare equal are
        # two roots, each checked after backward().
        class Unhashable(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(2, 2, 3)

            def __eq__(self, other):
                return isinstance(other, Unhashable)

            def forward(self, x):
                return self.conv(x)

        a, b = Unhashable(), Unhashable()
        self.assertRaises(TypeError, hash, a)
        x = torch.randn(1, 2, 6, 6)
        lgt.clear_report()
        with lgt.guard("record"):
            a(x)
            b(x)
            for m in (a, b):
                m.conv.weight.grad = torch.zeros(m.conv.weight.shape).contiguous(memory_format=torch.channels_last)
            a(x).sum().backward()  # a's gradient accumulates in place: both keep their strides
        # One record, at the backward() line, counted for each root.
        found = [(v["module"], v["count"]) for v in lgt.report()["violations"] if v["op"] == "autograd::grad_strides"]
        lgt.clear_report()
        self.assertEqual(found, [("conv.weight", 2)])
        a.conv.weight.grad = b.conv.weight.grad = None  # both stay roots while alive

    def test_gradient_contract_walks_trees_deeper_than_the_stack(self):
        # The walks are loops: a chain of modules deeper than the C stack would hold (PyTorch's
        # own walks raise RecursionError on it) is walked to its end.
        depth = 100000
        leaf = torch.nn.Conv2d(2, 2, 3).to(memory_format=torch.channels_last)
        leaf.weight.grad = torch.zeros(leaf.weight.shape)
        top = leaf
        for _ in range(depth):
            parent = torch.nn.Module()
            parent._modules["c"] = top
            top = parent
        with self.assertRaises(RecursionError):
            list(top.named_parameters())
        lgt.clear_report()
        with lgt.guard("record"):
            lgt.check_gradients(top)
        self.assertEqual(take_contract_findings(), ["c." * depth + "weight"])

    def test_gradient_contract_of_roots_that_hold_one_another(self):
        # A module that keeps its parent as a child: of two roots that hold each other the
        # first is walked, whatever other roots there are.
        class Child(torch.nn.Module):
            def __init__(self, parent):
                super().__init__()
                self.parent = parent

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(2, 2, 3).to(memory_format=torch.channels_last)
                self.conv.weight.grad = torch.zeros(self.conv.weight.shape)
                self.child = Child(self)

        net, other = Net(), torch.nn.Linear(1, 1)
        lgt.clear_report()
        with lgt.guard("record"):
            for roots, name in (([net], "conv.weight"), ([net, net.child], "conv.weight"),
                                ([net, net.child, other], "conv.weight"),
                                ([other, net.child, net], "parent.conv.weight")):
                lgt.check_gradients(roots)
                self.assertEqual(take_contract_findings(), [name], roots)

    def test_gradient_contract_names_parameters_as_named_parameters_does(self):
        # A _modules key may be empty (set in the dict directly): the name is the one
        # named_parameters() gives, which adds no dot at the top and a second one below.
        def holder(key, module):
            outer = torch.nn.Module()
            outer._modules[key] = module
            return outer

        for build in (lambda conv: holder("", conv), lambda conv: holder("a", holder("", conv)),
                      lambda conv: holder("", holder("b", conv))):
            conv = torch.nn.Conv2d(2, 2, 3).to(memory_format=torch.channels_last)
            conv.weight.grad = torch.zeros(conv.weight.shape)  # contiguous, the weight not
            root = build(conv)
            expected = [name for name, p in root.named_parameters() if p is conv.weight]
            lgt.clear_report()
            with lgt.guard("record"):
                lgt.check_gradients(root)
            self.assertEqual(take_contract_findings(), expected)

    def test_tensors_of_a_rank_beyond_the_guard_pass_unchecked(self):
        # torch allows 64 dims, layoutguard 25: a copy between two dim orders of rank 32 (the
        # kind the ledger counts) runs, and is neither a conversion nor an error.
        x = torch.randn([1] * 30 + [2, 3]).permute(*range(31, -1, -1))
        lgt.clear_report()
        with lgt.guard("throw"):
            y = x.contiguous()
            z = torch.zeros([3, 2] + [1] * 30).copy_(x)
        self.assertTrue(torch.equal(y, x) and torch.equal(z, x))
        self.assertEqual(lgt.report()["conversions"], [])
        lgt.clear_report()

    def test_report_placeholder_per_process(self):
        path = os.path.join(self.tmp, "report-%p.json")
        run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": f"report={path}:summary=0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        written = os.listdir(self.tmp)
        self.assertEqual(len(written), 1, written)
        self.assertRegex(written[0], r"^report-\d+\.json$")

    def test_suppressions_silence_and_baseline_round_trip(self):
        baseline = os.path.join(self.tmp, "baseline.txt")
        run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": f"write_suppressions={baseline}:summary=0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(baseline) as f:
            lines = [l for l in f.read().splitlines() if l and not l.startswith("#")]
        self.assertEqual(lines, ["aten::softmax:head"])
        run = run_program({"LAYOUTGUARD": "throw", "LAYOUTGUARD_OPTIONS": f"suppressions={baseline}"})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("program done", run.stdout)

    def test_a_loss_outside_every_module_is_keyed_by_the_python_function(self):
        # op:(top)@function lines match the Python frames the report shows, not the C++
        # frames under the interpreter; the baseline writes such a line per calling function.
        program = """
import torch
def preprocess(x):
    return torch.cumsum(x, 1)
def postprocess(x):
    return torch.cumsum(x, 1)
x = torch.randn(2, 4, 3, 3).contiguous(memory_format=torch.channels_last)
preprocess(x)
postprocess(x)
print("program done")
"""
        baseline = os.path.join(self.tmp, "baseline.txt")
        run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": f"write_suppressions={baseline}:summary=0"},
                          program=program)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(baseline) as f:
            lines = [l for l in f.read().splitlines() if l and not l.startswith("#")]
        self.assertEqual(lines, ["aten::cumsum:(top)@postprocess", "aten::cumsum:(top)@preprocess"])
        one = os.path.join(self.tmp, "one.txt")
        for line, reported in [("aten::cumsum:(top)@preprocess", "postprocess"),
                               ("aten::cumsum@post*", "preprocess"), ("aten::cumsum:(top)@at::*", None)]:
            with self.subTest(line):
                with open(one, "w") as f:
                    f.write(line + "\n")
                run = run_program({"LAYOUTGUARD": "throw", "LAYOUTGUARD_OPTIONS": f"suppressions={one}"}, program=program)
                if reported is None:  # libtorch's C++ frames are not the program's
                    self.assertIn("LayoutViolationError", run.stderr)
                    self.assertIn(" in preprocess", run.stderr)
                    continue
                self.assertNotEqual(run.returncode, 0)
                self.assertIn(f" in {reported}\n", run.stderr)
                self.assertIn(f"suppressions line that silences it here: aten::cumsum:(top)@{reported}", run.stderr)

    def test_a_function_line_matches_the_call_site_and_dots_any_frame(self):
        # The baseline of top-level code is keyed `@<module>`, a frame of every Python stack: it
        # must not silence a new loss in a function. `@...glob` matches any frame of the stack.
        program = """
import sys, torch
def shift(x):
    return torch.cumsum(x, 1)
def preprocess(x):
    return shift(x)
x = torch.randn(2, 4, 3, 3).contiguous(memory_format=torch.channels_last)
torch.cumsum(x, 1)
if len(sys.argv) > 1:
    preprocess(x)
print("program done")
"""
        baseline = os.path.join(self.tmp, "baseline.txt")
        run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": f"write_suppressions={baseline}:summary=0"},
                          program=program)
        with open(baseline) as f:
            self.assertEqual([l for l in f.read().splitlines() if l and not l.startswith("#")],
                             ["aten::cumsum:(top)@<module>"])
        run = run_program({"LAYOUTGUARD": "throw", "LAYOUTGUARD_OPTIONS": f"suppressions={baseline}"}, program=program)
        self.assertEqual(run.returncode, 0, run.stderr)
        run = run_program({"LAYOUTGUARD": "throw", "LAYOUTGUARD_OPTIONS": f"suppressions={baseline}"}, ("new",),
                          program=program)
        self.assertIn("suppressions line that silences it here: aten::cumsum:(top)@shift", run.stderr)
        one = os.path.join(self.tmp, "one.txt")
        for line, silenced in [("aten::cumsum:(top)@preprocess", False), ("aten::cumsum:(top)@...preprocess", True),
                               ("aten::cumsum:(top)@...<module>", True)]:
            with self.subTest(line):
                with open(one, "w") as f:
                    f.write(f"aten::cumsum:(top)@<module>\n{line}\n")
                run = run_program({"LAYOUTGUARD": "throw", "LAYOUTGUARD_OPTIONS": f"suppressions={one}"}, ("new",),
                                  program=program)
                self.assertEqual(run.returncode == 0, silenced, run.stderr)

    def test_allow_and_min_bytes(self):
        run = run_program({"LAYOUTGUARD": "throw", "LAYOUTGUARD_OPTIONS": "allow=aten::softmax"})
        self.assertEqual(run.returncode, 0, run.stderr)
        run = run_program({"LAYOUTGUARD": "throw", "LAYOUTGUARD_OPTIONS": "min_bytes=1000000"})
        self.assertEqual(run.returncode, 0, run.stderr)
        run = run_program({"LAYOUTGUARD": "throw", "LAYOUTGUARD_OPTIONS": "min_bytes=16"})
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("LayoutViolationError", run.stderr)
        self.assertIn("[layoutguard] aten::softmax lost channels_last", run.stderr)
        self.assertIn("module: head", run.stderr)
        # A name that no op checked in the run answers to is listed (misspelt: it silences nothing).
        run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": "allow=softmax,aten::sofmax"})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("violation: aten::softmax", run.stderr)
        self.assertIn("  allow=aten::sofmax names no op checked in this run (misspelt? it silences nothing)\n",
                      run.stderr)
        self.assertNotIn("allow=softmax names", run.stderr)

    def test_max_reports_and_help(self):
        run = run_program({"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": "max_reports=0:help=1:summary=0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("aten::softmax lost", run.stderr)
        self.assertIn("max_reports=0 distinct violations logged", run.stderr)
        # help=1's table: each setting with its value and where it came from.
        self.assertIn("layoutguard settings (value [source]: meaning)\n  LAYOUTGUARD = warn [environment]:", run.stderr)
        self.assertIn("  max_reports = 0 [environment]:", run.stderr)
        self.assertIn("  nested = 1 [default]:", run.stderr)

    def test_log_path_backtrace_and_ambiguous(self):
        # log_path: warn mode's reports go to the file, not to stderr.
        log = os.path.join(self.tmp, "lg.log")
        run = run_program({"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": f"log_path={log}:summary=0"})
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("aten::softmax lost", run.stderr)
        with open(log) as f:
            logged = f.read()
        self.assertIn("aten::softmax lost channels_last", logged)
        self.assertIn("module: head", logged)
        # backtrace=0: the report without its stack trace.
        for value, traced in (("1", True), ("0", False)):
            run = run_program({"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": f"backtrace={value}:summary=0"})
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("aten::softmax lost channels_last", run.stderr)
            self.assertEqual("stack trace (most recent call first):" in run.stderr, traced, run.stderr)
        # ambiguous: a 1-channel tensor with channels-last strides is also contiguous; `check`
        # judges it by its suggested format (channels_last), `skip` (the default) never.
        program = ("import torch\n"
                   "x = torch.randn(2, 4, 4, 1).permute(0, 3, 1, 2)\n"
                   "x.repeat(1, 3, 1, 1)\n")
        for value, flagged in (("skip", False), ("check", True)):
            run = run_program({"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": f"ambiguous={value}:summary=0"},
                              program=program)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual("aten::repeat lost channels_last: output 0 is contiguous but input 0 is channels_last "
                             "(ambiguous: also contiguous)" in run.stderr, flagged, run.stderr)

    def test_events_and_diff_of_two_runs(self):
        a, b = os.path.join(self.tmp, "cl.jsonl"), os.path.join(self.tmp, "cf.jsonl")
        self.assertEqual(run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": f"events={a}:summary=0"},
                                     ["cl"]).returncode, 0)
        self.assertEqual(run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": f"events={b}:summary=0"},
                                     ["cf"]).returncode, 0)
        with open(a) as f:
            first = json.loads(f.readline())
        self.assertTrue(first["op"].startswith("aten::"), first)
        same = subprocess.run([TOOL, "diff", a, a], capture_output=True, text=True)
        self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
        differ = subprocess.run([TOOL, "diff", a, b], capture_output=True, text=True)
        self.assertEqual(differ.returncode, 1, differ.stdout + differ.stderr)
        self.assertIn("aten::convolution", differ.stdout)


class BadInput(unittest.TestCase):
    def dangling_log(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        link = os.path.join(tmp, "lg.log")
        os.symlink(os.path.join(tmp, "missing", "lg.log"), link)
        return link

    def test_unknown_mode_is_a_config_error_at_the_first_op(self):
        # The native guard's text, raised as lgt.ConfigError (also a RuntimeError, as every
        # error of an op) by the op that meets it: a bad value by the program's first op
        # (converting the net), a log file that cannot be opened by the first warning (the
        # softmax in `head`). The traceback passes through those lines, not through the
        # package's import.
        self.assertTrue(issubclass(lgt.ConfigError, RuntimeError) and issubclass(lgt.ConfigError, ValueError))
        lines = PROGRAM.splitlines()
        line_of = lambda code: str(1 + next(i for i, l in enumerate(lines) if l.strip() == code))
        first_op = [line_of("net = Net().to(memory_format=fmt)")]
        first_loss = [line_of(code) for code in ("net(x).sum().backward()", "return self.head(self.conv(x))",
                                                 "return torch.softmax(x, 1)")]
        log = self.dangling_log()
        # A log whose directory the program replaces by a file after its first op: the path
        # passed the settings' check, and opening it at the first warning fails.
        doomed = tempfile.mkdtemp()
        self.addCleanup(lambda: os.remove(doomed) if os.path.isfile(doomed) else shutil.rmtree(doomed, True))
        removing = PROGRAM.replace(
            "net = Net().to(memory_format=fmt)\n",
            f"net = Net().to(memory_format=fmt)\nos.rmdir({doomed!r}); open({doomed!r}, 'w').close()\n").replace(
                "import torch", "import os, torch", 1)
        for env, text, where, program in [
                ({"LAYOUTGUARD": "loud"},
                 "LAYOUTGUARD='loud' is not a mode; allowed values: off, warn, throw, record, 1 (= throw), 0 (= off)",
                 first_op, PROGRAM),
                ({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": "nosuch=1"},
                 "LAYOUTGUARD_OPTIONS: unknown key 'nosuch'; allowed keys: ", first_op, PROGRAM),
                # A link into a missing directory is checked where it leads, with the settings.
                ({"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": f"log_path={log}"},
                 f"LAYOUTGUARD_OPTIONS: key 'log_path' got '{log}' ({os.path.dirname(log)}/missing/lg.log: its "
                 "directory does not exist)", first_op, PROGRAM),
                ({"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": f"log_path={doomed}/lg.log"},
                 f"LAYOUTGUARD_OPTIONS: key 'log_path' got '{doomed}/lg.log', which cannot be opened",
                 [str(1 + removing.splitlines().index(line)) for line in
                  (lines[int(n) - 1] for n in first_loss)], removing)]:
            with self.subTest(**env):
                run = run_program(env, program=program)
                self.assertEqual(run.returncode, 1, run.stderr)
                self.assertIn(f"\nlayoutguard_torch.ConfigError: {text}", run.stderr)
                program_lines = re.findall(r'File "[^"]*program\.py", line (\d+)', run.stderr)
                self.assertEqual(program_lines, where, run.stderr)
                self.assertNotIn("layoutguard_torch/__init__.py", run.stderr)
                self.assertNotIn("program done", run.stdout)

    def test_unboxed_kernels_report_as_the_boxed_fallback(self):
        # The hot ops (conv, batch norm, relu, add, pooling...) have unboxed kernels; with
        # LAYOUTGUARD_TORCH_UNBOXED=0 every op goes through the boxed fallback. Both must
        # count the same calls and report the same violations, root causes included.
        program = PROGRAM.replace("return self.head(self.conv(x))",
                                  "y = torch.relu(torch.nn.functional.max_pool2d(self.conv(x), 2)) + 1\n"
                                  "        y = torch.nn.functional.pad(y, (1, 1, 1, 1), mode='reflect')\n"
                                  "        return self.head(y.to(torch.float64))")
        reports = {}
        for unboxed in ("1", "0"):
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "report.json")
                run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_TORCH_UNBOXED": unboxed,
                                   "LAYOUTGUARD_OPTIONS": f"summary=0:report={path}"}, program=program)
                self.assertEqual(run.returncode, 0, run.stderr)
                with open(path) as f:
                    report = json.load(f)
            reports[unboxed] = (sorted(json.dumps(o, sort_keys=True) for o in report["ops"]),
                                sorted((v["op"], v["module"], v["root_cause"], v["count"], str(v["formats_out"]))
                                       for v in report["violations"]))
        ops, violations = reports["1"]
        self.assertIn("aten::conv2d", " ".join(ops))
        self.assertTrue(violations, "reflect pad loses channels_last in every torch the bridge supports")
        self.assertEqual(reports["1"], reports["0"])

    def test_hot_ops_have_unboxed_kernels_unless_switched_off(self):
        # The dispatcher's own table: the hot ops carry the bridge's unboxed kernel on its key,
        # other ops reach the boxed fallback, views and in-place ops pass by (a fall-through
        # kernel), and LAYOUTGUARD_TORCH_UNBOXED=0 registers no unboxed kernel.
        probe = ("import torch, layoutguard_torch as lgt\n"
                 "lgt.enable(); lgt.disable()\n"
                 "for op in ('aten::relu', 'aten::conv2d', 'aten::cudnn_batch_norm', 'aten::softmax.int',\n"
                 "           'aten::relu_', 'aten::detach', 'aten::_foreach_add_.List', 'aten::_foreach_add.List',\n"
                 "           'aten::_foreach_add.List_out', 'aten::_amp_foreach_non_finite_check_and_unscale_'):\n"
                 "    kernels = [l for l in torch._C._dispatch_dump(op).splitlines() if 'GenericMode' in l]\n"
                 "    print(op, 'passes' if any('fallthrough' in l for l in kernels) else\n"
                 "              'unboxed' if any('unboxed_ops.cpp' in l for l in kernels) else 'fallback')\n")
        for unboxed, expected in (("1", "unboxed"), ("0", "fallback")):
            run = run_program({"LAYOUTGUARD_TORCH_UNBOXED": unboxed}, program=probe, module_runner=False)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(run.stdout.split(), ["aten::relu", expected, "aten::conv2d", expected,
                                                  "aten::cudnn_batch_norm", expected, "aten::softmax.int", "fallback",
                                                  "aten::relu_", "passes", "aten::detach", "passes",
                                                  # in place, returning nothing: an optimizer's step
                                                  "aten::_foreach_add_.List", "passes",
                                                  # returning new lists: Adam's step
                                                  "aten::_foreach_add.List", expected,
                                                  "aten::_foreach_add.List_out", "fallback",
                                                  "aten::_amp_foreach_non_finite_check_and_unscale_", "passes"])

    def test_an_optimizers_multi_tensor_step_passes_by(self):
        # SGD's multi-tensor step updates the parameters and the momentum buffers in place: no
        # loss, and its _foreach_ ops pass the key by, absent from the op table.
        conv = torch.nn.Conv2d(4, 4, 3).to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(conv.parameters(), lr=0.1, momentum=0.9, foreach=True)
        x = torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)
        lgt.clear_report()
        with lgt.guard("record"):
            for _ in range(2):  # the first step makes the momentum buffers, the second updates them
                opt.zero_grad()
                conv(x).sum().backward()
                opt.step()
        report = lgt.report()
        self.assertEqual(report["violations"], [])
        ops = [o["op"] for o in report["ops"]]
        self.assertIn("aten::convolution_backward", ops)
        self.assertEqual([op for op in ops if op.startswith("aten::_foreach")], [])
        self.assertTrue(conv.weight.is_contiguous(memory_format=torch.channels_last))

    def test_a_multi_tensor_op_is_checked_element_by_element(self):
        # Adam's multi-tensor step over a channels-last conv and one left NCHW: _foreach_sqrt
        # and (1.13) _foreach_add keep each element's format, which the whole call's operands,
        # taken together, would call a loss. An element that loses the format is still one.
        a = torch.nn.Conv2d(4, 4, 3).to(memory_format=torch.channels_last)
        b = torch.nn.Conv2d(4, 4, 3)
        opt = torch.optim.Adam(list(a.parameters()) + list(b.parameters()), lr=0.1, foreach=True)
        x = torch.randn(2, 4, 8, 8)
        cl = torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)
        lgt.clear_report()
        with lgt.guard("record"):
            for _ in range(2):
                opt.zero_grad()
                (a(x.contiguous(memory_format=torch.channels_last)).sum() + b(x).sum()).backward()
                opt.step()
            self.assertEqual(lgt.report()["violations"], [])
            adds_before = {o["op"]: o["calls"] for o in lgt.report()["ops"]}.get("aten::_foreach_add", 0)
            # Element 0 adds a channels-last tensor to an NCHW one, as torch.add would lose it;
            # then both elements of one call do: two violations, one call.
            torch._foreach_add([torch.randn(2, 4, 6, 6), cl], [cl, cl])
            torch._foreach_add([torch.randn(2, 4, 6, 6), torch.randn(2, 4, 6, 6)], [cl, cl])
            # The same through the boxed fallback: _foreach_maximum has no unboxed kernel.
            torch._foreach_maximum([cl, torch.randn(2, 4, 6, 6)], [cl, cl])
        report = lgt.report()
        self.assertEqual([(v["op"], v["count"], v["formats_in"], v["formats_out"]) for v in report["violations"]],
                         [("aten::_foreach_add", 1, "contiguous,channels_last", "contiguous"),
                          ("aten::_foreach_add", 2, "contiguous,channels_last", "contiguous"),  # two lines
                          ("aten::_foreach_maximum", 1, "contiguous,channels_last", "contiguous")])
        # The first element that lost the format, of the first call of each record.
        self.assertEqual([v["element"] for v in report["violations"]], [0, 0, 1])
        # Throw mode names the element that lost the format, here the second.
        with lgt.guard("throw"), self.assertRaises(lgt.LayoutViolationError) as caught:
            torch._foreach_add([cl, torch.randn(2, 4, 6, 6)], [cl, cl])
        self.assertIn("\n  element: 1 of the op's tensor lists (the operands above are its)\n",
                      str(caught.exception))
        self.assertIn("input 0:  float32 cpu (2,4,6,6):(144,36,6,1) order=abcd contiguous", str(caught.exception))
        calls = {o["op"]: o["calls"] for o in report["ops"]}
        self.assertEqual(calls["aten::_foreach_sqrt"], 2)  # one per step
        self.assertEqual(calls["aten::_foreach_add"], adds_before + 2)  # one per call, not per element

    def test_bad_unboxed_switch_is_a_config_error(self):
        run = run_program({"LAYOUTGUARD": "warn", "LAYOUTGUARD_TORCH_UNBOXED": "maybe"})
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn("LAYOUTGUARD_TORCH_UNBOXED='maybe' is not a switch", run.stderr)
        self.assertIn("ConfigError", run.stderr)
        self.assertNotIn("program done", run.stdout)

    def test_bad_unboxed_switch_lets_threads_start_and_raises_at_their_ops(self):
        # LAYOUTGUARD at load switches the importing thread on all the same: threads and pool
        # tasks that take its state along start (a pool's thread may run no op at all), their
        # ops raise the ConfigError, and an off block is left without raising.
        program = """
import concurrent.futures, threading, torch, layoutguard_torch as lgt
with lgt.guard("off"):
    x = torch.randn(1, 4, 3, 3)
print("off block left, on:", lgt.enabled())
with concurrent.futures.ThreadPoolExecutor(1) as pool:
    print("task without ops:", pool.submit(lambda: 7).result())
    try:
        pool.submit(torch.relu, x).result()
    except lgt.ConfigError as e:  # raised inside an op, the type enable() raises
        print("task op:", e)
errors = []
def run():
    try:
        torch.relu(x)
    except lgt.ConfigError as e:
        errors.append(str(e))
thread = threading.Thread(target=run)
thread.start()
thread.join()
print("thread op:", errors)
"""
        run = run_program({"LAYOUTGUARD": "warn", "LAYOUTGUARD_TORCH_UNBOXED": "maybe",
                           "LAYOUTGUARD_OPTIONS": "summary=0"}, program=program, module_runner=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        text = "LAYOUTGUARD_TORCH_UNBOXED='maybe' is not a switch"
        self.assertIn("off block left, on: True\ntask without ops: 7\ntask op: ", run.stdout)
        self.assertEqual(run.stdout.count(text), 2, run.stdout)

    def test_missing_suppressions_file(self):
        run = run_program({"LAYOUTGUARD": "warn", "LAYOUTGUARD_OPTIONS": "suppressions=/nonexistent/s.txt"})
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn("\nlayoutguard_torch.ConfigError: ", run.stderr)
        self.assertIn("/nonexistent/s.txt", run.stderr)
        self.assertIn("suppressions", run.stderr)

    def test_native_entry_points_refuse_bad_arguments(self):
        from layoutguard_torch import _C
        with self.assertRaises(TypeError) as caught:
            _C.call_module_with_path()  # the wrapper of nn.Module.__call__ without its module
        self.assertIn("needs a module to call", str(caught.exception))
        with self.assertRaises(TypeError) as caught:
            _C.check_gradients("conv.weight")
        self.assertIn("needs a list of nn.Module objects, got str", str(caught.exception))
        with self.assertRaises(TypeError) as caught:
            _C.check_gradients(["conv.weight"])
        self.assertIn("needs nn.Module objects", str(caught.exception))
        self.assertIn("named_parameters()), got str", str(caught.exception))
        with self.assertRaises(TypeError):
            _C.check_gradients(["conv.weight"], [torch.nn.Parameter(torch.zeros(1))])
        # A token that is not the thread's innermost one is refused, never deleted.
        for pop, what in ((_C.pop_scope, "guard() block"), (_C._pop_handover, "innermost task"),
                          (_C.pop_backward_origin, "innermost backward")):
            with self.assertRaises(ValueError) as caught:
                pop(12345)
            self.assertIn(what, str(caught.exception))
        token = _C.push_backward_origin()
        with self.assertRaises(ValueError):
            _C.pop_backward_origin(token + 8)
        _C.pop_backward_origin(token)

    def test_bad_mode_from_the_api(self):
        # Refused where passed (a guard at its making, not when entered), naming the function;
        # nothing changes. An empty or blank mode is not "off", a bool not "1" or "0".
        mode_before, enabled_before = lgt.mode(), lgt.enabled()
        for function in (lgt.enable, lgt.guard):
            name = function.__name__
            for bad in ("sometimes", "", "  ", "Throw", "2", 2):
                with self.assertRaises(lgt.ConfigError, msg=repr(bad)) as caught:
                    function(bad)
                self.assertIn(f"layoutguard_torch.{name}: {str(bad)!r} is not a mode; allowed values: off, warn, "
                              "throw, record, 1 (= throw), 0 (= off)", str(caught.exception))
            for bad in (True, 1.0, None if function is lgt.guard else b"warn", ["warn"]):
                with self.assertRaises(TypeError, msg=repr(bad)) as caught:
                    function(bad)
                self.assertIn(f"layoutguard_torch.{name}: mode must be one of off, warn, throw, record",
                              str(caught.exception))
                self.assertIn(type(bad).__name__, str(caught.exception))
            # An int is read by its value, whatever its __str__ says.
            class Sneaky(int):
                def __str__(self):
                    return "throw"

            with self.assertRaises(lgt.ConfigError) as caught:
                function(Sneaky(5))
            self.assertIn(f"layoutguard_torch.{name}: '5' is not a mode", str(caught.exception))
            # A long value is shown cut, with its length.
            with self.assertRaises(lgt.ConfigError) as caught:
                function("w" * 100000)
            self.assertIn(f"layoutguard_torch.{name}: '{'w' * 512}'... (100000 characters) is not a mode",
                          str(caught.exception))
        self.assertEqual((lgt.mode(), lgt.enabled()), (mode_before, enabled_before))
        self.assertEqual(lgt.guard(1)._mode, "1")  # 1 = throw, as LAYOUTGUARD takes it

    def test_bad_options_from_the_api(self):
        with self.assertRaises(TypeError) as caught:
            lgt.set_options(None)
        self.assertIn("layoutguard_torch.set_options: needs a string in LAYOUTGUARD_OPTIONS syntax, got NoneType",
                      str(caught.exception))
        with self.assertRaises(lgt.ConfigError) as caught:
            lgt.set_options("max_reports=many")
        self.assertIn("layoutguard_torch.set_options: LAYOUTGUARD_OPTIONS: key 'max_reports'", str(caught.exception))
        # A NUL character would cut a path or an op name short where C reads it: refused.
        for text in ("report=/tmp/r\x00.json", "allow=aten::add\x00junk", "summary=0\x00:bogus=1"):
            with self.assertRaises(lgt.ConfigError, msg=repr(text)) as caught:
                lgt.set_options(text)
            self.assertIn("holds a NUL character at offset", str(caught.exception))
        # Text that is not UTF-8 (os.fsdecode's lone surrogates) goes as its bytes, which an
        # error names as \xNN; a lone surrogate that stands for no byte is refused as such.
        with self.assertRaises(lgt.ConfigError) as caught:
            lgt.set_options("summary=0\udcff")
        self.assertIn("key 'summary' got '0\\xff'", str(caught.exception))
        with self.assertRaises(lgt.ConfigError) as caught:
            lgt.set_options("report=/tmp/\ud800.json")
        self.assertIn("lone surrogates that stand for no byte", str(caught.exception))
        for name in ("a b", "::", "aten::", "::softmax", "aten::\tadd"):
            with self.assertRaises(lgt.ConfigError, msg=repr(name)) as caught:
                lgt.set_options(f"allow=aten::relu,{name}")
            shown = name.replace("\t", "\\x09")  # a control character is shown escaped
            self.assertIn(f"'{shown}' is not an op name", str(caught.exception))
        from layoutguard_torch import pytest_plugin
        import numpy
        with pytest_plugin.conversions_at_most(numpy.int64(10**9)):
            pass
        for bad, error in ((None, TypeError), ("0", TypeError), (True, TypeError), (-1, ValueError), (1.0, TypeError),
                           (numpy.int32(-1), ValueError)):
            with self.assertRaises(error, msg=repr(bad)) as caught:
                with pytest_plugin.conversions_at_most(bad):
                    self.fail("the block runs only with a valid limit")
            self.assertIn("conversions_at_most: limit_bytes must be", str(caught.exception))

    def test_set_options_keeps_the_process_mode_and_replaces_bad_environment_options(self):
        # Inside a block, the block's mode is not the process's: the mode after the block is
        # the one before it. A bad LAYOUTGUARD_OPTIONS is what set_options replaces: never raised.
        program = """
import torch, layoutguard_torch as lgt
with lgt.guard("throw"):
    lgt.set_options("summary=0:max_reports=2")
print("after the block:", lgt.mode())
lgt.enable()
""" + SOFTMAX_COUNTED
        run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": "max_reports=many"}, program=program,
                          module_runner=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("after the block: record\nviolations: 1\n", run.stdout)

    def test_other_torch_version_refused_at_import(self):
        with tempfile.TemporaryDirectory() as tmp:
            package = os.path.join(tmp, "layoutguard_torch")
            shutil.copytree(os.path.dirname(lgt.__file__), package)
            with open(os.path.join(package, "_build_info.py"), "w") as f:
                f.write('TORCH_VERSION = "0.0.1-other"\n')
            env = dict(os.environ, PYTHONPATH=tmp)
            run = subprocess.run([sys.executable, "-c", "import layoutguard_torch"], env=env,
                                 capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 1)
        self.assertIn("ImportError", run.stderr)
        self.assertIn("0.0.1-other", run.stderr)
        self.assertIn(torch.__version__, run.stderr)

    def test_enabling_from_many_threads_at_once(self):
        # In a fresh process, so that the threads race on the first registration of the key's
        # kernels; each thread's loss must then be recorded.
        program = """
import threading, torch
import layoutguard_torch as lgt
barrier = threading.Barrier(8)
enabled = []

def worker():
    barrier.wait()
    lgt.enable()
    lgt.enable()
    with lgt.guard("record"):
        torch.softmax(torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last), 1)
    enabled.append(lgt.enabled())

assert not lgt.enabled()
threads = [threading.Thread(target=worker) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("enabled:", enabled)
print("softmax losses:", sum(v["count"] for v in lgt.report()["violations"] if v["op"] == "aten::softmax"))
"""
        run = run_program({"LAYOUTGUARD": "", "LAYOUTGUARD_OPTIONS": "summary=0"}, program=program,
                          module_runner=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("enabled: " + str([True] * 8), run.stdout)
        self.assertIn("softmax losses: 8", run.stdout)

    def test_a_second_copy_of_the_library_does_not_abort(self):
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "liblayoutguard_torch_copy.so")
            shutil.copy(os.environ["LG_TORCH_LIBRARY"], copy)
            program = f"""
import ctypes, torch
import layoutguard_torch as lgt
lgt.enable("record")
ctypes.CDLL({copy!r})
""" + SOFTMAX_COUNTED
            run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": "summary=0"}, program=program,
                              module_runner=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("violations: 1", run.stdout)
        self.assertIn("already has a fallback", run.stderr)


class Entrypoints(unittest.TestCase):
    def test_pytest_plugin_fails_the_tests_that_lose_the_format(self):
        if importlib.util.find_spec("pytest") is None:
            self.skipTest(f"pytest is not importable by {sys.executable} (scripts/setup installs python3-pytest)")
        with tempfile.TemporaryDirectory() as tmp:
            results = os.path.join(tmp, "results.xml")
            run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "layoutguard_torch.pytest_plugin",
                                  "-p", "no:cacheprovider", f"--junitxml={results}",
                                  os.path.join(HERE, "pytest_sample.py")],
                                 capture_output=True, text=True, timeout=300, cwd=HERE)
            self.assertIn("4 failed, 2 passed", run.stdout, run.stdout + run.stderr)
            # Each test's own failure, so that one failing for another reason (a typo, an
            # exception of its own) is not taken for the plugin's.
            failures = {case.get("name"): case.find("failure").get("message")
                        for case in ElementTree.parse(results).iter("testcase") if case.find("failure") is not None}
        self.assertEqual(sorted(failures), ["test_conversion_over_budget_fails", "test_softmax_over_c_fails",
                                            "test_violation_after_a_clear_fails",
                                            "test_violation_within_budget_fails"])
        loss = "LayoutAssertionError: 1 layout violation(s) in the block:\n  aten::softmax (root cause aten::_softmax) at "
        for test, where in (("test_softmax_over_c_fails", "in test_softmax_over_c_fails"),
                            ("test_violation_within_budget_fails", "in test_violation_within_budget_fails"),
                            ("test_violation_after_a_clear_fails", "in lose_the_format")):
            self.assertIn(loss, failures[test])
            self.assertIn(f"pytest_sample.py:{self.line_of(where)} {where}: channels_last -> contiguous",
                          failures[test])
        budget = failures["test_conversion_over_budget_fails"]
        self.assertIn("LayoutAssertionError: the block converted 2304 bytes between memory formats; at most 100 allowed",
                      budget)
        self.assertIn("aten::contiguous at (no module): channels_last -> contiguous, 2304 bytes", budget)

    @staticmethod
    def line_of(where):
        """The line of pytest_sample.py that loses the format in the function `where` names."""
        function = where.split()[-1]
        with open(os.path.join(HERE, "pytest_sample.py")) as f:
            lines = f.read().splitlines()
        start = lines.index(next(line for line in lines if line.startswith(f"def {function}(")))
        return next(i + 1 for i in range(start, len(lines)) if "torch.softmax(" in lines[i])

    def test_runner_runs_a_module_as_python_dash_m_does(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "pkg"))
            open(os.path.join(tmp, "pkg", "__init__.py"), "w").close()
            with open(os.path.join(tmp, "pkg", "train.py"), "w") as f:
                f.write(PROGRAM.replace('print("program done")', 'print("argv", sys.argv)'))
            env = dict(os.environ, LAYOUTGUARD="record",
                       LAYOUTGUARD_OPTIONS="summary=0:report=" + os.path.join(tmp, "r.json"))
            run = subprocess.run([sys.executable, "-m", "layoutguard_torch", "-m", "pkg.train", "cl"], env=env,
                                 cwd=tmp, capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn(f"argv [{os.path.join(tmp, 'pkg', 'train.py')!r}, 'cl']", run.stdout)
            with open(os.path.join(tmp, "r.json")) as f:
                violations = json.load(f)["violations"]
            self.assertEqual([(v["op"], v["module"]) for v in violations], [("aten::softmax", "head")])
            self.assertTrue(violations[0]["source_location"].startswith(os.path.join(tmp, "pkg", "train.py") + ":"))

    def test_runner_shows_tracebacks_from_the_program_on(self):
        # As `python3 program.py` shows them: status 1, the program's first frame first, and
        # neither the runner's nor runpy's frames; SystemExit keeps the program's status.
        raising = PROGRAM + "def fail():\n    raise KeyError('lost')\nfail()\n"
        for program, status in [(raising, 1), (PROGRAM + "sys.exit(7)\n", 7)]:
            run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": "summary=0"}, program=program)
            self.assertEqual(run.returncode, status, run.stderr)
            if status != 1:
                self.assertNotIn("Traceback", run.stderr)
                continue
            lines = run.stderr.splitlines()
            start = lines.index("Traceback (most recent call last):")
            self.assertRegex(lines[start + 1], r'^  File ".*program\.py", line \d+, in <module>$')
            self.assertEqual(lines[-1], "KeyError: 'lost'")
            self.assertNotIn("runpy", run.stderr)
            self.assertNotIn("__main__.py", run.stderr)

    def test_runner_ends_with_any_exit_object_as_python3_does(self):
        # sys.exit takes any object: Python prints one that is not an int and ends with 1. The
        # runner never compares it (a tensor's == cannot be a bool, a NaN equals nothing).
        for code, shown in (("torch.tensor([0, 1])", "tensor([0, 1])"), ("float('nan')", "nan"),
                            ("'stopped'", "stopped")):
            program = PROGRAM + f"sys.exit({code})\n"
            with self.subTest(code):
                run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": "summary=0"}, program=program)
                self.assertEqual(run.returncode, 1, run.stderr)
                self.assertEqual(run.stderr.splitlines()[-1:], [shown], run.stderr)
                self.assertNotIn("Traceback", run.stderr)
        # A successful end (False and an IntEnum zero are 0) still reports a setting never read.
        for code in ("False", "__import__('enum').IntEnum('E', 'ZERO', start=0).ZERO"):
            with self.subTest(code):
                run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": "nosuch=1"},
                                  program=f"import sys\nsys.exit({code})\n")
                self.assertEqual(run.returncode, 1, run.stderr)
                self.assertIn("layoutguard_torch.ConfigError: LAYOUTGUARD_OPTIONS: unknown key 'nosuch'", run.stderr)

    def test_runner_runs_a_program_as_python3_does(self):
        probe = ("import atexit, os, pickle, sys\n"
                 "class State: pass\n"
                 "print('file', __file__ == os.path.abspath(__file__), 'path0', sys.path[0])\n"
                 "atexit.register(lambda: print('pickled at exit', len(pickle.dumps(State())) > 0))\n")
        env = dict(os.environ, LAYOUTGUARD="record", LAYOUTGUARD_OPTIONS="summary=0")
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "sub", "app"))
            for path in ("sub/probe.py", "sub/app/__main__.py"):
                with open(os.path.join(tmp, path), "w") as f:
                    f.write(probe)
            os.makedirs(os.path.join(tmp, "broken"))
            with open(os.path.join(tmp, "broken", "__init__.py"), "w") as f:
                f.write("import no_such_dependency_of_broken\n")
            open(os.path.join(tmp, "broken", "train.py"), "w").close()
            os.makedirs(os.path.join(tmp, "raising"))  # a package whose own code raises on import
            with open(os.path.join(tmp, "raising", "__init__.py"), "w") as f:
                f.write("raise RuntimeError('the package raised')\n")
            open(os.path.join(tmp, "raising", "train.py"), "w").close()

            def runner(*args, stdin=None):
                return subprocess.run([sys.executable, "-m", "layoutguard_torch", *args], env=env, cwd=tmp,
                                      input=stdin, capture_output=True, text=True, timeout=300)

            for args, path0 in [(("sub/probe.py",), os.path.join(tmp, "sub")),
                                (("sub/app",), os.path.join(tmp, "sub", "app"))]:
                run = runner(*args)
                self.assertEqual(run.returncode, 0, (args, run.stderr))
                self.assertIn(f"file True path0 {path0}\n", run.stdout, args)
                self.assertIn("pickled at exit True", run.stdout, args)
            run = runner("-", stdin="import sys\nprint('from stdin', sys.argv, __file__, __cached__)\n")
            self.assertEqual((run.returncode, run.stdout), (0, "from stdin ['-'] <stdin> None\n"), run.stderr)
            # A zip file's program finds itself where python3's does (sys.argv[0] is absolute).
            with zipfile.ZipFile(os.path.join(tmp, "app.zip"), "w") as archive:
                archive.writestr("__main__.py", "import sys\nprint(sys.argv[1:], sys.path[0], __file__)\n")
            run = runner("app.zip", "--flag")
            plain = subprocess.run([sys.executable, "app.zip", "--flag"], cwd=tmp, capture_output=True, text=True,
                                   timeout=300)
            self.assertEqual((run.returncode, run.stdout), (0, plain.stdout), run.stderr)
            run = runner("-m", "broken.train")
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn("No module named 'no_such_dependency_of_broken'", run.stderr)
            run = runner("-m", "raising.train")  # the program's error, shown as python3 shows it
            self.assertEqual(run.returncode, 1, run.stderr)
            self.assertIn("RuntimeError: the package raised", run.stderr)
            self.assertIn(os.path.join("raising", "__init__.py"), run.stderr)
            self.assertNotIn("layoutguard_torch", run.stderr)
            run = runner("-m", "sub")  # a package (a namespace one) without __main__
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn("sub is a package without a __main__ module", run.stderr)

    def test_files_are_written_after_ctrl_c_and_without_ops(self):
        # An uncaught KeyboardInterrupt ends Python by SIGINT, past the C exit handler: the
        # summary and the files come all the same. The runner writes its files for a program
        # that checked no op too (an empty report, an empty baseline).
        with tempfile.TemporaryDirectory() as tmp:
            for name, program in [("interrupted", PROGRAM.replace('print("program done")', "raise KeyboardInterrupt")),
                                  ("no ops", "print('a dry run')\n")]:
                with self.subTest(name):
                    report, baseline = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + ".txt")
                    run = run_program({"LAYOUTGUARD": "record",
                                       "LAYOUTGUARD_OPTIONS": f"report={report}:write_suppressions={baseline}"},
                                      program=program)
                    self.assertEqual(run.returncode, -signal.SIGINT if name == "interrupted" else 0, run.stderr)
                    with open(report) as f:
                        violations = [v["op"] for v in json.load(f)["violations"]]
                    self.assertEqual(violations, ["aten::softmax"] if name == "interrupted" else [])
                    self.assertTrue(os.path.exists(baseline))
                    self.assertEqual("[layoutguard] summary" in run.stderr, name == "interrupted", run.stderr)
                    if name == "interrupted":  # the traceback is the program's, as python3 shows it
                        self.assertIn('program.py", line', run.stderr)
                        self.assertNotIn("runpy", run.stderr)
                        self.assertNotIn("layoutguard_torch", run.stderr)

    def test_a_file_name_that_is_not_utf8_is_shown_with_escapes(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(os.fsencode(tmp), b"bad\xff.py")
            with open(script, "wb") as f:
                f.write(b"import torch\nx = torch.randn(1, 3, 4, 4).contiguous(memory_format=torch.channels_last)\n"
                        b"torch.softmax(x, 1)\n")
            report = os.path.join(tmp, "r.json")
            env = dict(os.environ, LAYOUTGUARD="record", LAYOUTGUARD_OPTIONS=f"summary=0:report={report}")
            run = subprocess.run([sys.executable, "-m", "layoutguard_torch", script], env=env, capture_output=True,
                                 timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(report) as f:
                (violation,) = json.load(f)["violations"]
            self.assertEqual(violation["source_location"], os.path.join(tmp, "bad\\xff.py") + ":3 in <module>")

    def test_relative_paths_stay_where_the_settings_were_read(self):
        # A program that changes directory after its first op (as Hydra's jobs do) finds its
        # files where the settings were read, the baseline read and rewritten in one place.
        program = PROGRAM.replace('print("program done")', "import os\nos.chdir('job')\n" + SOFTMAX_COUNTED)
        program = "import layoutguard_torch as lgt\n" + program
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "job"))
            with open(os.path.join(tmp, "program.py"), "w") as f:
                f.write(program)
            env = dict(os.environ, LAYOUTGUARD="record",
                       LAYOUTGUARD_OPTIONS="summary=0:report=r.json:events=e.jsonl:write_suppressions=s.txt")
            run = subprocess.run([sys.executable, "-m", "layoutguard_torch", "program.py"], env=env, cwd=tmp,
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(sorted(os.listdir(tmp)), ["e.jsonl", "job", "program.py", "r.json", "s.txt"])
            self.assertEqual(os.listdir(os.path.join(tmp, "job")), [])

    def test_a_mode_that_is_off_with_spaces_switches_nothing_on_at_import(self):
        probe = "import layoutguard_torch as lgt\nprint('enabled', lgt.enabled(), lgt.module_path_tracking())\n"
        for value, on in [(" off", False), ("0 ", False), (" record ", True)]:
            run = run_program({"LAYOUTGUARD": value, "LAYOUTGUARD_OPTIONS": "summary=0"}, program=probe,
                              module_runner=False)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn(f"enabled {on} {on}", run.stdout, repr(value))

    def test_runner_refuses_what_it_cannot_run(self):
        def runner(*args):
            return subprocess.run([sys.executable, "-m", "layoutguard_torch", *args], capture_output=True, text=True,
                                  timeout=300, cwd=HERE)

        for args, message in [((), "usage: python3 -m layoutguard_torch"),
                              (("/nonexistent/train.py",), "no such script: /nonexistent/train.py"),
                              (("-m",), "-m needs a module name"),
                              (("-m", "no_such_package.train"), "no module named no_such_package.train")]:
            run = runner(*args)
            self.assertEqual(run.returncode, 2, (args, run.stderr))
            self.assertIn(message, run.stderr, args)
        run = runner("--help")
        self.assertEqual(run.returncode, 0)
        self.assertIn("-m module [args...]", run.stdout)

    def test_runner_reports_the_programs_errors_and_bad_settings_without_its_frames(self):
        env = dict(os.environ, LAYOUTGUARD="record", LAYOUTGUARD_OPTIONS="summary=0")
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "nul.py"), "wb") as f:
                f.write(b"x = 1\0\n")
            with open(os.path.join(tmp, "badsyntax.py"), "w") as f:
                f.write("def (\n")
            with open(os.path.join(tmp, "noop.py"), "w") as f:
                f.write("print('ran')\n")
            with zipfile.ZipFile(os.path.join(tmp, "nomain.zip"), "w") as archive:
                archive.writestr("train.py", "print('ran')\n")

            def runner(*args, stdin=subprocess.PIPE, **settings):
                return subprocess.run([sys.executable, "-m", "layoutguard_torch", *args], env=dict(env, **settings),
                                      cwd=tmp, stdin=stdin, capture_output=True, text=True, timeout=300)

            for args, status, message in [
                    (("nul.py",), 1, "SyntaxError: source code cannot contain null bytes"),
                    (("-m", "badsyntax"), 1, "SyntaxError: invalid syntax"),
                    (("nomain.zip",), 2, "no __main__.py in nomain.zip")]:
                run = runner(*args)
                self.assertEqual(run.returncode, status, (args, run.stderr))
                self.assertIn(message, run.stderr, args)
                self.assertNotIn("Traceback", run.stderr, args)
            run = runner("-", stdin=subprocess.DEVNULL)  # nothing on standard input: an empty program
            self.assertEqual((run.returncode, run.stdout), (0, ""), run.stderr)
            # A program in a pipe (/dev/stdin, a shell's <(...)) is read once, as python3 reads it.
            run = subprocess.run([sys.executable, "-m", "layoutguard_torch", "/dev/stdin"], env=env, cwd=tmp,
                                 input="print('piped')\n", capture_output=True, text=True, timeout=300)
            self.assertEqual((run.returncode, run.stdout), (0, "piped\n"), run.stderr)
            # A file that cannot be opened (a socket): python3's message and status.
            import socket
            with socket.socket(socket.AF_UNIX) as listening:
                listening.bind(os.path.join(tmp, "socket.py"))
                run = runner("socket.py")
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn("can't open file", run.stderr)
            self.assertNotIn("Traceback", run.stderr)
            # Bad settings of a program that runs no op are reported where it ends (status 1),
            # a bad switch that the runner reads itself before the program starts.
            for settings, message in [({"LAYOUTGUARD": "loud"}, "LAYOUTGUARD='loud' is not a mode"),
                                      ({"LAYOUTGUARD_OPTIONS": "nosuch=1"}, "unknown key 'nosuch'"),
                                      ({"LAYOUTGUARD_TORCH_UNBOXED": "maybe"},
                                       "LAYOUTGUARD_TORCH_UNBOXED='maybe' is not a switch")]:
                run = runner("noop.py", **settings)
                self.assertEqual(run.returncode, 1, (settings, run.stderr))
                self.assertIn(f"layoutguard_torch.ConfigError: ", run.stderr)
                self.assertIn(message, run.stderr)
                self.assertNotIn("Traceback", run.stderr)
                self.assertEqual(run.stdout, "" if "LAYOUTGUARD_TORCH_UNBOXED" in settings else "ran\n")

    def test_guard_nests_decorates_and_refuses_blocks_that_do_not_nest(self):
        x = torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last)
        g = lgt.guard("record")
        lgt.clear_report()
        with g:  # one guard entered again inside itself
            with g:
                torch.softmax(x, 1)
            self.assertEqual(lgt.mode(), "record")
        self.assertEqual(len(lgt.report()["violations"]), 1)

        @lgt.guard("throw")
        def step():
            return torch.softmax(x, 1)

        for _ in range(2):  # each call is a block of its own
            with self.assertRaises(lgt.LayoutViolationError):
                step()
        outer_mode = lgt.mode()

        def many():
            for _ in range(50):
                with g:
                    torch.relu(x)

        self.assertEqual(failures_in_threads(many, 3), [])
        # Left out of order, or on another thread: a ValueError, and the blocks still unwind.
        a, b = lgt.guard("record"), lgt.guard("warn")
        a.__enter__()
        b.__enter__()
        with self.assertRaises(ValueError) as caught:
            a.__exit__(None, None, None)
        self.assertIn("left out of order", str(caught.exception))
        errors = []

        def leave_a():
            try:
                a.__exit__(None, None, None)
            except ValueError as e:
                errors.append(str(e))

        thread = threading.Thread(target=leave_a)
        thread.start()
        thread.join()
        self.assertEqual(len(errors), 1)
        self.assertIn("did not enter it", errors[0])
        b.__exit__(None, None, None)
        a.__exit__(None, None, None)
        self.assertEqual(lgt.mode(), outer_mode)

    def test_threads_started_after_enable_are_checked(self):
        with switched_on("record"):
            lgt.clear_report()
            thread = threading.Thread(
                target=lambda: torch.softmax(torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last), 1))
            thread.start()
            thread.join()
            ops = [v["op"] for v in lgt.report()["violations"]]
            self.assertEqual(ops, ["aten::softmax"])

    def test_threads_take_the_mode_of_the_block_that_starts_them(self):
        # As PyTorch's own threads do: a thread started in a guard() block runs in its mode, one
        # started from a thread that is off stays off (its mode() is the process's).
        def softmax_in_thread(results, key):
            def run():
                results[key] = (lgt.enabled(), lgt.mode())
                torch.softmax(torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last), 1)
            thread = threading.Thread(target=run)
            thread.start()
            return thread

        with switched_on("warn"):
            lgt.clear_report()
            results = {}
            with lgt.guard("record"):
                in_record = softmax_in_thread(results, "record")
            with lgt.guard("off"):
                in_off = softmax_in_thread(results, "off")
            lgt.disable()
            from_disabled = softmax_in_thread(results, "disabled")
            for thread in (in_record, in_off, from_disabled):
                thread.join()
            self.assertEqual(results, {"record": (True, "record"), "off": (False, "warn"),
                                       "disabled": (False, "warn")})
            (v,) = lgt.report()["violations"]  # only the recording thread's: the others are off
            self.assertEqual((v["op"], v["count"]), ("aten::softmax", 1))
            # The thread's own blocks nest inside the mode it took along, and the threads it
            # starts take that mode along in turn.
            with lgt.guard("throw"):
                nested = {}

                def run():
                    with lgt.guard("record"):
                        nested["inner"] = lgt.mode()
                    nested["after"] = lgt.mode()
                    grandchild = threading.Thread(target=lambda: nested.update(grandchild=lgt.mode()))
                    grandchild.start()
                    grandchild.join()
                thread = threading.Thread(target=run)
                thread.start()
                thread.join()
            self.assertEqual(nested, {"inner": "record", "after": "throw", "grandchild": "throw"})

    def test_a_profiler_may_start_or_stop_inside_a_guard_block(self):
        # PyTorch's profiler keeps its state on the thread's debug-info stack, where guard
        # blocks keep their mode, and stops only with its state on top of it: started outside a
        # block and stopped inside, started inside and stopped after, and stepped on a schedule
        # inside a decorated function, as without the bridge.
        x = torch.randn(1, 4, 3, 3)
        with switched_on("warn"):
            profiler = torch.profiler.profile()
            profiler.start()
            with lgt.guard("record"):
                torch.relu(x)
                profiler.stop()
                self.assertEqual(lgt.mode(), "record")
            self.assertEqual(lgt.mode(), "warn")
            self.assertIn("aten::relu", {e.key for e in profiler.key_averages()})

            profiler = torch.profiler.profile()
            with lgt.guard("record"):
                profiler.start()
                torch.relu(x)
            self.assertEqual(lgt.mode(), "warn")
            torch.sigmoid(x)
            profiler.stop()
            self.assertLessEqual({"aten::relu", "aten::sigmoid"}, {e.key for e in profiler.key_averages()})

            @lgt.guard("record")
            def step():
                torch.relu(x)
                scheduled.step()
                return lgt.mode()

            schedule = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
            with torch.profiler.profile(schedule=schedule) as scheduled:
                self.assertEqual([step() for _ in range(6)], ["record"] * 6)
            self.assertEqual(lgt.mode(), "warn")
            self.assertIn("aten::relu", {e.key for e in scheduled.key_averages()})

    def test_a_profile_hook_set_before_switching_on_stays(self):
        program = """
import sys, threading, torch, layoutguard_torch as lgt
calls = []
threading.setprofile(lambda frame, event, arg: calls.append(threading.get_ident()))
lgt.enable("record")
def run():
    sys.setprofile(None)
    print("state:", lgt.enabled(), lgt.mode())
thread = threading.Thread(target=run)
thread.start()
thread.join()
print("hook ran in the thread:", thread.ident in calls)
"""
        run = run_program({"LAYOUTGUARD_OPTIONS": "summary=0"}, program=program, module_runner=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("state: True record\nhook ran in the thread: True\n", run.stdout)

    def test_threads_keep_the_users_profile_hook(self):
        # The handover takes no profile or trace hook: a profiler's hook set with threading
        # after the bridge switched on still reaches new threads, and they still take the
        # starter's state along; so does one set before (the test above).
        calls = []

        def hook(frame, event, arg):
            calls.append(threading.get_ident())

        threading.setprofile(hook)
        try:
            with switched_on("off"):
                lgt.clear_report()
                results = {}
                with lgt.guard("record"):
                    def run():
                        sys.setprofile(None)
                        results["state"] = (lgt.enabled(), lgt.mode())
                        torch.softmax(torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last), 1)
                    thread = threading.Thread(target=run)
                    thread.start()
                thread.join()
                self.assertEqual(results["state"], (True, "record"))
                self.assertIn(thread.ident, calls)
                self.assertEqual([v["op"] for v in lgt.report()["violations"]], ["aten::softmax"])
                self.assertNotIn("run", thread.__dict__)  # the Thread no longer holds the wrapper
                # A run attribute of the thread's own is called, and put back.
                own = threading.Thread()
                own.run = lambda: results.update(own=lgt.mode())
                with lgt.guard("warn"):
                    own.start()
                own.join()
                self.assertEqual(results["own"], "warn")
                self.assertIn("run", own.__dict__)
        finally:
            threading.setprofile(None)

    def test_library_frames_end_where_site_packages_begin(self):
        # The longest root decides: a file under a library root is the user's when a longer
        # root that is not a library's holds it (site-packages inside the standard library's
        # directory, as pyenv and python.org builds have it).
        from layoutguard_torch import _C
        with tempfile.TemporaryDirectory() as tmp:
            library, user = os.path.join(tmp, "lib"), os.path.join(tmp, "lib", "site-packages")
            os.makedirs(user)
            for folder, name in ((library, "lib_softmax"), (user, "user_softmax")):
                with open(os.path.join(folder, name + ".py"), "w") as f:
                    f.write("import torch\n\ndef softmax(x):\n    return torch.softmax(x, 1)\n")
            sys.path[:0] = [library, user]
            try:
                import lib_softmax
                import user_softmax
                _C._set_types(lgt.LayoutViolationError, lgt.ConfigError,
                              lgt._library_roots() + [(os.path.join(library, ""), True), (os.path.join(user, ""), False)],
                              lgt._package_root)
                x = torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last)
                with switched_on("record"):
                    lgt.clear_report()
                    user_softmax.softmax(x)
                    lib_softmax.softmax(x)
                    places = [v["source_location"] for v in lgt.report()["violations"]]
            finally:
                sys.path[:] = [p for p in sys.path if p not in (library, user)]
                sys.modules.pop("lib_softmax", None)
                sys.modules.pop("user_softmax", None)
                _C._set_types(lgt.LayoutViolationError, lgt.ConfigError, lgt._library_roots(), lgt._package_root)
        self.assertEqual(len(places), 2, places)
        self.assertEqual(sum(p == os.path.join(user, "user_softmax.py") + ":4 in softmax" for p in places), 1, places)
        # lib_softmax is a library's: its caller is named
        self.assertEqual(sum(os.path.basename(__file__) + ":" in p for p in places), 1, places)

    def test_layoutguard_at_import_brings_the_python_side(self):
        # LAYOUTGUARD set when the package loads switches the importing thread on, as in C++,
        # and with it the module paths (and the rest of the Python side).
        program = """
import torch, layoutguard_torch as lgt
print("switched on:", lgt.enabled(), lgt.module_path_tracking())
""" + PROGRAM.split("fmt = ")[0] + """
net = Net().to(memory_format=torch.channels_last)
net(torch.randn(2, 4, 8, 8).contiguous(memory_format=torch.channels_last))
print("modules:", [v["module"] for v in lgt.report()["violations"]])
"""
        run = run_program({"LAYOUTGUARD": "record", "LAYOUTGUARD_OPTIONS": "summary=0"}, program=program,
                          module_runner=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("switched on: True True\nmodules: ['head']\n", run.stdout)

    def test_a_thread_checks_gradients_in_the_mode_it_took_along(self):
        conv = torch.nn.Conv2d(4, 4, 1).to(memory_format=torch.channels_last)
        conv.weight.grad = torch.zeros(4, 4, 1, 1).as_strided((4, 4, 1, 1), (1, 4, 4, 4))  # neither layout's strides
        with switched_on("off"):
            lgt.clear_report()
            with lgt.guard("record"):
                thread = threading.Thread(target=lgt.check_gradients, args=(conv,))
                thread.start()
            thread.join()
            self.assertEqual([(v["op"], v["module"]) for v in lgt.report()["violations"]],
                             [("autograd::grad_strides", "weight")])

    def test_a_thread_pool_runs_each_task_in_the_state_of_its_submitter(self):
        # concurrent.futures starts its threads lazily, from the first submit(): each task, not
        # each thread, takes the state of the code that submitted it.
        import concurrent.futures

        def softmax_task():
            torch.softmax(torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last), 1)
            return lgt.enabled(), lgt.mode()

        with switched_on("warn"):
            lgt.clear_report()
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                with lgt.guard("off"):
                    off = pool.submit(softmax_task).result()
                with lgt.guard("record"):
                    record = pool.submit(softmax_task).result()
                plain = pool.submit(softmax_task).result()
                lgt.disable()
                disabled = list(pool.map(lambda _: softmax_task(), [0]))[0]
            self.assertEqual((off, record, plain, disabled),
                             ((False, "warn"), (True, "record"), (True, "warn"), (False, "warn")))
            (v,) = lgt.report()["violations"]
            self.assertEqual((v["op"], v["count"]), ("aten::softmax", 2))  # the record and warn tasks'

    def test_work_handed_to_a_thread_without_code_of_the_users_names_where_it_was_handed_over(self):
        # submit(torch.cumsum, ...) and Thread(target=torch.cumsum): the thread runs no frame of
        # the user's, so the report names the submit() or start() line; the package's own
        # wrappers are never shown.
        import concurrent.futures
        x = torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last)
        with switched_on("record"):
            lgt.clear_report()
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(torch.cumsum, x, 1).result(); submit_line = inspect.currentframe().f_lineno
                with lgt.guard("off"):  # a task submitted from a block that is off is not checked
                    pool.submit(torch.softmax, x, 1).result()
            thread = threading.Thread(target=torch.softmax, args=(x, 1))
            thread.start(); start_line = inspect.currentframe().f_lineno
            thread.join()
            violations = {v["op"]: v for v in lgt.report()["violations"]}
        self.assertEqual(sorted(violations), ["aten::cumsum", "aten::softmax"])
        here = f"{__file__}:{{}} in test_work_handed_to_a_thread_without_code_of_the_users_names_where_it_was_handed_over"
        self.assertEqual(violations["aten::cumsum"]["source_location"], here.format(submit_line) + " (the submit() call)")
        self.assertEqual(violations["aten::softmax"]["source_location"], here.format(start_line) + " (the Thread.start() call)")
        for v in violations.values():
            stack = "".join(v["first_backtrace"]) if isinstance(v["first_backtrace"], list) else v["first_backtrace"]
            self.assertNotIn(os.path.join("layoutguard_torch", "__init__.py"), stack)

    def test_worked_example_of_the_docs(self):
        example = os.path.join(HERE, "..", "..", "examples", "torch", "train_step.py")
        env = dict(os.environ, LAYOUTGUARD="throw")
        run = subprocess.run([sys.executable, "-m", "layoutguard_torch", example], env=env, capture_output=True,
                             text=True, timeout=300)
        self.assertEqual(run.returncode, 1, run.stderr)
        # torch 1.13's bicubic upsample loses the format in forward; 2.x keeps it there and loses
        # it in the backward, which the dump then names with its autograd node.
        x = torch.randn(1, 2, 4, 4).contiguous(memory_format=torch.channels_last)
        forward_loses = not torch.nn.functional.interpolate(x, scale_factor=2, mode="bicubic").is_contiguous(
            memory_format=torch.channels_last)
        if forward_loses:
            self.assertIn("LayoutViolationError: [layoutguard] aten::upsample_bicubic2d lost channels_last", run.stderr)
            self.assertIn("train_step.py:22 in forward", run.stderr)
        else:
            self.assertIn("LayoutViolationError: [layoutguard] aten::upsample_bicubic2d_backward lost channels_last",
                          run.stderr)
            self.assertIn("autograd node: UpsampleBicubic2DBackward0", run.stderr)
            self.assertIn("train_step.py:45 in main", run.stderr)
        self.assertIn("module: decoder", run.stderr)
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "r.json")
            env = dict(os.environ, LAYOUTGUARD="record", LAYOUTGUARD_OPTIONS=f"report={report}:summary=0")
            run = subprocess.run([sys.executable, "-m", "layoutguard_torch", example, "--fixed"], env=env,
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(report) as f:
                self.assertEqual(json.load(f)["violations"], [])
            # The suppressions file docs/torch.md gives for bicubic kept: both passes' losses.
            known = os.path.join(tmp, "known.txt")
            with open(known, "w") as f:
                f.write("aten::upsample_bicubic2d:decoder\naten::upsample_bicubic2d_backward:decoder\n")
            env = dict(os.environ, LAYOUTGUARD="throw", LAYOUTGUARD_OPTIONS=f"suppressions={known}")
            run = subprocess.run([sys.executable, "-m", "layoutguard_torch", example], env=env, capture_output=True,
                                 text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)

    def test_worked_example_in_cpp(self):
        # examples/torch/train_step.cpp links the library and nothing else switches it on: the
        # same loss as the Python example's, located at the program's own line in C++.
        example = os.environ.get("LG_TORCH_CPP_EXAMPLE")
        if not example:
            self.skipTest("LG_TORCH_CPP_EXAMPLE unset: the C++ example was not built (meson option examples=false) "
                          "or not carried here")
        source = os.path.join(HERE, "..", "..", "examples", "torch", "train_step.cpp")
        with open(source) as f:
            upsampling = next(i for i, line in enumerate(f, 1) if "// the upsampling" in line)
        env = dict(os.environ, LAYOUTGUARD="throw", LAYOUTGUARD_OPTIONS="forward_calls=1")
        run = subprocess.run([example], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        x = torch.randn(1, 2, 4, 4).contiguous(memory_format=torch.channels_last)
        forward_loses = not torch.nn.functional.interpolate(x, scale_factor=2, mode="bicubic").is_contiguous(
            memory_format=torch.channels_last)
        if forward_loses:
            self.assertIn("[layoutguard] aten::upsample_bicubic2d lost channels_last", run.stderr)
            self.assertRegex(run.stderr, rf"\n  at: \S*train_step\.cpp:{upsampling} in forward\n")
        else:
            self.assertIn("[layoutguard] aten::upsample_bicubic2d_backward lost channels_last", run.stderr)
            self.assertIn("autograd node: UpsampleBicubic2DBackward0", run.stderr)
            self.assertRegex(run.stderr, rf"made by the forward call at: \S*train_step\.cpp:{upsampling} in forward")
        self.assertIn("module: decoder", run.stderr)
        # The stack trace starts at the ATen op the program called, not inside the bridge.
        first_frame = run.stderr.split("stack trace (most recent call first):\n", 1)[1].splitlines()[0]
        self.assertNotIn("lg::", first_frame)
        self.assertNotIn("c10::", first_frame.split(" at ")[0].split(" in ")[0].split("(")[0])

        env = dict(os.environ, LAYOUTGUARD="record", LAYOUTGUARD_OPTIONS="summary=0")
        run = subprocess.run([example, "--fixed"], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("violations recorded: 0", run.stdout)

    def test_work_handed_to_another_thread_keeps_the_scope_and_the_origin(self):
        """What autograd's CUDA device threads rely on, shown on CPU: a TorchScript fork runs its
        ops on an inter-op thread with no Python frame; the guard's mode and the thread that
        handed the work over reach it through PyTorch's ThreadLocalState."""
        from layoutguard_torch import _C
        x = torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last)
        lgt.clear_report()
        token = _C.push_backward_origin()  # as backward() and autograd.grad() do
        try:
            with lgt.guard("record"):
                fork_softmax(x)
        finally:
            _C.pop_backward_origin(token)
        (v,) = lgt.report()["violations"]
        self.assertEqual(v["op"], "aten::softmax")
        self.assertIn("test_settings.py:", v["source_location"])
        self.assertTrue(v["source_location"].endswith("(the backward() call)"), v["source_location"])
        self.assertIn("autograd's worker thread", v["stack"] if "stack" in v else v["first_backtrace"])

    def test_anomaly_mode_adds_the_forward_line_of_a_backward_loss(self):
        if torch.__version__.startswith("1."):
            self.skipTest(f"torch {torch.__version__}: the running autograd node is out of reach before 2.0")
        x = torch.randn(2, 8, 6, 6).contiguous(memory_format=torch.channels_last).requires_grad_()
        g = torch.randn(2, 8, 6, 6).contiguous(memory_format=torch.channels_last)
        raised = None
        with torch.autograd.detect_anomaly(check_nan=False), lgt.guard("throw"):
            y = torch.sort(x, 1)[0]; forward_line = sys._getframe().f_lineno  # noqa: E702
            try:
                y.backward(g)  # sort's backward loses the format in 1.13 and 2.x
            except lgt.LayoutViolationError as e:
                raised = str(e)
        self.assertIsNotNone(raised)
        self.assertIn("aten::value_selecting_reduction_backward", raised)
        self.assertIn(f"(the autograd node was made by the forward call at {__file__}:{forward_line} in "
                      "test_anomaly_mode_adds_the_forward_line_of_a_backward_loss)", raised)

    def test_guard_nests_and_restores(self):
        def softmax_reports():
            torch.softmax(torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last), 1)
            return sum(v["count"] for v in lgt.report()["violations"] if v["op"] == "aten::softmax")

        self.assertFalse(lgt.enabled())
        lgt.clear_report()
        with lgt.guard("record"):
            self.assertEqual(lgt.mode(), "record")
            with lgt.guard("off"):
                # Off takes the thread off the bridge: its ops are not even seen.
                self.assertEqual(lgt.mode(), "off")
                self.assertFalse(lgt.enabled())
                self.assertEqual(softmax_reports(), 0)
                with lgt.guard("record"):
                    self.assertTrue(lgt.enabled())
                    self.assertEqual(softmax_reports(), 1)
                self.assertFalse(lgt.enabled())
            self.assertEqual(lgt.mode(), "record")
            self.assertTrue(lgt.enabled())
            self.assertEqual(softmax_reports(), 2)
        self.assertFalse(lgt.enabled())
        lgt.clear_report()


@torch.jit.script
def _softmax_over_c(x):
    return torch.softmax(x, 1)


@torch.jit.script
def fork_softmax(x):
    return torch.jit.wait(torch.jit.fork(_softmax_over_c, x))


def _C_reset():
    """Puts the process-wide mode back to the environment's (tests run in one process)."""
    from layoutguard_torch import _C
    _C.reset_to_environment()


@contextlib.contextmanager
def switched_on(mode):
    """The calling thread switched on with `mode` as the process-wide mode, then off again with
    the environment's mode back."""
    lgt.enable(mode)
    try:
        yield
    finally:
        lgt.disable()
        _C_reset()


class SoftmaxHead(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, 1)  # a loss over C: reported at the module path


class HeadNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = SoftmaxHead()

    def forward(self, x):
        return self.head(x)


class Raising(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = HeadNet()

    def forward(self, x):
        self.inner(x)
        raise ValueError("forward failed")


class ModuleCalls(unittest.TestCase):
    """nn.Module.__call__ as the bridge sets it (C, for the module path) behaves as PyTorch's:
    every way of calling a module, subclasses that call it through super(), code that swaps it
    and puts it back, and a forward that raises."""

    def setUp(self):
        lgt.enable()
        lgt.disable()  # installs the hooks
        self.x = torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last)

    def modules_reported(self, run):
        lgt.clear_report()
        with lgt.guard("record"):
            run()
        return [v["module"] for v in lgt.report()["violations"]]

    def test_every_call_form_pushes_the_path(self):
        net = HeadNet()
        for form in (lambda: net(self.x), lambda: net(x=self.x), lambda: net.__call__(self.x),
                     lambda: torch.nn.Module.__call__(net, self.x), lambda: type(net).__call__(net, x=self.x)):
            self.assertEqual(self.modules_reported(form), ["head"])
        self.assertTrue(torch.equal(net(self.x), torch.softmax(self.x, 1)))

    def test_modules_held_deeper_keep_their_paths(self):
        # A forward that calls modules its containers hold (a ModuleList it loops over, a
        # ModuleDict, a grandchild) names them by their paths in its tree; a child moved
        # elsewhere is looked for again; a module the tree does not hold has its class name.
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.stages = torch.nn.ModuleList([HeadNet(), HeadNet()])
                self.heads = torch.nn.ModuleDict({"main": SoftmaxHead()})
                self.loose = [SoftmaxHead()]  # a plain list: not registered

            def forward(self, x):
                for stage in self.stages:
                    stage(x)
                self.heads["main"](x)
                self.stages[1].head(x)
                self.loose[0](x)

        net = Net()
        expected = ["stages.0.head", "stages.1.head", "heads.main", "SoftmaxHead"]
        for _ in range(2):  # the second time from the names kept
            self.assertEqual(sorted(self.modules_reported(lambda: net(self.x))), sorted(expected))
        net.stages = torch.nn.ModuleList([net.stages[1], net.stages[0]])
        self.assertEqual(sorted(self.modules_reported(lambda: net(self.x))), sorted(expected))

    def test_a_subclass_calling_through_super(self):
        class Counting(HeadNet):
            calls = 0

            def __call__(self, *args, **kwargs):
                Counting.calls += 1
                return super().__call__(*args, **kwargs)

        net = Counting()
        self.assertEqual(self.modules_reported(lambda: net(self.x)), ["head"])
        self.assertEqual(Counting.calls, 1)

    def test_code_that_swaps_module_call_and_puts_it_back(self):
        from layoutguard_torch import _C
        saved = torch.nn.Module.__call__
        self.assertIs(saved, _C.call_module_with_path)
        # The names of the function it calls, which torch.compile on torch 2.5 relies on.
        original = getattr(torch.nn.Module, "_wrapped_call_impl", torch.nn.Module._call_impl)
        self.assertEqual((saved.__name__, saved.__qualname__), (original.__name__, original.__qualname__))
        self.assertEqual(str(inspect.signature(saved)), "(self, /, *args, **kwargs)")
        net = HeadNet()
        try:
            torch.nn.Module.__call__ = lambda module, *args, **kwargs: "swapped"
            self.assertEqual(net(self.x), "swapped")
        finally:
            torch.nn.Module.__call__ = saved
        self.assertEqual(self.modules_reported(lambda: net(self.x)), ["head"])

    def test_the_replacement_answers_for_an_original_without_names(self):
        from layoutguard_torch import _C
        original = getattr(torch.nn.Module, "_wrapped_call_impl", torch.nn.Module._call_impl)

        class Forwarding:  # another tool's callable object, found in nn.Module.__call__
            def __call__(self, module, *args, **kwargs):
                return original(module, *args, **kwargs)

        try:
            _C._set_module_call(Forwarding())
            self.assertEqual(torch.nn.Module.__call__.__name__, "__call__")
            with self.assertRaises(AttributeError):
                torch.nn.Module.__call__.__code__
            _C._set_module_call(_C.call_module_with_path)  # never its own original
            self.assertEqual(self.modules_reported(lambda: HeadNet()(self.x)), ["head"])
        finally:
            _C._set_module_call(original)
        self.assertEqual(torch.nn.Module.__call__.__code__, original.__code__)

    def test_torch_compile_runs_modules_called_through_it(self):
        lg_unittest.skip_without_torch_compile(self)
        net = HeadNet()
        compiled = torch.compile(net, backend="eager")  # dynamo traces the module calls; no codegen
        results = []
        modules = self.modules_reported(lambda: results.extend((compiled(self.x), net(self.x))))
        self.assertTrue(torch.equal(results[0], results[1]))
        self.assertIn("head", modules)  # the eager call; compiled regions report at their boundary

    def test_a_module_name_with_control_characters_is_shown_whole(self):
        # A NUL would end the exception's text where C reads it: the dump shows it as \x00,
        # with everything after it; the report keeps the name as given.
        net = torch.nn.Sequential()
        net.add_module("he\x00ad", SoftmaxHead())
        x = torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last)
        with lgt.guard("throw"), self.assertRaises(lgt.LayoutViolationError) as caught:
            net(x)
        self.assertIn("  module: he\\x00ad\n", str(caught.exception))
        self.assertIn("stack trace", str(caught.exception))
        lgt.clear_report()
        with lgt.guard("record"):
            net(x)
        self.assertEqual([v["module"] for v in lgt.report()["violations"]], ["he\x00ad"])
        lgt.clear_report()

    def test_a_module_name_without_utf8_form_is_shown_with_escapes(self):
        # A key read from non-UTF-8 bytes holds lone surrogates: the report's JSON needs UTF-8,
        # so the byte is written \xNN, in the module path and in a parameter's name, and the
        # module is still named, not taken for the top level.
        net = torch.nn.Sequential()
        net.add_module(b"he\xffad".decode("utf-8", "surrogateescape"), SoftmaxHead())
        x = torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last)
        for _ in range(2):  # the name is looked for, then known
            self.assertEqual(self.modules_reported(lambda: net(x)), ["he\\xffad"])
        # A surrogate that stands for no byte (none of surrogateescape's) becomes '?'.
        odd = torch.nn.Sequential()
        odd.add_module("he\ud800ad", SoftmaxHead())
        self.assertEqual(self.modules_reported(lambda: odd(x)), ["he?ad"])
        outer = torch.nn.Sequential()
        outer.add_module("block", net)
        self.assertEqual(self.modules_reported(lambda: outer(x)), ["block.he\\xffad"])
        convs = torch.nn.Sequential()
        convs.add_module(b"c\xff".decode("utf-8", "surrogateescape"), torch.nn.Conv2d(4, 8, 3))
        convs = convs.to(memory_format=torch.channels_last)
        convs[0].weight.grad = torch.zeros(convs[0].weight.shape)  # contiguous, the weight not
        lgt.clear_report()
        with lgt.guard("record"):
            lgt.check_gradients(convs)
        self.assertEqual(take_contract_findings(), ["c\\xff.weight"])

    def test_a_module_called_deeper_in_its_callers_tree_keeps_keys_without_utf8_form_or_with_dots(self):
        # Called from its grandparent's forward, a module is named by its path in that tree; the
        # path keeps the keys themselves, as neither an escaped key nor one holding a dot could
        # be found again from the path's text.
        block = torch.nn.Module()
        escaped = b"he\xffad".decode("utf-8", "surrogateescape")
        block._modules[escaped] = SoftmaxHead()
        block._modules["a.b"] = SoftmaxHead()

        class Outer(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.block = block

            def forward(self, x):
                return self.block._modules[escaped](x), self.block._modules["a.b"](x)

        outer = Outer()
        x = torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last)
        for _ in range(2):  # the paths are looked for, then known
            self.assertEqual(self.modules_reported(lambda: outer(x)), ["block.he\\xffad", "block.a.b"])

    def test_a_forward_that_raises_pops_its_path(self):
        def run():
            with self.assertRaises(ValueError):
                Raising()(self.x)
            HeadNet()(self.x)

        self.assertEqual(self.modules_reported(run), ["inner.head", "head"])


if __name__ == "__main__":
    lg_unittest.main()

"""Each snippet that loses channels_last is caught at its user-level op under record, throw and
warn, forward and backward-only ones alike; nested ops are not reported a second time. On a torch
or device other than the reference build (1.13, CPU), the ground truth comes from plain PyTorch:
a snippet is reported exactly when it loses the format there."""
import inspect
import os
import subprocess
import sys
import traceback
import unittest

import torch

import layoutguard_torch as lgt
import lg_unittest
from snippets import DEVICE, REFERENCE_BUILD, SNIPPETS, backward_of, image

HERE = os.path.dirname(os.path.abspath(__file__))

# Decided by plain PyTorch, the guard off, before any test runs.
LOSES = {s.name: s.loses() for s in SNIPPETS}
LOSING = [s for s in SNIPPETS if LOSES[s.name]]


def offending_line(s):
    """The line of snippets.py that a violation must name: the snippet's own line for a forward
    loss, the backward() call for a loss in backward (autograd runs it from there)."""
    if LOSES[s.name] == "forward":
        return s.forward.__code__.co_firstlineno
    lines, first = inspect.getsourcelines(backward_of)
    return first + next(i for i, line in enumerate(lines) if ".backward(" in line)


def lost_or_kept(s):
    return f"loses ({LOSES[s.name]})" if LOSES[s.name] else "keeps"


class GroundTruth(unittest.TestCase):
    def test_every_snippet_loses_on_the_reference_build(self):
        if not REFERENCE_BUILD:
            self.skipTest(f"torch {torch.__version__} on {DEVICE}: the snippets were found on 1.13's CPU; "
                          + ", ".join(f"{s.name} {lost_or_kept(s)}" for s in SNIPPETS))
        self.assertEqual([s.name for s in SNIPPETS if not LOSES[s.name]], [])
        self.assertGreaterEqual(sum(1 for s in SNIPPETS if s.backward_only), 3)


class Record(unittest.TestCase):
    def test_each_snippet_names_its_user_level_op(self):
        for s in SNIPPETS:
            with self.subTest(s.name):
                lgt.clear_report()
                with lgt.guard("record"):
                    s.run()
                violations = lgt.report()["violations"]
                ops = [v["op"] for v in violations]
                # What this torch and device do, and where the bridge reported it (the table
                # in docs/torch.md is made from these lines).
                where = [(v["op"], v.get("autograd_node", "")) for v in violations]
                print(f"  {DEVICE.type} torch {torch.__version__}: {s.name}: {lost_or_kept(s)}; reported {where}")
                if not LOSES[s.name]:
                    self.assertEqual(ops, [], f"{s.name}: plain PyTorch keeps the format, yet reported {ops}")
                    continue
                if REFERENCE_BUILD:
                    self.assertEqual(ops, [s.op], f"{s.name}: reported {ops}")
                elif s.backward_only and LOSES[s.name] == "forward":
                    # The forward loses here too: reported there, and maybe again in backward.
                    self.assertIn(len(ops), (1, 2), f"{s.name}: reported {ops}")
                else:
                    self.assertEqual(len(ops), 1, f"{s.name}: reported {ops}")
                v = violations[0]
                self.assertEqual(v["depth"], 0)
                self.assertEqual(v["lost"], "channels_last")
                self.assertIn("channels_last", v["formats_in"])
                self.assertTrue(v["source_location"].startswith(f"{os.path.join(HERE, 'snippets.py')}:"
                                                                f"{offending_line(s)} in "), v["source_location"])
                if s.backward_only and LOSES[s.name] == "backward":
                    self.assertTrue(v.get("autograd_node"), f"{s.name}: no autograd node")
                    if REFERENCE_BUILD:
                        self.assertEqual(v["autograd_node"], s.node)
                else:
                    self.assertNotIn("autograd_node", v)

    def test_forward_calls_names_the_forward_line_that_made_the_node(self):
        # A loss in backward: with forward_calls=1 the report names the forward call that made
        # the node, on 1.13 as on 2.x, without anomaly mode; without the option it has no such
        # field, and the dump says how to keep it.
        in_backward = [s for s in LOSING if s.backward_only and LOSES[s.name] == "backward"]
        if REFERENCE_BUILD:
            self.assertGreaterEqual(len(in_backward), 3)
        settings = os.environ.get("LAYOUTGUARD_OPTIONS", "")
        try:
            for s in in_backward:
                with self.subTest(s.name):
                    made_at = f"{os.path.join(HERE, 'snippets.py')}:{s.forward.__code__.co_firstlineno} in <lambda>"
                    lgt.set_options(settings)
                    lgt.clear_report()
                    with lgt.guard("record"):
                        s.run()
                    (v,) = [v for v in lgt.report()["violations"] if v.get("autograd_node")]
                    self.assertNotIn("forward_call", v)
                    with self.assertRaises(lgt.LayoutViolationError) as raised, lgt.guard("throw"):
                        s.run()
                    self.assertIn("made by: a forward call whose line was not kept (LAYOUTGUARD_OPTIONS forward_calls=1 keeps it)",
                                  str(raised.exception))

                    lgt.set_options(f"{settings}:forward_calls=1" if settings else "forward_calls=1")
                    lgt.clear_report()
                    with lgt.guard("record"):
                        s.run()
                    (v,) = [v for v in lgt.report()["violations"] if v.get("autograd_node")]
                    self.assertEqual(v["forward_call"], made_at)
                    with self.assertRaises(lgt.LayoutViolationError) as raised, lgt.guard("throw"):
                        s.run()
                    self.assertIn(f"made by the forward call at: {made_at}\n", str(raised.exception))
        finally:
            lgt.set_options(settings)
            lgt.clear_report()

    def test_forward_calls_name_the_line_of_an_in_place_op(self):
        # In-place ops and views pass the bridge's key by, yet make nodes: with forward_calls=1
        # a loss in such a node's backward names their line too. sigmoid_backward takes the
        # layout of the contiguous gradient that a mean over H and W hands back.
        def step():
            y = image(2, 8, 6, 6) * 2
            y.sigmoid_()  # the forward call
            y.mean((2, 3)).sum().backward()

        made_at = f"{step.__code__.co_filename}:{step.__code__.co_firstlineno + 2} in step"
        settings = os.environ.get("LAYOUTGUARD_OPTIONS", "")
        try:
            lgt.clear_report()
            with lgt.guard("record"):
                step()
            found = [v for v in lgt.report()["violations"] if v["op"] == "aten::sigmoid_backward"]
            if not found:
                self.assertFalse(REFERENCE_BUILD, "sigmoid_backward loses channels_last on torch 1.13's CPU")
                self.skipTest(f"sigmoid_backward keeps channels_last on torch {torch.__version__}, {DEVICE}")
            self.assertNotIn("forward_call", found[0])

            lgt.set_options(f"{settings}:forward_calls=1" if settings else "forward_calls=1")
            lgt.clear_report()
            with lgt.guard("record"):
                step()
            (v,) = [v for v in lgt.report()["violations"] if v["op"] == "aten::sigmoid_backward"]
            self.assertEqual(v["forward_call"], made_at)
        finally:
            lgt.set_options(settings)
            lgt.clear_report()

    def test_the_passing_calls_key_leaves_with_the_option(self):
        # The views and in-place ops go through the bridge only while forward_calls=1 holds: the
        # first of them after the option is off takes the thread off their key again.
        def wrapper_key_included():
            return "GenericWrapper" in repr(torch._C._dispatch_tls_local_include_set())

        settings = os.environ.get("LAYOUTGUARD_OPTIONS", "")
        off = f"{settings}:forward_calls=0" if settings else "forward_calls=0"
        x = image(2, 8, 6, 6)
        try:
            with lgt.guard("record"):
                lgt.set_options(off)
                x.detach()  # a view, which takes the key off if an earlier test left it on
                self.assertFalse(wrapper_key_included())
                y = x * 2
                self.assertFalse(wrapper_key_included(), "a user-level call with the option off")
                lgt.set_options(f"{settings}:forward_calls=1" if settings else "forward_calls=1")
                y = x * 2
                self.assertTrue(wrapper_key_included(), "a user-level call with the option on")
                lgt.set_options(off)
                y.sigmoid_()
                self.assertFalse(wrapper_key_included(), "the first passing call with the option off")
        finally:
            lgt.set_options(settings)
            lgt.clear_report()

    def test_the_strides_show_the_loss(self):
        if not LOSES["softmax over C"]:
            self.skipTest(f"torch {torch.__version__} keeps channels_last in softmax over C on {DEVICE}")
        lgt.clear_report()
        with lgt.guard("record"):
            torch.softmax(image(2, 8, 6, 6), 1)
        v = lgt.report()["violations"][0]
        self.assertEqual(v["inputs"][0]["strides"], [288, 1, 48, 8])
        self.assertEqual(v["outputs"][0]["strides"], [288, 36, 6, 1])

    def test_nested_root_cause(self):
        if not REFERENCE_BUILD:
            self.skipTest(f"the nested op was found on 1.13's CPU; this is torch {torch.__version__} on {DEVICE}")
        lgt.clear_report()
        with lgt.guard("record"):
            torch.nn.functional.pad(image(2, 8, 6, 6), (1, 1, 1, 1), mode="circular")
        (v,) = lgt.report()["violations"]
        self.assertEqual(v["op"], "aten::pad")
        self.assertEqual(v["root_cause"], "aten::new_empty")

    def test_a_kept_format_reports_nothing(self):
        lgt.clear_report()
        with lgt.guard("record"):
            x = image(2, 8, 6, 6)
            y = torch.nn.functional.max_pool2d(torch.relu(x) + 1, 2)
            y.sum().backward()
        report = lgt.report()
        self.assertEqual(report["violations"], [])
        self.assertGreater(report["checked_calls"], 5)


class GradientSums(unittest.TestCase):
    """Between two backward nodes autograd sums the gradients of a tensor used more than once.
    Here the pooled branch's gradient (contiguous) arrives first and the product's
    (channels_last) second: torch 1.13 adds them out of place, and the sum is contiguous. The
    sum runs outside every node: it is reported under the node that finished last, the one whose
    gradient was added, never as a forward op. Torch 2.x sums in place (`add_`, which passes the
    bridge by) where it can: there the contiguous gradient shows at the next backward op that
    takes it, if any."""

    def test_a_sum_that_loses_names_the_node_that_finished_last(self):
        x = image(2, 8, 6, 6)
        y = x * 2 + torch.nn.functional.adaptive_avg_pool2d(x, 1)
        incoming = torch.randn_like(y).contiguous(memory_format=torch.channels_last)  # as backward_of's
        (raw,) = torch.autograd.grad(y, x, incoming)
        lgt.clear_report()
        with lgt.guard("record"):
            x = image(2, 8, 6, 6)
            backward_of(x * 2 + torch.nn.functional.adaptive_avg_pool2d(x, 1))
        violations = lgt.report()["violations"]
        print(f"  {DEVICE.type} torch {torch.__version__}: raw gradient strides {list(raw.stride())}; reported "
              f"{[(v['op'], v.get('autograd_node')) for v in violations]}")
        for v in violations:
            self.assertTrue(v.get("autograd_node"), f"{v['op']} reported as a forward op")
        if not REFERENCE_BUILD:
            self.skipTest(f"where the sum loses was found on 1.13's CPU; torch {torch.__version__} on {DEVICE} "
                          f"reported {[(v['op'], v.get('autograd_node')) for v in violations]}")
        self.assertFalse(raw.is_contiguous(memory_format=torch.channels_last))
        (v,) = violations
        self.assertEqual((v["op"], v["autograd_node"], v["module"]), ("aten::add", "MulBackward0", ""))
        self.assertEqual((v["formats_in"], v["formats_out"]), ("contiguous,channels_last", "contiguous"))
        self.assertTrue(v["source_location"].startswith(os.path.join(HERE, "snippets.py:")), v["source_location"])


class Throw(unittest.TestCase):
    def test_each_snippet_raises_at_the_offending_line(self):
        for s in SNIPPETS:
            with self.subTest(s.name):
                if not LOSES[s.name]:
                    with lgt.guard("throw"):
                        s.run()  # plain PyTorch keeps the format here: nothing may be raised
                    continue
                e = None
                with lgt.guard("throw"):
                    try:
                        s.run()
                    except lgt.LayoutViolationError as raised:
                        e = raised
                self.assertIsNotNone(e, f"{s.name}: nothing raised")
                self.assertIsInstance(e, RuntimeError)
                text = str(e)
                self.assertIn(f"[layoutguard] {s.op if REFERENCE_BUILD else ''}", text)
                self.assertIn(" lost channels_last", text)
                self.assertIn("order=acdb channels_last", text)
                # The snippets run in no nn.Module.
                self.assertIn("module: (top level: outside every named submodule)", text)
                self.assertIn(f"at: {os.path.join(HERE, 'snippets.py')}:{offending_line(s)} in ", text)
                # Python's own traceback passes through the snippet's line (then maybe into
                # torch's Python wrappers, where the op was called).
                files = [os.path.basename(f.filename) for f in traceback.extract_tb(e.__traceback__)]
                self.assertIn("snippets.py", files)

    def test_nothing_is_raised_for_a_kept_format(self):
        with lgt.guard("throw"):
            x = image(2, 8, 6, 6)
            torch.nn.functional.avg_pool2d(x * 2, 2).sum().backward()


class Warn(unittest.TestCase):
    def test_each_snippet_is_logged_once_by_the_runner(self):
        env = dict(os.environ, LAYOUTGUARD="warn", LAYOUTGUARD_OPTIONS="summary=1")
        run = subprocess.run([sys.executable, "-m", "layoutguard_torch", os.path.join(HERE, "run_snippets.py")],
                             env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(f"ran {len(SNIPPETS)} snippets", run.stdout)
        # One warning per losing snippet (two where a backward-only one loses in forward too):
        # three snippets share aten::pad, each at its own line.
        twice = sum(1 for s in LOSING if s.backward_only and LOSES[s.name] == "forward")
        self.assertIn(run.stderr.count(" lost channels_last"), range(len(LOSING), len(LOSING) + twice + 1),
                      run.stderr[-3000:])
        for op in {s.op for s in LOSING} if REFERENCE_BUILD else ():
            expected = sum(1 for s in LOSING if s.op == op)
            self.assertEqual(run.stderr.count(f"[warning] {op} lost channels_last"), expected,
                             f"{op}: {run.stderr[-3000:]}")
        self.assertIn("[layoutguard] summary: ", run.stderr)

    def test_runner_defaults_to_warn(self):
        env = {k: v for k, v in os.environ.items() if k != "LAYOUTGUARD"}
        run = subprocess.run([sys.executable, "-m", "layoutguard_torch", "--", os.path.join(HERE, "run_snippets.py")],
                             env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(" lost channels_last" if LOSING else f"ran {len(SNIPPETS)} snippets", run.stderr + run.stdout)


if __name__ == "__main__":
    lg_unittest.main()

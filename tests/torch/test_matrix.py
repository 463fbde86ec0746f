"""python3 -m layoutguard_torch.matrix: a fresh run on a fixed set of ops and modules agrees
with the committed torch 1.13 CPU table; the facts the table states for group_norm,
max_pool2d and reflection padding hold in plain PyTorch; and the bad inputs (--device cuda
without a GPU, a glob that matches nothing, no expecttest) each exit 2 with one line."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.nn.functional as F

import lg_unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "..", "..", "docs", "torch-support", "torch-1.13-cpu.json")
HAS_EXPECTTEST = importlib.util.find_spec("expecttest") is not None
NO_EXPECTTEST = "expecttest is not installed for this Python (pip install expecttest): torch's op_db needs it"
IS_113 = torch.__version__.startswith("1.13")

OPS = [
    "nn.functional.group_norm", "nn.functional.max_pool2d", "nn.functional.pad.reflect",
    "nn.functional.pad.replicate", "nn.functional.pad.circular", "nn.functional.pad.constant",
    "softmax", "log_softmax", "nn.functional.layer_norm", "nn.functional.instance_norm",
    "nn.functional.batch_norm", "nn.functional.conv2d", "nn.functional.conv_transpose2d",
    "nn.functional.avg_pool2d", "nn.functional.avg_pool3d", "nn.functional.adaptive_avg_pool2d",
    "nn.functional.adaptive_max_pool2d", "nn.functional.interpolate.bilinear",
    "nn.functional.interpolate.bicubic", "nn.functional.interpolate.nearest",
    "nn.functional.pixel_shuffle", "nn.functional.upsample_nearest", "nn.functional.relu",
    "nn.functional.gelu", "nn.functional.hardtanh", "nn.functional.silu", "nn.functional.dropout",
    "nn.functional.local_response_norm", "nn.functional.grid_sample", "abs", "add", "mul",
    "atan2", "sigmoid", "tanh", "exp", "clamp", "where", "sum", "mean", "amax", "cumsum",
    "nn.functional.mse_loss", "nn.functional.nll_loss", "complex",
]
MODULES = [
    "nn.Conv2d", "nn.Conv3d", "nn.ConvTranspose2d", "nn.BatchNorm2d", "nn.BatchNorm3d",
    "nn.AdaptiveAvgPool2d", "nn.ELU", "nn.ReLU", "nn.Hardswish", "nn.Sigmoid", "nn.LazyConv2d",
]


def matrix(*args, python_prefix=()):
    env = dict(os.environ)
    env["LAYOUTGUARD_OPTIONS"] = "summary=0"
    cmd = [sys.executable, *python_prefix] + (["-m", "layoutguard_torch.matrix"] if not python_prefix else []) + list(args)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def channels_last(t):
    return t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous()


@unittest.skipUnless(HAS_EXPECTTEST, NO_EXPECTTEST)
class FreshRunAgreesWithTheCommittedTable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.json_path = os.path.join(cls.tmp.name, "fresh.json")
        args = ["-q", "--ops", ",".join(OPS), "--modules", ",".join(MODULES), "--json", cls.json_path]
        if IS_113:
            args += ["--check", TABLE]
        cls.fresh = matrix(*args)
        with open(cls.json_path) as f:
            cls.rows = {r["name"]: r for r in json.load(f)["rows"]}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @unittest.skipUnless(IS_113, "the committed table is torch 1.13's")
    def test_rows_agree_with_the_committed_table(self):
        self.assertEqual(self.fresh.returncode, 0, self.fresh.stderr)
        self.assertEqual(len(self.rows), len(OPS) + len(MODULES))

    def test_every_requested_row_ran(self):
        self.assertEqual(set(self.rows), set(OPS) | set(MODULES), self.fresh.stderr)
        tested = [n for n, r in self.rows.items() if r["forward"]["verdict"] != "untested"]
        self.assertGreaterEqual(len(tested), 40)

    @unittest.skipUnless(IS_113, "these are torch 1.13's facts")
    def test_known_verdicts(self):
        gn, mp, reflect = (self.rows[n] for n in ("nn.functional.group_norm", "nn.functional.max_pool2d",
                                                   "nn.functional.pad.reflect"))
        self.assertEqual((gn["forward"]["verdict"], gn["backward"]["verdict"]), ("keeps", "loses"))
        self.assertEqual(gn["backward"]["autograd_node"], "NativeGroupNormBackward0")
        self.assertEqual((mp["forward"]["verdict"], mp["backward"]["verdict"]), ("keeps", "keeps"))
        self.assertEqual(reflect["forward"]["verdict"], "loses")
        self.assertEqual(reflect["forward"]["root_cause"], "aten::reflection_pad2d")


@unittest.skipUnless(IS_113, "these are torch 1.13's facts")
class KnownFactsInPlainPyTorch(unittest.TestCase):
    """What the table says, asked of PyTorch without the bridge: the output's and the raw input
    gradient's strides (autograd.grad, which AccumulateGrad does not restride)."""

    def run_op(self, fn, shape=(2, 4, 8, 8)):
        x = torch.randn(*shape).contiguous(memory_format=torch.channels_last).requires_grad_()
        y = fn(x)
        (g,) = torch.autograd.grad(y, x, torch.ones_like(y))
        return y, g

    def test_group_norm_keeps_forward_loses_backward(self):
        y, g = self.run_op(lambda x: F.group_norm(x, 2))
        self.assertTrue(channels_last(y))
        self.assertFalse(channels_last(g))

    def test_max_pool2d_keeps_both(self):
        y, g = self.run_op(lambda x: F.max_pool2d(x, 2))
        self.assertTrue(channels_last(y))
        self.assertTrue(channels_last(g))

    def test_reflection_pad_loses_forward(self):
        y, _ = self.run_op(lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect"))
        self.assertFalse(channels_last(y))


class CompareTables(unittest.TestCase):
    """matrix.compare on the two committed CPU tables: the moves that were seen in PyTorch."""

    def compare(self, *paths):
        return subprocess.run([sys.executable, "-m", "layoutguard_torch.matrix.compare", *paths],
                              capture_output=True, text=True, timeout=120)

    def test_moves_between_1_13_and_2_11(self):
        newer = os.path.join(os.path.dirname(TABLE), "torch-2.11-cpu.json")
        run = self.compare(TABLE, newer)
        self.assertEqual(run.returncode, 0, run.stderr)
        rows = [line for line in run.stdout.splitlines() if line.startswith("| `")]
        self.assertIn("| `nn.functional.group_norm` | backward | loses | keeps |", run.stdout)
        self.assertIn("| `nn.functional.pad.reflect` | forward | loses | keeps |", run.stdout)
        # n/a, error and untested rows never appear: only keeps <-> loses.
        for line in rows:
            cells = [c.strip() for c in line.split("|")]
            self.assertEqual({cells[3], cells[4]}, {"keeps", "loses"}, line)

    def test_a_table_compared_with_itself_moves_nothing(self):
        run = self.compare(TABLE, TABLE)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(len(run.stdout.strip().splitlines()), 2, run.stdout)  # the header only

    def test_a_file_that_is_not_a_table(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write('{"rows": 3}')
            f.flush()
            run = self.compare(TABLE, f.name)
        self.assertEqual(run.returncode, 2)
        self.assertIn("not a matrix table", run.stderr)


class BadInputs(unittest.TestCase):
    def assertOneLineError(self, run, *words):
        self.assertEqual(run.returncode, 2, run.stderr)
        # PyTorch's own lines (glog style, "W1128 08:58:44.940000 ...", or torch 2.7's "No CUDA
        # runtime is found": a CUDA toolkit without a driver) are not the matrix's.
        lines = [l for l in run.stderr.splitlines() if l.startswith("layoutguard_torch.matrix")]
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertNotIn("Traceback", run.stderr)
        self.assertTrue(lines[0].startswith("layoutguard_torch.matrix: error: "), lines[0])
        for w in words:
            self.assertIn(w, lines[0])

    @unittest.skipIf(torch.cuda.is_available(), "this machine has a CUDA device")
    def test_cuda_without_a_gpu(self):
        self.assertOneLineError(matrix("--device", "cuda", "--ops", "add"), "--device cuda", "CUDA")

    @unittest.skipUnless(HAS_EXPECTTEST, NO_EXPECTTEST)
    def test_unknown_op_glob(self):
        self.assertOneLineError(matrix("--ops", "no_such_op*"), "--ops", "no_such_op*", "matches no OpInfo")

    @unittest.skipUnless(HAS_EXPECTTEST, NO_EXPECTTEST)
    def test_unknown_module_glob(self):
        self.assertOneLineError(matrix("--modules", "nn.NoSuchModule"), "--modules", "matches no ModuleInfo")

    def test_bad_numbers_name_the_option_and_the_value(self):
        for args, words in [(("--samples", "0"), ("--samples", "got 0")),
                            (("--jobs", "0"), ("--jobs", "got 0")),
                            (("--jobs", "100000"), ("--jobs", "got 100000")),
                            (("--timeout", "nan"), ("--timeout", "got nan")),
                            (("--timeout", "inf"), ("--timeout", "got inf")),
                            (("--timeout", "-1"), ("--timeout", "got -1"))]:
            with self.subTest(args):
                self.assertOneLineError(matrix("--ops", "add", *args), *words)

    def test_output_files_are_checked_before_the_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            for flag in ("--json", "--markdown"):
                self.assertOneLineError(matrix("--ops", "add", flag, tmp), flag, "is a directory")
                self.assertOneLineError(matrix("--ops", "add", flag, os.path.join(tmp, "no", "t.json")), flag,
                                        "no directory")

    def test_a_check_file_that_is_not_a_table(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, text in [("empty.json", "{}"), ("list.json", "[]"), ("rows.json", '{"meta": {"torch": "1"}, '
                                                                                         '"rows": [1]}')]:
                path = os.path.join(tmp, name)
                with open(path, "w") as f:
                    f.write(text)
                with self.subTest(name):
                    self.assertOneLineError(matrix("--ops", "add", "--check", path), "--check", path,
                                            "not a matrix table")

    def test_missing_expecttest(self):
        # None in sys.modules makes `import expecttest` fail as if it were not installed.
        code = ("import sys, runpy; sys.modules['expecttest'] = None; "
                "sys.argv = ['layoutguard_torch.matrix', '--ops', 'add']; "
                "runpy.run_module('layoutguard_torch.matrix', run_name='__main__', alter_sys=True)")
        self.assertOneLineError(matrix(python_prefix=("-c", code)), "expecttest", "pip install expecttest")


if __name__ == "__main__":
    lg_unittest.main()

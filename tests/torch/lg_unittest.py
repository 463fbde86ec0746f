"""Runs a module's unittest cases with the report on stdout, where meson's log and
scripts/count_tests.py read it ("Ran N tests", "OK" / "FAILED (failures=F, errors=E)")."""
import sys
import unittest


def main(module_name="__main__"):
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[module_name])
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)


def skip_without_torch_compile(test):
    """Skips `test` (a TestCase) where torch.compile cannot run: torch 1.13 has none, and torch
    2.0 none on Python 3.11. Asked inside the test: importing the compiler takes seconds."""
    import torch
    if not hasattr(torch, "compile"):
        test.skipTest(f"torch {torch.__version__} has no torch.compile (it came with 2.0)")
    from torch._dynamo.eval_frame import check_if_dynamo_supported
    try:
        check_if_dynamo_supported()
    except RuntimeError as e:
        test.skipTest(f"torch.compile does not run here: {e}")

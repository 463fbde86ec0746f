"""Runs a module's unittest cases with the report on stdout, where meson's log and
scripts/count_tests.py read it ("Ran N tests", "OK" / "FAILED (failures=F, errors=E)")."""
import sys
import unittest


def main(module_name="__main__"):
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[module_name])
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)

"""torchvision's resnet18, mobilenet_v2 and densenet121 run a channels_last training step
(forward, backward, SGD step) under record mode. The violations reported must be exactly the
real losses listed in docs/torch.md (KNOWN_LOSSES here), each shown by its strides; a properly
converted model without such a loss reports none. On another torch or device
(LG_TORCH_TEST_DEVICE), the table is 1.13's: there each violation must still be a real loss
shown by its strides, and the test prints them."""
import os
import subprocess
import sys
import unittest

import torch
import torchvision

import layoutguard_torch as lgt
import lg_unittest

DEVICE = torch.device(os.environ.get("LG_TORCH_TEST_DEVICE", "cpu"))
REFERENCE_BUILD = torch.__version__.startswith("1.13") and DEVICE.type == "cpu"

# Real losses of Debian's torch 1.13 on CPU, by model: (op, module) -> why. docs/torch.md
# lists the same. Any violation outside this table is a policy bug or a new loss: the test fails.
KNOWN_LOSSES = {
    "mobilenet_v2": {
        # The global average pool's gradient (MeanBackward1: expand, then div) comes back
        # contiguous; ReLU6's backward then follows its first operand, that gradient.
        ("aten::hardtanh_backward", "features.18.2"): "gradient of the 1x1 average pool is contiguous",
    },
}


def training_step(model, size):
    torch.manual_seed(0)
    model = model.to(device=DEVICE, memory_format=torch.channels_last).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(2, 3, size, size, device=DEVICE).contiguous(memory_format=torch.channels_last)
    target = torch.randint(0, 10, (2,), device=DEVICE)
    lgt.clear_report()
    with lgt.guard("record"):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
    return lgt.report()


def losses(report):
    return {(v["op"], v["module"]): v for v in report["violations"]}


class Models(unittest.TestCase):
    def check_model(self, name, model, size):
        report = training_step(model, size)
        self.assertGreater(report["checked_calls"], 100)
        found = losses(report)
        for (op, module), v in found.items():
            print(f"  {DEVICE.type} torch {torch.__version__}: {name}: {op} at {module} "
                  f"({v.get('autograd_node', 'forward')}): {v['formats_in']} -> {v['formats_out']}")
        # The known losses were found on 1.13's CPU; elsewhere each report must still show a
        # real loss in its strides (below).
        if REFERENCE_BUILD:
            expected = KNOWN_LOSSES.get(name, {})
            unexpected = {k: (v["formats_in"], v["formats_out"], v.get("autograd_node")) for k, v in found.items()
                          if k not in expected}
            self.assertEqual(unexpected, {}, f"{name}: violations outside the known losses")
            # And every known loss is found: a bridge that reported nothing would pass the above.
            self.assertEqual(sorted(set(expected) - set(found)), [], f"{name}: known losses not reported")
        for key, v in found.items():
            # A real loss: a channels_last input's strides against an output's contiguous ones.
            self.assertIn("channels_last", v["formats_in"], key)
            self.assertIn("contiguous", v["formats_out"], key)

    def test_resnet18(self):
        self.check_model("resnet18", torchvision.models.resnet18(num_classes=10), 64)

    def test_mobilenet_v2(self):
        self.check_model("mobilenet_v2", torchvision.models.mobilenet_v2(num_classes=10), 64)

    def test_densenet121(self):
        self.check_model("densenet121", torchvision.models.densenet121(num_classes=10), 64)

    def test_a_properly_converted_model_reports_zero(self):
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32),
            torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10))
        report = training_step(model, 32)
        self.assertEqual(report["violations"], [])
        self.assertGreater(report["checked_calls"], 20)



class SurveyScript(unittest.TestCase):
    """scripts/torch-models, the survey behind docs/torch.md's model tables."""
    ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def survey(self, models):
        # LG_TORCH_LIBRARY is BUILD/src/torch/liblayoutguard_torch.so.
        build = os.path.dirname(os.path.dirname(os.path.dirname(os.environ["LG_TORCH_LIBRARY"])))
        return subprocess.run(["bash", os.path.join(self.ROOT, "scripts", "torch-models"), build, models],
                              env=dict(os.environ, LG_TORCH_PYTHON=sys.executable), capture_output=True,
                              text=True, timeout=600)

    @unittest.skipIf(DEVICE.type != "cpu", "the survey runs on the CPU")
    def test_lists_each_models_violations(self):
        run = self.survey("resnet18,mobilenet_v2@64")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertRegex(run.stdout, r"(?m)^resnet18: \d+ calls checked, 0 violations$")
        self.assertRegex(run.stdout, r"(?m)^mobilenet_v2@64: \d+ calls checked, 1 violations$")
        self.assertRegex(run.stdout, r"(?m)^  aten::hardtanh_backward in HardtanhBackward0 x1, first at features\.18\.2: ")

    def test_refuses_unknown_models_and_sizes(self):
        for models, message in [("resnet18,nosuch", r"no model 'nosuch' in torchvision"),
                                ("resnet18@8", "an image side of at least 32 pixels"),
                                ("timm:no_such_model", r"no model 'no_such_model' in timm|timm is not installed")]:
            run = self.survey(models)
            self.assertEqual(run.returncode, 2, models)
            self.assertRegex(run.stderr, message)
            self.assertEqual(run.stdout, "", "no model runs before every name is checked")


if __name__ == "__main__":
    lg_unittest.main()

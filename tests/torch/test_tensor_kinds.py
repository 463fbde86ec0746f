"""The bridge reads only the tensors whose layout PyTorch itself can tell, and never changes what
a program does: under vmap and torch.func's transforms, with nested, sparse, mkldnn, quantized and meta
tensors and a subclass that answers for its own strides, each block runs in throw mode exactly
as it runs without the bridge and reports nothing. Subclasses with PyTorch's own strides
(__torch_function__ subclasses, fake tensors) are checked as any tensor."""
import os
import sys
import tempfile
import unittest

import torch
import torch.nn.functional as F

import layoutguard_torch as lgt
import lg_unittest

try:
    from torch import vmap  # torch 2.x
except ImportError:
    from torch._vmap_internals import vmap  # torch 1.13's own
try:
    from torch.func import functional_call, grad
except ImportError:
    grad = None
NO_TORCH_FUNC = f"torch {torch.__version__} has no torch.func (its transforms came with 2.0)"


def channels_last(*sizes):
    torch.manual_seed(0)
    return torch.randn(*sizes).contiguous(memory_format=torch.channels_last)


def same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if a.is_nested:
        return all(same(x, y) for x, y in zip(a.unbind(), b.unbind()))
    if a.layout != torch.strided:
        a, b = a.to_dense(), b.to_dense()
    if a.is_quantized:
        a, b = a.dequantize(), b.dequantize()
    return a.shape == b.shape and a.stride() == b.stride() and (a.is_meta or torch.equal(a, b))


class TensorKinds(unittest.TestCase):
    def check(self, block):
        """`block` gives the same result, strides included, with the bridge throwing as without
        it, and the bridge reports no violation."""
        expected = block()
        lgt.clear_report()
        with lgt.guard("throw"):
            got = block()
        self.assertTrue(same(expected, got), f"{expected} against {got}")
        self.assertEqual(lgt.report()["violations"], [])

    def test_vmap(self):
        x, w = channels_last(4, 3, 8, 8), channels_last(5, 3, 3, 3)
        # Inside vmap each sample's strides are logical, and PyTorch raises when asked whether
        # one is channels_last: the bridge must not ask.
        self.check(lambda: vmap(lambda a: F.conv2d(a.unsqueeze(0), w))(x))
        self.check(lambda: vmap(lambda a: torch.relu(a) * 2)(x))
        # Nothing inside a transform is reported, not even a softmax over C, which loses the
        # format outside one.
        self.check(lambda: vmap(lambda a: torch.softmax(a, 1))(x.unsqueeze(0)))

    @unittest.skipIf(grad is None, NO_TORCH_FUNC)
    def test_per_sample_gradients(self):
        model = torch.nn.Conv2d(3, 5, 3).to(memory_format=torch.channels_last)
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = channels_last(4, 3, 8, 8)

        def loss(p, sample):
            return functional_call(model, p, (sample.unsqueeze(0),)).sum()

        self.check(lambda: vmap(grad(loss), in_dims=(None, 0))(params, x))

    @unittest.skipIf(grad is None, NO_TORCH_FUNC)
    def test_functionalized_tensors(self):
        # functionalize wraps each tensor in a FunctionalTensorWrapper, which answers for its
        # contiguity itself (C++ overrides, not the cached bits): the check asks the wrapper.
        from torch.func import functionalize
        x = channels_last(2, 8, 6, 6)
        self.check(lambda: functionalize(lambda a: torch.relu(a).add_(1) * 2)(x))
        lgt.clear_report()
        with lgt.guard("record"):
            functionalize(lambda a: torch.softmax(a * 2, 1))(x)
        self.assertIn("aten::softmax", [v["op"] for v in lgt.report()["violations"]])

    def test_nested_tensors(self):
        def parts():
            return torch.nested.nested_tensor([torch.ones(3, 4, 4), torch.ones(3, 5, 5)])

        self.check(lambda: parts() * 2)
        self.check(lambda: parts().clone())
        # With an events file every call with an image is read in full: a nested one is not read.
        with tempfile.TemporaryDirectory() as tmp:
            lgt.set_options("events=" + os.path.join(tmp, "events.jsonl"))
            try:
                self.check(lambda: parts() * 2)
            finally:
                lgt.set_options(os.environ.get("LAYOUTGUARD_OPTIONS", ""))

    def test_sparse_quantized_and_meta_tensors(self):
        x = channels_last(2, 3, 4, 4)
        self.check(lambda: x.to_sparse() * 2)
        self.check(lambda: x.to_sparse() + x.to_sparse())
        self.check(lambda: torch.quantize_per_tensor(x, 0.1, 0, torch.quint8))
        self.check(lambda: F.conv2d(x.to("meta"), channels_last(5, 3, 3, 3).to("meta")))

    @unittest.skipUnless(torch.backends.mkldnn.is_available(), "this torch is built without oneDNN (mkldnn tensors)")
    def test_mkldnn_tensors(self):
        # An opaque tensor of rank 4 with no strides to read: passed over, whatever bits its
        # TensorImpl holds.
        x = channels_last(2, 3, 4, 4)
        self.check(lambda: torch.relu(x.to_mkldnn()))
        w = torch.randn(5, 3, 3, 3).to_mkldnn()
        self.check(lambda: F.conv2d(x.contiguous().to_mkldnn(), w))

    def test_tensors_without_elements(self):
        # No sample points (a detector's empty batch of boxes): PyTorch gives a tensor with a
        # zero-size dim contiguous strides, whatever the input's. There is no data whose order
        # could be lost, and throw mode must not stop such a program.
        image = channels_last(1, 3, 8, 8)

        def sample(points):
            return F.grid_sample(image, torch.zeros(1, points, 4, 2), align_corners=False)

        self.check(lambda: sample(0))
        # With one row of points grid_sample does lose the format.
        with self.assertRaises(lgt.LayoutViolationError):
            with lgt.guard("throw"):
                sample(1)

    def test_a_subclass_that_answers_for_its_strides(self):
        # A wrapper subclass whose strides come from its own __torch_dispatch__, which answers
        # no question about its layout: plain PyTorch never asks one, so the bridge must not.
        if not hasattr(torch.Tensor, "_make_wrapper_subclass"):
            self.skipTest(f"torch {torch.__version__} has no wrapper subclasses")
        silent = {"is_contiguous", "stride", "sym_stride", "sym_size", "sym_numel", "sym_storage_offset"}

        class Opaque(torch.Tensor):
            @staticmethod
            def __new__(cls, elem):
                made = torch.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
                                                          device=elem.device, dispatch_sizes_strides_policy="strides")
                made.elem = elem
                return made

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                if func.overloadpacket.__name__ in silent:
                    raise NotImplementedError(f"Opaque does not answer {func}")
                unwrap = lambda a: a.elem if isinstance(a, Opaque) else a
                out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})
                if func.overloadpacket.__name__.endswith("_"):
                    return args[0]  # in place: the wrapper whose tensor changed
                return Opaque(out) if isinstance(out, torch.Tensor) else out

            def unwrap(self):
                return self.elem

        x = channels_last(2, 3, 4, 4)
        try:
            Opaque(x)
        except TypeError as e:  # no dispatch_sizes_strides_policy in this torch
            self.skipTest(f"torch {torch.__version__}: {e}")
        self.check(lambda: torch.softmax(Opaque(x), 1).unwrap())
        self.check(lambda: (x + Opaque(x)).unwrap())
        self.check(lambda: Opaque(torch.zeros(2, 3, 4, 4)).copy_(x).unwrap())

    def test_subclasses_with_their_own_strides_are_read(self):
        class Tagged(torch.Tensor):  # a __torch_function__ subclass: PyTorch's own strides
            pass

        x = channels_last(2, 8, 6, 6)
        lgt.clear_report()
        with lgt.guard("record"):
            torch.softmax(x.as_subclass(Tagged), 1)
        self.assertEqual([v["op"] for v in lgt.report()["violations"]], ["aten::softmax"])
        try:
            from torch._subclasses.fake_tensor import FakeTensorMode
        except ImportError:
            return
        lgt.clear_report()
        with lgt.guard("record"):
            with FakeTensorMode() as mode:
                torch.softmax(mode.from_tensor(x), 1)
        self.assertEqual([v["op"] for v in lgt.report()["violations"]], ["aten::softmax"])

    def test_compiled_functions_are_checked_as_traced(self):
        lg_unittest.skip_without_torch_compile(self)
        # The compiler traces the function's ops on fake tensors, with eager PyTorch's strides,
        # once per compilation: those calls are checked and named at the compiled call's line;
        # the compiled code's own runs are not dispatched op by op.
        x = channels_last(2, 8, 6, 6)
        compiled = torch.compile(lambda a: torch.softmax(a * 2, 1), backend="aot_eager")
        lgt.clear_report()
        with lgt.guard("record"):
            line = sys._getframe().f_lineno + 1
            y = compiled(x)
        self.assertFalse(y.is_contiguous(memory_format=torch.channels_last))
        sites = {v["source_location"] for v in lgt.report()["violations"] if v["op"] == "aten::softmax"}
        self.assertIn(f"{__file__}:{line} in test_compiled_functions_are_checked_as_traced", sites)
        # In throw mode the compiler wraps the LayoutViolationError in its own error, whose
        # message carries the dump.
        torch._dynamo.reset()
        compiled = torch.compile(lambda a: torch.softmax(a * 3, 1), backend="aot_eager")
        with self.assertRaisesRegex(RuntimeError, r"aten::softmax lost channels_last"):
            with lgt.guard("throw"):
                compiled(x)

    def test_a_loss_among_them_is_still_reported(self):
        # The same thread, right after: the check was skipped for those tensors only.
        x = channels_last(2, 8, 6, 6)
        lgt.clear_report()
        with lgt.guard("record"):
            vmap(lambda a: torch.relu(a))(x)
            torch.softmax(x, 1)
        self.assertEqual([v["op"] for v in lgt.report()["violations"]], ["aten::softmax"])


if __name__ == "__main__":
    lg_unittest.main()

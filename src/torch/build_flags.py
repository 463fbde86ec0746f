"""Prints what meson needs to build against the torch of this Python, one `key=value` a line:
version, cxx11_abi (0/1), include (repeated), libdir (repeated), cuda (0/1). Exit 1 without torch."""
import sys

try:
    import torch
    from torch.utils import cpp_extension
except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
    print(f"error=cannot import torch: {e}")
    sys.exit(1)

print(f"version={torch.__version__}")
print(f"cxx11_abi={int(torch._C._GLIBCXX_USE_CXX11_ABI)}")
for path in cpp_extension.include_paths():
    print(f"include={path}")
for path in cpp_extension.library_paths():
    print(f"libdir={path}")
print(f"cuda={int(torch.version.cuda is not None)}")

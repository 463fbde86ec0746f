#!/usr/bin/env bash
# Installs the build into a staging directory, then (1) builds and runs the libtorch C++ app
# with `pkg-config --cflags --libs layoutguard-torch` and the torch flags an application has
# anyway, and (2) imports the installed Python package, from the directory docs/torch.md names
# for Debian's Python, and catches a loss with it.
#   check_installed.sh BUILD_ROOT SOURCE_DIR PYTHON TORCH_INCLUDE... -- TORCH_LIBDIR...
set -euo pipefail
build_root="$1"; source_dir="$2"; python="$3"; shift 3
torch_flags=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do torch_flags+=(-isystem "$1"); shift; done
[ "$#" -gt 0 ] && shift
for dir in "$@"; do torch_flags+=(-L"$dir" -Wl,-rpath,"$dir"); done
source "$source_dir/tests/consumer/stage_install.sh"
stage_install "$build_root" layoutguard-torch
# -g: the app checks that a forward call is named by its line, from its debug information.
c++ -std=c++20 -g "$source_dir/tests/torch/cpp_app.cpp" $flags "${torch_flags[@]}" -ltorch_cpu -lc10 \
  -o "$stage/cpp_app"
LD_LIBRARY_PATH="$libdir" LAYOUTGUARD=record LAYOUTGUARD_OPTIONS=summary=0 "$stage/cpp_app" | tail -n 1
# No code change: linking is enough, even where the linker drops libraries nothing calls. Built
# without -g, its report's line is the function the symbol table names; stripped, the program's
# offset, which addr2line reads.
c++ -std=c++20 "$source_dir/tests/torch/no_code_change.cpp" -Wl,--as-needed $flags "${torch_flags[@]}" -ltorch_cpu \
  -lc10 -o "$stage/no_code_change"
warned="$(LD_LIBRARY_PATH="$libdir" LAYOUTGUARD=warn LAYOUTGUARD_OPTIONS=summary=0 "$stage/no_code_change" 2>&1)"
grep -q "aten::softmax lost channels_last" <<<"$warned" ||
  { echo "a program that only links liblayoutguard_torch was not checked (--as-needed):"; echo "$warned"; exit 1; }
grep -q "at: main in no_code_change\$" <<<"$warned" ||
  { echo "the report of a program without debug information names no function of its symbol table:"; echo "$warned"; exit 1; }
strip "$stage/no_code_change"
warned="$(LD_LIBRARY_PATH="$libdir" LAYOUTGUARD=warn LAYOUTGUARD_OPTIONS=summary=0 "$stage/no_code_change" 2>&1)"
grep -Eq "at: no_code_change\+0x[0-9a-f]+ \(no debug information\)" <<<"$warned" ||
  { echo "the report of a stripped program names no offset in it:"; echo "$warned"; exit 1; }
echo "no-code-change program: checked"

package="$(find "$stage" -path '*/layoutguard_torch/__init__.py' | head -n 1)"
[ -n "$package" ] || { echo "the Python package layoutguard_torch was not installed"; exit 1; }
ls "$(dirname "$package")"/_C*.so >/dev/null
site="$(dirname "$(dirname "$package")")"
echo "python package: ${site#"$stage"}"
# Where docs/torch.md says it goes for Debian's Python: PREFIX/lib/python3/dist-packages.
prefix="$(meson introspect "$build_root" --buildoptions |
  "$python" -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')"
if "$python" -c 'import sys; sys.exit(0 if sys.base_prefix == "/usr" and any(p.endswith("/dist-packages") for p in sys.path) else 1)'; then
  [ "${site#"$stage"}" = "$prefix/lib/python3/dist-packages" ] ||
    { echo "installed in ${site#"$stage"}, not in $prefix/lib/python3/dist-packages as documented"; exit 1; }
fi
cd "$stage"  # not the source tree: nothing but the installed package may be imported
LD_LIBRARY_PATH="$libdir" PYTHONPATH="$site" "$python" - <<'PY'
import torch
import layoutguard_torch as lgt
assert lgt.__file__.startswith(__import__("os").getcwd()), lgt.__file__
with lgt.guard("record"):
    torch.softmax(torch.randn(1, 4, 3, 3).contiguous(memory_format=torch.channels_last), 1)
ops = [v["op"] for v in lgt.report()["violations"]]
assert ops == ["aten::softmax"], ops
print("installed package: ok")
PY

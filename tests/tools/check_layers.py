#!/usr/bin/env python3
"""The layers of src/ depend one way (docs/design.md, "Layers and the direction of
dependencies"): each folder includes private headers ("folder/file.h") only from the folders
this table allows. Lists every include that breaks it.
    check_layers.py SRC_DIR"""
import pathlib
import re
import sys

# folder -> the folders whose private headers it may include (its own always).
ALLOWED = {
    "core": set(),
    "dispatch": {"core"},
    "guard": {"dispatch", "core"},
    "ops": {"dispatch", "core"},
    "cpu": {"dispatch", "core"},
    "cuda": {"dispatch", "core"},
    "no_cuda": {"dispatch", "core"},
    "nn": {"core"},
    "audit": {"guard", "dispatch", "core"},
    "torch": {"guard", "dispatch", "core"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main():
    src = pathlib.Path(sys.argv[1])
    broken = []
    seen = 0
    for path in sorted(src.rglob("*")):
        if path.suffix not in {".h", ".cpp", ".cu", ".cuh", ".def"}:
            continue
        folder = path.relative_to(src).parts[0]
        if folder not in ALLOWED:
            broken.append(f"{path}: folder '{folder}' has no row in the layer table")
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            seen += 1
            target = m.group(1)
            if target != folder and target not in ALLOWED[folder] and (src / target).is_dir():
                broken.append(f"{path.relative_to(src)}:{number}: src/{folder} includes {line.strip()}")
    if broken:
        print("layer rule broken (docs/design.md, 'Layers and the direction of dependencies'):")
        print("\n".join(broken))
        return 1
    print(f"{seen} private includes across {len(ALLOWED)} folders follow the layer table")
    return 0


if __name__ == "__main__":
    sys.exit(main())

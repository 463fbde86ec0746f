#!/usr/bin/env bash
# Installs the build into a staging directory, then compiles and runs tests/consumer with
# nothing but `pkg-config --cflags --libs layoutguard`, as an application would.
set -euo pipefail
build_root="$1"; source_dir="$2"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

meson install -C "$build_root" --no-rebuild --quiet --destdir "$stage" >/dev/null
pc="$(find "$stage" -name layoutguard.pc | head -n 1)"
[ -n "$pc" ] || { echo "layoutguard.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
# The sysroot makes pkg-config prefix the staging tree to the -I and -L paths, as if the files
# were installed at their real prefix.
flags="$(PKG_CONFIG_SYSROOT_DIR="$stage" pkg-config --cflags --libs layoutguard)"
echo "pkg-config: $flags"
c++ -std=c++20 "$source_dir/tests/consumer/consumer.cpp" $flags -o "$stage/consumer"
libdir="$stage$(pkg-config --variable=libdir layoutguard)"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$stage/consumer"

#!/usr/bin/env bash
# Installs the build into a staging directory, then builds and runs tests/consumer with CMake
# (find_package(layoutguard), target layoutguard::layoutguard), as a CMake application would.
set -euo pipefail
build_root="$1"; source_dir="$2"
source "$source_dir/tests/consumer/stage_install.sh"
stage_install "$build_root" layoutguard
config="$(find "$stage" -name layoutguardConfig.cmake | head -n 1)"
[ -n "$config" ] || { echo "layoutguardConfig.cmake was not installed"; exit 1; }
echo "cmake config: ${config#$stage}"
cmake -S "$source_dir/tests/consumer/cmake" -B "$stage/cmake-build" -G Ninja \
      -DCMAKE_PREFIX_PATH="$(dirname "$config")" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$stage/cmake-build" >/dev/null
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$stage/cmake-build/consumer"

#!/usr/bin/env bash
# Installs the build into a staging directory, then compiles and runs tests/consumer with
# nothing but `pkg-config --cflags --libs layoutguard`, as an application would.
set -euo pipefail
build_root="$1"; source_dir="$2"
source "$source_dir/tests/consumer/stage_install.sh"
stage_install "$build_root" layoutguard
c++ -std=c++20 "$source_dir/tests/consumer/consumer.cpp" $flags -o "$stage/consumer"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$stage/consumer"

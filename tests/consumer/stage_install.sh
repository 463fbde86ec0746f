# Sourced by the install tests: stage_install BUILD_ROOT PC_NAME installs the build into a
# fresh staging directory ($stage, removed at exit) and sets $flags to
# `pkg-config --cflags --libs PC_NAME` with the staging tree as sysroot (the -I and -L paths
# point into it, as if the files were installed at their real prefix) and $libdir to the
# staged library directory. pkg-config sees the staged .pc files and no others.
stage_install() {
  local build_root="$1" name="$2"
  stage="$(mktemp -d)"
  trap 'rm -rf "$stage"' EXIT
  meson install -C "$build_root" --no-rebuild --quiet --destdir "$stage" >/dev/null
  local pc
  pc="$(find "$stage" -name "$name.pc" | head -n 1)"
  [ -n "$pc" ] || { echo "$name.pc was not installed"; exit 1; }
  # Only the staged .pc files: one that needs a module the program does not (a -dev package
  # the library used privately) fails here, as on a machine without that package.
  export PKG_CONFIG_LIBDIR="$(dirname "$pc")"
  unset PKG_CONFIG_PATH
  flags="$(PKG_CONFIG_SYSROOT_DIR="$stage" pkg-config --cflags --libs "$name")"
  echo "pkg-config: $flags"
  libdir="$stage$(pkg-config --variable=libdir "$name")"
}

# Shared helpers for scripts/*: sourced, never run.
# Puts the CUDA toolkit on PATH (meson 1.0.1 finds nvcc only through PATH) and
# routes compiles through ccache so repeated CI runs and sanitizer rebuilds are cheap.

LG_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export LG_ROOT

if [ -d /usr/local/cuda/bin ]; then
  case ":$PATH:" in *":/usr/local/cuda/bin:"*) ;; *) PATH="/usr/local/cuda/bin:$PATH" ;; esac
  export PATH
fi

# ccache keys must not depend on where the checkout lives: CI builds a fresh clone in another
# folder, and with -g ccache hashes the working directory unless told not to. Paths under the
# checkout are rewritten relative to it (base_dir), so a clone anywhere reuses this machine's
# cache; only the debug info's compilation directory may then name the first checkout.
export CCACHE_BASEDIR="$LG_ROOT"
export CCACHE_NOHASHDIR=1

lg_say() { printf '[layoutguard] %s\n' "$*"; }

# lg_configure BUILD_DIR [meson options...]: configure once, reconfigure when options change.
# `meson configure` rewrites the build's settings even when no value changes, and ninja then
# regenerates the whole build (the torch probe included): the options last given are kept in
# BUILD_DIR/.lg-options and only other ones reconfigure.
lg_configure() {
  local dir="$1"; shift
  local given="$*"
  # Explicit returns: callers test it in an `if`, where set -e does not stop a failing command.
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@" || return 1
  elif [ "$(cat "$dir/.lg-options" 2>/dev/null)" != "$given" ]; then
    meson configure "$dir" "$@" >/dev/null || { rm -f "$dir/.lg-options"; return 1; }
  fi
  printf '%s\n' "$given" >"$dir/.lg-options"
}

# lg_test_venv: prints the Python of build-venv/, a venv over Debian's Python made on first use
# (--system-site-packages, so Debian's torch stays visible) with the PyPI packages Debian lacks:
# expecttest, which torch's OpInfo database imports (the support-matrix test). When pip cannot
# reach PyPI, the venv stays without it and the tests that need it skip, saying why.
lg_test_venv() {
  local venv="$LG_ROOT/build-venv"
  [ -x "$venv/bin/python3" ] || /usr/bin/python3 -m venv --system-site-packages "$venv" >&2
  if ! "$venv/bin/python3" -c 'import expecttest' 2>/dev/null; then
    "$venv/bin/python3" -m pip install -q --disable-pip-version-check expecttest >&2 \
      || lg_say "test: pip could not install expecttest into $venv; the support-matrix test will skip" >&2
  fi
  printf '%s\n' "$venv/bin/python3"
}

lg_jobs() { nproc 2>/dev/null || echo 2; }

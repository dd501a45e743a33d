#!/usr/bin/env bash
# Sets up every interpreter the test suite runs on, idempotently, reusing what an earlier run
# left in the cache (default /var/cache/pep726hook, or $PEP726HOOK_CACHE):
#
#   host (Debian 12)   CPython 3.8-3.13 from pyenv (already there), PyPy 3.9 and the debug
#                      CPython 3.11 (python3.11-dbg) from apt-get
#   sid chroot         CPython 3.14 and 3.15 (+ -dev, -venv, -dbg, test suites), PyPy 3.11,
#                      and a free-threaded CPython 3.13t built from trixie's python3.13 source
#
#     bash tools/interpreters.sh host          # only the host's packages (PyPy 3.9, python3.11-dbg,
#                                              # debootstrap)
#     bash tools/interpreters.sh setup         # host + chroot: create or update the cache
#     bash tools/interpreters.sh run CMD...    # run CMD inside the chroot (the repository is
#                                              # mounted at /repo, the working directory)
#
# The archive's address is read from this machine's own apt sources at run time.  Needs root.
set -euo pipefail

CACHE="${PEP726HOOK_CACHE:-/var/cache/pep726hook}"
ROOT="$CACHE/sid"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
FT_PREFIX=/opt/python3.13t
# Bump when the package list or the build below changes, so cached chroots are brought up to date.
CHROOT_RECIPE=5
CHROOT_PACKAGES=(
    python3.14 python3.14-dev python3.14-venv libpython3.14-testsuite python3.14-dbg
    python3.15 python3.15-dev python3.15-venv libpython3.15-testsuite python3.15-dbg
    pypy3 pypy3-venv python3-venv python3-pip
    gcc clang libc6-dev make git ca-certificates valgrind dpkg-dev xz-utils
)

say() { printf '=== interpreters: %s\n' "$*" >&2; }

mirror() {
    # The first Debian archive (not -security, not a third-party repository) that apt uses here.
    local uri
    uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
               2>/dev/null \
           | grep -oE '(URIs:[[:space:]]*|^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)[a-z]+://[^[:space:]]+' \
           | grep -oE '[a-z]+://[^[:space:]]+' | grep -E '/debian/?$' | head -n 1 || true)"
    [ -n "$uri" ] || { echo "interpreters: no Debian archive in this machine's apt sources" >&2; exit 1; }
    echo "${uri%/}"
}

host_packages() {
    local missing=()
    command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
    if ! command -v pypy3 >/dev/null 2>&1 || ! pypy3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
        missing+=(pypy3 pypy3-venv)
    fi
    # The debug CPython of the native_debug session, and the headers to build against it.
    if ! command -v python3.11d >/dev/null 2>&1 || ! python3.11d -c 'import ensurepip, venv' >/dev/null 2>&1 \
            || [ ! -f /usr/include/python3.11d/Python.h ]; then
        missing+=(python3.11-dbg python3.11-dev python3.11-venv)
    fi
    if [ "${#missing[@]}" -gt 0 ]; then
        say "apt-get install ${missing[*]} (host)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

# Every command runs in a private mount namespace (unshare): its bind mounts vanish with it, so
# runs from several clones at once never see, or unmount, each other's /repo.
SHARED_MOUNTS='for d in proc sys dev dev/pts dev/shm; do mkdir -p "$1/$d"; mount --bind "/$d" "$1/$d"; done'

in_chroot() {
    # env -i: the host's PIP_*, PYTHON* and CA settings must not leak in.
    unshare --mount --propagation private sh -c "$SHARED_MOUNTS"'
        mkdir -p "$1/repo" && mount --bind "$2" "$1/repo"
        root="$1"; shift 2
        exec env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            LANG=C.UTF-8 TERM=dumb CI="${CI:-}" chroot "$root" "$@"' sh "$ROOT" "$REPO" "$@"
}

copy_ca_files() {
    mkdir -p "$ROOT/usr/local/share/ca-certificates" "$ROOT/etc/ssl/certs"
    cp -f /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/" 2>/dev/null || true
    cp -f /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
}

create_chroot() {
    local url="$1"
    say "debootstrap sid into $ROOT (about 2 minutes)"
    rm -rf "$ROOT.partial"
    mkdir -p "$CACHE"
    debootstrap --variant=minbase sid "$ROOT.partial" "$url" /usr/share/debootstrap/scripts/sid >&2
    mv "$ROOT.partial" "$ROOT"
}

configure_chroot() {
    local url="$1"
    cat >"$ROOT/etc/apt/apt.conf.d/99pep726hook" <<'EOF'
// The archive is a dated snapshot: its Release files are past their Valid-Until.
Acquire::Check-Valid-Until "false";
Acquire::Check-Date "false";
APT::Install-Recommends "false";
EOF
    cat >"$ROOT/etc/apt/sources.list" <<EOF
deb $url sid main
deb-src $url trixie main
EOF
    rm -f "$ROOT/etc/apt/sources.list.d/debian.sources"
    copy_ca_files
    cp -f /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
}

install_packages() {
    say "apt-get install ${CHROOT_PACKAGES[*]} (chroot)"
    in_chroot sh -c 'DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null' \
        sh "${CHROOT_PACKAGES[@]}"
    # ca-certificates regenerates the bundle without the host's proxy CA: put it back.
    copy_ca_files
}

build_free_threaded() {
    say "building free-threaded CPython 3.13t from trixie's python3.13 source (about 6 minutes)"
    in_chroot sh -c '
        set -e
        export DEBIAN_FRONTEND=noninteractive
        apt-get build-dep -y -qq python3.13 >/dev/null
        rm -rf /build && mkdir -p /build && cd /build
        apt-get source --download-only -qq python3.13 >/dev/null
        tar -xf python3.13_*.orig.tar.xz
        cd Python-3.13*/
        ./configure --quiet --disable-gil --prefix="$1" --without-ensurepip >/dev/null
        make -s -j"$(nproc)" >/dev/null 2>&1 || make -j"$(nproc)"
        make -s install >/dev/null
        cd / && rm -rf /build
        "$1/bin/python3.13t" -c "import sys; assert not sys._is_gil_enabled()"
        "$1/bin/python3.13t" -m ensurepip >/dev/null 2>&1 || true
    ' sh "$FT_PREFIX"
    ln -sf "$FT_PREFIX/bin/python3.13t" "$ROOT/usr/local/bin/python3.13t"
}

setup() {
    [ "$(id -u)" -eq 0 ] || { echo "interpreters: needs root (debootstrap, chroot)" >&2; exit 1; }
    host_packages
    local url
    url="$(mirror)"
    [ -f "$ROOT/.debootstrapped" ] || { rm -rf --one-file-system "$ROOT"; create_chroot "$url"; touch "$ROOT/.debootstrapped"; }
    configure_chroot "$url"
    if [ "$(cat "$ROOT/.recipe" 2>/dev/null)" != "$CHROOT_RECIPE" ]; then
        install_packages
        echo "$CHROOT_RECIPE" >"$ROOT/.recipe"
    fi
    if ! in_chroot "$FT_PREFIX/bin/python3.13t" -c 'import sys; assert not sys._is_gil_enabled()' 2>/dev/null; then
        build_free_threaded
    fi
    if ! in_chroot /opt/nox/bin/python -m nox --version >/dev/null 2>&1; then
        say "installing nox in the chroot (/opt/nox)"
        in_chroot sh -c 'python3 -m venv /opt/nox && /opt/nox/bin/pip install -q nox'
    fi
    copy_ca_files
    in_chroot sh -c 'for p in python3.14 python3.15 pypy3 python3.13t; do printf "  %-12s %s\n" "$p" "$($p -c "import sys, platform; print(platform.python_implementation(), sys.version.split()[0])")"; done' >&2
    echo "$ROOT"
}

run() {
    [ -f "$ROOT/.recipe" ] || { echo "interpreters: no chroot yet; run: bash tools/interpreters.sh setup" >&2; exit 1; }
    copy_ca_files
    in_chroot sh -c 'cd /repo && exec "$@"' sh "$@"
}

case "${1:-}" in
    host) host_packages ;;
    setup) setup ;;
    run) shift; run "$@" ;;
    *) echo "usage: bash tools/interpreters.sh host | setup | run CMD [ARGS...]" >&2; exit 2 ;;
esac

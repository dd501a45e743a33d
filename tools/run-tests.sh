#!/usr/bin/env bash
# The project's test command, for a developer machine or a fresh Debian machine as root:
#
#     bash tools/run-tests.sh                                  # everything (what CI runs)
#     bash tools/run-tests.sh -s tests-3.12 -- -k model        # any nox arguments instead
#     bash tools/run-tests.sh -s tests-3.15 tests-3.13t        # chroot sessions run in the chroot
#
# Everything runs on two sides at once, one core each:
#   host    lint, docs, packaging, tests on CPython 3.8-3.13 (pyenv) and PyPy 3.9 (Debian),
#           CPython's import suites, the C warnings check (gcc and clang) on 3.8-3.13
#   chroot  tests on CPython 3.14, 3.15, PyPy 3.11 and free-threaded 3.13t, import suites and
#           the C warnings check on 3.14, 3.15 and 3.13t (a Debian sid chroot that
#           tools/interpreters.sh sets up and caches)
# Installs what is missing (tools/interpreters.sh; nox with pip), then prints a summary.  Exits
# non-zero if any session failed (pytest's "no tests ran", exit 5, included).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n=== run-tests: %s\n' "$*"; }
CACHE="${PEP726HOOK_CACHE:-/var/cache/pep726hook}"
export PEP726HOOK_CACHE="$CACHE"

# --- the host's interpreters --------------------------------------------------------------
if ! command -v pyenv >/dev/null 2>&1 && [ -x "${PYENV_ROOT:-$HOME/.pyenv}/bin/pyenv" ]; then
    export PYENV_ROOT="${PYENV_ROOT:-$HOME/.pyenv}"
    export PATH="$PYENV_ROOT/bin:$PYENV_ROOT/shims:$PATH"
fi
if command -v pyenv >/dev/null 2>&1; then
    root="$(pyenv root)"
    case ":$PATH:" in *":$root/shims:"*) ;; *) export PATH="$root/shims:$PATH" ;; esac
    versions=()
    for minor in 3.13 3.12 3.11 3.10 3.9 3.8; do
        # The newest installed patch release of each minor version.
        v="$(ls -d "$root/versions/$minor".* 2>/dev/null | sed 's|.*/||' \
             | grep -E "^$minor\.[0-9]+$" | sort -t. -k3 -n | tail -n 1 || true)"
        [ -n "$v" ] && versions+=("$v")
    done
    if [ "${#versions[@]}" -gt 0 ]; then
        PYENV_VERSION="$(IFS=:; echo "${versions[*]}")"
        export PYENV_VERSION
    fi
    say "pyenv interpreters: ${PYENV_VERSION:-none}"
fi
# The host's packages (PyPy 3.9, debootstrap; apt-get, as root) only when a session may need
# them: `bash tools/run-tests.sh -s docs` (or lint, packaging, a CPython session) works on any
# machine with pyenv's CPythons, as any user.
needs_host_packages=1
if [ "$#" -gt 0 ]; then
    needs_host_packages=0 named_session=0 next_is_session=0
    for arg in "$@"; do
        [ "$arg" = "--" ] && break
        if [ "$next_is_session" -eq 1 ] || [ "${arg#-}" = "$arg" ]; then
            named_session=1
            case "$arg" in *pypy*) needs_host_packages=1 ;; esac
        fi
        case "$arg" in -s|--session|--sessions|-e) next_is_session=1 ;; -*) next_is_session=0 ;; esac
    done
    # No session named: nox runs them all, PyPy's too.
    [ "$named_session" -eq 1 ] || needs_host_packages=1
fi
if [ "$needs_host_packages" -eq 1 ]; then
    bash tools/interpreters.sh host
fi

NOX_PYTHON="${NOX_PYTHON:-python3}"
if ! "$NOX_PYTHON" -m nox --version >/dev/null 2>&1; then
    say "installing nox for $("$NOX_PYTHON" -c 'import sys; print(sys.executable)')"
    "$NOX_PYTHON" -m pip install -q --disable-pip-version-check nox
fi

# Sessions by side, as noxfile.py names them.
HOST_SESSIONS=(lint docs packaging
               check_c-3.8 check_c-3.9 check_c-3.10 check_c-3.11 check_c-3.12 check_c-3.13
               tests-3.8 tests-3.9 tests-3.10 tests-3.11 tests-3.12 tests-3.13 tests-pypy3.9
               cpython_import_tests-3.8 cpython_import_tests-3.9 cpython_import_tests-3.10
               cpython_import_tests-3.11 cpython_import_tests-3.12 cpython_import_tests-3.13)
CHROOT_SESSIONS=(check_c-3.14 check_c-3.15 check_c-3.13t
                 tests-3.14 tests-3.15 tests-pypy3.11 tests-3.13t
                 cpython_import_tests-3.14 cpython_import_tests-3.15)
is_chroot_session() {
    case "$1" in *-3.14|*-3.15|*-pypy3.11|*-3.13t) return 0 ;; *) return 1 ;; esac
}

# Virtual environments are kept in the cache, so that a fresh clone reuses their dependencies.
host_nox() { "$NOX_PYTHON" -m nox --envdir "$CACHE/nox-host" "$@"; }
chroot_nox() {
    bash tools/interpreters.sh run /opt/nox/bin/python -m nox --envdir /var/cache/nox "$@"
}

# --- nox arguments given: run just those ------------------------------------------------
if [ "$#" -gt 0 ]; then
    in_chroot=0 on_host=0 next_is_session=0
    for arg in "$@"; do
        [ "$arg" = "--" ] && break
        if [ "$next_is_session" -eq 1 ] || [ "${arg#-}" = "$arg" ]; then
            if is_chroot_session "$arg"; then in_chroot=1; else on_host=1; fi
        fi
        case "$arg" in -s|--session|--sessions|-e) next_is_session=1 ;; -*) next_is_session=0 ;; esac
    done
    if [ "$in_chroot" -eq 1 ] && [ "$on_host" -eq 1 ]; then
        echo "run-tests: name either chroot sessions (3.14, 3.15, pypy3.11, 3.13t) or host ones" >&2
        exit 2
    fi
    if [ "$in_chroot" -eq 1 ]; then
        bash tools/interpreters.sh setup >/dev/null
        chroot_nox "$@"
    else
        host_nox "$@"
    fi
    exit
fi

# --- everything: both sides at once ---------------------------------------------------------
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
declare -a names=() results=() times=()
record() { names+=("$1"); results+=("$2"); times+=("$3"); }

say "chroot side in the background (log printed after the host side): ${CHROOT_SESSIONS[*]}"
(
    start=$SECONDS status=0
    bash tools/interpreters.sh setup >"$logs/setup.log" 2>&1 || status=$?
    echo "$status $((SECONDS - start))" >"$logs/setup.status"
    start=$SECONDS
    if [ "$status" -eq 0 ]; then
        chroot_nox -s "${CHROOT_SESSIONS[@]}" >"$logs/chroot.log" 2>&1 || status=$?
    else
        echo "interpreter set-up failed; chroot sessions not run" >"$logs/chroot.log"
    fi
    echo "$status $((SECONDS - start))" >"$logs/chroot.status"
) &
chroot_pid=$!

say "host side: ${HOST_SESSIONS[*]}"
start=$SECONDS status=0
host_nox -s "${HOST_SESSIONS[@]}" || status=$?
record "host: lint, docs, packaging, C, 3.8-3.13, pypy3.9, import suites" "$status" "$((SECONDS - start))"

wait "$chroot_pid" || true
say "chroot interpreter set-up log"
cat "$logs/setup.log"
say "chroot side log"
cat "$logs/chroot.log"
read -r status took <"$logs/setup.status"
record "chroot: interpreter set-up" "$status" "$took"
if [ -f "$logs/chroot.status" ]; then
    read -r status took <"$logs/chroot.status"
    record "chroot: C, 3.14, 3.15, pypy3.11, 3.13t, import suites" "$status" "$took"
fi

say "summary"
failed=0
for i in "${!names[@]}"; do
    if [ "${results[$i]}" -eq 0 ]; then verdict=passed; else verdict="FAILED (exit ${results[$i]})"; failed=1; fi
    printf '  %-55s %-18s %5ss\n' "${names[$i]}" "$verdict" "${times[$i]}"
done
printf '  total %ss\n' "$SECONDS"
if [ "$failed" -ne 0 ]; then
    echo "run-tests: FAILED (see the nox session summaries above)"
    exit 1
fi
echo "run-tests: all sessions passed"

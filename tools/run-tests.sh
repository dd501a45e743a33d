#!/usr/bin/env bash
# The project's test command, for a developer machine or a fresh Debian machine as root:
#
#     bash tools/run-tests.sh                                  # everything (what CI runs)
#     bash tools/run-tests.sh -s tests-3.12 -- -k model        # any nox arguments instead
#     bash tools/run-tests.sh -s tests-3.15 tests-3.13t        # chroot sessions run in the chroot
#
# Everything runs on two sides at once, one core each:
#   host    lint, docs, packaging, tests on CPython 3.8-3.13 (pyenv) and PyPy 3.9 (Debian),
#           CPython's import suites, the C warnings check (gcc and clang) on 3.8-3.13, the
#           native engine's tests on Debian's debug CPython 3.11 (python3.11-dbg)
#   chroot  tests on CPython 3.14, 3.15, PyPy 3.11 and free-threaded 3.13t, import suites and
#           the C warnings check on 3.14, 3.15 and 3.13t, the native engine's tests on 3.14
#           under AddressSanitizer (a Debian sid chroot that tools/interpreters.sh sets up and
#           caches), then numpy's, lazy_loader's, Twisted's,
#           cryptography's and zope.deprecation's own tests on 3.14, plain and with pep726hook
# Installs what is missing (tools/interpreters.sh; nox into a virtual environment of the cache),
# then prints a summary.  Exits non-zero if any session failed (pytest's "no tests ran", exit 5,
# included).  The cache is $PEP726HOOK_CACHE, else /var/cache/pep726hook for root and
# ${XDG_CACHE_HOME:-~/.cache}/pep726hook for anyone else; $NOX_PYTHON names an interpreter that
# has nox, to use instead of the cache's own (docs/development.md).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n=== run-tests: %s\n' "$*"; }
# Everything this script keeps between runs (nox and its environments, the chroot) goes to one
# cache directory.  Root's default is /var/cache/pep726hook, where the chroot that only root can
# make and enter lives and CI finds what its earlier runs left; any other user's is their own
# cache directory, so that a contributor's run writes nowhere else.
if [ -n "${PEP726HOOK_CACHE:-}" ]; then
    CACHE="$PEP726HOOK_CACHE"
elif [ "$(id -u)" -eq 0 ]; then
    CACHE=/var/cache/pep726hook
else
    CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/pep726hook"
fi
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
            case "$arg" in *pypy*|*python3.11d*) needs_host_packages=1 ;; esac
        fi
        case "$arg" in -s|--session|--sessions|-e) next_is_session=1 ;; -*) next_is_session=0 ;; esac
    done
    # No session named: nox runs them all, PyPy's too.
    [ "$named_session" -eq 1 ] || needs_host_packages=1
fi
if [ "$needs_host_packages" -eq 1 ]; then
    bash tools/interpreters.sh host
fi

# nox runs from $NOX_PYTHON when that is set (an interpreter that has nox; nothing is installed
# into it), else from a virtual environment of its own in the cache, made once with python3.
if [ -n "${NOX_PYTHON:-}" ]; then
    if ! "$NOX_PYTHON" -m nox --version >/dev/null 2>&1; then
        echo "run-tests: NOX_PYTHON=$NOX_PYTHON cannot run nox (python -m nox); unset it to use a nox of the cache's own" >&2
        exit 2
    fi
else
    NOX_PYTHON="$CACHE/nox-venv/bin/python"
    if ! "$NOX_PYTHON" -m nox --version >/dev/null 2>&1; then
        say "installing nox into $CACHE/nox-venv"
        mkdir -p "$CACHE"
        rm -rf "$CACHE/nox-venv"
        python3 -m venv "$CACHE/nox-venv"
        "$NOX_PYTHON" -m pip install -q --disable-pip-version-check nox
    fi
fi

# Sessions by side, as noxfile.py names them.
HOST_SESSIONS=(lint docs packaging
               check_c-3.8 check_c-3.9 check_c-3.10 check_c-3.11 check_c-3.12 check_c-3.13
               tests-3.8 tests-3.9 tests-3.10 tests-3.11 tests-3.12 tests-3.13 tests-pypy3.9
               cpython_import_tests-3.8 cpython_import_tests-3.9 cpython_import_tests-3.10
               cpython_import_tests-3.11 cpython_import_tests-3.12 cpython_import_tests-3.13
               native_debug-python3.11d)
CHROOT_SESSIONS=(check_c-3.14 check_c-3.15 check_c-3.13t
                 tests-3.14 tests-3.15 tests-pypy3.11 tests-3.13t
                 cpython_import_tests-3.14 cpython_import_tests-3.15 native_asan
                 native_debug-python3.14d native_debug-python3.15d)
# Then, on the chroot side too (it has the time the host side takes for more interpreters):
# libraries' own test suites, each with arguments of its own.  The run of the patched
# libraries without pep726hook is left out: its outcome does not depend on pep726hook.
LIBRARY_RUNS=("-s real_packages-3.14"
              "-s deprecation_libraries-3.14 -- native class --no-fallback")
is_chroot_session() {
    case "$1" in
        *-3.14|*-3.15|*-pypy3.11|*-3.13t|*-python3.14d|*-python3.15d|native_asan) return 0 ;;
        *) return 1 ;;
    esac
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
    if [ "$status" -ne 0 ]; then
        echo "interpreter set-up failed; chroot sessions not run" >"$logs/chroot.log"
        exit
    fi
    start=$SECONDS status=0
    chroot_nox -s "${CHROOT_SESSIONS[@]}" >"$logs/chroot.log" 2>&1 || status=$?
    echo "$status $((SECONDS - start))" >"$logs/chroot.status"
    start=$SECONDS status=0
    for run in "${LIBRARY_RUNS[@]}"; do
        read -ra arguments <<<"$run"
        chroot_nox "${arguments[@]}" >>"$logs/chroot.log" 2>&1 || status=$?
    done
    echo "$status $((SECONDS - start))" >"$logs/libraries.status"
) &
chroot_pid=$!

say "host side: ${HOST_SESSIONS[*]}"
start=$SECONDS status=0
# Also into a log, for the failures listed after the summary.
host_nox -s "${HOST_SESSIONS[@]}" 2>&1 | tee "$logs/host.log" || status=$?
record "host: lint, docs, packaging, C, 3.8-3.13, pypy3.9, imports, 3.11d" "$status" "$((SECONDS - start))"

wait "$chroot_pid" || true
say "chroot interpreter set-up log"
cat "$logs/setup.log"
say "chroot side log"
cat "$logs/chroot.log"
read -r status took <"$logs/setup.status"
record "chroot: interpreter set-up" "$status" "$took"
if [ -f "$logs/chroot.status" ]; then
    read -r status took <"$logs/chroot.status"
    record "chroot: C, 3.14, 3.15, pypy3.11, 3.13t, imports, ASan" "$status" "$took"
fi
if [ -f "$logs/libraries.status" ]; then
    read -r status took <"$logs/libraries.status"
    record "chroot: real_packages, deprecation_libraries (3.14)" "$status" "$took"
fi

say "summary"
failed=0
for i in "${!names[@]}"; do
    if [ "${results[$i]}" -eq 0 ]; then verdict=passed; else verdict="FAILED (exit ${results[$i]})"; failed=1; fi
    printf '  %-66s %-18s %5ss\n' "${names[$i]}" "$verdict" "${times[$i]}"
done
printf '  total %ss\n' "$SECONDS"
if [ "$failed" -ne 0 ]; then
    # Last, where a reader of only the end of the output (a CI page) sees them.
    say "what failed (pytest's FAILED and ERROR lines, nox's failed sessions)"
    grep -hE '^(FAILED|ERROR) |nox > Session .* (failed|aborted)' "$logs"/*.log | tail -n 60 || true
    echo "run-tests: FAILED (see the nox session summaries above)"
    exit 1
fi
echo "run-tests: all sessions passed"

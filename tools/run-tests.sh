#!/usr/bin/env bash
# The project's test command, for a developer machine or a fresh Debian machine as root:
#
#     bash tools/run-tests.sh              # lint + tests on 3.8-3.13 and PyPy + CPython suites
#     bash tools/run-tests.sh -s tests-3.12 -- -k model   # any nox arguments instead
#
# Installs what is missing (pypy3 and pypy3-venv through apt-get, nox through pip), finds
# the CPython 3.8-3.13 interpreters under pyenv, then runs the nox sessions and prints a
# summary.  Exits non-zero if any session failed (pytest's "no tests ran", exit 5, included).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n=== run-tests: %s\n' "$*"; }

# --- interpreters -------------------------------------------------------------------------
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

if ! command -v pypy3 >/dev/null 2>&1 || ! pypy3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    say "installing pypy3 and pypy3-venv"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq pypy3 pypy3-venv >/dev/null
fi

NOX_PYTHON="${NOX_PYTHON:-python3}"
if ! "$NOX_PYTHON" -m nox --version >/dev/null 2>&1; then
    say "installing nox for $("$NOX_PYTHON" -c 'import sys; print(sys.executable)')"
    "$NOX_PYTHON" -m pip install -q --disable-pip-version-check nox
fi
nox() { "$NOX_PYTHON" -m nox "$@"; }

# --- sessions -----------------------------------------------------------------------------
if [ "$#" -gt 0 ]; then
    nox "$@"
    exit
fi

declare -a names=() results=() times=()
run() {
    local name="$1"; shift
    local start=$SECONDS status=0
    say "$name: nox $*"
    nox "$@" || status=$?
    names+=("$name"); results+=("$status"); times+=("$((SECONDS - start))")
}

run "lint + tests (3.8-3.13, pypy3)" -s lint tests
run "CPython import-system suites, plain vs hooked" -s cpython_import_tests

say "summary"
failed=0
for i in "${!names[@]}"; do
    if [ "${results[$i]}" -eq 0 ]; then verdict=passed; else verdict="FAILED (exit ${results[$i]})"; failed=1; fi
    printf '  %-50s %-18s %4ss\n' "${names[$i]}" "$verdict" "${times[$i]}"
done
printf '  total %ss\n' "$SECONDS"
if [ "$failed" -ne 0 ]; then
    echo "run-tests: FAILED (see the nox session summaries above)"
    exit 1
fi
echo "run-tests: all sessions passed"

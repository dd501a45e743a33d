#!/usr/bin/env bash
# Compiles every C file under src/ with gcc and with clang at -Wall -Wextra -Werror against
# the headers of each Python given (default: python3), so that a warning any of them emits,
# on any supported CPython, fails.  _memfind.c is compiled a second time with its portable
# search (no memmem(), as on Windows) forced.  Also checked: no variable-length arrays
# (-Wvla) and, with clang in strict C11 mode, no GNU extension at all (-Wgnu: statement
# expressions, zero-length arrays, case ranges, ...), which MSVC cannot compile.
#
#     bash tools/check-c.sh [PYTHON ...]        # noxfile.py's check_c session, per interpreter
#
# Installs clang with apt-get when it is missing and this runs as root on Debian/Ubuntu.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "check-c: apt-get install clang" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq clang >/dev/null
fi
for compiler in gcc clang; do
    command -v "$compiler" >/dev/null 2>&1 || { echo "check-c: $compiler not found" >&2; exit 1; }
done

mapfile -t sources < <(find src -name '*.c' | sort)
[ "${#sources[@]}" -gt 0 ] || { echo "check-c: no C files under src/" >&2; exit 1; }
[ "$#" -gt 0 ] || set -- python3

COMMON=(-c -o /dev/null -fPIC -Wall -Wextra -Werror -Wvla)
declare -A EXTRA=([gcc]="" [clang]="-std=c11 -Wgnu")
failed=0 checked=0
for python in "$@"; do
    info="$("$python" -c 'import sys, sysconfig
paths = sysconfig.get_paths()
free_threaded = "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""
print("%d.%d%s" % (sys.version_info[:2] + (free_threaded,)), paths["include"], paths["platinclude"])')" \
        || { echo "check-c: cannot run $python" >&2; exit 1; }
    read -r version include platinclude <<<"$info"
    [ -f "$include/Python.h" ] || { echo "check-c: no Python.h in $include ($python)" >&2; exit 1; }
    for source in "${sources[@]}"; do
        variants=("")
        case "$source" in */_memfind.c) variants+=("-DPEP726HOOK_MEMFIND_PORTABLE") ;; esac
        for compiler in gcc clang; do
            for variant in "${variants[@]}"; do
                # shellcheck disable=SC2086 # EXTRA and variant are word lists
                if ! "$compiler" "${COMMON[@]}" ${EXTRA[$compiler]} $variant \
                        -I"$include" -I"$platinclude" "$source"; then
                    echo "check-c: FAILED $compiler $variant $source (Python $version)" >&2
                    failed=1
                fi
                checked=$((checked + 1))
            done
        done
    done
    echo "check-c: Python $version: ${#sources[@]} files with gcc and clang" >&2
done
echo "check-c: $checked compilations, $([ "$failed" -eq 0 ] && echo all clean || echo FAILED)" >&2
exit "$failed"

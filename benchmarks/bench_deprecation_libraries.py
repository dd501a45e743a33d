"""Reads of a module whose names Twisted, cryptography or zope.deprecation deprecate, before and after pep726hook.

For each library, a module ``x = 1; Old = New`` whose ``Old`` is deprecated
through the library's own helper, called from the module's body as the
libraries' own modules call it:

* ``proxy``: the helper as the library ships it (Twisted's
  ``deprecatedModuleAttribute`` puts a ``_ModuleProxy`` in ``sys.modules``,
  cryptography's ``utils.deprecated`` a ``_ModuleWithDeprecations``,
  zope.deprecation's ``deprecated()`` a ``DeprecationProxy``);
* ``class`` and ``native``: the same helper converted to pep726hook
  (``CONVERTED_HELPERS`` below, the conversions docs/migrating-deprecations.md
  shows), under that engine (``PEP726HOOK_ENGINE``);

and ``plain``: the same module with nothing deprecated, the baseline.

Reads, ten per loop from a local name (``LOAD_ATTR``): ``x`` (a name that is
not deprecated), ``Old`` with the warnings filter ``ignore`` (the warning
machinery runs, nothing is shown: comparable across the libraries) and
``Old default`` with ``warnings.simplefilter("default")`` (shown once per call
site, every later read finds it in the call site's registry).  For ``plain``,
``Old`` is an ordinary name.

Each case is measured twice in one run: pyperf (median time per read, each
case in worker processes of its own) and callgrind (instructions per read: two
runs of a fresh interpreter with two loop counts, start-up and imports cancel
out, ``PYTHONHASHSEED=0``; ``_shared.per_iteration``).

The libraries come from the package index, into the venv that runs this
script::

    python -m pip install pyperf Twisted==26.10.0 cryptography==50.0.2 zope.deprecation==6.0

A library that is not installed is skipped with a message.  Ways to run it::

    python benchmarks/bench_deprecation_libraries.py --run --out build/benchmarks/libs-3.12.json
    python benchmarks/bench_deprecation_libraries.py -o times.json [pyperf options]
    python benchmarks/bench_deprecation_libraries.py --callgrind [--json-out counts.json]
    python benchmarks/bench_deprecation_libraries.py --render build/benchmarks/libs-*.json

``--run`` does both on this interpreter and writes one JSON file; ``--render``
writes the section "Deprecation helpers of real libraries" of
docs/benchmarks.md from such files.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
READS_PER_LOOP = 10
SECTION = "Deprecation helpers of real libraries"
LIBRARIES = {
    # library -> the module its helper lives in (what must be importable)
    "twisted": "twisted.python.deprecate",
    "cryptography": "cryptography.utils",
    "zope": "zope.deprecation",
}
READS = ("x", "Old", "Old default")

# The three helpers converted to pep726hook: the pep726hook branch of the
# conversions docs/migrating-deprecations.md shows.  Left out, as they never
# run here: the fallback to the old proxy when pep726hook is not importable
# (that is the "proxy" case), the retry with a factory for a name the module
# binds only after the call, and the check for a module already proxied.
CONVERTED_HELPERS = """
import sys
import warnings

import pep726hook

# -- Twisted: twisted/python/deprecate.py, deprecatedModuleAttribute ---------
from twisted.python.deprecate import (
    DEPRECATION_WARNING_FORMAT,
    _getDeprecationWarningString,
    getWarningMethod,
)


def _warn_through_warning_method(message, category, stacklevel):
    # setWarningMethod() may replace the method at any time: looked up per warning.
    getWarningMethod()(message, category, stacklevel=stacklevel)


def twisted_deprecatedModuleAttribute(version, message, moduleName, name):
    text = _getDeprecationWarningString(
        moduleName + "." + name, version, DEPRECATION_WARNING_FORMAT + ": " + message
    )
    pep726hook.deprecate_attribute(
        sys.modules[moduleName], name, text, warn=_warn_through_warning_method
    )


# -- cryptography: cryptography/utils.py, deprecated ---------------------------
def cryptography_deprecated(value, module_name, message, warning_class, name=None):
    module = sys.modules[module_name]
    pep726hook.enable(module)
    if name is None:
        # pyOpenSSL's form, ``X = deprecated(value, __name__, ...)``: the
        # module body stores the marker, which becomes the deprecation.
        return pep726hook.deprecated(value, message, category=warning_class)
    vars(module)[name] = value
    pep726hook.deprecate_attribute(module, name, message, category=warning_class)
    return value


# -- zope.deprecation: zope/deprecation/deprecation.py, deprecated -------------
from zope.deprecation import __show__


def _warn_unless_suppressed(message, category, stacklevel):
    # zope's Suppressor (and __show__.off()) silence every deprecation.
    if __show__():
        warnings.warn(message, category, stacklevel)


def zope_deprecated(specifier, message, cls=DeprecationWarning):
    module = sys.modules[sys._getframe(1).f_globals["__name__"]]
    names = (specifier,) if isinstance(specifier, str) else specifier
    for name in names:
        pep726hook.deprecate_attribute(
            module, name, name + ": " + message, category=cls, warn=_warn_unless_suppressed
        )
"""

# Each module's body deprecates ``Old`` with the library's helper, as the
# libraries' own modules do.  {helper} is the shipped helper or the converted one.
MODULE_HEAD = "x = 1\n\nclass New:\n    pass\n\nOld = New\n"
MODULE_BODIES = {
    "twisted": (
        "from incremental import Version\n{import_line}\n" + MODULE_HEAD + "\n"
        'deprecatedModuleAttribute(Version("bench", 1, 0, 0), "use New", __name__, "Old")\n'
    ),
    "cryptography": (
        "from cryptography import utils\n{import_line}\n" + MODULE_HEAD + "\n"
        'deprecated(New, __name__, "Old is deprecated; use New", utils.DeprecatedIn50, name="Old")\n'
    ),
    "zope": ("{import_line}\n" + MODULE_HEAD + '\ndeprecated("Old", "use New")\n'),
}
SHIPPED_IMPORTS = {
    "twisted": "from twisted.python.deprecate import deprecatedModuleAttribute",
    "cryptography": "from cryptography.utils import deprecated",
    "zope": "from zope.deprecation import deprecated",
}
CONVERTED_IMPORTS = {
    "twisted": "from bench_converted_helpers import "
    "twisted_deprecatedModuleAttribute as deprecatedModuleAttribute",
    "cryptography": "from bench_converted_helpers import cryptography_deprecated as deprecated",
    "zope": "from bench_converted_helpers import zope_deprecated as deprecated",
}


def installed_libraries() -> list[str]:
    """The libraries this interpreter has; a message for each one missing."""
    found = []
    for library, module in LIBRARIES.items():
        try:
            found_spec = importlib.util.find_spec(module) is not None
        except ImportError:
            found_spec = False
        if found_spec:
            found.append(library)
        else:
            print(f"skipped {library}: {module} is not installed", file=sys.stderr)
    return found


def engines() -> list[str]:
    import pep726hook

    return list(pep726hook.available_engines())


def cases(only: str = "") -> list[str]:
    """Every case this interpreter can run, in the order of the table.

    *only*: comma-separated prefixes ("plain,twisted/proxy"); empty for all.
    """
    names = ["plain/x", "plain/Old"]
    setups = ["proxy", *engines()]
    for library in installed_libraries():
        names += [f"{library}/{setup}/{read}" for setup in setups for read in READS]
    prefixes = tuple(prefix for prefix in only.split(",") if prefix)
    return [name for name in names if not prefixes or name.startswith(prefixes)]


def write_modules(directory: str) -> None:
    """The benchmark's modules, one per library and setup, and the converted helpers."""
    files = {"bench_plain": MODULE_HEAD, "bench_converted_helpers": CONVERTED_HELPERS}
    for library, body in MODULE_BODIES.items():
        files[f"bench_{library}_proxy"] = body.format(import_line=SHIPPED_IMPORTS[library])
        files[f"bench_{library}_pep726hook"] = body.format(import_line=CONVERTED_IMPORTS[library])
    for name, source in files.items():
        with open(os.path.join(directory, f"{name}.py"), "w", encoding="utf-8") as file:
            file.write(source)


def prepare(case: str, modules: str) -> tuple[Any, str]:
    """Set *case* up in this process; return the module and the attribute to read."""
    parts = case.split("/")
    read = parts[-1]
    warnings_filter = "default" if read == "Old default" else "ignore"
    import warnings

    warnings.simplefilter(warnings_filter)
    sys.path.insert(0, modules)
    if parts[0] == "plain":
        name = "bench_plain"
    else:
        library, setup = parts[0], parts[1]
        if setup != "proxy":
            os.environ["PEP726HOOK_ENGINE"] = setup
        name = f"bench_{library}_{'proxy' if setup == 'proxy' else 'pep726hook'}"
    # import_module returns what sys.modules holds once the body ran: the proxy.
    return importlib.import_module(name), read.split()[0]


def reader(attribute: str) -> Callable[[int, Any], float]:
    """A function timing *loops* x 10 reads of ``module.<attribute>`` (a local: LOAD_ATTR)."""
    # Imported here: the script's directory is on sys.path when it runs, not
    # when a test loads it from its file.
    from _shared import module_reader

    return module_reader(attribute, READS_PER_LOOP)


# -- pyperf -------------------------------------------------------------------------------


def run_pyperf() -> None:
    import pyperf

    def add_cmdline_args(cmd: list[str], args: argparse.Namespace) -> None:
        # Workers must register the same benchmarks in the same order.
        cmd.extend(["--modules", args.modules, "--rounds", str(args.rounds)])
        cmd.extend(["--only", args.only])

    runner = pyperf.Runner(add_cmdline_args=add_cmdline_args)
    runner.argparser.add_argument("--modules", default="")
    runner.argparser.add_argument("--only", default="", help="comma-separated case prefixes")
    runner.argparser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="register every case this many times, round-robin, as 'case#N' (as "
        "bench_module_access.py does): drift on a shared machine hits all cases alike",
    )
    args = runner.parse_args()
    if not args.modules:
        # The manager process: the workers import the modules from here.
        args.modules = tempfile.mkdtemp(prefix="pep726hook-bench-libraries-")
        write_modules(args.modules)
    prepared: dict[str, tuple[Any, Callable[[int, Any], float]]] = {}

    def timed(loops: int, case: str) -> float:
        # Set up on the first call, in the worker that runs this case only.
        if case not in prepared:
            module, attribute = prepare(case, args.modules)
            read = reader(attribute)
            read(2, module)  # the one warning "default" shows, and specialisation
            prepared[case] = (module, read)
        module, read = prepared[case]
        return read(loops, module)

    for round_ in range(args.rounds):
        for case in cases(args.only):
            name = case + (f"#{round_}" if args.rounds > 1 else "")
            runner.bench_time_func(name, timed, case, inner_loops=READS_PER_LOOP)


# -- callgrind ----------------------------------------------------------------------------

WORKER = """\
import sys
sys.path.insert(0, {here!r})
import bench_deprecation_libraries as bench
module, attribute = bench.prepare(sys.argv[1], {modules!r})
read = bench.reader(attribute)
read(2, module)
read(int(sys.argv[2]), module)
"""


def run_callgrind(json_out: str | None, only: str = "") -> dict[str, float]:
    sys.path.insert(0, HERE)
    from _shared import per_iteration

    counts: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="pep726hook-bench-libraries-") as modules:
        write_modules(modules)
        worker = WORKER.format(here=HERE, modules=modules)
        for case in cases(only):
            # A deprecated read costs thousands of instructions: fewer loops.
            loops = (2_000, 12_000) if case.endswith("/x") else (300, 1_800)
            counts[case] = per_iteration(worker, case, loops, READS_PER_LOOP)
            print(f"{case:>34}: {counts[case]:9.1f} instructions per read", flush=True)
    if json_out:
        with open(json_out, "w", encoding="utf-8") as file:
            json.dump(counts, file, indent=2)
    return counts


# -- both, and the docs -------------------------------------------------------------------

PYPERF_ARGS = ["--quiet", "-p", "2", "-n", "3", "-w", "1", "--min-time", "0.05", "--rounds", "2"]


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for distribution in ("pep726hook", "Twisted", "cryptography", "zope.deprecation"):
        with contextlib.suppress(PackageNotFoundError):
            found[distribution] = version(distribution)
    return found


def run_here(out: str, commit: str | None, only: str = "") -> None:
    """pyperf and callgrind on this interpreter; one JSON file with both."""
    sys.path.insert(0, HERE)
    from run_all import read_pyperf

    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pep726hook-bench-libraries-") as tmp:
        times_json = os.path.join(tmp, "times.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PEP726HOOK")}
        subprocess.run(
            [
                sys.executable,
                os.path.abspath(__file__),
                *PYPERF_ARGS,
                "--only",
                only,
                "-o",
                times_json,
            ],
            check=True,
            env=env,
        )
        times = read_pyperf(times_json)
    counts = run_callgrind(None, only)
    result = {
        "label": f"{platform.python_implementation()} {platform.python_version()}",
        "engines": engines(),
        "versions": versions(),
        "pep726hook_commit": commit,
        "times": times,
        "counts": counts,
    }
    with open(out, "w", encoding="utf-8") as file:
        json.dump(result, file, indent=2)
    print(markdown([result]))


def _ratio(value: float | None, base: float | None) -> str:
    return "" if not value or not base else f"{value / base:.2f}"


def markdown(results: list[dict[str, Any]]) -> str:
    """The docs section: per interpreter, each case's time and instructions, and ratios."""
    lines = [
        f"## {SECTION}",
        "",
        "Written by `python benchmarks/bench_deprecation_libraries.py --render` from the",
        "results of `--run` on each interpreter (the libraries installed from the package",
        "index into the benchmark's venv: `python -m pip install pyperf Twisted==26.10.0",
        "cryptography==50.0.2 zope.deprecation==6.0`; CPython 3.14 and 3.15 run in the sid",
        "chroot of tools/interpreters.sh). A module `x = 1; Old = New` whose `Old` the",
        "library's helper deprecates from the module body: `proxy` is the helper as the",
        "library ships it, `class`/`native` the same helper converted to pep726hook",
        "(docs/migrating-deprecations.md) under that engine. One read from a local name,",
        "ten per loop: pyperf median time per read (each case in worker processes of its",
        "own) and callgrind instructions per read (start-up cancelled out), side by side",
        "in one run. `x/plain`: the ratio to the same read of a plain module (for `Old`,",
        "a plain module's ordinary `Old`). `Old`: warnings filter `ignore`; `Old default`:",
        '`simplefilter("default")`, the warning shown once, then found in the registry.',
        "Times come from a shared 2-core machine under load; the instruction counts are",
        "the steadier measure.",
        "",
    ]
    for result in results:
        times, counts = result["times"], result["counts"]
        pins = ", ".join(f"{name} {version}" for name, version in result["versions"].items())
        commit = result.get("pep726hook_commit")
        lines += [f"### {result['label']}", ""]
        lines += [
            f"{pins}" + (f"; pep726hook at commit `{commit[:12]}`" if commit else "") + ".",
            "",
        ]
        lines += [
            "| case | ns per read | x/plain (time) | instructions per read | x/plain (instructions) |",
            "|---|---|---|---|---|",
        ]
        for case, count in counts.items():
            read = case.split("/")[-1].split()[0]
            base = f"plain/{read}"
            seconds = times.get(case)
            lines.append(
                f"| `{case}` | {'' if seconds is None else f'{seconds * 1e9:.1f}'} "
                f"| {_ratio(seconds, times.get(base))} | {count:.1f} "
                f"| {_ratio(count, counts.get(base))} |"
            )
        lines.append("")
    return "\n".join(lines)


def write_section(text: str, path: str) -> None:
    """Replace (or append) this script's section of the markdown file at *path*."""
    with open(path, encoding="utf-8") as file:
        page = file.read()
    heading = f"## {SECTION}\n"
    if heading in page:
        start = page.index(heading)
        following = page.find("\n## ", start + len(heading))
        end = len(page) if following < 0 else following + 1
        page = (
            page[:start] + text.rstrip("\n") + "\n" + ("\n" + page[end:] if following >= 0 else "")
        )
    else:
        page = page.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
    with open(path, "w", encoding="utf-8") as file:
        file.write(page)
    print(f"wrote the section {SECTION!r} of {path}")


def render(paths: list[str]) -> None:
    results = []
    for path in paths:
        with open(path, encoding="utf-8") as file:
            results.append(json.load(file))
    results.sort(key=lambda r: [int(p) for p in r["label"].split()[-1].split(".") if p.isdigit()])
    write_section(markdown(results), os.path.join(ROOT, "docs", "benchmarks.md"))


def main() -> None:
    if {"--run", "--callgrind", "--render"} & set(sys.argv[1:]):
        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("--run", action="store_true")
        parser.add_argument("--out", default=os.path.join(ROOT, "build", "benchmarks", "libs.json"))
        parser.add_argument("--commit", help="--run: the pep726hook commit measured")
        parser.add_argument("--callgrind", action="store_true")
        parser.add_argument("--json-out")
        parser.add_argument("--render", nargs="+", metavar="RESULTS_JSON")
        parser.add_argument("--only", default="", help="comma-separated case prefixes")
        args = parser.parse_args()
        if args.render:
            render(args.render)
        elif args.run:
            run_here(args.out, args.commit, args.only)
        else:
            run_callgrind(args.json_out, args.only)
        return
    run_pyperf()


if __name__ == "__main__":
    main()

"""Reads of a deprecating module and of other modules, pep726hook against the libraries' proxies.

A module ``x = 1; Old = New`` whose ``Old`` is deprecated, in one of these
ways (the *subject* of a case), each under a *setup*:

* ``twisted``, ``cryptography``, ``zope``: from the module's body, by the
  library's own helper, as the libraries' own modules call it; setup
  ``proxy`` is the helper as the library ships it (Twisted's
  ``deprecatedModuleAttribute`` puts a ``_ModuleProxy`` in ``sys.modules``,
  cryptography's ``utils.deprecated`` a ``_ModuleWithDeprecations``,
  zope.deprecation's ``deprecated()`` a ``DeprecationProxy``), setups
  ``native`` and ``class`` the same helper converted to pep726hook
  (``CONVERTED_HELPERS`` below, the conversions docs/migrating-deprecations.md
  shows) under that engine (``PEP726HOOK_ENGINE``);
* ``attribute``: ``pep726hook.deprecate_attribute(__name__, "Old", ...)`` at
  the end of the body; ``marker``: ``Old = pep726hook.deprecated(New, ...)``
  and ``pep726hook.enable(__name__)``; ``thousand``: a thousand names
  deprecated by ``deprecate_attribute()``, ``Old`` among them; each under
  ``native`` and ``class``;
* ``plain``: the same module with nothing deprecated, the baseline.

Reads, ten per loop, the module a local name (``LOAD_ATTR``):

* ``x``: a name that is not deprecated;
* ``Old``: the deprecated name, warnings filter ``ignore`` (the warning
  machinery runs, nothing is shown: comparable across the libraries);
* ``miss``: ``hasattr(m, "missing")``;
* ``other x``, ``other miss``: the same on another module, ``x = 1; Old =
  New`` with nothing deprecated, imported after the deprecating one
  (``missing`` is a name nobody deprecates: another module's miss of a
  deprecated name is ``bench_deprecation.py --case other-miss``).

Each case is measured twice in one run: pyperf (median time per read, each
case in worker processes of its own) and callgrind (instructions per read:
fresh interpreters that run every read of a subject and setup with two loop
counts, start-up and imports cancel out, ``PYTHONHASHSEED=0``;
``_shared.per_iteration_each``).  ``--run`` also records, without timing,
which instruction each read became once warm (``dis``'s adaptive form, 3.11+:
``LOAD_ATTR_MODULE`` is the specialised module read), the module's type, and,
on 3.12+, the type version tag of ``types.ModuleType`` (``_testcapi``) before
and after the import; and what importing a module costs (callgrind, per
import): a module of a thousand functions and one of a thousand names, each
plain and with one name (respectively all thousand) deprecated.

The libraries come from the package index, into the venv that runs this
script::

    python -m pip install pyperf Twisted==26.10.0 cryptography==50.0.2 zope.deprecation==6.0

(on 3.8, the newest releases that still install there).  A library that is
not installed is skipped with a message.  Ways to run it::

    python benchmarks/bench_deprecation_libraries.py --run --out build/benchmarks/libs-3.12.json
    python benchmarks/bench_deprecation_libraries.py -o times.json [pyperf options]
    python benchmarks/bench_deprecation_libraries.py --callgrind [--json-out counts.json]
    python benchmarks/bench_deprecation_libraries.py --inspect [--json-out facts.json]
    python benchmarks/bench_deprecation_libraries.py --render build/benchmarks/libs-*.json \
        [--before build/benchmarks/before/libs-*.json]

``--run`` does them all on this interpreter and writes one JSON file;
``--render`` writes the sections "A deprecating module against the proxies"
and "Deprecation helpers of real libraries" of docs/benchmarks-deprecation.md from such
files, with ``--before`` a table of an earlier pep726hook's figures beside
them.  ``--only`` (comma-separated case prefixes) narrows any of them.

The converted helpers and the thousand names run under the interpreter's
first engine only (native where it has one), pep726hook's two forms under
each engine: a whole run takes a few minutes.  The instruction counts do not
vary between runs of the same interpreter and code, so a few hundred reads
per loop count are enough.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

from _deprecation_library_cases import (
    CHEAP_READS,
    IMPORT_BODIES,
    IMPORT_COPIES,
    LOOPS_CHEAP,
    LOOPS_DEAR,
    MANY,
    READS,
    READS_PER_LOOP,
    base_case,
    cases,
    engines,
    groups,
    import_cases,
    prepare,
    reader,
    split_case,
    target,
    write_modules,
)

# The rest of the standard library this script uses is imported where it is
# used: the callgrind workers import this module, and every instruction
# they spend before the reads is spent once per run (see run_callgrind).

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SECTION = "Deprecation helpers of real libraries"
SUMMARY_SECTION = "A deprecating module against the proxies"

# -- pyperf -------------------------------------------------------------------------------


def run_pyperf() -> None:
    import tempfile

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
            group, read = split_case(case)
            module, other = prepare(group, args.modules)
            read_loop = reader(read)
            read_loop(2, target(read, module, other))  # specialisation
            prepared[case] = (target(read, module, other), read_loop)
        module, read_loop = prepared[case]
        return read_loop(loops, module)

    for round_ in range(args.rounds):
        for case in cases(args.only):
            name = case + (f"#{round_}" if args.rounds > 1 else "")
            runner.bench_time_func(name, timed, case, inner_loops=READS_PER_LOOP)


# -- callgrind ----------------------------------------------------------------------------

# argv[1]: "group|read;read;...", argv[2]: each read's loop count, comma-separated.
WORKER = """\
import sys
sys.path.insert(0, {here!r})
import bench_deprecation_libraries as bench
group, _, reads = sys.argv[1].partition("|")
module, other = bench.prepare(group, {modules!r})
loops = [bench.reader(read) for read in reads.split(";")]
targets = [bench.target(read, module, other) for read in reads.split(";")]
for read, target in zip(loops, targets):
    read(2, target)
for read, target, count in zip(loops, targets, sys.argv[2].split(",")):
    read(int(count), target)
"""

# argv[1]: "kind/variant" and the engine; argv[2]: how many copies to import.
IMPORT_WORKER = """\
import importlib, os, sys, warnings
kind, variant, engine = sys.argv[1].split("/")
if engine != "plain":
    os.environ["PEP726HOOK_ENGINE"] = engine
warnings.simplefilter("ignore")
sys.path.insert(0, {modules!r})
import pep726hook
for copy in range(int(sys.argv[2])):
    module = importlib.import_module(f"bench_import_{{kind}}_{{variant}}_{{copy}}")
    module.x  # a read through the module once its import has ended
"""


def compile_workers_imports() -> None:
    """Write the bytecode of this script, its cases and ``_shared``, which the callgrind workers import.

    The workers write none (``PYTHONDONTWRITEBYTECODE``): without it, each of
    them would compile this script again, the largest part of its start-up.
    """
    import py_compile

    for name in ("bench_deprecation_libraries.py", "_deprecation_library_cases.py", "_shared.py"):
        py_compile.compile(os.path.join(HERE, name))


def _loops(read: str) -> tuple[int, int]:
    return LOOPS_CHEAP if read in CHEAP_READS else LOOPS_DEAR


def run_callgrind(json_out: str | None, only: str = "") -> dict[str, float]:
    import json
    import tempfile

    sys.path.insert(0, HERE)
    from _shared import per_iteration_each

    counts: dict[str, float] = {}
    selected = cases(only)
    compile_workers_imports()
    with tempfile.TemporaryDirectory(prefix="pep726hook-bench-libraries-") as modules:
        write_modules(modules)
        worker = WORKER.format(here=HERE, modules=modules)
        for group in groups():
            reads = [read for read in READS if f"{group}/{read}" in selected]
            if not reads:
                continue
            config = group + "|" + ";".join(reads)
            per_read = per_iteration_each(
                worker, config, [_loops(read) for read in reads], READS_PER_LOOP
            )
            for read, count in zip(reads, per_read):
                counts[f"{group}/{read}"] = count
                print(
                    f"{group + '/' + read:>34}: {count:9.1f} instructions per read",
                    flush=True,
                )
    if json_out:
        with open(json_out, "w", encoding="utf-8") as file:
            json.dump(counts, file, indent=2)
    return counts


def run_import_costs(only: str = "") -> dict[str, float]:
    """Callgrind instructions per import of each ``import/<kind>/<setup>`` case."""
    import tempfile

    sys.path.insert(0, HERE)
    from _shared import per_iteration

    costs: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="pep726hook-bench-imports-") as modules:
        write_modules(modules)
        worker = IMPORT_WORKER.format(modules=modules)
        for case in import_cases(only):
            _, kind, setup = case.split("/")
            variant = "plain" if setup == "plain" else "deprecating"
            costs[case] = per_iteration(worker, f"{kind}/{variant}/{setup}", IMPORT_COPIES, 1)
            print(f"{case:>34}: {costs[case]:12.0f} instructions per import", flush=True)
    return costs


# -- what the reads became ----------------------------------------------------------------

INSPECT_WORKER = """\
import json, sys
sys.path.insert(0, {here!r})
import bench_deprecation_libraries as bench
print(json.dumps(bench.inspect_group(sys.argv[1], {modules!r})))
"""


def _testcapi() -> Any:
    """CPython's ``_testcapi``, or None (PyPy's builds it from a C file it may not ship)."""
    if sys.implementation.name != "cpython":
        return None
    try:
        import _testcapi
    except ImportError:
        return None
    return _testcapi


def _module_type_version() -> int | None:
    """``types.ModuleType``'s type version tag (0: none), where ``_testcapi`` can tell (3.12+)."""
    get_version = getattr(_testcapi(), "type_get_version", None)
    return None if get_version is None else int(get_version(type(sys)))


def inspect_group(group: str, modules: str) -> dict[str, Any]:
    """In this process: *group*'s module type, each read's instruction once warm, version tags."""
    import dis
    import types

    facts: dict[str, Any] = {"module_type_version_before": _module_type_version()}
    module, other = prepare(group, modules)
    instructions = {}
    for read in READS:
        read_loop = reader(read)
        read_loop(100, target(read, module, other))  # past every warm-up counter
        if sys.version_info >= (3, 11) and sys.implementation.name == "cpython":
            loads = {
                instruction.opname
                for instruction in dis.get_instructions(read_loop, adaptive=True)  # type: ignore[call-arg]
                if instruction.opname.startswith("LOAD_ATTR")
            }
            if loads:
                instructions[read] = ", ".join(sorted(loads))
    facts["instructions"] = instructions
    facts["module_type"] = type(module).__module__ + "." + type(module).__qualname__
    facts["exact_module_type"] = type(module) is types.ModuleType
    facts["module_type_version_after"] = _module_type_version()
    # Whether ModuleType can still get a tag (CPython caps the versions a type may use).
    assign_version = getattr(_testcapi(), "type_assign_version", None)
    facts["module_type_version_assignable"] = (
        None if assign_version is None else bool(assign_version(type(sys)))
    )
    return facts


def run_inspect(json_out: str | None, only: str = "") -> dict[str, Any]:
    import json
    import subprocess
    import tempfile

    found: dict[str, Any] = {}
    selected = cases(only)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PEP726HOOK")}
    with tempfile.TemporaryDirectory(prefix="pep726hook-bench-libraries-") as modules:
        write_modules(modules)
        worker = INSPECT_WORKER.format(here=HERE, modules=modules)
        for group in groups():
            if not any(case.startswith(group + "/") for case in selected):
                continue
            completed = subprocess.run(
                [sys.executable, "-c", worker, group],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            found[group] = json.loads(completed.stdout.splitlines()[-1])
            print(f"{group:>22}: {found[group]}", flush=True)
    if json_out:
        with open(json_out, "w", encoding="utf-8") as file:
            json.dump(found, file, indent=2)
    return found


# -- all of it, and the docs --------------------------------------------------------------

PYPERF_ARGS = ["--quiet", "-p", "1", "-n", "3", "-w", "1", "--min-time", "0.05"]


def versions() -> dict[str, str]:
    import contextlib
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for distribution in ("pep726hook", "Twisted", "cryptography", "zope.deprecation"):
        with contextlib.suppress(PackageNotFoundError):
            found[distribution] = version(distribution)
    return found


def run_here(out: str, commit: str | None, only: str = "") -> None:
    """pyperf, callgrind and the inspection on this interpreter; one JSON file with all."""
    import json
    import platform
    import subprocess
    import tempfile

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
    result = {
        "label": f"{platform.python_implementation()} {platform.python_version()}",
        "engines": engines(),
        "versions": versions(),
        "pep726hook_commit": commit,
        "times": times,
        "counts": run_callgrind(None, only),
        "facts": run_inspect(None, only),
        "imports": run_import_costs(only),
    }
    with open(out, "w", encoding="utf-8") as file:
        json.dump(result, file, indent=2)
    print(markdown([result]))


def _ratio(value: float | None, base: float | None) -> str:
    return "" if not value or not base else f"{value / base:.2f}"


def markdown(results: list[dict[str, Any]]) -> str:
    """The detailed section: per interpreter, each case's time and instructions, and ratios."""
    lines = [
        f"## {SECTION}",
        "",
        "Written by `python benchmarks/bench_deprecation_libraries.py --render` from the",
        "results of `--run` on each interpreter (the libraries installed from the package",
        "index into the benchmark's venv: `python -m pip install pyperf Twisted==26.10.0",
        "cryptography==50.0.2 zope.deprecation==6.0`, on 3.8 the newest releases that",
        "install there; CPython 3.14 and 3.15 run in the sid chroot of",
        "tools/interpreters.sh). A module `x = 1; Old = New` whose `Old` is deprecated",
        "from the module body: `twisted`, `cryptography`, `zope` by the library's helper,",
        "`proxy` as the library ships it, `class`/`native` the same helper converted to",
        "pep726hook (docs/migrating-deprecations.md) under that engine; `attribute` by",
        '`pep726hook.deprecate_attribute(__name__, "Old", ...)`, `marker` by',
        "`Old = pep726hook.deprecated(New, ...)` and `pep726hook.enable(__name__)`,",
        "`thousand` by `deprecate_attribute()` for a thousand names, `Old` among them",
        "(the converted helpers and the thousand names under the native engine only).",
        "Reads, ten per loop, the module a local name: `x` (not deprecated), `Old`",
        '(warnings filter `"ignore"`: the warning machinery runs, nothing is shown), `miss`',
        '(`hasattr(m, "missing")`), and `other x`, `other miss`: the same on another,',
        "plain module while this one deprecates (`missing` is a name nobody deprecates:",
        "another module's miss of a deprecated name is `python benchmarks/bench_deprecation.py",
        "--case other-miss`, in [its own section](#another-modules-miss-of-a-deprecated-name)).",
        "pyperf median time per read (each case in",
        "worker processes of its own) and callgrind instructions per read (start-up",
        "cancelled out), side by side in one run; `x/plain`: the ratio to the same read",
        "of the plain module (for `Old`, its ordinary `Old`). Times come from a shared",
        "2-core machine under load; the instruction counts are the steadier measure.",
        "They do not vary between runs of one process, but a process that imported a",
        "library can pay a few instructions more per loop iteration than the plain",
        "module's process: compare `x` with `other x` of the same setup too.",
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
        if "note" in result:
            lines += [result["note"], ""]
        lines += [
            "| case | ns per read | x/plain (time) | instructions per read | x/plain (instructions) |",
            "|---|---|---|---|---|",
        ]
        for case, count in counts.items():
            base = base_case(case)
            seconds = times.get(case)
            lines.append(
                f"| `{case}` | {'' if seconds is None else f'{seconds * 1e9:.1f}'} "
                f"| {_ratio(seconds, times.get(base))} | {count:.1f} "
                f"| {_ratio(count, counts.get(base))} |"
            )
        lines.append("")
    return "\n".join(lines)


# The summary's rows: the three proxies, pep726hook's two forms, the thousand
# names and the converted helpers, each under the native engine (the class
# engine's figures are in the detailed tables).
SUMMARY_ROWS = (
    ("twisted/proxy", "Twisted's `_ModuleProxy`"),
    ("cryptography/proxy", "cryptography's `_ModuleWithDeprecations`"),
    ("zope/proxy", "zope.deprecation's `DeprecationProxy`"),
    ("attribute/native", "`deprecate_attribute()`"),
    ("marker/native", "`deprecated()` + `enable()`"),
    ("thousand/native", "a thousand names, `deprecate_attribute()`"),
    ("twisted/native", "Twisted's helper converted"),
    ("cryptography/native", "cryptography's helper converted"),
    ("zope/native", "zope.deprecation's helper converted"),
)
SUMMARY_READS = (
    ("x", "`m.x`: the deprecating module's other name"),
    ("Old", "`m.Old`: the deprecated name"),
    ("miss", '`hasattr(m, "missing")` on the deprecating module'),
    ("other x", "`o.x`: another module's read while `m` deprecates"),
    (
        "other miss",
        '`hasattr(o, "missing")`: another module\'s miss while `m` deprecates',
    ),
)


def summary_markdown(
    results: list[dict[str, Any]], before: list[dict[str, Any]] | None = None
) -> str:
    """The summary section: per read, each setup's multiple of a plain read on each interpreter.

    *before*: results of an earlier pep726hook on the same interpreters, for a
    table of both side by side.
    """
    labels = [result["label"] for result in results]
    table_head = ["| | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    lines = [
        f"## {SUMMARY_SECTION}",
        "",
        "Written by `python benchmarks/bench_deprecation_libraries.py --render` with the",
        f"figures of [{SECTION}](#deprecation-helpers-of-real-libraries), which says how",
        "they were made. Each cell: callgrind instructions per read as a multiple of the",
        "plain module's same read, then the pyperf median time per read; the `plain` row",
        "gives the plain module's own instructions and time. pep726hook under the native",
        "engine; the class engine's figures are in the detailed tables.",
        "",
    ]
    for read, title in SUMMARY_READS:
        lines += [f"### {title}", "", *table_head, *_read_rows(results, read), ""]
    lines += [
        "### What the reads became, and the type",
        "",
        "The instruction each warm `m.x` became (`dis.get_instructions(..., adaptive=True)`,",
        "CPython 3.11+; `LOAD_ATTR_MODULE` is the specialised read of a module's dict), and",
        "whether the deprecating module is exactly `types.ModuleType`.",
        "",
        *table_head,
        *_instruction_rows(results),
        "",
        "### Importing a deprecating module",
        "",
        "Callgrind instructions per import (bytecode already compiled; one read through",
        "the module after it), as a multiple of the same module without deprecations:",
        f"`functions`, a module of {MANY} functions with `Old` deprecated by",
        f"`deprecate_attribute()` at the end of its body; `names`, the module of {MANY}",
        "deprecated names. The last row: `types.ModuleType`'s type version tag after the",
        f"import of the {MANY} names (`_testcapi.type_get_version`, CPython 3.12+), and",
        "whether it can still get one (`type_assign_version`; CPython caps the versions",
        "one type may use).",
        "",
        *table_head,
        *_import_rows(results),
        "",
    ]
    if before:
        commits = {result.get("pep726hook_commit") or "" for result in before}
        lines += [
            "### Before and after",
            "",
            "The same multiples of a plain read (callgrind), measured with pep726hook at",
            "commit " + ", ".join(f"`{commit[:12]}`" for commit in sorted(commits) if commit),
            "(a deprecating module was a `ModuleType` subclass with a data descriptor per",
            "deprecated name), then as above: before → after, native engine.",
            "",
            *table_head,
            *_before_after_rows(results, before),
            "",
            *[
                f"- {found['label']}, before: {found['note']}"
                for found in before
                if "note" in found
            ],
            *[
                f"- {found['label']}, after: {found['note']}"
                for found in results
                if "note" in found
            ],
            "",
        ]
    return "\n".join(lines)


# (case, the case it is a multiple of, row): the plain module's same read, or
# for ``m.x`` also the other module's ``o.x`` in the same process, which pays
# whatever that process's interpreter pays per loop iteration as ``m.x`` does.
BEFORE_AFTER_ROWS = (
    ("attribute/native/x", "plain/x", "`m.x`, `deprecate_attribute()`"),
    ("attribute/native/x", "attribute/native/other x", "`m.x` / `o.x`, `deprecate_attribute()`"),
    ("marker/native/x", "plain/x", "`m.x`, `deprecated()` + `enable()`"),
    ("marker/native/x", "marker/native/other x", "`m.x` / `o.x`, `deprecated()` + `enable()`"),
    ("thousand/native/x", "plain/x", "`m.x`, a thousand names"),
    ("attribute/native/Old", "plain/Old", "`m.Old`, `deprecate_attribute()`"),
    ("marker/native/Old", "plain/Old", "`m.Old`, `deprecated()` + `enable()`"),
    ("attribute/native/miss", "plain/miss", '`hasattr(m, "missing")`, `deprecate_attribute()`'),
    ("attribute/native/other x", "plain/x", "`o.x` while `m` deprecates"),
    ("attribute/native/other miss", "plain/miss", '`hasattr(o, "missing")` while `m` deprecates'),
    (
        "thousand/native/other miss",
        "plain/miss",
        '`hasattr(o, "missing")` while a thousand names are deprecated',
    ),
)


def _before_after_rows(results: list[dict[str, Any]], before: list[dict[str, Any]]) -> list[str]:
    earlier = {result["label"]: result for result in before}
    rows = []
    for case, base, name in BEFORE_AFTER_ROWS:
        cells = []
        for result in results:
            old = earlier.get(result["label"])
            figures = [
                _ratio(found["counts"].get(case), found["counts"].get(base))
                for found in (old, result)
                if found is not None
            ]
            cells.append(" → ".join(f"{figure}x" for figure in figures if figure))
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def _read_rows(results: list[dict[str, Any]], read: str) -> list[str]:
    base = base_case(f"plain/{read}")
    cells = []
    for result in results:
        count = result["counts"].get(base)
        cells.append(_cell(f"{count:.0f} instructions" if count else "", result["times"].get(base)))
    rows = ["| plain module | " + " | ".join(cells) + " |"]
    for group, name in SUMMARY_ROWS:
        cells = []
        for result in results:
            ratio = _ratio(result["counts"].get(f"{group}/{read}"), result["counts"].get(base))
            cells.append(
                _cell(f"{ratio}x" if ratio else "", result["times"].get(f"{group}/{read}"))
            )
        if any(cells):
            rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def _instruction_rows(results: list[dict[str, Any]]) -> list[str]:
    rows = []
    for group, name in (("plain", "plain module"), *SUMMARY_ROWS[3:6]):
        cells = []
        for result in results:
            facts = result.get("facts", {}).get(group)
            if not facts:
                cells.append("")
                continue
            instruction = facts["instructions"].get("x")
            exact = "`ModuleType`" if facts["exact_module_type"] else "a subclass"
            cells.append(f"`{instruction}`, {exact}" if instruction else exact)
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def _import_rows(results: list[dict[str, Any]]) -> list[str]:
    rows = []
    for kind in IMPORT_BODIES:
        cells = []
        for result in results:
            plain = result.get("imports", {}).get(f"import/{kind}/plain")
            cells.append(f"{plain:,.0f}" if plain else "")
        rows.append(f"| `{kind}`, plain | " + " | ".join(cells) + " |")
        for engine in ("native", "class"):
            cells = []
            for result in results:
                imports = result.get("imports", {})
                cost = imports.get(f"import/{kind}/{engine}")
                plain = imports.get(f"import/{kind}/plain")
                cells.append(
                    f"{_ratio(cost, plain)}x (+{cost - plain:,.0f})" if cost and plain else ""
                )
            rows.append(f"| `{kind}`, {engine} | " + " | ".join(cells) + " |")
    cells = []
    for result in results:
        facts = result.get("facts", {}).get("thousand/native") or {}
        version = facts.get("module_type_version_after")
        assignable = facts.get("module_type_version_assignable")
        cells.append(
            "" if version is None else f"{version}, {'assignable' if assignable else 'none left'}"
        )
    rows.append("| `ModuleType` version tag after the thousand names | " + " | ".join(cells) + " |")
    return rows


def _cell(figure: str, seconds: float | None) -> str:
    time = "" if seconds is None else f"{seconds * 1e9:.1f} ns"
    return ", ".join(part for part in (figure, time) if part)


def write_section(
    text: str, path: str, section: str = SECTION, ahead_of: str | None = None
) -> None:
    """Replace the section *section* of the markdown file at *path* with *text*.

    A page without it gets it just before the section *ahead_of*, or at its end.
    """
    with open(path, encoding="utf-8") as file:
        page = file.read()
    heading = f"## {section}\n"
    if heading in page:
        start = page.index(heading)
        following = page.find("\n## ", start + len(heading))
        end = len(page) if following < 0 else following + 1
        page = (
            page[:start] + text.rstrip("\n") + "\n" + ("\n" + page[end:] if following >= 0 else "")
        )
    elif ahead_of is not None and f"\n## {ahead_of}\n" in page:
        start = page.index(f"\n## {ahead_of}\n") + 1
        page = page[:start] + text.rstrip("\n") + "\n\n" + page[start:]
    else:
        page = page.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
    with open(path, "w", encoding="utf-8") as file:
        file.write(page)
    print(f"wrote the section {section!r} of {path}")


def _load_results(paths: list[str]) -> list[dict[str, Any]]:
    import json

    results = []
    for path in paths:
        with open(path, encoding="utf-8") as file:
            results.append(json.load(file))
    results.sort(key=lambda r: [int(p) for p in r["label"].split()[-1].split(".") if p.isdigit()])
    return results


def render(paths: list[str], before: list[str] | None = None) -> None:
    results = _load_results(paths)
    page = os.path.join(ROOT, "docs", "benchmarks-deprecation.md")
    summary = summary_markdown(results, _load_results(before or []))
    write_section(summary, page, SUMMARY_SECTION, ahead_of=SECTION)
    write_section(markdown(results), page)


def main() -> None:
    import argparse

    if {"--run", "--callgrind", "--inspect", "--render"} & set(sys.argv[1:]):
        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("--run", action="store_true")
        parser.add_argument("--out", default=os.path.join(ROOT, "build", "benchmarks", "libs.json"))
        parser.add_argument("--commit", help="--run: the pep726hook commit measured")
        parser.add_argument("--callgrind", action="store_true")
        parser.add_argument("--inspect", action="store_true")
        parser.add_argument("--json-out")
        parser.add_argument("--render", nargs="+", metavar="RESULTS_JSON")
        parser.add_argument(
            "--before",
            nargs="+",
            metavar="RESULTS_JSON",
            help="--render: earlier results",
        )
        parser.add_argument("--only", default="", help="comma-separated case prefixes")
        args = parser.parse_args()
        if args.render:
            render(args.render, args.before)
        elif args.run:
            run_here(args.out, args.commit, args.only)
        elif args.inspect:
            run_inspect(args.json_out, args.only)
        else:
            run_callgrind(args.json_out, args.only)
        return
    run_pyperf()


if __name__ == "__main__":
    main()

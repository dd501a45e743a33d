"""What the first use of pep726hook's library API costs a process, and each later declaration.

A library module, its ``.pyc`` cached, is imported by ``python -c "import
MODULE"`` under callgrind (``PYTHONHASHSEED=0``, a small fixed environment,
the library's directory on ``PYTHONPATH``); the same start-up importing an
equivalent module that does not use pep726hook is subtracted.  The modules:

* ``import``: ``import pep726hook`` and nothing else;
* ``enable``: ``pep726hook.enable(__name__)``;
* ``deprecate``: one ``pep726hook.deprecate_attribute()`` of a name it defines;
* ``deprecated``: one ``pep726hook.deprecated()`` marker and ``enable()``;
* ``removed``: one ``pep726hook.removed_attribute()``;
* ``lazy submodule``: a package's ``pep726hook.lazy_attribute()`` of its
  submodule (found, not run);
* ``deprecate N``: N names, each deprecated by its own ``deprecate_attribute()``
  call (the equivalent module defines the N names): the first call and N - 1
  later ones.  ``per later call`` is (cost(N) - cost(1)) / (N - 1).
* ``remove N``: N names, each declared by its own ``removed_attribute()``
  call; ``per later call`` as above, against ``removed``.

With ``--times`` each ``deprecate N`` module is also imported by a plain
process (no callgrind) that times the N calls with ``time.perf_counter``:
the median over ``--processes`` processes of the mean time of one later call
(the first call, which loads the API, left out).

    python benchmarks/bench_first_use.py [--counts 10,100,1000] [--times] [--json-out F]
    PEP726HOOK_ENGINE=class python benchmarks/bench_first_use.py

Run it with an interpreter that has pep726hook installed (``pip install -e .``
builds the C extension in place); ``--source`` puts this checkout's ``src``
first on the path instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _shared import callgrind

ROOT = Path(__file__).resolve().parent.parent


def _names(count: int) -> list[str]:
    return [f"Old{index}" for index in range(count)]


def _defining(count: int) -> str:
    return "".join(f"{name} = {index}\n" for index, name in enumerate(_names(count)))


def library_sources(counts: list[int]) -> dict[str, tuple[str, str]]:
    """Return variant -> (source of the library module, source of its equivalent without us)."""
    plain = "X = 1\n"
    variants = {
        "import": ("import pep726hook\nX = 1\n", plain),
        "enable": ("import pep726hook\nX = 1\npep726hook.enable(__name__)\n", plain),
        "deprecate": (
            "import pep726hook\nOld = 1\n"
            'pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated; use New")\n',
            "Old = 1\n",
        ),
        "deprecated": (
            "import pep726hook\n"
            'Old = pep726hook.deprecated(1, "Old is deprecated; use New")\n'
            "pep726hook.enable(__name__)\n",
            "Old = 1\n",
        ),
        "removed": (
            'import pep726hook\npep726hook.removed_attribute(__name__, "Old", "Old was removed")\n',
            plain,
        ),
        # A package (see write_modules): its submodule is found, never run.
        "lazy submodule": (
            'import pep726hook\npep726hook.lazy_attribute(__name__, "heavy")\n',
            plain,
        ),
    }
    for count in counts:
        calls = "".join(
            f'pep726hook.deprecate_attribute(__name__, "{name}", "{name} is deprecated")\n'
            for name in _names(count)
        )
        variants[f"deprecate {count}"] = (
            "import pep726hook\n" + _defining(count) + calls,
            _defining(count),
        )
        removals = "".join(
            f'pep726hook.removed_attribute(__name__, "{name}", "{name} was removed")\n'
            for name in _names(count)
        )
        variants[f"remove {count}"] = ("import pep726hook\n" + removals, plain)
    return variants


TIMED = """\
import time
import pep726hook
{defining}
_names = {names!r}
pep726hook.deprecate_attribute(__name__, _names[0], "deprecated")
_start = time.perf_counter()
for _name in _names[1:]:
    pep726hook.deprecate_attribute(__name__, _name, "deprecated")
PER_CALL = (time.perf_counter() - _start) / (len(_names) - 1)
"""


def _environment(directory: Path, source: bool) -> dict[str, str]:
    path = [str(directory)] + ([str(ROOT / "src")] if source else [])
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONPATH": os.pathsep.join(path),
    }
    engine = os.environ.get("PEP726HOOK_ENGINE")
    if engine:
        env["PEP726HOOK_ENGINE"] = engine
    return env


# Variants written as packages, each with a submodule "heavy".
PACKAGES = {"lazy submodule"}


def _module_name(variant: str, ours: bool) -> str:
    return ("lib_" if ours else "plain_") + variant.replace(" ", "_")


def write_modules(directory: Path, counts: list[int]) -> dict[str, tuple[str, str]]:
    """Write each variant's two modules; return variant -> (our module, its equivalent)."""
    names = {}
    for variant, (ours, plain) in library_sources(counts).items():
        pair = (_module_name(variant, True), _module_name(variant, False))
        for module, source in zip(pair, (ours, plain)):
            if variant in PACKAGES:
                (directory / module).mkdir()
                (directory / module / "heavy.py").write_text("VALUE = 1\n", encoding="utf-8")
                (directory / module / "__init__.py").write_text(source, encoding="utf-8")
            else:
                (directory / f"{module}.py").write_text(source, encoding="utf-8")
        names[variant] = pair
    return names


def count_import(module: str, env: dict[str, str], directory: Path, repeat: int) -> int:
    argv = [sys.executable, "-c", f"import {module}"]
    # Once uncounted, which writes the .pyc files (the environment has no
    # PYTHONDONTWRITEBYTECODE): every counted run reads them.
    subprocess.run(argv, env=env, cwd=str(directory), check=True)
    return int(statistics.median(callgrind(argv, env, str(directory)) for _ in range(repeat)))


def per_call_seconds(count: int, directory: Path, env: dict[str, str], processes: int) -> float:
    module = f"timed_{count}"
    names = _names(count)
    (directory / f"{module}.py").write_text(
        TIMED.format(defining=_defining(count), names=names), encoding="utf-8"
    )
    argv = [sys.executable, "-c", f"import {module}; print({module}.PER_CALL)"]
    subprocess.run(argv, env=env, cwd=str(directory), check=True, capture_output=True)
    samples = [
        float(
            subprocess.run(
                argv, env=env, cwd=str(directory), check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(processes)
    ]
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--counts",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[10, 100, 1000],
        help="numbers of deprecate_attribute() calls in one module",
    )
    parser.add_argument("--repeat", type=int, default=1, help="callgrind runs per module")
    parser.add_argument("--times", action="store_true", help="also time the later calls")
    parser.add_argument("--processes", type=int, default=15, help="processes per timing")
    parser.add_argument("--source", action="store_true", help="use this checkout's src/")
    parser.add_argument("--variants", help="comma-separated variants to count (default: all)")
    parser.add_argument("--json-out", type=Path)
    options = parser.parse_args(argv)
    counting = sys.implementation.name == "cpython" and shutil.which("valgrind") is not None
    result: dict[str, object] = {
        "python": sys.version.split()[0],
        "implementation": sys.implementation.name,
        "engine": os.environ.get("PEP726HOOK_ENGINE") or "auto",
    }
    with tempfile.TemporaryDirectory(prefix="pep726hook-first-use-") as tmp:
        directory = Path(tmp)
        env = _environment(directory, options.source)
        probe = subprocess.run(
            [
                sys.executable,
                "-c",
                "import pep726hook, types; m = types.ModuleType('m');"
                "pep726hook.enable(m); print(pep726hook.engine(m), pep726hook.__file__)",
            ],
            env=env,
            cwd=tmp,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        result["engine"], result["package"] = probe[0], probe[1]
        print(
            f"{sys.implementation.name} {result['python']}, engine {probe[0]}, "
            f"pep726hook from {probe[1]}"
        )
        names = write_modules(directory, options.counts)
        wanted = options.variants.split(",") if options.variants else list(names)
        if counting:
            counts: dict[str, dict[str, int]] = {}
            print(
                "instructions (callgrind), millions: the library's import, its equivalent's,"
                " the difference"
            )
            for variant in wanted:
                ours, plain = names[variant]
                base = count_import(plain, env, directory, options.repeat)
                total = count_import(ours, env, directory, options.repeat)
                counts[variant] = {"library": total, "equivalent": base}
                print(
                    f"  {variant:16} {total / 1e6:9.3f} {base / 1e6:9.3f} "
                    f"{(total - base) / 1e6:+8.3f} M  ({(total - base) / base:+.1%})"
                )
            result["instructions"] = counts
            for kind, single in (("deprecate", "deprecate"), ("remove", "removed")):
                first = counts.get(single)
                for count in options.counts:
                    variant = f"{kind} {count}"
                    if first is None or variant not in counts:
                        continue
                    cost = counts[variant]["library"] - counts[variant]["equivalent"]
                    one = first["library"] - first["equivalent"]
                    later = (cost - one) / (count - 1)
                    key = str(count) if kind == "deprecate" else f"remove {count}"
                    result.setdefault("per_later_call", {})[key] = later  # type: ignore[union-attr]
                    print(f"  {variant}: {later:,.0f} instructions per later call")
        else:
            print("instruction counts need CPython and valgrind; timing only")
        if options.times:
            times = {}
            for count in options.counts:
                seconds = per_call_seconds(count, directory, env, options.processes)
                times[str(count)] = seconds
                print(
                    f"  deprecate {count}: {seconds * 1e6:.2f} us per later call "
                    f"(median of {options.processes} processes)"
                )
            result["seconds_per_later_call"] = times
    if options.json_out:
        options.json_out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

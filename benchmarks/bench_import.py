"""Import time of ~150 standard library modules in a fresh process, hook on and off.

Each run is a new interpreter process (``-s``, no ``PEP726HOOK*`` variables)
that imports the same list of modules; the wall-clock time of the whole
process is measured from here.  Variants:

* ``off``: no pep726hook at all;
* ``native`` / ``class``: ``import pep726hook; pep726hook.install(engine)``
  before the imports (``native`` only where it is available; the first engine
  listed is the default one, which the headline ratio uses).

The variants are interleaved (one run of each per round, in rotating order) so
that drift on a shared machine hits them alike; the medians over the rounds and
their ratios to ``off`` are printed, and written as JSON with ``--json-out``.

    python benchmarks/bench_import.py [--rounds 15] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")

# Present on 3.8-3.13 (graphlib/zoneinfo: 3.9+), no side effects on import,
# not deprecated; filtered by availability below (PyPy lacks a few).
MODULES = [
    "abc",
    "argparse",
    "ast",
    "asyncio",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "bz2",
    "calendar",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "collections",
    "collections.abc",
    "concurrent.futures",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "csv",
    "ctypes",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "dis",
    "doctest",
    "email",
    "email.mime.text",
    "email.parser",
    "email.policy",
    "encodings.idna",
    "enum",
    "errno",
    "faulthandler",
    "fnmatch",
    "fractions",
    "functools",
    "gc",
    "getopt",
    "gettext",
    "glob",
    "graphlib",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "html.parser",
    "http",
    "http.client",
    "http.cookiejar",
    "http.cookies",
    "http.server",
    "importlib",
    "importlib.abc",
    "importlib.machinery",
    "importlib.metadata",
    "importlib.resources",
    "importlib.util",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "json.decoder",
    "keyword",
    "linecache",
    "locale",
    "logging",
    "logging.config",
    "logging.handlers",
    "lzma",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "multiprocessing",
    "multiprocessing.pool",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pkgutil",
    "platform",
    "plistlib",
    "pprint",
    "queue",
    "random",
    "re",
    "reprlib",
    "runpy",
    "secrets",
    "select",
    "selectors",
    "shlex",
    "shutil",
    "signal",
    "site",
    "socket",
    "socketserver",
    "sqlite3",
    "ssl",
    "stat",
    "statistics",
    "string",
    "struct",
    "subprocess",
    "symtable",
    "sysconfig",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "timeit",
    "token",
    "tokenize",
    "traceback",
    "tracemalloc",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "unittest.mock",
    "urllib",
    "urllib.parse",
    "urllib.request",
    "urllib.robotparser",
    "uuid",
    "warnings",
    "weakref",
    "webbrowser",
    "wsgiref.simple_server",
    "xml.dom.minidom",
    "xml.etree.ElementTree",
    "xml.sax",
    "xmlrpc.client",
    "xmlrpc.server",
    "zipfile",
    "zlib",
    "zoneinfo",
]


def available_modules() -> list[str]:
    """Return the modules of MODULES this interpreter can import.

    Imported here, not just found: PyPy 3.11 ships ``symtable.py`` without the
    ``_symtable`` it imports.
    """
    names = []
    for name in MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        names.append(name)
    return names


def variants() -> dict[str, str]:
    """Return variant name -> code run before the imports: ``off`` and each engine.

    The installed package is used when there is one (run_all.py installs the
    wheel in a venv), else the source tree's ``src/``.
    """
    prelude = ""
    if importlib.util.find_spec("pep726hook") is None:
        sys.path.insert(0, SRC)
        prelude = f"import sys; sys.path.insert(0, {SRC!r})\n"
    import pep726hook

    result = {"off": ""}
    for engine in pep726hook.available_engines():
        result[engine] = prelude + f"import pep726hook\npep726hook.install({engine!r})\n"
    return result


def default_engine() -> str:
    """Return the engine ``install()`` picks here by default."""
    import pep726hook

    return pep726hook.available_engines()[0]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PEP726HOOK")}
    env.pop("PYTHONPATH", None)
    return env


def run_once(prelude: str, modules: list[str]) -> float:
    """Return the wall-clock seconds of one fresh process importing *modules*."""
    code = prelude + "".join(f"import {name}\n" for name in modules)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-s", "-c", code], check=True, env=_env())
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    modules = available_modules()
    preludes = variants()
    names = list(preludes)
    for name in names:  # warm the file system caches and .pyc files
        run_once(preludes[name], modules)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(run_once(preludes[name], modules))
    medians = {name: statistics.median(values) for name, values in times.items()}
    result = {
        "python": sys.version.split()[0],
        "implementation": sys.implementation.name,
        "modules": len(modules),
        "default_engine": default_engine(),
        "rounds": args.rounds,
        "median_seconds": medians,
        "ratio_to_off": {name: medians[name] / medians["off"] for name in names},
        "times": times,
    }
    for name in names:
        print(
            f"import {len(modules)} modules [{name:6s}]: median {medians[name] * 1e3:7.1f} ms"
            f"  ratio to off {result['ratio_to_off'][name]:.3f}"
        )
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=1)


if __name__ == "__main__":
    main()

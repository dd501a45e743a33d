"""What numpy's module attributes do, observed, so that a converted numpy can be compared with numpy.

    python check_numpy_conversion.py observe OUT.json
    python check_numpy_conversion.py compare PLAIN.json OTHER.json [--converted]

``observe`` (run by the interpreter whose numpy is observed, on a system
with ``os.fork``) records, each part in a child process forked after
``import numpy``, so that each starts from numpy as its import left it:

- every name numpy's ``__getattr__`` refuses (``__former_attrs__``,
  ``__expired_attributes__``, ``__future_scalars__``, the names it compares
  with and raises for) read four ways: ``np.name`` (the exception's type,
  message, ``name`` and what a traceback prints, suggestions included),
  ``hasattr``, ``getattr`` with a default, ``from numpy import name``; with
  every warning each gives (category, message, and the file and line it is
  attributed to: the reader's line in this file, for numpy's
  ``FutureWarning``);
- every submodule numpy's ``__getattr__`` imports, each first read in a
  process of its own (what it is, whether it is bound afterwards, the
  warnings of the import), and ``from numpy import <submodule>``;
- ``dir(numpy)``, ``from numpy import *``, a miss of an unknown name, and
  misses of numpy's removed names on another module (``os``);
- whether numpy's namespace holds ``__getattr__`` and whether ``numpy`` is
  an exact ``types.ModuleType``.

``compare`` requires every observation to be equal, except, with
``--converted``, what a conversion changes on purpose: the namespace no
longer holds ``__getattr__`` (so ``dir(numpy)``, which lists the namespace,
has that one name less; it is left out of the comparison of ``dir``), and
under the class engine numpy is not an exact ``ModuleType`` (that engine
serves declarations through the module's class).  One difference is
accepted, with its reason (:func:`_accepted`): ``from numpy import str``
warns once, not twice.  Exit status 1 and every difference printed
otherwise.  Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
import types
import warnings
from typing import Any

# Names numpy 2.x's __getattr__ compared with and refused, in some release;
# those the installed numpy does not know read as plain misses in both runs.
LITERAL_REFUSALS = ["array_api", "distutils", "chararray", "bytes", "no_such_name"]
SUBMODULES = [
    "linalg", "fft", "dtypes", "random", "polynomial", "ma", "ctypeslib", "exceptions",
    "testing", "matlib", "f2py", "typing", "rec", "char", "core", "strings",
]  # fmt: skip


def _warnings_of(caught: list[warnings.WarningMessage]) -> list[list[Any]]:
    return [
        [w.category.__name__, str(w.message), os.path.basename(w.filename), w.lineno]
        for w in caught
    ]


def _error_of(error: BaseException) -> dict[str, Any]:
    # The place numpy is installed at differs between environments.
    place = os.path.dirname(sys.modules["numpy"].__file__ or "")
    return {
        "type": type(error).__name__,
        "message": str(error).replace(place, "<numpy>"),
        "name": getattr(error, "name", "<no name attribute>"),
        "printed": [
            line.replace(place, "<numpy>")
            for line in traceback.format_exception_only(type(error), error)
        ],
    }


def _refused(np: types.ModuleType) -> dict[str, Any]:
    names = set(LITERAL_REFUSALS)
    for table in ("__former_attrs__", "__expired_attributes__", "__future_scalars__"):
        names |= set(getattr(np, table, ()))
    seen: dict[str, Any] = {}
    for name in sorted(names):
        if name in vars(np):
            seen[name] = "bound"
            continue
        entry: dict[str, Any] = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = getattr(np, name)  # the reader's line
            except AttributeError as error:
                entry["read"] = _error_of(error)
            else:
                entry["read"] = f"value {type(value).__name__} {getattr(value, '__name__', '')}"
        entry["read warnings"] = _warnings_of(caught)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            entry["hasattr"] = hasattr(np, name)
            entry["getattr default"] = getattr(np, name, "default") == "default"
        entry["hasattr/getattr warnings"] = _warnings_of(caught)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                exec(f"from numpy import {name}", {})
            except ImportError as error:
                entry["from-import"] = _error_of(error)
            else:
                entry["from-import"] = "imported"
        entry["from-import warnings"] = _warnings_of(caught)
        entry["bound afterwards"] = name in vars(np)
        seen[name] = entry
    # Another module's misses of the same names: plain misses, no warning.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seen["os misses"] = [hasattr(os, name) for name in sorted(names)]
        try:
            os.float_  # type: ignore[attr-defined]  # noqa: B018
        except AttributeError as error:
            seen["os read"] = _error_of(error)
    seen["os warnings"] = _warnings_of(caught)
    return seen


def _submodule(np: types.ModuleType, name: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"bound before": name in vars(np)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(np, name)
    entry["value"] = getattr(value, "__name__", type(value).__name__)
    entry["is sys.modules entry"] = value is sys.modules.get(f"numpy.{name}")
    entry["bound afterwards"] = vars(np).get(name) is value
    # Where an import's own warning points depends on the frames between the
    # read and the import (numpy's __getattr__, or pep726hook's code): compared
    # without the place.
    entry["warnings"] = [w[:2] for w in _warnings_of(caught)]
    entry["again"] = getattr(np, name) is value
    return entry


def _from_import(name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(f"from numpy import {name}", namespace)
    return {
        "value": getattr(namespace[name], "__name__", None),
        "warnings": [w[:2] for w in _warnings_of(caught)],
    }


def _star() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec("from numpy import *", namespace)
    return {
        "names": sorted(n for n in namespace if n != "__builtins__"),
        "warnings": sorted({tuple(w[:2]) for w in _warnings_of(caught)}),
    }


def _state(np: types.ModuleType) -> dict[str, Any]:
    try:
        np.no_such_name  # noqa: B018
    except AttributeError as error:
        miss = _error_of(error)
    try:
        import pep726hook

        engine = pep726hook.engine(np)
    except ImportError:
        engine = None
    return {
        "engine": engine,
        "namespace holds __getattr__": "__getattr__" in vars(np),
        "exact ModuleType": type(np) is types.ModuleType,
        "dir": sorted(set(dir(np)) - {"__getattr__"}),
        "miss": miss,
        "hasattr miss": hasattr(np, "no_such_name"),
    }


def part(which: str) -> Any:
    """One part of the observations, in this process (numpy imported fresh)."""
    import numpy as np

    if which == "refused":
        return _refused(np)
    if which == "star":
        return _star()
    if which == "state":
        return _state(np)
    kind, name = which.split(":")
    return _submodule(np, name) if kind == "submodule" else _from_import(name)


def _in_child(which: str) -> Any:
    """One part, observed in a child forked from this process (numpy imported, nothing read)."""
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: observe, write, leave without cleaning up the parent's state
        os.close(reading)
        status = 0
        try:
            data = json.dumps(part(which)).encode()
        except BaseException as error:
            data = json.dumps(f"failed: {type(error).__name__}: {error}").encode()
            status = 1
        with os.fdopen(writing, "wb") as pipe:
            pipe.write(data)
        os._exit(status)
    os.close(writing)
    with os.fdopen(reading, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data) if data else "failed: no output"


def observe(out: str) -> None:
    """Observe every part, each in a fresh numpy: a child forked after the import.

    numpy is imported once, here, and nothing of it is read: every child
    starts from numpy as its import left it (forking is much cheaper than
    importing numpy again for each part).
    """
    import numpy  # noqa: F401

    parts = ["state", "refused", "star"]
    parts += [f"submodule:{name}" for name in SUBMODULES]
    parts += [f"from:{name}" for name in SUBMODULES]
    seen = {which: _in_child(which) for which in parts}
    with open(out, "w", encoding="utf-8") as file:
        json.dump(seen, file, indent=1, sort_keys=True)


def _leaves(value: Any, path: str) -> dict[str, Any]:
    """Each value of nested dicts, by its path of keys."""
    if not isinstance(value, dict):
        return {path: value}
    found: dict[str, Any] = {}
    for key, inner in value.items():
        found.update(_leaves(inner, f"{path} / {key}" if path else key))
    return found


def _accepted(key: str, before: Any, after: Any) -> str | None:
    """Why the converted numpy may differ here from numpy, or None if it may not."""
    if (
        key.endswith(" / from-import warnings")
        and isinstance(before, list)
        and len(before) == 2 * len(after)
        and before == [w for w in after for _ in range(2)]
    ):
        # importlib's _handle_fromlist probes the name with hasattr() before
        # the statement reads it: numpy's __getattr__ warns for both reads,
        # pep726hook once per statement (both at the reader's line).
        return "`from numpy import name` warns once, not twice, at the same line"
    return None


def compare(plain_path: str, other_path: str, converted: bool) -> int:
    with open(plain_path, encoding="utf-8") as file:
        plain = _leaves(json.load(file), "")
    with open(other_path, encoding="utf-8") as file:
        other = _leaves(json.load(file), "")
    differences = []
    engine = other.pop("state / engine", None)
    plain.pop("state / engine", None)
    if converted:
        # What the conversion is for: numpy's namespace no longer holds
        # __getattr__, and under the native engine numpy is an exact
        # ModuleType (the class engine serves declarations by its class):
        # its reads specialise again.
        key = "state / namespace holds __getattr__"
        if other.get(key) is not False:
            differences.append(f"{key}: {other.get(key)!r} in the converted numpy")
        other[key] = plain.get(key)
        key = "state / exact ModuleType"
        if engine == "class" and other.get(key) is False:
            other[key] = plain.get(key)
    accepted = []
    for key in sorted(set(plain) | set(other)):
        before, after = plain.get(key, "absent"), other.get(key, "absent")
        if before == after:
            continue
        difference = f"{key}:\n    {before!r}\n -> {after!r}"
        reason = _accepted(key, before, after) if converted else None
        if reason is None:
            differences.append(difference)
        else:
            accepted.append(f"{difference}\n    accepted: {reason}")
    label = f"{os.path.basename(plain_path)} -> {os.path.basename(other_path)}"
    if accepted:
        print(f"check_numpy_conversion: {len(accepted)} accepted differences ({label}):")
        print("\n".join(accepted))
    if differences:
        print(f"check_numpy_conversion: {len(differences)} differences ({label}):")
        print("\n".join(differences))
        return 1
    print(f"check_numpy_conversion: {len(plain)} observations equal ({label})")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["observe"] and len(argv) == 2:
        observe(argv[1])
        return 0
    if argv[:1] == ["compare"] and len(argv) in (3, 4):
        return compare(argv[1], argv[2], converted=argv[3:] == ["--converted"])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

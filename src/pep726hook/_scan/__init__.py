"""``pep726hook scan``: find the modules that PEP 726 hooks concern, without importing them.

The scanner reads installed distributions (through ``importlib.metadata``, or
the ``importlib_metadata`` backport before Python 3.10), the standard library
or plain source trees, and reports, per module:

* module-level ``__setattr__`` / ``__delattr__`` (their behaviour changes
  once pep726hook is installed),
* the workarounds that intercept a module's stores without PEP 726: a
  ``ModuleType`` subclass installed as a module's ``__class__``, a wrapper
  object put in its place in ``sys.modules``, a helper function that does
  either to a module it is given (and the calls of that helper), a module-like
  object whose ``__dict__`` is a property; each with what reads cost and the
  PEP 726 spelling that replaces it,
* PEP 562 ``__getattr__`` (with its read cost, and how ``pep726hook.enable()``
  in the module, or the fast-getattr switch in the application, keeps its
  reads specialised) and ``__dir__`` (informational).

Findings in the standard library are informational: their suggestions say
so rather than propose an edit of CPython, and ``--stdlib`` leaves CPython's
own test directories out unless ``--stdlib-tests`` asks for them.

Nothing scanned is imported or executed.  The work is split, each module
importing only those listed before it:

* :mod:`._model`: what a scan reports (findings, skipped files, the schema);
* :mod:`._files`: which files a scan covers (distributions, trees, stdlib);
* :mod:`._filter`: the byte-level filter that rules out most files unparsed,
  with the optional C helper :mod:`._memfind`;
* :mod:`._markers`: whether a module's source opts in to pep726hook or
  declares names with it;
* :mod:`._advice`: the read-cost notes and suggested PEP 726 forms;
* :mod:`._parsing`: decoding and parsing source as the interpreter would;
* :mod:`._static_getattr`: whether a PEP 562 ``__getattr__`` serves a static
  set of names, and which;
* :mod:`._analysis`: the :mod:`ast` pass over what is left (imported only
  when a file needs it);
* :mod:`._callers`: the calls of installing helpers, a second pass run only
  when a helper was found;
* :mod:`._scanner`: reading files and sharing the work between processes;
* :mod:`._report`: the table and JSON output (imported only to print);
* :mod:`._declarations`: ``--diff``, the declarations that replace a static
  ``__getattr__`` (imported only for ``--diff``);
* :mod:`._command`: the ``pep726hook scan`` command line.

This package is private.  ``pep726hook.scan()`` and the records it returns
(``ScanResult``, ``ScanFinding``, ``ScanRelated``, ``ScanSkipped``) are the
public interface, loaded on first use like every public name of the package;
the names below serve the command line, the tests and the benchmarks.
"""

from __future__ import annotations

from ._command import build_parser, main
from ._files import collect_files, distribution_files, find_distributions, stdlib_root, tree_files
from ._model import (
    CONFIDENCES,
    KINDS,
    SCHEMA,
    ScanFinding,
    ScanRelated,
    ScanResult,
    ScanSkipped,
    SourceFile,
    UnknownDistributionError,
)
from ._scanner import scan, scan_file, scan_files

__all__ = [
    "CONFIDENCES",
    "KINDS",
    "SCHEMA",
    "ScanFinding",
    "ScanRelated",
    "ScanResult",
    "ScanSkipped",
    "SourceFile",
    "UnknownDistributionError",
    "build_parser",
    "collect_files",
    "distribution_files",
    "find_distributions",
    "main",
    "scan",
    "scan_file",
    "scan_files",
    "stdlib_root",
    "tree_files",
]

"""Instructions of importing many small modules, with a finder put in front or not.

What keeping pep726hook's finder first in the import system's walk of
``sys.meta_path`` costs (docs/activation.md, "Finders put in front of
pep726hook's"): a fresh process writes nothing, puts a directory of N one-line
modules on ``sys.path`` and imports them all, counted by callgrind, in four
variants: ``off`` (no pep726hook), ``native``, ``class``, and ``class+front``
(the class engine with another finder inserted at ``sys.meta_path[0]`` after
``install()``, so that every import takes the reordered walk).  Counts are
deterministic to about 0.01%; compare two installs by running this with each.

    python benchmarks/bench_front_finder.py [--modules 300] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_callgrind  # noqa: E402

FRONT_FINDER = """
class Front:
    def find_spec(self, name, path=None, target=None):
        return None
sys.meta_path.insert(0, Front())
"""


def variants(engines: tuple[str, ...]) -> dict[str, str]:
    """Return variant name -> code run before the imports."""
    result = {"off": ""}
    for engine in engines:
        result[engine] = f"import pep726hook\npep726hook.install({engine!r})\n"
    if "class" in engines:
        result["class+front"] = result["class"] + FRONT_FINDER
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    import pep726hook

    with tempfile.TemporaryDirectory(prefix="pep726hook-front-") as directory:
        for i in range(args.modules):
            with open(os.path.join(directory, f"m{i}.py"), "w", encoding="utf-8") as file:
                file.write(f"x = {i}\n")
        body = f"import sys\nsys.path.insert(0, {directory!r})\n" + "".join(
            f"import m{i}\n" for i in range(args.modules)
        )
        counts: dict[str, float] = {}
        for name, prelude in variants(pep726hook.available_engines()).items():
            argv = [sys.executable, "-s", "-c", "import sys\n" + prelude + body]
            runs = bench_callgrind.median_count(
                argv, bench_callgrind._environment(), HERE, args.repeat
            )
            counts[name] = statistics.median(runs)
    for name, count in counts.items():
        per_import = (count - counts["off"]) / args.modules
        print(
            f"{name:12s} {count / 1e6:9.2f}M instructions  ratio to off "
            f"{count / counts['off']:.4f}  {per_import:8.0f} more per module (install() included)"
        )
    if args.json_out:
        result = {"python": sys.version.split()[0], "modules": args.modules, "counts": counts}
        with open(args.json_out, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=1)


if __name__ == "__main__":
    main()

"""The documents say the same thing where they say it twice, and quote the benchmarks' figures.

Nothing is measured: the checks read README.md, PYPI.md and docs/*.md.  A
figure quoted in several places is listed in QUOTED with every file that must
hold it, so that changing it in one place fails here until it is changed
everywhere; the ranges derived from a table of docs/benchmarks*.md are
recomputed from that table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DASH = "\N{EN DASH}"  # the documents write ranges with it
OUTSIDE_FILES = ("README.md", "PYPI.md", "docs/library-authors.md", "docs/deprecation.md")
OUTSIDE = re.compile(r"<!-- outside-the-module:[^\n]*-->\n(.*?)<!-- /outside-the-module -->", re.S)

# figure, as written -> the files that quote it (the tables of docs/benchmarks*.md are the source).
QUOTED = {
    # fast_getattr=True: every module's suppressed misses (bench_module_getattr.py) and whole
    # programs (bench_getattr_tax.py); docs/native-engine-getattr.md holds the tables.
    f"8.7{DASH}12.3": (
        "README.md",
        "PYPI.md",
        "docs/library-authors.md",
        "docs/native-engine-getattr.md",
    ),
    "+1.4% on 3.12.1 and +2.1% on 3.14.10": ("README.md", "PYPI.md"),
    "`import numpy` +1.9% and +2.7%": ("README.md", "PYPI.md"),
    # The whole tools/run-tests.sh: CI's runs, and the chroot's set-up (docs/development.md).
    "about 40 minutes on CI's 2-core machine with warm caches (2,402 s": (
        "README.md",
        "docs/development.md",
    ),
    "(4.4 GB once set up,": ("README.md", "docs/development.md"),
    # A thousand deprecations: another module's store (bench_deprecation.py --case thousand).
    f"1.04{DASH}1.28": (
        "README.md",
        "PYPI.md",
        "docs/library-authors.md",
        "docs/deprecation.md",
        "docs/benchmarks-deprecation.md",
    ),
    # The move of a module of 1,000 functions (bench_deprecation.py --case move).
    f"0.14{DASH}0.17 ms": ("docs/benchmarks-deprecation.md", "docs/deprecation.md"),
    f"1.4{DASH}1.8 ms": ("docs/benchmarks-deprecation.md", "docs/deprecation.md"),
    # Another module's miss of a deprecated name (bench_deprecation.py --case other-miss).
    f"1.2{DASH}1.3": (
        "README.md",
        "PYPI.md",
        "docs/library-authors.md",
        "docs/deprecation.md",
        "docs/migrating-deprecations.md",
        "docs/native-engine.md",
        "docs/benchmarks.md",
    ),
    # fast_getattr=True's read gain (bench_fast_getattr.py --all --numpy; docs/fast-getattr.md's
    # table, recomputed below).
    f"4.1{DASH}4.7x fewer instructions, 3.2{DASH}4.8x less time": ("README.md", "PYPI.md"),
    f"4.1{DASH}4.7x fewer instructions": ("docs/library-authors.md",),
    f"4.1{DASH}4.7x in instructions": ("docs/native-engine-getattr.md",),
    f"3.2{DASH}4.8x less": ("docs/library-authors.md", "docs/fast-getattr.md"),
    f"4.1{DASH}4.6x a plain module's": ("docs/library-authors.md", "docs/engines.md"),
    f"0.67{DASH}0.76": (
        "README.md",
        "PYPI.md",
        "docs/library-authors.md",
        "docs/deprecation.md",
        "docs/migrating-deprecations.md",
    ),
}


def read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def table_row(page: str, section: str, label: str) -> list[str]:
    """The cells after the first of the row *label* in the first table under *section*."""
    start = page.index(section)
    for line in page[start:].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == label:
            return cells[1:]
    raise AssertionError(f"no row {label!r} under {section!r}")


def numbers(cells: list[str]) -> list[float]:
    return [float(re.match(r"[\d.]+", cell).group()) for cell in cells if cell]  # type: ignore[union-attr]


def test_what_changes_outside_the_module_is_one_paragraph_said_the_same_everywhere() -> None:
    found = {name: OUTSIDE.findall(read(name)) for name in OUTSIDE_FILES}
    assert all(len(paragraphs) == 1 for paragraphs in found.values()), found
    texts = {" ".join(paragraphs[0].split()) for paragraphs in found.values()}
    assert len(texts) == 1, "the paragraphs differ:\n\n" + "\n\n".join(sorted(texts))


@pytest.mark.parametrize("figure", sorted(QUOTED))
def test_a_figure_quoted_in_several_places_is_the_same_in_each(figure: str) -> None:
    # Compared with the lines joined: a figure may be wrapped anywhere.
    wanted = " ".join(figure.split())
    missing = [name for name in QUOTED[figure] if wanted not in " ".join(read(name).split())]
    assert not missing, f"{figure!r} is not in {missing}"


def test_the_quoted_miss_ratios_are_the_benchmark_tables() -> None:
    row = table_row(
        read("docs/benchmarks.md"),
        "### Another module's miss of a deprecated name",
        "deprecated elsewhere / plain miss",
    )
    ratios = numbers(row)
    dearer = [r for r in ratios if r >= 1]
    cheaper = [r for r in ratios if r < 1]
    assert f"{min(dearer):.1f}{DASH}{max(dearer):.1f}" in QUOTED
    assert f"{min(cheaper):.2f}{DASH}{max(cheaper):.2f}" in QUOTED


def test_the_deprecation_page_quotes_the_deprecated_read_ranges_of_the_benchmark_table() -> None:
    page = read("docs/benchmarks-deprecation.md")
    section = "## Deprecated attributes"
    pep562 = numbers(
        table_row(page, section, "**(b)** deprecated read / PEP 562 `__getattr__` (target <= 1.0)")
    )
    wrapper = numbers(table_row(page, section, "deprecated read / wrapper object"))
    text = " ".join(read("docs/deprecation.md").split())
    assert f"costs {min(pep562):.3f}{DASH}{max(pep562):.3f} of a PEP 562 `__getattr__`" in text
    assert (
        f"and {min(wrapper):.2f}{DASH}{max(wrapper):.2f} of a cryptography-style wrapper's" in text
    )


def proxy_tables() -> dict[tuple[str, str], list[float]]:
    """(read, row) -> its multiples, from benchmarks-deprecation.md's "A deprecating module against the proxies"."""
    page = read("docs/benchmarks-deprecation.md")
    found = {}
    for read_name, section in (
        ("m.x", "### `m.x`: the deprecating module's other name"),
        ("m.Old", "### `m.Old`: the deprecated name"),
    ):
        for row in (
            "Twisted's `_ModuleProxy`",
            "Twisted's helper converted",
            "cryptography's `_ModuleWithDeprecations`",
            "cryptography's helper converted",
            "zope.deprecation's `DeprecationProxy`",
            "zope.deprecation's helper converted",
        ):
            found[read_name, row] = numbers(table_row(page, section, row))
    return found


def close(quoted: float, measured: float) -> bool:
    """Whether *quoted* is *measured* to the three significant figures it is written with."""
    digits = len(f"{measured:.0f}") if measured >= 1 else 0
    return abs(quoted - measured) <= 0.51 * 10.0 ** (digits - 3)


def test_the_migration_pages_read_costs_are_the_benchmark_tables() -> None:
    tables = proxy_tables()
    libraries = {
        "Twisted": "Twisted",
        "cryptography": "cryptography",
        "zope.deprecation": "zope.deprecation",
    }
    proxies = {
        "Twisted": "Twisted's `_ModuleProxy`",
        "cryptography": "cryptography's `_ModuleWithDeprecations`",
        "zope.deprecation": "zope.deprecation's `DeprecationProxy`",
    }
    page = read("docs/migrating-deprecations.md")
    rows = 0
    for line in page.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] not in libraries or "proxy → pep726hook" not in cells[1]:
            continue
        read_name = cells[1].split("`")[1]
        proxy = tables[read_name, proxies[cells[0]]]
        converted = tables[read_name, f"{libraries[cells[0]]}'s helper converted"]
        for cell, before, after in zip(cells[2:], proxy, converted):
            quoted_before, quoted_after = (float(x.strip().rstrip("x")) for x in cell.split("→"))
            assert close(quoted_before, before) and close(quoted_after, after), (line, cell)
        rows += 1
    assert rows == 6


def fast_getattr_rows() -> list[list[str]]:
    """The rows of docs/fast-getattr.md's instructions table (bench_fast_getattr.py's figures)."""
    page = read("docs/fast-getattr.md")
    rows = []
    for line in page[page.index("## Measured") :].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| 3."):
            rows.append(cells)
    assert rows, "no instructions table under '## Measured'"
    return rows


def test_the_quoted_fast_getattr_gains_are_the_benchmark_table() -> None:
    rows = fast_getattr_rows()
    # columns: CPython, plain, __getattr__ (its multiple), with the switch, np.float64, switch
    plain = [float(r[1]) for r in rows]
    getattr_ = [float(r[2].split()[0]) for r in rows]
    switch = [float(r[3].split()[0]) for r in rows]
    gains = [g / s for g, s in zip(getattr_, switch)]
    multiples = [g / p for g, p in zip(getattr_, plain)]
    assert f"{min(gains):.1f}{DASH}{max(gains):.1f}x fewer instructions" in QUOTED
    assert f"{min(multiples):.1f}{DASH}{max(multiples):.1f}x a plain module's" in QUOTED
    page = " ".join(read("docs/fast-getattr.md").split())
    times = re.findall(r"([\d.]+) → ([\d.]+) ns", page[page.index("In time") :])
    time_gains = [float(a) / float(b) for a, b in times]
    assert len(time_gains) == 4, times
    assert f"{min(time_gains):.1f}{DASH}{max(time_gains):.1f}x less" in QUOTED


FIGURES_ROW = re.compile(r"^\| (?P<figure>.+?) \| (?P<page>[\w./-]+\.md) \| (?P<source>.+) \|$")


def figures_table() -> list[dict[str, str]]:
    rows = [
        m.groupdict() for m in map(FIGURES_ROW.match, read("docs/figures.md").splitlines()) if m
    ]
    return [row for row in rows if row["figure"] != "figure"]


def test_the_figures_page_lists_figures() -> None:
    assert len(figures_table()) >= 20


@pytest.mark.parametrize("row", figures_table(), ids=lambda row: f"{row['page']}:{row['figure']}")
def test_each_listed_figure_is_on_its_page_next_to_its_source(row: dict[str, str]) -> None:
    page = " ".join(read(row["page"]).split())
    figure = " ".join(row["figure"].split())
    assert figure in page, f"{figure!r} is not in {row['page']}"
    scripts = re.findall(r"(?:benchmarks|tools)/[\w.]+\.py", row["source"])
    commits = re.findall(r"\bcommits? ([0-9a-f]{7,40})(?: and ([0-9a-f]{7,40}))?", row["source"])
    hashes = [h for pair in commits for h in pair if h]
    assert scripts or (hashes and "history" in row["source"]), (
        f"{figure!r}: name a script in benchmarks/ or the commit of a historical figure"
    )
    for script in scripts:
        assert (ROOT / script).is_file(), f"{script} does not exist"
    # The page names the source near the figure: within the same paragraph.
    at = page.index(figure)
    near = page[max(0, at - 1000) : at + 1000]
    for name in [script.split("/")[-1] for script in scripts] + hashes:
        assert name in near, f"{row['page']} does not name {name} near {figure!r}"

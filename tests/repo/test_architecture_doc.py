"""docs/architecture.md names the packages of each distribution as the builds do.

The two distributions are ``qahwa-verify`` (``verifier/setup.py``'s ``VERIFIER_PACKAGES``)
and ``qahwa`` (``pyproject.toml``'s ``[tool.setuptools.packages.find]``); the document's
"Two distributions come from this tree" sentence lists both, every top-level package of the
repository is in exactly one of them, and each has a section or a mention in the document.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text("utf-8")


def verifier_packages() -> set[str]:
    """``VERIFIER_PACKAGES`` as verifier/setup.py assigns it (read, not run: it builds)."""
    tree = ast.parse((ROOT / "verifier" / "setup.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "VERIFIER_PACKAGES" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, tuple)
            return set(value)
    raise AssertionError("verifier/setup.py has no VERIFIER_PACKAGES")


def server_packages() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    include = project["tool"]["setuptools"]["packages"]["find"]["include"]
    return {p.removesuffix("*") for p in include}


def documented() -> tuple[set[str], set[str]]:
    """The packages the document lists for qahwa-verify and for qahwa."""
    m = re.search(
        r"Two distributions come from this tree: `qahwa-verify` \((.*?)\) and `qahwa` \((.*?)\)",
        DOC,
        re.S,
    )
    assert m, "docs/architecture.md no longer lists the two distributions' packages"
    verify, server = (set(re.findall(r"`([a-z_]+)`", g)) for g in m.groups())
    return verify, server


def test_the_documented_packages_are_the_distributions() -> None:
    verify, server = documented()
    assert verify == verifier_packages()
    assert server == server_packages()


def test_every_top_level_package_is_in_one_distribution() -> None:
    tops = {
        p.parent.name
        for p in ROOT.glob("*/__init__.py")
        if p.parent.name not in ("tests", "bench", "verifier")
    }
    verify, server = verifier_packages(), server_packages()
    assert not verify & server
    assert tops == verify | server


def test_the_document_describes_every_package() -> None:
    for pkg in verifier_packages() | server_packages():
        assert f"`{pkg}`" in DOC or f"## {pkg}/" in DOC, pkg


def test_the_tests_sit_in_the_documented_area_folders() -> None:
    """Every test file is in one area folder of tests/; the document's "tests/ — by area"
    section names exactly those folders; every folder is a package (a test imports a helper by
    its package path, ``tests.support.live_server``), and pytest's ``pythonpath`` adds no
    folder of tests/ to ``sys.path`` (a bare-name import would hide a missing package)."""
    tests = ROOT / "tests"
    assert not list(tests.glob("test_*.py")), "a test file at the top of tests/"
    areas = {p.parent.name for p in tests.glob("*/test_*.py")}
    section = DOC.split("## tests/ — by area", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"`tests/([a-z]+)/`", section)) == areas | {"support"}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert "pythonpath" not in project["tool"]["pytest"]["ini_options"]
    for folder in [tests, *(p for p in tests.iterdir() if p.is_dir() and any(p.glob("*.py")))]:
        assert (folder / "__init__.py").is_file(), folder

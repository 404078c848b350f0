"""The one-way dependencies of docs/architecture.md, checked on the source's imports (AST):
``fairness`` needs only the stdlib and ``cryptography``; ``games`` never imports ``service``
or ``verify_cli``; ``verify_cli`` never imports ``service``; ``service`` never imports
``verify_cli`` (``qahwa demo`` runs the ``verify`` command); nothing imports ``service``;
``qahwa_client`` needs only pydantic, httpx, ``cryptography``, ``qahwa_wire``, ``fairness``
(the conforming seat, ``fairness.seat``) and ``tlog`` (the log's inclusion proofs),
``verify_cli`` inside ``verify()`` and ``sealed`` for a sealed table's seat; ``qahwa_wire`` (the wire models the
service publishes and the client is typed with) needs only pydantic, and neither ``service``
nor ``qahwa_client`` imports the other (the
``qahwa demo`` command aside: it drives a server through the client);
``qahwa_page`` (the verify page, its Python and runtime: package data of the verifier's
distribution that the service serves too) needs only the stdlib and locates the packages
it zips for the browser without importing them."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.support import fresh_python

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = {
    "fairness",
    "tlog",
    "games",
    "service",
    "verify_cli",
    "qahwa_client",
    "qahwa_page",
    "qahwa_wire",
    "bench",
}


def imports_of(path: Path, package: str) -> set[str]:
    """Top-level names of every module a file imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                out.add(package)  # a relative import stays inside the package
            elif node.module:
                out.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id == "__import__")
            )
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.add(node.args[0].value.split(".")[0])
    return out


def package_imports(package: str) -> dict[str, set[str]]:
    files = sorted((ROOT / package).rglob("*.py"))
    return {str(f.relative_to(ROOT)): imports_of(f, package) for f in files}


def test_scanner_sees_every_kind_of_import(tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text(
        "import os.path, json as j\nfrom collections import abc\nfrom . import sibling\n"
        "def f():\n    import service.app\n    import importlib\n"
        "    importlib.import_module('verify_cli.main')\n    __import__('requests')\n"
    )
    assert imports_of(f, "games") == {
        "os",
        "json",
        "collections",
        "games",
        "service",
        "importlib",
        "verify_cli",
        "requests",
    }


@pytest.mark.parametrize("package", ["fairness", "tlog"])
def test_core_imports_only_stdlib_and_cryptography(package: str) -> None:
    allowed = set(sys.stdlib_module_names) | {"cryptography", package, "__future__"}
    found = package_imports(package)
    assert found, f"{package} has no modules?"
    for path, mods in found.items():
        assert mods <= allowed, f"{path} imports {sorted(mods - allowed)}"


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("games", {"service", "verify_cli"}),
        ("verify_cli", {"service"}),
        ("fairness", {"games", "service", "verify_cli"}),
        ("tlog", {"fairness", "games", "service", "verify_cli"}),
        ("service", {"verify_cli"}),
        ("qahwa_client", {"service"}),
        (
            "qahwa_wire",
            {"service", "qahwa_client", "games", "fairness", "verify_cli", "tlog", "qahwa_page"},
        ),
        ("verify_cli", {"qahwa_client"}),
        ("qahwa_page", {"fairness", "games", "service", "verify_cli", "qahwa_client"}),
        ("fairness", {"qahwa_page"}),
        ("games", {"qahwa_page"}),
    ],
)
def test_no_upward_imports(package: str, forbidden: set[str]) -> None:
    assert (ROOT / package).is_dir(), f"{package} is missing"
    for path, mods in package_imports(package).items():
        assert not mods & forbidden, f"{path} imports {sorted(mods & forbidden)}"


def test_qahwa_page_imports_only_the_stdlib() -> None:
    allowed = set(sys.stdlib_module_names) | {"qahwa_page", "__future__"}
    found = package_imports("qahwa_page")
    assert "qahwa_page/pyodide.py" in found
    for path, mods in found.items():
        assert mods <= allowed, f"{path} imports {sorted(mods - allowed)}"


#: the games modules that may import ``sealed`` (rbcl): the CPython backend of the sealed
#: engines (inside its methods, so that the page, which has no rbcl, installs its own), the
#: conforming sealed seat (its secrets) and the simulated seats of sealed matches
GAMES_SEALED = ("games/sealed_backend.py", "games/sealed_seat.py", "games/sealed_sim.py")


def test_games_imports_only_stdlib_and_fairness() -> None:
    allowed = set(sys.stdlib_module_names) | {"fairness", "games", "__future__"}
    for path, mods in package_imports("games").items():
        ok = allowed | ({"sealed"} if path in GAMES_SEALED else set())
        assert mods <= ok, f"{path} imports {sorted(mods - ok)}"


def test_a_sealed_engine_loads_no_rbcl_until_it_checks_a_proof() -> None:
    """The verify page runs the sealed engines in Pyodide with its own crypto backend: the
    engines, the registry and the replay load neither ``sealed`` nor ``rbcl``."""

    code = (
        "import sys, games.sealed_hokm, games.registry, games.replay, verify_cli.replay_core; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sealed', 'rbcl')))"
    )
    assert fresh_python(code) == "[]"


def _first_party_loaded(modules: str, also: set[str] | None = None) -> list[str]:
    """The first-party packages (and ``also``) a fresh interpreter has loaded after
    ``import modules``."""

    code = (
        f"import sys, {modules}; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        f"{set(FIRST_PARTY) | (also or set())!r}))"
    )
    loaded: list[str] = ast.literal_eval(fresh_python(code))
    return loaded


@pytest.mark.parametrize("package", ["fairness", "tlog"])
def test_importing_a_core_package_loads_no_other_first_party_package(package: str) -> None:
    assert _first_party_loaded(package) == [package]


#: what qahwa_wire may import (and so qahwa_client, which adds its own)
WIRE_IMPORTS = set(sys.stdlib_module_names) | {
    "__future__",
    "pydantic",
    "pydantic_core",
    "qahwa_wire",
}


def test_qahwa_client_imports_only_pydantic_httpx_and_verify_inside_verify() -> None:
    base = WIRE_IMPORTS | {"httpx", "cryptography", "fairness", "tlog", "qahwa_client"}
    found = package_imports("qahwa_client")
    assert "qahwa_client/verify.py" in found
    assert "qahwa_client/sealed.py" in found
    for path, mods in found.items():
        allowed = base | ({"verify_cli"} if path == "qahwa_client/verify.py" else set())
        # a sealed table's seat runs its deal machine (the games' rules, games.sealed_deal)
        # and makes its key, shuffle, shares and openings with the crypto core (stdlib and
        # rbcl only), both loaded at the seat's first sealed view
        allowed |= {"sealed", "games"} if path == "qahwa_client/sealed.py" else set()
        assert mods <= allowed, f"{path} imports {sorted(mods - allowed)}"


def test_importing_qahwa_client_loads_no_sealed_crypto() -> None:
    assert "sealed" not in _first_party_loaded("qahwa_client", also={"sealed"})


# `qahwa demo` plays a server through the client: a client of the service, shipped with it
DEMO = "service/demo.py"
HOUSE = "service/house.py"


def test_service_does_not_import_qahwa_client() -> None:
    """The service takes its wire models from qahwa_wire, not from the client; only the demo
    command and the house bots, themselves clients of the service, drive it through
    ``qahwa_client``."""
    found = package_imports("service")
    assert DEMO in found and "qahwa_client" in found[DEMO]
    assert HOUSE in found and "qahwa_client" in found[HOUSE]
    for path, mods in found.items():
        if path not in (DEMO, HOUSE):
            assert "qahwa_client" not in mods, f"{path} imports qahwa_client"


def test_qahwa_wire_imports_only_pydantic() -> None:
    allowed = WIRE_IMPORTS
    found = package_imports("qahwa_wire")
    assert "qahwa_wire/models.py" in found
    for path, mods in found.items():
        assert mods <= allowed, f"{path} imports {sorted(mods - allowed)}"


def test_importing_qahwa_wire_loads_no_other_first_party_package() -> None:
    assert _first_party_loaded("qahwa_wire.models") == ["qahwa_wire"]


def test_the_server_distribution_ships_qahwa_wire() -> None:
    import tomllib

    with (ROOT / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)
    setuptools = project["tool"]["setuptools"]
    assert "qahwa_wire*" in setuptools["packages"]["find"]["include"]
    assert "py.typed" in setuptools["package-data"]["qahwa_wire"]
    assert (ROOT / "qahwa_wire" / "py.typed").is_file()
    assert "qahwa_wire" in project["tool"]["mypy"]["packages"]


def test_nothing_imports_service() -> None:
    # (bench is no package of the product: it drives the service in-process to time it)
    for package in FIRST_PARTY - {"service", "bench"}:
        if (ROOT / package).is_dir():
            for path, mods in package_imports(package).items():
                assert "service" not in mods, f"{path} imports service"


def test_loading_the_service_and_its_cli_loads_no_verify_cli() -> None:
    """Transitively, too: the app, the CLI and the demo never load verify_cli."""
    assert _first_party_loaded("service.app, service.cli, service.demo, qahwa_client") == [
        "fairness",
        "games",
        "qahwa_client",
        "qahwa_page",
        "qahwa_wire",
        "service",
        "tlog",
    ]


def test_loading_the_app_loads_no_qahwa_client() -> None:
    assert "qahwa_client" not in _first_party_loaded("service.app")


def test_serving_the_pages_python_loads_no_verify_cli() -> None:
    """The service zips verify_cli's sources for the browser without importing it."""
    loaded = _first_party_loaded("qahwa_page.pyodide; qahwa_page.pyodide.source_zip()")
    assert loaded == ["qahwa_page"]

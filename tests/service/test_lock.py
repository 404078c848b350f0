"""The locks in requirements/ match pyproject.toml, are complete, hashed, and installed.

`make serve` installs requirements/main.txt, `make test` requirements/dev.txt, both with
``pip --require-hashes``; `make lock` writes them from pyproject.toml, and
requirements/verify.txt (the verifier's own distribution, qahwa-verify) from
verifier/pyproject.toml, and requirements/verify-certify.txt from it with its one extra,
``certify`` (the plots of ``verify certify``; dev.txt has it too). These tests fail when a pyproject.toml changed without `make lock`,
when a lock lost a hash or a transitive dependency, or when the environment running the
tests is not the locked one. qahwa-verify itself is built from this repository: the server's
locks hold its dependencies, not it.
"""

from __future__ import annotations

import importlib.metadata as md
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
REQ = ROOT / "requirements"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
VERIFIER = tomllib.loads((ROOT / "verifier" / "pyproject.toml").read_text("utf-8"))
#: distributions built from this repository (pyproject.toml's [tool.uv.sources])
LOCAL = {canonicalize_name(VERIFIER["project"]["name"])}

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


@dataclass
class Pin:
    name: str
    version: Version
    marker: Marker | None
    hashes: int
    via: list[str]

    def applies(self) -> bool:
        return self.marker is None or self.marker.evaluate()


def read_lock(name: str) -> list[Pin]:
    pins: list[Pin] = []
    for line in (REQ / name).read_text("utf-8").splitlines():
        m = PIN.match(line)
        if m:
            marker = Marker(m.group(3)) if m.group(3) else None
            pins.append(Pin(canonicalize_name(m.group(1)), Version(m.group(2)), marker, 0, []))
        elif line.strip().startswith("--hash=sha256:") and pins:
            pins[-1].hashes += 1
        elif line.strip().startswith("#") and pins and "via" not in line:
            pins[-1].via.append(line.strip("# \t"))
        elif line.strip().startswith("# via ") and pins:
            pins[-1].via.append(line.strip()[len("# via ") :])
    assert pins, f"requirements/{name} pins nothing"
    return pins


def applicable(pins: list[Pin]) -> dict[str, Version]:
    return {p.name: p.version for p in pins if p.applies()}


def _extra(project: dict[str, Any], extra: str) -> list[Requirement]:
    return [Requirement(r) for r in project["project"]["optional-dependencies"][extra]]


def direct(extras: tuple[str, ...], lock: str = "main.txt") -> list[Requirement]:
    """What a lock was compiled from: the verifier's dependencies (and its ``extras``) for
    verify*.txt; the server's (with ``extras``; ``certify`` is the verifier's) and the
    build back end for the others."""
    if lock.startswith("verify"):
        reqs = [Requirement(r) for r in VERIFIER["project"]["dependencies"]]
        for extra in extras:
            reqs += _extra(VERIFIER, extra)
        return reqs
    reqs = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    if "certify" in extras:  # dev.txt is compiled from verifier/pyproject.toml too
        reqs += [Requirement(r) for r in VERIFIER["project"]["dependencies"]]
    for extra in extras:
        reqs += _extra(VERIFIER if extra == "certify" else PYPROJECT, extra)
    reqs += [
        Requirement(line)
        for line in (REQ / "build.in").read_text("utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return reqs


LOCKS = {
    "main.txt": (),
    "dev.txt": ("dev", "reference", "certify"),
    "verify.txt": (),
    "verify-certify.txt": ("certify",),
}


def test_the_plots_extra_is_the_verifiers_only() -> None:
    """One extra draws the plots: qahwa-verify[certify], locked in verify-certify.txt."""
    assert "certify" in VERIFIER["project"]["optional-dependencies"]
    assert "certify" not in PYPROJECT["project"].get("optional-dependencies", {})
    assert "matplotlib" in applicable(read_lock("verify-certify.txt"))


@pytest.mark.parametrize(("lock", "extras"), LOCKS.items())
def test_every_direct_dependency_is_pinned_within_its_range(
    lock: str, extras: tuple[str, ...]
) -> None:
    pins = applicable(read_lock(lock))
    for req in direct(extras, lock):
        name = canonicalize_name(req.name)
        if name in LOCAL:
            assert name not in pins, f"requirements/{lock} pins {name}, which is built here"
            continue
        assert name in pins, (
            f"{req} is in pyproject.toml but not in requirements/{lock}: run `make lock`"
        )
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"requirements/{lock} pins {name}=={pins[name]}, outside {req}: run `make lock`"
        )


@pytest.mark.parametrize(("lock", "extras"), LOCKS.items())
def test_lock_has_no_direct_dependency_pyproject_dropped(
    lock: str, extras: tuple[str, ...]
) -> None:
    wanted = {canonicalize_name(r.name) for r in direct(extras, lock)}
    for pin in read_lock(lock):
        if any("pyproject.toml" in v or "build.in" in v for v in pin.via):
            assert pin.name in wanted, (
                f"requirements/{lock} still pins {pin.name} for pyproject.toml, which no "
                "longer asks for it: run `make lock`"
            )


@pytest.mark.parametrize(
    "lock", ["main.txt", "dev.txt", "tools.txt", "verify.txt", "verify-certify.txt"]
)
def test_every_pin_is_hashed(lock: str) -> None:
    for pin in read_lock(lock):
        assert pin.hashes >= 1, f"requirements/{lock}: {pin.name} has no --hash"


@pytest.mark.parametrize(("lock", "extras"), LOCKS.items())
def test_lock_is_closed_under_dependencies(lock: str, extras: tuple[str, ...]) -> None:
    """Every requirement of every locked package (markers of this machine) is locked too."""
    pins = applicable(read_lock(lock))
    todo = list(direct(extras, lock))
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        key = (name, frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        assert name in pins or name in LOCAL, (
            f"{name} is needed but not pinned in requirements/{lock}"
        )
        for text in md.requires(name) or []:
            sub = Requirement(text)
            if sub.marker is None or any(
                sub.marker.evaluate({"extra": e}) for e in {"", *req.extras}
            ):
                todo.append(sub)


def test_installed_environment_is_the_locked_one() -> None:
    """What the tests run on is what the lock says (make test installs dev.txt)."""
    for name, version in applicable(read_lock("dev.txt")).items():
        if name in {"pip"}:
            continue  # the venv's own installer; pinned but upgraded in place
        try:
            got = Version(md.version(name))
        except md.PackageNotFoundError:
            pytest.fail(f"{name}=={version} is locked but not installed: run `make test`")
        assert got == version, f"{name}: installed {got}, locked {version}"


@pytest.mark.parametrize("lock", ["main.txt", "verify.txt", "verify-certify.txt"])
def test_main_lock_agrees_with_dev_lock(lock: str) -> None:
    """The service and the verifier run on the same versions the tests ran on."""
    dev = applicable(read_lock("dev.txt"))
    for name, version in applicable(read_lock(lock)).items():
        assert dev.get(name) == version, f"{name}: {lock} {version}, dev.txt {dev.get(name)}"


def test_the_verifier_is_installed_from_this_repository() -> None:
    dist = md.distribution(VERIFIER["project"]["name"])
    assert dist.version == VERIFIER["project"]["version"]
    assert f"{dist.metadata['Name']}=={dist.version}" in PYPROJECT["project"]["dependencies"]

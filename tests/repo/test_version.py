"""One version everywhere (issue 30): the package's (pyproject.toml), the verifier's
(verifier/pyproject.toml, pinned exactly by the server), OpenAPI's ``info.version``, the
front page, ``/v1/log``'s headers (with the protocols the server serves), ``qahwa
--version``, ``verify --version`` and the ``qahwa_build_info`` metric."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PROTOCOLS = "qahwa-fair/1, qahwa-fair/2, qahwa-fair/3"


def _project_version(path: Path) -> str:
    with path.open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def test_one_version_in_both_distributions() -> None:
    server = _project_version(ROOT / "pyproject.toml")
    assert _project_version(ROOT / "verifier" / "pyproject.toml") == server
    with (ROOT / "pyproject.toml").open("rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    assert f"qahwa-verify=={server}" in deps


def test_the_server_says_its_version_everywhere(client: httpx.Client) -> None:
    want = _project_version(ROOT / "pyproject.toml")
    info = client.get("/openapi.json").json()["info"]
    assert info["version"] == want
    assert "qahwa-fair/2" in info["summary"] and "1.0.0" not in info["summary"]
    home = client.get("/").text
    assert f"Version {want}." in home
    assert "<code>qahwa-fair/1</code>, <code>qahwa-fair/2</code>" in home
    log = client.get("/v1/log")
    assert log.status_code == 200
    assert log.headers["qahwa-protocols"] == PROTOCOLS
    assert log.headers["qahwa-version"] == want
    # a page from another origin may read them (service/front.py)
    assert "Qahwa-Protocols" in log.headers["access-control-expose-headers"]
    metrics = client.get("/metrics")
    assert metrics.status_code == 200
    build = {f.name: f for f in text_string_to_metric_families(metrics.text)}["qahwa_build_info"]
    assert [(s.labels, s.value) for s in build.samples] == [
        ({"version": want, "protocols": "qahwa-fair/1,qahwa-fair/2,qahwa-fair/3"}, 1.0)
    ]


def test_both_commands_say_the_version() -> None:
    want = _project_version(ROOT / "pyproject.toml")
    for cmd in ("qahwa", "verify"):
        out = subprocess.run(
            [str(BIN / cmd), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout == f"{cmd} {want} ({PROTOCOLS})\n"

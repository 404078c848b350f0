"""qahwa-verify, the verifier's own distribution: built from this repository, installed
alone into a fresh venv (its locked dependencies only, no index), it verifies transcripts,
carries the pinned Pyodide runtime and serves the verify page, and holds none of the server.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
import urllib.request
import venv
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from qahwa_page.pyodide import RUNTIME_FILES, check_runtime
from tests.support import made_up_v1
from tests.support.browser import launch, needs_chromium, open_page
from tests.support.http_play import play_to_end
from tests.support.live_server import LiveServer
from tests.verify.test_verify_cli_helpers import full_match, key_b64, write

ROOT = Path(__file__).resolve().parents[2]
VERIFIER = ROOT / "verifier"
LOCK = ROOT / "requirements" / "verify.txt"
# where the locked dependencies' files are kept between runs (git-ignored build/)
WHEELHOUSE = ROOT / "build" / "verify-wheelhouse"
#: the server's own dependencies, by their import names; none may come with the verifier
_SERVER_IMPORTS = [
    "fastapi",
    "starlette",
    "sqlalchemy",
    "sqlmodel",
    "alembic",
    "psycopg",
    "uvicorn",
    "pydantic",
]
SERVER_DISTS = {*_SERVER_IMPORTS, "psycopg-binary", "pydantic-settings", "typer"}
SERVER_MODULES = [*_SERVER_IMPORTS, "service", "qahwa_client", "qahwa_wire"]


def _listed_packages() -> set[str]:
    """verifier/setup.py's VERIFIER_PACKAGES (the one list of what the wheel holds)."""
    spec = importlib.util.spec_from_file_location("verifier_setup", VERIFIER / "setup.py")
    assert spec is not None and spec.loader is not None
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)  # setup() itself runs only as __main__
    return set(setup.VERIFIER_PACKAGES)


def _version() -> str:
    with (VERIFIER / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    # without PYTHONPATH: the build leaves qahwa_verify.egg-info in this checkout's root, and
    # a checkout on PYTHONPATH would make pip take the fresh venv's qahwa-verify as installed
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env=env,
    )


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"{proc.args}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built as `make verifier-dist` builds it."""
    try:
        check_runtime()
    except Exception as exc:  # the build would refuse: say why here
        pytest.skip(f"the Pyodide runtime is not installed (make pyodide): {exc}")
    out = tmp_path_factory.mktemp("dist")
    _ok(_pip("wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(VERIFIER)))
    found = list(out.glob("*.whl"))
    assert [w.name for w in found] == [f"qahwa_verify-{_version()}-py3-none-any.whl"]
    return found[0]


@pytest.fixture(scope="module")
def fresh(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its locked dependencies, installed with no index."""
    # the locked files, hash-checked, fetched once the way pip is configured on this machine
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    _ok(
        _pip(
            "download",
            "-q",
            "--require-hashes",
            "--no-deps",
            "--only-binary",
            ":all:",
            "-r",
            str(LOCK),
            "-d",
            str(WHEELHOUSE),
        )
    )
    env = tmp_path_factory.mktemp("venv") / "v"
    venv.create(env, with_pip=False)
    py = env / "bin" / "python"
    _ok(
        _pip(
            "--python",
            str(py),
            "install",
            "-q",
            "--no-index",
            "--find-links",
            str(WHEELHOUSE),
            "--require-hashes",
            "-r",
            str(LOCK),
        )
    )
    _ok(_pip("--python", str(py), "install", "-q", "--no-index", "--no-deps", str(wheel)))
    return env


def _run(env: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=120,
        env={"PATH": f"{env / 'bin'}:/usr/bin:/bin"},
    )


def test_the_wheel_holds_the_verifier_and_the_pinned_runtime_and_no_server(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("qahwa_verify-")}
    assert tops == _listed_packages()
    assert tops >= {"fairness", "games", "qahwa_page", "verify_cli"}
    assert not tops & {"service", "qahwa_client", "qahwa_wire", "tests", "bench"}
    for pkg in tops:
        assert f"{pkg}/py.typed" in names, f"{pkg} has no py.typed"
    for f in ("verify.html", "verify.js", "verify-worker.js", "merkle.js", "sealed-verify.js"):
        assert f"qahwa_page/static/{f}" in names
    # the chunks sealed-verify.js imports (shared with play.js), beside it
    assert any(re.fullmatch(r"qahwa_page/static/chunk-[A-Z0-9]+\.js", n) for n in names)
    for f in [*RUNTIME_FILES, ".pin"]:
        assert f"qahwa_page/static/pyodide/{f}" in names
    meta = zipfile.ZipFile(wheel).read(f"qahwa_verify-{_version()}.dist-info/METADATA").decode()
    requires = {
        re.split(r"[ <>=;\[]", line.split(": ", 1)[1])[0].lower()
        for line in meta.splitlines()
        if line.startswith("Requires-Dist: ") and "extra ==" not in line
    }
    assert requires == {"cryptography", "click", "rich", "httpx", "rbcl"}
    assert not requires & SERVER_DISTS
    assert "Provides-Extra: certify" in meta
    entry = (
        zipfile.ZipFile(wheel)
        .read(f"qahwa_verify-{_version()}.dist-info/entry_points.txt")
        .decode()
    )
    assert "verify = verify_cli.main:app" in entry


def test_a_fresh_venv_with_only_the_wheel_verifies_a_v1_transcript(
    fresh: Path, tmp_path: Path
) -> None:
    listed = json.loads(
        _ok(_pip("--python", str(fresh / "bin" / "python"), "list", "--format", "json"))
    )
    dists = {d["name"].lower() for d in listed}
    assert "qahwa-verify" in dists and "qahwa" not in dists
    assert not dists & SERVER_DISTS, sorted(dists & SERVER_DISTS)
    _ok(_pip("--python", str(fresh / "bin" / "python"), "check"))
    # everything is imported from the venv, not from this checkout, and no server module
    probe = (
        "import sys, json, fairness, games, qahwa_page, verify_cli.main\n"
        "from qahwa_page.pyodide import check_runtime, source_zip\n"
        "check_runtime(); source_zip()\n"
        "print(json.dumps({'files': [fairness.__file__, qahwa_page.__file__],"
        f" 'server': sorted(m for m in {SERVER_MODULES!r} if m in sys.modules)}}))"
    )
    out = json.loads(_ok(_run(fresh, fresh / "bin" / "python", "-c", probe, cwd=tmp_path)))
    assert all(f.startswith(str(fresh)) for f in out["files"]), out
    assert out["server"] == []
    for mod in SERVER_MODULES:
        proc = _run(fresh, fresh / "bin" / "python", "-c", f"import {mod}", cwd=tmp_path)
        assert proc.returncode != 0, f"{mod} is importable in the verifier's venv"

    doc: dict[str, Any] = full_match("tawla")
    path = write(tmp_path / "t.json", doc)
    key = tmp_path / "server.pub"
    key.write_text(key_b64() + "\n")
    ok = _run(fresh, fresh / "bin" / "verify", path, "--key", key, "--jobs", "1", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "verified" in ok.stdout.lower()
    doc["result"]["winners"] = (
        [1 - doc["result"]["winners"][0]] if doc["result"]["winners"] else [0]
    )
    bad = _run(
        fresh,
        fresh / "bin" / "verify",
        write(tmp_path / "bad.json", doc),
        "--key",
        key,
        "--jobs",
        "1",
        cwd=tmp_path,
    )
    assert bad.returncode == 1, bad.stdout + bad.stderr


def test_the_fresh_install_serves_the_page_with_its_runtime(fresh: Path, tmp_path: Path) -> None:
    """`verify page` from the venv: the page, the runtime and the page's Python, all from
    the wheel (the sources zip holds the venv's own files)."""
    import io

    with _own_page(fresh, tmp_path) as url:
        base = url.removesuffix("/verify")

        def get(path: str) -> bytes:
            with urllib.request.urlopen(base + path, timeout=30) as r:
                assert r.status == 200, path
                return bytes(r.read())

        assert b"<html" in get("/verify")
        manifest = json.loads(get("/static/qahwa-py.json"))
        assert manifest["runtime"] is not None and manifest["module"] == "verify_cli.replay_core"
        for name in RUNTIME_FILES:
            assert get(f"{manifest['runtime']['url']}{name}")
        sources = zipfile.ZipFile(io.BytesIO(get(manifest["sources"]["url"])))
        site = next((fresh / "lib").glob("python3*/site-packages"))
        assert sources.read("games/tawla.py") == (site / "games" / "tawla.py").read_bytes()


def test_the_server_distribution_depends_on_exactly_this_verifier() -> None:
    with (ROOT / "pyproject.toml").open("rb") as f:
        server = tomllib.load(f)
    assert f"qahwa-verify=={_version()}" in server["project"]["dependencies"]
    assert server["tool"]["uv"]["sources"]["qahwa-verify"]["path"] == "verifier"
    own = server["tool"]["setuptools"]["packages"]["find"]["include"]
    assert not any(p.startswith(("fairness", "games", "verify_cli", "qahwa_page")) for p in own)
    assert "verify" not in server["project"]["scripts"]


def test_a_listed_package_that_is_missing_fails_the_build(tmp_path: Path) -> None:
    """verifier/setup.py names the missing package instead of building a wheel without it."""
    copy = tmp_path / "repo"
    (copy / "verifier").mkdir(parents=True)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        (copy / "verifier" / name).write_text((VERIFIER / name).read_text())
    for pkg in ("fairness", "sealed", "tlog", "games", "verify_cli"):  # qahwa_page left out
        (copy / pkg).mkdir()
        (copy / pkg / "__init__.py").write_text("")
    proc = _pip(
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(tmp_path / "d"),
        str(copy / "verifier"),
    )
    assert proc.returncode != 0
    assert "listed package(s) qahwa_page missing" in proc.stdout + proc.stderr
    assert not list((tmp_path / "d").glob("*.whl"))


@contextmanager
def _own_page(env: Path, cwd: Path) -> Iterator[str]:
    """``verify page --port 0`` from the venv ``env``; yields the page's URL."""
    proc = subprocess.Popen(
        [str(env / "bin" / "verify"), "page", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        env={"PATH": f"{env / 'bin'}:/usr/bin:/bin"},
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "with Pyodide" in line, line
        yield line.split()[2]
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stderr is not None:
            proc.stderr.close()


def _verdict(page: Any, fields: dict[str, str], src: str = "id") -> tuple[str, dict[str, str]]:
    """Fill ``fields``, pick the source ``src``, verify: (verdict, {row: data-ok}) once the
    rules replay and the log row are done."""
    from playwright.sync_api import expect

    for sel, value in fields.items():
        page.fill(sel, value)
    page.check(f"input[name=src][value={src}]")
    page.click("#go")
    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("data-run", re.compile(r"\d"), timeout=60_000)
    expect(verdict).not_to_have_attribute("data-replay", "pending", timeout=180_000)
    if page.locator("tr[data-check=log]").count():
        expect(page.locator("tr[data-check=log]")).not_to_have_attribute(
            "data-status", "pending", timeout=60_000
        )
    rows = page.eval_on_selector_all(
        "tr[data-check]", "els => els.map(e => [e.dataset.check, e.dataset.ok])"
    )
    assert page.js_errors == []
    return str(page.get_attribute("#verdict", "data-verdict")), {str(k): str(v) for k, v in rows}


@pytest.mark.slow
@needs_chromium
def test_the_players_own_page_verifies_a_real_match_from_the_operators_url(
    fresh: Path, server: LiveServer, tmp_path: Path
) -> None:
    """The player's path of issue 30: the wheel in a fresh venv, `verify page`, and the
    operator's URL (or a match URL from it): the page fetches keys, transcript and log proof
    across origins and says "verified" with every row green, the log's included; a forged
    transcript never is; a match id without a server says what to give."""
    with httpx.Client(base_url=server.url, timeout=30) as c:
        mid = play_to_end(c, "tawla", {"match_length": 1}, seed=11)
        doc = c.get(f"/v1/matches/{mid}/transcript").json()
    assert doc["protocol"] == "qahwa-fair/2"
    forged = json.loads(json.dumps(doc))
    forged["result"]["winners"] = [1 - forged["result"]["winners"][0]]
    with _own_page(fresh, tmp_path) as url, launch() as browser:
        with open_page(browser, url + "?lang=en") as page:
            verdict, rows = _verdict(page, {"#in-server": server.url, "#in-id": mid})
            assert rows.get("log") == "true", (rows, page.inner_text("tr[data-check=log]"))
            assert set(rows.values()) == {"true"}, rows
            assert verdict == "pass", page.inner_text("#verdict")
            assert f"verify --server {server.url} --match {mid}" in page.inner_text("#rules-note")
        with open_page(browser, url + "?lang=en") as page:  # a match URL alone
            verdict, rows = _verdict(page, {"#in-server": f"{server.url}/v1/matches/{mid}"})
            assert (verdict, rows["log"]) == ("pass", "true"), rows
        with open_page(browser, url + "?lang=en") as page:  # pasted, the server beside it
            verdict, rows = _verdict(
                page, {"#in-server": server.url, "#in-paste": json.dumps(doc)}, "paste"
            )
            assert (verdict, rows["log"]) == ("pass", "true"), rows
        with open_page(browser, url + "?lang=en") as page:
            verdict, rows = _verdict(
                page, {"#in-server": server.url, "#in-paste": json.dumps(forged)}, "paste"
            )
            assert verdict == "fail" and "false" in rows.values(), rows
        # the operator's made-up qahwa-fair/1 transcript for this v2 match's id, signed with
        # its own key: sound by itself, refused by the log (fairness-v2 §9, downgrades)
        v1 = made_up_v1(server.app.state.service, mid)
        with open_page(browser, url + "?lang=en") as page:
            verdict, rows = _verdict(
                page, {"#in-server": server.url, "#in-paste": json.dumps(v1)}, "paste"
            )
            log = page.inner_text("tr[data-check=log]")
            assert verdict == "fail" and rows["log"] == "false", (rows, log)
            assert "DOWNGRADE" in log and "qahwa-fair/2 lock" in log, log
        with open_page(browser, url + "?lang=en") as page:  # no server: say what to give
            verdict, _ = _verdict(page, {"#in-id": mid})
            assert verdict == "error"
            text = page.inner_text("#verdict")
            assert "is not a qahwa server" in text and "Operator\u2019s server" in text, text
        # a saved copy of the page (file://, the HTML as served): keys, transcript and log
        # proof still come from the operator
        saved = tmp_path / "verify.html"
        with urllib.request.urlopen(url, timeout=30) as r:
            saved.write_bytes(r.read())
        with open_page(browser, saved.as_uri() + "?lang=en") as page:
            verdict, rows = _verdict(page, {"#in-id": mid})
            assert verdict == "error"
            assert "Operator\u2019s server" in page.inner_text("#verdict")
        with open_page(browser, saved.as_uri() + "?lang=en") as page:
            verdict, rows = _verdict(page, {"#in-server": server.url, "#in-id": mid})
            # no rules replay from a file: never "pass", but everything fetched checks out
            assert verdict == "incomplete", rows
            assert rows["signature"] == rows["lock_sig"] == rows["chain"] == "true", rows
            assert rows["log"] == "true", page.inner_text("tr[data-check=log]")

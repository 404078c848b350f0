"""The verify page's Python as the service serves it (qahwa_page/pyodide.py), without a browser:
the pinned runtime and its fetch, the sources zip and its content hash, the manifest, the
worker's and the page's CSP, and that the browser's part of ``verify`` imports no
``cryptography``."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fairness import PROTOCOL
from games.transcript import simulate_match
from qahwa_page import pyodide
from tests.page.page_support import ROOT
from tests.support import fresh_python
from tests.support.live_server import LiveServer
from verify_cli.core import CLI_ONLY_CHECKS, verify_document
from verify_cli.replay_core import browser_report


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        c.app = server.app  # type: ignore[attr-defined]
        yield c
    server.app.state.pyodide_dir = pyodide.RUNTIME_DIR


def test_browser_part_imports_no_cryptography() -> None:
    code = (
        "import sys, json\n"
        "from games.registry import GAME_IDS, engine_class\n"
        "from fairness import PROTOCOL\n"
        "from games.transcript import simulate_match\n"
        "import verify_cli.replay_core as rc\n"
        "for g in GAME_IDS:\n"
        "    engine_class(g)\n"
        "doc, _ = simulate_match('tawla', seed=1, protocol=PROTOCOL)\n"
        "assert json.loads(rc.browser_report(json.dumps(doc)))['checks'][2]['ok'] is True\n"
        "import verify_cli.stats as st\n"  # the page's statistics, on Pyodide (no click)
        "assert json.loads(st.browser_stats(json.dumps(doc)))['status'] == 'ok'\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'cryptography', 'httpx', "
        "'rich', 'click', 'typer', 'service'}))\n"
    )
    assert fresh_python(code) == "[]"


def test_signing_still_loads_on_first_use() -> None:
    import fairness

    assert fairness.Signer.generate().key_id
    with pytest.raises(AttributeError):
        _ = fairness.no_such_name  # type: ignore[attr-defined]


def test_browser_report_is_the_cli_verdict() -> None:
    doc, _ = simulate_match("hokm", seed=2, protocol=PROTOCOL)
    page = json.loads(browser_report(json.dumps(doc)))
    cli = verify_document(doc, None, draws_limit=None)
    assert page["checks"] == [c for c in cli["checks"] if c["name"] not in CLI_ONLY_CHECKS]
    assert [d["text"] for d in page["draws"]] == [d["text"] for d in cli["draws"]]
    doc["result"]["scores"][0] += 1
    page = json.loads(browser_report(json.dumps({"transcript": doc})))
    assert [c["ok"] for c in page["checks"] if c["name"] == "result"] == [False]
    assert json.loads(browser_report("[1]"))["status"] == "unusable"
    assert json.loads(browser_report("{"))["status"] == "unusable"


def test_source_zip_is_the_checkout_with_a_content_hash() -> None:
    a, b = pyodide.build_source_zip(), pyodide.build_source_zip()
    assert a == b  # deterministic: the name is a content hash
    assert a.sha256 == hashlib.sha256(a.data).hexdigest()
    names = zipfile.ZipFile(io.BytesIO(a.data)).namelist()
    for f in (
        "fairness/__init__.py",
        "fairness/derive.py",
        "games/registry.py",
        "verify_cli/replay_core.py",
        "verify_cli/render.py",
    ):
        assert f in names
    assert all(n.endswith(".py") and "__pycache__" not in n for n in names)
    z = zipfile.ZipFile(io.BytesIO(a.data))
    assert z.read("verify_cli/replay_core.py") == (ROOT / "verify_cli/replay_core.py").read_bytes()


def test_manifest_zip_and_worker_routes(client: httpx.Client, tmp_path: Path) -> None:
    client.app.state.pyodide_dir = tmp_path / "none"  # type: ignore[attr-defined]
    man = client.get("/static/qahwa-py.json")
    assert man.status_code == 200 and man.headers["cache-control"] == "no-cache"
    body = man.json()
    assert body["runtime"] is None
    z = client.get(body["sources"]["url"])
    assert z.status_code == 200
    assert hashlib.sha256(z.content).hexdigest() == body["sources"]["sha256"]
    assert "immutable" in z.headers["cache-control"]
    assert client.get("/static/qahwa-py-0000000000000000.zip").status_code == 404
    w = client.get("/static/verify-worker.js")
    assert w.status_code == 200 and w.headers["content-type"].startswith("text/javascript")
    csp = w.headers["content-security-policy"]
    assert "'wasm-unsafe-eval'" in csp and "script-src 'self'" in csp
    assert "'unsafe-eval'" not in csp and "http:" not in csp
    r = client.get(f"/static/pyodide/{pyodide.PYODIDE_VERSION}/pyodide.mjs")
    assert r.status_code == 404 and "make pyodide" in r.json()["error"]["message"]
    page = client.get("/verify")
    assert page.headers["content-security-policy"] == pyodide.PAGE_CSP
    assert "'unsafe-eval'" not in pyodide.PAGE_CSP
    # the page's own <meta> says the same
    assert f'content="{pyodide.PAGE_CSP}"' in page.text


def _fake_runtime(directory: Path) -> None:
    """Stand-in runtime files with a pin as the fetch writes it (their SHA-256 recorded)."""
    directory.mkdir(parents=True)
    lines = [pyodide._pin()]
    for name in pyodide.RUNTIME_FILES:
        data = b"x" + name.encode()
        (directory / name).write_bytes(data)
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {name}")
    (directory / pyodide.PIN_FILE).write_text("\n".join(lines) + "\n")


def test_check_runtime_holds_every_file_to_its_recorded_hash(tmp_path: Path) -> None:
    rt = tmp_path / "rt"
    with pytest.raises(pyodide.FetchError, match="not installed"):
        pyodide.check_runtime(rt)
    _fake_runtime(rt)
    assert "as pinned" in pyodide.check_runtime(rt)
    assert pyodide.main(["check", str(rt)]) == 0
    (rt / "pyodide.mjs").write_bytes(b"tampered")
    with pytest.raises(pyodide.FetchError, match="pyodide.mjs is not the file unpacked"):
        pyodide.check_runtime(rt)
    assert pyodide.main(["check", str(rt)]) == 1
    # a pin of the old form (no hashes) serves, but builds no wheel
    (rt / pyodide.PIN_FILE).write_text(pyodide._pin() + "\n")
    assert pyodide.runtime_installed(rt)
    with pytest.raises(pyodide.FetchError, match="no recorded SHA-256"):
        pyodide.check_runtime(rt)
    (rt / pyodide.PIN_FILE).write_text("0.1.0 sha512-x\n")
    with pytest.raises(pyodide.FetchError, match="not pyodide .* as pinned"):
        pyodide.check_runtime(rt)


def test_runtime_route_serves_only_the_pinned_files(client: httpx.Client, tmp_path: Path) -> None:
    rt = tmp_path / "rt"
    _fake_runtime(rt)
    client.app.state.pyodide_dir = rt  # type: ignore[attr-defined]
    assert client.get("/static/qahwa-py.json").json()["runtime"] == {
        "version": pyodide.PYODIDE_VERSION,
        "url": f"/static/pyodide/{pyodide.PYODIDE_VERSION}/",
    }
    base = f"/static/pyodide/{pyodide.PYODIDE_VERSION}"
    r = client.get(f"{base}/pyodide.asm.wasm")
    assert r.status_code == 200 and r.headers["content-type"] == "application/wasm"
    assert r.content == b"xpyodide.asm.wasm"
    assert client.get(f"{base}/pyodide.mjs").headers["content-type"].startswith("text/javascript")
    (rt / "console.html").write_text("not served")
    for path in (
        f"{base}/console.html",
        f"{base}/.pin",
        "/static/pyodide/0.1.0/pyodide.mjs",
        "/static/pyodide/pyodide.mjs",
        "/static/pyodide/.pin",
        f"{base}/..%2F.pin",
    ):
        assert client.get(path).status_code == 404, path
    # a pin of another release: not installed, nothing served
    (rt / pyodide.PIN_FILE).write_text("0.1.0 sha512-x\n")
    assert client.get(f"{base}/pyodide.mjs").status_code == 404


def _tarball(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_tarball_with_another_integrity_installs_nothing(tmp_path: Path) -> None:
    data = _tarball({name: b"evil" for name in pyodide.RUNTIME_FILES})
    with pytest.raises(pyodide.FetchError, match="integrity"):
        pyodide.install_tarball(data, tmp_path / "rt")
    assert not (tmp_path / "rt").exists()
    assert pyodide.integrity_of(b"") == (
        "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="
    )


def test_fetch_is_quick_when_installed_and_says_why_when_npm_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    rt = tmp_path / "rt"
    _fake_runtime(rt)
    assert "already" in pyodide.fetch(rt, npm="no-such-npm")
    with pytest.raises(pyodide.FetchError, match="npm is not installed"):
        pyodide.fetch(tmp_path / "other", npm="no-such-npm")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert pyodide.main(["fetch", str(tmp_path / "other")]) == 0  # a warning, not a failure
    assert "not replay the rules" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()
    assert pyodide.main(["nonsense"]) == 2


def test_make_pyodide_target_is_wired_into_serve_and_test() -> None:
    mk = (ROOT / "Makefile").read_text()
    # make serve: tools/first_start.py fetches the runtime beside the installs
    assert "serve:\n\t@$(PY) tools/first_start.py --host $(HOST) --port $(PORT)" in mk
    first_start = (ROOT / "tools" / "first_start.py").read_text()
    assert '"-m", "qahwa_page.pyodide", "fetch"' in first_start
    assert "test: lint pyodide" in mk and "lint: $(VENV)/.installed-dev" in mk
    assert "qahwa_page/static/pyodide/" in (ROOT / ".gitignore").read_text().splitlines()

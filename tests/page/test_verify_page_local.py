"""``verify page``: the verify page from the player's own install, on 127.0.0.1.

The same page and the same assets as the service (byte for byte, the Python sources zip
included); with the runtime the page replays the rules in chromium, and ``--no-runtime``
serves it without Pyodide (the page then does not replay them).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from fairness import public_key_b64
from qahwa_page.pyodide import PYODIDE_VERSION, runtime_installed
from tests.support.browser import CHROMIUM, launch, open_page
from tests.support.live_server import LiveServer
from tests.verify.test_verify_cli_helpers import SIGNER, full_match, rechain, v2_match

VERIFY = str(Path(sys.executable).with_name("verify"))


def _ctrl_c_stops() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def verify_page(*args: str) -> Iterator[str]:
    """``verify page --port 0 ARGS`` running; yields its URL (from its first line)."""
    proc = subprocess.Popen(
        [VERIFY, "page", "--port", "0", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        # Ctrl-C as at a terminal, however the suite was started: a shell starts a
        # background job (`.ci/run &`) with SIGINT ignored, and a child inherits that
        preexec_fn=_ctrl_c_stops,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("verify page: http://127.0.0.1:"), line
        yield line.split()[2]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(timeout=20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stderr is not None:  # closed here even when the wait failed: an open
                proc.stderr.close()  # pipe is warned about later, in another test


def get(url: str) -> tuple[int, bytes, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read(), {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), {k.lower(): v for k, v in exc.headers.items()}


def _needs_runtime() -> None:
    if not runtime_installed():
        pytest.skip("the Pyodide runtime is not installed (make pyodide)")  # fails under CI


def test_serves_what_the_service_serves() -> None:
    _needs_runtime()
    with verify_page() as url, LiveServer() as srv:
        base = url.removesuffix("/verify")
        mine, theirs = get(url), get(f"{srv.url}/verify")
        assert mine[0] == theirs[0] == 200
        assert mine[1] == theirs[1]
        assert mine[2]["content-security-policy"] == theirs[2]["content-security-policy"]
        for path in (
            "/static/qahwa-py.json",
            "/static/verify-worker.js",
            "/static/merkle.js",
            f"/static/pyodide/{PYODIDE_VERSION}/pyodide.mjs",
        ):
            a, b = get(base + path), get(srv.url + path)
            assert (a[0], a[1]) == (b[0], b[1]) == (200, b[1]), path
        manifest = json.loads(get(base + "/static/qahwa-py.json")[1])
        assert manifest["runtime"]["version"] == PYODIDE_VERSION
        zipped = get(base + manifest["sources"]["url"])
        assert zipped[0] == 200 and zipped[1] == get(srv.url + manifest["sources"]["url"])[1]
        assert get(base + "/")[0] == 200  # redirected to the page
        assert get(base + "/static/../pyodide.py")[0] == 404
        assert get(base + "/static/pyodide/0.0.1/pyodide.mjs")[0] == 404
        assert get(base + "/v1/keys")[0] == 404


def test_no_runtime_serves_the_page_without_pyodide() -> None:
    with verify_page("--no-runtime") as url:
        base = url.removesuffix("/verify")
        assert get(url)[0] == 200
        assert json.loads(get(base + "/static/qahwa-py.json")[1])["runtime"] is None
        status, body, _ = get(base + f"/static/pyodide/{PYODIDE_VERSION}/pyodide.mjs")
        assert status == 404 and b"without the Pyodide runtime" in body


def test_a_port_in_use_is_one_line_and_exit_1() -> None:
    with verify_page("--no-runtime") as url:
        port = url.split(":")[2].split("/")[0]
        proc = subprocess.run(
            [VERIFY, "page", "--port", port],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"verify: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]


def _check(page: Any, doc: dict[str, Any]) -> dict[str, str]:
    page.fill("#in-paste", json.dumps(doc))
    page.fill("#in-key", public_key_b64(SIGNER.public_key))
    page.click("#go")
    page.wait_for_selector("#verdict[data-verdict]", timeout=30_000)
    expect(page.locator("#verdict")).not_to_have_attribute(
        "data-replay", "pending", timeout=120_000
    )
    assert page.js_errors == []
    rows = page.eval_on_selector_all(
        "tr[data-check]", "els => els.map(e => [e.dataset.check, e.dataset.ok])"
    )
    return {str(k): str(v) for k, v in rows}


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's /usr/bin/chromium")
def test_the_local_page_replays_the_rules_and_rejects_a_forged_winner() -> None:
    _needs_runtime()
    doc = full_match("tawla")
    forged = json.loads(json.dumps(doc))
    forged["result"]["winners"] = [1 - forged["result"]["winners"][0]]
    forged = SIGNER.signed({k: v for k, v in forged.items() if k != "signature"})
    with verify_page() as url, launch() as browser:
        with open_page(browser, url + "?lang=en") as page:
            rows = _check(page, doc)
            assert (rows["replay"], rows["result"], rows["signature"]) == ("true",) * 3
            assert page.get_attribute("#verdict", "data-verdict") == "pass"
        with open_page(browser, url + "?lang=en") as page:
            rows = _check(page, forged)
            assert (rows["replay"], rows["result"]) == ("true", "false")
            assert page.get_attribute("#verdict", "data-verdict") == "fail"
    with verify_page("--no-runtime") as url, launch() as browser:
        with open_page(browser, url + "?lang=en") as page:
            rows = _check(page, doc)
            assert rows["replay"] == "unknown"
            assert page.get_attribute("#verdict", "data-verdict") == "incomplete"
        with open_page(browser, url + "?lang=en") as page:
            rows = _check(page, forged)  # a forged winner, re-signed: never "pass" unreplayed
            assert (rows["replay"], rows["result"], rows["signature"]) == ("unknown",) * 2 + (
                "true",
            )
            assert page.get_attribute("#verdict", "data-verdict") == "incomplete"


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's /usr/bin/chromium")
@pytest.mark.parametrize("runtime", [True, False], ids=["runtime", "no-runtime"])
def test_the_verify_api_is_the_page_verdict(runtime: bool) -> None:
    """``qahwaFair.verify`` for scripts: "pass" only where the rules were replayed; with
    ``--no-runtime`` a genuine v1 or v2 transcript is "incomplete", and so is a forged
    winner re-signed by the server."""
    if runtime:
        _needs_runtime()
    docs = {"v1": full_match("tawla"), "v2": v2_match("tawla", keyed=True, seed=3)}
    forged = {}
    for name, doc in docs.items():
        f = json.loads(json.dumps(doc))
        f["result"]["winners"] = [1 - f["result"]["winners"][0]]
        forged[name] = (
            rechain(f)
            if name == "v2"
            else SIGNER.signed({k: v for k, v in f.items() if k != "signature"})
        )
    with verify_page(*([] if runtime else ["--no-runtime"])) as url, launch() as browser:
        with open_page(browser, url + "?lang=en") as page:
            for name in docs:
                for doc, want in ((docs[name], "pass"), (forged[name], "fail")):
                    got = page.evaluate(
                        "([t, k]) => window.qahwaFair.verify(t, k)",
                        [json.dumps(doc), public_key_b64(SIGNER.public_key)],
                    )
                    if not runtime:
                        want = "incomplete"
                    assert got["verdict"] == want, (name, got["checks"])
                    assert got["replay"] == ("done" if runtime else "unavailable")
            assert page.js_errors == []


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's /usr/bin/chromium")
def test_a_saved_tlog_proof_checks_the_log_row_offline(tmp_path: Path) -> None:
    """The player's own page with no server: the transcript pasted, the server's key and the
    log's key (vkey) pasted, the tlog-proof saved from GET /v1/matches/{id}/log-proof: the
    log row is green; a proof that does not lead to the checkpoint's root is red; without
    the log's key the row says what to give."""
    _needs_runtime()
    import httpx

    from tests.support.http_play import play_to_end

    with (
        LiveServer(checkpoint_seconds=0.05) as srv,
        httpx.Client(base_url=srv.url, timeout=30) as c,
    ):
        mid = play_to_end(c, "tawla", {"match_length": 1}, seed=13)
        doc = c.get(f"/v1/matches/{mid}/transcript").json()
        keys = c.get("/v1/keys").json()
        # at once: a lock no checkpoint holds yet gets one signed for its proof
        proof = c.get(f"/v1/matches/{mid}/log-proof")
        assert proof.status_code == 200, proof.text
    server_key, vkey = keys["keys"][0]["public_key"], keys["log"]["vkey"]
    good = tmp_path / "match.tlog-proof"
    good.write_text(proof.text)
    head, _, note = proof.text.partition("\n\n")
    lines = head.split("\n")
    index = next(i for i, ln in enumerate(lines) if ln.startswith("index "))
    # the entry claimed at another index: the same hashes cannot lead to the root
    lines[index] = f"index {doc['lock_index'] + 1}"
    moved = tmp_path / "moved.tlog-proof"
    moved.write_text("\n".join(lines) + "\n\n" + note)
    doc_moved = {**doc, "lock_index": doc["lock_index"] + 1}  # only to aim the page's check
    assert doc_moved["lock_index"] != doc["lock_index"]
    bad_root = tmp_path / "bad.tlog-proof"
    cp = note.split("\n")
    cp[2] = "A" * 43 + "="  # another root
    bad_root.write_text(head + "\n\n" + "\n".join(cp))

    def log_row(page: Any, proof_file: Path, log_key: str, verdict: str) -> tuple[str, str]:
        page.check("input[name=src][value=paste]")
        page.fill("#in-paste", json.dumps(doc))
        page.fill("#in-key", server_key)
        page.fill("#in-logkey", log_key)
        page.set_input_files("#in-logproof", str(proof_file))
        page.click("#go")
        # the replay settled (not merely not started: before the run there is no attribute)
        expect(page.locator("#verdict")).to_have_attribute(
            "data-replay", re.compile(r"^(done|error|unavailable)$"), timeout=120_000
        )
        row = page.locator("tr[data-check=log]")
        expect(row).to_have_count(1, timeout=30_000)
        expect(row).not_to_have_attribute("data-status", "pending", timeout=30_000)
        # the verdict counts the log row, whichever of the replay and the log answers last
        expect(page.locator("#verdict")).to_have_attribute("data-verdict", verdict)
        assert page.js_errors == []
        return str(row.get_attribute("data-ok")), row.inner_text()

    with verify_page() as url, launch() as browser:
        with open_page(browser, url + "?lang=en") as page:
            ok, text = log_row(page, good, vkey, "pass")
            assert ok == "true", text
            assert f"included at index {doc['lock_index']}" in text
        with open_page(browser, url + "?lang=en") as page:
            ok, text = log_row(page, bad_root, vkey, "fail")
            assert ok == "false", text
            assert "signature by the log key does not check out" in text, text
        with open_page(browser, url + "?lang=en") as page:
            ok, text = log_row(page, moved, vkey, "fail")
            assert ok == "false", text
            assert "the tlog-proof is for index" in text, text
        with open_page(browser, url + "?lang=en") as page:
            ok, text = log_row(page, good, "", "pass")
            assert ok == "unknown" and "needs the log\u2019s key" in text, text

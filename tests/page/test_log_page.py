"""The verify page's `log` row (qahwa_page/static/merkle.js) in Debian's Chromium.

Against the real service: a transcript's inclusion is checked in the browser and its head
remembered (localStorage); then the server at that same address is replaced by one whose
log forked (the last entry dropped, others appended) and the page names the fork.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.log.test_log_verify import _copy_without_last, sessions, settings
from tests.support import vector
from tests.support.browser import NEEDS_CHROMIUM
from tests.support.live_server import LiveServer, reserve_port

pytestmark = NEEDS_CHROMIUM


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(locale="en-US")
    p = ctx.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        yield p
    finally:
        ctx.close()
    assert errors == []


def log_row(page: Any, base: str, url: str) -> tuple[str, str]:
    page.goto(f"{base}/verify?lang=en&url={url}")
    page.wait_for_selector("tr[data-check=log]:not([data-status=pending])", timeout=30_000)
    # the verdict is final once the rules replay (Pyodide, when installed) is done too
    expect(page.locator("#verdict")).not_to_have_attribute(
        "data-replay", "pending", timeout=120_000
    )
    row = "tr[data-check=log]"
    return str(page.get_attribute(row, "data-status")), page.inner_text(row)


@pytest.mark.slow
def test_log_row_inclusion_and_fork(page: Any) -> None:
    with tempfile.TemporaryDirectory(prefix="qahwa-logpage-") as d:
        tmp = Path(d)
        # the page's memory is per origin: both servers serve on one port, held meanwhile
        with reserve_port() as held:
            port = int(held.getsockname()[1])
            with LiveServer(settings(tmp / "a"), port=port) as a:
                urls = sessions(a, 3, "p")
                status, text = log_row(page, a.url, urls[1])
                assert status == "ok", text
                assert "included at index 1 of tree size 3" in text
                assert "first head seen" in text
                assert page.get_attribute("#verdict", "data-verdict") == "pass"
                urls += sessions(a, 1, "q")
                status, text = log_row(page, a.url, urls[0])
                assert status == "ok" and "consistent with the head of size 3 seen before" in text
                # a changed audit path (the page's own check, not the server's word)
                bad = page.evaluate("""async () => {
                    const L = window.qahwaLog, h = new Uint8Array(32);
                    const leaf = await L.leafHash(new TextEncoder().encode('x'));
                    const r = await L.rootFromInclusion(0, 2, leaf, [h]);
                    const r2 = await L.rootFromInclusion(0, 2, leaf, [new Uint8Array(32).fill(1)]);
                    return [L.toHex(r) === L.toHex(r2),
                            await L.consistent(1, 2, leaf, r, [h]),
                            await L.consistent(1, 2, leaf, r2, [h])];
                }""")
                assert bad == [False, True, False]
            # the same address now serves a log that dropped entry 3 and grew another way
            _copy_without_last(tmp / "a", tmp / "c")
            with sqlite3.connect(tmp / "c" / "q.db") as db:
                assert db.execute("SELECT count(*) FROM translog").fetchone() == (3,)
            with LiveServer(settings(tmp / "c"), port=port) as c:
                sessions(c, 2, "fork")
                status, text = log_row(page, c.url, urls[0])
                assert status == "bad", text
                assert "LOG FORK" in text
                assert page.get_attribute("#verdict", "data-verdict") == "fail"
                evidence = json.loads(page.evaluate("localStorage.getItem('qahwa.log.evidence')"))
                assert evidence[-1]["remembered_head"]["tree_size"] == 4
                assert evidence[-1]["new_head"]["tree_size"] == 5


def test_the_page_core_and_merkle_js_follow_the_shared_vectors(page: Any) -> None:
    """tests/vectors/tlog_vectors.json drives the browser too: RFC 6962 roots and proofs
    through merkle.js, and one canonical JSON (the page's, which merkle.js uses) for the
    page and the log row — keys sorted by code point, as Python sorts them, even beyond
    ASCII."""
    import tlog
    from fairness import canonical_json

    vectors = vector("tlog_vectors.json")
    leaves = [bytes.fromhex(x) for x in vectors["rfc6962"]["leaves_hex"]]
    reader = tlog.ListHashReader.from_leaf_hashes([tlog.leaf_hash(x) for x in leaves])
    cases = [
        {
            "n": n,
            "m": m,
            "leaf": leaves[m].hex(),
            "path": [h.hex() for h in tlog.prove_record(n, m, reader)],
            "root": vectors["rfc6962"]["roots_hex"][n - 1],
            "old": vectors["rfc6962"]["roots_hex"][m],
            "cproof": [h.hex() for h in tlog.prove_tree(n, m + 1, reader)],
        }
        for n in range(1, 9)
        for m in range(n)
    ]
    record = {"z": 1, "é": "x", "\U0001f600": [True, None], "ｚ": {"b": -3, "a": "ü"}}
    with LiveServer() as srv:
        page.goto(f"{srv.url}/verify?lang=en")
        got = page.evaluate(
            """async ([cases, record]) => {
          const L = window.qahwaLog, hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
          const un = (h) => new Uint8Array(h.match(/../g).map((x) => parseInt(x, 16)));
          const out = [];
          for (const c of cases) {
            const leaf = c.leaf ? un(c.leaf) : new Uint8Array(0);
            const root = await L.rootFromInclusion(c.m, c.n, await L.leafHash(leaf), c.path.map(un));
            const ok = await L.consistent(c.m + 1, c.n, un(c.old), un(c.root), c.cproof.map(un));
            out.push([hex(root) === c.root, ok]);
          }
          return {out, page: window.qahwaFair.canonicalJson(JSON.stringify(record)),
                  log: L.canonicalJson(record)};
        }""",
            [cases, record],
        )
        # Leave the page while its server is up: its background loads (the verifier's
        # Python, fetched once the page is open) would otherwise fail against a stopped
        # server and log "Failed to fetch".
        page.goto("about:blank")
    assert all(a and b for a, b in got["out"]), got["out"]
    assert got["page"] == got["log"] == canonical_json(record).decode()

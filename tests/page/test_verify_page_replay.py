"""The verify page replays the rules in the browser (issue 14), in Chromium with playwright.

The page runs this checkout's ``verify_cli.replay_core`` on the Pyodide runtime that
``make pyodide`` installs (qahwa_page/pyodide.py), in a Web Worker. The stand-in server of
tests/page/test_verify_page.py serves the runtime, the sources zip, the manifest and the worker
with the service's own ``qahwa_page.pyodide.asset``. One page is loaded once and checks many
transcripts one after the other (the worker stays warm), as an auditor would.

Skips only without Debian's chromium or without the runtime (npm unreachable when
``make pyodide`` ran); under ``CI=true`` a skip is a failure (tests/conftest.py).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from games.registry import GAME_IDS, find_engine
from games.replay import replay
from qahwa_page.pyodide import RUNTIME_DIR, runtime_installed, source_zip
from tests.page.test_verify_page import SIGNER, Site, chance_seqs, genuine, v1_key
from tests.support.browser import CHROMIUM, launch, open_page

pytestmark = [pytest.mark.browser]

GAMES = list(GAME_IDS)
CHECKS = ("commitment", "chance", "signature", "replay", "result", "agree")


def _require(ok: bool, why: str) -> None:
    if not ok:
        pytest.skip(why)  # a failure under CI=true (tests/conftest.py)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    _require(CHROMIUM.exists(), "needs Debian's /usr/bin/chromium")
    _require(runtime_installed(), "the Pyodide runtime is not installed (make pyodide)")
    with launch() as b:
        yield b


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    s = Site(runtime_dir=RUNTIME_DIR)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture(scope="module")
def page(browser: Any, site: Site) -> Iterator[Any]:
    """One page with a warm worker, shared by the tests of this module."""
    with open_page(browser, f"{site.url}/verify?lang=en") as pg:
        yield pg


def check(page: Any, mid: str) -> dict[str, str]:
    """Verify match ``mid`` on the (already loaded) page; every row's data-ok once final."""
    verdict = page.locator("#verdict")
    before = int(page.get_attribute("#verdict", "data-run") or 0)
    page.fill("#in-id", mid)
    page.click("#go")
    expect(verdict).to_have_attribute("data-run", str(before + 1), timeout=30_000)
    expect(verdict).not_to_have_attribute("data-replay", "pending", timeout=120_000)
    assert page.js_errors == []
    rows = page.eval_on_selector_all(
        "tr[data-check]", "els => els.map(e => [e.dataset.check, e.dataset.ok])"
    )
    return {str(k): str(v) for k, v in rows}


def verdict(page: Any) -> tuple[str, str]:
    return (
        str(page.get_attribute("#verdict", "data-verdict")),
        str(page.get_attribute("#verdict", "data-replay")),
    )


@pytest.mark.parametrize("game", GAMES)
def test_genuine_match_replays_and_passes(page: Any, site: Site, game: str) -> None:
    doc = genuine(game, seed=5)
    rows = check(page, site.add(doc))
    assert {c: rows.get(c) for c in CHECKS} == {c: "true" for c in CHECKS}
    assert all(v == "true" for v in rows.values()), rows
    assert verdict(page) == ("pass", "done")
    n_chance = len(chance_seqs(doc))
    assert f"same {n_chance} chance result" in page.inner_text("tr[data-check=agree]")
    assert f"{len(doc['events'])} events replayed" in page.inner_text("tr[data-check=replay]")
    assert "every move" in page.inner_text("#verdict")
    assert "Pyodide" in page.inner_text("#rules-note")
    # every draw also shows the CLI's own text for it, from render.py in the browser
    assert page.locator("li.ev details.cli").count() == n_chance


def _illegal(doc: dict[str, Any]) -> int:
    """Give one action in the middle to the wrong seat (the rules must reject it)."""
    acts = [e["seq"] for e in doc["events"] if e["type"] == "action"]
    seq = acts[len(acts) // 2]
    ev = doc["events"][seq]
    ev["seat"] = (ev["seat"] + 1) % max(2, len(doc["seats"]))
    return seq


@pytest.mark.parametrize("game", GAMES)
def test_illegal_action_fails_the_replay_not_the_chance_events(
    page: Any, site: Site, game: str
) -> None:
    doc = genuine(game, seed=6)
    doc = copy.deepcopy(doc)
    seq = _illegal(doc)
    doc = SIGNER.signed({k: v for k, v in doc.items() if k != "signature"})
    rows = check(page, site.add(doc))
    assert rows["commitment"] == rows["chance"] == rows["signature"] == "true"
    assert rows["replay"] == "false"
    assert rows["result"] == "unknown"  # not checked: the events did not replay
    assert rows["agree"] == "true"  # on every chance result before the illegal move
    assert verdict(page) == ("fail", "done")
    text = page.inner_text("tr[data-check=replay]")
    assert f"event {seq}" in text and "rejected" in text
    assert set(page.eval_on_selector_all("li.ev", "els => els.map(e => e.dataset.status)")) == {
        "ok"
    }


@pytest.mark.parametrize("game", GAMES)
def test_changed_result_fails_the_result_row(page: Any, site: Site, game: str) -> None:
    doc = copy.deepcopy(genuine(game, seed=7))
    doc["result"]["scores"][0] += 1
    doc = SIGNER.signed({k: v for k, v in doc.items() if k != "signature"})
    rows = check(page, site.add(doc))
    assert rows["commitment"] == rows["chance"] == rows["signature"] == "true"
    assert rows["replay"] == "true"
    assert rows["result"] == "false"
    assert verdict(page) == ("fail", "done")
    text = page.inner_text("tr[data-check=result]")
    assert "differs" in text
    assert json.dumps(doc["result"]["scores"]).replace(" ", "") in text.replace(" ", "")


def test_tampered_chance_event_fails_both_and_they_agree(page: Any, site: Site) -> None:
    doc = copy.deepcopy(genuine("tawla", seed=8))
    seqs = chance_seqs(doc)
    target = doc["events"][seqs[3]]
    target["result"][0] = target["result"][0] % 6 + 1
    doc = SIGNER.signed({k: v for k, v in doc.items() if k != "signature"})
    rows = check(page, site.add(doc))
    assert rows["chance"] == "false" and rows["replay"] == "false"
    # Python's recomputation of the tampered roll is the JavaScript one
    assert rows["agree"] == "true"
    assert page.get_attribute(f"li.ev[data-seq='{seqs[3]}']", "data-status") == "bad"


def _hakem_per_hand(doc: dict[str, Any]) -> dict[int, int]:
    """seq of each hand's shuffle -> the hakem then (the engine's view, replayed here)."""
    out: dict[int, int] = {}

    def seen(ev: dict[str, Any], engine: Any) -> None:
        if re.fullmatch(r"h\d+/shuffle", str(ev.get("label"))):
            out[ev["seq"]] = engine.view(None)["hakem"]

    cls = find_engine("hokm", protocol=doc["protocol"])
    replay(cls, doc["ruleset"], v1_key(doc), doc["events"], on_event=seen)
    return out


def test_later_hands_name_the_hakem_from_the_replay(page: Any, site: Site) -> None:
    doc = genuine("hokm", seed=9)
    rows = check(page, site.add(doc))
    assert rows["replay"] == "true"
    hakems = _hakem_per_hand(doc)
    assert len(hakems) >= 2 and len(set(hakems.values())) >= 2  # the hakem changed
    for seq, hakem in hakems.items():
        first = page.locator(f"li.ev[data-seq='{seq}'] .hand .who").first.inner_text()
        assert first.startswith(f"seat {hakem}"), (seq, first)
        assert "(hakem)" in first


def test_rules_rows_in_arabic_and_persian(page: Any, site: Site) -> None:
    rows = check(page, site.add(genuine("tawla", seed=10)))
    assert rows["replay"] == "true"
    page.click("button[data-lang=ar]")
    assert page.evaluate("document.documentElement.dir") == "rtl"
    assert "أعيد لعب" in page.inner_text("tr[data-check=replay]")
    assert "متفقان" in page.inner_text("tr[data-check=agree]")
    page.click("button[data-lang=fa]")
    assert "دوباره اجرا شد" in page.inner_text("tr[data-check=replay]")
    page.click("button[data-lang=en]")
    assert page.evaluate("document.documentElement.dir") == "ltr"


@pytest.mark.slow
def test_no_request_leaves_the_origin_and_reloads_are_warm(browser: Any, site: Site) -> None:
    doc = genuine("tawla", seed=11)
    mid = site.add(doc)
    ctx = browser.new_context(locale="en-US")
    try:
        pg = ctx.new_page()
        seen: list[str] = []
        pg.on("request", lambda r: seen.append(r.url))
        pg.goto(f"{site.url}/verify?lang=en&match={mid}")
        expect(pg.locator("#verdict")).to_have_attribute("data-replay", "done", timeout=120_000)
        assert pg.get_attribute("#verdict", "data-verdict") == "pass"
        assert all(u.startswith(site.url + "/") for u in seen), seen
        # the runtime and the sources did come, from the origin
        assert any(u.endswith("/pyodide.asm.wasm") for u in seen), seen
        assert any("/static/qahwa-py-" in u and u.endswith(".zip") for u in seen), seen
        assert pg.evaluate("() => window.qahwaFair.python().info.snapshot") is False
        # Loaded again: Python starts from the interpreter snapshot the first load kept (the
        # sources are loaded anew), and the rules are replayed just the same.
        seen.clear()
        pg.goto(f"{site.url}/verify?lang=en&match={mid}")
        expect(pg.locator("#verdict")).to_have_attribute("data-replay", "done", timeout=120_000)
        assert pg.get_attribute("#verdict", "data-verdict") == "pass"
        assert pg.get_attribute("tr[data-check=replay]", "data-ok") == "true"
        assert pg.evaluate("() => window.qahwaFair.python().info.snapshot") is True
        assert all(u.startswith(site.url + "/") for u in seen), seen
    finally:
        ctx.close()


@pytest.mark.parametrize("runtime", ["none", "empty"])
def test_without_the_runtime_chance_is_still_verified(
    browser: Any, tmp_path: Path, runtime: str
) -> None:
    # "none": the server serves none of the page's Python (404); "empty": it serves the
    # manifest, which says there is no runtime (make pyodide could not fetch it).
    s = Site(runtime_dir=tmp_path if runtime == "empty" else None)
    ctx = browser.new_context(locale="en-US")
    try:
        doc = genuine("hokm", seed=12)
        mid = s.add(doc)
        pg = ctx.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(f"{s.url}/verify?lang=en&match={mid}")
        expect(pg.locator("#verdict")).to_have_attribute(
            "data-replay", "unavailable", timeout=30_000
        )
        # the chance events check out, but without the replay the verdict is never "pass"
        assert pg.get_attribute("#verdict", "data-verdict") == "incomplete"
        for c in ("commitment", "chance", "signature"):
            assert pg.get_attribute(f"tr[data-check={c}]", "data-ok") == "true"
        for c in ("replay", "result", "agree"):
            assert pg.get_attribute(f"tr[data-check={c}]", "data-ok") == "unknown"
        assert "not replayed" in pg.inner_text("tr[data-check=replay]")
        assert "rules were not replayed" in pg.inner_text("#verdict")
        assert "result and the winners are NOT verified" in pg.inner_text("#verdict")
        note = pg.inner_text("#rules-note")
        assert "it will NOT replay the game rules here" in note
        assert errors == []
    finally:
        ctx.close()
        s.close()


def test_sources_that_do_not_match_their_hash_are_not_run(browser: Any, tmp_path: Path) -> None:
    s = Site(runtime_dir=RUNTIME_DIR)
    ctx = browser.new_context(locale="en-US")
    try:
        genuine_zip = source_zip().data
        flipped = bytearray(genuine_zip)
        flipped[len(flipped) // 2] ^= 0x01
        s.sources_override = bytes(flipped)
        assert s.sources_override != genuine_zip
        mid = s.add(genuine("tawla", seed=13))
        pg = ctx.new_page()
        pg.goto(f"{s.url}/verify?lang=en&match={mid}")
        expect(pg.locator("#verdict")).to_have_attribute(
            "data-replay", "unavailable", timeout=120_000
        )
        text = pg.inner_text("tr[data-check=replay]")
        assert "could not be started" in text and "SHA-256" in text
        assert pg.get_attribute("tr[data-check=replay]", "data-ok") == "unknown"
        assert pg.get_attribute("tr[data-check=chance]", "data-ok") == "true"
        assert pg.evaluate("() => window.qahwaFair.python().state") == "failed"
    finally:
        ctx.close()
        s.close()

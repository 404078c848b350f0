"""The web table at /play (issue 32): a person plays whole matches in Chromium by clicking
the legal actions, against house bots in the server's process, and sees the verify page's
verdict computed in the browser; Arabic lays out right to left; the committed script is a
fresh build of clients/ts/play (esbuild, locked in clients/ts/package-lock.json)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.browser import CHROMIUM, launch, open_page

ROOT = Path(__file__).resolve().parent.parent
TS = ROOT / "clients" / "ts"
BUNDLE = ROOT / "qahwa_page" / "static" / "play.js"
NPM = shutil.which("npm")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's /usr/bin/chromium")  # a failure under CI=true
    with launch() as b:
        yield b


def play_to_the_end(pg: Any, limit: int = 400) -> None:
    """Click a legal action whenever one is offered, until the verdict shows."""
    for _ in range(limit * 10):
        if pg.locator("#verdict").count():
            return
        buttons = pg.locator('[data-testid="legal-action"]:enabled')
        if buttons.count():
            try:
                buttons.first.click(timeout=2_000)
            except Exception:  # the table re-rendered under the click: look again
                pass
        else:
            pg.wait_for_timeout(100)
        assert pg.get_attribute("#status", "data-error") is None, pg.text_content("#status")
    raise AssertionError("the match did not end")


def see_the_verdict(pg: Any) -> None:
    verdict = pg.locator("#verdict")
    pg.wait_for_function(
        "() => document.getElementById('verdict')?.dataset.verdict !== 'pending'",
        timeout=180_000,
    )
    assert verdict.get_attribute("data-verdict") == "pass", verdict.text_content()
    assert pg.locator('[data-testid="download-transcript"]').count() == 1
    assert pg.locator('[data-testid="download-seat"]').count() == 1
    assert pg.js_errors == []


@pytest.mark.browser
def test_a_person_plays_tawla_against_a_house_bot(browser: Any, server: Any) -> None:
    rules = quote(json.dumps({"match_length": 1}))
    with open_page(browser, f"{server.url}/play?game=tawla&ruleset={rules}") as pg:
        pg.wait_for_selector('[data-testid="board"]', timeout=60_000)
        play_to_the_end(pg)
        see_the_verdict(pg)
        # the downloaded seat export is the seat's own: its seed and the match's transcript
        with pg.expect_download() as dl:
            pg.click('[data-testid="download-seat"]')
        seat = json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))
        assert seat["seat"] == 0 and seat["client_seed"]


@pytest.mark.browser
def test_a_person_plays_hokm_with_three_house_bots(browser: Any, server: Any) -> None:
    rules = quote(json.dumps({"target": 1}))
    with open_page(browser, f"{server.url}/play?game=hokm&ruleset={rules}") as pg:
        play_to_the_end(pg)
        see_the_verdict(pg)


@pytest.mark.browser
def test_in_arabic_the_table_is_right_to_left(browser: Any, server: Any) -> None:
    with open_page(browser, f"{server.url}/play?game=hokm&lang=ar") as pg:
        pg.wait_for_selector("#turn", timeout=60_000)
        assert pg.get_attribute("html", "dir") == "rtl"
        assert pg.get_attribute("html", "lang") == "ar"
        assert pg.evaluate("getComputedStyle(document.getElementById('table')).direction") == "rtl"
        pg.wait_for_selector("#deadline", timeout=30_000)  # the turn's deadline, from the view
        assert (pg.get_attribute("#deadline", "data-due") or "").startswith("20")


def test_the_lobby_refuses_bad_tables_clearly(server: Any) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.post("/play/tables", json={"game": "chess"})
        assert r.status_code == 422 and "unknown game" in r.json()["error"]["message"]
        r = c.post("/play/tables", json={"game": "tawla", "ruleset": {"match_length": 99}})
        assert r.status_code == 422 and "bad ruleset" in r.json()["error"]["message"]
        r = c.post("/play/tables", json={"game": "tawla", "friend": True})
        assert r.status_code == 201
        people = r.json()["people"]
        assert [p["seat"] for p in people] == [0, 1]
        page = c.get("/play")
        assert page.status_code == 200 and "/static/play.js" in page.text


@pytest.mark.skipif(NPM is None, reason="npm (and node) not installed")
def test_the_committed_bundle_is_a_fresh_build(tmp_path: Path) -> None:
    from tests.test_clients_ts import node_modules

    node_modules()
    out = tmp_path / "play.js"
    subprocess.run(
        [str(NPM), "run", "--silent", "build:play", "--", f"--outfile={out}"],
        cwd=TS,
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == BUNDLE.read_bytes(), (
        "qahwa_page/static/play.js is stale: run make play-js and commit it"
    )
    assert len(gzip.compress(BUNDLE.read_bytes(), 9)) <= 80_000


@pytest.mark.browser
def test_a_friend_sits_down_from_the_seat_link(browser: Any, server: Any) -> None:
    with open_page(browser, f"{server.url}/play?game=tawla&friend=1") as me:
        link = me.locator('[data-testid="seat-link"]')
        link.wait_for(timeout=30_000)
        url = str(link.get_attribute("href"))
        assert "seat=1" in url and "token=" in url
        with open_page(browser, url) as friend:
            # both seats commit and reveal: the match starts, and someone may roll
            for pg in (me, friend):
                pg.wait_for_selector('[data-testid="board"]', timeout=60_000)
            offered = 0
            for _ in range(600):  # the opening roll is offered to one of them (or both)
                offered = sum(
                    pg.locator('[data-testid="legal-action"]').count() for pg in (me, friend)
                )
                if offered:
                    break
                me.wait_for_timeout(100)
            assert offered > 0
            assert me.js_errors == [] and friend.js_errors == []

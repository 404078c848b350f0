"""The verify page given the operator's URL (its ``log`` row, qahwa_page/static/merkle.js) in
Debian's Chromium, against a real server: what tests/service/test_verify_online.py asks of
``verify --server``, asked of the page.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from service.matches import MatchService
from tests.service.test_times_and_downgrades import forge_timeout
from tests.service.test_verify_online import SEALED_HOKM, SEALED_IRAQI, made_up, played
from tests.support.browser import NEEDS_CHROMIUM, open_page
from tests.support.live_server import LiveServer

pytestmark = NEEDS_CHROMIUM


@pytest.fixture(scope="module")
def srv() -> Iterator[LiveServer]:
    with LiveServer() as s:
        yield s


def log_row(
    browser: Any, srv: LiveServer, doc: Any, no_reveal: bool = False
) -> tuple[str, str, str]:
    """(the log row's data-ok, its text, the verdict) of ``doc`` pasted, with the
    operator's URL given; ``no_reveal``: the server answers every reveal-proof 404."""
    with open_page(browser, f"{srv.url}/verify?lang=en") as page:
        if no_reveal:
            page.route(
                "**/reveal-proof",
                lambda route: route.fulfill(
                    status=404,
                    content_type="application/json",
                    body='{"error": {"code": "not_found", "message": "no reveal record"}}',
                ),
            )
        page.fill("#in-paste", json.dumps(doc))
        page.fill("#in-server", srv.url)
        page.check("input[name=src][value=paste]")
        page.click("#go")
        row = "tr[data-check=log]"
        page.wait_for_selector(f"{row}:not([data-status=pending])", timeout=60_000)
        verdict = page.locator("#verdict")
        expect(verdict).not_to_have_attribute("data-replay", "pending", timeout=180_000)
        assert page.js_errors == []
        return (
            str(page.get_attribute(row, "data-ok")),
            page.inner_text(row),
            str(page.get_attribute("#verdict", "data-verdict")),
        )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("game", "ruleset"), [("hokm", SEALED_HOKM), ("iraqi_domino", SEALED_IRAQI)]
)
def test_the_page_passes_a_genuine_sealed_match(
    browser: Any, srv: LiveServer, game: str, ruleset: dict[str, Any]
) -> None:
    doc = played(srv, game, ruleset, seed=5)
    ok, text, verdict = log_row(browser, srv, doc)
    assert ok == "true", text
    assert "DOWNGRADE" not in text
    assert "reveal record (index" in text and f"so its {len(doc['events'])} events" in text
    assert verdict != "fail", text


@pytest.mark.slow
def test_the_page_fails_made_up_transcripts_across_the_deal(browser: Any, srv: LiveServer) -> None:
    svc: MatchService = srv.app.state.service
    sealed = played(srv, "hokm", SEALED_HOKM, seed=6)
    seeded = played(srv, "hokm", {"players": 4, "target": 1}, seed=6)
    forged = made_up(svc, "hokm", {"players": 4, "target": 1}, sealed)
    ok, text, verdict = log_row(browser, srv, forged)
    assert ok == "false" and "DOWNGRADE" in text and "sealed deal" in text, text
    assert verdict == "fail"
    forged = made_up(svc, "hokm", SEALED_HOKM, seeded)
    ok, text, verdict = log_row(browser, srv, forged)
    assert ok == "false" and "DOWNGRADE" in text, text
    assert "but the transcript is qahwa-fair/3" in text
    assert verdict == "fail"


@pytest.mark.slow
def test_the_page_fails_a_cut_short_resigned_transcript(browser: Any, srv: LiveServer) -> None:
    svc: MatchService = srv.app.state.service
    doc = played(srv, "tawla", {"match_length": 1, "turn_seconds": 60}, seed=2)
    ok, text, verdict = log_row(browser, srv, doc)
    assert ok == "true" and "reveal record" in text, text
    cut = forge_timeout(doc, svc, early_us=0)
    ok, text, verdict = log_row(browser, srv, cut)
    assert ok == "false", text
    assert "REVEAL:" in text and "does not run to the match\u2019s real end" in text, text
    assert verdict == "fail"


def test_a_reveal_the_log_does_not_give_is_not_checked_yet_on_the_page(
    browser: Any, srv: LiveServer
) -> None:
    doc = played(srv, "hokm", {"players": 4, "target": 1}, seed=3)
    ok, text, verdict = log_row(browser, srv, doc, no_reveal=True)
    assert ok == "unknown", text
    assert "NOT CHECKED YET" in text and "no reveal record" in text
    assert verdict not in ("pass", "fail"), verdict

"""/play through two key rotations (fairness-v2.md, revision "key announcements"): a person
clicks a tawla match against a house bot while the operator rotates the signing key twice.
The page's client (clients/ts) and the house bot (service/house.py, the Python client) take
each new key through its announcement and play on: no error on the page, every request of
the seat receipted, and the downloaded transcript and seat.json pass ``verify --seat``.

The server runs on a clock the test moves ahead (RunningClock): each key is staged, then takes over when the test moves
the clock, at chosen clicks.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.client.test_rotation import SERVER, rotate
from tests.page.test_play_page import downloaded, see_the_verdict, touch, verify_cli
from tests.support.browser import open_page
from tests.support.fake_clock import RunningClock
from tests.support.live_server import LiveServer


@pytest.mark.slow
@pytest.mark.browser
def test_a_person_plays_through_two_rotations_and_the_downloads_verify(
    browser: Any, tmp_path: Path
) -> None:
    clock = RunningClock()
    plan = {3: "rotate", 8: "switch", 12: "rotate", 16: "switch"}
    with LiveServer(clock=clock, **SERVER) as srv:
        [first] = httpx.get(srv.url + "/v1/keys").json()["keys"]
        rules = quote(json.dumps({"match_length": 1}))
        staged: list[str] = []
        done: list[str] = []
        with open_page(browser, f"{srv.url}/play?game=tawla&ruleset={rules}") as pg:
            pg.wait_for_selector('[data-testid="board"]', timeout=60_000)
            clicks = 0
            ahead = 0.0  # the clock's moves past the machine's time
            for _ in range(4000):
                # the server's time follows the machine's (plus its moves): the page holds
                # every signed time it is shown within maxSkew of its own clock
                clock.set(max(clock.now(), time.time() + ahead))
                if pg.locator("#verdict").count():
                    break
                assert pg.get_attribute("#status", "data-error") is None, pg.text_content("#status")
                if not touch(pg):  # a checker, the point it goes to, a move in words
                    pg.wait_for_timeout(100)
                    continue
                clicks += 1
                step = plan.get(clicks)
                if step == "rotate":
                    staged.append(rotate(srv, 4))
                elif step == "switch":
                    clock.advance(5)
                    ahead += 5
                if step:
                    done.append(step)
            else:
                raise AssertionError("the match did not end")
            assert done == ["rotate", "switch", "rotate", "switch"], (clicks, done)
            see_the_verdict(pg)
            assert pg.get_attribute("#status", "data-dispute") is None
            transcript = downloaded(pg, "transcript", tmp_path)
            seat_file = downloaded(pg, "seat", tmp_path)
        # the house bot played on through both rotations: the match ended by its rules
        result = json.loads(transcript.read_text(encoding="utf-8"))["result"]
        assert result and result.get("reason") not in {"timeout", "expired", "resigned"}
        seat = json.loads(seat_file.read_text(encoding="utf-8"))
        assert not seat["disputes"]
        # every request receipted or refused, but a commit sent before the lock existed (the
        # lobby's house seats commit after the person): no chain to receipt it on yet
        unanswered = [
            r
            for r in seat["requests"]
            if r["receipt"] is None and not r["refused"] and not r["path"].endswith("/commit")
        ]
        assert unanswered == []
        signers = {r["signature"]["key_id"] for r in seat["receipts"]}
        assert signers == {first["key_id"], *staged}, signers
        res = verify_cli(str(transcript), "--server", srv.url, "--seat", str(seat_file))
        assert res.exit_code == 0, res.output

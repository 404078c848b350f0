"""A hypothesis state machine over the HTTP API: random valid and invalid calls across
several matches and seats.

Invariants: no 5xx; a 4xx changes nothing (same version, same event log, same log size);
versions only go up, and every accepted change raises them; no seat's view (and no public
view) shows another seat's hidden cards or tiles; no response before a match's end holds
its server seed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
)

from tests.support.http_play import GAMES, V2Seat, auth, short_ruleset
from tests.support.live_server import LiveServer

JSON_LEAF = st.none() | st.booleans() | st.integers(-3, 60) | st.text(max_size=4)
JUNK_ACTION = st.dictionaries(
    st.sampled_from(
        [
            "type",
            "card",
            "tile",
            "end",
            "steps",
            "k",
            "suit",
            "tricks",
            "amount",
            "cards",
            "train",
            "x",
        ]
    ),
    JSON_LEAF | st.lists(JSON_LEAF, max_size=3),
    max_size=4,
)
SEEDS = st.sampled_from(["", "ok seed", "a\x00b", "é" * 65, "x" * 128, "line\nbreak", "🎲"])
HEXES = st.sampled_from(["", "00" * 32, "AB" * 32, "zz" * 32, "ab" * 31, "ab" * 33])


# Fields that show cards or tiles face up by the rules: Iraqi dominoes announce the double
# that must open; Hokm deals face up to find the first hakem (the deck is then shuffled
# again, so those codes may sit in anyone's hand afterwards); the domino games show the
# hands left at the end of the last round (``last_round``), counted in the open — the next
# round deals all the tiles again, so the same codes may sit in anyone's hand then.
ANNOUNCED = {"must_open_with", "first_hakem_deal", "last_round"}


def _hidden_part(view: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (view or {}).items() if k not in ANNOUNCED}


@dataclass
class M:
    match_id: str
    game: str
    tokens: list[str]
    seats: list[V2Seat]
    version: int = 0
    status: str = "seating"
    texts: list[str] = field(default_factory=list)  # every response while not finished


class ApiMachine(RuleBasedStateMachine):
    server: LiveServer  # set by the test

    matches = Bundle("matches")

    def __init__(self) -> None:
        super().__init__()
        self.c = httpx.Client(base_url=self.server.url, timeout=30)
        self.all: list[M] = []

    def teardown(self) -> None:
        try:
            for m in self.all:
                if m.status != "finished":
                    self.resign(m, 0)
                r = self.c.get(f"/v1/matches/{m.match_id}/transcript")
                if r.status_code != 200:  # never locked, or locked and still revealing
                    assert r.json()["error"]["code"] in ("not_locked", "not_finished")
                    continue
                seed = r.json()["server_seed"]
                for text in m.texts:
                    assert seed not in text and seed.upper() not in text
        finally:
            self.c.close()

    # -- plumbing ----------------------------------------------------------------------------
    def call(
        self, m: M | None, method: str, path: str, *, token: str | None = None, body: Any = None
    ) -> httpx.Response:
        r = self.c.request(
            method, path, json=body, headers=auth(token) if token is not None else None
        )
        assert r.status_code < 500, (method, path, r.status_code, r.text)
        if r.status_code >= 400:
            err = r.json()["error"]
            assert isinstance(err["code"], str) and isinstance(err["message"], str)
        if m is not None and m.status != "finished":
            m.texts.append(r.text)
        return r

    def snapshot(self, m: M) -> tuple[Any, ...]:
        pub = self.c.get(f"/v1/matches/{m.match_id}").json()
        ev = self.c.get(f"/v1/matches/{m.match_id}/events").json()
        log = self.c.get("/v1/log").json()["tree_size"]
        return pub["version"], pub["status"], ev["next_seq"], json.dumps(ev["events"]), log

    def change(
        self,
        m: M,
        method: str,
        path: str,
        *,
        token: str | None,
        body: Any = None,
        resend: bool = False,
    ) -> httpx.Response:
        """A call that may change the match: 2xx raises the version, 4xx changes nothing.
        ``resend``: the request may repeat an accepted commit or reveal, which answers 200
        again and changes nothing."""
        before = self.snapshot(m)
        r = self.call(m, method, path, token=token, body=body)
        after = self.snapshot(m)
        if r.status_code >= 400 or (resend and after == before):
            assert after == before, (path, r.text)
        else:
            assert after[0] > before[0], (path, r.text)
            assert after[2] >= before[2]
        self.observe(m, after[0], after[1])
        return r

    def observe(self, m: M, version: int, status: str) -> None:
        assert version >= m.version
        m.version, m.status = version, status

    def turn(self, m: M) -> tuple[int, dict[str, Any]] | None:
        view = self.call(m, "GET", f"/v1/matches/{m.match_id}/state", token=m.tokens[0]).json()
        if view["status"] != "playing" or view["turn"] is None:
            return None
        seat = view["turn"]
        view = self.call(m, "GET", f"/v1/matches/{m.match_id}/state", token=m.tokens[seat]).json()
        return seat, view

    # -- rules -------------------------------------------------------------------------------
    @initialize(target=matches, game=st.sampled_from(GAMES))
    def first_match(self, game: str) -> M:
        return self.new_match(game, seeded=True, keyed=True)

    @rule(target=matches, game=st.sampled_from(GAMES), seeded=st.booleans(), keyed=st.booleans())
    def create(self, game: str, seeded: bool, keyed: bool) -> M:
        return self.new_match(game, seeded=seeded, keyed=keyed)

    def new_match(self, game: str, *, seeded: bool, keyed: bool) -> M:
        r = self.call(
            None, "POST", "/v1/matches", body={"game": game, "ruleset": short_ruleset(game)}
        )
        assert r.status_code == 201, r.text
        body = r.json()
        seats = [V2Seat(self.c, body, i, keyed=keyed) for i in range(len(body["seats"]))]
        m = M(body["match_id"], game, [s["token"] for s in body["seats"]], seats)
        m.texts.append(r.text)
        self.all.append(m)
        if seeded:  # every seat commits, then reveals: the last reveal starts the match
            for seat in range(len(seats)):
                self.commit(m, seat, seat)
            for seat in range(len(seats)):
                self.reveal(m, seat, seat)
            assert m.status in ("playing", "finished")
        return m

    @rule(m=matches, seat=st.integers(0, 4), who=st.integers(-1, 4))
    def commit(self, m: M, seat: int, who: int) -> None:
        token = m.tokens[who] if 0 <= who < len(m.tokens) else "not-a-token"
        st_ = m.seats[seat] if seat < len(m.seats) else m.seats[0]
        r = self.change(
            m,
            "POST",
            f"/v1/matches/{m.match_id}/seats/{seat}/commit",
            token=token,
            body={"seed_commitment": st_.seed_commitment, "key": st_.key, "roll_chain": st_.tip},
            resend=True,
        )
        if r.status_code == 200:
            assert seat == who
        if who < 0:
            assert r.status_code in (401, 404)

    @rule(m=matches, seat=st.integers(0, 4), junk=HEXES, key=st.sampled_from([None, "AAAA"]))
    def commit_junk(self, m: M, seat: int, junk: str, key: str | None) -> None:
        token = m.tokens[seat % len(m.tokens)]
        r = self.change(
            m,
            "POST",
            f"/v1/matches/{m.match_id}/seats/{seat}/commit",
            token=token,
            body={"seed_commitment": junk, "key": key, "roll_chain": junk},
        )
        if junk != "00" * 32 or key is not None:
            assert r.status_code >= 400, r.text  # (a well-formed commitment may be taken)

    @rule(m=matches, seat=st.integers(0, 4), who=st.integers(-1, 4), seed=SEEDS)
    def reveal(self, m: M, seat: int, who: int, seed: str | None = None) -> None:
        token = m.tokens[who] if 0 <= who < len(m.tokens) else "not-a-token"
        st_ = m.seats[seat] if seat < len(m.seats) else m.seats[0]
        body = {"client_seed": st_.client_seed if seed is None else seed, "nonce": st_.nonce}
        r = self.change(
            m,
            "POST",
            f"/v1/matches/{m.match_id}/seats/{seat}/reveal",
            token=token,
            body=body,
            resend=True,
        )
        if r.status_code == 200:
            assert seat == who and body["client_seed"] == st_.client_seed
        if r.status_code == 422:
            assert r.json()["error"]["code"] in ("bad_reveal", "validation_error")

    @rule(
        m=matches,
        body=st.sampled_from(
            [
                {"game": "chess"},
                {"game": "hokm", "ruleset": {"nope": 1}},
                {"game": "hokm", "seats": [{"name": "solo"}]},
                {"game": "tawla", "extra": 1},
                {"game": "rng"},
                {},
                {"game": "tawla", "seats": [{"name": " "}, {"name": "b"}]},
            ]
        ),
    )
    def create_refused(self, m: M, body: dict[str, Any]) -> None:
        size = self.snapshot(m)[-1]
        r = self.call(None, "POST", "/v1/matches", body=body)
        assert r.status_code == 422, r.text
        assert self.snapshot(m)[-1] == size

    @rule(m=matches, seat=st.integers(0, 4), who=st.integers(-1, 4), seed=SEEDS)
    def give_seed(self, m: M, seat: int, who: int, seed: str) -> None:
        """qahwa-fair/1's path: refused for a v2 match, whoever asks."""
        token = m.tokens[who] if 0 <= who < len(m.tokens) else "not-a-token"
        r = self.change(
            m,
            "POST",
            f"/v1/matches/{m.match_id}/seats/{seat}/seed",
            token=token,
            body={"client_seed": seed},
        )
        assert r.status_code >= 400

    @rule(m=matches, who=st.integers(-1, 3))
    def start(self, m: M, who: int) -> None:
        """No path to a server-drawn seed: /start is 404 (401 without a valid token)."""
        token = m.tokens[who] if 0 <= who < len(m.tokens) else "not-a-token"
        r = self.change(m, "POST", f"/v1/matches/{m.match_id}/start", token=token)
        assert r.status_code == (404 if 0 <= who < len(m.tokens) else 401), r.text

    @rule(m=matches, pick=st.integers(0, 10_000), steps=st.integers(1, 12))
    def play_legal(self, m: M, pick: int, steps: int) -> None:
        for _ in range(steps):
            t = self.turn(m)
            if t is None:
                return
            seat, view = t
            choices = view.get("suggested_actions") or view["legal_actions"]
            body = m.seats[seat].act_request(view, choices[pick % len(choices)])
            r = self.change(
                m, "POST", f"/v1/matches/{m.match_id}/actions", token=m.tokens[seat], body=body
            )
            assert r.status_code == 200, r.text
            m.seats[seat].accepted(body)
            assert r.json()["version"] == view["version"] + 1

    @rule(m=matches, delta=st.sampled_from([-1, 1, 7]))
    def play_stale(self, m: M, delta: int) -> None:
        t = self.turn(m)
        if t is None:
            return
        seat, view = t
        body = m.seats[seat].act_request(view, view["legal_actions"][0])
        body["version"] = max(0, view["version"] + delta)
        r = self.change(
            m, "POST", f"/v1/matches/{m.match_id}/actions", token=m.tokens[seat], body=body
        )
        assert r.status_code == 409 and r.json()["error"]["code"] == "stale_version"

    @rule(m=matches)
    def play_out_of_turn(self, m: M) -> None:
        t = self.turn(m)
        if t is None or len(m.tokens) < 2:
            return
        seat, view = t
        other = (seat + 1) % len(m.tokens)
        r = self.change(
            m,
            "POST",
            f"/v1/matches/{m.match_id}/actions",
            token=m.tokens[other],
            body=m.seats[other].act_request(view, view["legal_actions"][0]),
        )
        assert r.status_code in (409, 422)

    @rule(m=matches, prev=st.sampled_from(["00" * 32, "x"]), signer=st.integers(0, 3))
    def play_badly_signed(self, m: M, prev: str, signer: int) -> None:
        """A signature over another head, or by another seat: refused, nothing changes."""
        t = self.turn(m)
        if t is None:
            return
        seat, view = t
        body = m.seats[seat].act_request(view, view["legal_actions"][0])
        if signer % len(m.seats) != seat and m.seats[signer % len(m.seats)].signer is not None:
            body["sig"] = m.seats[signer % len(m.seats)].sign(
                {"type": "action", "seat": seat, "action": body["action"]}, view["chain"]
            )
        else:
            body["prev"] = prev
        r = self.change(
            m, "POST", f"/v1/matches/{m.match_id}/actions", token=m.tokens[seat], body=body
        )
        assert r.status_code in (409, 422), r.text

    @rule(
        m=matches,
        action=JUNK_ACTION,
        who=st.integers(0, 3),
        version=st.integers(-1, 40) | st.text(max_size=2),
    )
    def play_junk(self, m: M, action: dict[str, Any], who: int, version: Any) -> None:
        t = self.turn(m)
        if t is not None and action in t[1]["legal_actions"]:
            return  # by chance a legal move: not junk
        r = self.call(m, "GET", f"/v1/matches/{m.match_id}")
        if r.status_code != 200:
            return
        self.change(
            m,
            "POST",
            f"/v1/matches/{m.match_id}/actions",
            token=m.tokens[who % len(m.tokens)],
            body={"action": action, "version": version},
        )

    @rule(m=consumes(matches), who=st.integers(0, 3))
    def resign(self, m: M, who: int) -> None:
        seat = who % len(m.tokens)
        view = self.call(m, "GET", f"/v1/matches/{m.match_id}/state", token=m.tokens[seat]).json()
        body: dict[str, Any] = {}
        sig = (
            m.seats[seat].sign({"type": "end", "reason": "resigned", "seat": seat}, view["chain"])
            if view["chain"]
            else None
        )
        if sig is not None:
            body["sig"] = sig
        r = self.change(
            m, "POST", f"/v1/matches/{m.match_id}/resign", token=m.tokens[seat], body=body
        )
        assert r.status_code in (200, 409)
        if view["status"] == "seating" and view["lock"] is not None:
            assert r.json()["error"]["code"] == "not_started"  # the reveal deadline decides
        else:
            assert self.snapshot(m)[1] == "finished"

    # -- invariants ------------------------------------------------------------------------
    @invariant()
    def nobody_sees_another_hand(self) -> None:
        for m in self.all[-2:]:
            if m.status != "playing":
                continue
            views = [
                self.call(m, "GET", f"/v1/matches/{m.match_id}/state", token=t).json()
                for t in m.tokens
            ]
            public = self.call(m, "GET", f"/v1/matches/{m.match_id}").json()
            if public["status"] != "playing":
                continue
            self.observe(m, public["version"], public["status"])
            hands = [{x for x in v.get("hand") or [] if isinstance(x, str)} for v in views]
            texts = [json.dumps(_hidden_part(v)) for v in views]
            ptext = json.dumps(_hidden_part(public["public_state"]))
            for j, hand in enumerate(hands):
                for code in hand:
                    assert f'"{code}"' not in ptext, (m.game, code, "public view")
                    for i, text in enumerate(texts):
                        if i != j:
                            assert f'"{code}"' not in text, (m.game, code, i, j)


@pytest.mark.skipif(not GAMES, reason="no game engine available yet")
def test_api_state_machine(server: LiveServer) -> None:
    ApiMachine.server = server
    run = ApiMachine.TestCase
    thorough = os.environ.get("QAHWA_HYPOTHESIS_PROFILE") == "thorough"
    run.settings = settings(
        max_examples=60 if thorough else 10,
        stateful_step_count=40 if thorough else 15,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    run().runTest()

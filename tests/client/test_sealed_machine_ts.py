"""The TypeScript deal machine (clients/ts/src/sealed/machine.ts) held to Python's
(games/sealed_deal.py ``DealMachine`` over the sealed engines) by a differential test (issue
47): sealed hokm (two, three and four players, house seats, nars, a revoke caught at the hand's
end, a timeout), sealed qahve (and a revoke) and sealed Iraqi dominoes (two, three and four
players, a tile laid where the rules did not allow it) are played by the simulated seats of
games/sealed_sim.py; both machines follow each log event by event, and after every event their
hand, phase, owed step, turn, whether the hand's play is over, every seat's dealt and held
items, the legal actions the server lists and the view's whole sealed block must be the same.
Where a seat is to play, its legal actions over its hidden hand (``hidden_legal``) are
compared for its true hand and for random hands made of the hand's items, over 1,000 cases at
least. Logs with one event changed (a proof's byte, a card, a share's order, a revealed key, a
seat) must be refused by both at the same event."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

import pytest

from fairness import canonical_ruleset
from games.errors import GameError
from games.sealed_deal import DealMachine
from tests.client.test_clients_ts import NODE, build, run
from tests.support.sealed_play import play_match

MATCHES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("hokm", {"players": 4, "target": 2}, {"seed": "d4"}),
    ("hokm", {"players": 4, "target": 1, "nars": True}, {"seed": "nars", "house": (1, 3)}),
    ("hokm", {"players": 3, "target": 1}, {"seed": "d3"}),
    ("hokm", {"players": 2, "target": 1}, {"seed": "d2"}),
    ("hokm", {"players": 4, "target": 3}, {"seed": "rv", "cheats": {2: "revoke"}}),
    ("hokm", {"players": 4, "target": 1}, {"seed": "st", "cheats": {1: "stall"}}),
    ("qahve", {"target": 1}, {"seed": "q"}),
    ("qahve", {"target": 1}, {"seed": "qr", "cheats": {1: "revoke"}}),
    ("iraqi_domino", {"players": 2, "target": 40}, {"seed": "i2"}),
    ("iraqi_domino", {"players": 3, "target": 25}, {"seed": "i3", "house": (0,)}),
    ("iraqi_domino", {"players": 4, "target": 25}, {"seed": "i4"}),
    ("iraqi_domino", {"players": 2, "target": 60}, {"seed": "il", "cheats": {1: "illegal_tile"}}),
]
#: random hands given to each seat on turn, beside its true one
RANDOM_HANDS = 4


def _machine(case: dict[str, Any]) -> DealMachine:
    return DealMachine.follow(case["match_id"], case["game"], case["ruleset"], case["house"])


def _state(m: DealMachine, after: int, players: int) -> dict[str, Any]:
    return {
        "after": after,
        "hand": m.hand,
        "phase": m.phase,
        "owed": m.owed,
        "turn": m.turn,
        "play_over": m.play_over,
        "dealt": [m.dealt(s) for s in range(players)],
        "held": [m.held(s) for s in range(players)],
        # what an honest server's view lists for the seat on turn (its items by position)
        "legal": [] if m.turn is None else m.engine.legal_actions(m.turn),
        # the sealed block an honest server's views carry (its limits aside)
        "sealed": m.engine.sealed_view() or None,
    }


def _codes(case: dict[str, Any]) -> dict[int, list[str]]:
    """Every revealed hand's codes by position (the first pass over the log)."""
    m = _machine(case)
    deals: dict[int, Any] = {}
    for ev in case["events"]:
        m.feed([ev])
        hand = m.engine.sealed
        if hand is not None:
            deals[hand.number] = hand
    return {n: list(d.codes) for n, d in deals.items() if d.codes is not None}


def _python(case: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Python's states, with the probes (the hands each seat on turn is given) they use."""
    codes = _codes(case) if not case.get("tampered") else {}
    players = case["ruleset"].get("players", 4)
    m = _machine(case)
    states: list[dict[str, Any]] = []
    probes: list[dict[str, Any]] = []
    for k, ev in enumerate(case["events"]):
        try:
            m.feed([ev])
        except GameError as exc:
            return {"states": states, "probes": probes, "refused": {"at": k, "message": str(exc)}}
        st = _state(m, k + 1, players)
        seat = m.turn
        st["choices"] = []
        if seat is not None and m.owed is None and m.engine.sealed is not None:
            hand = m.engine.sealed
            held = m.held(seat)
            owns: list[dict[int, str]] = []
            if hand.number in codes:
                owns.append({i: codes[hand.number][i] for i in m.dealt(seat)})
            for _ in range(RANDOM_HANDS):
                owns.append(dict(zip(held, rng.sample(hand.items, len(held)), strict=True)))
            st["choices"] = [m.choices(seat, own) for own in owns]
            probes.append(
                {
                    "after": k + 1,
                    "owns": [
                        {"seat": seat, "own": {str(i): c for i, c in o.items()}} for o in owns
                    ],
                }
            )
        states.append(st)
    return {"states": states, "probes": probes, "refused": None}


def _flip_b64(text: str, at: int) -> str:
    b = bytearray(base64.b64decode(text))
    b[at] ^= 1
    return base64.b64encode(bytes(b)).decode("ascii")


def _tampered(case: dict[str, Any]) -> list[dict[str, Any]]:
    """Copies of an honest log with one event changed."""
    out = []
    events = case["events"]

    def where(pred: Any) -> int:
        return next(k for k, e in enumerate(events) if e["type"] == "action" and pred(e["action"]))

    def change(k: int, f: Any) -> None:
        evs = json.loads(json.dumps(events))
        f(evs[k]["action"], evs[k])
        out.append({**case, "events": evs, "tampered": True})

    k = where(lambda a: a.get("step") == "shuffle")
    change(k, lambda a, e: a.update(proof=_flip_b64(a["proof"], 200)))
    k = where(lambda a: a.get("step") == "share" and len(a["shares"]) > 1)
    change(k, lambda a, e: a.update(shares=list(reversed(a["shares"]))))
    k = where(lambda a: a.get("step") == "key")
    change(k, lambda a, e: a.update(key=a["key"][:-2] + "00"))
    k = where(lambda a: a.get("type") == "play")
    other = "2C" if case["game"] == "hokm" else "0-0"
    change(k, lambda a, e: a.update({"card" if case["game"] == "hokm" else "tile": other}))
    k = where(lambda a: a.get("step") == "reveal_key")
    change(k, lambda a, e: a.update(secret=a["secret"][:-2] + "00"))
    k = where(lambda a: a.get("type") == "play")
    players = case["ruleset"].get("players", 4)
    change(k, lambda a, e: e.update(seat=(e["seat"] + 1) % players))
    return out


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    out = []
    for game, ruleset, kw in MATCHES:
        r = play_match(game, ruleset, **kw)
        assert r.ctx is not None
        out.append(
            {
                "match_id": r.ctx.match_id,
                "game": game,
                "ruleset": json.loads(canonical_ruleset(r.ruleset)),
                "house": list(r.ctx.house),
                "events": r.events,
            }
        )
    return out


def _node(tmp_path: Path, cases: list[dict[str, Any]], probes: list[list[Any]]) -> list[Any]:
    out = build()
    assert NODE is not None
    src = tmp_path / "cases.json"
    dst = tmp_path / "out.json"
    src.write_text(
        json.dumps({"cases": [{**c, "probes": p} for c, p in zip(cases, probes, strict=True)]})
    )
    proc = run(NODE, str(out / "harness" / "machine-diff.js"), str(src), str(dst))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results: list[Any] = json.loads(dst.read_text())["results"]
    return results


@pytest.mark.slow
def test_the_typescript_deal_machine_is_pythons(
    cases: list[dict[str, Any]], tmp_path: Path
) -> None:
    rng = random.Random(47)
    tampered = [t for c in (cases[0], cases[3], cases[8]) for t in _tampered(c)]
    everything = cases + tampered
    py = [_python(c, rng) for c in everything]
    ts = _node(tmp_path, everything, [p["probes"] for p in py])
    states = legal = random_legal = 0
    ends = set()
    for c, p, t in zip(everything, py, ts, strict=True):
        name = f"{c['game']} {c['ruleset']} {c['match_id']}"
        assert (p["refused"] is None) == (t["refused"] is None), (name, p["refused"], t["refused"])
        if p["refused"] is not None:
            assert c.get("tampered") and p["refused"]["at"] == t["refused"]["at"], (name, p, t)
        assert len(p["states"]) == len(t["states"]), name
        for a, b in zip(p["states"], t["states"], strict=True):
            assert a == b, (name, a, b)
            states += 1
            legal += len(a["choices"])
            random_legal += max(0, len(a["choices"]) - 1)
        if not c.get("tampered"):
            assert p["refused"] is None, (name, p["refused"])
            ends.add(p["states"][-1]["phase"])
    # every tampered log refused, by both, at the event changed
    assert all(p["refused"] is not None for p in py[len(cases) :])
    assert ends == {"over"}
    assert states >= 1000 and random_legal >= 1000, (states, legal, random_legal)

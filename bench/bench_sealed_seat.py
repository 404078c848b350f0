"""A conforming sealed seat's own CPU per hand (``python -m bench sealed_seat``; issue 46;
docs/performance.md "A sealed seat's CPU per hand" reads its figures).

Four ``qahwa_client`` sealed seats play whole four-seat sealed hokm matches of one hand
(target 1) against an engine in this process (the server's part, not timed): as over HTTP,
the seat on turn reads its view (its machine fed the log's new events, the view checked
against it and shown in player form), makes its step or play, and reads the answer's view.
Only the seats' calls are timed (``time.process_time``): keys, shuffles with their proofs,
shares, openings, every other seat's proofs checked by the seat's own deal machine. Printed:
the four seats' CPU per hand and one seat's (a quarter). Figures are measured, never
judged.
"""

from __future__ import annotations

import hashlib
import random
import time
from typing import Any

import sealed
from fairness import canonical_ruleset
from games.base import Chance, MatchContext
from games.registry import find_engine
from qahwa_client.sealed import SealedSeat

RULES = {"players": 4, "target": 1, "deal": "sealed"}
MATCHES = 3


def play(seed: int) -> tuple[float, int]:
    """One match: (the four seats' CPU seconds, hands played)."""
    cls = find_engine("hokm", RULES)
    parsed = cls.parse_ruleset(RULES)
    mid = f"bench-seat-{seed}"
    key = hashlib.sha512(f"bench seat {seed}".encode()).digest()
    engine = cls(parsed, Chance(key), MatchContext(mid))
    events: list[dict[str, Any]] = []

    def record(evs: list[Any]) -> None:
        events.extend({"seq": len(events) + i, **ev} for i, ev in enumerate(evs))

    record(engine.chance.take_events())
    rnd = random.Random(seed)
    ruleset = canonical_ruleset(parsed)
    seats = [
        SealedSeat.follow(
            mid, s, "hokm", ruleset, rng=sealed.FixedRandomness(f"{mid}/{s}".encode())
        )
        for s in range(4)
    ]
    cpu = 0.0
    while engine.outcome is None:
        s = engine.turn
        assert s is not None
        seat = seats[s]
        raw = {**engine.view(s), "deal": "sealed"}
        t0 = time.process_time()
        seat.take_events(events[seat.seen + 1 :])
        shown = seat.view(raw)
        choice = rnd.choice(shown["suggested_actions"] or shown["legal_actions"])
        action = seat.wire(choice)
        cpu += time.process_time() - t0
        record(engine.apply(s, action))
        answer = {**engine.view(s), "deal": "sealed"}
        t0 = time.process_time()
        seat.take_events(events[seat.seen + 1 :])
        seat.view(answer)
        cpu += time.process_time() - t0
    hands = int(engine.view(None)["result"].get("hands", 1))
    return cpu, hands


def run() -> None:
    play(0)  # warm (imports, item tables)
    rows = [play(seed) for seed in range(1, MATCHES + 1)]
    cpu = sum(c for c, _ in rows) / sum(h for _, h in rows)
    print(f"sealed hokm, four seats, target 1: {MATCHES} matches")
    print(
        f"the four seats' CPU per hand: {1000 * cpu:.0f} ms; one seat's: {250 * cpu:.0f} ms "
        "(its key, shuffle with proof, shares, openings; every other seat's proofs checked "
        "by its own deal machine)"
    )


if __name__ == "__main__":
    run()

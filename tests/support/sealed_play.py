"""A whole sealed match played by the simulated seats of :mod:`games.sealed_sim`: the
engine, the events (as a transcript holds them, with ``seq``) and every refused action with
its error."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.base import Action, Chance, Engine, Event, MatchContext
from games.errors import ActionError
from games.registry import find_engine
from games.sealed_sim import SimSeat


@dataclass
class SimResult:
    engine: Engine
    events: list[Event]
    refused: list[tuple[int, Action, ActionError]] = field(default_factory=list)
    key: bytes = b""
    ctx: MatchContext | None = None
    ruleset: dict[str, Any] = field(default_factory=dict)


def play_match(
    game: str,
    ruleset: Mapping[str, Any] | None = None,
    *,
    seed: str = "sim",
    house: Sequence[int] = (),
    cheats: Mapping[int, str] | None = None,
    max_steps: int = 100_000,
) -> SimResult:
    """Play a sealed match of ``game`` to its end with simulated seats (``cheats``: seat →
    cheat). A refused action is recorded and the seat asked again (it then plays honestly);
    a seat that stalls ends the match by its timeout."""
    raw = {**(ruleset or {}), "deal": "sealed"}
    cls = find_engine(game, raw)
    parsed = cls.parse_ruleset(raw)
    key = hashlib.sha512(f"qahwa sealed sim key/{seed}".encode()).digest()
    ctx = MatchContext(f"sim-{seed}", house=tuple(house))
    engine = cls(parsed, Chance(key), ctx)
    events: list[Event] = []

    def record(evs: list[Event]) -> None:
        for ev in evs:
            events.append({"seq": len(events), **ev})

    record(engine.chance.take_events())
    seats = [SimSeat(s, seed, (cheats or {}).get(s)) for s in range(engine.n_seats)]
    result = SimResult(engine, events, key=key, ctx=ctx, ruleset=parsed)
    for _ in range(max_steps):
        if engine.outcome is not None:
            return result
        seat = engine.turn
        assert seat is not None
        action = seats[seat].act(engine.view(seat), engine)
        if action is None:
            record(engine.end_match("timeout", seat))
            continue
        try:
            record(engine.apply(seat, action))
        except ActionError as exc:
            result.refused.append((seat, action, exc))
    raise RuntimeError(f"the match did not end in {max_steps} steps")

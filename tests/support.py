"""Small helpers shared by the test modules."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import settings

from games.base import Chance, Engine
from games.transcript import transcript_key


def examples(n: int) -> int:
    """``n`` hypothesis examples under the default profile, scaled with the loaded profile's
    ``max_examples`` (``QAHWA_HYPOTHESIS_PROFILE=thorough`` gives 5n): a fixed
    ``max_examples`` in ``@settings`` would otherwise override the profile."""
    return max(n, n * settings().max_examples // 100)


def walk_transcript(doc: dict[str, Any], cls: type[Engine],
         check: Callable[[Any, int, dict[str, Any]], None]) -> Engine:
    """Re-run the transcript step by step, calling ``check(engine, seat, action)`` before
    each action and comparing every chance event the engine draws with the transcript's."""
    chance = Chance(transcript_key(doc))
    engine = cls(cls.parse_ruleset(json.loads(doc["ruleset"])), chance)
    events = doc["events"]
    pos = 0

    def drain() -> None:
        nonlocal pos
        for ev in chance.take_events():
            assert {k: v for k, v in events[pos].items() if k != "seq"} == ev
            pos += 1

    drain()
    while pos < len(events):
        ev = events[pos]
        pos += 1
        if ev["type"] == "end":
            engine.end_match(ev["reason"], ev.get("seat"))
            continue
        assert ev["type"] == "action"
        assert ev["action"] in engine.legal_actions(ev["seat"])
        check(engine, ev["seat"], ev["action"])
        engine.apply(ev["seat"], ev["action"])
        drain()
    return engine

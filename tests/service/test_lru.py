"""service.store.LRU: the bounded cache the service's in-memory caches share."""

from __future__ import annotations

import asyncio

import pytest

from service.store import LRU
from service.watch import Hub


def test_the_least_recently_used_entry_goes_first() -> None:
    c: LRU[str, int] = LRU(2)
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a") == 1  # a is now the most recent
    c.put("c", 3)
    assert "b" not in c and c.get("a") == 1 and c.get("c") == 3
    assert len(c) == 2


def test_a_get_without_touch_does_not_count_as_a_use() -> None:
    c: LRU[str, int] = LRU(2)
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a", touch=False) == 1
    c.put("c", 3)
    assert "a" not in c and "b" in c


def test_defaults_pop_and_size() -> None:
    c: LRU[str, int] = LRU(1)
    assert c.get("x") is None and c.get("x", -1) == -1
    c.put("x", 5)
    c.put("x", 6)
    assert len(c) == 1 and c.pop("x") == 6 and c.pop("x") is None
    with pytest.raises(ValueError):
        LRU(0)


def test_the_hub_remembers_only_the_newest_matches() -> None:
    loop = asyncio.new_event_loop()
    try:
        hub = Hub(remember=2)
        hub.bind(loop)
        hub.publish("m1", 3)
        hub.publish("m2", 1)
        hub.publish("m1", 2)  # not newer: m1 keeps 3, and is the most recent again
        hub.publish("m3", 1)  # m2 is forgotten
        assert hub._latest.get("m1", touch=False) == 3
        assert "m2" not in hub._latest and "m3" in hub._latest
    finally:
        loop.close()

"""A seat's view and its action on SQLite run on the event loop, without the thread pool's
hand-off (issue 50), and whatever could wait or work long there goes to the thread pool
instead, with the same answer: a write where only a read was expected (a deadline to
settle), a per-match lock or the process's write lock another thread holds, SQLite's write
lock another process holds, a replay. On PostgreSQL every request goes to the thread pool."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.app import create_app
from service.db import WouldBlock
from service.matches import MatchService
from service.settings import Settings
from service.store import KIND_MATCH
from tests.support import commit_all, reveal_all
from tests.support.fake_clock import FakeClock


@pytest.fixture()
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture()
def svc(tmp_path: Path, clock: FakeClock) -> Iterator[MatchService]:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'q.db'}", data_dir=tmp_path)
    app = create_app(settings, clock=clock)
    service: MatchService = app.state.service
    try:
        yield service
    finally:
        app.state.db.dispose()


def started(svc: MatchService) -> tuple[str, list[str]]:
    created = svc.create_match("hokm", ruleset={}, names=None)
    mid = created["match_id"]
    tokens = [s["token"] for s in created["seats"]]
    nonces = commit_all(svc, mid, tokens, lambda i: f"seed-{i}", [None] * len(tokens))
    reveal_all(svc, mid, tokens, nonces, lambda i: f"seed-{i}")
    return mid, tokens


def read_on_loop(svc: MatchService, mid: str, token: str) -> tuple[dict[str, Any], list[str]]:
    """The view through ``Store.on_loop`` in an event loop, and the threads that read it."""
    threads: list[str] = []

    def read() -> dict[str, Any]:
        threads.append(threading.current_thread().name)
        return svc.state(mid, kind=KIND_MATCH, token=token)

    async def main() -> dict[str, Any]:
        threads.append("loop:" + threading.current_thread().name)
        return await svc.store.on_loop(read)

    return asyncio.run(main()), threads


def test_a_cached_view_is_read_on_the_loop_thread(svc: MatchService) -> None:
    mid, tokens = started(svc)
    view, threads = read_on_loop(svc, mid, tokens[1])
    assert threads == [threads[0], threads[0].removeprefix("loop:")]  # one try, on the loop
    assert view == svc.state(mid, kind=KIND_MATCH, token=tokens[1])


def test_a_lock_held_by_another_thread_sends_the_read_to_the_pool(svc: MatchService) -> None:
    mid, tokens = started(svc)
    lock = svc.store.cache.lock_for(mid)
    held, release = threading.Event(), threading.Event()
    released: list[bool] = []

    def writer() -> None:
        with lock:
            held.set()
            # by the loop's timer: a loop that waited for this lock would never fire it
            released.append(release.wait(3))

    t = threading.Thread(target=writer)
    t.start()
    held.wait(10)
    try:
        loop = asyncio.new_event_loop()
        try:
            task = loop.create_task(svc.store.on_loop(lambda: svc.state(mid, token=tokens[0])))
            loop.call_later(0.2, release.set)  # the pool's thread waits; the loop does not
            view = loop.run_until_complete(task)
        finally:
            loop.close()
    finally:
        release.set()
        t.join()
    assert released == [True]
    assert view == svc.state(mid, token=tokens[0])


def test_a_deadline_to_settle_is_written_from_the_pool(svc: MatchService, clock: FakeClock) -> None:
    """A view read past the match's deadline ends it first (a write): the try on the loop
    stops before anything changed, and the pool's thread ends it and reads the view."""
    mid, tokens = started(svc)
    before = svc.public(mid, kind=KIND_MATCH)
    assert before["status"] == "playing"
    clock.advance(10 * 86400)
    view, threads = read_on_loop(svc, mid, tokens[0])
    assert len(threads) == 3 and threads[2] != threads[0].removeprefix("loop:")
    assert view["status"] == "finished"
    assert svc.public(mid, kind=KIND_MATCH)["status"] == "finished"


def test_a_replay_is_not_run_on_the_loop(svc: MatchService) -> None:
    mid, tokens = started(svc)
    svc.store.cache.pop(mid)
    replays = svc.store.replays
    view, threads = read_on_loop(svc, mid, tokens[0])
    assert len(threads) == 3 and threads[2] != threads[0].removeprefix("loop:")
    assert svc.store.replays == replays + 1
    assert view == svc.state(mid, kind=KIND_MATCH, token=tokens[0])


def test_a_write_refuses_to_run_where_a_read_runs_on_the_loop(svc: MatchService) -> None:
    from service.db import LOOP, READ_ON_LOOP

    LOOP.mode = READ_ON_LOOP
    try:
        with pytest.raises(WouldBlock), svc.store.db.write():
            pass
        with pytest.raises(WouldBlock), svc.store.db.connect(write=True):
            pass
    finally:
        LOOP.mode = 0


def signed_action(svc: MatchService, mid: str, tokens: list[str]) -> tuple[int, dict[str, Any]]:
    """The seat on turn and the keywords of its first legal action (unkeyed seats)."""
    for seat, token in enumerate(tokens):
        view = svc.state(mid, kind=KIND_MATCH, token=token)
        if view.get("legal_actions"):
            return seat, {"action": view["legal_actions"][0], "version": view["version"]}
    raise AssertionError("no seat has a legal action")


def act_on_loop(
    svc: MatchService, mid: str, token: str, kw: dict[str, Any], loop_side: Any = None
) -> tuple[dict[str, Any], list[str]]:
    """The action through ``Store.on_loop(write=True)``; ``loop_side`` runs on the loop
    0.2 s after the start (it can only if the loop is not blocked); the threads that ran it."""
    threads: list[str] = []

    def act() -> dict[str, Any]:
        threads.append(threading.current_thread().name)
        return svc.act(mid, token=token, **kw)

    async def main() -> dict[str, Any]:
        threads.append("loop:" + threading.current_thread().name)
        if loop_side is not None:
            asyncio.get_running_loop().call_later(0.2, loop_side)
        return await svc.store.on_loop(act, write=True)

    return asyncio.run(main()), threads


def test_an_action_is_written_on_the_loop_thread(svc: MatchService) -> None:
    mid, tokens = started(svc)
    seat, kw = signed_action(svc, mid, tokens)
    out, threads = act_on_loop(svc, mid, tokens[seat], kw)
    assert threads == [threads[0], threads[0].removeprefix("loop:")]
    assert out["version"] == kw["version"] + 1
    assert svc.public(mid, kind=KIND_MATCH)["version"] == kw["version"] + 1


def test_sqlites_write_lock_held_by_another_process_sends_the_action_to_the_pool(
    svc: MatchService, tmp_path: Path
) -> None:
    """Another connection (as another process) holds SQLite's write lock: the try on the
    loop meets it without waiting, the pool's thread waits for it (the busy timeout) and
    writes once the loop's timer has released it."""
    mid, tokens = started(svc)
    seat, kw = signed_action(svc, mid, tokens)
    replays = svc.store.replays
    other = sqlite3.connect(tmp_path / "q.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    released: list[bool] = []

    def release() -> None:
        other.execute("COMMIT")
        released.append(True)

    try:
        out, threads = act_on_loop(svc, mid, tokens[seat], kw, release)
    finally:
        if not released:
            other.execute("ROLLBACK")
        other.close()
    assert released == [True]
    assert len(threads) == 3 and threads[2] != threads[0].removeprefix("loop:")
    assert out["version"] == kw["version"] + 1
    assert svc.public(mid, kind=KIND_MATCH)["version"] == kw["version"] + 1
    assert svc.store.replays == replays  # the try changed nothing: the cached engine stays
    assert svc.store.loop_fallbacks == 1


def test_the_process_write_lock_held_by_a_thread_sends_the_action_to_the_pool(
    svc: MatchService,
) -> None:
    mid, tokens = started(svc)
    seat, kw = signed_action(svc, mid, tokens)
    gate = svc.store.db._gate_lock
    assert gate is not None
    replays = svc.store.replays
    held, release = threading.Event(), threading.Event()

    def writer() -> None:
        with gate:
            held.set()
            release.wait(3)

    t = threading.Thread(target=writer)
    t.start()
    held.wait(10)
    try:
        out, threads = act_on_loop(svc, mid, tokens[seat], kw, release.set)
    finally:
        release.set()
        t.join()
    assert len(threads) == 3 and threads[2] != threads[0].removeprefix("loop:")
    assert out["version"] == kw["version"] + 1
    assert svc.store.replays == replays  # the try changed nothing: the cached engine stays

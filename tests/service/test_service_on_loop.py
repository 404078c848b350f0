"""A seat's view on SQLite is read on the event loop, without the thread pool's hand-off
(issue 50), and whatever could wait or work long there goes to the thread pool instead, with
the same answer: a write (a deadline to settle), a per-match lock another thread holds, a
replay. On PostgreSQL every read goes to the thread pool."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_clock import FakeClock
from support import commit_all, reveal_all

from service.app import create_app
from service.db import WouldBlock
from service.matches import MatchService
from service.settings import Settings
from service.store import KIND_MATCH


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


def test_a_write_refuses_to_run_on_the_loop(svc: MatchService) -> None:
    from service.db import LOOP

    LOOP.on = True
    try:
        with pytest.raises(WouldBlock), svc.store.db.write():
            pass
    finally:
        LOOP.on = False

"""Push, don't poll: idle streams and long polls cost no query, and many can stay open."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from tests.support.http_play import GAMES, V2Seat, create_match, short_ruleset, started
from tests.support.live_server import LiveServer

GAME = next((g for g in ("hokm", "tawla") if g in GAMES), None)
pytestmark = pytest.mark.skipif(GAME is None, reason="no game engine available yet")


def _started(c: httpx.Client) -> tuple[str, list[V2Seat]]:
    assert GAME is not None
    created, seats = started(c, GAME)
    return created["match_id"], seats


def _act(c: httpx.Client, mid: str, seats: list[V2Seat]) -> dict[str, Any]:
    seat: int = seats[0].state()["turn"]
    view = seats[seat].state()
    return seats[seat].act(view, view["suggested_actions"][0])


def _wait_for(pred: Any, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not pred():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def _ids(text: str) -> list[int]:
    return [int(line[4:]) for line in text.splitlines() if line.startswith("id: ")]


def test_last_event_id_resumes_after_it(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        mid, _ = _started(c)
        n = c.get(f"/v1/matches/{mid}/events").json()["next_seq"]
        assert n >= 2
        url = f"/v1/matches/{mid}/events/stream"
        with c.stream("GET", url, params={"timeout": 0.3}) as s:
            assert _ids("".join(s.iter_text())) == list(range(n))
        # a reconnecting EventSource sends the last id it saw, with the original URL
        with c.stream(
            "GET", url, params={"timeout": 0.3, "after": -1}, headers={"Last-Event-ID": "0"}
        ) as s:
            assert _ids("".join(s.iter_text())) == list(range(1, n))
        with c.stream(
            "GET", url, params={"timeout": 0.3}, headers={"Last-Event-ID": str(n - 1)}
        ) as s:
            assert _ids("".join(s.iter_text())) == []


def test_idle_streams_and_long_polls_make_no_queries(server: LiveServer) -> None:
    db = server.app.state.db
    hub = server.app.state.watch.hub
    queries = [0]

    def count(*_: Any) -> None:
        # The log's checkpointer signs one checkpoint after the match's last commit (at most
        # every QAHWA_CHECKPOINT_SECONDS): that is the commit's work, not a waiter's; the key
        # ring re-reads the signing keys every QAHWA_KEY_POLL_SECONDS and the deadline sweep
        # runs every sweep_interval_seconds (30 s: one could fall in the idle window below),
        # waiters or not.
        if threading.current_thread().name not in ("qahwa-checkpoint", "qahwa-keys", "qahwa-sweep"):
            queries[0] += 1

    # every statement the driver runs, whichever layer sends it (the store's hot path runs
    # on the DB-API cursor, below SQLAlchemy's statement events)
    traced: list[Any] = []

    def checkout(dbapi_conn: Any, *_: Any) -> None:
        dbapi_conn.set_trace_callback(count)
        traced.append(dbapi_conn)

    engines = {db._read, db._write, db._read_rows}
    for eng in engines:
        event.listen(eng, "checkout", checkout)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            mid, seats = _started(c)
            nxt = c.get(f"/v1/matches/{mid}/events").json()["next_seq"]
            streams: list[str] = []
            polls: list[dict[str, Any]] = []

            def stream() -> None:
                with (
                    httpx.Client(base_url=server.url, timeout=30) as c2,
                    c2.stream(
                        "GET",
                        f"/v1/matches/{mid}/events/stream",
                        params={"after": nxt - 1, "timeout": 20},
                    ) as s,
                ):
                    text = ""
                    for chunk in s.iter_text():
                        text += chunk
                        if "event: action" in text:
                            break
                    streams.append(text)

            def poll() -> None:
                with httpx.Client(base_url=server.url, timeout=30) as c2:
                    polls.append(
                        c2.get(
                            f"/v1/matches/{mid}/events", params={"after": nxt - 1, "wait": 20}
                        ).json()
                    )

            base = hub.waiting
            threads = [threading.Thread(target=f) for f in [stream] * 10 + [poll] * 10]
            for t in threads:
                t.start()
            _wait_for(lambda: hub.waiting == base + 20, "20 parked waiters")
            before = queries[0]
            time.sleep(1.5)  # the old code polled the database every 0.2-0.5 s per waiter
            assert queries[0] == before, "idle waiters queried the database"
            _act(c, mid, seats)
            assert queries[0] > before, "the counting sees no statement at all"
            for t in threads:
                t.join(timeout=30)
            assert len(streams) == 10 and len(polls) == 10
            assert all(p["events"] and p["events"][0]["seq"] == nxt for p in polls)
            assert all(_ids(s)[0] == nxt for s in streams)
    finally:
        for eng in engines:
            event.remove(eng, "checkout", checkout)
        for conn in traced:
            conn.set_trace_callback(None)


async def _open_streams(host: str, port: int, path: str, n: int) -> list[tuple[Any, Any]]:
    conns = []
    for _ in range(n):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        conns.append((reader, writer))
    await asyncio.gather(*(w.drain() for _, w in conns))
    return conns


async def _read_until(reader: asyncio.StreamReader, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = await asyncio.wait_for(reader.read(65536), 60)
        assert chunk, "the stream closed early"
        data += chunk
    return data


async def _read_all(conns: list[tuple[Any, Any]], marker: bytes) -> list[bytes]:
    return list(await asyncio.gather(*(_read_until(r, marker) for r, _ in conns)))


async def _close_all(conns: list[tuple[Any, Any]]) -> None:
    for _, w in conns:
        w.close()
    await asyncio.gather(*(w.wait_closed() for _, w in conns), return_exceptions=True)


def test_a_thousand_open_streams(server: LiveServer) -> None:
    n = 1000
    hub = server.app.state.watch.hub
    with httpx.Client(base_url=server.url, timeout=60) as c:
        mid, seats = _started(c)
        nxt = c.get(f"/v1/matches/{mid}/events").json()["next_seq"]
        host, port = server.url.removeprefix("http://").split(":")
        path = f"/v1/matches/{mid}/events/stream?after={nxt - 1}&timeout=120"
        threads_before = threading.active_count()
        loop = asyncio.new_event_loop()
        base = hub.waiting
        conns: list[tuple[Any, Any]] = []
        try:
            conns = loop.run_until_complete(_open_streams(host, int(port), path, n))
            heads = loop.run_until_complete(_read_all(conns, b"\r\n\r\n"))
            assert all(h.startswith(b"HTTP/1.1 200") for h in heads)
            _wait_for(lambda: hub.waiting == base + n, f"{n} parked streams", 120)
            # the server still answers other requests: no thread or socket is exhausted
            assert c.get("/healthz").status_code == 200
            assert threading.active_count() - threads_before < 64
            _act(c, mid, seats)
            got = loop.run_until_complete(_read_all(conns, b"event: action"))
            assert all(f"id: {nxt}".encode() in g for g in got)
        finally:
            loop.run_until_complete(_close_all(conns))
            loop.close()
        _wait_for(lambda: hub.waiting == base, "the closed streams to go", 120)


def test_hub_wakes_the_loop_only_for_a_parked_waiter() -> None:
    """A publish for a match nobody waits on schedules nothing on the event loop (a write
    nobody watches costs the loop no wake-up), yet is remembered: a waiter that read the
    match before it returns at once; a parked waiter is woken by the next publish."""
    from service.watch import Hub

    async def main() -> None:
        loop = asyncio.get_running_loop()
        hub = Hub()
        hub.bind(loop)
        scheduled: list[Any] = []
        real = loop.call_soon_threadsafe

        def counting(cb: Any, *args: Any) -> Any:
            if getattr(cb, "__self__", None) is hub:  # not to_thread's own completions
                scheduled.append(cb)
            return real(cb, *args)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
        try:
            await asyncio.to_thread(hub.publish, "m1", 5)  # from a worker thread, as writes do
            assert scheduled == []
            # read at next_seq 4, the publish of 5 came in between: no waiting
            assert await hub.wait("m1", seen_next_seq=4, timeout=5) is True
            assert await hub.wait("m1", seen_next_seq=5, timeout=0.05) is False
            parked = asyncio.ensure_future(hub.wait("m1", seen_next_seq=5, timeout=5))
            while hub.waiting == 0:
                await asyncio.sleep(0.001)
            await asyncio.to_thread(hub.publish, "m2", 1)  # another match: no wake-up
            assert len(scheduled) == 0 and not parked.done()
            await asyncio.to_thread(hub.publish, "m1", 6)
            assert await asyncio.wait_for(parked, 5) is True
            assert len(scheduled) == 1 and hub.waiting == 0
        finally:
            del loop.call_soon_threadsafe

    asyncio.run(main())


@pytest.mark.skipif("tawla" not in GAMES, reason="needs tawla")
def test_a_start_without_an_event_is_pushed(server: LiveServer) -> None:
    """tawla's start (the last reveal) draws nothing, so no event says the match began: an
    open stream gets a ``status`` message, and a waiting long poll answers at once."""
    from tests.support.http_play import locked_seats

    with httpx.Client(base_url=server.url, timeout=30) as c:
        created = create_match(c, "tawla", short_ruleset("tawla"))
        mid = created["match_id"]
        seats = locked_seats(c, created)
        seats[0].reveal()
        got: dict[str, Any] = {}

        def stream() -> None:
            with (
                httpx.Client(base_url=server.url, timeout=30) as c2,
                c2.stream("GET", f"/v1/matches/{mid}/events/stream", params={"timeout": 20}) as s,
            ):
                for line in s.iter_lines():
                    if line.startswith("event: status"):
                        got["stream"] = time.monotonic()
                        return

        def poll() -> None:
            with httpx.Client(base_url=server.url, timeout=30) as c2:
                page = c2.get(f"/v1/matches/{mid}/events", params={"wait": 20}).json()
                got["poll"] = (time.monotonic(), page["status"], page["events"])

        hub = server.app.state.watch.hub
        base = hub.waiting
        threads = [threading.Thread(target=f) for f in (stream, poll)]
        for th in threads:
            th.start()
        _wait_for(lambda: hub.waiting == base + 2, "the stream and the poll parked")
        started = time.monotonic()
        seats[1].reveal()
        for th in threads:
            th.join(30)
        assert c.get(f"/v1/matches/{mid}/events").json()["next_seq"] == 0  # no event drawn
        assert got["stream"] - started < 5
        at, status, events = got["poll"]
        assert at - started < 5 and status == "playing" and events == []

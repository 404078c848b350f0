"""Push, don't poll: waking the long polls and SSE streams of a match when it has news.

Every committed write that appended events calls :meth:`Hub.publish` (from its worker
thread); waiters are futures on the app's event loop, so an idle stream or long poll holds
no thread and makes no database query. Across processes on PostgreSQL each write also sends
``NOTIFY qahwa_events, '<match_id> <next_seq>'`` inside its transaction (PostgreSQL delivers
it at the commit) and a :class:`PgListener` thread per process turns the notifications into
local publishes. SQLite has no such channel: one process, in-process wake-ups only.

Notifications only while somebody watches. A NOTIFYing commit takes a database-wide lock in
PostgreSQL (to queue notifications in commit order) and wakes every listening process, so
with several hosts every write would be paid for by all of them. Instead a listener that has
waiters (long polls, SSE streams; and for ``LINGER_SECONDS`` after the last) marks its
connection ``application_name = qahwa-watching``, and writers NOTIFY only while
``pg_stat_activity`` shows such a connection on the database (:class:`WatchersFlag`, read
at most every ``FLAG_SECONDS`` per process). Until every writer can have seen the mark
(``FLAG_SECONDS`` + ``MARGIN_SECONDS`` after it is set) the hub does not trust silence: its
waiters look again every ``BLIND_POLL_SECONDS`` (:meth:`Hub.wait`), so no wake-up is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy.engine import make_url
from starlette.concurrency import run_in_threadpool

from .db import Database
from .matches import MatchService
from .store import FINISHED, LRU

log = logging.getLogger("qahwa.service")

CHANNEL = "qahwa_events"
KEEPALIVE_SECONDS = 15.0
#: how often a quiet stream looks for a key announcement to push (the key ring re-reads
#: the keys every ``QAHWA_KEY_POLL_SECONDS``)
ANNOUNCE_SECONDS = 2.0
WATCHING = "qahwa-watching"  # a listener's application_name while it has waiters
LISTENING = "qahwa-listening"  # ... while it has none (writers need not NOTIFY for it)
FLAG_SECONDS = 1.0  # how long a writer trusts its last look at pg_stat_activity
MARGIN_SECONDS = 1.0  # and a transaction's time from that look to its commit
BLIND_POLL_SECONDS = 0.25  # how often a waiter looks while notifications may be missing
LINGER_SECONDS = 30.0  # a listener stays marked this long after its last waiter


class Hub:
    """Per-match wake-ups on one event loop; :meth:`publish` may be called from any thread.

    A publish records the match's newest ``next_seq`` at once (under a lock, from the
    publishing thread) and wakes the event loop only when a waiter of that match is parked:
    a write nobody watches costs the loop nothing. A waiter checks what was recorded and
    parks under the same lock, so no publish falls between the two.
    """

    def __init__(self, remember: int = 65_536) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiters: dict[str, set[asyncio.Future[None]]] = {}
        self._latest: LRU[str, int] = LRU(remember)  # the highest next_seq heard of
        # the newest status heard of: a write that changed the match's status without an
        # event (tawla's start: the last reveal) publishes it
        self._status: LRU[str, str] = LRU(remember)
        self._guard = threading.Lock()
        #: time.monotonic() until which notifications from other processes may be missing
        #: (0: never — one process, or one that listens for every write; see the module)
        self.blind_until = 0.0

    def bind(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self._loop = loop

    @property
    def waiting(self) -> int:
        """How many waiters are parked now (tests)."""
        with self._guard:
            return sum(len(w) for w in self._waiters.values())

    def publish(self, match_id: str, next_seq: int, status: str | None = None) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with self._guard:
            self._latest.put(match_id, max(next_seq, self._latest.get(match_id, -1)))
            if status is not None:
                self._status.put(match_id, status)
            if match_id not in self._waiters:
                return
        with contextlib.suppress(RuntimeError):  # the loop stopped meanwhile
            loop.call_soon_threadsafe(self._wake, match_id)

    def publish_all(self) -> None:
        """Wake every waiter to look again (after a lost notification channel)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._wake, None)

    def _wake(self, match_id: str | None) -> None:
        """Wake the waiters of ``match_id`` (None: every waiter)."""
        with self._guard:
            if match_id is None:
                woken, self._waiters = [*self._waiters.values()], {}
            else:
                woken = [self._waiters.pop(match_id, set())]
        for fut in (f for futs in woken for f in futs):
            if not fut.done():
                fut.set_result(None)

    async def wait(
        self, match_id: str, *, seen_next_seq: int, timeout: float, seen_status: str | None = None
    ) -> bool:
        """Wait until news past ``seen_next_seq`` is published (True) or ``timeout`` (False).

        Call it right after reading the match at ``seen_next_seq``: a publish that came in
        between is remembered and returns at once. With ``seen_status`` (the status read) a
        newer status published since counts too, one that came without an event.
        Until notifications from the other processes can be trusted (:attr:`blind_until`)
        it waits at most ``BLIND_POLL_SECONDS`` and then answers True: look again.
        """
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        blind = time.monotonic() < self.blind_until
        with self._guard:
            if self._latest.get(match_id, -1, touch=False) > seen_next_seq:
                return True
            heard = self._status.get(match_id, touch=False)
            if seen_status is not None and heard is not None and heard != seen_status:
                return True
            if timeout <= 0:
                return False
            self._waiters.setdefault(match_id, set()).add(fut)
        try:
            await asyncio.wait_for(fut, min(timeout, BLIND_POLL_SECONDS) if blind else timeout)
            return True
        except TimeoutError:
            return blind
        finally:
            with self._guard:
                futs = self._waiters.get(match_id)
                if futs is not None:
                    futs.discard(fut)
                    if not futs:
                        del self._waiters[match_id]


class PgListener:
    """A thread holding one ``LISTEN qahwa_events`` connection, reconnecting when it drops."""

    def __init__(self, database_url: str, hub: Hub) -> None:
        url = make_url(database_url).set(drivername="postgresql")
        self.conninfo = url.render_as_string(hide_password=False)
        self.hub = hub
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="qahwa-listen", daemon=True)
        self.ready = threading.Event()
        self.watching = False  # marked qahwa-watching (tests)
        hub.blind_until = float("inf")  # until the mark is set and seen (see the module)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(
                    self.conninfo, autocommit=True, application_name=LISTENING
                ) as conn:
                    self.watching, self.hub.blind_until = False, float("inf")
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.ready.set()
                    # anything sent while we were not listening: every waiter looks again
                    self.hub.publish_all()
                    last_waiter = float("-inf")
                    while not self._stop.is_set():
                        now = time.monotonic()
                        if self.hub.waiting:
                            last_waiter = now
                        want = now - last_waiter < LINGER_SECONDS
                        if want != self.watching:
                            conn.execute(
                                "SELECT set_config('application_name', %s, false)",
                                (WATCHING if want else LISTENING,),
                            )
                            self.watching = want
                            self.hub.blind_until = (
                                time.monotonic() + FLAG_SECONDS + MARGIN_SECONDS
                                if want
                                else float("inf")
                            )
                        for n in conn.notifies(timeout=BLIND_POLL_SECONDS):
                            mid, _, rest = n.payload.partition(" ")
                            seq, _, status = rest.partition(" ")
                            if seq.isdigit():
                                self.hub.publish(mid, int(seq), status or None)
            except Exception as exc:  # the database went away: retry, waiters re-check
                log.warning("LISTEN %s failed (%s); reconnecting", CHANNEL, type(exc).__name__)
                self.ready.clear()
                self.watching, self.hub.blind_until = False, float("inf")
                self._stop.wait(1.0)


class WatchersFlag:
    """Whether any process on the database has waiters (a ``qahwa-watching`` listener), as
    the writers ask before they NOTIFY: looked up at most every ``FLAG_SECONDS``; True when
    the lookup fails (a notification too many costs less than a lost one)."""

    SQL = (
        "SELECT EXISTS (SELECT 1 FROM pg_stat_activity "
        f"WHERE datname = current_database() AND application_name = '{WATCHING}')"
    )

    def __init__(self, db: Database) -> None:
        self.db = db
        self._value = True
        self._at = float("-inf")
        self._lock = threading.Lock()

    def __call__(self) -> bool:
        now = time.monotonic()
        if now - self._at < FLAG_SECONDS:
            return self._value
        with self._lock:
            if time.monotonic() - self._at < FLAG_SECONDS:
                return self._value
            try:
                with self.db.connect(write=False) as c:
                    value = bool(c.exec_driver_sql(self.SQL).scalar())
            except Exception:
                value = True
            self._value, self._at = value, time.monotonic()
            return value


class Watch:
    """Long polls and SSE over :class:`MatchService` reads and :class:`Hub` wake-ups."""

    def __init__(self, svc: MatchService, hub: Hub) -> None:
        self.svc = svc
        self.hub = hub

    def announcements(self, sent: set[str]) -> list[dict[str, Any]]:
        """The key announcements (fairness-v2.md, revision "key announcements") of the keys
        not retired now that this stream has not sent yet (``sent``: their signatures, kept
        up to date): the next key's, as soon as this process's key ring has read it."""
        since = getattr(self.svc.signer, "announced_since", None)  # a KeyRing's
        if since is None:
            return []
        new = [a for a in since() if a["signature"]["value"] not in sent]
        sent.update(a["signature"]["value"] for a in new)
        return new

    async def read(
        self, match_id: str, *, kind: str, after: int, with_chains: bool = False
    ) -> dict[str, Any]:
        return await run_in_threadpool(
            lambda: self.svc.events(match_id, kind=kind, after=after, with_chains=with_chains)
        )

    async def poll(self, match_id: str, *, kind: str, after: int, wait: float) -> dict[str, Any]:
        """Events after ``after``; with none yet, wait up to ``wait`` seconds for some (or
        for a new status: a v2 match that started without an event)."""
        deadline = time.monotonic() + min(wait, self.svc.settings.long_poll_max_seconds)
        status: str | None = None
        while True:
            out = await self.read(match_id, kind=kind, after=after)
            left = deadline - time.monotonic()
            if status is None:
                status = out["status"]
            if out["events"] or out["status"] == FINISHED or out["status"] != status or left <= 0:
                return out
            await self.hub.wait(
                match_id, seen_next_seq=out["next_seq"], timeout=left, seen_status=out["status"]
            )

    async def stream(
        self,
        first: dict[str, Any],
        *,
        kind: str,
        after: int,
        timeout: float,
    ) -> AsyncIterator[str]:
        """Server-sent events from ``first`` (a :meth:`read` ``with_chains`` result) on;
        ``id:`` is seq. v2: each message's data is the event with ``chain``, the chain head
        after it, added beside its fields (it is not part of the event), and after each batch a
        ``head`` message: the signed head the server stands at (§7, heads). When the match's
        status changes without an event (a v2 match starts at its last reveal, and tawla's
        start draws nothing) a ``status`` message (no ``id``) says so: ``{"status",
        "next_seq"}``."""
        match_id = first["match_id"]
        out, last = first, after
        status = first["status"]
        deadline = time.monotonic() + timeout
        announced: set[str] = set()
        while True:
            for a in self.announcements(announced):
                yield f"event: key_announcement\ndata: {json.dumps(a)}\n\n"
            for ev, chain in zip(out["events"], out["chains"], strict=True):
                last = ev["seq"]
                data = ev if chain is None else {**ev, "chain": chain}
                yield f"id: {last}\nevent: {ev['type']}\ndata: {json.dumps(data)}\n\n"
            if out.get("head") is not None:  # v2: what the server shows now, signed (§7)
                yield f"event: head\ndata: {json.dumps(out['head'])}\n\n"
            if out["status"] == FINISHED:
                yield f"event: finished\ndata: {json.dumps({'status': FINISHED})}\n\n"
                return
            if out["status"] != status:
                status = out["status"]
                news_doc = {"status": status, "next_seq": out["next_seq"]}
                yield f"event: status\ndata: {json.dumps(news_doc)}\n\n"
            seen = out["next_seq"]
            quiet_since = time.monotonic()
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                if await self.hub.wait(
                    match_id,
                    seen_next_seq=seen,
                    timeout=min(left, KEEPALIVE_SECONDS, ANNOUNCE_SECONDS),
                    seen_status=status,
                ):
                    break
                news = self.announcements(announced)
                for a in news:
                    yield f"event: key_announcement\ndata: {json.dumps(a)}\n\n"
                now = time.monotonic()
                if news:
                    quiet_since = now
                elif now - quiet_since >= KEEPALIVE_SECONDS and deadline - now > 0:
                    yield ": keep-alive\n\n"
                    quiet_since = now
            out = await self.read(match_id, kind=kind, after=last, with_chains=True)

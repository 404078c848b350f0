"""The service layer without HTTP: catching a cached engine up reads only the new events."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from fairness import PROTOCOL_V2, V2, SecretBox, Signer
from games import ReplayError, engine_class
from games.replay import replay
from service import migrate
from service.db import Database
from service.errors import Conflict
from service.matches import Match, MatchService
from service.settings import Settings
from service.store import catch_up, dumps
from tests.support import commit_all, reveal_all
from tests.support.http_play import GAMES, short_ruleset

pytestmark = pytest.mark.skipif(
    not {"hokm", "tawla"} <= set(GAMES), reason="needs the hokm and tawla engines"
)


def SEED(seat: int) -> str:
    return f"seed-{seat}"


def _services(tmp_path: Path, n: int, url: str | None = None) -> list[MatchService]:
    """``n`` services on one database (a SQLite file unless ``url``), each with its own
    database engine and cache (like n processes)."""
    url = url or f"sqlite:///{tmp_path / 'q.db'}"
    settings = Settings(database_url=url, data_dir=tmp_path)
    signer, box = Signer.generate(), SecretBox(bytes(range(32)))
    out = []
    for _ in range(n):
        db = Database(url)
        migrate.upgrade(db)
        out.append(MatchService(db, settings, signer, box))
    return out


def _play_one(svc: MatchService, mid: str, tokens: list[str], rnd: random.Random) -> bool:
    view = svc.state(mid, token=tokens[0])
    if view["status"] != "playing":
        return False
    seat = view["turn"]
    view = svc.state(mid, token=tokens[seat])
    action = rnd.choice(view["suggested_actions"])
    svc.act(mid, token=tokens[seat], action=action, version=view["version"])
    return True


def _new_match(svc: MatchService, game: str) -> tuple[str, list[str]]:
    """A v2 match, committed and revealed by unkeyed seats (rolls not fresh: no chains)."""
    ruleset = {
        **short_ruleset(game),
        **({"fresh_rolls": False} if game in ("tawla", "mahbusa") else {}),
    }
    created = svc.create_match(game, ruleset=ruleset, names=None)
    tokens = [s["token"] for s in created["seats"]]
    mid = created["match_id"]
    nonces = commit_all(svc, mid, tokens, SEED)
    reveal_all(svc, mid, tokens, nonces, SEED)
    return mid, tokens


def _next_seq(svc: MatchService, mid: str) -> int:
    n: int = svc.events(mid, kind="match", after=-1)["next_seq"]
    return n


def test_catch_up_reads_only_new_events(tmp_path: Path) -> None:
    a, b = _services(tmp_path, 2)
    mid, tokens = _new_match(a, "hokm")
    rnd = random.Random(3)
    # b has nothing cached: one full replay of everything so far
    b.state(mid, token=tokens[0])
    assert b.store.replays == 1 and b.store.events_read == _next_seq(a, mid)
    a_replays = a.store.replays
    for i in range(30):
        mover, other = (a, b) if i % 2 == 0 else (b, a)
        before_read, before_seq = mover.store.events_read, _next_seq(a, mid)
        seen = mover.store.cache.get(mid)
        assert seen is not None
        cached_at = seen.next_seq
        if not _play_one(mover, mid, tokens, rnd):
            break
        # the mover read exactly the events the other service wrote since its last look
        assert mover.store.events_read - before_read == before_seq - cached_at
        entry = mover.store.cache.get(mid)
        assert entry is not None and entry.next_seq == _next_seq(a, mid)
    # nobody replayed again: everything after the first look was catching up, and the new
    # events always came in the same round trip as the match row (no query of their own)
    assert b.store.replays == 1 and a.store.replays == a_replays
    assert a.store.catch_up_queries == 0 and b.store.catch_up_queries == 0
    # and the engines agree with a fresh replay of the log
    doc_events = a.events(mid, kind="match", after=-1)["events"]
    assert len(doc_events) == _next_seq(b, mid)
    va = a.state(mid, token=tokens[1])
    vb = b.state(mid, token=tokens[1])
    ha, hb = va.pop("head"), vb.pop("head")  # each signed at its own answer's time
    assert (ha["seq"], ha["chain"]) == (hb["seq"], hb["chain"])
    assert va == vb


def test_cached_engine_is_not_replayed_per_request(tmp_path: Path) -> None:
    (svc,) = _services(tmp_path, 1)
    mid, tokens = _new_match(svc, "hokm")
    rnd = random.Random(5)
    for _ in range(20):
        if not _play_one(svc, mid, tokens, rnd):
            break
    # the engine started in this process is used for every request: no replay, no reads
    assert svc.store.replays == 0 and svc.store.events_read == 0
    # a stale action is refused and the cached engine survives it
    view = svc.state(mid, token=tokens[0])
    seat = view["turn"]
    with pytest.raises(Conflict) as err:
        svc.act(mid, token=tokens[seat], action={"type": "x"}, version=view["version"] - 1)
    assert err.value.code == "stale_version"
    assert svc.store.cache.get(mid) is not None
    _play_one(svc, mid, tokens, rnd)
    assert svc.store.replays == 0


def test_catch_up_refuses_a_log_that_disagrees(tmp_path: Path) -> None:
    (svc,) = _services(tmp_path, 1)
    mid, tokens = _new_match(svc, "tawla")
    rnd = random.Random(8)
    start_events = svc.events(mid, kind="match", after=-1)["events"]
    n0 = len(start_events)
    for _ in range(12):
        _play_one(svc, mid, tokens, rnd)
    public = svc.public(mid, kind="match")
    ruleset = public["ruleset"]
    with svc.db.connect(write=False) as c, svc.store.read(mid, kind="match") as tx:
        events = svc.store.events_after(c, mid, before=2**31 - 1)
        key = V2.match_key(
            svc.store.server_seed(c, mid),
            mid,
            "tawla",
            ruleset,
            [(str(st.client_seed), str(st.nonce)) for st in tx.seats()],
        )
    cls = engine_class("tawla")

    def rebuilt(evs: list[dict[str, Any]]) -> Any:
        return replay(cls, ruleset, key, evs, protocol=PROTOCOL_V2)

    engine = rebuilt(events[:n0])
    catch_up(engine, events[n0:], n0)  # the true log applies cleanly
    assert engine.view(0) == rebuilt(events).view(0)
    engine = rebuilt(events[:n0])
    # a chance event that differs from what the rules draw is refused
    forged: list[dict[str, Any]] = [dict(e) for e in events[n0:]]
    chance = next(i for i, e in enumerate(forged) if e.get("kind") == "dice")
    forged[chance]["result"] = [d % 6 + 1 for d in forged[chance]["result"]]
    with pytest.raises(ReplayError):
        catch_up(engine, forged, n0)
    # a gap in seq is refused
    engine = rebuilt(events[:n0])
    with pytest.raises(ReplayError):
        catch_up(engine, events[n0 + 1 :], n0)


PG_URL = os.environ.get("QAHWA_TEST_PG_URL")


@pytest.mark.skipif(not PG_URL, reason="QAHWA_TEST_PG_URL is not set")
def test_a_writer_that_waited_for_the_row_lock_catches_up_completely(tmp_path: Path) -> None:
    """PostgreSQL, READ COMMITTED: a ``SELECT … FOR UPDATE`` that waited for another writer
    returns that writer's new row but joins the events of its own older snapshot. Catching
    up must notice the events read with the row stop short and read the rest."""
    assert PG_URL is not None
    a, b = _services(tmp_path, 2, PG_URL)
    try:
        mid, tokens = _new_match(a, "hokm")
        rnd = random.Random(11)
        b.state(mid, token=tokens[0])  # b caches the engine now
        cached = b.store.cache.get(mid)
        assert cached is not None
        for _ in range(3):  # then a moves on without b
            assert _play_one(a, mid, tokens, rnd)
        locked, done = threading.Event(), threading.Event()
        seen: dict[str, Any] = {}

        def slow_writer() -> None:
            view = a.state(mid, token=tokens[0])
            seat = view["turn"]
            action = rnd.choice(a.state(mid, token=tokens[seat])["suggested_actions"])
            with a.store.write(mid, kind="match") as tx:
                Match(a, tx).move(seat, action)
                locked.set()
                # commit only once b's locking read is waiting for this row
                with a.db.write_engine.connect() as c:
                    deadline = time.monotonic() + 30
                    while True:
                        c.rollback()  # pg_stat_activity is one snapshot per transaction
                        if c.execute(
                            text(
                                "SELECT count(*) FROM pg_stat_activity WHERE "
                                "datname = current_database() AND "
                                "wait_event_type = 'Lock'"
                            )
                        ).scalar():
                            break
                        assert time.monotonic() < deadline, "b never waited for the row lock"
                        time.sleep(0.01)
            done.set()

        t = threading.Thread(target=slow_writer)
        t.start()
        assert locked.wait(30)
        with b.store.write(mid, kind="match") as tx:  # waits for the slow writer's commit
            assert done.is_set() or tx.m.next_seq > cached.next_seq
            seen["view"] = tx.engine().view(0)
            seen["next_seq"] = tx.m.next_seq
        t.join(30)
        # the events joined to the row were incomplete, so b read the rest itself ...
        assert b.store.catch_up_queries == 1 and b.store.replays == 1
        # ... and its engine is the one a fresh replay of the whole log gives
        fresh = a.state(mid, token=tokens[0])
        assert seen["next_seq"] == _next_seq(a, mid)
        assert seen["view"] == {
            k: v
            for k, v in fresh.items()
            if k
            not in (
                "version",
                "match_id",
                "protocol",
                "deal",
                "chain",
                "lock",
                "lock_index",
                "deadline",
                "head",
            )
        }
    finally:
        a.db.dispose()
        b.db.dispose()


def test_sqlite_writers_of_one_process_queue_before_begin(tmp_path: Path) -> None:
    """On SQLite a second write transaction of the same process waits in the process (the
    write gate) until the first commits: it sends no ``BEGIN IMMEDIATE`` into SQLite's busy
    handler meanwhile, and both writes land."""
    from sqlalchemy import event

    db = Database(f"sqlite:///{tmp_path / 'gate.db'}")
    try:
        with db.write() as s:
            s.execute(text("CREATE TABLE t (n INTEGER)"))
        begins: list[str] = []

        def before(conn: Any) -> None:  # a transaction starts: just before BEGIN IMMEDIATE
            begins.append(threading.current_thread().name)

        event.listen(db.write_engine, "begin", before)
        holding, done = threading.Event(), threading.Event()

        def second() -> None:
            with db.connect(write=True) as c:
                c.execute(text("INSERT INTO t VALUES (2)"))
            done.set()

        with db.connect(write=True) as c:
            c.execute(text("INSERT INTO t VALUES (1)"))
            t = threading.Thread(target=second, name="second")
            t.start()
            holding.wait(0.3)  # the second writer has had time to reach BEGIN
            assert begins == ["MainThread"], begins
            assert not done.is_set()
        t.join(10)
        assert done.is_set() and begins == ["MainThread", "second"]
        with db.connect(write=False) as c:
            assert c.execute(text("SELECT n FROM t ORDER BY n")).scalars().all() == [1, 2]
    finally:
        db.dispose()


def test_the_service_json_is_json_dumps_without_an_encoder_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 50: the service's JSON (event bodies, answers) writes what ``json.dumps(obj,
    ensure_ascii=False, separators=(",", ":"))`` writes, with one encoder made once (the
    set-up json.dumps does at every call cost most of a small object's encoding)."""
    values: list[Any] = [
        {"seq": 3, "type": "action", "action": {"type": "play", "card": "AS"}, "at": None},
        {"b": [1, 2.5, -0.0, 1e300, True, False, None], "a": {"é": 'ü\u2028\n\t"\\'}},
        [],
        {},
        "just a string",
        7,
        float("nan"),
        {"deep": [[[{"x": [1]}]]], "big": 2**70},
    ]
    made = {"encoders": 0}
    init = json.JSONEncoder.__init__

    def counted(self: json.JSONEncoder, *args: Any, **kw: Any) -> None:
        made["encoders"] += 1
        init(self, *args, **kw)

    expected = [json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in values]
    monkeypatch.setattr(json.JSONEncoder, "__init__", counted)
    got = [dumps(v) for v in values * 10]
    assert got == expected * 10
    assert made["encoders"] == 0
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"a": object()})

"""The match service layer: creation, seating, actions, events, ends and transcripts.

Routes stay thin and call :class:`MatchService`. State lives in the database (the event log
is the truth); the engine of a match is rebuilt from it with ``games.base.replay`` and kept
in an in-process cache keyed by match id and version. Every write runs in one transaction
that first locks the match row (``SELECT … FOR UPDATE`` on PostgreSQL, ``BEGIN IMMEDIATE``
on SQLite) and checks the version, so several processes on one database stay correct.
"""

from __future__ import annotations

import copy
import hashlib
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlmodel import Session, col, select

from fairness import (
    PROTOCOL,
    ClientSeedError,
    SecretBox,
    Signer,
    canonical_ruleset,
    check_client_seed,
    commitment,
    match_key,
    new_client_seed,
    new_server_seed,
)
from games.base import Chance, Engine, replay
from games.errors import (
    ActionError,
    IllegalActionError,
    MatchOverError,
    NotYourTurnError,
    RulesetError,
    UnknownGameError,
)
from games.registry import engine_class
from games.transcript import build_transcript

from . import translog
from .db import Database
from .models import EventRow, Match, Seat, ServerSeed
from .settings import Settings

T = TypeVar("T")

SEATING, PLAYING, FINISHED = "seating", "playing", "finished"
KIND_MATCH, KIND_RNG = "match", "rng"


class ApiError(Exception):
    """An error the API reports as ``{"error": {"code", "message"}}`` with ``status``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class _Idle(Exception):
    """Raised inside a transaction that found its match idle past the timeout."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class EngineCache:
    """Engines by match id, each valid for one version; per-match locks for this process."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._entries: OrderedDict[str, tuple[int, Engine]] = OrderedDict()
        self._guard = threading.Lock()
        self._locks = [threading.Lock() for _ in range(64)]

    def lock_for(self, match_id: str) -> threading.Lock:
        return self._locks[int(hashlib.sha256(match_id.encode()).hexdigest()[:8], 16) % 64]

    def get(self, match_id: str, version: int) -> Engine | None:
        with self._guard:
            entry = self._entries.get(match_id)
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end(match_id)
            return entry[1]

    def put(self, match_id: str, version: int, engine: Engine) -> None:
        with self._guard:
            self._entries[match_id] = (version, engine)
            self._entries.move_to_end(match_id)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def discard(self, match_id: str) -> None:
        with self._guard:
            self._entries.pop(match_id, None)


class MatchService:
    def __init__(self, db: Database, settings: Settings, signer: Signer, box: SecretBox) -> None:
        self.db = db
        self.settings = settings
        self.signer = signer
        self.box = box
        self.cache = EngineCache()

    # -- helpers ---------------------------------------------------------------------------
    def _get(self, s: Session, match_id: str, kind: str, *, lock: bool = False) -> Match:
        q = select(Match).where(Match.id == match_id)
        if lock:
            q = q.with_for_update()
        m = s.exec(q).first()
        if m is None or m.kind != kind:
            what = "match" if kind == KIND_MATCH else "rng session"
            raise ApiError(404, "not_found", f"no {what} with id {match_id!r}")
        return m

    @staticmethod
    def _seats(s: Session, match_id: str) -> list[Seat]:
        return list(
            s.exec(select(Seat).where(Seat.match_id == match_id).order_by(col(Seat.seat))).all()
        )

    @staticmethod
    def _events(s: Session, match_id: str, after: int = -1) -> list[dict[str, Any]]:
        rows = s.exec(
            select(EventRow)
            .where(EventRow.match_id == match_id, col(EventRow.seq) > after)
            .order_by(col(EventRow.seq))
        ).all()
        return [json.loads(r.body) for r in rows]

    def _auth(self, s: Session, m: Match, token: str | None) -> int:
        if not token:
            raise ApiError(401, "unauthorized",
                           "this needs a seat token: send 'Authorization: Bearer <token>'")
        row = s.exec(
            select(Seat).where(Seat.match_id == m.id, Seat.token_hash == hash_token(token))
        ).first()
        if row is None:
            raise ApiError(401, "unauthorized", "the token is not a seat token of this match")
        return row.seat

    def _server_seed(self, s: Session, match_id: str) -> bytes:
        row = s.get(ServerSeed, match_id)
        if row is None:
            raise RuntimeError(f"match {match_id} has no sealed seed")
        return self.box.open(row.sealed, aad=match_id)

    def _key(self, s: Session, m: Match, seats: list[Seat]) -> bytes:
        seeds = [st.client_seed for st in seats]
        if any(x is None for x in seeds):
            raise RuntimeError(f"match {m.id} is missing client seeds")
        return match_key(self._server_seed(s, m.id), m.id, m.game, m.ruleset,
                         [x for x in seeds if x is not None])

    def _engine(self, s: Session, m: Match) -> Engine:
        """The engine at the match's current version (cached, else replayed from the log)."""
        cached = self.cache.get(m.id, m.version)
        if cached is not None:
            return cached
        cls = engine_class(m.game)
        key = self._key(s, m, self._seats(s, m.id))
        engine = replay(cls, m.ruleset, key, self._events(s, m.id))
        self.cache.put(m.id, m.version, engine)
        return engine

    def _append(self, s: Session, m: Match, events: list[dict[str, Any]]) -> None:
        at = now_iso()
        for ev in events:
            body = {"seq": m.next_seq, **ev}
            s.add(EventRow(match_id=m.id, seq=m.next_seq, body=_dumps(body), created_at=at))
            m.next_seq += 1

    def _touch(self, m: Match) -> None:
        m.version += 1
        m.last_activity = time.time()

    def _finish(self, m: Match, engine: Engine) -> None:
        assert engine.outcome is not None
        m.status = FINISHED
        m.ended_at = now_iso()
        m.result = _dumps(engine.outcome.to_json())

    def _start(self, s: Session, m: Match) -> Engine:
        """Fill missing client seeds from the server, derive K, deal: the match plays."""
        seats = self._seats(s, m.id)
        for st in seats:
            if st.client_seed is None:
                st.client_seed = new_client_seed()
                st.seed_source = "server"
                s.add(st)
        cls = engine_class(m.game)
        chance = Chance(self._key(s, m, seats))
        engine = cls(cls.parse_ruleset(json.loads(m.ruleset)), chance)
        self._append(s, m, chance.take_events())
        m.status = PLAYING
        m.started_at = now_iso()
        if engine.outcome is not None:
            self._finish(m, engine)
        return engine

    def _idle_first(self, kind: str, match_id: str, f: Callable[[], T]) -> T:
        """Run ``f``; if it met an idle match, end that match as abandoned and run it again."""
        try:
            return f()
        except _Idle:
            self.expire_if_idle(kind, match_id)
            return f()

    def _check_idle(self, m: Match) -> None:
        if self._is_idle(m):
            raise _Idle()

    def _mutate(self, kind: str, match_id: str, fn: Callable[[Tx], T], *,
                check_idle: bool = True) -> T:
        """Run ``fn(tx)`` in one write transaction on the locked match row.

        The engine ``fn`` used or started goes into the cache only after the commit; any
        exception discards the cached engine (the next access replays the log).
        """
        with self.cache.lock_for(match_id):
            try:
                with self.db.write() as s:
                    tx = Tx(self, s, self._get(s, match_id, kind, lock=True))
                    if check_idle:
                        self._check_idle(tx.m)
                    out = fn(tx)
                    s.add(tx.m)
                    version = tx.m.version
            except BaseException:
                self.cache.discard(match_id)
                raise
            if tx.current is not None:
                self.cache.put(match_id, version, tx.current)
        return out

    # -- abandonment -----------------------------------------------------------------------
    def _is_idle(self, m: Match) -> bool:
        return (m.status in (SEATING, PLAYING)
                and time.time() - m.last_activity > self.settings.idle_timeout_seconds)

    def expire_if_idle(self, kind: str, match_id: str) -> bool:
        """End the match as abandoned if nobody acted for ``idle_timeout_seconds``.

        A match still seating is first started (missing seeds drawn by the server) so its
        transcript replays like any other.
        """
        with self.db.read() as s:
            m = s.get(Match, match_id)
            if m is None or m.kind != kind or not self._is_idle(m):
                return False

        def fn(tx: Tx) -> bool:
            if not self._is_idle(tx.m):
                return False
            engine = tx.start() if tx.m.status == SEATING else tx.engine()
            if engine.outcome is None:
                engine.end_match("abandoned")
                self._append(tx.s, tx.m, [{"type": "end", "reason": "abandoned"}])
                self._finish(tx.m, engine)
            tx.m.version += 1
            return True

        return self._mutate(kind, match_id, fn, check_idle=False)

    def sweep(self) -> int:
        """End every idle match (the periodic sweep); returns how many ended."""
        cutoff = time.time() - self.settings.idle_timeout_seconds
        with self.db.read() as s:
            rows = s.exec(
                select(Match.id, Match.kind).where(
                    col(Match.status).in_([SEATING, PLAYING]), col(Match.last_activity) < cutoff
                )
            ).all()
        return sum(1 for mid, kind in rows if self.expire_if_idle(kind, mid))

    # -- creation --------------------------------------------------------------------------
    def _create(self, kind: str, game: str, ruleset: str, names: list[str],
                client_seed: str | None) -> tuple[dict[str, Any], list[str]]:
        match_id = ("m_" if kind == KIND_MATCH else "r_") + secrets.token_hex(10)
        seed = new_server_seed()
        com = commitment(seed)
        tokens = [secrets.token_urlsafe(32) for _ in names]
        at = now_iso()
        engine: Engine | None = None
        with self.cache.lock_for(match_id):
            with self.db.write() as s:
                idx = translog.next_index(self.db, s)
                record = self.signer.signed({
                    "type": "commitment", "protocol": PROTOCOL, "match_id": match_id,
                    "game": game, "ruleset": ruleset, "commitment": com, "created_at": at,
                    "log_index": idx,
                })
                # The commitment is in the log before any client seed is accepted.
                translog.append(s, idx, match_id, record, at, self.signer)
                m = Match(id=match_id, kind=kind, game=game, ruleset=ruleset, commitment=com,
                          status=SEATING, version=0, n_seats=len(names), next_seq=0,
                          log_index=idx, record=_dumps(record), created_at=at,
                          last_activity=time.time())
                s.add(m)
                s.flush()
                s.add(ServerSeed(match_id=match_id, sealed=self.box.seal(seed, aad=match_id)))
                for i, (name, tok) in enumerate(zip(names, tokens, strict=True)):
                    s.add(Seat(match_id=match_id, seat=i, name=name, token_hash=hash_token(tok),
                               client_seed=client_seed,
                               seed_source="player" if client_seed else None))
                s.flush()
                if client_seed is not None:
                    engine = self._start(s, m)
                    self._touch(m)
                    s.add(m)
                version, status = m.version, m.status
            if engine is not None:
                self.cache.put(match_id, version, engine)
        out = dict(record)
        out.update({"status": status, "version": version, "record": record})
        return out, tokens

    def create_match(self, game: str, ruleset: dict[str, Any] | None,
                     names: list[str] | None) -> dict[str, Any]:
        if game == "rng":
            raise ApiError(422, "unknown_game", "plain randomness sessions use POST /v1/rng")
        try:
            cls = engine_class(game)
        except UnknownGameError as exc:
            raise ApiError(422, "unknown_game", str(exc)) from None
        try:
            parsed = cls.parse_ruleset(ruleset or {})
        except RulesetError as exc:
            raise ApiError(422, "bad_ruleset", str(exc)) from None
        n = cls.seat_count(parsed)
        if names is None:
            names = [f"Seat {i + 1}" for i in range(n)]
        if len(names) != n:
            raise ApiError(422, "bad_seats",
                           f"{game} with this ruleset has {n} seats; {len(names)} given")
        out, tokens = self._create(KIND_MATCH, game, canonical_ruleset(parsed), names, None)
        out["seats"] = [{"seat": i, "name": nm, "token": tok}
                        for i, (nm, tok) in enumerate(zip(names, tokens, strict=True))]
        return out

    # -- seating ---------------------------------------------------------------------------
    def give_seed(self, kind: str, match_id: str, seat: int, token: str | None,
                  client_seed: str) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            mine = tx.auth(token)
            if not 0 <= seat < tx.m.n_seats:
                raise ApiError(404, "not_found", f"no seat {seat} in this match")
            if mine != seat:
                raise ApiError(403, "forbidden",
                               f"this token is seat {mine}'s, not seat {seat}'s")
            if tx.m.status != SEATING:
                raise ApiError(409, "not_seating", "the match has already started")
            try:
                check_client_seed(client_seed)
            except ClientSeedError as exc:
                raise ApiError(422, "bad_client_seed", str(exc)) from None
            seats = self._seats(tx.s, tx.m.id)
            row = seats[seat]
            if row.client_seed is not None:
                raise ApiError(409, "seed_already_given",
                               f"seat {seat} has already given its seed")
            row.client_seed = client_seed
            row.seed_source = "player"
            tx.s.add(row)
            tx.s.flush()
            if all(st.client_seed is not None for st in seats):
                tx.start()
            self._touch(tx.m)
            return {"match_id": tx.m.id, "seat": seat, "status": tx.m.status,
                    "version": tx.m.version}

        return self._idle_first(kind, match_id, lambda: self._mutate(kind, match_id, fn))

    def start(self, kind: str, match_id: str, token: str | None) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            tx.auth(token)
            if tx.m.status != SEATING:
                raise ApiError(409, "not_seating", "the match has already started")
            tx.start()
            self._touch(tx.m)
            return {"match_id": tx.m.id, "status": tx.m.status, "version": tx.m.version}

        return self._idle_first(kind, match_id, lambda: self._mutate(kind, match_id, fn))

    # -- play ------------------------------------------------------------------------------
    def _apply(self, tx: Tx, seat: int, action: dict[str, Any]) -> list[dict[str, Any]]:
        engine = tx.engine()
        accepted = copy.deepcopy(action)
        try:
            engine.apply(seat, action)
        except NotYourTurnError as exc:
            raise ApiError(409, "not_your_turn", str(exc)) from None
        except MatchOverError as exc:
            raise ApiError(409, "match_over", str(exc)) from None
        except IllegalActionError as exc:
            raise ApiError(422, "illegal_action", str(exc)) from None
        except ActionError as exc:
            raise ApiError(422, "malformed_action", str(exc)) from None
        drawn = engine.chance.take_events()
        events = [{"type": "action", "seat": seat, "action": accepted}, *drawn]
        self._append(tx.s, tx.m, events)
        if engine.outcome is not None:
            self._finish(tx.m, engine)
        self._touch(tx.m)
        return drawn

    def _require_playing(self, m: Match) -> None:
        if m.status == SEATING:
            raise ApiError(409, "not_started",
                           "the match has not started: every seat gives a seed, or POST .../start")
        if m.status == FINISHED:
            raise ApiError(409, "match_over", "the match has ended")

    def act(self, match_id: str, token: str | None, action: dict[str, Any],
            version: int) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            seat = tx.auth(token)
            self._require_playing(tx.m)
            if version != tx.m.version:
                raise ApiError(409, "stale_version",
                               f"version {version} is stale: the match is at version "
                               f"{tx.m.version}; fetch /state and retry")
            first_seq = tx.m.next_seq
            self._apply(tx, seat, action)
            return {"match_id": tx.m.id, "seat": seat, "version": tx.m.version,
                    "status": tx.m.status, "first_seq": first_seq}

        out = self._idle_first(KIND_MATCH, match_id,
                               lambda: self._mutate(KIND_MATCH, match_id, fn))
        out["state"] = self.state(match_id, token)
        return out

    def resign(self, match_id: str, token: str | None) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            seat = tx.auth(token)
            if tx.m.status == FINISHED:
                raise ApiError(409, "match_over", "the match has ended")
            engine = tx.start() if tx.m.status == SEATING else tx.engine()
            engine.end_match("resigned", seat)
            self._append(tx.s, tx.m, [{"type": "end", "reason": "resigned", "seat": seat}])
            self._finish(tx.m, engine)
            self._touch(tx.m)
            assert engine.outcome is not None
            return {"match_id": tx.m.id, "status": tx.m.status, "version": tx.m.version,
                    "result": engine.outcome.to_json()}

        return self._idle_first(KIND_MATCH, match_id,
                                lambda: self._mutate(KIND_MATCH, match_id, fn))

    # -- reads -----------------------------------------------------------------------------
    def _seats_public(self, m: Match, seats: list[Seat]) -> list[dict[str, Any]]:
        out = []
        for st in seats:
            d: dict[str, Any] = {"seat": st.seat, "name": st.name,
                                 "has_seed": st.client_seed is not None}
            if m.status != SEATING:
                d["client_seed"] = st.client_seed
                d["seed_source"] = st.seed_source
            out.append(d)
        return out

    def public(self, kind: str, match_id: str) -> dict[str, Any]:
        """The public record and view of a match (no hidden cards or tiles)."""
        return self._idle_first(kind, match_id, lambda: self._public(kind, match_id))

    def state(self, match_id: str, token: str | None, kind: str = KIND_MATCH) -> dict[str, Any]:
        """The token's seat's view, with ``version``."""
        return self._idle_first(kind, match_id, lambda: self._state(match_id, token, kind))

    def events(self, kind: str, match_id: str, after: int) -> dict[str, Any]:
        """Events with seq > after: redacted while the match runs, whole after the end."""
        return self._idle_first(kind, match_id,
                                lambda: self._events_after(kind, match_id, after))

    def transcript(self, kind: str, match_id: str) -> dict[str, Any]:
        """The signed transcript of an ended match (409 before)."""
        return self._idle_first(kind, match_id, lambda: self._transcript(kind, match_id))

    def _public(self, kind: str, match_id: str) -> dict[str, Any]:
        with self.db.read() as s:
            m = self._get(s, match_id, kind)
            self._check_idle(m)
            seats = self._seats(s, m.id)
            out: dict[str, Any] = {
                "match_id": m.id, "game": m.game, "ruleset": m.ruleset,
                "commitment": m.commitment, "status": m.status, "version": m.version,
                "seats": self._seats_public(m, seats), "created_at": m.created_at,
                "started_at": m.started_at, "ended_at": m.ended_at, "log_index": m.log_index,
                "record": json.loads(m.record),
                "result": json.loads(m.result) if m.result else None,
            }
            with self.cache.lock_for(m.id):
                engine = None if m.status == SEATING else self._engine(s, m)
                out["public_state"] = engine.view(None) if engine is not None else None
        return out

    def _state(self, match_id: str, token: str | None, kind: str = KIND_MATCH) -> dict[str, Any]:
        with self.db.read() as s:
            m = self._get(s, match_id, kind)
            self._check_idle(m)
            seat = Tx(self, s, m).auth(token)
            if m.status == SEATING:
                seats = self._seats(s, m.id)
                view: dict[str, Any] = {
                    "game": m.game, "status": SEATING, "turn": None, "seat": seat,
                    "legal_actions": [], "seats": self._seats_public(m, seats),
                }
            else:
                with self.cache.lock_for(m.id):
                    view = self._engine(s, m).view(seat)
            view["version"] = m.version
            view["match_id"] = m.id
        return view

    def _events_after(self, kind: str, match_id: str, after: int) -> dict[str, Any]:
        with self.db.read() as s:
            m = self._get(s, match_id, kind)
            self._check_idle(m)
            evs = self._events(s, m.id, after)
        if m.status != FINISHED:
            cls = engine_class(m.game)
            evs = [cls.redact(e) for e in evs]
        return {"match_id": m.id, "status": m.status, "version": m.version,
                "next_seq": m.next_seq, "events": evs}

    def _transcript(self, kind: str, match_id: str) -> dict[str, Any]:
        with self.db.read() as s:
            m = self._get(s, match_id, kind)
            self._check_idle(m)
            if m.status != FINISHED:
                raise ApiError(409, "not_finished",
                               "the transcript (and the server seed) is published when the "
                               "match has ended")
            seats = self._seats(s, m.id)
            doc = build_transcript(
                match_id=m.id, game=m.game, ruleset=m.ruleset,
                server_seed=self._server_seed(s, m.id),
                seats=[{"seat": st.seat, "name": st.name, "client_seed": st.client_seed,
                        "seed_source": st.seed_source} for st in seats],
                events=self._events(s, m.id),
                result=json.loads(m.result) if m.result else None,
                extra={"created_at": m.created_at, "ended_at": m.ended_at,
                       "log_index": m.log_index},
            )
        return self.signer.signed(doc)

    # -- plain rng sessions ----------------------------------------------------------------
    def create_rng(self, client_seed: str | None) -> dict[str, Any]:
        if client_seed is not None:
            try:
                check_client_seed(client_seed)
            except ClientSeedError as exc:
                raise ApiError(422, "bad_client_seed", str(exc)) from None
        out, tokens = self._create(KIND_RNG, "rng", "{}", ["session"], client_seed)
        out["session_id"] = out["match_id"]
        out["token"] = tokens[0]
        return out

    def rng_draw(self, session_id: str, token: str | None,
                 action: dict[str, Any]) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            tx.auth(token)
            if tx.m.status == SEATING:
                tx.start()
            if tx.m.status == FINISHED:
                raise ApiError(409, "match_over", "the session is closed")
            drawn = self._apply(tx, 0, action)
            out: dict[str, Any] = {"session_id": tx.m.id, "version": tx.m.version,
                                   "status": tx.m.status}
            if drawn:
                ev = drawn[0]
                out.update({"seq": tx.m.next_seq - 1, "label": ev["label"], "kind": ev["kind"],
                            "args": ev.get("args"), "result": ev["result"]})
            return out

        return self._idle_first(KIND_RNG, session_id,
                                lambda: self._mutate(KIND_RNG, session_id, fn))

    def rng_close(self, session_id: str, token: str | None) -> dict[str, Any]:
        out = self.rng_draw(session_id, token, {"type": "close"})
        transcript = self.transcript(KIND_RNG, session_id)
        return {"session_id": session_id, "status": out["status"],
                "server_seed": transcript["server_seed"], "transcript": transcript}

    # -- the public log (service/translog.py) ---------------------------------------------
    def tree_head(self, tree_size: int | None = None) -> dict[str, Any]:
        return translog.api(translog.signed_head, self.db, self.signer, tree_size)

    def log_proof(self, index: int, tree_size: int | None) -> dict[str, Any]:
        return translog.api(translog.inclusion, self.db, self.signer, index, tree_size)

    def log_consistency(self, first: int, second: int) -> dict[str, Any]:
        return translog.api(translog.consistency, self.db, self.signer, first, second)

    def log_entries(self, start: int, limit: int) -> dict[str, Any]:
        return translog.entries(self.db, start, limit)


class Tx:
    """One write (or read) transaction on one match: its session, row and engine."""

    def __init__(self, svc: MatchService, s: Session, m: Match) -> None:
        self.svc = svc
        self.s = s
        self.m = m
        self.current: Engine | None = None

    def auth(self, token: str | None) -> int:
        return self.svc._auth(self.s, self.m, token)

    def engine(self) -> Engine:
        if self.current is None:
            self.current = self.svc._engine(self.s, self.m)
        return self.current

    def start(self) -> Engine:
        self.current = self.svc._start(self.s, self.m)
        return self.current

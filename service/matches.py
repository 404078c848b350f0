"""The match service: creation, seating, actions, ends, views, events and transcripts.

It knows no HTTP: it raises :mod:`service.errors` and the routes stay thin. State lives in
the database (the event log is the truth); :mod:`service.store` owns the transactions and
the engine cache. Every method takes the match id first and the rest by keyword.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import select
from sqlmodel import Session

from fairness import (
    PROTOCOL,
    SecretBox,
    Signer,
    canonical_ruleset,
    check_client_seed,
    commitment,
    new_server_seed,
)
from games import engine_class
from games.transcript import build_transcript

from . import translog
from .db import Database
from .errors import Conflict, Forbidden, Invalid, NotFound, user_errors
from .models import Match, Seat, ServerSeed
from .settings import Settings
from .store import (
    FINISHED,
    KIND_MATCH,
    KIND_RNG,
    PLAYING,
    SEATING,
    MatchRow,
    Store,
    Tx,
    dumps,
    hash_token,
    now_iso,
)

T = TypeVar("T")

__all__ = ["FINISHED", "KIND_MATCH", "KIND_RNG", "PLAYING", "SEATING", "MatchService"]


class _Idle(Exception):
    """Raised inside a transaction that found its match idle past the timeout."""


class MatchService:
    def __init__(self, db: Database, settings: Settings, signer: Signer, box: SecretBox) -> None:
        self.db = db
        self.settings = settings
        self.signer = signer
        self.store = Store(db, box)

    # -- idle matches ----------------------------------------------------------------------
    def _is_idle(self, m: Match | MatchRow) -> bool:
        return (m.status in (SEATING, PLAYING)
                and time.time() - m.last_activity > self.settings.idle_timeout_seconds)

    def _check_idle(self, m: MatchRow) -> None:
        if self._is_idle(m):
            raise _Idle()

    def _idle_first(self, match_id: str, *, kind: str, f: Callable[[], T]) -> T:
        """Run ``f``; if it met an idle match, end that match as abandoned and run it again."""
        try:
            return f()
        except _Idle:
            self.expire_if_idle(match_id, kind=kind)
            return f()

    def write(self, match_id: str, *, kind: str, fn: Callable[[Tx], T]) -> T:
        def run() -> T:
            with self.store.write(match_id, kind=kind) as tx:
                self._check_idle(tx.m)
                return fn(tx)
        return self._idle_first(match_id, kind=kind, f=run)

    def _read(self, match_id: str, *, kind: str, fn: Callable[[Tx], T]) -> T:
        def run() -> T:
            with self.store.read(match_id, kind=kind) as tx:
                self._check_idle(tx.m)
                return fn(tx)
        return self._idle_first(match_id, kind=kind, f=run)

    def expire_if_idle(self, match_id: str, *, kind: str) -> bool:
        """End the match as abandoned if nobody acted for ``idle_timeout_seconds``.

        A match still seating is first started (missing seeds drawn by the server) so its
        transcript replays like any other.
        """
        with self.db.read() as s:
            m = s.get(Match, match_id)
            if m is None or m.kind != kind or not self._is_idle(m):
                return False
        with self.store.write(match_id, kind=kind) as tx:
            if not self._is_idle(tx.m):
                return False
            engine = tx.start() if tx.m.status == SEATING else tx.changing()
            if engine.outcome is None:
                engine.end_match("abandoned")
                tx.append([{"type": "end", "reason": "abandoned"}])
                tx.finish()
            tx.m.version += 1
            return True

    def sweep(self) -> int:
        """End every idle match (the periodic sweep); returns how many ended."""
        cutoff = time.time() - self.settings.idle_timeout_seconds
        with self.db.read() as s:
            rows = s.execute(
                select(Match.id, Match.kind).where(  # type: ignore[call-overload]
                    Match.status.in_([SEATING, PLAYING]),  # type: ignore[attr-defined]
                    Match.last_activity < cutoff,
                )
            ).all()
        return sum(1 for mid, kind in rows if self.expire_if_idle(mid, kind=kind))

    # -- creation --------------------------------------------------------------------------
    def create(self, *, kind: str, game: str, ruleset: str, names: list[str],
               client_seed: str | None) -> tuple[dict[str, Any], list[str]]:
        """Create a match (or rng session) and log its signed commitment."""
        match_id = ("m_" if kind == KIND_MATCH else "r_") + secrets.token_hex(10)
        seed = new_server_seed()
        com = commitment(seed)
        tokens = [secrets.token_urlsafe(32) for _ in names]
        at = now_iso()
        record: dict[str, Any] = {}

        def make(s: Session) -> MatchRow:
            idx = translog.next_index(self.db, s)
            record.update(self.signer.signed({
                "type": "commitment", "protocol": PROTOCOL, "match_id": match_id,
                "game": game, "ruleset": ruleset, "commitment": com, "created_at": at,
                "log_index": idx,
            }))
            # The commitment is in the log before any client seed is accepted.
            translog.append(s, idx, match_id, record, at, self.signer)
            return MatchRow(id=match_id, kind=kind, game=game, ruleset=ruleset, commitment=com,
                            status=SEATING, version=0, n_seats=len(names), next_seq=0,
                            log_index=idx, record=dumps(record), result=None, created_at=at,
                            started_at=None, ended_at=None, last_activity=time.time())

        with self.store.create(match_id, make) as tx:
            s, m = tx.s, tx.m
            s.add(ServerSeed(match_id=match_id, sealed=self.store.box.seal(seed, aad=match_id)))
            for i, (name, tok) in enumerate(zip(names, tokens, strict=True)):
                s.add(Seat(match_id=match_id, seat=i, name=name, token_hash=hash_token(tok),
                           client_seed=client_seed,
                           seed_source="player" if client_seed else None))
            s.flush()
            if client_seed is not None:
                tx.start()
                tx.touch()
            version, status = m.version, m.status
        out = dict(record)
        out.update({"status": status, "version": version, "record": record})
        return out, tokens

    def create_match(self, game: str, *, ruleset: dict[str, Any] | None,
                     names: list[str] | None) -> dict[str, Any]:
        if game == "rng":
            raise Invalid("plain randomness sessions use POST /v1/rng", "unknown_game")
        with user_errors():
            cls = engine_class(game)
            parsed = cls.parse_ruleset(ruleset or {}, protocol=PROTOCOL)
        n = cls.seat_count(parsed)
        if names is None:
            names = [f"Seat {i}" for i in range(n)]
        if len(names) != n:
            raise Invalid(f"{game} with this ruleset has {n} seats; {len(names)} given",
                          "bad_seats")
        out, tokens = self.create(kind=KIND_MATCH, game=game, ruleset=canonical_ruleset(parsed),
                                  names=names, client_seed=None)
        out["seats"] = [{"seat": i, "name": nm, "token": tok}
                        for i, (nm, tok) in enumerate(zip(names, tokens, strict=True))]
        return out

    # -- seating ---------------------------------------------------------------------------
    def give_seed(self, match_id: str, *, kind: str, seat: int, token: str | None,
                  client_seed: str) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            mine = tx.auth(token)
            if not 0 <= seat < tx.m.n_seats:
                raise NotFound(f"no seat {seat} in this match")
            if mine != seat:
                raise Forbidden(f"this token is seat {mine}'s, not seat {seat}'s")
            if tx.m.status != SEATING:
                raise Conflict("the match has already started", "not_seating")
            with user_errors():
                check_client_seed(client_seed)
            seats = tx.seats()
            row = seats[seat]
            if row.client_seed is not None:
                raise Conflict(f"seat {seat} has already given its seed", "seed_already_given")
            row.client_seed = client_seed
            row.seed_source = "player"
            tx.s.add(row)
            tx.s.flush()
            if all(st.client_seed is not None for st in seats):
                tx.start()
            tx.touch()
            return {"match_id": tx.m.id, "seat": seat, "status": tx.m.status,
                    "version": tx.m.version}

        return self.write(match_id, kind=kind, fn=fn)

    def start(self, match_id: str, *, kind: str, token: str | None) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            tx.auth(token)
            if tx.m.status != SEATING:
                raise Conflict("the match has already started", "not_seating")
            tx.start()
            tx.touch()
            return {"match_id": tx.m.id, "status": tx.m.status, "version": tx.m.version}

        return self.write(match_id, kind=kind, fn=fn)

    # -- play ------------------------------------------------------------------------------
    def apply(self, tx: Tx, *, seat: int, action: dict[str, Any]) -> list[dict[str, Any]]:
        """Apply one action in ``tx`` and log it with the chance events it drew."""
        engine = tx.engine()
        accepted = dumps(action)  # the action exactly as accepted, before the engine runs
        try:
            with user_errors():
                produced = engine.apply(seat, action)
        except Conflict:  # not your turn / match over: checked before any change
            raise
        except BaseException:
            tx.dirty = True  # an engine error should leave it unchanged; do not rely on it
            raise
        tx.dirty = True
        drawn = produced[1:]  # the action event, then the chance events it drew
        tx.append([f'{{"type":"action","seat":{seat},"action":{accepted}}}',
                   *(dumps(ev) for ev in drawn)], raw=True)
        if engine.outcome is not None:
            tx.finish()
        tx.touch()
        return drawn

    @staticmethod
    def _require_playing(m: MatchRow) -> None:
        if m.status == SEATING:
            raise Conflict("the match has not started: every seat gives a seed, "
                           "or POST .../start", "not_started")
        if m.status == FINISHED:
            raise Conflict("the match has ended", "match_over")

    def act(self, match_id: str, *, token: str | None, action: dict[str, Any],
            version: int) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            seat = tx.auth(token)
            self._require_playing(tx.m)
            if version != tx.m.version:
                raise Conflict(f"version {version} is stale: the match is at version "
                               f"{tx.m.version}; fetch /state and retry", "stale_version")
            first_seq = tx.m.next_seq
            engine = tx.engine()
            self.apply(tx, seat=seat, action=action)
            # the new view, from the engine as committed (sent only after the commit)
            view = engine.view(seat)
            view["version"] = tx.m.version
            view["match_id"] = tx.m.id
            return {"match_id": tx.m.id, "seat": seat, "version": tx.m.version,
                    "status": tx.m.status, "first_seq": first_seq, "state": view}

        return self.write(match_id, kind=KIND_MATCH, fn=fn)

    def resign(self, match_id: str, *, token: str | None) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            seat = tx.auth(token)
            if tx.m.status == FINISHED:
                raise Conflict("the match has ended", "match_over")
            engine = tx.start() if tx.m.status == SEATING else tx.changing()
            engine.end_match("resigned", seat)
            tx.append([{"type": "end", "reason": "resigned", "seat": seat}])
            tx.finish()
            tx.touch()
            assert engine.outcome is not None
            return {"match_id": tx.m.id, "status": tx.m.status, "version": tx.m.version,
                    "result": engine.outcome.to_json()}

        return self.write(match_id, kind=KIND_MATCH, fn=fn)

    # -- reads -----------------------------------------------------------------------------
    @staticmethod
    def _seats_public(m: MatchRow, seats: list[Seat]) -> list[dict[str, Any]]:
        out = []
        for st in seats:
            d: dict[str, Any] = {"seat": st.seat, "name": st.name,
                                 "has_seed": st.client_seed is not None}
            if m.status != SEATING:
                d["client_seed"] = st.client_seed
                d["seed_source"] = st.seed_source
            out.append(d)
        return out

    def public(self, match_id: str, *, kind: str) -> dict[str, Any]:
        """The public record and view of a match (no hidden cards or tiles)."""

        def fn(tx: Tx) -> dict[str, Any]:
            m = tx.m
            return {
                "match_id": m.id, "game": m.game, "ruleset": m.ruleset,
                "commitment": m.commitment, "status": m.status, "version": m.version,
                "seats": self._seats_public(m, tx.seats()), "created_at": m.created_at,
                "started_at": m.started_at, "ended_at": m.ended_at, "log_index": m.log_index,
                "record": json.loads(m.record),
                "result": json.loads(m.result) if m.result else None,
                "public_state": None if m.status == SEATING else tx.engine().view(None),
            }

        return self._read(match_id, kind=kind, fn=fn)

    def state(self, match_id: str, *, kind: str = KIND_MATCH,
              token: str | None) -> dict[str, Any]:
        """The token's seat's view, with ``version``."""

        def fn(tx: Tx) -> dict[str, Any]:
            m = tx.m
            seat = tx.auth(token)
            if m.status == SEATING:
                view: dict[str, Any] = {
                    "game": m.game, "status": SEATING, "turn": None, "seat": seat,
                    "legal_actions": [], "seats": self._seats_public(m, tx.seats()),
                }
            else:
                view = tx.engine().view(seat)
            view["version"] = m.version
            view["match_id"] = m.id
            return view

        return self._read(match_id, kind=kind, fn=fn)

    def events(self, match_id: str, *, kind: str, after: int) -> dict[str, Any]:
        """Events with seq > after: redacted while the match runs, whole after the end."""

        def fn(tx: Tx) -> dict[str, Any]:
            m = tx.m
            evs = (self.store.events_after(tx.c, m.id, after, before=m.next_seq)
                   if after < m.next_seq - 1 else [])
            if m.status != FINISHED:
                cls = engine_class(m.game)
                evs = [cls.redact(e) for e in evs]
            return {"match_id": m.id, "status": m.status, "version": m.version,
                    "next_seq": m.next_seq, "events": evs}

        return self._read(match_id, kind=kind, fn=fn)

    def transcript(self, match_id: str, *, kind: str) -> dict[str, Any]:
        """The signed transcript of an ended match (409 before)."""

        def fn(tx: Tx) -> dict[str, Any]:
            m = tx.m
            if m.status != FINISHED:
                raise Conflict("the transcript (and the server seed) is published when the "
                               "match has ended", "not_finished")
            return build_transcript(
                match_id=m.id, game=m.game, ruleset=m.ruleset,
                server_seed=self.store.server_seed(tx.c, m.id),
                seats=[{"seat": st.seat, "name": st.name, "client_seed": st.client_seed,
                        "seed_source": st.seed_source} for st in tx.seats()],
                events=self.store.events_after(tx.c, m.id, before=m.next_seq),
                result=json.loads(m.result) if m.result else None,
                extra={"created_at": m.created_at, "ended_at": m.ended_at,
                       "log_index": m.log_index},
            )

        return self.signer.signed(self._read(match_id, kind=kind, fn=fn))

"""The match service: creation, commits, the lock, reveals, actions, ends, views, events and
transcripts.

It knows no HTTP: it raises :mod:`service.errors` and the routes stay thin. State lives in
the database (the event log is the truth); :mod:`service.store` owns the transactions and
the engine cache. Every method takes the match id first and the rest by keyword.

New matches and sessions are qahwa-fair/2 (fairness-v2.md): commit → lock (signed, logged)
→ reveal → play, every event chained, receipts for every accepted seat request, seat
signatures for keyed seats, and the ends of §7 (``no_reveal``, ``timeout``, ``resigned``,
``expired``). Matches made before (qahwa-fair/1 rows) keep their v1 flow: ``/seed``,
``/start``, the idle timeout that ends them ``abandoned``.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import and_, bindparam, insert, or_, select, update
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session

from fairness import (
    CURRENT,
    ClientSeedError,
    KeyFileError,
    SecretBox,
    SeedError,
    SignatureError,
    canonical_ruleset,
    chain_start,
    check_canonical_value,
    check_client_seed,
    format_time_ms,
    load_public_key,
    parse_hex,
    parse_nonce,
    parse_time_us,
    protocol_for,
    seat_sig_message,
    seed_commitment,
)
from fairness.records import LOCK_SEAT_FIELDS, Commit, Lock, Receipt, Reveal, lock_seats
from games import engine_class
from games.ends import no_reveal_result
from games.transcript import build_locked_transcript, build_transcript

from . import translog
from .clock import SYSTEM_CLOCK, Clock
from .db import Database
from .errors import Conflict, Forbidden, Invalid, NotFound, user_errors
from .keys import RecordSigner
from .kinds import EndReason, EventType, SeedSource, Status
from .models import Heartbeat, Match, Seat, ServerSeed
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
    iso_of,
)

T = TypeVar("T")

__all__ = ["FINISHED", "KIND_MATCH", "KIND_RNG", "NOT_LOCKED", "PLAYING", "SEATING", "MatchService"]

#: The result of a v2 match that never locked: nothing was committed to, nothing is revealed
#: and nothing is logged (fairness-v2.md §3).
NOT_LOCKED: dict[str, Any] = {
    "status": Status.FINISHED,
    "reason": EndReason.NOT_LOCKED,
    "forfeited": [],
    "winners": [],
}
REVEAL_SECONDS, MAX_SECONDS, TURN_SECONDS = 120, 86_400, 300  # v2 ruleset defaults (§3, §7)
_MATCHES = Match.__table__  # type: ignore[attr-defined]
_SEATS = Seat.__table__  # type: ignore[attr-defined]
_SEEDS = ServerSeed.__table__  # type: ignore[attr-defined]
_INSERT_SEATS = insert(_SEATS)
_INSERT_SEED = insert(_SEEDS)
_SET_COMMIT = (
    update(_SEATS)
    .where(_SEATS.c.match_id == bindparam("_mid"), _SEATS.c.seat == bindparam("_seat"))
    .values(seed_commitment=bindparam("_com"), key=bindparam("_key"), roll_chain=bindparam("_tip"))
)
_SET_REVEAL = (
    update(_SEATS)
    .where(_SEATS.c.match_id == bindparam("_mid"), _SEATS.c.seat == bindparam("_seat"))
    .values(
        client_seed=bindparam("_seed"),
        nonce=bindparam("_nonce"),
        revealed=True,
        seed_source=SeedSource.PLAYER,
    )
)


class _Due(Exception):
    """Raised inside a transaction that found its match past a deadline."""


def _parse_key(key: str | None) -> str | None:
    """A seat key: standard base64 (with padding) of a 32-byte Ed25519 public key."""
    if key is None:
        return None
    try:
        raw = base64.b64decode(key.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise Invalid(
            "key must be standard base64 of a 32-byte Ed25519 public key", "bad_key"
        ) from None
    if len(raw) != 32 or base64.b64encode(raw).decode("ascii") != key:
        raise Invalid(
            "key must be standard base64 (with padding) of a 32-byte Ed25519 public key", "bad_key"
        )
    try:
        load_public_key(key)
    except Exception:
        raise Invalid("key is not an Ed25519 public key", "bad_key") from None
    return key


class StoredLock(dict[str, Any]):
    """A parsed lock record that keeps the JSON text it was stored as (``dumps`` of the
    signed record): a response carries that text as it is (:func:`view_json`) instead of
    serializing the record again on every view."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        super().__init__(json.loads(text))
        self.text = text


def view_json(obj: dict[str, Any]) -> str:
    """``dumps(obj)`` with each :class:`StoredLock` (at the top or in a nested ``state``
    view) written as its stored text: the same JSON value; the spliced keys come last."""
    spliced = {
        k: v
        for k, v in obj.items()
        if isinstance(v, StoredLock) or (k == "state" and isinstance(v, dict))
    }
    if not spliced:
        return dumps(obj)
    rest = dumps({k: v for k, v in obj.items() if k not in spliced})
    parts = [
        f"{dumps(k)}:{v.text if isinstance(v, StoredLock) else view_json(v)}"
        for k, v in spliced.items()
    ]
    return rest[:-1] + ("," if rest != "{}" else "") + ",".join(parts) + "}"


class _Locked:
    """What a match's lock fixes, derived once per process: the parsed record, chain[-1],
    the seats' parsed public keys and the receipt for chain[-1] (Ed25519 signatures are
    deterministic: the same receipt is signed again byte for byte, so it is kept)."""

    __slots__ = ("keys", "record", "start", "start_receipt")

    def __init__(self, text: str) -> None:
        self.record = StoredLock(text)
        self.start = chain_start(self.record)
        self.keys: dict[int, Ed25519PublicKey] = {}
        self.start_receipt: dict[str, Any] | None = None

    def public_key(self, seat: int, key_b64: str) -> Ed25519PublicKey:
        pub = self.keys.get(seat)
        if pub is None:
            try:
                pub = load_public_key(key_b64)
            except KeyFileError as exc:
                raise SignatureError(str(exc)) from None
            self.keys[seat] = pub
        return pub


def _verify_seat_sig(pub: Ed25519PublicKey, sig: str, message: bytes) -> None:
    """:func:`fairness.verify_bytes` with the key already parsed (same checks, same
    errors)."""
    if not isinstance(sig, str):
        raise SignatureError("signature must be a base64 string")
    try:
        raw = base64.b64decode(sig, validate=True)
    except ValueError:
        raise SignatureError("signature is not base64") from None
    try:
        pub.verify(raw, message)
    except InvalidSignature:
        raise SignatureError("signature does not match") from None


def _loaded(row: Seat, **values: Any) -> None:
    """Set columns just written with a plain UPDATE on the loaded seat row, as loaded (the
    session has nothing to flush for them)."""
    for k, v in values.items():
        set_committed_value(row, k, v)


def _hex32(value: str | None, what: str, code: str) -> str:
    try:
        return parse_hex(value, 32, what).hex()
    except SeedError as exc:
        raise Invalid(str(exc), code) from None


class MatchService:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        signer: RecordSigner,
        box: SecretBox,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.db = db
        self.settings = settings
        self.signer = signer
        self.store = Store(db, box, clock=clock)
        #: when this process last swept (its heartbeat); None before its first sweep
        self.last_beat: float | None = None
        #: per match, what its lock fixes (:class:`_Locked`), most recently used last
        self._locks: OrderedDict[str, _Locked] = OrderedDict()
        self._locks_guard = threading.Lock()

    @property
    def outage_seconds(self) -> float:
        """A gap between heartbeats longer than this means nothing was serving (§7)."""
        return 3 * self.settings.sweep_interval_seconds

    # -- deadlines -------------------------------------------------------------------------
    def _due(self, m: Match | MatchRow) -> EndReason | None:
        """Why the match must end now (§3/§7), or None. (No qahwa-fair/1 match is running:
        migration 0008 ended them all, and the service never writes v1 again.)"""
        if m.status not in (SEATING, PLAYING) or not protocol_for(m.protocol).signed:
            return None
        now = self.store.clock.now()
        idle = now - m.last_activity > self.settings.idle_timeout_seconds
        if m.status == SEATING:
            if m.lock is None:
                return EndReason.NOT_LOCKED if idle else None
            assert m.reveal_by is not None
            return EndReason.NO_REVEAL if now > m.reveal_by else None
        if m.end_by is not None and now >= m.end_by:
            return EndReason.EXPIRED
        if m.deadline is not None and now > m.deadline and self._serving(now):
            return EndReason.TIMEOUT
        return None

    def _serving(self, now: float) -> bool:
        """A turn deadline ends a match lazily only while this process's heartbeat is fresh;
        after an outage the sweep first extends the deadlines that passed meanwhile."""
        return self.last_beat is not None and now - self.last_beat <= self.outage_seconds

    def _check_due(self, m: MatchRow) -> None:
        if self._due(m) is not None:
            raise _Due()

    def _due_first(self, match_id: str, *, kind: str, f: Callable[[], T]) -> T:
        """Run ``f``; if it met a match past a deadline, end that match and run it again."""
        try:
            return f()
        except _Due:
            self.end_if_due(match_id, kind=kind)
            return f()

    def write(self, match_id: str, *, kind: str, fn: Callable[[Tx], T]) -> T:
        def run() -> T:
            with self.store.write(match_id, kind=kind) as tx:
                self._check_due(tx.m)
                return fn(tx)

        return self._due_first(match_id, kind=kind, f=run)

    def _read(self, match_id: str, *, kind: str, fn: Callable[[Tx], T]) -> T:
        def run() -> T:
            with self.store.read(match_id, kind=kind) as tx:
                self._check_due(tx.m)
                return fn(tx)

        return self._due_first(match_id, kind=kind, f=run)

    def end_if_due(self, match_id: str, *, kind: str) -> bool:
        """End the match if a deadline passed (v1: idle ``abandoned``; v2: §3 and §7)."""
        with self.db.read() as s:
            m = s.get(Match, match_id)
            if m is None or m.kind != kind or self._due(m) is None:
                return False
        with self.store.write(match_id, kind=kind) as tx:
            reason = self._due(tx.m)
            if reason is None:
                return False
            self._end_due(tx, reason)
            tx.m.version += 1
            return True

    def _end_due(self, tx: Tx, reason: EndReason) -> None:
        m = tx.m
        if reason == EndReason.NOT_LOCKED:
            tx.finish(NOT_LOCKED)
        elif reason == EndReason.NO_REVEAL:
            seats = tx.seats()
            missing = [st.seat for st in seats if not st.revealed]
            cls = engine_class(m.game)
            with user_errors():
                parsed = cls.parse_ruleset(json.loads(m.ruleset), protocol=m.proto)
            result = no_reveal_result(cls, parsed, missing)
            tx.append([{"type": EventType.END, "reason": EndReason.NO_REVEAL, "seats": missing}])
            self._finish(tx, result)
        elif reason == EndReason.EXPIRED:
            engine = tx.changing()
            tx.append(_as_list(engine.end_match(EndReason.EXPIRED, [])))
            self._finish(tx)
        elif reason == EndReason.TIMEOUT:
            engine = tx.changing()
            seat = m.owes if m.owes is not None else engine.turn
            assert seat is not None
            # its `at` is never before the deadline (fairness-v2.md §7: verifiers check it)
            tx.append(_as_list(engine.end_match(EndReason.TIMEOUT, [seat])), not_before=m.deadline)
            self._finish(tx)
        else:  # pragma: no cover - _due returns only the reasons above
            raise AssertionError(reason)

    def resume(self, now: float | None = None) -> int:
        """The heartbeat: if nothing served since the last one for longer than
        :attr:`outage_seconds`, every turn deadline that passed meanwhile is extended to
        ``now + turn_seconds`` (fairness-v2.md §7). Returns how many were extended."""
        now = self.store.clock.now() if now is None else now
        extended = 0
        with self.db.write() as s:
            self.db.lock_table(s, "service_heartbeat")
            beat = s.get(Heartbeat, 1)
            if beat is not None and now - beat.at > self.outage_seconds:
                rows = s.execute(
                    select(_MATCHES.c.id, _MATCHES.c.ruleset).where(
                        _MATCHES.c.status == PLAYING,
                        _MATCHES.c.deadline > beat.at,
                        _MATCHES.c.deadline <= now,
                    )
                ).all()
                for mid, ruleset in rows:
                    turn = int(json.loads(ruleset).get("turn_seconds", TURN_SECONDS))
                    s.execute(
                        update(_MATCHES).where(_MATCHES.c.id == mid).values(deadline=now + turn)
                    )
                    self.store.cache.discard(mid)
                    extended += 1
            if beat is None:
                s.add(Heartbeat(id=1, at=now))
            else:
                beat.at = max(beat.at, now)
                s.add(beat)
        self.last_beat = now
        return extended

    def sweep(self) -> int:
        """The periodic sweep: the heartbeat, then end every match past a deadline; returns
        how many ended."""
        now = self.store.clock.now()
        self.resume(now)
        cutoff = now - self.settings.idle_timeout_seconds
        # every running match is qahwa-fair/2 or later (migration 0008 ended the v1 ones)
        with self.db.read() as s:
            rows = s.execute(
                select(_MATCHES.c.id, _MATCHES.c.kind).where(
                    _MATCHES.c.status.in_([SEATING, PLAYING]),
                    or_(
                        and_(_MATCHES.c.lock.is_(None), _MATCHES.c.last_activity < cutoff),
                        and_(_MATCHES.c.status == SEATING, _MATCHES.c.reveal_by < now),
                        _MATCHES.c.end_by <= now,
                        _MATCHES.c.deadline < now,
                    ),
                )
            ).all()
        return sum(1 for mid, kind in rows if self.end_if_due(mid, kind=kind))

    # -- creation --------------------------------------------------------------------------
    def create(
        self, *, kind: str, game: str, ruleset: str, seats: list[tuple[str, bool]]
    ) -> tuple[dict[str, Any], list[str]]:
        """Create a match (or rng session) of the current protocol and sign its commit record
        (not logged: the lock is, fairness-v2.md §1)."""
        match_id = ("m_" if kind == KIND_MATCH else "r_") + secrets.token_hex(10)
        seed = CURRENT.new_server_seed()
        com = CURRENT.commitment(seed)
        tokens = [secrets.token_urlsafe(32) for _ in seats]
        at = self.store.now_iso()
        record = Commit(match_id, game, ruleset, com, tuple(seats), at).sign(self.signer)

        def make(s: Session) -> MatchRow:
            return MatchRow(
                id=match_id,
                kind=kind,
                game=game,
                ruleset=ruleset,
                commitment=com,
                status=SEATING,
                version=0,
                n_seats=len(seats),
                next_seq=0,
                log_index=-1,
                record=dumps(record),
                result=None,
                created_at=at,
                started_at=None,
                ended_at=None,
                last_activity=self.store.clock.now(),
                protocol=CURRENT.name,
                lock=None,
                lock_index=None,
                reveal_by=None,
                end_by=None,
                chain=None,
                deadline=None,
                owes=None,
                transcript_sig=None,
            )

        with self.store.create(match_id, make) as tx:
            m = tx.m
            # plain inserts (the ORM's unit of work cost more than the statements)
            tx.c.execute(
                _INSERT_SEED,
                {"match_id": match_id, "sealed": self.store.box.seal(seed, aad=match_id)},
            )
            tx.c.execute(
                _INSERT_SEATS,
                [
                    {
                        "match_id": match_id,
                        "seat": i,
                        "name": name,
                        "token_hash": hash_token(tok),
                        "house": house,
                    }
                    for i, ((name, house), tok) in enumerate(zip(seats, tokens, strict=True))
                ],
            )
            version, status = m.version, m.status
        out = {
            "match_id": match_id,
            "protocol": CURRENT.name,
            "game": game,
            "ruleset": ruleset,
            "commitment": com,
            "created_at": at,
            "status": status,
            "version": version,
            "record": record,
        }
        return out, tokens

    def create_match(
        self,
        game: str,
        *,
        ruleset: dict[str, Any] | None,
        names: list[str] | None,
        house: list[bool] | None = None,
    ) -> dict[str, Any]:
        if game == "rng":
            raise Invalid("plain randomness sessions use POST /v1/rng", "unknown_game")
        with user_errors():
            cls = engine_class(game)
            parsed = cls.parse_ruleset(ruleset or {}, protocol=CURRENT)
        n = cls.seat_count(parsed)
        if names is None:
            names = [f"Seat {i}" for i in range(n)]
        if len(names) != n:
            raise Invalid(
                f"{game} with this ruleset has {n} seats; {len(names)} given", "bad_seats"
            )
        houses = house if house is not None else [False] * n
        out, tokens = self.create(
            kind=KIND_MATCH,
            game=game,
            ruleset=canonical_ruleset(parsed),
            seats=list(zip(names, houses, strict=True)),
        )
        out["seats"] = [
            {"seat": i, "name": nm, "house": h, "token": tok}
            for i, (nm, h, tok) in enumerate(zip(names, houses, tokens, strict=True))
        ]
        return out

    # -- seating: v2 commit, lock and reveal -------------------------------------------------
    @staticmethod
    def _own_seat(tx: Tx, token: str | None, seat: int) -> int:
        mine = tx.auth(token)
        if not 0 <= seat < tx.m.n_seats:
            raise NotFound(f"no seat {seat} in this match")
        if mine != seat:
            raise Forbidden(f"this token is seat {mine}'s, not seat {seat}'s")
        return seat

    @staticmethod
    def _v2_only(m: MatchRow, what: str) -> None:
        if not m.proto.signed:
            raise NotFound(
                f"{what} is qahwa-fair/2's; this is a qahwa-fair/1 match (give seeds with .../seed)"
            )

    @staticmethod
    def read_only_v1(m: MatchRow, what: str) -> NoReturn:
        """qahwa-fair/1's seating (``/seed``, ``/start``): 404 for a v2 match, whose seats
        commit and reveal; 409 for a v1 match, which is read-only (migration 0008 ended every
        v1 match that was still running; the service never writes v1 again)."""
        if m.proto.signed:
            raise NotFound(
                f"{what} does not exist for qahwa-fair/2 matches: seats commit, "
                "then reveal after the lock (docs/api.md)"
            )
        raise Conflict(
            f"{what}: qahwa-fair/1 matches are read-only; this one has ended", "not_seating"
        )

    def commit(
        self,
        match_id: str,
        *,
        seat: int,
        token: str | None,
        seed_commitment: str,
        key: str | None,
        roll_chain: str | None,
    ) -> dict[str, Any]:
        """A seat's commitment (fairness-v2.md §2); the last one locks the match (§3)."""

        def fn(tx: Tx) -> dict[str, Any]:
            self._own_seat(tx, token, seat)
            m = tx.m
            self._v2_only(m, "commit")
            if m.status == FINISHED:
                raise Conflict("the match has ended", "match_over")
            if m.status != SEATING:
                raise Conflict("every seat has committed: the match is locked", "not_seating")
            com = _hex32(seed_commitment, "seed_commitment", "bad_commitment")
            pub = _parse_key(key)
            fresh = bool(json.loads(m.ruleset).get("fresh_rolls", False))
            if fresh:
                if roll_chain is None:
                    raise Invalid(
                        "this match has fresh rolls: commit the tip of your roll "
                        "chain as roll_chain (64 hex)",
                        "bad_roll_chain",
                    )
                tip: str | None = _hex32(roll_chain, "roll_chain", "bad_roll_chain")
            else:
                if roll_chain is not None:
                    raise Invalid(
                        "this match has no fresh rolls: roll_chain must be null", "bad_roll_chain"
                    )
                tip = None
            if m.lock is not None and not self._same_commit(m, seat, com, pub, tip):
                raise Conflict("every seat has committed: the match is locked", "not_seating")
            seats = tx.seats()
            row = seats[seat]
            if row.seed_commitment is not None:
                if (row.seed_commitment, row.key, row.roll_chain) == (com, pub, tip):
                    # the identical request again (a client's resend): the same answer
                    view = self._seat_view(tx, seat, seats)
                    view["receipt"] = self._receipt(m, -1) if m.lock is not None else None
                    return view
                raise Conflict(f"seat {seat} has already committed", "already_committed")
            if any(st.seed_commitment == com for st in seats):
                raise Conflict("this seed_commitment is another seat's", "duplicate_commitment")
            tx.c.execute(
                _SET_COMMIT, {"_mid": m.id, "_seat": seat, "_com": com, "_key": pub, "_tip": tip}
            )
            _loaded(row, seed_commitment=com, key=pub, roll_chain=tip)
            if all(st.seed_commitment is not None for st in seats):
                self._lock(tx, seats)
            tx.touch()
            view = self._seat_view(tx, seat, seats)
            view["receipt"] = self._receipt(tx.m, -1) if tx.m.lock is not None else None
            return view

        return self.write(match_id, kind=KIND_MATCH, fn=fn)

    def _same_commit(
        self, m: MatchRow, seat: int, com: str, key: str | None, tip: str | None
    ) -> bool:
        mine = self._lock_of(m)["seats"][seat]
        return (mine["seed_commitment"], mine["key"], mine["roll_chain"]) == (com, key, tip)

    def _lock(self, tx: Tx, seats: list[Seat]) -> None:
        """Sign the lock record and append it to the log in this transaction (§3)."""
        m = tx.m
        now = self.store.clock.now()
        parsed = json.loads(m.ruleset)
        if m.kind == KIND_RNG:
            reveal_by, end_by = now, now + self.settings.idle_timeout_seconds
        else:
            reveal_by = now + int(parsed.get("reveal_seconds", REVEAL_SECONDS))
            end_by = now + int(parsed.get("max_seconds", MAX_SECONDS))
        lock = Lock(
            m.id,
            m.game,
            m.ruleset,
            m.commitment,
            lock_seats([{k: getattr(st, k) for k in LOCK_SEAT_FIELDS} for st in seats]),
            locked_at=iso_of(now),
            reveal_by=iso_of(reveal_by),
            end_by=iso_of(end_by),
        ).sign(self.signer)
        idx = translog.next_index(self.db, tx.s)
        translog.append(tx.s, idx, m.id, lock, iso_of(now), self.signer)
        tx.logged = True
        m.lock, m.lock_index = dumps(lock), idx
        m.reveal_by, m.end_by = reveal_by, end_by
        m.chain = chain_start(lock).hex()

    def lock(self, match_id: str, *, kind: str = KIND_MATCH) -> dict[str, Any]:
        """The signed lock and its log index, with a receipt for chain[-1] (409 before)."""

        def fn(tx: Tx) -> dict[str, Any]:
            m = tx.m
            self._v2_only(m, "the lock")
            if m.lock is None:
                raise Conflict(
                    "not every seat has committed yet: the match is not locked", "not_locked"
                )
            return {
                "match_id": m.id,
                "lock": json.loads(m.lock),
                "log_index": m.lock_index,
                "receipt": self._receipt(m, -1),
            }

        return self._read(match_id, kind=kind, fn=fn)

    def reveal(
        self,
        match_id: str,
        *,
        kind: str = KIND_MATCH,
        seat: int,
        token: str | None,
        client_seed: str,
        nonce: str,
    ) -> dict[str, Any]:
        """A seat's seed and nonce, checked against its commitment; the last reveal starts
        the match (fairness-v2.md §3)."""

        def fn(tx: Tx) -> dict[str, Any]:
            self._own_seat(tx, token, seat)
            m = tx.m
            self._v2_only(m, "reveal")
            if m.status == FINISHED:
                raise Conflict("the match has ended", "match_over")
            if m.lock is None:
                raise Conflict(
                    "no reveal before the lock: not every seat has committed", "not_locked"
                )
            seats = tx.seats()
            row = seats[seat]
            try:
                check_client_seed(client_seed)
                com = seed_commitment(m.id, seat, parse_nonce(nonce), client_seed)
            except (ClientSeedError, SeedError) as exc:
                raise Invalid(f"bad reveal: {exc}", "bad_reveal") from None
            if com != row.seed_commitment:
                raise Invalid(
                    f"client_seed and nonce do not match seat {seat}'s seed_commitment in the lock",
                    "bad_reveal",
                )
            if row.revealed:  # the identical request again (a client's resend): same answer
                view = self._seat_view(tx, seat, seats)
                view["receipt"] = self._receipt(m, -1)
                return view
            tx.c.execute(
                _SET_REVEAL, {"_mid": m.id, "_seat": seat, "_seed": client_seed, "_nonce": nonce}
            )
            _loaded(
                row,
                client_seed=client_seed,
                nonce=nonce,
                revealed=True,
                seed_source=SeedSource.PLAYER,
            )
            if all(st.revealed for st in seats):
                engine = tx.start(seats)
                if engine.outcome is not None:
                    self._finish(tx)
                else:
                    # the first step after the reveals is owed from the lock's locked_at (§7)
                    self._arm(tx, since_us=parse_time_us(self._lock_of(m)["locked_at"]))
            tx.touch()
            view = self._seat_view(tx, seat, seats)
            view["receipt"] = self._receipt(tx.m, -1)
            return view

        return self.write(match_id, kind=kind, fn=fn)

    # -- seating: v1 (read-only) ---------------------------------------------------------------
    def v1_seating(
        self, match_id: str, *, kind: str, token: str | None, seat: int | None = None
    ) -> NoReturn:
        """``POST .../seed`` (``seat``) and ``POST .../start``: qahwa-fair/1's seating, which
        no match can be in any more (:meth:`read_only_v1`)."""

        def fn(tx: Tx) -> NoReturn:
            if seat is None:
                tx.auth(token)
            else:
                self._own_seat(tx, token, seat)
            self.read_only_v1(tx.m, "POST .../seed" if seat is not None else "POST .../start")

        self._read(match_id, kind=kind, fn=fn)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- play ------------------------------------------------------------------------------
    def _locked(self, m: MatchRow) -> _Locked:
        """What the match's lock fixes, parsed once (a lock is immutable once committed;
        the stored text is compared, so a lock of a transaction that rolled back is never
        served from here)."""
        assert m.lock is not None
        with self._locks_guard:
            found = self._locks.get(m.id)
            if found is not None and found.record.text == m.lock:
                self._locks.move_to_end(m.id)
                return found
        found = _Locked(m.lock)
        with self._locks_guard:
            self._locks[m.id] = found
            while len(self._locks) > 4096:
                self._locks.popitem(last=False)
        return found

    def _lock_of(self, m: MatchRow) -> dict[str, Any]:
        """The match's parsed lock record (a :class:`StoredLock`)."""
        return self._locked(m).record

    def _seat_sig(
        self, m: MatchRow, seat: int, event: dict[str, Any], sig: str | None, prev: str | None
    ) -> str | None:
        """Check a seat's request against the chain head and its key (fairness-v2.md §7):
        409 ``stale_chain`` when ``prev`` is not the head, 422 ``bad_signature`` when a keyed
        seat's signature is missing or wrong (or an unkeyed seat sends one)."""
        if not m.proto.signed:
            if sig is not None or prev is not None:
                raise Invalid("a qahwa-fair/1 match takes no sig or prev", "bad_signature")
            return None
        if prev is not None and prev != m.chain:
            raise Conflict(
                f"prev is not the chain head {m.chain}: fetch /state and retry", "stale_chain"
            )
        locked = self._locked(m)
        key = locked.record["seats"][seat]["key"]
        if key is None:
            if sig is not None:
                raise Invalid(f"seat {seat} registered no key: send no sig", "bad_signature")
            return None
        if sig is None:
            raise Invalid(
                f"seat {seat} is keyed: sign the event over prev = the chain head", "bad_signature"
            )
        assert m.chain is not None
        try:
            _verify_seat_sig(
                locked.public_key(seat, key), sig, seat_sig_message(m.id, m.chain, event)
            )
        except SignatureError as exc:
            raise Invalid(
                f"seat {seat}'s signature does not verify over the chain head "
                f"{m.chain} with its key from the lock: {exc}",
                "bad_signature",
            ) from None
        return sig

    def apply(
        self, tx: Tx, *, seat: int, action: dict[str, Any], sig: str | None = None
    ) -> list[dict[str, Any]]:
        """Apply one action in ``tx`` and log it with the chance events it drew; returns the
        chance events (with their ``seq``)."""
        engine = tx.engine()
        try:
            with user_errors():
                produced = engine.apply(seat, action)
        except Conflict:  # not your turn / match over: checked before any change
            raise
        except BaseException:
            tx.dirty = True  # an engine error should leave it unchanged; do not rely on it
            raise
        tx.dirty = True
        produced = _as_list(produced)
        if sig is not None:
            produced[0] = {**produced[0], "sig": sig}
        logged = tx.append(produced)
        if engine.outcome is not None:
            self._finish(tx)
        else:
            self._arm(tx)
        tx.touch()
        return [ev for ev in logged if ev.get("type") == EventType.CHANCE]

    def _arm(self, tx: Tx, since_us: int | None = None) -> None:
        """v2 match: the seat that owes the next step owes it from the ``at`` of the event
        that put it on turn (``since_us``: the lock's ``locked_at`` for the first step after
        the reveals), and its deadline is that time plus ``turn_seconds`` (fairness-v2.md
        §7, times): the rule every verifier checks a timeout against."""
        m = tx.m
        if not m.proto.signed or m.kind != KIND_MATCH:
            return
        engine = tx.current
        assert engine is not None
        turn = engine.turn
        if engine.outcome is not None or turn is None:
            m.deadline, m.owes = None, None
            return
        if since_us is None:
            since_us = tx.head_at_us
        since = self.store.clock.now() if since_us is None else since_us / 1_000_000
        m.owes = turn
        m.deadline = since + int(engine.ruleset.get("turn_seconds", TURN_SECONDS))

    def _finish(self, tx: Tx, result: dict[str, Any] | None = None) -> None:
        """The match ended: store the result; v2: log the reveal record (§8)."""
        tx.finish(result)
        if tx.m.proto.signed:
            self._log_reveal(tx)

    def _log_reveal(self, tx: Tx) -> None:
        m = tx.m
        signed = self.signer.signed(self._transcript_doc(tx))
        m.transcript_sig = dumps(signed["signature"])
        result = json.loads(m.result) if m.result else {}
        record = Reveal.of_transcript(
            signed, lock_index=m.lock_index, chain=m.chain, result=result, ended_at=m.ended_at
        ).sign(self.signer)
        idx = translog.next_index(self.db, tx.s)
        translog.append(tx.s, idx, m.id, record, self.store.now_iso(), self.signer)
        tx.logged = True

    def _receipt(
        self, m: MatchRow, seq: int | None = None, *, tx: Tx | None = None
    ) -> dict[str, Any]:
        """The signed receipt for the head after a request, with the head's time ``at``
        (fairness-v2.md §7). seq -1: chain[-1], whose time is the lock's ``locked_at``, the
        same for every commit and reveal of a match (signed once per process); else the
        last event ``tx`` appended."""
        if seq == -1:
            locked = self._locked(m)
            found = locked.start_receipt
            if found is None or found["signature"]["key_id"] != self.signer.key_id:
                found = locked.start_receipt = Receipt(
                    m.id, -1, locked.start.hex(), locked.record["locked_at"]
                ).sign(self.signer)
            return {**found, "signature": dict(found["signature"])}
        assert tx is not None and tx.head_at_us is not None, "a receipt follows an append"
        assert m.chain is not None
        return Receipt(m.id, m.next_seq - 1, m.chain, format_time_ms(tx.head_at_us)).sign(
            self.signer
        )

    @staticmethod
    def _require_playing(m: MatchRow) -> None:
        if m.status == SEATING:
            raise Conflict(
                "the match has not started: every seat commits, then reveals after the lock",
                "not_started",
            )
        if m.status == FINISHED:
            raise Conflict("the match has ended", "match_over")

    def act(
        self,
        match_id: str,
        *,
        token: str | None,
        action: dict[str, Any],
        version: int,
        sig: str | None = None,
        prev: str | None = None,
    ) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            seat = tx.auth(token)
            m = tx.m
            self._require_playing(m)
            if version != m.version:
                raise Conflict(
                    f"version {version} is stale: the match is at version "
                    f"{m.version}; fetch /state and retry",
                    "stale_version",
                )
            if m.proto.signed:
                try:
                    check_canonical_value(action)
                except ValueError as exc:
                    raise Invalid(f"action: {exc}", "malformed_action") from None
            sig_ok = self._seat_sig(
                m, seat, {"type": EventType.ACTION, "seat": seat, "action": action}, sig, prev
            )
            first_seq = m.next_seq
            self.apply(tx, seat=seat, action=action, sig=sig_ok)
            # the new view, from the engine as committed (sent only after the commit)
            out = {
                "match_id": m.id,
                "seat": seat,
                "version": m.version,
                "status": m.status,
                "first_seq": first_seq,
                "state": self._seat_view(tx, seat),
            }
            if m.proto.signed:
                out["chain"] = m.chain
                out["receipt"] = self._receipt(m, tx=tx)
            return out

        return self.write(match_id, kind=KIND_MATCH, fn=fn)

    def resign(
        self, match_id: str, *, token: str | None, sig: str | None = None, prev: str | None = None
    ) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            seat = tx.auth(token)
            m = tx.m
            if m.status == FINISHED:
                raise Conflict("the match has ended", "match_over")
            if m.proto.signed and m.status == SEATING:
                if m.lock is not None:
                    raise Conflict(
                        "the match is locked: a seat that does not reveal by "
                        "reveal_by forfeits (there is no resignation before the "
                        "start)",
                        "not_started",
                    )
                # nobody committed to anything yet: the match closes, nothing is logged
                tx.finish(NOT_LOCKED)
                tx.touch()
                return {
                    "match_id": m.id,
                    "status": m.status,
                    "version": m.version,
                    "result": NOT_LOCKED,
                }
            end = {"type": EventType.END, "reason": EndReason.RESIGNED, "seat": seat}
            sig_ok = self._seat_sig(m, seat, end, sig, prev)
            engine = tx.changing()
            produced = _as_list(engine.end_match(EndReason.RESIGNED, [seat]))
            if sig_ok is not None:
                produced[0] = {**produced[0], "sig": sig_ok}
            tx.append(produced)
            self._finish(tx)
            tx.touch()
            assert engine.outcome is not None
            out = {
                "match_id": m.id,
                "status": m.status,
                "version": m.version,
                "result": engine.outcome.to_json(),
            }
            if m.proto.signed:
                out["chain"] = m.chain
                out["receipt"] = self._receipt(m, tx=tx)
            return out

        return self.write(match_id, kind=KIND_MATCH, fn=fn)

    # -- reads -----------------------------------------------------------------------------
    @staticmethod
    def _seats_public(m: MatchRow, seats: list[Seat]) -> list[dict[str, Any]]:
        out = []
        for st in seats:
            if m.proto.signed:
                d: dict[str, Any] = {
                    "seat": st.seat,
                    "name": st.name,
                    "house": st.house,
                    "committed": st.seed_commitment is not None,
                    "revealed": st.revealed,
                    "has_seed": st.revealed,
                }
                if m.started_at is not None:
                    d["client_seed"] = st.client_seed
            else:
                d = {"seat": st.seat, "name": st.name, "has_seed": st.client_seed is not None}
                if m.status != SEATING:
                    d["client_seed"] = st.client_seed
                    d["seed_source"] = st.seed_source
            out.append(d)
        return out

    def _v2_fields(self, m: MatchRow) -> dict[str, Any]:
        return {
            "protocol": m.protocol,
            "chain": m.chain,
            "lock": self._lock_of(m) if m.lock is not None else None,
            "lock_index": m.lock_index,
        }

    def public(self, match_id: str, *, kind: str) -> dict[str, Any]:
        """The public record and view of a match (no hidden cards or tiles), with the chain
        head for spectators."""

        def fn(tx: Tx) -> dict[str, Any]:
            m = tx.m
            out = {
                "match_id": m.id,
                "protocol": m.protocol,
                "game": m.game,
                "ruleset": m.ruleset,
                "commitment": m.commitment,
                "status": m.status,
                "version": m.version,
                "seats": self._seats_public(m, tx.seats()),
                "created_at": m.created_at,
                "started_at": m.started_at,
                "ended_at": m.ended_at,
                "log_index": m.lock_index if m.proto.signed else m.log_index,
                "record": json.loads(m.record),
                "result": json.loads(m.result) if m.result else None,
                "public_state": None if m.started_at is None else tx.engine().view(None),
            }
            if m.proto.signed:
                out.update(self._v2_fields(m))
            return out

        return self._read(match_id, kind=kind, fn=fn)

    def _seat_view(self, tx: Tx, seat: int, seats: list[Seat] | None = None) -> dict[str, Any]:
        """The seat's view; ``seats``: the match's seat rows if the caller has them."""
        m = tx.m
        if m.started_at is None:
            view: dict[str, Any] = {
                "game": m.game,
                "status": m.status,
                "turn": None,
                "seat": seat,
                "legal_actions": [],
                "seats": self._seats_public(m, seats if seats is not None else tx.seats()),
            }
            if m.result is not None:
                view["result"] = json.loads(m.result)
        else:
            view = tx.engine().view(seat)
        view["version"] = m.version
        view["match_id"] = m.id
        if m.proto.signed:
            view.update(self._v2_fields(m))
            view["deadline"] = self._deadline(m)
        return view

    @staticmethod
    def _deadline(m: MatchRow) -> dict[str, Any] | None:
        """The seat on turn, the seq its step would take and when it is due (the §7
        deadline, later only when extended after an outage); None when nobody owes a step."""
        if m.deadline is None or m.owes is None or m.status != PLAYING:
            return None
        return {"seat": m.owes, "seq": m.next_seq, "due": iso_of(m.deadline)}

    def state(self, match_id: str, *, kind: str = KIND_MATCH, token: str | None) -> dict[str, Any]:
        """The token's seat's view, with ``version`` (v2: and ``chain``, ``lock``)."""

        def fn(tx: Tx) -> dict[str, Any]:
            return self._seat_view(tx, tx.auth(token))

        return self._read(match_id, kind=kind, fn=fn)

    def events(
        self, match_id: str, *, kind: str, after: int, with_chains: bool = False
    ) -> dict[str, Any]:
        """Events with seq > after: redacted while the match runs, whole after the end;
        v2: ``chain`` is the head (and with ``with_chains`` the head after each event)."""

        def fn(tx: Tx) -> dict[str, Any]:
            m = tx.m
            evs: list[dict[str, Any]] = []
            chains: list[str | None] = []
            if after < m.next_seq - 1:
                evs, chains = self.store.events_and_chains(tx.c, m.id, after, before=m.next_seq)
            if m.status != FINISHED:
                cls = engine_class(m.game)
                evs = [cls.redact(e) for e in evs]
            out: dict[str, Any] = {
                "match_id": m.id,
                "game": m.game,
                "status": m.status,
                "version": m.version,
                "next_seq": m.next_seq,
                "events": evs,
            }
            if m.proto.signed:
                out["chain"] = m.chain
            if with_chains:
                out["chains"] = chains
            return out

        return self._read(match_id, kind=kind, fn=fn)

    def _transcript_doc(self, tx: Tx) -> dict[str, Any]:
        """The unsigned v2 transcript (fairness-v2.md §9)."""
        m = tx.m
        assert m.lock is not None and m.lock_index is not None and m.chain is not None
        return build_locked_transcript(
            match_id=m.id,
            game=m.game,
            ruleset=m.ruleset,
            server_seed=self.store.server_seed(tx.c, m.id),
            lock=self._lock_of(m),
            lock_index=m.lock_index,
            seats=[
                {
                    "seat": st.seat,
                    "name": st.name,
                    "house": st.house,
                    "client_seed": st.client_seed if st.revealed else None,
                    "nonce": st.nonce if st.revealed else None,
                    "key": st.key,
                    "roll_chain": st.roll_chain,
                }
                for st in tx.seats()
            ],
            events=self.store.events_after(tx.c, m.id, before=m.next_seq),
            chain=m.chain,
            result=json.loads(m.result) if m.result else None,
            created_at=m.created_at,
            ended_at=m.ended_at,
        )

    def transcript(self, match_id: str, *, kind: str) -> dict[str, Any]:
        """The signed transcript of an ended match (409 before)."""

        def fn(tx: Tx) -> dict[str, Any]:
            m = tx.m
            if m.status != FINISHED:
                raise Conflict(
                    "the transcript (and the server seed) is published when the match has ended",
                    "not_finished",
                )
            if m.proto.signed:
                if m.lock is None:
                    raise Conflict(
                        "the match never locked: nothing was committed to, so nothing is revealed",
                        "not_locked",
                    )
                doc = self._transcript_doc(tx)
                assert m.transcript_sig is not None
                doc["signature"] = json.loads(m.transcript_sig)
                return doc
            return self.signer.signed(
                build_transcript(
                    match_id=m.id,
                    game=m.game,
                    ruleset=m.ruleset,
                    server_seed=self.store.server_seed(tx.c, m.id),
                    seats=[
                        {
                            "seat": st.seat,
                            "name": st.name,
                            "client_seed": st.client_seed,
                            "seed_source": st.seed_source,
                        }
                        for st in tx.seats()
                    ],
                    events=self.store.events_after(tx.c, m.id, before=m.next_seq),
                    result=json.loads(m.result) if m.result else None,
                    extra={
                        "created_at": m.created_at,
                        "ended_at": m.ended_at,
                        "log_index": m.log_index,
                    },
                )
            )

        return self._read(match_id, kind=kind, fn=fn)


def _as_list(events: Any) -> list[dict[str, Any]]:
    return [dict(e) for e in (events or [])]

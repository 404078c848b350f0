"""A match as one typed object, and a move read top to bottom.

:class:`Match` is one match in one transaction: its row, its variant (the engine class
:func:`games.registry.find_engine` gives for its game, ruleset and protocol, decided once
when it opens), its engine and its log. Its writes ``act``, ``commit``, ``reveal``,
``resign`` and ``timeout`` check the request against the match, change it and return
``(events, receipt)``: the events logged (with ``seq``) and the signed receipt for the head
after them (fairness-v2.md §7; for chain[-1] while seating, None before the lock).
:class:`Parts` is what the phases share; it opens a match with its deadlines settled.

A move: :meth:`Play.act` (the seat from its token) → :meth:`Parts.writing` (a match past
a deadline is ended first, in a transaction of its own) → :meth:`Match.act` (status,
version, the action's form, the seat's signature over the chain head) → :meth:`Match.move`
(the engine applies it, the events are logged, the match ends or the next step is owed, the
receipt is signed) → :meth:`Match.view`. Below it, :mod:`service.store`. qahwa-fair/1 rows
are read-only: served, never written.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fairness import (
    ClientSeedError,
    SecretBox,
    SeedError,
    chain_start,
    check_canonical_value,
    check_client_seed,
    format_time_ms,
    load_public_key,
    parse_hex,
    parse_nonce,
    parse_time_us,
    seed_commitment,
)
from fairness.records import (
    LOCK_SEAT_FIELDS,
    Head,
    Lock,
    Read,
    Receipt,
    RecordError,
    Reveal,
    check_seat_signature,
    lock_seats,
    seat_key,
)
from games import Chance
from games.base import Shared, spliced_json
from games.ends import no_reveal_result
from games.sealed_hand import LOG_HELD
from games.sealed_limits import sealed_limits
from games.transcript import build_locked_transcript

from .. import translog
from ..clock import SYSTEM_CLOCK, Clock, iso_of
from ..db import Database, WouldBlock, loop_mode
from ..errors import Conflict, Forbidden, Invalid, NotFound, service_error, user_errors
from ..keys import RecordSigner
from ..kinds import EndReason, EventType, SeedSource, Status
from ..models import Seat
from ..settings import Settings
from ..store import (
    FINISHED,
    KIND_MATCH,
    KIND_RNG,
    LRU,
    PLAYING,
    SEATING,
    MatchRow,
    Store,
    Texts,
    Tx,
    dumps,
)

#: The result of a v2 match that never locked: nothing was committed to, nothing is revealed
#: and nothing is logged (fairness-v2.md §3).
NOT_LOCKED: dict[str, Any] = {
    "status": Status.FINISHED,
    "reason": EndReason.NOT_LOCKED,
    "forfeited": [],
    "winners": [],
}
REVEAL_SECONDS, MAX_SECONDS, TURN_SECONDS = 120, 86_400, 300  # v2 ruleset defaults (§3, §7)

Events = list[dict[str, Any]]
Answer = tuple[Events, dict[str, Any] | None]  # (events logged, receipt)


def view_json(obj: dict[str, Any]) -> str:
    """``dumps(obj)`` with each record read from its stored text (a lock,
    :class:`fairness.records.Read`, at the top or in a nested ``state`` view) written as
    that text: the same JSON value; the spliced keys come last. A record read from its
    text (or made with it, a transcript at its end) is that text."""
    if type(obj) is Read:
        return obj.text
    spliced = {
        k: v
        for k, v in obj.items()
        if isinstance(v, Read) or (k == "state" and isinstance(v, dict))
    }
    if not spliced:
        return _dumps_shared(obj)
    rest = _dumps_shared({k: v for k, v in obj.items() if k not in spliced})
    parts = [
        f"{_key(k)}:{v.text if isinstance(v, Read) else view_json(v)}" for k, v in spliced.items()
    ]
    return rest[:-1] + ("," if rest != "{}" else "") + ",".join(parts) + "}"


#: a key as ``dumps`` writes it (``ensure_ascii=False``): json's own string encoder
_key = json.encoder.encode_basestring


def _dumps_shared(obj: dict[str, Any]) -> str:
    """``dumps(obj)``, each :class:`games.base.Shared` value (a sealed deal's state every
    seat's view shows) written as its encoding made once, and each :class:`service.store.
    Texts` (events) with its stored events' texts, in its place: the keys between two such
    values encoded together, as ``dumps`` writes them."""
    if not any(type(v) is Shared or type(v) is Texts for v in obj.values()):
        return dumps(obj)
    return spliced_json(obj, _made_text, dumps, _key)


def _made_text(v: Any) -> str | None:
    """The text made already of a :class:`games.base.Shared` or :class:`service.store.Texts`
    value (each stored event as its text, any other, a redaction, encoded); None else."""
    t = type(v)
    if t is Shared:
        shared: Shared = v
        return shared.encoded(dumps)
    if t is Texts:
        return "[" + ",".join(x.text if type(x) is Read else dumps(x) for x in v) + "]"
    return None


#: the sealed steps a seat's request may check on the event loop (:func:`checked_in_pool`)
LOOP_STEPS = ("key", "reveal_key")


def checked_in_pool(action: dict[str, Any], engine: Any = None) -> bool:
    """Whether ``action`` is a sealed deal step (fairness-v3 §9a) checked in the thread pool,
    never on the event loop: its proofs take milliseconds to tens of them (a shuffle's,
    40–130 ms), during which the loop would serve no other request. A play's opening (one
    share proof) stays on it, and so do a key (one proof) and a revealed key (one
    multiplication), but for the hand's last, which opens the whole deck (and may end the
    match): told only with the match's ``engine``, so the route sends the step to the loop
    and :meth:`Match.move` sends it on to the pool (:class:`WouldBlock`)."""
    if action.get("type") != "sealed":
        return False
    step = action.get("step")
    if step not in LOOP_STEPS:
        return True
    if engine is None or step != "reveal_key":
        return False
    owed = getattr(engine, "owed", None)
    return not isinstance(owed, list) or len(owed) <= 1


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


def _hex32(value: str | None, what: str, code: str) -> str:
    try:
        return parse_hex(value, 32, what).hex()
    except SeedError as exc:
        raise Invalid(str(exc), code) from None


class Locked:
    """What a match's lock fixes, derived once per process: the lock opened from its stored
    text (``record``: the signed JSON as read, with that text), chain[-1], the seats' parsed
    keys and the receipt for chain[-1] (Ed25519 is deterministic: kept, not signed again)."""

    __slots__ = ("keys", "lock", "record", "start", "start_receipt")

    def __init__(self, text: str) -> None:
        self.lock = Lock.open(text, None)  # the service's own stored record: not re-checked
        assert isinstance(self.lock.signed, Read)
        self.record: Read = self.lock.signed
        self.start = chain_start(self.record)
        self.keys: dict[int, Any] = {}
        self.start_receipt: dict[str, Any] | None = None

    def public_key(self, seat: int) -> Any:
        """Seat ``seat``'s key from the lock, parsed once (:func:`fairness.records.seat_key`)."""
        pub = self.keys.get(seat)
        if pub is None:
            pub = self.keys[seat] = seat_key(self.lock.seats[seat].key or "")
        return pub


class Parts:
    """What every phase of the match service shares, and the opening of a :class:`Match`."""

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
        #: per match, what its lock fixes (:class:`Locked`), most recently used last
        self._locks = LRU[str, Locked](4096)
        #: the signed transcripts of the matches that ended last, as GET .../transcript
        #: answers (:meth:`made_transcript`): made when the match ends, served while the match's
        #: row holds their signature (the seats fetch theirs as it ends; a sealed hand's is
        #: 140 KiB)
        self.transcripts = LRU[str, Read](16)

    @property
    def outage_seconds(self) -> float:
        """A gap between heartbeats longer than this means nothing was serving (§7)."""
        return 3 * self.settings.sweep_interval_seconds

    # -- opening a match, its deadlines settled ------------------------------------------------
    @contextmanager
    def writing(self, match_id: str, *, kind: str) -> Iterator[Match]:
        """The match in a write transaction, its deadlines settled first."""
        with self.store.write(match_id, kind=kind) as tx:
            match = Match(self, tx)
            if match.due() is None:
                yield match
                return
            match.timeout()
        with self.store.write(match_id, kind=kind) as tx:
            yield Match(self, tx)

    @contextmanager
    def reading(self, match_id: str, *, kind: str) -> Iterator[Match]:
        """The match in a read, its deadlines settled first (ending it is a write)."""
        with self.store.read(match_id, kind=kind) as tx:
            match = Match(self, tx)
            if match.due() is None:
                yield match
                return
        self.end_if_due(match_id, kind=kind)
        with self.store.read(match_id, kind=kind) as tx:
            yield Match(self, tx)

    def end_if_due(self, match_id: str, *, kind: str) -> bool:
        """End the match if a deadline passed (§3 and §7); whether it ended."""
        with self.store.write(match_id, kind=kind) as tx:
            match = Match(self, tx)
            if match.due() is None:
                return False
            match.timeout()
            return True

    # -- what a lock fixes (immutable once committed) -------------------------------------------
    def locked(self, m: MatchRow) -> Locked:
        """What the match's lock fixes, parsed once (by its stored text: a lock of a
        transaction that rolled back is never served from here)."""
        assert m.lock is not None
        found = self._locks.get(m.id)
        if found is not None and found.record.text == m.lock:
            return found
        found = Locked(m.lock)
        self._locks.put(m.id, found)
        return found

    def lock_record(self, m: MatchRow) -> Read:
        """The match's signed lock record as stored (a :class:`fairness.records.Read`)."""
        return self.locked(m).record

    def start_receipt(self, m: MatchRow) -> dict[str, Any]:
        """The signed receipt for chain[-1], whose time is the lock's ``locked_at``: the
        same for every commit and reveal of a match (signed once per process)."""
        locked = self.locked(m)
        found = locked.start_receipt
        if found is None or found["signature"]["key_id"] != self.signer.key_id:
            found = locked.start_receipt = Receipt(
                m.id, -1, locked.start.hex(), locked.record["locked_at"]
            ).sign(self.signer)
        return {**found, "signature": dict(found["signature"])}

    def made_transcript(self, m: MatchRow) -> Read | None:
        """The ended match's signed transcript made at its end, as its answer (the text
        ``dumps`` makes of it), if this process ended it lately; None else. Only the one
        the row's signature is over: a match's end rolled back signed another, or none."""
        found = self.transcripts.get(m.id)
        if found is None or m.transcript_sig != dumps(found["signature"]):
            return None
        return found

    def head(self, m: MatchRow) -> dict[str, Any] | None:
        """The signed head (§7, heads) of a locked match as it stands now: its newest seq
        and chain head, and this server's time; None before the lock (and for v1)."""
        if m.chain is None or m.lock is None:
            return None
        return Head(m.id, m.next_seq - 1, m.chain, self.store.now_iso()).sign(self.signer)


class Match:
    """One match in one transaction (:class:`service.store.Tx`): its row ``m``, its
    ``variant`` (decided once: the protocol it is played under and its deal), its engine
    and its log. Its writes return ``(events, receipt)``."""

    def __init__(self, parts: Parts, tx: Tx) -> None:
        self.parts = parts
        self.tx = tx
        self.m = tx.m
        self.variant = tx.variant
        #: a signed match (qahwa-fair/2 or /3: a lock, a chain, receipts); else a read-only
        #: qahwa-fair/1 row
        self.signed = self.variant.PROTOCOL.signed
        self.deal = self.variant.PROTOCOL.deal
        self._seats: list[Seat] | None = None

    # -- who and what ------------------------------------------------------------------------
    def auth(self, token: str | None) -> int:
        """The seat ``token`` is (401 otherwise)."""
        return self.tx.store.seat_of_token(self.tx.c, self.m.id, token)

    def seats(self) -> list[Seat]:
        """The match's seat rows, loaded once in this transaction."""
        if self._seats is None:
            self._seats = self.tx.seats()
        return self._seats

    def writable(self, what: str | None = None) -> None:
        """Only a signed match is written (migration 0008 ended every v1 match): ``what``
        names a path a v1 match does not have (commit, reveal, the lock): 404; else 409."""
        if self.signed:
            return
        if what is not None:
            raise NotFound(f"{what} is qahwa-fair/2's; this is a read-only qahwa-fair/1 match")
        raise Conflict("qahwa-fair/1 matches are read-only: this one has ended", "match_over")

    # -- play --------------------------------------------------------------------------------
    def act(
        self, seat: int, action: dict[str, Any], *, version: int, sig: str | None, prev: str | None
    ) -> Answer:
        """Seat ``seat`` plays ``action`` at ``version``; a keyed seat signs it over ``prev``,
        the chain head."""
        m = self.m
        if m.status == SEATING:
            raise Conflict(
                "the match has not started: every seat commits, then reveals after the lock",
                "not_started",
            )
        if m.status == FINISHED:
            raise Conflict("the match has ended", "match_over")
        self.writable()
        if version != m.version:
            raise Conflict(
                f"version {version} is stale: the match is at version "
                f"{m.version}; fetch /state and retry",
                "stale_version",
            )
        try:
            check_canonical_value(action)
        except ValueError as exc:
            raise Invalid(f"action: {exc}", "malformed_action") from None
        sig = self._seat_sig(
            seat, {"type": EventType.ACTION, "seat": seat, "action": action}, sig, prev
        )
        return self.move(seat, action, sig)

    def move(self, seat: int, action: dict[str, Any], sig: str | None = None) -> Answer:
        """Apply a checked action: the engine builds its event (with ``sig``) and the chance
        events it draws, they are logged, the match ends or the next step is owed."""
        tx = self.tx
        engine = tx.engine()
        if loop_mode() and checked_in_pool(action, engine):  # milliseconds: not on the loop
            raise WouldBlock
        try:
            produced = engine.apply(seat, action, sig=sig)
        except BaseException as exc:
            err = service_error(exc)
            if not isinstance(err, Conflict):  # not your turn / match over: nothing changed
                tx.dirty = True  # an engine error should leave it unchanged; do not rely on it
            if err is exc:
                raise
            raise err from None
        tx.dirty = True
        logged = tx.append(produced)
        if engine.outcome is not None:
            self._finish()
        else:
            self._arm()
        tx.touch()
        return logged, self._receipt()

    def resign(self, seat: int, *, sig: str | None, prev: str | None) -> Answer:
        """Seat ``seat`` forfeits (a keyed seat signs the end event over ``prev``); before
        the lock the match just closes: nothing is logged, no receipt."""
        m, tx = self.m, self.tx
        if m.status == FINISHED:
            raise Conflict("the match has ended", "match_over")
        self.writable()
        if m.status == SEATING:
            if m.lock is not None:
                raise Conflict(
                    "the match is locked: a seat that does not reveal by reveal_by forfeits "
                    "(there is no resignation before the start)",
                    "not_started",
                )
            self._end(NOT_LOCKED)  # nobody committed to anything yet
            tx.touch()
            return [], None
        end = {"type": EventType.END, "reason": EndReason.RESIGNED, "seat": seat}
        sig = self._seat_sig(seat, end, sig, prev)
        logged = tx.append(tx.changing().end_match(EndReason.RESIGNED, [seat], sig=sig))
        self._finish()
        tx.touch()
        return logged, self._receipt()

    def _seat_sig(
        self, seat: int, event: dict[str, Any], sig: str | None, prev: str | None
    ) -> str | None:
        """A seat's request against the chain head and its key (§7): 409 ``stale_chain``
        (``prev`` not the head), 422 ``bad_signature`` (missing, wrong, or from no key)."""
        m = self.m
        if prev is not None and prev != m.chain:
            raise Conflict(
                f"prev is not the chain head {m.chain}: fetch /state and retry", "stale_chain"
            )
        locked = self.parts.locked(m)
        key = locked.lock.seats[seat].key
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
            check_seat_signature(locked.public_key(seat), sig, m.id, m.chain, event)
        except RecordError as exc:
            raise Invalid(
                f"seat {seat}'s signature does not verify over the chain head "
                f"{m.chain} with its key from the lock: {exc.reason}",
                "bad_signature",
            ) from None
        return sig

    # -- seating: commit, lock, reveal (fairness-v2.md §2–§3) ---------------------------------
    def own_seat(self, token: str | None, seat: int) -> None:
        """The token is seat ``seat``'s (401, 404 for no such seat, 403 for another's)."""
        mine = self.auth(token)
        if not 0 <= seat < self.m.n_seats:
            raise NotFound(f"no seat {seat} in this match")
        if mine != seat:
            raise Forbidden(f"this token is seat {mine}'s, not seat {seat}'s")

    def _seating(self, what: str) -> None:
        """A commit's or a reveal's match (after :meth:`own_seat`): signed, not ended."""
        self.writable(what)
        if self.m.status == FINISHED:
            raise Conflict("the match has ended", "match_over")

    def _start_receipt(self) -> dict[str, Any] | None:
        """A commit's or a reveal's receipt: for chain[-1] (None before the lock)."""
        return self.parts.start_receipt(self.m) if self.m.lock is not None else None

    def commit(
        self, seat: int, *, seed_commitment: str, key: str | None, roll_chain: str | None
    ) -> Answer:
        """Seat ``seat``'s commitment, key and roll-chain tip (§2); the last one signs the
        lock and logs it (§3). The identical request again gets the same answer."""
        m = self.m
        self._seating("commit")
        if m.status != SEATING:
            raise Conflict("every seat has committed: the match is locked", "not_seating")
        com = _hex32(seed_commitment, "seed_commitment", "bad_commitment")
        pub = _parse_key(key)
        fresh = bool(json.loads(m.ruleset).get("fresh_rolls", False))
        if fresh and roll_chain is None:
            raise Invalid(
                "this match has fresh rolls: commit the tip of your roll "
                "chain as roll_chain (64 hex)",
                "bad_roll_chain",
            )
        if not fresh and roll_chain is not None:
            raise Invalid(
                "this match has no fresh rolls: roll_chain must be null", "bad_roll_chain"
            )
        tip = _hex32(roll_chain, "roll_chain", "bad_roll_chain") if fresh else None
        if m.lock is not None:
            mine = self.parts.lock_record(m)["seats"][seat]
            if (mine["seed_commitment"], mine["key"], mine["roll_chain"]) != (com, pub, tip):
                raise Conflict("every seat has committed: the match is locked", "not_seating")
        seats = self.seats()
        row = seats[seat]
        if row.seed_commitment is not None:
            if (row.seed_commitment, row.key, row.roll_chain) == (com, pub, tip):
                return [], self._start_receipt()  # a client's resend: the same answer
            raise Conflict(f"seat {seat} has already committed", "already_committed")
        if any(st.seed_commitment == com for st in seats):
            raise Conflict("this seed_commitment is another seat's", "duplicate_commitment")
        self.tx.set_seat(row, seed_commitment=com, key=pub, roll_chain=tip)
        if all(st.seed_commitment is not None for st in seats):
            self.lock()
        self.tx.touch()
        return [], self._start_receipt()

    def start(self) -> Events:
        """Every seat revealed: K from their seeds and nonces, the deal; the chance events it
        logged (the engine, ``tx.current``, may have ended at once)."""
        m, tx, cls = self.m, self.tx, self.variant
        chance = Chance(tx.key(self.seats()))
        tx.dirty = True
        rules = cls.parse_ruleset(json.loads(m.ruleset), protocol=m.protocol)
        tx.current = cls(rules, chance, tx.context())
        logged = tx.append(chance.take_events())
        m.status, m.started_at = PLAYING, tx.store.now_iso()
        return logged

    def _end(self, result: dict[str, Any] | None = None) -> None:
        """The match has ended: with the engine's outcome, or ``result``."""
        m, engine = self.m, self.tx.current
        if result is None:
            assert engine is not None and engine.outcome is not None
            result = engine.outcome.to_json()
        m.status, m.ended_at, m.result = FINISHED, self.tx.store.now_iso(), dumps(result)
        m.deadline = m.owes = None

    def lock(self) -> None:
        """Every seat committed: sign the lock record and log it (§3)."""
        m, parts = self.m, self.parts
        now = self.tx.store.clock.now()
        parsed = json.loads(m.ruleset)
        if m.kind == KIND_RNG:
            reveal_by, end_by = now, now + parts.settings.idle_timeout_seconds
        else:
            reveal_by = now + int(parsed.get("reveal_seconds", REVEAL_SECONDS))
            end_by = now + int(parsed.get("max_seconds", MAX_SECONDS))
        lock = Lock(
            m.id,
            m.game,
            m.ruleset,
            m.commitment,
            lock_seats([{k: getattr(st, k) for k in LOCK_SEAT_FIELDS} for st in self.seats()]),
            locked_at=iso_of(now),
            reveal_by=iso_of(reveal_by),
            end_by=iso_of(end_by),
        ).sign(parts.signer)
        m.lock_index = self.log(lock, iso_of(now))
        m.lock = dumps(lock)
        m.reveal_by, m.end_by = reveal_by, end_by
        m.chain = chain_start(lock).hex()

    def reveal(self, seat: int, *, client_seed: str, nonce: str) -> Answer:
        """Seat ``seat``'s seed and nonce, checked against its commitment; the last reveal
        starts the match (§3): the chance events of its deal are logged."""
        m = self.m
        self._seating("reveal")
        if m.lock is None:
            raise Conflict("no reveal before the lock: not every seat has committed", "not_locked")
        seats = self.seats()
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
            return [], self._start_receipt()
        self.tx.set_seat(
            row,
            client_seed=client_seed,
            nonce=nonce,
            revealed=True,
            seed_source=SeedSource.PLAYER,
        )
        logged: Events = []
        if all(st.revealed for st in seats):
            logged = self.start()
            engine = self.tx.current
            assert engine is not None
            if engine.outcome is not None:
                self._finish()
            else:
                # the first step after the reveals is owed from the lock's locked_at (§7)
                self._arm(since_us=parse_time_us(self.parts.lock_record(m)["locked_at"]))
        self.tx.touch()
        return logged, self._start_receipt()

    # -- deadlines (fairness-v2.md §3, §7) ------------------------------------------------------
    def due(self) -> EndReason | None:
        """Why the match must end now (§3/§7), or None (never for a read-only v1 match)."""
        m = self.m
        if m.status not in (SEATING, PLAYING) or not self.signed:
            return None
        now = self.tx.store.clock.now()
        if m.status == SEATING:
            if m.lock is None:
                idle = now - m.last_activity > self.parts.settings.idle_timeout_seconds
                return EndReason.NOT_LOCKED if idle else None
            assert m.reveal_by is not None
            return EndReason.NO_REVEAL if now > m.reveal_by else None
        if m.end_by is not None and now >= m.end_by:
            return EndReason.EXPIRED
        # A turn deadline ends a match lazily only while this process's heartbeat is fresh;
        # after an outage the sweep first extends the deadlines that passed meanwhile.
        beat = self.parts.last_beat
        if m.deadline is not None and now > m.deadline and beat is not None:
            return EndReason.TIMEOUT if now - beat <= self.parts.outage_seconds else None
        return None

    def timeout(self) -> Answer:
        """End the match for the deadline :meth:`due` gives: never locked (nothing logged), a
        seat did not reveal, the match's end, or the turn of a seat, which forfeits."""
        m, tx = self.m, self.tx
        reason = self.due()
        assert reason is not None, "timeout() after due()"
        logged: Events = []
        if reason == EndReason.NOT_LOCKED:
            self._end(NOT_LOCKED)
        elif reason == EndReason.NO_REVEAL:
            missing = [st.seat for st in self.seats() if not st.revealed]
            with user_errors():
                parsed = self.variant.parse_ruleset(json.loads(m.ruleset), protocol=m.protocol)
            end = {"type": EventType.END, "reason": EndReason.NO_REVEAL, "seats": missing}
            logged = tx.append([end])
            self._finish(no_reveal_result(self.variant, parsed, missing))
        elif reason == EndReason.EXPIRED:
            logged = tx.append(tx.changing().end_match(EndReason.EXPIRED, []))
            self._finish()
        else:  # TIMEOUT: the seat that owes the step forfeits
            engine = tx.changing()
            seat = m.owes if m.owes is not None else engine.turn
            assert seat is not None
            # its `at` is never before the deadline (fairness-v2.md §7: verifiers check it)
            logged = tx.append(engine.end_match(EndReason.TIMEOUT, [seat]), not_before=m.deadline)
            self._finish()
        m.version += 1
        return logged, self._receipt() if logged else None

    def _arm(self, since_us: int | None = None) -> None:
        """The seat on turn owes its step from the ``at`` of the event that put it there
        (``since_us``: ``locked_at`` for the first step) plus ``turn_seconds`` (§7, times),
        the rule every verifier checks a timeout against; rng sessions have no deadline."""
        m, tx = self.m, self.tx
        if m.kind != KIND_MATCH:
            return
        engine = tx.current
        assert engine is not None
        turn = engine.turn
        if engine.outcome is not None or turn is None:
            m.deadline, m.owes = None, None
            return
        if since_us is None:
            since_us = tx.head_at_us
        since = tx.store.clock.now() if since_us is None else since_us / 1_000_000
        m.owes = turn
        m.deadline = since + int(engine.ruleset.get("turn_seconds", TURN_SECONDS))

    # -- the log: the lock, the end ---------------------------------------------------------------
    def log(self, record: dict[str, Any], at: str) -> int:
        """Add a signed record (a lock, a reveal) to the transparency log; its index."""
        self.tx.logged = True
        return translog.add(self.parts.db, self.tx.s, record, match_id=self.m.id, at=at)

    def _receipt(self) -> dict[str, Any]:
        """The signed receipt for the head after the events appended last, with their time."""
        m, tx = self.m, self.tx
        assert tx.head_at_us is not None and m.chain is not None, "a receipt follows an append"
        return Receipt(m.id, m.next_seq - 1, m.chain, format_time_ms(tx.head_at_us)).sign(
            self.parts.signer
        )

    def _finish(self, result: dict[str, Any] | None = None) -> None:
        """The match ended: its result (the engine's unless given), the signed transcript,
        the reveal record logged (§8)."""
        tx, signer = self.tx, self.parts.signer
        self._end(result)
        m = self.m
        events = tx.store.events_and_chains(tx.c, m.id, before=m.next_seq)[0]
        signed, signed_json = signer.signed_json(self.transcript_doc(events))
        m.transcript_sig = dumps(signed["signature"])
        record = Reveal.of_transcript(
            signed,
            lock_index=m.lock_index,
            chain=m.chain,
            result=json.loads(m.result) if m.result else {},
            ended_at=m.ended_at,
            signed_json=signed_json,
        ).sign(signer)
        self.log(record, tx.store.now_iso())
        # GET .../transcript's answer, as it would make it (served once this commits): the
        # events as their stored texts, in their place
        text = view_json({**signed, "events": events})
        self.parts.transcripts.put(m.id, Read(text, signed))

    def transcript_doc(self, events: Events | None = None) -> dict[str, Any]:
        """The unsigned transcript of a signed match (fairness-v2.md §9); ``events``: its
        log, when read already."""
        m, tx, store = self.m, self.tx, self.tx.store
        assert m.lock is not None and m.lock_index is not None and m.chain is not None
        return build_locked_transcript(
            match_id=m.id,
            game=m.game,
            ruleset=m.ruleset,
            server_seed=store.server_seed(tx.c, m.id),
            lock=self.parts.lock_record(m),
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
                for st in self.seats()
            ],
            events=events
            if events is not None
            else store.events_after(tx.c, m.id, before=m.next_seq),
            chain=m.chain,
            result=json.loads(m.result) if m.result else None,
            created_at=m.created_at,
            ended_at=m.ended_at,
            protocol=self.variant.PROTOCOL.name,
        )

    # -- views -----------------------------------------------------------------------------
    def seats_public(self) -> list[dict[str, Any]]:
        """The seats as everyone sees them."""
        m = self.m
        out = []
        for st in self.seats():
            if not self.signed:  # qahwa-fair/1's shape
                d = {"seat": st.seat, "name": st.name, "has_seed": st.client_seed is not None}
                if m.status != SEATING:
                    d.update(client_seed=st.client_seed, seed_source=st.seed_source)
            else:
                d = {"seat": st.seat, "name": st.name, "house": st.house}
                d.update(committed=st.seed_commitment is not None, revealed=st.revealed)
                d["has_seed"] = st.revealed
                if m.started_at is not None:
                    d["client_seed"] = st.client_seed
            out.append(d)
        return out

    def signed_fields(self) -> dict[str, Any]:
        """What a signed match's views carry besides: the protocol, chain head and lock."""
        m = self.m
        return {
            "protocol": m.protocol,
            "chain": m.chain,
            "lock": self.parts.lock_record(m) if m.lock is not None else None,
            "lock_index": m.lock_index,
        }

    def view(self, seat: int, brief: bool = False) -> dict[str, Any]:
        """Seat ``seat``'s view: its engine's (own hand, legal actions) once started;
        ``brief``: a sealed deal's public state without what the log holds
        (:data:`games.sealed_hand.LOG_HELD`)."""
        m = self.m
        if m.started_at is None:
            rows = self.seats()
            view: dict[str, Any] = {
                "game": m.game,
                "status": m.status,
                "turn": None,
                "seat": seat,
                "legal_actions": [],
                "seats": self.seats_public(),
            }
            if m.result is not None:
                view["result"] = json.loads(m.result)
            if self.variant.PROTOCOL.sealed:  # the table's limits are known at its seating
                house = [st.seat for st in rows if st.house]
                view["sealed"] = {"limits": sealed_limits(m.game, len(rows), house)}
        else:
            view = self.tx.engine().view(seat)
            shown = view.get("sealed")
            if brief and type(shown) is Shared:
                view["sealed"] = shown.without(LOG_HELD)
        view["version"] = m.version
        view["match_id"] = m.id
        view["deal"] = self.deal
        if self.signed:
            view.update(self.signed_fields())
            view["deadline"] = self._deadline()
        return view

    def _deadline(self) -> dict[str, Any] | None:
        """Who owes the next step, its seq and when it is due (§7; later only when extended
        after an outage); None when nobody owes one."""
        m = self.m
        if m.deadline is None or m.owes is None or m.status != PLAYING:
            return None
        return {"seat": m.owes, "seq": m.next_seq, "due": iso_of(m.deadline)}

    def log_after(self, after: int) -> tuple[Texts, list[str | None]]:
        """The public log after seq ``after`` (redacted while the match runs), with the chain
        head after each event."""
        m, tx = self.m, self.tx
        if after >= m.next_seq - 1:
            return Texts(), []
        evs, chains = tx.store.events_and_chains(tx.c, m.id, after, before=m.next_seq)
        return self.redacted(evs), chains

    def redacted(self, events: Events) -> Texts:
        """``events`` as the public log shows them now: redacted while the match runs (an
        event redaction leaves as it is stays itself, with its stored text)."""
        if self.m.status == FINISHED:
            return events if type(events) is Texts else Texts(events)
        redact = self.variant.redact
        return Texts([redact(e) for e in events])


class Phase:
    """A phase of the service (seating, play, reads, deadlines) over its :class:`Parts`."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts


class Play(Phase):
    """The play requests: a seat's action and a resignation."""

    def act(
        self,
        match_id: str,
        *,
        token: str | None,
        action: dict[str, Any],
        version: int,
        sig: str | None = None,
        prev: str | None = None,
        brief: bool = False,
    ) -> dict[str, Any]:
        """``POST .../actions``: the token's seat plays ``action`` at ``version``; keyed
        seats sign it over ``prev``, the chain head; ``brief``: the answer's view so
        (:meth:`Match.view`)."""
        with self.parts.writing(match_id, kind=KIND_MATCH) as match:
            seat = match.auth(token)
            m = match.m
            first_seq = m.next_seq
            logged, receipt = match.act(seat, action, version=version, sig=sig, prev=prev)
            return {  # the new view, as committed (sent after the commit)
                "match_id": m.id,
                "seat": seat,
                "version": m.version,
                "status": m.status,
                "first_seq": first_seq,
                "state": match.view(seat, brief),
                "chain": m.chain,
                "receipt": receipt,
                # what it logged, as GET .../events shows them: a seat following the log
                "events": match.redacted(logged),
            }

    def resign(
        self, match_id: str, *, token: str | None, sig: str | None = None, prev: str | None = None
    ) -> dict[str, Any]:
        """``POST .../resign``: the token's seat forfeits; before the lock the match just
        closes, nothing logged."""
        with self.parts.writing(match_id, kind=KIND_MATCH) as match:
            seat = match.auth(token)
            m = match.m
            _, receipt = match.resign(seat, sig=sig, prev=prev)
            out = {"match_id": m.id, "status": m.status, "version": m.version}
            if receipt is None:
                return {**out, "result": NOT_LOCKED}
            return {
                **out,
                "result": json.loads(str(m.result)),
                "chain": m.chain,
                "receipt": receipt,
            }

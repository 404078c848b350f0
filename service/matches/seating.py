"""Seating: creating a match (the signed commit record), each seat's commitment (the last
one signs and logs the lock, fairness-v2.md §2–§3) and each seat's reveal (the last one
starts the match). qahwa-fair/1's seating (``/seed``, ``/start``) only answers that v1 is
read-only.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from typing import Any, NoReturn

from sqlalchemy import insert

from fairness import (
    ClientSeedError,
    SeedError,
    canonical_ruleset,
    chain_start,
    check_client_seed,
    load_public_key,
    parse_hex,
    parse_nonce,
    parse_time_us,
    seed_commitment,
)
from fairness.records import LOCK_SEAT_FIELDS, Commit, Lock, lock_seats
from games.registry import find_engine

from ..errors import Conflict, Forbidden, Invalid, NotFound, user_errors
from ..kinds import SeedSource
from ..models import Seat, ServerSeed
from ..store import FINISHED, KIND_MATCH, KIND_RNG, SEATING, MatchRow, Tx, dumps, hash_token, iso_of
from .core import MAX_SECONDS, REVEAL_SECONDS
from .deadlines import arm
from .reads import Reads

_INSERT_SEATS = insert(Seat.__table__)  # type: ignore[attr-defined]
_INSERT_SEED = insert(ServerSeed.__table__)  # type: ignore[attr-defined]


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


class Seating(Reads):
    # -- creation --------------------------------------------------------------------------
    def create(
        self, *, kind: str, game: str, ruleset: str, seats: list[tuple[str, bool]]
    ) -> tuple[dict[str, Any], list[str]]:
        """Create a match (or rng session) of the current protocol and sign its commit record
        (not logged: the lock is, fairness-v2.md §1)."""
        match_id = ("m_" if kind == KIND_MATCH else "r_") + secrets.token_hex(10)
        proto = find_engine(game, ruleset).PROTOCOL  # a sealed deal's is qahwa-fair/3
        seed = proto.new_server_seed()
        com = proto.commitment(seed)
        tokens = [secrets.token_urlsafe(32) for _ in seats]
        at = self.store.now_iso()
        record = Commit(match_id, game, ruleset, com, tuple(seats), at).sign(self.signer)
        row = MatchRow(
            id=match_id,
            kind=kind,
            game=game,
            ruleset=ruleset,
            commitment=com,
            n_seats=len(seats),
            log_index=-1,  # qahwa-fair/1's commitment index; the lock's is lock_index
            record=dumps(record),
            created_at=at,
            last_activity=self.store.clock.now(),
            protocol=proto.records,
        )
        with self.store.create(row) as tx:
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
        out = {
            "match_id": match_id,
            "protocol": proto.records,
            "game": game,
            "ruleset": ruleset,
            "deal": proto.deal,
            "commitment": com,
            "created_at": at,
            "status": row.status,
            "version": row.version,
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
            cls = find_engine(game, ruleset)
            parsed = cls.parse_ruleset(ruleset or {})
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

    # -- commit, lock, reveal (qahwa-fair/2) -------------------------------------------------
    @staticmethod
    def _own_seat(tx: Tx, token: str | None, seat: int) -> None:
        mine = tx.auth(token)
        if not 0 <= seat < tx.m.n_seats:
            raise NotFound(f"no seat {seat} in this match")
        if mine != seat:
            raise Forbidden(f"this token is seat {mine}'s, not seat {seat}'s")

    def _seat_request(self, tx: Tx, token: str | None, seat: int, what: str) -> MatchRow:
        """What a commit and a reveal check first: the token is the seat's, the match is
        qahwa-fair/2's and has not ended."""
        self._own_seat(tx, token, seat)
        m = tx.m
        self._signed_only(m, what)
        if m.status == FINISHED:
            raise Conflict("the match has ended", "match_over")
        return m

    def _seated(self, tx: Tx, seat: int, seats: list[Seat]) -> dict[str, Any]:
        """The answer to a commit or a reveal: the seat's view with the receipt for
        chain[-1] (None before the lock)."""
        view = self._seat_view(tx, seat, seats)
        view["receipt"] = self._start_receipt(tx.m) if tx.m.lock is not None else None
        return view

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
        with self.writing(match_id, kind=KIND_MATCH) as tx:
            m = self._seat_request(tx, token, seat, "commit")
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
                mine = self._lock_of(m)["seats"][seat]
                if (mine["seed_commitment"], mine["key"], mine["roll_chain"]) != (com, pub, tip):
                    raise Conflict("every seat has committed: the match is locked", "not_seating")
            seats = tx.seats()
            row = seats[seat]
            if row.seed_commitment is not None:
                if (row.seed_commitment, row.key, row.roll_chain) == (com, pub, tip):
                    # the identical request again (a client's resend): the same answer
                    return self._seated(tx, seat, seats)
                raise Conflict(f"seat {seat} has already committed", "already_committed")
            if any(st.seed_commitment == com for st in seats):
                raise Conflict("this seed_commitment is another seat's", "duplicate_commitment")
            tx.set_seat(row, seed_commitment=com, key=pub, roll_chain=tip)
            if all(st.seed_commitment is not None for st in seats):
                self._lock(tx, seats)
            tx.touch()
            return self._seated(tx, seat, seats)

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
        m.lock_index = self._log(tx, lock, iso_of(now))
        m.lock = dumps(lock)
        m.reveal_by, m.end_by = reveal_by, end_by
        m.chain = chain_start(lock).hex()

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
        with self.writing(match_id, kind=kind) as tx:
            m = self._seat_request(tx, token, seat, "reveal")
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
                return self._seated(tx, seat, seats)
            tx.set_seat(
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
                    arm(tx, since_us=parse_time_us(self._lock_of(m)["locked_at"]))
            tx.touch()
            return self._seated(tx, seat, seats)

    # -- qahwa-fair/1 (read-only) --------------------------------------------------------------
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

    def v1_seating(
        self, match_id: str, *, kind: str, token: str | None, seat: int | None = None
    ) -> NoReturn:
        """``POST .../seed`` (``seat``) and ``POST .../start``: qahwa-fair/1's seating, which
        no match can be in any more (:meth:`read_only_v1`)."""
        with self.reading(match_id, kind=kind) as tx:
            if seat is None:
                tx.auth(token)
            else:
                self._own_seat(tx, token, seat)
            self.read_only_v1(tx.m, "POST .../seed" if seat is not None else "POST .../start")
        raise AssertionError("unreachable")  # pragma: no cover

"""Seating: creating a match (the signed commit record), the commit and reveal requests
(:meth:`.match.Match.commit`: the last signs and logs the lock; :meth:`.match.Match.reveal`:
the last starts the match), and qahwa-fair/1's ``/seed`` and ``/start``, read-only."""

from __future__ import annotations

import secrets
from typing import Any, NoReturn

from sqlalchemy import insert

from fairness import canonical_ruleset
from fairness.records import Commit
from games.registry import find_engine

from ..errors import Conflict, Invalid, NotFound, user_errors
from ..models import Seat, ServerSeed
from ..store import KIND_MATCH, MatchRow, dumps, hash_token
from .match import Match, Phase

_INSERT_SEATS = insert(Seat.__table__)  # type: ignore[attr-defined]
_INSERT_SEED = insert(ServerSeed.__table__)  # type: ignore[attr-defined]


class Seating(Phase):
    """Creation and the seating requests."""

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
        at = self.parts.store.now_iso()
        record = Commit(match_id, game, ruleset, com, tuple(seats), at).sign(self.parts.signer)
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
            last_activity=self.parts.store.clock.now(),
            protocol=proto.records,
        )
        with self.parts.store.create(row) as tx:
            # plain inserts (the ORM's unit of work cost more than the statements)
            tx.c.execute(
                _INSERT_SEED,
                {"match_id": match_id, "sealed": self.parts.store.box.seal(seed, aad=match_id)},
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

    # -- commit, reveal (qahwa-fair/2) ---------------------------------------------------------
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
        with self.parts.writing(match_id, kind=KIND_MATCH) as match:
            match.own_seat(token, seat)
            _, receipt = match.commit(
                seat, seed_commitment=seed_commitment, key=key, roll_chain=roll_chain
            )
            return {**match.view(seat), "receipt": receipt}  # for chain[-1]; None before the lock

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
        with self.parts.writing(match_id, kind=kind) as match:
            match.own_seat(token, seat)
            _, receipt = match.reveal(seat, client_seed=client_seed, nonce=nonce)
            return {**match.view(seat), "receipt": receipt}  # for chain[-1]; None before the lock

    # -- qahwa-fair/1 (read-only) --------------------------------------------------------------
    @staticmethod
    def read_only_v1(match: Match, what: str) -> NoReturn:
        """qahwa-fair/1's seating (``/seed``, ``/start``): 404 for a v2 match, whose seats
        commit and reveal; 409 for a v1 match, which is read-only (migration 0008 ended every
        v1 match that was still running; the service never writes v1 again)."""
        if match.signed:
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
        with self.parts.reading(match_id, kind=kind) as match:
            if seat is None:
                match.auth(token)
            else:
                match.own_seat(token, seat)
            self.read_only_v1(match, "POST .../seed" if seat is not None else "POST .../start")
        raise AssertionError("unreachable")  # pragma: no cover

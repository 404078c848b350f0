"""Plain rng sessions (``/v1/rng``): one-seat matches of the game ``rng`` (games/rng.py).

qahwa-fair/2 (fairness-v2.md §3): the session is created with the server's signed commit
record only; the client sends its ``client_seed`` and ``nonce`` after it holds that record
(``/seed``), the server computes the seat's commitment, signs the lock (``reveal_by`` =
``locked_at``, ``end_by`` = ``locked_at`` plus the idle expiry) and logs it; then draws.
Closing (or ``end_by``) ends it and logs the reveal record.
"""

from __future__ import annotations

from typing import Any

from fairness import ClientSeedError, SeedError, check_client_seed, parse_nonce, seed_commitment

from .errors import Conflict, Invalid
from .kinds import EventType, SeedSource
from .limits import ResultBytes, check_session_room
from .matches import MatchService
from .store import FINISHED, KIND_RNG, SEATING


class RngSessions:
    """Open, seed, draw from and close plain dice/shuffle sessions over the match service."""

    def __init__(self, matches: MatchService) -> None:
        self.matches = matches
        self.result_bytes = ResultBytes()

    def create(self) -> dict[str, Any]:
        out, tokens = self.matches.create(
            kind=KIND_RNG, game="rng", ruleset="{}", seats=[("session", False)]
        )
        out["session_id"] = out["match_id"]
        out["token"] = tokens[0]
        return out

    def seed(
        self, session_id: str, *, token: str | None, client_seed: str, nonce: str | None
    ) -> dict[str, Any]:
        """Lock the session with the client's seed and nonce (the server computes the
        seat's commitment); the session then draws (a qahwa-fair/1 session: 409, read-only)."""
        svc = self.matches
        with svc.writing(session_id, kind=KIND_RNG) as match:
            match.auth(token)
            m = match.m
            if not match.signed:
                svc.seating.read_only_v1(match, "POST .../seed")
            if m.status != SEATING or m.lock is not None:
                raise Conflict("the session already has its seed", "not_seating")
            if nonce is None:
                raise Invalid(
                    "send the nonce with the client_seed (32 random bytes, 64 hex)", "bad_reveal"
                )
            try:
                check_client_seed(client_seed)
                com = seed_commitment(m.id, 0, parse_nonce(nonce), client_seed)
            except ClientSeedError as exc:
                raise Invalid(str(exc), "bad_client_seed") from None
            except SeedError as exc:
                raise Invalid(str(exc), "bad_reveal") from None
            match.tx.set_seat(
                match.seats()[0],
                seed_commitment=com,
                client_seed=client_seed,
                nonce=nonce,
                revealed=True,
                seed_source=SeedSource.PLAYER,
            )
            match.lock()
            match.start()
            match.tx.touch()
            return {
                "session_id": m.id,
                "match_id": m.id,
                "seat": 0,
                "status": m.status,
                "version": m.version,
                "chain": m.chain,
                "lock": svc.lock_record(m),
                "log_index": m.lock_index,
                "receipt": svc.start_receipt(m),
            }

    def draw(self, session_id: str, *, token: str | None, action: dict[str, Any]) -> dict[str, Any]:
        svc = self.matches
        with svc.writing(session_id, kind=KIND_RNG) as match:
            match.auth(token)
            m = match.m
            if m.status == SEATING:
                raise Conflict(
                    "the session has no seed yet: POST .../seed with your "
                    "client_seed and nonce first",
                    "not_started",
                )
            if m.status == FINISHED:
                raise Conflict("the session is closed", "match_over")
            match.writable()
            settings = svc.settings
            draws: list[Any] = getattr(match.tx.engine(), "draws", [])
            is_draw = action.get("type") == "draw"
            if is_draw:
                check_session_room(draws, max_draws=settings.max_session_draws)
                before = self.result_bytes.total(m.id, draws)
            logged, receipt = match.move(0, action)
            if is_draw:
                self.result_bytes.add(m.id, draws, before, max_bytes=settings.max_transcript_bytes)
            out: dict[str, Any] = {"session_id": m.id, "version": m.version, "status": m.status}
            drawn = [ev for ev in logged if ev.get("type") == EventType.CHANCE]
            if drawn:  # the draw's event (a close draws none); only its args may be absent
                out.update({k: drawn[0].get(k) for k in ("seq", "label", "kind", "args", "result")})
            out["chain"] = m.chain
            out["receipt"] = receipt
            return out

    def close(self, session_id: str, *, token: str | None) -> dict[str, Any]:
        out = self.draw(session_id, token=token, action={"type": "close"})
        transcript = self.matches.transcript(session_id, kind=KIND_RNG)
        return {
            "session_id": session_id,
            "status": out["status"],
            "server_seed": transcript["server_seed"],
            "transcript": transcript,
            "receipt": out["receipt"],
        }

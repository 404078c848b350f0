"""Plain rng sessions (``/v1/rng``): one-seat matches of the game ``rng`` (games/rng.py)."""

from __future__ import annotations

from typing import Any

from fairness import check_client_seed

from .errors import Conflict, user_errors
from .limits import ResultBytes, check_session_room
from .matches import MatchService
from .store import FINISHED, KIND_RNG, SEATING, Tx


class RngSessions:
    """Open, draw from and close plain dice/shuffle sessions over the match service."""

    def __init__(self, matches: MatchService) -> None:
        self.matches = matches
        self.result_bytes = ResultBytes()

    def create(self, *, client_seed: str | None) -> dict[str, Any]:
        if client_seed is not None:
            with user_errors():
                check_client_seed(client_seed)
        out, tokens = self.matches.create(kind=KIND_RNG, game="rng", ruleset="{}",
                                          names=["session"], client_seed=client_seed)
        out["session_id"] = out["match_id"]
        out["token"] = tokens[0]
        return out

    def draw(self, session_id: str, *, token: str | None,
             action: dict[str, Any]) -> dict[str, Any]:

        def fn(tx: Tx) -> dict[str, Any]:
            tx.auth(token)
            if tx.m.status == SEATING:
                tx.start()
            if tx.m.status == FINISHED:
                raise Conflict("the session is closed", "match_over")
            settings = self.matches.settings
            draws: list[Any] = getattr(tx.engine(), "draws", [])
            is_draw = action.get("type") == "draw"
            if is_draw:
                check_session_room(draws, max_draws=settings.max_session_draws)
                before = self.result_bytes.total(tx.m.id, draws)
            drawn = self.matches.apply(tx, seat=0, action=action)
            if is_draw:
                self.result_bytes.add(tx.m.id, draws, before,
                                      max_bytes=settings.max_transcript_bytes)
            out: dict[str, Any] = {"session_id": tx.m.id, "version": tx.m.version,
                                   "status": tx.m.status}
            if drawn:
                ev = drawn[0]
                out.update({"seq": tx.m.next_seq - 1, "label": ev["label"], "kind": ev["kind"],
                            "args": ev.get("args"), "result": ev["result"]})
            return out

        return self.matches.write(session_id, kind=KIND_RNG, fn=fn)

    def close(self, session_id: str, *, token: str | None) -> dict[str, Any]:
        out = self.draw(session_id, token=token, action={"type": "close"})
        transcript = self.matches.transcript(session_id, kind=KIND_RNG)
        return {"session_id": session_id, "status": out["status"],
                "server_seed": transcript["server_seed"], "transcript": transcript}

    def seed(self, session_id: str, *, token: str | None, client_seed: str) -> dict[str, Any]:
        return self.matches.give_seed(session_id, kind=KIND_RNG, seat=0, token=token,
                                      client_seed=client_seed)

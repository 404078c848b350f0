"""Reads: a match's public record, a seat's view, the lock, the events and the transcript,
each in one read of the match (:meth:`.match.Parts.reading`), changing nothing (but for a
match found past a deadline, which is ended first)."""

from __future__ import annotations

import json
from typing import Any

from games.transcript import build_transcript

from ..errors import Conflict
from ..store import FINISHED, KIND_MATCH
from .match import Phase


class Reads(Phase):
    """The reads of a match."""

    def public(self, match_id: str, *, kind: str) -> dict[str, Any]:
        """The public record and view of a match (no hidden cards or tiles), with the chain
        head for spectators."""
        with self.parts.reading(match_id, kind=kind) as match:
            m = match.m
            out = {
                "match_id": m.id,
                "protocol": m.protocol,
                "game": m.game,
                "ruleset": m.ruleset,
                "deal": match.deal,
                "commitment": m.commitment,
                "status": m.status,
                "version": m.version,
                "seats": match.seats_public(),
                "created_at": m.created_at,
                "started_at": m.started_at,
                "ended_at": m.ended_at,
                "log_index": m.lock_index if match.signed else m.log_index,
                "record": json.loads(m.record),
                "result": json.loads(m.result) if m.result else None,
                "public_state": None if m.started_at is None else match.tx.engine().view(None),
            }
            if match.signed:
                out.update(match.signed_fields())
            return out

    def state(
        self,
        match_id: str,
        *,
        kind: str = KIND_MATCH,
        token: str | None,
        events_after: int | None = None,
        brief: bool = False,
    ) -> dict[str, Any]:
        """The token's seat's view, with ``version`` (v2: and ``chain``, ``lock``);
        ``events_after``: with the public log's events after it, up to the view's, as
        :meth:`events` shows them (one read of the log with the view); ``brief``: a sealed
        deal's state without what the log holds (:meth:`Match.view`)."""
        with self.parts.reading(match_id, kind=kind) as match:
            view = match.view(match.auth(token), brief)
            head = self.parts.head(match.m)
            if head is not None:
                view["head"] = head
            if events_after is not None:
                view["events"] = match.log_after(events_after)[0]
            return view

    def lock(self, match_id: str, *, kind: str = KIND_MATCH) -> dict[str, Any]:
        """The signed lock and its log index, with a receipt for chain[-1] (409 before)."""
        with self.parts.reading(match_id, kind=kind) as match:
            m = match.m
            match.writable("the lock")  # a v1 match has none: 404
            if m.lock is None:
                raise Conflict(
                    "not every seat has committed yet: the match is not locked", "not_locked"
                )
            return {
                "match_id": m.id,
                "lock": json.loads(m.lock),
                "log_index": m.lock_index,
                "receipt": self.parts.start_receipt(m),
            }

    def events(
        self, match_id: str, *, kind: str, after: int, with_chains: bool = False
    ) -> dict[str, Any]:
        """Events with seq > after: redacted while the match runs, whole after the end;
        v2: ``chain`` is the head (and with ``with_chains`` the head after each event)."""
        with self.parts.reading(match_id, kind=kind) as match:
            m = match.m
            evs, chains = match.log_after(after)
            out: dict[str, Any] = {
                "match_id": m.id,
                "game": m.game,
                "status": m.status,
                "version": m.version,
                "next_seq": m.next_seq,
                "events": evs,
            }
            if match.signed:
                out["chain"] = m.chain
            if with_chains:  # the stream's: with the signed head it stands at now
                out["chains"] = chains
                out["head"] = self.parts.head(m)
            return out

    def transcript(self, match_id: str, *, kind: str) -> dict[str, Any]:
        """The signed transcript of an ended match (409 before)."""
        with self.parts.reading(match_id, kind=kind) as match:
            m, tx = match.m, match.tx
            if m.status != FINISHED:
                raise Conflict(
                    "the transcript (and the server seed) is published when the match has ended",
                    "not_finished",
                )
            if match.signed:
                if m.lock is None:
                    raise Conflict(
                        "the match never locked: nothing was committed to, so nothing is revealed",
                        "not_locked",
                    )
                made = self.parts.made_transcript(m)
                if made is not None:  # made at its end: its text is this answer's
                    return made
                doc = match.transcript_doc()
                assert m.transcript_sig is not None
                doc["signature"] = json.loads(m.transcript_sig)
                return doc
            return self.parts.signer.signed(  # qahwa-fair/1's, signed as it is read
                build_transcript(
                    match_id=m.id,
                    game=m.game,
                    ruleset=m.ruleset,
                    server_seed=tx.store.server_seed(tx.c, m.id),
                    seats=[
                        {
                            "seat": st.seat,
                            "name": st.name,
                            "client_seed": st.client_seed,
                            "seed_source": st.seed_source,
                        }
                        for st in match.seats()
                    ],
                    events=tx.store.events_after(tx.c, m.id, before=m.next_seq),
                    result=json.loads(m.result) if m.result else None,
                    extra={
                        "created_at": m.created_at,
                        "ended_at": m.ended_at,
                        "log_index": m.log_index,
                    },
                )
            )

"""Reads: a match's public record, a seat's view, the lock, the events and the transcript.

Each runs in one read of the match (:meth:`Deadlines.reading`) and changes nothing, but for
a match found past a deadline, which is ended first.
"""

from __future__ import annotations

import json
from typing import Any

from games.sealed_limits import sealed_limits
from games.transcript import build_transcript

from ..errors import Conflict
from ..models import Seat
from ..store import FINISHED, KIND_MATCH, PLAYING, SEATING, MatchRow, Tx, iso_of
from .deadlines import Deadlines


class Reads(Deadlines):
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
        with self.reading(match_id, kind=kind) as tx:
            m = tx.m
            out = {
                "match_id": m.id,
                "protocol": m.protocol,
                "game": m.game,
                "ruleset": m.ruleset,
                "deal": m.variant.PROTOCOL.deal,
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

    def _seat_view(self, tx: Tx, seat: int, seats: list[Seat] | None = None) -> dict[str, Any]:
        """The seat's view; ``seats``: the match's seat rows if the caller has them."""
        m = tx.m
        if m.started_at is None:
            rows = seats if seats is not None else tx.seats()
            view: dict[str, Any] = {
                "game": m.game,
                "status": m.status,
                "turn": None,
                "seat": seat,
                "legal_actions": [],
                "seats": self._seats_public(m, rows),
            }
            if m.result is not None:
                view["result"] = json.loads(m.result)
            if m.variant.PROTOCOL.sealed:  # the table's limits are known at its seating
                house = [st.seat for st in rows if st.house]
                view["sealed"] = {"limits": sealed_limits(m.game, len(rows), house)}
        else:
            view = tx.engine().view(seat)
        view["version"] = m.version
        view["match_id"] = m.id
        view["deal"] = m.variant.PROTOCOL.deal
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

    def state(
        self,
        match_id: str,
        *,
        kind: str = KIND_MATCH,
        token: str | None,
        events_after: int | None = None,
    ) -> dict[str, Any]:
        """The token's seat's view, with ``version`` (v2: and ``chain``, ``lock``);
        ``events_after``: with the public log's events after it, up to the view's, as
        :meth:`events` shows them (one read of the log with the view)."""
        with self.reading(match_id, kind=kind) as tx:
            view = self._seat_view(tx, tx.auth(token))
            m = tx.m
            head = self._head(m)
            if head is not None:
                view["head"] = head
            if events_after is not None:
                evs: list[dict[str, Any]] = []
                if events_after < m.next_seq - 1:
                    evs = self.store.events_after(tx.c, m.id, events_after, before=m.next_seq)
                if m.status != FINISHED:
                    evs = [m.variant.redact(e) for e in evs]
                view["events"] = evs
            return view

    def lock(self, match_id: str, *, kind: str = KIND_MATCH) -> dict[str, Any]:
        """The signed lock and its log index, with a receipt for chain[-1] (409 before)."""
        with self.reading(match_id, kind=kind) as tx:
            m = tx.m
            self._signed_only(m, "the lock")
            if m.lock is None:
                raise Conflict(
                    "not every seat has committed yet: the match is not locked", "not_locked"
                )
            return {
                "match_id": m.id,
                "lock": json.loads(m.lock),
                "log_index": m.lock_index,
                "receipt": self._start_receipt(m),
            }

    def events(
        self, match_id: str, *, kind: str, after: int, with_chains: bool = False
    ) -> dict[str, Any]:
        """Events with seq > after: redacted while the match runs, whole after the end;
        v2: ``chain`` is the head (and with ``with_chains`` the head after each event)."""
        with self.reading(match_id, kind=kind) as tx:
            m = tx.m
            evs: list[dict[str, Any]] = []
            chains: list[str | None] = []
            if after < m.next_seq - 1:
                evs, chains = self.store.events_and_chains(tx.c, m.id, after, before=m.next_seq)
            if m.status != FINISHED:
                evs = [m.variant.redact(e) for e in evs]
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
            if with_chains:  # the stream's: with the signed head it stands at now
                out["chains"] = chains
                out["head"] = self._head(m)
            return out

    def transcript(self, match_id: str, *, kind: str) -> dict[str, Any]:
        """The signed transcript of an ended match (409 before)."""
        with self.reading(match_id, kind=kind) as tx:
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

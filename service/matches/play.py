"""Play: a seat's action (:meth:`Play.act`) and a resignation.

A move reads top to bottom here: the match loaded in one write transaction, its deadlines
settled (:meth:`Deadlines.writing`), the seat from its token, the version and the seat's
signature over the chain head checked (fairness-v2.md §7), then :meth:`Play.move`: the
engine applies the action and builds its event with the signature in it, the events are
logged (``Tx.append`` extends the chain), the match ends (:meth:`Core._finish`) or the next
step is owed (:func:`arm`), and the receipt is signed for the new head.
"""

from __future__ import annotations

from typing import Any

from fairness import check_canonical_value
from fairness.records import RecordError, check_seat_signature

from ..errors import Conflict, Invalid, user_errors
from ..kinds import EndReason, EventType
from ..store import FINISHED, KIND_MATCH, SEATING, MatchRow, Tx
from .core import NOT_LOCKED
from .deadlines import arm
from .reads import Reads


class Play(Reads):
    def _seat_sig(
        self, m: MatchRow, seat: int, event: dict[str, Any], sig: str | None, prev: str | None
    ) -> str | None:
        """Check a seat's request against the chain head and its key (fairness-v2.md §7):
        409 ``stale_chain`` when ``prev`` is not the head, 422 ``bad_signature`` when a keyed
        seat's signature is missing or wrong (or an unkeyed seat sends one)."""
        if prev is not None and prev != m.chain:
            raise Conflict(
                f"prev is not the chain head {m.chain}: fetch /state and retry", "stale_chain"
            )
        locked = self._locked(m)
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

    def move(
        self, tx: Tx, seat: int, action: dict[str, Any], sig: str | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Apply one checked action in ``tx``: the engine builds the action event (with the
        seat's signature ``sig``) and the chance events it drew, they are logged, the match
        ends or the next step is owed. Returns the events logged (with ``seq``) and the
        receipt for the head after them."""
        engine = tx.engine()
        try:
            with user_errors():
                produced = engine.apply(seat, action, sig=sig)
        except Conflict:  # not your turn / match over: checked before any change
            raise
        except BaseException:
            tx.dirty = True  # an engine error should leave it unchanged; do not rely on it
            raise
        tx.dirty = True
        logged = tx.append(produced)
        if engine.outcome is not None:
            self._finish(tx)
        else:
            arm(tx)
        tx.touch()
        return logged, self._receipt(tx)

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
        """``POST .../actions``: the token's seat plays ``action`` at ``version``; keyed
        seats sign it over ``prev``, the chain head."""
        with self.writing(match_id, kind=KIND_MATCH) as tx:
            seat = tx.auth(token)
            m = tx.m
            if m.status == SEATING:
                raise Conflict(
                    "the match has not started: every seat commits, then reveals after the lock",
                    "not_started",
                )
            if m.status == FINISHED:
                raise Conflict("the match has ended", "match_over")
            self._signed_only(m)
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
                m, seat, {"type": EventType.ACTION, "seat": seat, "action": action}, sig, prev
            )
            first_seq = m.next_seq
            logged, receipt = self.move(tx, seat, action, sig)
            if m.status != FINISHED:  # as the public log shows them now (GET .../events)
                logged = [m.variant.redact(e) for e in logged]
            # the new view, from the engine as committed (sent only after the commit)
            return {
                "match_id": m.id,
                "seat": seat,
                "version": m.version,
                "status": m.status,
                "first_seq": first_seq,
                "state": self._seat_view(tx, seat),
                "chain": m.chain,
                "receipt": receipt,
                # what the action logged (its event, the chance events it drew): a seat
                # that follows the log takes them from here instead of reading it again
                "events": logged,
            }

    def resign(
        self, match_id: str, *, token: str | None, sig: str | None = None, prev: str | None = None
    ) -> dict[str, Any]:
        """``POST .../resign``: the token's seat forfeits (keyed seats sign the end event
        over ``prev``); before the lock the match just closes, nothing logged."""
        with self.writing(match_id, kind=KIND_MATCH) as tx:
            seat = tx.auth(token)
            m = tx.m
            if m.status == FINISHED:
                raise Conflict("the match has ended", "match_over")
            self._signed_only(m)
            if m.status == SEATING:
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
            sig = self._seat_sig(m, seat, end, sig, prev)
            engine = tx.changing()
            tx.append(engine.end_match(EndReason.RESIGNED, [seat], sig=sig))
            self._finish(tx)
            tx.touch()
            assert engine.outcome is not None
            return {
                "match_id": m.id,
                "status": m.status,
                "version": m.version,
                "result": engine.outcome.to_json(),
                "chain": m.chain,
                "receipt": self._receipt(tx),
            }

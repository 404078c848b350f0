"""What every phase of a match shares: the service's parts (database, settings, signer,
store), the lock each match fixes (parsed once per process), receipts, and the end of a
match (the result stored, the transcript signed, the reveal record logged)."""

from __future__ import annotations

import json
from typing import Any

from fairness import SecretBox, chain_start, format_time_ms
from fairness.records import Head, Lock, Read, Receipt, Reveal, seat_key
from games.transcript import build_locked_transcript

from .. import translog
from ..clock import SYSTEM_CLOCK, Clock
from ..db import Database
from ..errors import Conflict, NotFound
from ..keys import RecordSigner
from ..kinds import EndReason, Status
from ..lru import LRU
from ..settings import Settings
from ..store import MatchRow, Store, Tx, dumps

#: The result of a v2 match that never locked: nothing was committed to, nothing is revealed
#: and nothing is logged (fairness-v2.md §3).
NOT_LOCKED: dict[str, Any] = {
    "status": Status.FINISHED,
    "reason": EndReason.NOT_LOCKED,
    "forfeited": [],
    "winners": [],
}
REVEAL_SECONDS, MAX_SECONDS, TURN_SECONDS = 120, 86_400, 300  # v2 ruleset defaults (§3, §7)


def view_json(obj: dict[str, Any]) -> str:
    """``dumps(obj)`` with each record read from its stored text (a lock,
    :class:`fairness.records.Read`, at the top or in a nested ``state`` view) written as
    that text: the same JSON value; the spliced keys come last."""
    spliced = {
        k: v
        for k, v in obj.items()
        if isinstance(v, Read) or (k == "state" and isinstance(v, dict))
    }
    if not spliced:
        return dumps(obj)
    rest = dumps({k: v for k, v in obj.items() if k not in spliced})
    parts = [
        f"{dumps(k)}:{v.text if isinstance(v, Read) else view_json(v)}" for k, v in spliced.items()
    ]
    return rest[:-1] + ("," if rest != "{}" else "") + ",".join(parts) + "}"


class _Locked:
    """What a match's lock fixes, derived once per process: the lock record opened from its
    stored text (:meth:`fairness.records.Lock.open`; ``record``: the signed JSON as read,
    with that text), chain[-1], the seats' parsed public keys and the receipt for chain[-1]
    (Ed25519 signatures are deterministic: the same receipt is signed again byte for byte,
    so it is kept)."""

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


class Core:
    """The parts of the match service and what its phases share."""

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
        self._locks = LRU[str, _Locked](4096)

    @staticmethod
    def _signed_only(m: MatchRow, what: str | None = None) -> None:
        """Only a signed protocol's match is written: qahwa-fair/1 is read-only (migration
        0008 ended every v1 match, so none is running). ``what`` names a qahwa-fair/2 path a
        v1 match does not have (commit, reveal, the lock): 404; a write otherwise 409."""
        if m.proto.signed:
            return
        if what is not None:
            raise NotFound(f"{what} is qahwa-fair/2's; this is a read-only qahwa-fair/1 match")
        raise Conflict("qahwa-fair/1 matches are read-only: this one has ended", "match_over")

    # -- the lock --------------------------------------------------------------------------
    def _locked(self, m: MatchRow) -> _Locked:
        """What the match's lock fixes, parsed once (a lock is immutable once committed;
        the stored text is compared, so a lock of a transaction that rolled back is never
        served from here)."""
        assert m.lock is not None
        found = self._locks.get(m.id)
        if found is not None and found.record.text == m.lock:
            return found
        found = _Locked(m.lock)
        self._locks.put(m.id, found)
        return found

    def _lock_of(self, m: MatchRow) -> dict[str, Any]:
        """The match's signed lock record as stored (a :class:`fairness.records.Read`)."""
        return self._locked(m).record

    def _log(self, tx: Tx, record: dict[str, Any], at: str) -> int:
        """Append a signed record (a lock, a reveal) to the log in ``tx``; its index."""
        tx.logged = True
        return translog.add(self.db, tx.s, record, match_id=tx.m.id, at=at)

    # -- receipts (fairness-v2.md §7) ------------------------------------------------------
    def _start_receipt(self, m: MatchRow) -> dict[str, Any]:
        """The signed receipt for chain[-1], whose time is the lock's ``locked_at``: the
        same for every commit and reveal of a match (signed once per process)."""
        locked = self._locked(m)
        found = locked.start_receipt
        if found is None or found["signature"]["key_id"] != self.signer.key_id:
            found = locked.start_receipt = Receipt(
                m.id, -1, locked.start.hex(), locked.record["locked_at"]
            ).sign(self.signer)
        return {**found, "signature": dict(found["signature"])}

    def _receipt(self, tx: Tx) -> dict[str, Any]:
        """The signed receipt for the head after the events ``tx`` appended last, with
        their time ``at``."""
        m = tx.m
        assert tx.head_at_us is not None and m.chain is not None, "a receipt follows an append"
        return Receipt(m.id, m.next_seq - 1, m.chain, format_time_ms(tx.head_at_us)).sign(
            self.signer
        )

    def _head(self, m: MatchRow) -> dict[str, Any] | None:
        """The signed head (§7, heads) of a locked v2 match as it stands now: its newest
        seq and chain head, and this server's time; None before the lock."""
        if not m.proto.signed or m.chain is None or m.lock is None:
            return None
        return Head(m.id, m.next_seq - 1, m.chain, self.store.now_iso()).sign(self.signer)

    # -- the end ---------------------------------------------------------------------------
    def _finish(self, tx: Tx, result: dict[str, Any] | None = None) -> None:
        """The match ended: store the result (the engine's outcome unless given), sign the
        transcript and log the reveal record (§8)."""
        tx.finish(result)
        m = tx.m
        signed = self.signer.signed(self._transcript_doc(tx))
        m.transcript_sig = dumps(signed["signature"])
        record = Reveal.of_transcript(
            signed,
            lock_index=m.lock_index,
            chain=m.chain,
            result=json.loads(m.result) if m.result else {},
            ended_at=m.ended_at,
        ).sign(self.signer)
        self._log(tx, record, self.store.now_iso())

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
            protocol=m.variant.PROTOCOL.name,
        )

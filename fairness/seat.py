"""What makes a seat's client conforming (fairness-v2.md §3a), without any I/O: one
:class:`SeatProtocol` that every seat drives — ``qahwa_client``'s sync and async seats,
``verify demo``'s bots and the tests' raw-HTTP seats. It keeps the seat's secrets, checks
every record the server signs before the seat acts on it (the lock before any reveal), signs
the seat's events, keeps every request and receipt, checks the server's clock (§3a.8) and
reports a match it must dispute as a :class:`Dispute` with its evidence; each method says
which checks it makes.

The log's inclusion proof is checked with the RFC 9162 function the caller passes
(``tlog.root_from_inclusion``): ``tlog`` sits beside ``fairness``, which does not import it.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .derive import check_client_seed, new_client_seed, parse_hex
from .protocol import (
    BACKDATE_SLACK,
    CHAIN_SECRET_BYTES,
    PROTOCOL_V2,
    PROTOCOL_V3,
    canonical_json,
    chain_next,
    chain_start,
    format_time_ms,
    new_nonce,
    parse_time_us,
    roll_chain,
    seat_sig_message,
    seed_commitment,
)
from .records import (
    Commit,
    Lock,
    RecordError,
    Signer,
    open_head,
    open_receipt,
    open_refusal,
    open_transcript,
    open_tree_head,
    public_key_b64,
    request_sha256,
)

#: the root an RFC 9162 inclusion proof leads to: (index, tree size, leaf hash, audit path)
RootFromInclusion = Callable[[int, int, bytes, Sequence[bytes]], bytes]


class ClientError(Exception):
    """The client refused to go on: what the server sent fails a check of fairness-v2.md §3a
    (or the player asked for something a conforming client does not do)."""


class NotOurMatch(ClientError):
    """The lock (or the commit record) is not what this seat agreed to: the seat does not
    reveal, and the match is not its own (fairness-v2.md §3a.4)."""

    def __init__(self, match_id: str, seat: int, reason: str) -> None:
        super().__init__(
            f"match {match_id} is not this seat's own (seat {seat}): {reason}; "
            f"the seat did not reveal"
        )
        self.match_id = match_id
        self.seat = seat
        self.reason = reason


class FreshRollsRefused(NotOurMatch):
    """A tawla or mahbusa ruleset with ``"fresh_rolls": false``: the operator could compute
    every roll in advance. A conforming client refuses it unless the player asked for it
    (fairness-v2.md §3a.3): ``computable_rolls=True``, or that ruleset in ``create_match``."""

    def __init__(self, match_id: str, seat: int, game: str) -> None:
        super().__init__(
            match_id,
            seat,
            f'its {game} ruleset has "fresh_rolls": false, so the operator could compute '
            "every roll in advance; a conforming client refuses it unless asked for "
            "(computable_rolls=True, fairness-v2.md §3a.3)",
        )


class TranscriptMismatch(ClientError):
    """The transcript disagrees with what this seat holds: the lock it revealed against or a
    signed receipt. Keep the lock and the receipts: they are signed evidence."""


FRESH_ROLL_TYPES = ("roll", "roll_value")
BOARD_GAMES = ("tawla", "mahbusa")  # the games with fresh rolls (fairness-v2.md §6)
MAX_SKEW = 30.0  # seconds the server's clock may differ from this client's (§3a.8)


TURN_SECONDS = 300  # the ruleset's default (fairness-v2.md §7)


def chain_heads(lock: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> list[bytes]:
    """[chain[-1], chain[0], …, chain[len(events)-1]] (§7)."""
    heads = [chain_start(lock)]
    for ev in events:
        heads.append(chain_next(heads[-1], ev))
    return heads


def timeout_deadline(lock: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> int | None:
    """The deadline (microseconds since the epoch) of the seat a final timeout event names
    (§7, times): the ``at`` of the event before it (the lock's ``locked_at`` when no action
    came before) plus the ruleset's ``turn_seconds``. None when the events carry no times to
    tell it."""
    n = len(events) - 1
    if n < 0:
        return None
    try:
        rules = json.loads(lock.get("ruleset", "{}"))
        turn = rules.get("turn_seconds", TURN_SECONDS) if isinstance(rules, dict) else None
        if isinstance(turn, bool) or not isinstance(turn, int):
            return None
        if any(e.get("type") == "action" for e in events[:n]):
            since = events[n - 1].get("at")
            if since is None:
                return None
            return parse_time_us(since) + turn * 1_000_000
        return parse_time_us(lock.get("locked_at")) + turn * 1_000_000
    except ValueError:
        return None


@dataclass
class Dispute:
    """A match this seat reports as disputed (fairness-v2.md §3a.8), with its evidence.

    ``kind``: ``early_timeout`` (the timeout's ``at`` is before its deadline: signed proof
    against the server), ``censored`` (the server ended the match by this seat's timeout
    while the seat holds its signed request, sent before the deadline, never receipted),
    ``clock`` (a time of the server's is more than ``max_skew`` from this client's clock, or
    a timeout disagrees with it); at a sealed table (fairness-v3, "The conforming sealed
    seat") ``sealed_view`` (a view that disagrees with the seat's own deal machine),
    ``sealed_step`` (a deal step asked for that its machine does not owe: a share of its own
    item, an ``open`` no rule asks for, its key before the hand's play is over) and
    ``sealed_log`` (a deal step in the log that does not verify), ``backdated`` (an event stamped
    before a signed head the server showed earlier, which did not include it: signed proof,
    §7 heads). ``evidence``: ``requests`` (the unreceipted signed requests
    with their local send times), ``events`` (the match's events as received), ``times``
    (the deadline, the times compared, this client's clock when it checked), ``head``
    and ``signed_after`` (the signed heads or receipt before and after a back-dated event)."""

    match_id: str
    seat: int
    kind: str
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# Every client seed, nonce and roll-chain secret this process has used: a conforming client
# never uses one twice, in any match or session (§3a.1). Nonces and secrets are 32 fresh random
# bytes, so only a seed the player gives can repeat; it is refused.
_used: set[str] = set()
_used_lock = threading.Lock()


def _use_once(kind: str, value: str) -> None:
    with _used_lock:
        if f"{kind}:{value}" in _used:
            raise ClientError(
                f"this {kind} was already used by this client: a conforming "
                f"client never uses a {kind} twice (fairness-v2.md §3a)"
            )
        _used.add(f"{kind}:{value}")


@dataclass(frozen=True)
class Terms:
    """What the player asked for, checked against the signed commit record before the seat
    commits (§3a.3): the game, the rules the player set (the record lists every rule; the ones
    given here must hold exactly those values), the seat names and house flags."""

    game: str | None = None
    ruleset: Mapping[str, Any] | None = None
    names: Sequence[str] | None = None
    house: Sequence[bool] | None = None
    #: accept a tawla or mahbusa ruleset with ``"fresh_rolls": false`` (rolls the operator
    #: could compute in advance); asking for that ruleset (``ruleset``) accepts it too
    computable_rolls: bool = False

    def allow_computable_rolls(self) -> bool:
        return self.computable_rolls or (
            self.ruleset is not None and self.ruleset.get("fresh_rolls") is False
        )


def trusted_keys(keys: Any) -> dict[str, str]:
    """key_id → base64 public key, from ``GET /v1/keys``'s answer (a dict or a model) or a
    mapping given by the player."""
    if hasattr(keys, "model_dump"):
        keys = keys.model_dump(mode="json")
    if isinstance(keys, Mapping) and isinstance(keys.get("keys"), list):
        return {
            k["key_id"]: k["public_key"]
            for k in keys["keys"]
            if isinstance(k, Mapping)
            and isinstance(k.get("key_id"), str)
            and isinstance(k.get("public_key"), str)
        }
    if isinstance(keys, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in keys.items()
    ):
        return dict(keys)
    raise ClientError(
        "trusted keys are GET /v1/keys's answer or a mapping key_id → base64 public key"
    )


class SeatProtocol:
    """One seat's side of qahwa-fair/2 (fairness-v2.md §3a). ``root_from_inclusion`` checks
    the lock's log inclusion proof (``tlog.root_from_inclusion``)."""

    def __init__(
        self,
        match_id: str,
        seat: int,
        *,
        root_from_inclusion: RootFromInclusion,
        terms: Terms | None = None,
        keyed: bool = True,
        clock: Callable[[], float] = time.time,
        max_skew: float = MAX_SKEW,
    ) -> None:
        self.match_id = match_id
        self.root_from_inclusion = root_from_inclusion
        #: this client's own clock (epoch seconds) and how far the server's may differ
        self.clock = clock
        self.max_skew = max_skew
        #: the disputes this seat reports (§3a.8), each once
        self.disputes: list[Dispute] = []
        #: the last deadline a view of this seat showed ({"seat", "seq", "due"})
        self.last_deadline: dict[str, Any] | None = None
        self.seat = seat
        self.terms = terms
        self.keyed = keyed
        self.record: dict[str, Any] | None = None
        self.client_seed: str | None = None
        self.nonce: str | None = None
        self.seed_commitment: str | None = None
        self.signer: Signer | None = None
        #: the seat key (base64 Ed25519 public key) and roll chain (c[0] .. c[65536]) it made
        self.key: str | None = None
        self.roll_chain: list[bytes] | None = None
        self.commit_refused: str | None = None
        self.lock: dict[str, Any] | None = None
        self.log_index: int | None = None
        self.revealed = False
        self.receipts: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.max_value_sent = -1
        self.receipts_path: Path | None = None
        #: the newest signed head this seat was shown (§7, heads), and the newest seq whose
        #: event was held to the heads before it
        self.head: dict[str, Any] | None = None
        self.checked_seq = -1
        #: back-dating disputes waiting for a signed head or receipt that covers their
        #: event: (dispute, seq, chain[seq] as this seat computed it, the chain's epoch)
        self._uncovered: list[tuple[Dispute, int, str, int]] = []
        #: (seq, chain[seq]) as this seat computed it over the events it was shown, from the
        #: lock or (after a break: a redacted event, a gap) a signed head; each restart is a
        #: new epoch. None: broken, until the next signed head.
        self._own: tuple[int, bytes] | None = None
        self._epoch = 0
        #: the events this seat was shown, by seq
        self.seen: dict[int, dict[str, Any]] = {}
        #: chain[seq] as this seat computed it from the events it was shown (§3a.5)
        self.shown: dict[int, str] = {}

    # -- before committing (§3a.1, §3a.3) ------------------------------------------------------
    def not_ours(self, reason: str) -> NotOurMatch:
        return NotOurMatch(self.match_id, self.seat, reason)

    def accept_record(self, record: Any, keys: Mapping[str, str]) -> dict[str, Any]:
        """Check the signed commit record and what it says against the player's terms."""
        try:
            Commit.open(record, keys)
        except ValueError as exc:
            raise self.not_ours(str(exc)) from None
        assert isinstance(record, dict)
        if record["match_id"] != self.match_id:
            raise self.not_ours(f"the commit record is for match {record['match_id']!r}")
        seats = record["seats"]
        if not 0 <= self.seat < len(seats):
            raise self.not_ours(f"the commit record's seats do not list seat {self.seat}")
        rules = json.loads(record["ruleset"])
        t = self.terms
        if (
            record.get("game") in BOARD_GAMES
            and rules.get("fresh_rolls") is False
            and not (t is not None and t.allow_computable_rolls())
        ):
            raise FreshRollsRefused(self.match_id, self.seat, str(record.get("game")))
        if t is not None:
            if t.game is not None and record.get("game") != t.game:
                raise self.not_ours(
                    f"the commit record is for game {record.get('game')!r}, not {t.game!r}"
                )
            for k, v in (t.ruleset or {}).items():
                if k not in rules or canonical_json(rules[k]) != canonical_json(v):
                    raise self.not_ours(
                        f"the commit record's ruleset has {k}="
                        f"{json.dumps(rules.get(k))}, not the "
                        f"{json.dumps(v)} asked for"
                    )
            if t.names is not None and [s.get("name") for s in seats] != list(t.names):
                raise self.not_ours(
                    f"the commit record's seats are "
                    f"{[s.get('name') for s in seats]}, not {list(t.names)}"
                )
            house = (
                list(t.house)
                if t.house is not None
                else ([False] * len(seats) if t.names is not None else None)
            )
            if house is not None and [s.get("house") for s in seats] != house:
                raise self.not_ours(
                    f"the commit record's house seats are "
                    f"{[s.get('house') for s in seats]}, not {house}"
                )
        self.record = record
        return record

    def commit_body(self, client_seed: str | None = None) -> dict[str, Any]:
        """Make this seat's secrets (once) and the commit request (§2)."""
        if self.record is None:
            raise ClientError("commit only after the signed commit record was checked")
        if self.seed_commitment is None:
            if client_seed is not None:
                try:
                    seed = check_client_seed(client_seed)
                except ValueError as exc:
                    raise ClientError(
                        f"a client seed is 1-128 UTF-8 bytes, printable: {exc}"
                    ) from None
                _use_once("client seed", seed)
            else:
                seed = new_client_seed()
            nonce = new_nonce()
            self.client_seed, self.nonce = seed, nonce.hex()
            self.seed_commitment = seed_commitment(self.match_id, self.seat, nonce, seed)
            if self.keyed:
                self.signer = Signer.generate()
                self.key = public_key_b64(self.signer.public_key)
            if json.loads(self.record["ruleset"]).get("fresh_rolls") is True:
                secret = secrets.token_bytes(CHAIN_SECRET_BYTES)
                self.roll_chain = roll_chain(self.match_id, self.seat, secret)
        elif client_seed is not None and client_seed != self.client_seed:
            raise ClientError("this seat has already made its commitment with another seed")
        return self.commitments()

    def commitments(self) -> dict[str, Any]:
        """What this seat committed (the commit request's body, its entry in the lock)."""
        return {
            "seed_commitment": self.seed_commitment,
            "key": self.key,
            "roll_chain": self.roll_chain[0].hex() if self.roll_chain is not None else None,
        }

    def roll_value(self, k: int) -> str:
        """This seat's ``k``-th roll-chain value (k = 0, 1, …): c[k+1], hex (§6)."""
        assert self.roll_chain is not None
        if not 0 <= k < len(self.roll_chain) - 1:
            raise ClientError(
                f"value {k} is beyond the roll chain's {len(self.roll_chain) - 1} values"
            )
        return self.roll_chain[k + 1].hex()

    # -- before revealing (§3a.4) ------------------------------------------------------------
    def may_check_lock(self) -> None:
        """A seat whose own first commit was refused never reveals; nor one that did not
        commit through this client."""
        if self.commit_refused is not None:
            raise self.not_ours(f"its own commit was refused ({self.commit_refused})")
        if self.record is None or self.seed_commitment is None:
            raise ClientError("this seat has not committed through this client")

    def check_lock(
        self, lock: Any, log_index: Any, proof: Any, keys: Mapping[str, str]
    ) -> dict[str, Any]:
        """Every check of §3a.4; NotOurMatch names the first that fails."""
        self.may_check_lock()
        assert self.record is not None
        try:
            Lock.open(lock, keys).check_commit(self.record)
        except ValueError as exc:
            raise self.not_ours(str(exc)) from None
        signed: dict[str, Any] = lock
        mine = signed["seats"][self.seat]
        for k, v in self.commitments().items():
            if mine.get(k) != v:
                raise self.not_ours(
                    f"the lock's {k} at seat {self.seat} is {mine.get(k)!r}, not this seat's {v!r}"
                )
        self._check_inclusion(signed, log_index, proof, keys)
        self.lock, self.log_index = signed, log_index
        return signed

    def _check_inclusion(
        self, lock: dict[str, Any], log_index: Any, proof: Any, keys: Mapping[str, str]
    ) -> None:
        """The lock is leaf ``log_index`` of the log under a tree head signed by a trusted key
        (an RFC 9162 inclusion proof from ``GET /v1/log/proof``)."""
        if isinstance(log_index, bool) or not isinstance(log_index, int) or log_index < 0:
            raise self.not_ours(f"the lock has no log index ({log_index!r})")
        if not isinstance(proof, dict):
            raise self.not_ours(f"no inclusion proof of the lock at log index {log_index}")
        if proof.get("index") != log_index:
            raise self.not_ours(
                f"the inclusion proof is for index {proof.get('index')!r}, "
                f"not the lock's {log_index}"
            )
        leaf = proof.get("leaf")
        if not isinstance(leaf, dict) or canonical_json(leaf) != canonical_json(lock):
            raise self.not_ours(f"log entry {log_index} is not this lock")
        try:
            head = open_tree_head(proof.get("tree_head"), keys, what="log's tree head")
            size, path = head["tree_size"], proof.get("audit_path")
            if not isinstance(path, list) or proof.get("tree_size") != size:
                raise ValueError("the inclusion proof is malformed")
            got = self.root_from_inclusion(
                log_index,
                size,
                hashlib.sha256(b"\x00" + canonical_json(lock)).digest(),  # RFC 9162 leaf
                [parse_hex(p, 32, "an audit path hash") for p in path],
            )
            if got.hex() != head.get("root_hash"):
                raise ValueError(
                    f"the inclusion proof of index {log_index} leads to root "
                    f"{got.hex()[:16]}…, the signed tree head says "
                    f"{str(head.get('root_hash'))[:16]}…"
                )
        except ValueError as exc:
            raise self.not_ours(f"the lock is not shown in the log: {exc}") from None

    def reveal_body(self) -> dict[str, Any]:
        if self.lock is None:
            raise ClientError("reveal only after the lock was checked")
        assert self.client_seed is not None and self.nonce is not None
        return {"client_seed": self.client_seed, "nonce": self.nonce}

    # -- playing (§3a.6, §3a.7, §7) -----------------------------------------------------------
    def _keyed_at(self, view_lock: Any) -> bool:
        lock = self.lock if self.lock is not None else view_lock
        if not isinstance(lock, dict):
            return False
        try:
            return lock["seats"][self.seat]["key"] is not None
        except (KeyError, IndexError, TypeError):
            return False

    def with_value(
        self, action: dict[str, Any], *, turn: Any, legal: Any, fresh_roll: Any, values_used: Any
    ) -> dict[str, Any]:
        """A fresh-roll action with this seat's next roll-chain value, only if the view shows
        the seat owes it now (§6): a ``roll`` when the seat is on turn and may roll (its value
        goes with its decision to roll), a ``roll_value`` when the pending roll's ``owes``
        names this seat first."""
        assert self.roll_chain is not None
        kind = action.get("type")
        owes = fresh_roll.get("owes") if isinstance(fresh_roll, dict) else None
        if kind == "roll":
            owed = (
                turn == self.seat
                and fresh_roll is None
                and isinstance(legal, list)
                and {"type": "roll"} in legal
            )
        else:
            owed = turn == self.seat and isinstance(owes, list) and owes[:1] == [self.seat]
        if not owed:
            raise ClientError(
                f"seat {self.seat} owes no roll-chain value now (turn {turn!r}, "
                f"fresh_roll {fresh_roll!r}): a conforming client sends none"
            )
        if (
            not isinstance(values_used, list)
            or len(values_used) <= self.seat
            or isinstance(values_used[self.seat], bool)
            or not isinstance(values_used[self.seat], int)
        ):
            raise ClientError(
                f"the view's values_used ({values_used!r}) does not say which "
                f"value seat {self.seat} owes"
            )
        k = values_used[self.seat]
        if not 0 <= k <= self.max_value_sent + 1:
            raise ClientError(
                f"the view says seat {self.seat} has used {k} roll-chain "
                f"values, but this client sent only {self.max_value_sent + 1}: "
                "it does not skip ahead on its chain"
            )
        value = self.roll_value(k)
        if "value" in action and action["value"] != value:
            raise ClientError(
                f"{action['value']!r} is not this seat's roll-chain value {k}: "
                "a conforming client never sends another value for a step"
            )
        self.max_value_sent = max(self.max_value_sent, k)
        return {**action, "value": value}

    def action_body(
        self,
        action: Mapping[str, Any],
        *,
        version: int,
        chain: str | None,
        view_lock: Any,
        turn: Any = None,
        legal: Any = None,
        fresh_roll: Any = None,
        values_used: Any = None,
    ) -> dict[str, Any]:
        """The request body of one action: v2 with ``sig`` and ``prev`` for a keyed seat."""
        act = dict(action)
        if chain is None:  # qahwa-fair/1: nothing to sign, no values
            return {"action": act, "version": version}
        if self.roll_chain is not None and act.get("type") in FRESH_ROLL_TYPES:
            act = self.with_value(
                act, turn=turn, legal=legal, fresh_roll=fresh_roll, values_used=values_used
            )
        elif "value" in act and act.get("type") in FRESH_ROLL_TYPES:
            raise ClientError("this seat has no roll chain: it sends no roll-chain value")
        body = {"action": act, "version": version, "prev": chain}
        return self._signed(body, {"type": "action", "seat": self.seat, "action": act}, view_lock)

    def resign_body(self, *, chain: str | None, view_lock: Any) -> dict[str, Any]:
        if chain is None:
            return {}
        event = {"type": "end", "reason": "resigned", "seat": self.seat}
        return self._signed({"prev": chain}, event, view_lock)

    def _signed(
        self, body: dict[str, Any], event: dict[str, Any], view_lock: Any
    ) -> dict[str, Any]:
        """``body`` (its ``prev``: the chain head ``event`` follows) with this seat's ``sig``
        over ``event``; unsigned for a seat without a key."""
        if self.signer is None:
            if self._keyed_at(view_lock):
                raise ClientError(
                    f"seat {self.seat} is keyed and this handle does not hold "
                    "its key: act through the handle that committed"
                )
            return body
        message = seat_sig_message(self.match_id, body["prev"], event)
        return {**body, "sig": self.signer.sign_bytes(message)}

    # -- receipts and what was sent (§3a.5) ----------------------------------------------------
    def sent(self, method: str, path: str, body: Any) -> dict[str, Any]:
        """Keep a request about to be sent, with this client's time (``sent_at``)."""
        entry: dict[str, Any] = {
            "method": method,
            "path": path,
            "body": body,
            "sent_at": format_time_ms(int(self.clock() * 1_000_000)),
            "receipt": None,
        }
        self.requests.append(entry)
        return entry

    def refused(
        self,
        entry: dict[str, Any],
        status: int,
        code: str,
        refusal: Any = None,
        keys: Mapping[str, str] | None = None,
    ) -> dict[str, Any] | None:
        """The server answered the request with an error (§7, refusals). A 4xx carrying the
        server's signed refusal of this very request (its hash, status and code) answers
        it: the refusal is kept in the entry (``refused``, ``refusal``) and returned. Any
        other error — a 5xx, an unsigned or mismatched refusal — is no answer: the entry
        keeps it as ``error`` and stays unreceipted, evidence of censorship if this seat's
        timeout follows."""
        what = f"HTTP {status} {code}"
        problem = self._refusal_problem(entry, status, code, refusal, keys)
        if problem is not None:
            entry["error"] = what if refusal is None else f"{what} ({problem})"
            return None
        entry["refused"] = what
        entry["refusal"] = refusal
        entry.pop("error", None)
        if self.receipts_path is not None:
            self.save_receipts(self.receipts_path)
        return dict(refusal)

    def _refusal_problem(
        self,
        entry: Mapping[str, Any],
        status: int,
        code: str,
        refusal: Any,
        keys: Mapping[str, str] | None,
    ) -> str | None:
        """Why ``refusal`` is not the signed refusal of ``entry``'s request; None if it is."""
        if not 400 <= status < 500 or status == 429:
            return "not a refusal a server signs"
        if refusal is None or keys is None:
            return "unsigned"
        try:
            open_refusal(refusal, keys)
        except RecordError as exc:
            return str(exc)
        want = {
            "match_id": self.match_id,
            "request": request_sha256(canonical_json(entry.get("body"))),
            "status": status,
            "reason": code,
        }
        wrong = [k for k, v in want.items() if refusal.get(k) != v]
        return f"the signed refusal's {', '.join(wrong)} differ" if wrong else None

    @property
    def unreceipted(self) -> list[dict[str, Any]]:
        """The signed requests this seat sent that neither a receipt nor a signed refusal
        answered."""
        return [
            e
            for e in self.requests
            if e.get("receipt") is None
            and not e.get("refusal")
            and isinstance(e.get("body"), dict)
            and "sig" in e["body"]
        ]

    def dispute(self, kind: str, message: str, evidence: dict[str, Any]) -> Dispute:
        """Keep a dispute of ``kind`` with its evidence (once per kind and message)."""
        return self._dispute(kind, message, evidence)

    # -- signed heads: back-dating (§7, heads) ---------------------------------------------------
    def check_head(
        self, head: Any, keys: Mapping[str, str], *, chain: str | None = None
    ) -> dict[str, Any]:
        """A signed head the server sent with a view (whose chain head is ``chain``) or on
        its event stream: signed by a trusted key, for this match, with a seq and a chain
        head (the view's, when given) and a time within ``max_skew`` of this client's.
        Returned; not yet taken (:meth:`take_head`)."""
        try:
            open_head(head, keys)
        except RecordError as exc:
            raise ClientError(f"match {self.match_id}: {exc}") from None
        seq, h_chain, at = head["seq"], head["chain"], head["at"]
        if head["match_id"] != self.match_id:
            raise ClientError(
                f"match {self.match_id}: a signed head without its match, seq, chain or at"
            )
        if chain is not None and h_chain != chain:
            raise ClientError(
                f"match {self.match_id}: the signed head's chain {h_chain[:16]}… is not the "
                f"head {chain[:16]}… the view shows"
            )
        if seq == -1 and self.lock is not None and h_chain != chain_start(self.lock).hex():
            raise ClientError(f"match {self.match_id}: the signed head at seq -1 is not the lock's")
        self.check_time(at, f"the signed head at seq {seq}", head)
        return dict(head)

    def take_head(self, head: dict[str, Any]) -> None:
        """Hold ``head`` (checked) as the newest the server showed; it covers a back-dating
        dispute whose event it signs, and when this seat's own chain broke (a redacted event,
        a gap) the chain picks up again from it."""
        self._cover(head)
        if self.head is None or head["seq"] >= self.head["seq"]:
            self.head = head
        if self._own is None:
            self._own = (head["seq"], bytes.fromhex(head["chain"]))
            self._epoch += 1

    def chained_to(self, seq: int, chain: str) -> bool:
        """Whether this seat has chained the log itself up to event ``seq`` (-1: the lock's
        chain[-1]) and got the head ``chain`` there: events from ``seq + 1`` on that it is
        shown then continue its own chain (:meth:`take_events`)."""
        own = self._own
        return own is not None and own[0] == seq and own[1].hex() == chain

    def events_from(self) -> int | None:
        """The seq after which this seat reads the events a newer head brings (to hold them
        to the head it holds and to chain them itself); None before it holds a head or the
        lock. :meth:`needs_events` says whether a given head needs them."""
        wants = []
        if self.head is not None:
            wants.append(max(self.head["seq"], self.checked_seq))
        if self._own is not None:
            wants.append(self._own[0])
        elif self._epoch == 0 and self.lock is not None:
            wants.append(-1)
        return min(wants) if wants else None

    def needs_events(self, head: Mapping[str, Any]) -> int | None:
        """Before taking ``head``: the seq after which this seat must read the events, to
        hold the new ones to the head it holds and to chain them up to ``head`` itself (None:
        it has them all)."""
        since = self.events_from()
        return since if since is not None and head["seq"] > since else None

    def take_events(
        self, events: Sequence[Mapping[str, Any]], later: Mapping[str, Any] | None = None
    ) -> list[Dispute]:
        """Events this seat was shown (streamed, or read after a view's head moved on), in
        seq order; each one new is kept (:attr:`seen`) and taken once:

        - this seat chains it itself from the lock's chain[-1] and keeps the head it computed
          in :attr:`shown`, which :meth:`check_transcript` holds the transcript to (a
          redacted event, ``"hidden"``, cannot be chained: the chain picks up again from the
          next signed head);
        - after a held signed head, one stamped more than :data:`BACKDATE_SLACK` before that
          head's ``at`` was back-dated: the head signed that at its time the log ended before
          it. A ``backdated`` dispute keeps the head, the events from it to the back-dated
          one and, once one comes, the later signed head or receipt whose chain covers it
          (``later``, here or at :meth:`take_head` / :meth:`take_receipt`).
        """
        h = self.head
        found: list[Dispute] = []
        for ev in events:
            seq = ev.get("seq")
            if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0 or seq in self.seen:
                continue
            # the stream's ``chain`` beside an event is not part of it (and never read)
            event = {k: v for k, v in ev.items() if k != "chain"}
            self.seen[seq] = event
            if self._own is None and seq == 0 and self.lock is not None:
                self._own = (-1, chain_start(self.lock))
                self._epoch += 1
            if self._own is not None and seq == self._own[0] + 1 and not ev.get("hidden"):
                self._own = (seq, chain_next(self._own[1], event))
                self.shown[seq] = self._own[1].hex()
            elif self._own is not None and seq > self._own[0]:
                self._own = None  # redacted, or a gap: picked up again at the next head
            if h is None or seq <= h["seq"] or seq <= self.checked_seq:
                continue
            self.checked_seq = seq
            try:
                at = parse_time_us(ev.get("at"))
            except (TypeError, ValueError):
                continue
            h_at = parse_time_us(h["at"])
            if at >= h_at - BACKDATE_SLACK * 1_000_000:
                continue
            chain = self.shown.get(seq)
            d = self._dispute(
                "backdated",
                f"match {self.match_id}: event {seq} is stamped {ev.get('at')}, "
                f"{(h_at - at) / 1e6:g} s before the signed head the server showed at "
                f"{h['at']}, which ends at seq {h['seq']}: signed proof it was back-dated",
                {
                    "head": dict(h),
                    "events": [
                        self.seen[n] for n in range(h["seq"] + 1, seq + 1) if n in self.seen
                    ],
                    "chain": chain,
                },
            )
            found.append(d)
            if chain is not None:
                self._uncovered.append((d, seq, chain, self._epoch))
        if later is not None:
            self._cover(later)
        return found

    def _cover(self, record: Mapping[str, Any]) -> None:
        """A signed head or receipt whose chain covers a back-dated event — its seq and
        chain are the event's as this seat computed them, or a later point this seat chained
        on to from it — kept with that dispute (with the events between): it signs the
        event, its time included."""
        r_seq, r_chain = record.get("seq"), record.get("chain")
        own = self._own
        reached = own is not None and own[0] == r_seq and own[1].hex() == r_chain
        keep = []
        for d, seq, chain, epoch in self._uncovered:
            if r_seq == seq and r_chain == chain:
                d.evidence["signed_after"] = dict(record)
            elif reached and epoch == self._epoch and isinstance(r_seq, int) and seq < r_seq:
                d.evidence["signed_after"] = dict(record)
                d.evidence["events_after"] = [
                    self.seen[n] for n in range(seq + 1, r_seq + 1) if n in self.seen
                ]
            else:
                keep.append((d, seq, chain, epoch))
        self._uncovered = keep

    # -- the server's clock (§3a.8) -------------------------------------------------------------
    def _dispute(self, kind: str, message: str, evidence: dict[str, Any]) -> Dispute:
        for d in self.disputes:
            if d.kind == kind and d.message == message:
                return d
        d = Dispute(self.match_id, self.seat, kind, message, evidence)
        self.disputes.append(d)
        return d

    def check_time(self, at: Any, what: str, item: Any = None) -> Dispute | None:
        """A time the server just sent (a receipt's, an event pushed as it happened) is within
        ``max_skew`` of this client's clock; else a ``clock`` dispute."""
        if at is None:
            return None  # a server from before the revision
        now = int(self.clock() * 1_000_000)
        try:
            t = parse_time_us(at)
        except ValueError as exc:
            return self._dispute(
                "clock", f"match {self.match_id}: {what} has no usable time: {exc}", {"item": item}
            )
        off = (t - now) / 1e6
        if abs(off) <= self.max_skew:
            return None
        return self._dispute(
            "clock",
            f"match {self.match_id}: {what} says {at}, {abs(off):g} s "
            f"{'ahead of' if off > 0 else 'behind'} this client's clock "
            f"({format_time_ms(now)}; max_skew {self.max_skew:g} s)",
            {"item": item, "times": {"server": at, "client": format_time_ms(now)}},
        )

    def check_end(self, events: Sequence[Mapping[str, Any]]) -> list[Dispute]:
        """The match's events once it ended: a final timeout obeys §7's rule (its ``at`` at
        or after the deadline), agrees with this client's clock, and, when it is this seat's,
        came while the seat held no signed request of its own sent before the deadline and
        never receipted. The disputes found (each kept in :attr:`disputes`)."""
        if not events or self.lock is None:
            return []
        end = events[-1]
        if end.get("type") != "end" or end.get("reason") != "timeout":
            return []
        found: list[Dispute] = []
        now = int(self.clock() * 1_000_000)
        due = timeout_deadline(self.lock, events)
        seat = end.get("seat")
        n = len(events) - 1
        if (
            self.last_deadline is not None
            and self.last_deadline.get("seq") == n
            and self.last_deadline.get("seat") == seat
        ):
            try:  # a deadline extended after an outage is later than §7's
                shown = parse_time_us(self.last_deadline.get("due"))
                due = shown if due is None else max(due, shown)
            except ValueError:
                pass
        at = end.get("at")
        times = {
            "timeout_at": at,
            "deadline": format_time_ms(due) if due is not None else None,
            "client_now": format_time_ms(now),
            "max_skew": self.max_skew,
        }
        evidence = {"events": [dict(e) for e in events], "times": times}
        if at is not None and due is not None:
            try:
                t = parse_time_us(at)
            except ValueError:
                t = None
            if t is not None and t < due:
                found.append(
                    self._dispute(
                        "early_timeout",
                        f"match {self.match_id}: the timeout of seat {seat} at {at} is before "
                        f"its deadline {format_time_ms(due)}: signed proof against the server",
                        evidence,
                    )
                )
            if t is not None and t - now > self.max_skew * 1_000_000:
                found.append(
                    self._dispute(
                        "clock",
                        f"match {self.match_id}: the timeout's time {at} is ahead of this "
                        f"client's clock {format_time_ms(now)} by more than {self.max_skew:g} s",
                        evidence,
                    )
                )
        if due is not None and now < due - self.max_skew * 1_000_000:
            found.append(
                self._dispute(
                    "clock",
                    f"match {self.match_id}: the server ended the match by timeout of seat "
                    f"{seat}, but by this client's clock ({format_time_ms(now)}) the deadline "
                    f"{format_time_ms(due)} has not come",
                    evidence,
                )
            )
        if seat == self.seat and due is not None:
            held = []
            for e in self.unreceipted:
                try:
                    if parse_time_us(e.get("sent_at")) < due:
                        held.append(e)
                except ValueError:
                    continue
            if held:
                found.append(
                    self._dispute(
                        "censored",
                        f"match {self.match_id}: the server ended the match by seat "
                        f"{self.seat}'s timeout at {at}, while the seat holds its signed "
                        f"request sent at {held[0]['sent_at']}, before the deadline "
                        f"{format_time_ms(due)}, that no receipt answered",
                        {**evidence, "requests": held},
                    )
                )
        return found

    def take_receipt(
        self,
        answer: Any,
        keys: Mapping[str, str],
        *,
        entry: dict[str, Any] | None = None,
        seq: int | None = None,
        chain: str | None = None,
    ) -> dict[str, Any] | None:
        """Check and keep the receipt of an accepted request (fairness-v2.md §7)."""
        receipt: Any = answer.get("receipt") if isinstance(answer, dict) else None
        if receipt is None:
            return None
        try:
            open_receipt(receipt, keys)
        except ValueError as exc:
            raise ClientError(f"match {self.match_id}: {exc}") from None
        if receipt.get("match_id") != self.match_id:
            raise ClientError(
                f"a receipt for match {receipt.get('match_id')!r} came with a "
                f"request of match {self.match_id}"
            )
        r_seq, r_chain = receipt["seq"], receipt["chain"]
        if seq is not None and r_seq != seq:
            raise ClientError(f"match {self.match_id}: the receipt is for seq {r_seq}, not {seq}")
        if chain is not None and r_chain != chain:
            raise ClientError(
                f"match {self.match_id}: the receipt's chain {r_chain[:16]}… is "
                f"not the head {chain[:16]}… the answer shows"
            )
        if r_seq == -1 and self.lock is not None and r_chain != chain_start(self.lock).hex():
            raise ClientError(
                f"match {self.match_id}: the receipt for seq -1 is not the lock's chain[-1]"
            )
        assert isinstance(receipt, dict)
        self.receipts.append(receipt)
        self._cover(receipt)
        if entry is not None:
            entry["receipt"] = receipt
        if r_seq >= 0:  # seq -1's time is the lock's locked_at, not now
            self.check_time(receipt.get("at"), f"the receipt for seq {r_seq}", receipt)
        if self.receipts_path is not None:
            self.save_receipts(self.receipts_path)
        return receipt

    def save_receipts(self, path: str | os.PathLike[str]) -> Path:
        """Write every receipt kept so far to ``path`` as a JSON list (``verify --receipt``
        reads it), atomically."""
        return _write_json(Path(path), self.receipts)

    def saved(self) -> dict[str, Any]:
        """What this seat sent and holds, for the player to keep: its seed and nonce (so
        ``verify --seat N --client-seed S --nonce HEX`` can check the transcript), its
        commitment, key and roll-chain tip, the lock it revealed against, every request it sent
        and every receipt. No secret key or roll-chain secret is written."""
        return {
            "match_id": self.match_id,
            "seat": self.seat,
            "client_seed": self.client_seed,
            "nonce": self.nonce,
            **self.commitments(),
            "lock": self.lock,
            "log_index": self.log_index,
            "requests": self.requests,
            "receipts": self.receipts,
            "disputes": [d.to_json() for d in self.disputes],
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        return _write_json(Path(path), self.saved())

    # -- after the match (§3a.5) -------------------------------------------------------------
    def check_transcript(self, doc: Any) -> None:
        """The transcript (its shape and protocol as :func:`fairness.records.open_transcript`
        opens it) has a lock byte-identical to the one this seat revealed against, its chain
        recomputes, every receipt agrees with it, and this seat's seed and nonce are the ones
        it sent. TranscriptMismatch names what disagrees."""
        mid = self.match_id
        try:
            doc = open_transcript(doc, None)
        except RecordError as exc:
            raise TranscriptMismatch(f"match {mid}: {exc}") from None
        if doc["protocol"] not in (PROTOCOL_V2, PROTOCOL_V3):
            raise TranscriptMismatch(f"match {mid}: not a qahwa-fair/2 or /3 transcript")
        if self.lock is None:
            raise ClientError(f"match {mid}: this seat never revealed against a lock")
        if canonical_json(doc["lock"]) != canonical_json(self.lock):
            raise TranscriptMismatch(
                f"match {mid}: the transcript's lock is not the lock seat "
                f"{self.seat} revealed against"
            )
        events = doc["events"]
        if not all(isinstance(e, dict) for e in events):
            raise TranscriptMismatch(f"match {mid}: the transcript's events are not a list")
        heads = chain_heads(self.lock, events)  # heads[seq + 1] is chain[seq]
        if doc.get("chain") != heads[-1].hex():
            raise TranscriptMismatch(
                f"match {mid}: the transcript's chain does not recompute from its lock and events"
            )
        for r in self.receipts:
            seq = r["seq"]
            if seq + 1 >= len(heads):
                raise TranscriptMismatch(
                    f"match {mid}: receipt for seq {seq} is beyond the transcript's "
                    f"{len(events)} events: signed proof the server cut the match short"
                )
            if heads[seq + 1].hex() != r["chain"]:
                raise TranscriptMismatch(
                    f"match {mid}: receipt for seq {seq} disagrees with the transcript's "
                    "chain there: signed proof the server rewrote the match"
                )
        for seq, chain in sorted(self.shown.items()):
            if seq + 1 >= len(heads) or heads[seq + 1].hex() != chain:
                raise TranscriptMismatch(
                    f"match {mid}: the events this seat was shown chain to {chain[:16]}… at "
                    f"seq {seq}, the transcript to another history: the server rewrote the "
                    "match"
                )
        seats = doc.get("seats")
        mine = seats[self.seat] if isinstance(seats, list) and len(seats) > self.seat else None
        if self.revealed and (
            not isinstance(mine, dict)
            or mine.get("client_seed") != self.client_seed
            or mine.get("nonce") != self.nonce
        ):
            raise TranscriptMismatch(
                f"match {mid}: seat {self.seat}'s client seed and nonce "
                "in the transcript are not the ones it sent"
            )


def _write_json(path: Path, obj: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(obj, fh, indent=1, ensure_ascii=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def terms_for(
    game: str,
    ruleset: Mapping[str, Any] | None,
    names: Sequence[str] | None,
    house: Sequence[bool] | None,
) -> Terms:
    return Terms(
        game=game,
        ruleset=dict(ruleset) if ruleset is not None else None,
        names=list(names) if names is not None else None,
        house=list(house) if house is not None else None,
    )

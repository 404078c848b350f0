"""What the async client (:mod:`qahwa_client.aio`, the source) and the sync one generated
from it (:mod:`qahwa_client.client`) share without an ``await``: request bodies, headers,
the resend rule, the :class:`Unanswered` error, the keys a client took through
announcements (:class:`Trust`) and a seat's state (:class:`SeatKeeps`)."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import httpx
from pydantic import TypeAdapter

from fairness import chain_next
from fairness.announce import extend_trusted, parse_rfc3339, retired_in, retired_problem
from fairness.protocol import canonical_json
from fairness.seat import ClientError, Dispute, NotOurMatch, SeatProtocol, Terms, trusted_keys
from qahwa_wire.models import RngCreatedOut, StateOut
from tlog import Policy, PolicyError, ProofError, leaf_hash, parse_proof, root_from_inclusion

if TYPE_CHECKING:
    from .aio import AsyncClient
    from .client import Client
    from .sealed import SealedKeys, SealedSeat

STATE = TypeAdapter[StateOut](StateOut)
T = TypeVar("T")

# Answers after which a request is sent again, byte for byte (fairness-v2.md §3a.6): the
# server may or may not have acted on it.
RESEND_STATUS = frozenset({500, 502, 503, 504})
#: an ``after`` no match reaches: the answer is where the log stands, with no events
LATEST = 2**31 - 1


def rate_limit_delay(resp: httpx.Response, waited: float, budget: float) -> float | None:
    """After a 429 answer: how long to wait before sending the identical request again —
    its ``Retry-After`` seconds (1 if absent or not a number) plus a random jitter of up to
    a quarter of that, so that clients refused together do not return together — or None
    (not a 429, or the wait would take the request's total past ``budget`` seconds: the
    429 is then raised). A 429 changed nothing on the server (docs/deploy.md §5)."""
    if resp.status_code != 429:
        return None
    try:
        after = float(resp.headers.get("retry-after", "1"))
    except ValueError:
        after = 1.0
    if not after >= 0:  # NaN, negative
        after = 1.0
    delay = after + random.uniform(0.0, max(after, 0.2) / 4)
    return delay if waited + delay <= budget else None


def signing_keys_in(items: Any) -> set[str]:
    """The ``signature.key_id`` of every signed record in ``items`` (records, answers that
    hold records, lists of them), however deep."""
    return {rec["signature"]["key_id"] for rec in signed_records_in(items)}


def signed_records_in(items: Any) -> list[Mapping[str, Any]]:
    """Every signed record (one with a ``signature.key_id``) in ``items`` (records, answers
    that hold records, lists of them), however deep."""
    found: list[Mapping[str, Any]] = []
    todo = [items]
    while todo:
        item = todo.pop()
        if isinstance(item, Mapping):
            sig = item.get("signature")
            if isinstance(sig, Mapping) and isinstance(sig.get("key_id"), str):
                found.append(item)
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
    return found


def note_retired(
    held: dict[str, str], doc: Any = None, accepted: Sequence[Mapping[str, Any]] = ()
) -> None:
    """Add to ``held`` (key_id → retired_at) what a ``/v1/keys`` document and the key
    announcements ``accepted`` say of retired keys (:func:`fairness.announce.retired_in`),
    the earlier time where two say it."""
    for kid, at in retired_in(doc or {}, accepted).items():
        old = held.get(kid)
        if old is None or (parse_rfc3339(at) or 0.0) < (parse_rfc3339(old) or 0.0):
            held[kid] = at


def not_retired(
    proto: SeatProtocol, signed: Any, keys: Mapping[str, str], retired: Mapping[str, str]
) -> dict[str, str]:
    """``keys`` without the keys that signed a record in ``signed`` after they were retired
    (or on a record that names no time of its own): a retired key's signature counts only
    on a record naming its time, before the key's ``retired_at`` (fairness-v2.md, key
    announcements). Each such record is a ``retired_key`` dispute; its check then fails."""
    late: dict[str, str] = {}
    for rec in signed_records_in(signed):
        kid = rec["signature"]["key_id"]
        at = retired.get(kid)
        if at is None or kid not in keys or kid in late:
            continue
        why = retired_problem(kid, at, rec)
        if why is not None:
            late[kid] = why
            proto._dispute(
                "retired_key",
                f"match {proto.match_id}: a record the server sent does not count: {why}",
                {"records": [dict(rec)], "key_id": kid, "retired_at": at},
            )
    return {k: v for k, v in keys.items() if k not in late} if late else dict(keys)


def sealed_raw(raw: Any) -> bool:
    """Whether a view, as the server sent it, is a sealed table's with a hand dealt (a seat
    then shows it through its own deal machine)."""
    return isinstance(raw, dict) and raw.get("deal") == "sealed" and bool(raw.get("sealed"))


def logged_events(body: Mapping[str, Any], answer: Any) -> tuple[int, list[dict[str, Any]]] | None:
    """The events an accepted action logged, as its answer shows them (``events``), when they
    are whole and chain from the head the action was signed over (``prev``) to the answer
    view's chain head, which the answer's receipt signs: ``(first_seq - 1, events)``, the
    log as a read after ``first_seq - 1`` would show it. None otherwise (the log is read)."""
    events, prev = answer.get("events"), body.get("prev")
    state = answer.get("state")
    first = answer.get("first_seq")
    chain = state.get("chain") if isinstance(state, dict) else None
    if (
        not isinstance(events, list)
        or not events
        or not isinstance(prev, str)
        or not isinstance(chain, str)
        or isinstance(first, bool)
        or not isinstance(first, int)
    ):
        return None
    try:
        head = bytes.fromhex(prev)
        for n, ev in enumerate(events):
            if not isinstance(ev, dict) or ev.get("seq") != first + n or "hidden" in ev:
                return None
            head = chain_next(head, ev)
    except (TypeError, ValueError):
        return None
    return (first - 1, events) if head.hex() == chain else None


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def create_body(
    game: str,
    ruleset: Mapping[str, Any] | None,
    names: Sequence[str] | None,
    house: Sequence[bool] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"game": game}
    if ruleset is not None:
        body["ruleset"] = dict(ruleset)
    if house is not None and names is None:
        raise ClientError("house seats are declared with their names")
    if names is not None:
        flags = list(house) if house is not None else [False] * len(names)
        if len(flags) != len(names):
            raise ClientError(f"{len(names)} names but {len(flags)} house flags")
        body["seats"] = [{"name": n, "house": h} for n, h in zip(names, flags, strict=True)]
    return body


def accepted_out(match_id: str, seat: int, seq: int, view: StateOut) -> dict[str, Any]:
    """An action's answer rebuilt from the log and a fresh view (its first answer lost)."""
    return {
        "match_id": match_id,
        "seat": seat,
        "version": view.version,
        "status": view.status,
        "first_seq": seq,
        "state": view.model_dump(mode="json"),
        "chain": view.chain,
    }


class Unanswered(ClientError):
    """A request got no answer (or only 5xx) however often it was resent; it is kept in the
    seat's ``requests`` without a receipt."""


class _Kept(property, Generic[T]):
    """A read-only property a handle reads from its seat protocol: ``self.proto.<its
    name>``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> T:  # type: ignore[override]
        return self if obj is None else getattr(obj.proto, self.name)  # type: ignore[return-value]


class Trust:
    """The server keys a client took through announcements since the ones it trusted first,
    and what it refused (the same in the sync and the async clients: nothing here waits)."""

    def __init__(self, keys: Any) -> None:
        self.pinned = trusted_keys(keys) if keys is not None else None
        self._fetched: dict[str, str] | None = None
        #: the ``/v1/keys`` document (or mapping) trusted first: pinned, else fetched
        self._base_keys: Any = keys
        #: keys taken since through announcements signed by a trusted key, and those
        #: announcements (fairness-v2.md, revision "key announcements")
        self.announced: dict[str, str] = {}
        self.accepted_announcements: list[dict[str, Any]] = []
        #: announcements this client refused (not signed by a key it trusts, or malformed),
        #: each ``{"announcement", "reason"}``: kept as evidence, never trusted
        self.refused_announcements: list[dict[str, Any]] = []
        #: key_id -> when it was retired, as the keys documents read and the announcements
        #: taken say: nothing it signs from then on counts (:func:`not_retired`)
        self.retired: dict[str, str] = {}
        note_retired(self.retired, keys)
        self._looked_up: set[str] = set()  # unknown key ids /v1/keys was read again for

    def take_announcements(self, records: Sequence[Any], trusted: Mapping[str, str]) -> list[str]:
        """Take the keys ``records`` announce (key announcements: fairness-v2.md) when a key
        of ``trusted`` (or one taken so) signed the announcement; keep the others in
        ``refused_announcements`` (looked at again with every new announcement: one
        refused only for want of its signer's own announcement is taken once that comes).
        Returns the key ids taken."""
        earlier = [r["announcement"] for r in self.refused_announcements]
        ext = extend_trusted(trusted, [*records, *earlier])
        self.announced.update(ext.added)
        self.accepted_announcements.extend(ext.accepted)
        note_retired(self.retired, None, ext.accepted)
        self.refused_announcements = []
        for r in ext.refused:
            if r not in self.refused_announcements:
                self.refused_announcements.append(r)
        return list(ext.added)


class Keeps:
    """What a player keeps of a seat or a session, read from its :class:`SeatProtocol`
    (the same in the sync and the async handles: nothing here waits)."""

    proto: SeatProtocol
    client_seed = _Kept[str | None]()
    nonce = _Kept[str | None]()
    lock = _Kept[dict[str, Any] | None]()
    receipts = _Kept[list[dict[str, Any]]]()


class SessionKeeps(Keeps):
    """A plain session's: its commit record (``created``), id and token."""

    client: AsyncClient | Client

    def __init__(self, client: AsyncClient | Client, created: RngCreatedOut) -> None:
        self.client = client
        self.created = created
        self.session_id = created.session_id
        self.token = created.token
        self.proto = SeatProtocol(
            self.session_id, 0, root_from_inclusion=root_from_inclusion, keyed=False
        )


class SeatKeeps(Keeps):
    """A seat's: also its log index, key, requests and disputes; ``save`` and
    ``save_receipts`` write them."""

    match_id: str
    log_index = _Kept[int | None]()
    #: the seat's Ed25519 public key (base64), once committed
    key = _Kept[str | None]()
    #: every request sent, with its local ``sent_at`` and its receipt (or None)
    requests = _Kept[list[dict[str, Any]]]()
    #: the disputes this seat reports (fairness-v2.md §3a.8): a timeout before its deadline
    #: or while this seat held an unreceipted request sent in time, or the server's clock
    #: off by more than ``max_skew``. Each keeps its evidence; ``save`` writes them.
    disputes = _Kept[list[Dispute]]()
    #: the signed requests sent that neither a receipt nor a refusal answered, each with its
    #: local ``sent_at`` (fairness-v2.md §3a.8)
    unreceipted = _Kept[list[dict[str, Any]]]()

    def __init__(
        self,
        client: AsyncClient | Client,
        match_id: str,
        seat: int,
        token: str,
        *,
        record: Mapping[str, Any] | None = None,
        terms: Terms | None = None,
        receipts_file: str | Path | None = None,
        sealed_keys: SealedKeys | None = None,
    ) -> None:
        self.client = client
        self.match_id = match_id
        self.seat = seat
        self.token = token
        self.version: int | None = None
        self.view: StateOut | None = None
        #: a sealed table's side of this seat (made at its first sealed view)
        self.sealed: SealedSeat | None = None
        self._sealed_keys = sealed_keys
        self._raw: dict[str, Any] | None = None  # the last view as the server sent it
        self._record = dict(record) if record is not None else None
        self.proto = SeatProtocol(
            match_id,
            seat,
            root_from_inclusion=root_from_inclusion,
            terms=terms,
            clock=client.clock,
            max_skew=client.max_skew,
        )
        if receipts_file is not None:
            self.proto.receipts_path = Path(receipts_file)

    @property
    def disputed(self) -> bool:
        return bool(self.proto.disputes)

    def save_receipts(self, path: str | Path) -> Path:
        return self.proto.save_receipts(path)

    def save(self, path: str | Path) -> Path:
        return self.proto.save(path)

    def _hold(self, view: StateOut) -> bool:
        """A view of this seat, held as its last (``act`` acts from it) with its deadline;
        whether it shows an end by timeout, to be checked (§3a.8)."""
        self.version = view.version
        self.view = view
        deadline = getattr(view, "deadline", None)
        if deadline is not None:
            self.proto.last_deadline = deadline.model_dump(mode="json")
        result = getattr(view, "result", None)
        reason = result.get("reason") if isinstance(result, dict) else None
        return view.status == "finished" and reason == "timeout" and self.proto.lock is not None

    def _counted(self, signed: Any, keys: dict[str, str]) -> dict[str, str]:
        """``keys`` (the client's trusted keys) as they count for ``signed``: a record
        signed by a key that no trusted key announced is an ``unannounced_key`` dispute,
        with the announcements the client refused as evidence; one a key signed after it
        was retired, a ``retired_key`` dispute (:func:`not_retired`, whose keys are
        returned); the record's check then fails."""
        for kid in sorted(signing_keys_in([signed]) - keys.keys()):
            refused = [
                r
                for r in self.client.refused_announcements
                if isinstance(r.get("announcement"), dict)
                and (r["announcement"].get("key") or {}).get("key_id") == kid
            ]
            self.proto._dispute(
                "unannounced_key",
                f"match {self.match_id}: the server signed with key {kid}, which no key this "
                f"client trusts announced ({len(refused)} announcement(s) of it refused)",
                {"records": [signed], "refused_announcements": refused},
            )
        return not_retired(self.proto, signed, keys, self.client.retired)

    def _witnessed(
        self, text: str, lock: dict[str, Any], index: int, policy: Policy, deadline: float
    ) -> bool:
        """Whether the tlog-proof ``text`` shows ``lock`` as log entry ``index`` under a
        checkpoint of the policy's log key that its witnesses' quorum cosigned (the lock is
        then held); False while the quorum falls short before ``deadline`` (monotonic
        seconds); :class:`NotOurMatch` otherwise."""
        keys_only = Policy(policy.logs, policy.witnesses, policy.groups, "none")
        try:
            proof = parse_proof(text)
            if proof.index != index:
                raise ProofError(f"the proof is for index {proof.index}, not the lock's {index}")
            leaf = canonical_json(lock)
            if proof.extra is not None and proof.extra != leaf:
                raise ProofError(f"log entry {index} is not this lock")
            _, cosigned = proof.verify(leaf_hash(leaf), keys_only)
        except (ProofError, PolicyError, ValueError) as exc:
            raise NotOurMatch(
                self.match_id, self.seat, f"the lock is not shown in the log: {exc}"
            ) from None
        if policy.satisfied(cosigned):
            self.proto.lock = lock
            return True
        if time.monotonic() < deadline:
            return False
        have = ", ".join(cosigned) or "none"
        raise NotOurMatch(
            self.match_id,
            self.seat,
            f"the lock's checkpoint is cosigned by {have}: not the quorum "
            f"{policy.quorum!r} of this client's log policy (waited "
            f"{self.client.proof_wait:g} s)",
        )

    def _follow(self, lock: Mapping[str, Any]) -> SealedSeat:
        """This seat's sealed side (:attr:`sealed`) from the signed ``lock`` of the match:
        its deal machine follows the match's game, ruleset, house seats and roll-chain tips."""
        from .sealed import SealedSeat

        seats = lock.get("seats") or []
        self.sealed = SealedSeat.follow(
            self.match_id,
            self.seat,
            str(lock.get("game")),
            str(lock.get("ruleset")),
            house=[int(s["seat"]) for s in seats if s.get("house")],
            roll_tips=[s.get("roll_chain") for s in seats],
            keys=self._sealed_keys,
            on_dispute=self.proto.dispute,
        )
        return self.sealed

    def _path(self, tail: str) -> str:
        return f"/v1/matches/{self.match_id}{tail}"

    def _action_body(
        self, action: Mapping[str, Any], view: StateOut, version: int | None = None
    ) -> dict[str, Any]:
        """The signed body of ``action`` chosen from ``view`` (at ``version``, default the
        view's): at a sealed table, what its own machine derives for it."""
        if self.sealed is not None and self._raw is not None:
            action = self.sealed.wire(action)
        return self.proto.action_body(
            action,
            version=view.version if version is None else version,
            chain=view.chain,
            view_lock=view.lock,
            turn=view.turn,
            legal=view.legal_actions,
            fresh_roll=getattr(view, "fresh_roll", None),
            values_used=getattr(view, "values_used", None),
        )

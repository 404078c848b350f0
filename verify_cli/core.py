"""Verify one transcript (fairness-v1.md §6, fairness-v2.md §9): the checks, in order, and a
JSON-ready report.

A report is a dict::

    {"source", "status": "verified" | "failed" | "unchecked" | "unusable",
     "match_id", "game", "ruleset", "seats": [{"seat", "name", "seed_source"}],
     "counts": {"events", "actions", "chance", "rounds"|"hands"|"games"|"draws": n},
     "checks": [{"name", "ok": true|false|null, "detail"}],
     "failures": [{"check", "message", "seq", "expected", "found"}],
     "signature": {"checked", "key_id", "key_source", "key_origin"},
     "draws": [{"seq", "label", "kind", "text"}], "draws_total": n, "reason"}

``unchecked``: everything checked out except the signature, which could not be checked
(no key); ``unusable``: the input is no transcript we can verify (``reason`` says why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fairness import (
    PROTOCOL,
    V2,
    V3,
    FairnessError,
    canonical_json,
    protocol_for,
    seed_commitment,
)
from fairness.protocol import BACKDATE_SLACK, parse_time_us
from fairness.records import (
    RecordError,
    causer,
    open_event,
    open_head,
    open_receipt,
    open_transcript,
)
from fairness.records import check_signature as check_record_signature

from .inputs import MAX_DOCUMENT_BYTES, InputError, parse_json
from .keys import KeySet, UnusableInput
from .replay_core import NotATranscript, Report, assemble, check_rules, check_shape
from .rules import V2State

#: the checks only the CLI makes (Ed25519 and the player's own inputs); every other check
#: is :mod:`verify_cli.replay_core`'s, which the verify page runs too
CLI_ONLY_CHECKS = ("seat signatures", "lock signature", "signature", "receipts", "own seed")

VERIFIED = "verified"
FAILED = "failed"
UNCHECKED = "unchecked"
UNUSABLE = "unusable"


def exit_code(reports: list[dict[str, Any]]) -> int:
    """``verify``'s exit code for these reports (see :mod:`verify_cli.main`)."""
    if any(r["status"] == UNUSABLE for r in reports):
        return 2
    if any(r["status"] in (FAILED, UNCHECKED) for r in reports):
        return 1
    return 0


def load_document(path: str) -> Any:
    """Read and parse a transcript file (UnusableInput when unreadable, too large, not UTF-8,
    not JSON, nested too deeply or with a duplicate key: see :mod:`verify_cli.inputs`)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_DOCUMENT_BYTES + 1)
    except IsADirectoryError:
        raise UnusableInput(f"{path}: is a directory") from None
    except OSError as exc:
        raise UnusableInput(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return parse_json(data)
    except InputError as exc:
        raise UnusableInput(f"{path}: {exc}") from None


@dataclass(frozen=True)
class OwnSeed:
    """``--seat N --client-seed S [--nonce HEX]``: the seed a player says it sent."""

    seat: int
    client_seed: str
    nonce: str | None


def _without_source(source: str, reason: str) -> str:
    """The reason without the file or URL in it: every report names its source already."""
    if reason.startswith(f"{source}: "):
        return reason[len(source) + 2 :]
    if reason.startswith(f"{source} "):
        return reason[len(source) + 1 :]
    return reason.replace(f" {source}", "", 1)


def unusable(source: str, reason: str) -> dict[str, Any]:
    reason = _without_source(source, reason)
    return {
        "source": source,
        "status": UNUSABLE,
        "reason": reason,
        "checks": [],
        "failures": [],
        "draws": [],
        "draws_total": 0,
    }


def transcript_body_json(doc: dict[str, Any], event_json: list[bytes]) -> bytes:
    """``canonical_json`` of the transcript without its signature, made from its events'
    canonical JSON (``event_json``, one per event, as the chain hashed them) instead of
    encoding every event again: canonical JSON of an object is its members, keys sorted,
    each ``key:value``, joined by commas; of a list its items joined by commas."""
    if len(event_json) != len(doc["events"]) or not all(type(k) is str for k in doc):
        return canonical_json({k: v for k, v in doc.items() if k != "signature"})
    parts = []
    for k in sorted(k for k in doc if k != "signature"):
        value = b"[" + b",".join(event_json) + b"]" if k == "events" else canonical_json(doc[k])
        parts.append(canonical_json(k) + b":" + value)
    return b"{" + b",".join(parts) + b"}"


def check_signature(
    rep: Report, doc: dict[str, Any], keys: KeySet | None, state: V2State | None = None
) -> dict[str, Any]:
    """The transcript's server signature (and, for v2, the lock's) into ``rep``.

    ``state``: what the v2 rules checks found (its events' canonical JSON is reused)."""
    sig_info: dict[str, Any] = dict(checked=False, key_id=None, key_source=None, key_origin=None)
    sig = doc.get("signature")
    if isinstance(sig, dict):
        sig_info["key_id"] = sig.get("key_id")
    records = protocol_for(doc).signed_records  # the lock's, for v2
    if keys is None:
        for name in records:
            rep.skip(f"{name} signature", "not checked: no server key (use --key or --server)")
        rep.skip("signature", "signature not checked: no server key (use --key or --server)")
        return sig_info
    sig_info.update(key_source=keys.source, key_origin=keys.origin)
    where = (
        "fetched from the server, so only as trustworthy as that server"
        if keys.source == "server"
        else f"from {keys.origin}"
    )
    for name in records:
        ok, detail = signed_by(doc[name], keys)
        if ok:
            rep.ok(f"{name} signature", f"the {name} is signed by key {detail} ({where})")
        else:
            rep.fail(f"{name} signature", f"the {name}'s signature: {detail}")
    if not isinstance(sig, dict):
        rep.fail("signature", "the transcript carries no signature")
        return sig_info
    body = None
    if state is not None and state.event_json:
        try:
            body = transcript_body_json(doc, state.event_json)
        except (TypeError, ValueError):
            body = None  # signed_by says why there is no canonical JSON
    try:
        key_id = open_transcript(doc, keys, body_json=body)["signature"]["key_id"]
    except RecordError as exc:
        rep.fail("signature", _why(exc))
        return sig_info
    sig_info["checked"] = True
    rep.ok("signature", f"Ed25519 signature valid for key {key_id} ({where})")
    return sig_info


def signed_by(record: Any, keys: KeySet) -> tuple[bool, str]:
    """(True, key id) when ``record`` carries a valid signature by a listed key
    (:func:`fairness.records.check_signature`), else (False, why)."""
    try:
        return True, check_record_signature(record, keys, "record")
    except RecordError as exc:
        return False, _why(exc)


def _why(exc: RecordError) -> str:
    """A failed signature check as ``verify`` words it: the reason, with the key ring's note
    on the key it used when the signature itself did not check out."""
    return exc.reason + (f" ({exc.note})" if exc.note and exc.step in ("alg", "value") else "")


def check_seat_signatures(rep: Report, doc: dict[str, Any], state: V2State) -> None:
    """Every event a keyed seat caused carries its valid signature over ``prev`` (the chain
    head before it), with the key from the lock (fairness-v2.md §7); no other event is
    signed: :func:`fairness.records.open_event`."""
    keyed = {s.seat for s in state.seats if s.key}
    events = doc["events"]
    if len(state.chain) != len(events) + 1:
        rep.skip("seat signatures", "not checked: the event chain could not be computed")
        return
    signed = 0
    loaded: dict[str, Any] = {}  # each seat's key parsed once (a bad one stays a string)
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            continue
        try:
            open_event(ev, state.lock, state.chain[i], loaded)
        except RecordError as exc:
            seat = causer(ev)
            if exc.step == "unkeyed":
                message = f"event {i} carries a sig, but {exc.reason}"
            elif exc.step == "unsigned":
                message = f"event {i} ({ev.get('type')} by keyed seat {seat}) carries no signature"
            else:
                message = (
                    f"event {i} ({ev.get('type')} by seat {seat}): its "
                    f"signature is not seat {seat}'s over this event after chain[{i - 1}] "
                    f"({exc.reason})"
                )
            rep.fail("seat signatures", message, seq=i)
            return
        signed += causer(ev) in keyed
    if keyed:
        rep.ok(
            "seat signatures",
            f"{signed} event(s) of keyed seat(s) {sorted(keyed)} "
            "signed by their keys from the lock",
        )
    else:
        rep.ok("seat signatures", "no seat registered a key: no event is signed")


def receipt_problem(r: Any) -> str | None:
    """Why ``r`` is not a receipt or a signed head (fairness-v2.md §7: both sign chain[seq]
    and a time; :func:`fairness.records.open_receipt`, ``open_head``, their signatures
    checked later against the keys), or None."""
    opener = open_head if isinstance(r, dict) and r.get("type") == "head" else open_receipt
    try:
        opener(r, None)
    except RecordError as exc:
        return str(exc)
    if not isinstance(r.get("signature"), dict):
        return "a receipt carries no signature"
    return None


def backdated(events: list[Any], head: dict[str, Any]) -> dict[str, Any] | None:
    """The first event after ``head``'s seq stamped more than ``BACKDATE_SLACK`` before its
    ``at``, or None (a time that does not parse is left to the times check)."""
    try:
        h_at = parse_time_us(head.get("at"))
    except (TypeError, ValueError):
        return None
    for ev in events[int(head["seq"]) + 1 :]:
        try:
            at = parse_time_us(ev.get("at"))
        except (TypeError, ValueError, AttributeError):
            continue
        if at < h_at - BACKDATE_SLACK * 1_000_000:
            return dict(ev)
    return None


def check_receipts(
    rep: Report,
    doc: dict[str, Any],
    state: V2State | None,
    receipts: list[dict[str, Any]],
    keys: KeySet | None,
) -> None:
    """Each receipt is signed by a listed key, and the transcript's chain agrees with it at
    its seq (seq -1: chain[-1]): a disagreement is signed proof the server rewrote the
    match. A signed head (§7, heads; a seat file keeps those of its disputes) is checked the
    same way, and every event after it must be stamped no earlier than its ``at`` (give or
    take :data:`fairness.protocol.BACKDATE_SLACK`): an earlier one is signed proof the server
    back-dated it."""
    if state is None:
        rep.fail(
            "receipts",
            f"{len(receipts)} receipt(s) for a qahwa-fair/1 transcript, "
            "which has no event chain to agree with",
        )
        return
    if len(state.chain) != len(doc["events"]) + 1:
        rep.fail(
            "receipts",
            "the transcript's event chain cannot be computed, so no receipt can agree with it",
        )
        return
    n = len(doc["events"])
    unsigned = 0
    for r in sorted(receipts, key=lambda r: int(r["seq"])):
        seq = int(r["seq"])
        if keys is None:
            unsigned += 1
        else:
            ok, detail = signed_by(r, keys)
            if not ok:
                rep.fail(
                    "receipts",
                    f"the receipt for seq {seq}: its signature does not "
                    f"check out ({detail}), so it proves nothing",
                    seq=seq,
                )
                return
        if seq >= n:
            rep.fail(
                "receipts",
                f"the receipt for seq {seq} (chain {r['chain'][:16]}…) "
                f"names an event the transcript does not have (it ends at seq {n - 1}): "
                "signed proof the server cut the match short",
                seq=seq,
                expected=r["chain"],
                found=None,
            )
            return
        have = state.chain[seq + 1].hex()
        head = doc["events"][seq] if seq >= 0 else doc["lock"]
        want_at = head.get("at" if seq >= 0 else "locked_at") if isinstance(head, dict) else None
        if r["type"] == "head" and have == r["chain"]:
            late = backdated(doc["events"], r)
            if late is not None:
                rep.fail(
                    "receipts",
                    f"event {late['seq']} is stamped {late['at']}, before the signed head the "
                    f"server showed at {r['at']}, which ends at seq {seq}: signed proof the "
                    "server back-dated it",
                    seq=late["seq"],
                    expected=r["at"],
                    found=late["at"],
                )
                return
        elif have == r["chain"] and "at" in r and want_at is not None and r["at"] != want_at:
            where = f"event {seq}'s at" if seq >= 0 else "the lock's locked_at"
            rep.fail(
                "receipts",
                f"the receipt for seq {seq} says at {r['at']}, the transcript's {where} is "
                f"{want_at}: the server signed two times for one head",
                seq=seq,
                expected=r["at"],
                found=want_at,
            )
            return
        if have != r["chain"]:
            rep.fail(
                "receipts",
                f"the receipt for seq {seq} says chain {r['chain'][:16]}…, "
                f"the transcript's chain at seq {seq} is {have[:16]}…: signed proof the "
                "server rewrote the match",
                seq=seq,
                expected=r["chain"],
                found=have,
            )
            return
    note = (
        f"; {unsigned} receipt signature(s) not checked (no server key)"
        if unsigned
        else ", each signed by a listed key"
    )
    heads = sum(1 for r in receipts if r["type"] == "head")
    kept = f" and {heads} signed head(s), no event after one stamped before it" if heads else ""
    rep.ok("receipts", f"{len(receipts) - heads} receipt(s){kept} agree with the chain{note}")


def check_own_seed(rep: Report, doc: dict[str, Any], own: OwnSeed) -> None:
    """Seat N holds exactly the client seed (and nonce) the player says it sent."""
    n = own.seat
    seat = next((s for s in doc["seats"] if isinstance(s, dict) and s.get("seat") == n), None)
    if seat is None:
        rep.fail("own seed", f"the transcript has no seat {n}")
        return
    OWN_SEED[doc["protocol"]](rep, doc, seat, own)


def _same_client_seed(rep: Report, seat: dict[str, Any], own: OwnSeed) -> bool:
    if seat.get("client_seed") == own.client_seed:
        return True
    rep.fail(
        "own seed",
        f"seat {own.seat} does not hold the client seed you gave (it holds "
        f"{seat.get('client_seed')!r})",
        expected=own.client_seed,
        found=seat.get("client_seed"),
    )
    return False


def _own_seed_v1(rep: Report, doc: dict[str, Any], seat: dict[str, Any], own: OwnSeed) -> None:
    """A qahwa-fair/1 seat: its client seed (it has no nonce)."""
    if own.nonce is not None:
        rep.fail("own seed", "--nonce given, but a qahwa-fair/1 seat has no nonce")
    elif _same_client_seed(rep, seat, own):
        rep.ok("own seed", f"seat {own.seat} holds exactly the client seed you gave")


def _own_seed_v2(rep: Report, doc: dict[str, Any], seat: dict[str, Any], own: OwnSeed) -> None:
    """A qahwa-fair/2 seat: its client seed and nonce, and the lock's seed commitment."""
    n = own.seat
    if seat.get("client_seed") is None:
        rep.fail("own seed", f"seat {n} never revealed a seed (no_reveal)")
        return
    if not _same_client_seed(rep, seat, own):
        return
    if own.nonce is None:
        rep.ok(
            "own seed",
            f"seat {n} holds exactly the client seed you gave (nonce not given, not compared)",
        )
        return
    if seat.get("nonce") != own.nonce:
        rep.fail(
            "own seed",
            f"seat {n} does not hold the nonce you gave",
            expected=own.nonce,
            found=seat.get("nonce"),
        )
        return
    lock_seats = doc["lock"].get("seats")
    want = (
        lock_seats[n].get("seed_commitment")
        if isinstance(lock_seats, list)
        and 0 <= n < len(lock_seats)
        and isinstance(lock_seats[n], dict)
        else None
    )
    try:
        calc = seed_commitment(doc["match_id"], n, own.nonce, own.client_seed)
    except (FairnessError, ValueError, TypeError) as exc:
        rep.fail("own seed", f"the seed you gave is unusable: {exc}")
        return
    if calc != want:
        rep.fail(
            "own seed",
            f"your client seed and nonce do not give seat {n}'s seed_commitment in the lock",
            expected=calc,
            found=want,
        )
        return
    rep.ok("own seed", f"seat {n} holds exactly your client seed and nonce, committed in the lock")


#: each protocol's check of a player's own seed (``--seat``, ``--client-seed``, ``--nonce``)
OWN_SEED = {PROTOCOL: _own_seed_v1, V2.name: _own_seed_v2, V3.name: _own_seed_v2}


def verify_document(
    doc: Any,
    keys: KeySet | None,
    *,
    source: str = "<transcript>",
    draws_limit: int | None = 12,
    allow_unsigned: bool = False,
    receipts: list[dict[str, Any]] | None = None,
    own: OwnSeed | None = None,
) -> dict[str, Any]:
    """Verify a parsed transcript; never raises for bad content (see the module doc).

    ``receipts``: the receipts given for this match (``--receipt``); ``own``: the seed a
    player says its seat sent (``--seat``).
    """
    try:
        cls = check_shape(doc)
    except NotATranscript as exc:
        return unusable(source, str(exc))
    rep = Report(source, doc)
    ctx = check_rules(rep, doc, cls)  # the commitment, seeds, chain, replay and result
    if rep.locked is not None:
        check_seat_signatures(rep, doc, rep.locked)
    sig_info = check_signature(rep, doc, keys, rep.locked)
    if receipts:
        check_receipts(rep, doc, rep.locked, receipts, keys)
    if own is not None:
        check_own_seed(rep, doc, own)

    if rep.failures:
        status = FAILED
    else:
        status = VERIFIED if sig_info["checked"] or allow_unsigned else UNCHECKED
    return assemble(rep, doc, ctx, status=status, signature=sig_info, draws_limit=draws_limit)


def verify_item(
    item: tuple[str, Any, str],
    keys_b64: dict[str, Any] | None,
    draws_limit: int | None,
    allow_unsigned: bool,
    receipts: list[dict[str, Any]] | None = None,
    own: OwnSeed | None = None,
) -> dict[str, Any]:
    """Worker entry point: ``item`` is ("file", path, source) or ("doc", document, source)."""
    kind, payload, source = item
    try:
        doc = load_document(payload) if kind == "file" else payload
    except UnusableInput as exc:
        return unusable(source, str(exc))
    keys = KeySet.from_b64(keys_b64) if keys_b64 is not None else None
    try:
        mine = [
            r
            for r in receipts or ()
            if isinstance(doc, dict) and r.get("match_id") == doc.get("match_id")
        ]
        return verify_document(
            doc,
            keys,
            source=source,
            draws_limit=draws_limit,
            allow_unsigned=allow_unsigned,
            receipts=mine,
            own=own,
        )
    except Exception as exc:  # a bug must not turn into a traceback for the user
        return unusable(source, f"internal error while verifying: {exc.__class__.__name__}: {exc}")

"""The ``log`` step of ``verify``: a transcript's record is in the log — by an inclusion
proof from the server (``--server``: the match's tlog-proof, found by its match id) or a file
(``--log-proof``: the JSON of ``GET /v1/log/proof``, or a ``c2sp.org/tlog-proof@v1`` proof
checked offline against ``--policy``) — under a head consistent with every head seen before.

And the ``downgrade`` step (fairness-v2.md §9): with a log, the match's entry, found by its
``match_id``, must be of the transcript's protocol (a qahwa-fair/1 transcript for a match
locked under qahwa-fair/2 fails, and so does one whose match is not in the log); without a
log the report says that a downgrade was not excluded."""

from __future__ import annotations

import hashlib
import json
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

import tlog
from fairness import PROTOCOL as PROTOCOL_V1
from fairness import PROTOCOL_V2, PROTOCOL_V3, PROTOCOLS, canonical_json

from .core import UNCHECKED, VERIFIED
from .keys import KeySet, UnusableInput, server_base
from .keys import http_why as _why
from .log_state import (
    Fetch,
    Head,
    HeadState,
    HttpFetch,
    LogCheckFailed,
    _check_signed,
    _hex_list,
    default_state_path,
    parse_head,
    reconcile,
    reconcile_checkpoint,
)

#: how often, and how many seconds apart, a match's log proof is asked for while the log
#: has no (cosigned) checkpoint that includes it yet
PENDING_TRIES, PENDING_WAIT = 6, 1.0

#: the downgrade row when there is no log (the verdict does not depend on it)
NOT_EXCLUDED = (
    "not excluded: without a log (give --server URL, or --log-proof FILE.tlog-proof --policy "
    "FILE) nothing shows which protocol this match was locked under, so a qahwa-fair/1 "
    "transcript made up for a qahwa-fair/2 match would pass (fairness-v2.md §9)"
)


#: how a report names a log entry's deal, by the deal its lock signs (fairness-v3 §9a)
DEAL_NAMES = {"sealed": " of a sealed deal"}


def entry_protocol(leaf: dict[str, Any]) -> str | None:
    """The protocol a log entry was made under: a v2 lock's, a v1 commitment's."""
    proto = leaf.get("protocol")
    return proto if isinstance(proto, str) else None


def lock_deal(leaf: dict[str, Any]) -> str:
    """The deal a lock record commits to: the ``deal`` of its signed ``ruleset`` (canonical
    JSON) when that parses to an object naming one, else ``seeded`` (fairness-v3 §9a); a
    record of another type commits to none (``seeded``)."""
    ruleset = leaf.get("ruleset") if leaf.get("type") == "lock" else None
    try:
        parsed = json.loads(ruleset) if isinstance(ruleset, str) else None
    except ValueError:
        parsed = None
    deal = parsed.get("deal") if isinstance(parsed, dict) else None
    return deal if isinstance(deal, str) else "seeded"


def transcript_protocol_of(leaf: dict[str, Any]) -> str | None:
    """The protocol a match's log entry asks of its transcript (fairness-v3 §9c): a
    qahwa-fair/1 commitment record's is qahwa-fair/1; a qahwa-fair/2 lock's is the one of its
    ruleset's deal (:meth:`FairProtocol.dealt`: qahwa-fair/3 for ``"deal": "sealed"``)."""
    name = entry_protocol(leaf)
    known = PROTOCOLS.get(name) if name is not None else None
    return name if known is None else known.dealt(lock_deal(leaf)).name


def entry_name(leaf: dict[str, Any]) -> str:
    """How a report names a match's log entry: ``a qahwa-fair/2 lock of a sealed deal``."""
    what = {"lock": "lock", "commitment": "commitment record"}.get(str(leaf.get("type")), "entry")
    return f"{entry_protocol(leaf)} {what}{DEAL_NAMES.get(lock_deal(leaf), '')}"


def downgrade_problem(transcript: dict[str, Any], leaf: dict[str, Any], idx: int) -> str | None:
    """Why the match's log entry refuses this transcript (fairness-v2.md §9, fairness-v3.md
    §9c), or None."""
    want, have = transcript_protocol_of(leaf), transcript.get("protocol")
    if want == have:
        return None
    return (
        f"downgrade: the log's entry for match {transcript.get('match_id')!r} (index {idx}) is "
        f"a {entry_name(leaf)}, but the transcript is {have} (that entry's is {want}): a "
        "transcript of another protocol than its match's log entry asks for is refused "
        "(fairness-v2.md §9, fairness-v3.md §9c)"
    )


def check_inclusion(transcript: dict[str, Any], proof: Any, keys: KeySet) -> Head:
    """The transcript's commitment record is leaf ``log_index`` under a signed head."""
    idx = transcript.get("log_index")
    if not isinstance(idx, int) or isinstance(idx, bool):
        raise LogCheckFailed(f"the transcript's log_index is not an index: {idx!r}")
    if not isinstance(proof, dict):
        raise LogCheckFailed("the inclusion proof is not a JSON object")
    if proof.get("index") != idx:
        raise LogCheckFailed(
            f"the inclusion proof is for index {proof.get('index')!r}, "
            f"the transcript's log_index is {idx}"
        )
    leaf = proof.get("leaf")
    if not isinstance(leaf, dict) or leaf.get("type") != "commitment":
        raise LogCheckFailed(f"log entry {idx} is not a commitment record")
    _leaf_matches(transcript, leaf, idx, keys, "commitment record")
    head = parse_head(proof.get("tree_head"), keys)
    if proof.get("tree_size") != head.tree_size:
        raise LogCheckFailed(
            f"the proof's tree_size {proof.get('tree_size')!r} is not its head's {head.tree_size}"
        )
    path = _hex_list(proof.get("audit_path"), "the audit path")
    try:
        got = tlog.root_from_inclusion(
            idx, head.tree_size, tlog.leaf_hash(canonical_json(leaf)), path
        )
    except tlog.ProofError as exc:
        raise LogCheckFailed(f"the inclusion proof of index {idx}: {exc}") from None
    if got != head.root:
        raise LogCheckFailed(
            f"the inclusion proof of index {idx} leads to root "
            f"{got.hex()[:16]}…, the signed head says "
            f"{head.root.hex()[:16]}…"
        )
    return head


@dataclass(frozen=True)
class OfflineProof:
    """A ``c2sp.org/tlog-proof@v1`` file and the record its ``extra`` line carries."""

    proof: tlog.TlogProof
    leaf: dict[str, Any]
    source: str


def _leaf_matches(
    transcript: dict[str, Any],
    leaf: dict[str, Any],
    idx: int,
    keys: KeySet | None,
    record: str = "record",
) -> None:
    """The logged ``record`` asks for the transcript's protocol (:func:`downgrade_problem`,
    checked first) and is this transcript's (a v1 commitment or a v2 lock), signed by one
    of ``keys`` when there are keys."""
    why = downgrade_problem(transcript, leaf, idx)
    if why is not None:
        raise LogCheckFailed(why)
    names = ["match_id", "game", "ruleset", "commitment"]
    if leaf.get("type") == "commitment":
        names.append("log_index")
    elif leaf.get("type") != "lock":
        raise LogCheckFailed(f"log entry {idx} is not a commitment or lock record")
    for name in names:
        if leaf.get(name) != transcript.get(name):
            raise LogCheckFailed(
                f"log entry {idx} is the {record} of another match: its "
                f"{name} is {leaf.get(name)!r}, the transcript's "
                f"{transcript.get(name)!r}"
            )
    if keys is not None:
        _check_signed(leaf, keys, f"the {record} at log index {idx}")


def _included(idx: int, cp: tlog.Checkpoint, cosigned: Sequence[str], tail: str) -> str:
    who = ", ".join(cosigned) or "no witness"
    return (
        f"included at index {idx} under the checkpoint of size {cp.size} of {cp.origin}, "
        f"cosigned by {who}{tail}"
    )


def check_offline(
    transcript: dict[str, Any],
    idx: int,
    keys: KeySet | None,
    off: OfflineProof,
    policy: tlog.Policy | None,
    state: HeadState,
) -> tuple[bool | None, str]:
    """A tlog-proof checked against a policy, without the server."""
    if policy is None:
        return None, f"not checked: {off.source} is a tlog-proof; give --policy FILE"
    try:
        if off.proof.index != idx:
            raise LogCheckFailed(
                f"the tlog-proof is for index {off.proof.index}, the transcript's entry is {idx}"
            )
        _leaf_matches(transcript, off.leaf, idx, keys)
        assert off.proof.extra is not None
        cp, cosigned = off.proof.verify(tlog.leaf_hash(off.proof.extra), policy)
        seen = state.checkpoints.get(cp.origin)
        if isinstance(seen, dict):
            old = tlog.parse_checkpoint(tlog.split_note(seen["note"])[0])
            if old.size == cp.size and old.root != cp.root:
                raise LogCheckFailed(
                    f"log fork: two checkpoints of size {cp.size} with different roots"
                )
    except (tlog.PolicyError, tlog.ProofError) as exc:
        return False, f"the tlog-proof: {exc}"
    except LogCheckFailed as exc:
        return False, str(exc)
    return True, _included(idx, cp, cosigned, " (the policy's quorum is met)")


def _short_of_quorum(body: str, policy: tlog.Policy) -> bool:
    """Whether the tlog-proof ``body`` is good but for its witnesses: its checkpoint signed
    by the policy's log and holding its entry, its cosignatures short of the quorum."""
    try:
        tp = tlog.parse_proof(body)
        leaf = tlog.leaf_hash(tp.extra or b"")
        try:
            tp.verify(leaf, policy)
            return False
        except tlog.PolicyError:
            keys_only = tlog.Policy(policy.logs, policy.witnesses, policy.groups, "none")
            tp.verify(leaf, keys_only)
            return True
    except (tlog.ProofError, tlog.PolicyError, ValueError):
        return False  # not a witness matter: the check below says what is wrong


def _server_policy(fetch: Fetch) -> tuple[tlog.Policy | None, str]:
    """A policy of the log the server publishes (its note key from ``/v1/keys``, quorum
    none): only as trustworthy as that server, like keys fetched from it. (None, why) when
    the server publishes no log key."""
    status, doc = fetch("/v1/keys", {})
    log = doc.get("log") if status == 200 and isinstance(doc, dict) else None
    vkey = log.get("vkey") if isinstance(log, dict) else None
    if not isinstance(vkey, str):
        return None, (
            "the server publishes no transparency log key (no log.vkey in /v1/keys)"
            if status == 200
            else f"the server's keys are not to be had ({_why(status, doc)})"
        )
    try:
        return tlog.parse_policy(f"log {vkey}\nquorum none\n"), ""
    except tlog.PolicyError as exc:
        return None, f"the server's log key is unusable ({exc})"


def check_online(
    transcript: dict[str, Any],
    idx: Any,
    keys: KeySet | None,
    fetch: Any,
    server: str | None,
    state: HeadState,
    policy: tlog.Policy | None,
    found: dict[str, Any],
) -> tuple[bool | None, str] | None:
    """The match's entry in the server's log, found by its match id: its tlog-proof
    (``GET /v1/matches/{id}/log-proof``, through ``fetch.raw``) checked against ``policy``
    (else the server's own log key, quorum none) and against the checkpoints seen before,
    its record this transcript's (at ``idx``, its log index) and of its protocol (§9). None
    when the server publishes no log (no log key): the caller goes on as before.
    ``found["entry"]`` is set to the entry's name (:func:`entry_name`) and index once it is
    found."""
    raw = fetch.raw
    note = ""
    if policy is None and keys is not None and keys.source != "server":
        # pinned keys pin the log: the log key of the saved /v1/keys document, quorum none;
        # never one taken from the server
        if keys.log_vkey is None:
            found["no_log"] = (
                f"the pinned keys ({keys.origin}) hold no log key: give the saved /v1/keys "
                "document as --key, or the log's key with --policy FILE"
            )
            return None
        try:
            policy = tlog.parse_policy(f"log {keys.log_vkey}\nquorum none\n")
        except tlog.PolicyError as exc:
            found["no_log"] = f"the log key of the pinned keys ({keys.origin}) is unusable ({exc})"
            return None
        note = f" (the log's key from the pinned keys, {keys.origin})"
    if policy is None:
        policy, why = _server_policy(fetch)
        if policy is None:
            found["no_log"] = why
            return None
        note = " (the log's key fetched from the server, so only as trustworthy as that server)"
    mid = str(transcript.get("match_id"))
    # a match that just ended waits for its witnesses' cosignatures: the server serves the
    # proof at once with the ones it has (an older one answered 409 not_cosigned); while
    # they fall short of the policy's quorum a qahwa-fair/2 transcript asks again a few times
    log = log_of(transcript)
    status, body, err, code, short = _ask_proof(raw, mid, "log-proof", log.tries, policy)
    if status == 409 and code == "not_cosigned" or short:
        found["pending"] = True
        return None, (
            f"not checked yet: the checkpoint that includes match {mid}'s entry is not "
            f"cosigned by the witnesses the policy's quorum {policy.quorum!r} needs (yet: a "
            "witness may be slow or down); retry later"
        )
    if status in (404, 409):
        why = _why(status, err)
        msg = (
            f"match {mid} is not in the server's log ({why}): a transcript whose match is "
            "not in the log is refused (fairness-v2.md §9)"
        )
        found["downgrade"] = msg
        return False, msg
    if status != 200:
        return log.no_proof(
            found, f"the server gives no log proof of match {mid}: {_why(status, err)}"
        )
    try:
        tp, leaf = _proof_record(body)
    except (tlog.ProofError, ValueError) as exc:
        return False, f"the server's log proof of match {mid} is unusable: {exc}"
    try:
        cp, cosigned = tp.verify(tlog.leaf_hash(tp.extra or b""), policy)
    except (tlog.PolicyError, tlog.ProofError) as exc:
        return False, f"the server's log proof of match {mid}: {exc}"
    if leaf.get("match_id") != mid:
        return False, (
            f"the server's log proof for match {mid} is of entry {tp.index}, the record of "
            f"match {leaf.get('match_id')!r}"
        )
    found["entry"] = (entry_name(leaf), tp.index)
    problem = downgrade_problem(transcript, leaf, tp.index)
    if problem is not None:
        found["downgrade"] = problem
        return False, problem
    try:
        if idx != tp.index:
            raise LogCheckFailed(
                f"the transcript says its entry is log index {idx!r}, the log has match "
                f"{mid}'s at index {tp.index}"
            )
        _leaf_matches(transcript, leaf, tp.index, keys)
        signer = next((v for v, _ in policy.logs if v.name == cp.origin), None)
        slot = f"{cp.origin}+{signer.key_id:08x}" if signer is not None else None
        seen = reconcile_checkpoint(state, cp, tp.checkpoint, fetch, server, slot)
    except LogCheckFailed as exc:
        return False, str(exc)
    log.entry_found(found, transcript, keys, raw, policy, tp.index)
    return True, _included(tp.index, cp, cosigned, f"{note}; {seen}")


def _proof_record(body: bytes) -> tuple[tlog.TlogProof, dict[str, Any]]:
    """A tlog-proof and the record its ``extra`` line carries (ProofError or ValueError)."""
    tp = tlog.parse_proof(body)
    leaf = json.loads(tp.extra or b"")
    if not isinstance(leaf, dict):
        raise ValueError("its extra line holds no record")
    return tp, leaf


def _ask_proof(
    raw: Any, mid: str, what: str, tries: int, policy: tlog.Policy
) -> tuple[int, Any, Any, Any, bool]:
    """``GET /v1/matches/{mid}/{what}``, asked again (at most ``tries`` times) while its proof
    is good but short of ``policy``'s witness quorum (or, from an older server, it answers 409
    ``not_cosigned``): (status, body, the error document, its code, still short)."""
    status, body, err, code, short = 0, b"", None, None, False
    for attempt in range(tries):
        status, body = raw(f"/v1/matches/{urllib.parse.quote(mid, safe='')}/{what}")
        try:
            err = json.loads(body) if status != 200 else None
        except ValueError:
            err = None
        code = err.get("error", {}).get("code") if isinstance(err, dict) else None
        short = status == 200 and _short_of_quorum(body, policy)
        if not (status == 409 and code == "not_cosigned" or short) or attempt == tries - 1:
            break
        time.sleep(PENDING_WAIT)
    return status, body, err, code, short


#: what the reveal record signs of the transcript (fairness-v2 §8), by the record's name
REVEAL_FIELDS = (("chain", "chain head"), ("result", "result"), ("ended_at", "ended_at"))


def check_reveal(
    transcript: dict[str, Any],
    keys: KeySet | None,
    raw: Any,
    policy: tlog.Policy,
    lock_idx: int,
) -> tuple[bool | None, str]:
    """The ``reveal`` check (fairness-v2 §8): the match's reveal record, found in the log by
    its match id (``GET /v1/matches/{id}/reveal-proof``, its tlog-proof checked against
    ``policy``), is signed by the server's key, names the match's lock, and signs this
    transcript's chain head (and so its events and their number), result, ``ended_at`` and
    SHA-256. (None, "not checked yet: …") while the log holds no such record."""
    mid = str(transcript.get("match_id"))
    status, body, err, code, short = _ask_proof(raw, mid, "reveal-proof", PENDING_TRIES, policy)
    if short:
        return None, (
            f"not checked yet: the checkpoint that includes match {mid}'s reveal record is not "
            f"cosigned by the witnesses the policy's quorum {policy.quorum!r} needs (yet: a "
            "witness may be slow or down); retry later"
        )
    if status != 200:
        return None, (
            f"not checked yet: the server's log gives no reveal record of match {mid} "
            f"({_why(status, err)}); until it does, nothing shows this transcript runs to "
            "the match's real end (fairness-v2 §8)"
        )
    try:
        tp, leaf = _proof_record(body)
        cp, _ = tp.verify(tlog.leaf_hash(tp.extra or b""), policy)
    except (tlog.PolicyError, tlog.ProofError, ValueError) as exc:
        return False, f"the server's proof of match {mid}'s reveal record: {exc}"
    where = f"the reveal record at log index {tp.index}"
    if leaf.get("type") != "reveal" or leaf.get("match_id") != mid:
        return False, (
            f"log entry {tp.index} is not match {mid}'s reveal record (it is a "
            f"{leaf.get('type')!r} record of match {leaf.get('match_id')!r})"
        )
    if leaf.get("lock_index") != lock_idx or tp.index <= lock_idx:
        return False, (
            f"{where} names lock_index {leaf.get('lock_index')!r}, the match's lock is log "
            f"entry {lock_idx}"
        )
    if keys is not None:
        try:
            _check_signed(leaf, keys, where)
        except LogCheckFailed as exc:
            return False, str(exc)
    for name, what in REVEAL_FIELDS:
        if leaf.get(name) != transcript.get(name):
            return False, (
                f"{where} signs the match's {what} {_short(leaf.get(name))}, the transcript's "
                f"is {_short(transcript.get(name))}: the transcript does not run to the "
                "match's real end (fairness-v2 §8)"
            )
    try:
        digest = hashlib.sha256(canonical_json(transcript)).hexdigest()
    except (ValueError, TypeError) as exc:
        return False, f"the transcript has no canonical JSON to hash ({exc})"
    if leaf.get("transcript_sha256") != digest:
        return False, (
            f"{where} signs transcript_sha256 {_short(leaf.get('transcript_sha256'))}, this "
            f"transcript's SHA-256 is {digest[:16]}…: it is not the transcript the server "
            "signed when the match ended (fairness-v2 §8)"
        )
    events = transcript.get("events")
    n = len(events) if isinstance(events, list) else 0
    return True, (
        f"the log's reveal record of this match (index {tp.index}, under the checkpoint of "
        f"size {cp.size}) signs this transcript: its chain head (so its {n} events), result, "
        "ended_at and SHA-256"
    )


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "…"


def check_transcript(
    transcript: dict[str, Any],
    keys: KeySet | None,
    proof: Any,
    fetch: Fetch | None,
    server: str | None,
    state: HeadState,
    policy: tlog.Policy | None,
    found: dict[str, Any],
) -> tuple[bool | None, str]:
    """The ``log`` check: (ok, detail); ok None when it could not be made. ``found``
    (filled in): what the downgrade check needs — ``entry``: (name, index) of
    the match's log entry, once found; ``downgrade``: why the entry refuses the transcript;
    ``no_log``: why the server offers no log to look in."""
    idx = transcript.get("log_index")
    if idx is None:
        idx = transcript.get("lock_index")  # qahwa-fair/2: the lock's entry
    if isinstance(proof, OfflineProof):
        if not isinstance(idx, int) or isinstance(idx, bool):
            idx = proof.proof.index  # the match's entry, found by its match id (§9)
        ok, detail = check_offline(transcript, idx, keys, proof, policy, state)
        if ok:
            found["entry"] = (entry_name(proof.leaf), idx)
        elif ok is False and detail.startswith("downgrade:"):
            found["downgrade"] = detail
        return ok, detail
    log = log_of(transcript)
    if proof is None and fetch is not None and not log.indexed(idx):
        online = check_online(transcript, idx, keys, fetch, server, state, policy, found)
        online = log.settle(online)
        if online is not None:
            return online
    return log.rest(transcript, idx, keys, proof, fetch, server, state, found)


class V1Log:
    """The log check of a qahwa-fair/1 transcript: its commitment record, in the log at its
    ``log_index`` (:func:`check_inclusion`); the match's C2SP tlog-proof, where the server
    has one, is asked for once and decides only what it refutes."""

    #: how many times a proof short of the policy's witness quorum is asked for
    tries = 1

    def indexed(self, idx: Any) -> bool:
        """Whether the transcript's log index alone finds its entry: a qahwa-fair/1 one's
        commitment record (this match's, of qahwa-fair/1, which excludes a downgrade too),
        checked by :meth:`rest`; the server is not asked for the match's tlog-proof."""
        return idx is not None

    def no_proof(self, found: dict[str, Any], why: str) -> tuple[bool | None, str] | None:
        """What the server's having no tlog-proof of the match makes of the check."""
        found["no_log"] = why  # the v1 log's own check decides
        return None

    def entry_found(self, found: dict[str, Any], *reveal: Any) -> None:
        """What is checked once the match's entry is found: nothing more for qahwa-fair/1,
        whose log holds no reveal record (``reveal``: :func:`check_reveal`'s arguments)."""

    def settle(self, online: tuple[bool | None, str] | None) -> tuple[bool | None, str] | None:
        """The answer of :func:`check_online` that ends the check: a refusal; else the v1
        log's own check goes on (its entry found, or not to be had yet)."""
        return online if online is not None and online[0] is False else None

    def rest(
        self,
        transcript: dict[str, Any],
        idx: Any,
        keys: KeySet | None,
        proof: Any,
        fetch: Fetch | None,
        server: str | None,
        state: HeadState,
        found: dict[str, Any],
    ) -> tuple[bool | None, str]:
        """The check from the v1 log: the commitment record at ``log_index``."""
        if idx is None:
            if "no_log" in found:
                return None, f"not checked: {found['no_log']}"
            if fetch is None:
                return None, (
                    "not checked: the transcript has no log_index, and without a server (--server "
                    "URL) its entry cannot be found by its match id"
                )
            return None, "not checked: the transcript has no log_index"
        if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
            return False, f"the transcript's log_index is not an index: {idx!r}"
        if keys is None:
            return None, "not checked: no key to check the log's signatures (--key or --server)"
        if proof is None:
            if fetch is None:
                return None, "not checked: give --server URL or --log-proof FILE"
            status, proof = fetch("/v1/log/proof", {"index": idx})
            if status != 200:
                return False, (
                    f"the server gives no inclusion proof of log index {idx}: {_why(status, proof)}"
                )
        try:
            head = check_inclusion(transcript, proof, keys)
            ok, detail = reconcile(state, head, keys, fetch, server)
        except LogCheckFailed as exc:
            return False, str(exc)
        found.setdefault("entry", (entry_name(proof["leaf"]), idx))
        return ok, f"included at index {idx} of tree size {head.tree_size}; {detail}"


class V2Log(V1Log):
    """The log check of a qahwa-fair/2 (or /3) transcript (fairness-v2.md §8-§9): its lock in
    the C2SP log, found by its match id, then its reveal record; asked again while the
    checkpoint falls short of the witnesses' quorum; no tlog-proof is a refusal."""

    tries = PENDING_TRIES

    def indexed(self, idx: Any) -> bool:
        return False

    def no_proof(self, found: dict[str, Any], why: str) -> tuple[bool | None, str] | None:
        return False, why

    def entry_found(self, found: dict[str, Any], *reveal: Any) -> None:
        found["reveal"] = check_reveal(*reveal)

    def settle(self, online: tuple[bool | None, str] | None) -> tuple[bool | None, str] | None:
        return online

    def rest(
        self,
        transcript: dict[str, Any],
        idx: Any,
        keys: KeySet | None,
        proof: Any,
        fetch: Fetch | None,
        server: str | None,
        state: HeadState,
        found: dict[str, Any],
    ) -> tuple[bool | None, str]:
        """Without the server's answer: the lock's inclusion is checked only from its
        tlog-proof (online or ``--log-proof FILE --policy FILE``)."""
        if proof is None and fetch is None:
            return None, (
                "not checked: no log source (give --server URL or --log-proof "
                "FILE); the verdict does not depend on it"
            )
        if proof is None:
            return None, f"not checked: {found.get('no_log', 'the server offers no log')}"
        return None, (
            "not checked: a qahwa-fair/2 lock's inclusion is checked from its "
            "tlog-proof (--log-proof FILE.tlog-proof --policy FILE)"
        )


#: each protocol's log check, by the protocol's name
LOGS: dict[str, V1Log] = {PROTOCOL_V1: V1Log(), PROTOCOL_V2: V2Log(), PROTOCOL_V3: V2Log()}


def log_of(transcript: dict[str, Any]) -> V1Log:
    """The log check of a transcript's protocol (qahwa-fair/1's for one naming none known)."""
    return LOGS.get(str(transcript.get("protocol")), LOGS[PROTOCOL_V1])


def downgrade_row(log_ok: bool | None, found: dict[str, Any]) -> tuple[bool | None, str]:
    """The ``downgrade`` check (fairness-v2.md §9) from what the ``log`` check found."""
    if "downgrade" in found:
        return False, str(found["downgrade"])
    entry = found.get("entry")
    if entry is not None and log_ok is not False:
        name, idx = entry
        return True, (
            f"excluded: the log's entry for this match (index {idx}) is a {name}, which asks "
            "for the transcript's protocol"
        )
    if found.get("pending"):
        return None, "not excluded yet: the match's log entry is not cosigned yet; retry"
    if entry is not None:
        return None, "not excluded: the log check failed"
    return None, NOT_EXCLUDED


# -- hooks for `verify check` ----------------------------------------------------------------


def load_proofs(paths: Sequence[str]) -> dict[str, Any]:
    """``--log-proof`` files (the JSON of ``GET /v1/log/proof``) by their leaf's match id."""
    out: dict[str, Any] = {}
    for p in paths:
        try:
            raw = Path(p).read_bytes()
        except OSError as exc:
            raise UnusableInput(f"cannot read the log proof {p}: {exc}") from None
        if raw.startswith(tlog.proof.HEADER.encode() + b"\n"):
            try:
                tp = tlog.parse_proof(raw)
                leaf = json.loads(tp.extra or b"")
            except (tlog.ProofError, ValueError) as exc:
                raise UnusableInput(
                    f"{p}: not a tlog-proof with its record in the extra line ({exc})"
                ) from None
            if not isinstance(leaf, dict) or not isinstance(leaf.get("match_id"), str):
                raise UnusableInput(f"{p}: the extra line holds no record of a match")
            out[leaf["match_id"]] = OfflineProof(tp, leaf, p)
            continue
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise UnusableInput(f"cannot read the log proof {p}: {exc}") from None
        leaf = doc.get("leaf") if isinstance(doc, dict) else None
        if not isinstance(leaf, dict) or not isinstance(leaf.get("match_id"), str):
            raise UnusableInput(
                f"{p} is not an inclusion proof (GET /v1/log/proof) "
                "with a commitment record as its leaf"
            )
        out[leaf["match_id"]] = doc
    return out


def log_hook(
    reports: list[dict[str, Any]],
    items: list[tuple[str, Any, str]],
    keys_b64: list[dict[str, Any] | None],
    server: str | None,
    proofs: dict[str, Any],
    state: HeadState,
    policy: tlog.Policy | None = None,
) -> None:
    """``verify check``'s log step, after the transcripts themselves were checked: the
    ``log`` and ``downgrade`` checks added to each report (in place); a failure makes it
    ``failed``."""
    from .core import load_document

    fetchers: dict[str, HttpFetch] = {}
    try:
        for rep, (kind, payload, label), kb in zip(reports, items, keys_b64, strict=True):
            try:
                doc = load_document(payload) if kind == "file" else payload
            except UnusableInput:
                continue
            if rep.get("status") == "unusable" or not isinstance(doc, dict):
                continue
            keys = KeySet.from_b64(kb) if kb is not None else None
            base = server.rstrip("/") if server else server_base(label) if kind == "doc" else None
            fetch = None
            if base is not None:
                fetch = fetchers.get(base) or fetchers.setdefault(base, HttpFetch(base))
            proof = proofs.get(str(doc.get("match_id")))
            found: dict[str, Any] = {}
            ok, detail = check_transcript(doc, keys, proof, fetch, base, state, policy, found)
            rep["checks"].append({"name": "log", "ok": ok, "detail": detail})
            d_ok, d_detail = downgrade_row(ok, found)
            rep["checks"].append({"name": "downgrade", "ok": d_ok, "detail": d_detail})
            if found.get("pending") and rep["status"] == VERIFIED:
                # never "verified" while the log's checkpoint falls short of the quorum
                rep["status"] = UNCHECKED
                rep["unchecked"] = "the log's witness cosignatures not checked yet"
            failed = [("downgrade", d_detail)] if d_ok is False else []
            if ok is False and d_ok is not False:
                failed.append(("log", detail))
            if "reveal" in found:
                r_ok, r_detail = found["reveal"]
                rep["checks"].append({"name": "reveal", "ok": r_ok, "detail": r_detail})
                if r_ok is False:
                    failed.append(("reveal", r_detail))
                elif r_ok is None and rep["status"] == VERIFIED:
                    # fairness-v2 §8: never "verified" while the log's reveal is not checked
                    rep["status"] = UNCHECKED
                    rep["unchecked"] = "the log's reveal record not checked yet"
            for name, message in failed:
                rep["failures"].append(
                    dict(check=name, message=message, seq=None, expected=None, found=None)
                )
                rep["status"] = "failed"
    finally:
        for f in fetchers.values():
            f.close()
    state.save()


def open_state(state_file: str | None, no_state: bool) -> HeadState:
    if no_state and state_file:
        raise click.UsageError("--state and --no-state exclude each other")
    if no_state:
        return HeadState.load(None)
    return HeadState.load(Path(state_file) if state_file else default_state_path())

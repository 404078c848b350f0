"""The ``log`` step of ``verify``: a transcript's record is in the log — by an inclusion
proof from the server (``--server``) or a file (``--log-proof``: the JSON of
``GET /v1/log/proof``, or a ``c2sp.org/tlog-proof@v1`` proof checked offline against
``--policy``) — under a head consistent with every head seen before."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

import tlog
from fairness import canonical_json
from fairness.v2 import PROTOCOL_V2

from .keys import KeySet
from .log_state import (
    Fetch,
    Head,
    HeadState,
    HttpFetch,
    LogCheckFailed,
    _check_signed,
    _hex_list,
    _why,
    default_state_path,
    parse_head,
    reconcile,
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
    for name in ("protocol", "match_id", "game", "ruleset", "commitment", "log_index"):
        if leaf.get(name) != transcript.get(name):
            raise LogCheckFailed(
                f"log entry {idx} is the commitment record of another match: "
                f"its {name} is {leaf.get(name)!r}, the transcript's "
                f"{transcript.get(name)!r}"
            )
    _check_signed(leaf, keys, f"the commitment record at log index {idx}")
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


def _leaf_matches(transcript: dict[str, Any], leaf: dict[str, Any], idx: int) -> None:
    """The logged record is this transcript's (a v1 commitment or a v2 lock)."""
    if leaf.get("type") == "lock":
        names: tuple[str, ...] = ("protocol", "match_id", "game", "ruleset", "commitment")
    elif leaf.get("type") == "commitment":
        names = ("protocol", "match_id", "game", "ruleset", "commitment", "log_index")
    else:
        raise LogCheckFailed(f"log entry {idx} is not a commitment or lock record")
    for name in names:
        if leaf.get(name) != transcript.get(name):
            raise LogCheckFailed(
                f"log entry {idx} is the record of another match: its "
                f"{name} is {leaf.get(name)!r}, the transcript's "
                f"{transcript.get(name)!r}"
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
        _leaf_matches(transcript, off.leaf, idx)
        if keys is not None:
            _check_signed(off.leaf, keys, f"the record at log index {idx}")
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
    who = ", ".join(cosigned) or "no witness"
    return True, (
        f"included at index {idx} under the checkpoint of size {cp.size} of "
        f"{cp.origin}, cosigned by {who} (the policy's quorum is met)"
    )


def check_transcript(
    transcript: dict[str, Any],
    keys: KeySet | None,
    proof: Any,
    fetch: Fetch | None,
    server: str | None,
    state: HeadState,
    policy: tlog.Policy | None = None,
) -> tuple[bool | None, str]:
    """The ``log`` check: (ok, detail); ok None when it could not be made."""
    idx = transcript.get("log_index")
    if idx is None:
        idx = transcript.get("lock_index")  # qahwa-fair/2: the lock's entry
    if isinstance(proof, OfflineProof) and isinstance(idx, int) and not isinstance(idx, bool):
        return check_offline(transcript, idx, keys, proof, policy, state)
    if transcript.get("protocol") == PROTOCOL_V2:
        # fairness-v2.md §8-§9: the lock is in the C2SP log at lock_index; it is checked
        # from a tlog-proof (--log-proof FILE --policy FILE) or by `verify log`.
        if proof is None and fetch is None:
            return None, (
                "not checked: no log source (give --server URL or --log-proof "
                "FILE); the verdict does not depend on it"
            )
        return None, (
            "not checked: a qahwa-fair/2 lock's inclusion is checked from its "
            "tlog-proof (--log-proof FILE.tlog-proof --policy FILE)"
        )
    if idx is None:
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
    return ok, f"included at index {idx} of tree size {head.tree_size}; {detail}"


# -- hooks for `verify check` ----------------------------------------------------------------


def load_proofs(paths: Sequence[str]) -> dict[str, Any]:
    """``--log-proof`` files (the JSON of ``GET /v1/log/proof``) by their leaf's match id."""
    from .keys import UnusableInput

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


def apply_log_checks(
    reports: list[dict[str, Any]],
    docs: list[Any],
    keysets: list[KeySet | None],
    bases: list[str | None],
    proofs: dict[str, Any],
    state: HeadState,
    policy: tlog.Policy | None = None,
) -> None:
    """Add the ``log`` check to each report (in place); a failure makes it ``failed``."""
    fetchers: dict[str, HttpFetch] = {}
    try:
        for rep, doc, keys, base in zip(reports, docs, keysets, bases, strict=True):
            if rep.get("status") == "unusable" or not isinstance(doc, dict):
                continue
            fetch = None
            if base is not None:
                fetch = fetchers.get(base) or fetchers.setdefault(base, HttpFetch(base))
            proof = proofs.get(str(doc.get("match_id")))
            ok, detail = check_transcript(doc, keys, proof, fetch, base, state, policy)
            rep["checks"].append({"name": "log", "ok": ok, "detail": detail})
            if ok is False:
                rep["failures"].append(
                    {
                        "check": "log",
                        "message": detail,
                        "seq": None,
                        "expected": None,
                        "found": None,
                    }
                )
                rep["status"] = "failed"
    finally:
        for f in fetchers.values():
            f.close()
    state.save()


def log_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option(
        "--no-state", is_flag=True, help="Neither read nor write the file of heads seen before."
    )(f)
    f = click.option(
        "--state",
        "state_file",
        metavar="FILE",
        help="The file of heads seen before (default: $XDG_STATE_HOME/qahwa/heads.json).",
    )(f)
    return f


def open_state(state_file: str | None, no_state: bool) -> HeadState:
    if no_state and state_file:
        raise click.UsageError("--state and --no-state exclude each other")
    if no_state:
        return HeadState.load(None)
    return HeadState.load(Path(state_file) if state_file else default_state_path())


def log_hook(
    reports: list[dict[str, Any]],
    items: list[tuple[str, Any, str]],
    keys_b64: list[dict[str, Any] | None],
    server: str | None,
    proofs: dict[str, Any],
    state: HeadState,
    policy: tlog.Policy | None = None,
) -> None:
    """``verify check``'s log step, after the transcripts themselves were checked."""
    from .core import load_document
    from .keys import UnusableInput, server_base

    docs: list[Any] = []
    keysets: list[KeySet | None] = []
    bases: list[str | None] = []
    for (kind, payload, label), kb in zip(items, keys_b64, strict=True):
        doc: Any = payload
        if kind == "file":
            try:
                doc = load_document(payload)
            except UnusableInput:
                doc = None
        docs.append(doc)
        keysets.append(KeySet.from_b64(kb) if kb is not None else None)
        bases.append(
            server.rstrip("/") if server else server_base(label) if kind == "doc" else None
        )
    apply_log_checks(reports, docs, keysets, bases, proofs, state, policy)

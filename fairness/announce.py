"""Key announcements (fairness-v2.md, revision "key announcements"): how a server's next
signing key becomes trusted by a client that trusts the key in force.

``qahwa keys rotate`` stages a new key; every key in force at that moment signs a
``key_announcement`` record naming the new key and the time it signs from (``not_before``).
``/v1/keys`` lists each key's announcements, and the match event stream pushes them
(``event: key_announcement``). A conforming client takes a new key only through an
announcement signed by a key it already trusts (:func:`extend_trusted`), and keeps every
announcement it refused; a record signed by a key nobody it trusts announced stays refused.

The record (canonical JSON, signed as every record, fairness-v1 §6)::

    {"type": "key_announcement", "protocol": "qahwa-fair/2",
     "key": {"key_id": "…", "alg": "ed25519", "public_key": "<base64>"},
     "not_before": "<RFC 3339: the new key signs nothing before>",
     "created_at": "<RFC 3339: when it was announced, before the signer's retired_at>",
     "signature": {"alg": "ed25519", "key_id": "<the announcing key>", "value": "…"}}

Ed25519 signatures are deterministic, so every process holding the announcing key makes the
same bytes, whenever it makes them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .protocol import PROTOCOL_V2, known_protocol
from .records import TIME_FIELDS, Announcement, RecordError, parse_rfc3339, when

ANNOUNCEMENT = "key_announcement"


def announcement_body(
    key_id: str, public_key: str, not_before: str, created_at: str
) -> dict[str, Any]:
    """The unsigned announcement of the key ``key_id`` (base64 ``public_key``) that signs
    from ``not_before`` on, announced at ``created_at``."""
    return {
        "type": ANNOUNCEMENT,
        "protocol": PROTOCOL_V2,
        "key": {"key_id": key_id, "alg": "ed25519", "public_key": public_key},
        "not_before": not_before,
        "created_at": created_at,
    }


def _when(value: Any, name: str) -> float:
    return when(value, "key announcement", name)


def check_announcement(record: Any, trusted: Mapping[str, str]) -> tuple[str, str]:
    """``(key_id, base64 public key)`` of the key ``record`` announces
    (:meth:`fairness.records.Announcement.open`); else RecordError."""
    opened = Announcement.open(record, trusted)
    return opened.key_id, opened.public_key


def announcements_in(doc: Any) -> list[dict[str, Any]]:
    """Every announcement a ``/v1/keys`` document (a dict or a model) lists: each key's
    ``announcements``."""
    if hasattr(doc, "model_dump"):
        doc = doc.model_dump(mode="json")
    out: list[dict[str, Any]] = []
    keys = doc.get("keys") if isinstance(doc, Mapping) else None
    for k in keys if isinstance(keys, list) else []:
        found = k.get("announcements") if isinstance(k, Mapping) else None
        out.extend(a for a in (found if isinstance(found, list) else []) if isinstance(a, dict))
    return out


@dataclass
class Extension:
    """What :func:`extend_trusted` made of some announcements: the keys ``added`` (key_id →
    base64 public key), the announcements ``accepted`` (the ones that added a key), and the
    ones ``refused``, each as ``{"announcement", "reason"}``."""

    added: dict[str, str] = field(default_factory=dict)
    accepted: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)


def extend_trusted(trusted: Mapping[str, str], records: Iterable[Any]) -> Extension:
    """Take the keys that ``records`` announce, each through an announcement signed by a key
    of ``trusted`` or by a key taken so (a chain of rotations); the others are refused. A
    key already trusted is neither added nor refused (its announcement is not needed)."""
    have = dict(trusted)
    out = Extension()
    pending = list(records)
    while True:
        left = []
        for rec in pending:
            try:
                kid, pub = check_announcement(rec, have)
            except RecordError as exc:
                left.append((rec, str(exc)))
                continue
            if kid in have:
                if have[kid] != pub:
                    out.refused.append(
                        {"announcement": rec, "reason": f"it names another key for {kid}"}
                    )
                continue
            have[kid] = pub
            out.added[kid] = pub
            out.accepted.append(rec)
        if len(left) == len(pending):
            break
        pending = [rec for rec, _ in left]
    for rec, reason in left:
        named = rec.get("key") if isinstance(rec, dict) else None
        if isinstance(named, dict) and named.get("key_id") in have:
            continue  # a second announcement of a key taken already (e.g. by another signer)
        out.refused.append({"announcement": rec, "reason": reason})
    return out


def extended_keys_doc(
    base: Any, added: Mapping[str, str], accepted: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """A ``/v1/keys`` document: ``base`` (a ``/v1/keys`` answer or a mapping key_id →
    public key) with the keys ``added`` listed after its own, each with the announcements
    that made it trusted. What a player saves to pin the extended set (``verify --key``,
    ``Client(keys=…)``)."""
    if hasattr(base, "model_dump"):
        base = base.model_dump(mode="json")
    if isinstance(base, Mapping) and isinstance(base.get("keys"), list):
        doc = copy.deepcopy(dict(base))
    else:
        doc = {
            "keys": [
                {"key_id": k, "alg": "ed25519", "public_key": v}
                for k, v in dict(base or {}).items()
            ]
        }
    listed = {k.get("key_id") for k in doc["keys"] if isinstance(k, Mapping)}
    for kid, pub in added.items():
        if kid in listed:
            continue
        mine = [dict(a) for a in accepted if (a.get("key") or {}).get("key_id") == kid]
        doc["keys"].append(
            {
                "key_id": kid,
                "alg": "ed25519",
                "public_key": pub,
                "created_at": mine[0]["created_at"] if mine else None,
                "activates_at": mine[0]["not_before"] if mine else None,
                "announcements": mine,
            }
        )
    # an announcing key is retired when the key it announces takes over (its not_before):
    # nothing it signs from then on counts (``retired_at``, as /v1/keys lists it)
    by_id = {k.get("key_id"): k for k in doc["keys"] if isinstance(k, dict)}
    for a in accepted:
        signer = by_id.get((a.get("signature") or {}).get("key_id"))
        at = a.get("not_before")
        if signer is not None and isinstance(at, str):
            held = signer.get("retired_at")
            if not isinstance(held, str) or _when(at, "not_before") < _when(held, "retired_at"):
                signer["retired_at"] = at
    return doc


def retired_in(doc: Any, accepted: Iterable[Mapping[str, Any]] = ()) -> dict[str, str]:
    """key_id → ``retired_at`` of every key a ``/v1/keys`` document (a dict or a model) says
    is retired, and of every key that signed one of the ``accepted`` announcements (retired
    when the key it announces takes over, its ``not_before``): the earlier time of the two."""
    if hasattr(doc, "model_dump"):
        doc = doc.model_dump(mode="json")
    found: list[tuple[Any, Any]] = []
    keys = doc.get("keys") if isinstance(doc, Mapping) else None
    for k in keys if isinstance(keys, list) else []:
        if isinstance(k, Mapping):
            found.append((k.get("key_id"), k.get("retired_at")))
    for a in accepted:
        found.append(((a.get("signature") or {}).get("key_id"), a.get("not_before")))
    out: dict[str, str] = {}
    for kid, at in found:
        if not isinstance(kid, str) or parse_rfc3339(at) is None:
            continue
        held = out.get(kid)
        if held is None or (parse_rfc3339(at) or 0.0) < (parse_rfc3339(held) or 0.0):
            out[kid] = at
    return out


#: the field holding the time a signed record of each type names as its own
OWN_TIME = {
    "receipt": "at",
    "head": "at",
    "refusal": "at",
    "lock": "locked_at",
    "reveal": "ended_at",
    "tree_head": "timestamp",
    "key_announcement": "created_at",
}


def record_time(record: Mapping[str, Any]) -> tuple[str, Any]:
    """``(field, value)`` of the time a signed record names as its own (:data:`OWN_TIME`: a
    receipt's, head's or refusal's ``at``, a lock's ``locked_at``, a reveal record's
    ``ended_at``, a tree head's ``timestamp``…), a qahwa-fair/2 or /3 transcript's
    ``ended_at`` (the transcript is signed when the match ends); any other record's first of
    ``timestamp``, ``ended_at``, ``locked_at`` and ``created_at`` (qahwa-fair/1 transcripts,
    commit records). The value is None when the record does not carry it."""
    kind = record.get("type")
    name = OWN_TIME.get(kind if isinstance(kind, str) else "")
    if name is None and "events" in record:  # a transcript
        name = known_protocol(record).transcript_time
    if name is None:
        name = next((n for n in TIME_FIELDS if record.get(n) is not None), TIME_FIELDS[0])
    return name, record.get(name)


def retired_problem(key_id: str, retired_at: str, record: Mapping[str, Any]) -> str | None:
    """Why ``record``, signed by ``key_id``, retired at ``retired_at``, does not count as
    signed by it, or None: a retired key's signature counts only on a record that names its
    own time (:func:`record_time`), before the key's ``retired_at``; a transcript's events
    are stamped before it too."""
    retired = parse_rfc3339(retired_at)
    if retired is None:
        return f"key {key_id} has a retired_at that is not a time ({retired_at!r})"
    name, value = record_time(record)
    own = parse_rfc3339(value)
    if own is None:
        told = "names no" if value is None else f"has no valid ({value!r})"
        return (
            f"it is signed by key {key_id}, which was retired at {retired_at}, and {told} time "
            f"of its own ({name}): a retired key's signature counts only on a record that "
            "names its time, before the key's retired_at"
        )
    if own >= retired:
        return (
            f"it was signed by key {key_id} at {value} ({name}), at or after "
            f"that key was retired ({retired_at})"
        )
    events = record.get("events")
    for ev in events if isinstance(events, list) else []:
        stamp = ev.get("at") if isinstance(ev, dict) else None
        when = parse_rfc3339(stamp)
        if when is not None and when >= retired:
            return (
                f"it is signed by key {key_id}, retired at {retired_at}, but its event "
                f"{ev.get('seq')!r} is stamped {stamp}, at or after that: a retired key "
                "signs nothing that happened after its retired_at"
            )
    return None


__all__ = [
    "ANNOUNCEMENT",
    "OWN_TIME",
    "Extension",
    "announcement_body",
    "announcements_in",
    "check_announcement",
    "extend_trusted",
    "extended_keys_doc",
    "parse_rfc3339",
    "record_time",
    "retired_in",
    "retired_problem",
]

"""``verify log``: a retired key's signature on a leaf counts only before its retirement
(issue 49); and ``--transcripts`` compares each served transcript with its match's reveal
record in the log (fairness-v2 §8): its SHA-256, and the chain head (recomputed from its
events), result and ``ended_at`` the record signs, so a reveal record whose fields disagree
with the transcript it hashes is named too."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fairness import canonical_json
from tests.verify.test_verify_cli_helpers import v2_match
from tests.verify.test_verify_retired import retired_at
from verify_cli.monitor import (
    MonitorResult,
    Store,
    _check_transcripts,
    _reveal_problems,
    check_leaf,
)


def store_with(doc: dict[str, Any], reveal: dict[str, Any]) -> Store:
    """A monitor store that audited ``doc``'s lock (entry 0) and the ``reveal`` (entry 1)."""
    store = Store(None)
    _, info = _reveal_problems(reveal, 1)
    store.db.execute(
        "INSERT INTO locks (match_id, idx, commitment, end_by, nonhouse, game, revealed, "
        "transcript) VALUES (?, 0, '', 0, 2, ?, 1, ?)",
        (doc["match_id"], doc["game"], info[4]),
    )
    return store


def reveal_of(doc: dict[str, Any], **change: Any) -> dict[str, Any]:
    return {
        "type": "reveal",
        "protocol": "qahwa-fair/2",
        "match_id": doc["match_id"],
        "lock_index": 0,
        "server_seed": doc["server_seed"],
        "chain": doc["chain"],
        "transcript_sha256": hashlib.sha256(canonical_json(doc)).hexdigest(),
        "reason": doc["result"].get("reason"),
        "forfeited": [],
        "house": [],
        "result": doc["result"],
        "ended_at": doc["ended_at"],
        **change,
    }


def audit(doc: dict[str, Any], reveal: dict[str, Any]) -> list[str]:
    store = store_with(doc, reveal)
    try:
        res = MonitorResult(server="test", ok=True)
        _check_transcripts(res, lambda path, params: (200, json.loads(json.dumps(doc))), store)
    finally:
        store.close()
    return res.failures


def test_the_served_transcript_agrees_with_every_field_its_reveal_signs() -> None:
    doc = v2_match("tawla", {"match_length": 1}, seed=4)
    assert audit(doc, reveal_of(doc)) == []
    mid = doc["match_id"]
    # the same transcript hash, but a reveal record that signs another end of the match
    assert audit(doc, reveal_of(doc, chain="00" * 32)) == [
        f"the transcript the server serves for {mid} has another chain head than its reveal "
        "record signs"
    ]
    other = {**doc["result"], "winners": [9]}
    assert audit(doc, reveal_of(doc, result=other)) == [
        f"the transcript the server serves for {mid} has another result than its reveal "
        "record signs"
    ]
    # a served transcript whose chain field agrees but whose events do not chain to it
    cut = {**doc, "events": doc["events"][:-1]}
    assert audit(cut, reveal_of(cut)) == [
        f"the events of the transcript the server serves for {mid} do not chain to the head "
        "its reveal record signs"
    ]


def test_the_monitor_counts_a_retired_keys_signature_only_before_its_retirement() -> None:
    doc = v2_match("tawla", {"match_length": 1}, seed=4)
    lock = doc["lock"]
    raw = canonical_json(lock)
    assert check_leaf(raw, 0, retired_at(lock["locked_at"], 1.0))[0] == []
    probs, _, _ = check_leaf(raw, 0, retired_at(lock["locked_at"], -1.0))
    assert any("at or after that key was retired" in p for p in probs), probs

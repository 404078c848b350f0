"""Retired keys (issue 49): a retired key's signature counts only on a record that names its
own time (a qahwa-fair/2 transcript its ``ended_at``, a receipt its ``at``, …), and that time
is before the key's ``retired_at``; a transcript's events are stamped before it too.
Genuine records signed before the rotation still verify."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from fairness import PROTOCOL, chain_next, chain_start, format_time_ms, parse_time_us
from games.transcript import simulate_match
from tests.verify.test_verify_cli_helpers import SIGNER, key_b64, v2_match
from verify_cli.core import FAILED, VERIFIED, verify_document
from verify_cli.keys import KeySet, parse_keys


def retired_at(when: str, seconds: float) -> KeySet:
    """SIGNER's key as /v1/keys lists it once retired ``seconds`` after ``when``."""
    t = datetime.fromisoformat(when.replace("Z", "+00:00")) + timedelta(seconds=seconds)
    keys = parse_keys(key_b64(), source="file", origin="test")
    (kid,) = keys.keys
    keys.retired[kid] = t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return keys


def last_time(doc: dict[str, Any]) -> str:
    """The latest time a transcript names (its ended_at or its last event's at)."""
    times = [doc["ended_at"], *(e["at"] for e in doc["events"] if "at" in e)]
    return max(times, key=lambda t: datetime.fromisoformat(t.replace("Z", "+00:00")))


def failure(rep: dict[str, Any], check: str) -> str:
    found = [f["message"] for f in rep["failures"] if f["check"] == check]
    assert found, rep["failures"]
    return found[0]


def test_a_transcript_resigned_with_a_retired_key_without_its_times_fails() -> None:
    doc = v2_match("tawla", {"match_length": 1}, seed=4)
    keys = retired_at(last_time(doc), 1.0)  # rotated a second after the match ended
    rep = verify_document(doc, keys)
    assert rep["status"] == VERIFIED, rep["failures"]  # genuine, signed before the rotation
    # made after the rotation, re-signed with the retired key, its times removed
    body = {k: v for k, v in doc.items() if k not in ("signature", "ended_at", "created_at")}
    rep = verify_document(SIGNER.signed(body), keys)
    assert rep["status"] == FAILED
    msg = failure(rep, "signature")
    assert "names no time of its own (ended_at)" in msg and "retired" in msg
    # a created_at alone does not name a v2 transcript's time: it is signed at the end
    body = {k: v for k, v in doc.items() if k not in ("signature", "ended_at")}
    rep = verify_document(SIGNER.signed(body), keys)
    assert rep["status"] == FAILED and "(ended_at)" in failure(rep, "signature")


def test_a_transcript_backdated_before_the_retirement_fails_on_its_events() -> None:
    doc = v2_match("tawla", {"match_length": 1}, seed=4)
    times = [e["at"] for e in doc["events"]]
    mid = times[len(times) // 2]
    keys = retired_at(mid, 0.0)  # the key retired while the match was played
    body = {k: v for k, v in doc.items() if k != "signature"}
    body["ended_at"] = format_time_ms(parse_time_us(mid) - 1000)  # stamped just before
    rep = verify_document(SIGNER.signed(body), keys)
    assert rep["status"] == FAILED
    msg = failure(rep, "signature")
    assert "is stamped" in msg and "at or after that" in msg


def receipt(doc: dict[str, Any], n: int) -> dict[str, Any]:
    h = chain_start(doc["lock"])
    for ev in doc["events"][: n + 1]:
        h = chain_next(h, ev)
    return {
        "type": "receipt",
        "protocol": doc["protocol"],
        "match_id": doc["match_id"],
        "seq": n,
        "chain": h.hex(),
        "at": doc["events"][n]["at"],
    }


def test_a_receipt_resigned_with_a_retired_key_after_its_retirement_fails() -> None:
    doc = v2_match("tawla", {"match_length": 1}, seed=4)
    n = len(doc["events"]) // 2
    keys = retired_at(doc["events"][n]["at"], -1.0)  # retired a second before event n
    # the transcript is the new key's: only the receipts are checked against the old one
    late = SIGNER.signed(receipt(doc, n))
    rep = verify_document(doc, None, receipts=[late], allow_unsigned=True)
    assert not [f for f in rep["failures"] if f["check"] == "receipts"]
    plain = parse_keys(key_b64(), source="file", origin="test")
    rep = verify_document(doc, plain, receipts=[late])
    assert rep["status"] == VERIFIED, rep["failures"]  # no retirement: the receipt is good
    rep = verify_document(doc, keys, receipts=[late])
    assert rep["status"] == FAILED
    msg = failure(rep, "receipts")
    assert f"at {late['at']} (at)" in msg and "retired" in msg


def test_genuine_v1_and_v2_records_signed_before_the_rotation_still_verify() -> None:
    v1, _ = simulate_match("tawla", {"match_length": 1}, seed=5, protocol=PROTOCOL)
    v1 = SIGNER.signed(
        {**v1, "created_at": "2025-05-01T10:00:00Z", "ended_at": "2025-05-01T10:09:00Z"}
    )
    rep = verify_document(v1, retired_at("2025-05-01T10:09:00Z", 60.0))
    assert rep["status"] == VERIFIED, rep["failures"]
    # … and one that names no time, signed by the retired key, does not
    body = {k: v for k, v in v1.items() if k not in ("signature", "created_at", "ended_at")}
    rep = verify_document(SIGNER.signed(body), retired_at("2025-05-01T10:09:00Z", 60.0))
    assert rep["status"] == FAILED and "names no time of its own" in failure(rep, "signature")
    doc = v2_match("tawla", {"match_length": 1}, seed=4)
    receipts = [SIGNER.signed(receipt(doc, n)) for n in range(len(doc["events"]))]
    rep = verify_document(copy.deepcopy(doc), retired_at(last_time(doc), 1.0), receipts=receipts)
    assert rep["status"] == VERIFIED, rep["failures"]

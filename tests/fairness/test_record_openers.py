"""fairness.records opens every record kind in one place, as Go's ``note.Open`` does: one
opener per kind (by the record's ``type`` through ``records.open``), one RecordError naming
the check that failed, and the only Ed25519 checks of records and seat signatures in the
project's packages (checked on the source below).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from fairness import Signer, public_key_b64, seat_sig_message
from fairness import records as rec
from fairness.announce import announcement_body
from fairness.records import (
    Commit,
    Head,
    Lock,
    LockSeat,
    Read,
    Receipt,
    RecordError,
    Refusal,
    open_event,
    open_transcript,
)

ROOT = Path(__file__).resolve().parents[2]
SERVER = Signer.generate()
KEYS = {SERVER.key_id: public_key_b64(SERVER.public_key)}
SEAT = Signer.generate()
LOCK = Lock(
    "m_7",
    "tawla",
    '{"match_length":1}',
    "dd" * 32,
    (
        LockSeat(0, "Nour", False, "aa" * 32, public_key_b64(SEAT.public_key), None),
        LockSeat(1, "Karim", False, "bb" * 32, None, None),
    ),
    locked_at="2026-12-03T09:01:00Z",
    reveal_by="2026-12-03T09:03:00Z",
    end_by="2026-12-04T09:01:00Z",
)


def test_open_takes_each_kind_by_its_type() -> None:
    lock = rec.open(LOCK.sign(SERVER), KEYS)
    assert isinstance(lock, Lock) and lock == LOCK
    commit = Commit(
        "m_7", "tawla", '{"match_length":1}', "dd" * 32, (("Nour", False),), "2026-12-03T09:00:00Z"
    )
    assert rec.open(commit.sign(SERVER), KEYS) == commit
    for bad, words in [
        ({"ruleset": "[1]"}, "ruleset is not a JSON object"),
        ({"seats": [{"seat": 0, "name": "Nour"}]}, "seat entry 0 is not seat 0"),
        ({"created_at": None}, "created_at is not a string"),
    ]:
        with pytest.raises(RecordError, match=words) as err:
            rec.open(SERVER.signed({**commit.to_json(), **bad}), KEYS)
        assert (err.value.kind, err.value.record) == ("shape", "commit record")
    for record in (
        Receipt("m_7", 3, "ab" * 32, "2026-12-03T09:05:00.000Z"),
        Head("m_7", -1, "ab" * 32, "2026-12-03T09:05:00.000Z"),
        Refusal("m_7", "cd" * 32, 409, "stale_chain", "2026-12-03T09:05:00.000Z"),
    ):
        signed = record.sign(SERVER)
        assert rec.open(signed, KEYS) == signed
    new = Signer.generate()
    ann = SERVER.signed(
        announcement_body(
            new.key_id,
            public_key_b64(new.public_key),
            "2026-12-05T00:00:00Z",
            "2026-12-04T00:00:00Z",
        )
    )
    opened = rec.open(ann, KEYS)
    assert (opened.key_id, opened.signed_by) == (new.key_id, SERVER.key_id)
    with pytest.raises(RecordError, match="no signed record") as err:
        rec.open({"type": "transcript"}, KEYS)
    assert err.value.kind == "type"


def test_a_record_read_as_text_keeps_its_text() -> None:
    text = json.dumps(LOCK.sign(SERVER), separators=(",", ":"))
    lock = Lock.open(text, KEYS)
    assert lock == LOCK and isinstance(lock.signed, Read) and lock.signed.text == text
    assert Read(text) == json.loads(text)
    with pytest.raises(RecordError, match="not JSON") as err:
        Lock.open('{"type": "lock", "type": "lock"}', None)  # a duplicate key (§1)
    assert err.value.kind == "shape"


@pytest.mark.parametrize(
    ("tamper", "step", "reason"),
    [
        (lambda r: r.pop("signature"), "unsigned", "it carries no signature"),
        (lambda r: r["signature"].update(key_id="k_x"), "key", "not one of the server keys"),
        (
            lambda r: r["signature"].update(alg="rsa"),
            "alg",
            "unsupported signature algorithm 'rsa'",
        ),
        (lambda r: r.update(seq=4), "value", "signature does not match the record"),
        (lambda r: r["signature"].update(value="?"), "value", "signature value is not base64"),
        (lambda r: r.update(chain="\ud800"), "canonical", "no canonical JSON"),
    ],
)
def test_each_signature_failure_is_one_record_error(tamper: Any, step: str, reason: str) -> None:
    receipt = Receipt("m_7", 3, "ab" * 32, "2026-12-03T09:05:00.000Z").sign(SERVER)
    tamper(receipt)
    with pytest.raises(RecordError) as err:
        rec.open_receipt(receipt, KEYS)
    assert (err.value.kind, err.value.step, err.value.record) == ("signature", step, "receipt")
    assert reason in err.value.reason


class _Retiring:
    """A key ring whose one key retired at 09:05: what ``verify``'s KeySet does."""

    def pick(self, key_id: Any) -> tuple[Any, str]:
        return rec.public_key(KEYS[SERVER.key_id]), ""

    def retired_problem(self, key_id: Any, record: dict[str, Any]) -> str | None:
        return "retired" if record.get("at", "") >= "2026-12-03T09:05" else None


def test_the_key_ring_decides_on_retired_keys() -> None:
    early = Receipt("m_7", 3, "ab" * 32, "2026-12-03T09:04:00.000Z").sign(SERVER)
    late = Receipt("m_7", 3, "ab" * 32, "2026-12-03T09:06:00.000Z").sign(SERVER)
    assert rec.check_signature(early, _Retiring(), "receipt") == SERVER.key_id
    with pytest.raises(RecordError) as err:
        rec.check_signature(late, _Retiring(), "receipt")
    assert err.value.step == "retired" and err.value.reason == "retired"
    with pytest.raises(RecordError) as err:
        open_transcript({"ended_at": "x"}, KEYS)  # unsigned
    assert err.value.step == "unsigned"


def _event(sig: str | None = None, seat: int = 0) -> dict[str, Any]:
    ev: dict[str, Any] = {"type": "action", "seat": seat, "action": {"move": 1}}
    if sig is not None:
        ev["sig"] = sig
    return ev


def test_an_event_carries_its_keyed_seats_signature_and_no_other() -> None:
    prev = "ef" * 32
    good = SEAT.sign_bytes(seat_sig_message("m_7", prev, _event()))
    assert open_event(_event(good), LOCK, prev) == _event(good)
    assert open_event(_event(seat=1), LOCK, prev) == _event(seat=1)
    cases = [
        (_event(), "unsigned"),
        (_event(good, seat=1), "unkeyed"),
        (_event(good), "value"),  # over another chain head
    ]
    for ev, step in cases:
        with pytest.raises(RecordError) as err:
            open_event(ev, LOCK, "00" * 32 if step == "value" else prev)
        assert (err.value.kind, err.value.step) == ("signature", step)
    with pytest.raises(RecordError) as err:
        open_event({"type": "roll", "sig": good}, None, prev)
    assert err.value.reason == "no seat caused it"


def _calls_and_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name in ("verify_record", "verify_bytes"):
                found.add(name)
        if isinstance(node, ast.ImportFrom) and any(
            a.name == "InvalidSignature" for a in node.names
        ):
            found.add("InvalidSignature")
    return found


def test_record_signatures_are_checked_in_one_module() -> None:
    """No module of the project's packages but fairness/records.py calls the Ed25519 checks
    of a record or a seat signature, or catches what a failed check raises (tlog's notes
    and checkpoints are C2SP's, not records)."""
    packages = ("fairness", "games", "sealed", "service", "verify_cli", "qahwa_client")
    where = {
        str(p.relative_to(ROOT)): found
        for pkg in packages + ("qahwa_page",)
        for p in (ROOT / pkg).glob("*.py" if pkg == "qahwa_page" else "**/*.py")
        if (found := _calls_and_imports(p))
    }
    assert where == {"fairness/records.py": {"verify_record", "verify_bytes", "InvalidSignature"}}

"""fairness.records: the signed records of qahwa-fair/2, built and checked in one place.

The bytes are the ones the protocol fixes (fairness-v2.md §1-§8: the field names and values
below are the spec's; canonical JSON sorts keys); a lock checks its signature, type,
protocol and shape, and its continuity with the commit record, each failure naming its kind.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from fairness import Signer, canonical_json, chain_start, public_key_b64
from fairness.records import Commit, Lock, LockSeat, Receipt, RecordError, Reveal
from games.base import MatchContext
from tests.support import vector

SC0, SC1 = "aa" * 32, "bb" * 32
TIP = "cc" * 32
SEATS = (
    LockSeat(0, "Nour", False, SC0, None, TIP),
    LockSeat(1, "Karim", True, SC1, None, None),
)
LOCK = Lock(
    "m_0001",
    "tawla",
    '{"match_length":1}',
    "dd" * 32,
    SEATS,
    locked_at="2026-12-03T09:01:00Z",
    reveal_by="2026-12-03T09:03:00Z",
    end_by="2026-12-04T09:01:00Z",
)
SPEC_LOCK: dict[str, Any] = {
    "type": "lock",
    "protocol": "qahwa-fair/2",
    "match_id": "m_0001",
    "game": "tawla",
    "ruleset": '{"match_length":1}',
    "commitment": "dd" * 32,
    "seats": [
        {
            "seat": 0,
            "name": "Nour",
            "house": False,
            "seed_commitment": SC0,
            "key": None,
            "roll_chain": TIP,
        },
        {
            "seat": 1,
            "name": "Karim",
            "house": True,
            "seed_commitment": SC1,
            "key": None,
            "roll_chain": None,
        },
    ],
    "locked_at": "2026-12-03T09:01:00Z",
    "reveal_by": "2026-12-03T09:03:00Z",
    "end_by": "2026-12-04T09:01:00Z",
}


@pytest.fixture(scope="module")
def signer() -> Signer:
    return Signer.generate()


def keys_of(signer: Signer) -> dict[str, str]:
    return {signer.key_id: public_key_b64(signer.public_key)}


def test_lock_bytes_are_the_spec_record() -> None:
    assert canonical_json(LOCK.to_json()) == canonical_json(SPEC_LOCK)
    assert LOCK.sign(None) == SPEC_LOCK
    assert Lock.chain_start(SPEC_LOCK) == chain_start(SPEC_LOCK)


def test_a_signed_lock_checks_and_parses_back(signer: Signer) -> None:
    signed = LOCK.sign(signer)
    assert signed["signature"]["key_id"] == signer.key_id
    assert Lock.open(signed, keys_of(signer)) == LOCK
    assert Lock.parse(signed) == LOCK


def _resigned(signer: Signer, **changes: Any) -> dict[str, Any]:
    return signer.signed({**SPEC_LOCK, **changes})


@pytest.mark.parametrize(
    ("change", "kind", "words"),
    [
        ({"type": "commit"}, "type", "type 'commit'"),
        ({"protocol": "qahwa-fair/1"}, "protocol", "protocol 'qahwa-fair/1'"),
        ({"seats": []}, "shape", "lists no seats"),
        ({"match_id": 7}, "shape", "match_id is not a string"),
        ({"seats": [{**SPEC_LOCK["seats"][0], "seat": 1}]}, "shape", "entry 0 is not seat 0"),
        (
            {"seats": [{**SPEC_LOCK["seats"][0], "seed_commitment": "AA" * 32}]},
            "shape",
            "lowercase hex",
        ),
        ({"seats": [{**SPEC_LOCK["seats"][0], "key": 5}]}, "shape", "key is not a base64"),
        ({"seats": ["seat 0"]}, "shape", "entry 0 is not seat 0"),
    ],
)
def test_a_wrong_lock_names_what_is_wrong(
    signer: Signer, change: dict[str, Any], kind: str, words: str
) -> None:
    with pytest.raises(RecordError, match=words) as err:
        Lock.open(_resigned(signer, **change), keys_of(signer))
    assert err.value.kind == kind


def test_a_lock_signed_by_another_key_or_altered_fails_its_signature(signer: Signer) -> None:
    other = Signer.generate()
    with pytest.raises(RecordError, match="not a trusted server key") as err:
        Lock.open(LOCK.sign(other), keys_of(signer))
    assert err.value.kind == "signature"
    altered = {**LOCK.sign(signer), "end_by": "2027-01-01T00:00:00Z"}
    with pytest.raises(RecordError, match="signature does not match") as err:
        Lock.open(altered, keys_of(signer))
    assert err.value.kind == "signature"
    with pytest.raises(RecordError) as err:
        Lock.open(SPEC_LOCK, keys_of(signer))  # unsigned
    assert err.value.kind == "signature"
    with pytest.raises(RecordError) as err:
        Lock.open(["lock"], keys_of(signer))
    assert err.value.kind == "shape"


def test_the_lock_continues_its_commit_record(signer: Signer) -> None:
    commit = Commit(
        "m_0001",
        "tawla",
        '{"match_length":1}',
        "dd" * 32,
        (("Nour", False), ("Karim", True)),
        "2026-12-03T09:00:00Z",
    ).sign(signer)
    assert commit["type"] == "commit" and commit["seats"][1] == {
        "seat": 1,
        "name": "Karim",
        "house": True,
    }
    LOCK.check_commit(commit)
    with pytest.raises(RecordError, match="commitment") as err:
        LOCK.check_commit({**commit, "commitment": "ee" * 32})
    assert err.value.kind == "commit"
    renamed = [commit["seats"][0], {**commit["seats"][1], "name": "Sami"}]
    with pytest.raises(RecordError, match="seats are not the commit") as err:
        LOCK.check_commit({**commit, "seats": renamed})
    assert err.value.kind == "commit"


def test_receipt_and_reveal_are_the_spec_records(signer: Signer) -> None:
    receipt = Receipt("m_0001", -1, "ab" * 32, "2026-12-03T09:01:00Z").sign(signer)
    assert {k: v for k, v in receipt.items() if k != "signature"} == {
        "type": "receipt",
        "protocol": "qahwa-fair/2",
        "match_id": "m_0001",
        "seq": -1,
        "chain": "ab" * 32,
        "at": "2026-12-03T09:01:00Z",
    }
    transcript = {"match_id": "m_0001", "server_seed": "11" * 64, "seats": SPEC_LOCK["seats"]}
    result = {"reason": "resigned", "forfeited": [0], "winner": 1}
    reveal = Reveal.of_transcript(
        transcript, lock_index=3, chain="ab" * 32, result=result, ended_at="2026-12-03T10:00:00Z"
    ).to_json()
    assert reveal == {
        "type": "reveal",
        "protocol": "qahwa-fair/2",
        "match_id": "m_0001",
        "lock_index": 3,
        "server_seed": "11" * 64,
        "chain": "ab" * 32,
        "transcript_sha256": hashlib.sha256(canonical_json(transcript)).hexdigest(),
        "reason": "resigned",
        "forfeited": [0],
        "house": [1],
        "result": result,
        "ended_at": "2026-12-03T10:00:00Z",
    }


def test_the_lock_fixes_the_match_key_and_context_of_the_vector() -> None:
    vec = vector("fairness_v2.json")
    lock = Lock(
        vec["match_id"],
        vec["game"],
        vec["ruleset"],
        vec["commitment"],
        tuple(
            LockSeat(s["seat"], f"Seat {s['seat']}", False, s["seed_commitment"], None, tip)
            for s, tip in zip(vec["seats"], (TIP, None), strict=True)
        ),
        locked_at="2026-12-03T09:01:00Z",
        reveal_by="2026-12-03T09:03:00Z",
        end_by="2026-12-04T09:01:00Z",
    )
    reveals = [(s["client_seed"], s["nonce"]) for s in vec["seats"]]
    assert lock.match_key(vec["server_seed"], reveals).hex() == vec["K"]
    ctx = MatchContext.of_lock(lock)
    assert ctx == MatchContext(vec["match_id"], (TIP, None))

"""The v2 hot path's kept work (issue 21): the lock parsed once per match, its text sent as
stored, seat keys parsed once, the receipt for chain[-1] signed once, the row's update
statements built once. Each keeps the bytes and the checks of fairness-v2.md §7."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import service.store as store_module
from fairness import (
    PROTOCOL_V2,
    Signer,
    chain_start,
    public_key_b64,
    seat_sig_message,
)
from fairness.records import Read as StoredLock
from service.app import create_app
from service.errors import Invalid
from service.matches import MatchService, view_json
from service.settings import Settings
from service.store import KIND_MATCH, MatchRow, dumps
from tests.support import commit_all, reveal_all


@pytest.fixture()
def svc(tmp_path: Path) -> Iterator[MatchService]:
    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'q.db'}", data_dir=tmp_path))
    service: MatchService = app.state.service
    try:
        yield service
    finally:
        app.state.db.dispose()


def started(svc: MatchService) -> tuple[str, list[str], list[Signer]]:
    """A hokm match, every seat keyed, committed, locked and revealed."""
    created = svc.create_match("hokm", ruleset={}, names=None)
    mid = created["match_id"]
    tokens = [s["token"] for s in created["seats"]]
    signers = [Signer.generate() for _ in tokens]
    keys = [public_key_b64(s.public_key) for s in signers]
    nonces = commit_all(svc, mid, tokens, seed_of, keys)
    reveal_all(svc, mid, tokens, nonces, seed_of)
    return mid, tokens, signers


def seed_of(seat: int) -> str:
    return f"seed-{seat}"


def play_first_legal(
    svc: MatchService, mid: str, tokens: list[str], signers: list[Signer]
) -> dict[str, Any]:
    """The seat to move plays its first legal action, signed: the view it played from."""
    view = svc.state(mid, token=tokens[0])
    seat = view["turn"]
    view = svc.state(mid, token=tokens[seat])
    action = view["legal_actions"][0]
    sig = signers[seat].sign_bytes(
        seat_sig_message(mid, view["chain"], {"type": "action", "seat": seat, "action": action})
    )
    svc.act(mid, token=tokens[seat], action=action, version=view["version"], sig=sig)
    return view


def row(svc: MatchService, mid: str) -> MatchRow:
    with svc.store.read(mid, kind=KIND_MATCH) as tx:
        return tx.m


def test_view_json_is_the_same_json_value() -> None:
    signer = Signer.generate()
    lock = signer.signed(
        {
            "type": "lock",
            "match_id": "m_1",
            "seats": [{"seat": 0, "name": 'Zaïd "z"', "key": None}],
            "n": -1,
        }
    )
    record = StoredLock(dumps(lock))
    assert record == lock and record.text == dumps(lock)
    cases: list[dict[str, Any]] = [
        {},
        {"a": 1, "b": [1, "x"]},
        {"lock": record},
        {"match_id": "m_1", "lock": record, "chain": "ab", "lock_index": 3},
        {"seat": 1, "state": {"turn": 2, "lock": record, "chain": None}, "receipt": {"s": 1}},
        {"state": {"turn": 2}, "status": "playing"},
        {"state": {}, "lock": None},
    ]
    for obj in cases:
        out = view_json(obj)
        assert json.loads(out) == json.loads(dumps(obj)), out
    # without a lock record the bytes are dumps' own
    assert view_json({"a": 1, "lock": None}) == dumps({"a": 1, "lock": None})


def test_views_carry_the_lock_as_stored(svc: MatchService) -> None:
    mid, tokens, _ = started(svc)
    m = row(svc, mid)
    assert m.lock is not None
    view = svc.state(mid, token=tokens[0])
    assert isinstance(view["lock"], StoredLock) and view["lock"] == json.loads(m.lock)
    text = view_json(view)
    assert f'"lock":{m.lock}' in text
    assert json.loads(text)["lock"] == json.loads(m.lock)


def test_a_lock_that_differs_from_the_cached_one_is_parsed_again(svc: MatchService) -> None:
    """A lock made in a transaction that rolled back is never served: the cache keeps the
    text it parsed and compares it with the row's."""
    mid, _, _ = started(svc)
    m = row(svc, mid)
    assert m.lock is not None
    first = svc.lock_record(m)
    assert svc.lock_record(m) is first  # kept
    other = json.loads(m.lock)
    other["locked_at"] = "2000-01-01T00:00:00.000Z"
    moved = dataclasses.replace(m, lock=dumps(other))
    again = svc.lock_record(moved)
    assert again is not first and again["locked_at"] == "2000-01-01T00:00:00.000Z"
    assert svc.start_receipt(moved)["chain"] == chain_start(other).hex()


def test_the_kept_start_receipt_is_the_one_signed_afresh(svc: MatchService) -> None:
    mid, _, _ = started(svc)
    m = row(svc, mid)
    lock = json.loads(str(m.lock))
    fresh = svc.signer.signed(
        {
            "type": "receipt",
            "protocol": PROTOCOL_V2,
            "match_id": mid,
            "seq": -1,
            "chain": chain_start(lock).hex(),
            "at": lock["locked_at"],  # seq -1's time (fairness-v2.md §7)
        }
    )
    kept = svc.start_receipt(m)
    assert dumps(kept) == dumps(fresh)
    kept["signature"]["value"] = "changed"  # a caller's copy: the kept one is untouched
    kept["seq"] = 7
    assert dumps(svc.start_receipt(m)) == dumps(fresh)
    assert svc.lock(mid)["receipt"] == fresh


def test_seat_signatures_are_checked_with_the_kept_key(svc: MatchService) -> None:
    mid, tokens, signers = started(svc)
    view = svc.state(mid, token=tokens[0])
    seat = view["turn"]
    view = svc.state(mid, token=tokens[seat])
    action = view["legal_actions"][0]
    event = {"type": "action", "seat": seat, "action": action}
    message = seat_sig_message(mid, view["chain"], event)
    wrong = [
        (signers[(seat + 1) % 4].sign_bytes(message), "does not match"),  # another seat's key
        (signers[seat].sign_bytes(message + b" "), "does not match"),  # another message
        ("not base64!", "not base64"),
    ]
    for sig, why in wrong:
        with pytest.raises(Invalid) as err:
            svc.act(mid, token=tokens[seat], action=action, version=view["version"], sig=sig)
        assert err.value.code == "bad_signature" and why in err.value.message
        assert svc.state(mid, token=tokens[seat])["version"] == view["version"]  # unchanged
    out = svc.act(
        mid,
        token=tokens[seat],
        action=action,
        version=view["version"],
        sig=signers[seat].sign_bytes(message),
    )
    assert out["version"] == view["version"] + 1
    locked = svc.locked(row(svc, mid))
    assert seat in locked.keys
    assert public_key_b64(locked.keys[seat]) == public_key_b64(signers[seat].public_key)


def test_row_updates_reuse_their_statements(svc: MatchService) -> None:
    mid, tokens, signers = started(svc)
    for _ in range(6):
        play_first_legal(svc, mid, tokens, signers)
    kept = dict(store_module._UPDATES)
    assert kept, "no update statement was kept"
    view = play_first_legal(svc, mid, tokens, signers)
    assert all(store_module._UPDATES[k] is v for k, v in kept.items())
    after = row(svc, mid)
    assert after.version == view["version"] + 1 and after.owes is not None

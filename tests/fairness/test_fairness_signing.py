"""Signatures (Ed25519 over canonical JSON), canonical JSON itself, and the secret box."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

import fairness
import fairness.protocol
from fairness import (
    KeyFileError,
    SecretBox,
    SecretBoxError,
    SignatureError,
    Signer,
    canonical_json,
    verify_record,
)

RECORD: dict[str, Any] = {
    "type": "commitment",
    "protocol": "qahwa-fair/1",
    "match_id": "مباراة-1",
    "game": "tawla",
    "ruleset": '{"cube":true,"match_length":5}',
    "commitment": "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd",
    "created_at": "2026-12-02T12:00:00Z",
    "log_index": 7,
    "seats": [{"seat": 0, "name": "Zoë ☕", "client_seed": "x"}],
}

# -- canonical JSON --------------------------------------------------------------------------


def test_canonical_json_exact_bytes() -> None:
    obj = {"b": 1, "a": {"z": [3, {"y": None, "x": True}], "é": "قهوة"}, "A": 1.5, "c": '"\\/'}
    expected = '{"A":1.5,"a":{"z":[3,{"x":true,"y":null}],"é":"قهوة"},"b":1,"c":"\\"\\\\/"}'
    assert canonical_json(obj) == expected.encode("utf-8")
    assert b"\\u" not in canonical_json({"k": "é☕🎲"})
    assert canonical_json({"k": "é☕🎲"}) == '{"k":"é☕🎲"}'.encode()
    # keys sort by code point, so "Z" < "a" < "é"
    assert canonical_json({"é": 1, "a": 2, "Z": 3}) == '{"Z":3,"a":2,"é":1}'.encode()
    # control characters are escaped the JSON way
    assert canonical_json(["\n\x00"]) == b'["\\n\\u0000"]'


def test_canonical_json_rejects_nan() -> None:
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_canonical_json_refuses_a_circular_value() -> None:
    """The encoder skips the bookkeeping for circular references (nothing it encodes is
    circular), so one is refused by the recursion limit instead: an error, never a hang."""
    loop: list[object] = []
    loop.append(loop)
    nest: dict[str, object] = {}
    nest["self"] = nest
    for value in (loop, nest):
        with pytest.raises(RecursionError):
            canonical_json(value)


def test_canonical_ruleset() -> None:
    assert fairness.canonical_ruleset({"match_length": 5, "cube": True}) == (
        '{"cube":true,"match_length":5}'
    )
    assert fairness.canonical_ruleset({}) == "{}"


# -- signer ----------------------------------------------------------------------------------


def test_sign_and_verify() -> None:
    signer = Signer.generate()
    doc = signer.signed(RECORD)
    assert doc["signature"]["alg"] == "ed25519"
    assert doc["signature"]["key_id"] == signer.key_id
    assert len(base64.b64decode(doc["signature"]["value"])) == 64
    assert {k: v for k, v in doc.items() if k != "signature"} == RECORD
    verify_record(doc, signer.public_key)
    # the signature is over canonical_json of the record without "signature"
    signer.public_key.verify(base64.b64decode(doc["signature"]["value"]), canonical_json(RECORD))


def test_key_order_does_not_matter() -> None:
    signer = Signer.generate()
    doc = signer.signed(RECORD)
    reordered = dict(reversed(list(doc.items())))
    verify_record(reordered, signer.public_key)
    via_json = json.loads(json.dumps(doc, ensure_ascii=True, indent=2))
    verify_record(via_json, signer.public_key)


def test_resigning_replaces_the_signature() -> None:
    signer = Signer.generate()
    doc = signer.signed(signer.signed(RECORD))
    verify_record(doc, signer.public_key)
    assert signer.sign_record(doc) == doc["signature"]  # Ed25519 is deterministic


@pytest.mark.parametrize(
    "record",
    [
        RECORD,
        {**RECORD, "signature": {"alg": "old"}, "zz": [{"b": 1, "a": "é☕"}], "Aa": None},
        {"só": "only keys after signature", "t": {"signature": 1}},
        {},
    ],
)
def test_signed_json_is_the_signed_record_and_its_canonical_json(record: dict[str, Any]) -> None:
    """Issue 50: a record signed with its canonical JSON (what a reveal record hashes) is the
    record :meth:`Signer.signed` makes and its canonical JSON, each member encoded once."""
    signer = Signer.generate()
    signed, text = signer.signed_json(record)
    assert signed == signer.signed(record)
    assert list(signed) == list(signer.signed(record))
    assert text == canonical_json(signed)
    verify_record(signed, signer.public_key)


def _tampered(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for mutate in (
        lambda d: d.__setitem__("log_index", 8),
        lambda d: d.__setitem__("match_id", "مباراة-2"),
        lambda d: d["seats"][0].__setitem__("name", "Zoe ☕"),
        lambda d: d.__setitem__("extra", None),
        lambda d: d.pop("created_at"),
        lambda d: d["signature"].__setitem__("value", base64.b64encode(bytes(64)).decode()),
        lambda d: d["signature"].__setitem__("value", d["signature"]["value"][:-4] + "AAA="),
        lambda d: d["signature"].__setitem__("value", "not base64!"),
        lambda d: d["signature"].__setitem__("value", base64.b64encode(b"short").decode()),
        lambda d: d["signature"].__setitem__("value", None),
        lambda d: d["signature"].__setitem__("alg", "rsa"),
        lambda d: d.__setitem__("signature", "abc"),
        lambda d: d.pop("signature"),
    ):
        t = copy.deepcopy(doc)
        mutate(t)
        out.append(t)
    return out


def test_tampering_is_detected() -> None:
    signer = Signer.generate()
    doc = signer.signed(RECORD)
    for t in _tampered(doc):
        with pytest.raises(SignatureError):
            verify_record(t, signer.public_key)
    with pytest.raises(SignatureError, match="does not match"):
        verify_record(doc, Signer.generate().public_key)  # another server's key
    for not_a_record in ([doc], "doc", None):
        with pytest.raises(SignatureError, match="JSON object"):
            verify_record(not_a_record, signer.public_key)  # type: ignore[arg-type]


def test_key_id_and_public_key_b64() -> None:
    signer = Signer.generate()
    raw = base64.b64decode(fairness.public_key_b64(signer.public_key))
    assert len(raw) == 32
    assert signer.key_id == hashlib.sha256(raw).hexdigest()[:16]
    assert fairness.key_id_of(fairness.load_public_key(base64.b64encode(raw).decode())) == (
        signer.key_id
    )
    verify_record(signer.signed(RECORD), fairness.load_public_key(base64.b64encode(raw).decode()))


@pytest.mark.parametrize("bad", ["", "!!!", base64.b64encode(bytes(31)).decode(), "QUJD\n="])
def test_load_public_key_bad(bad: str) -> None:
    with pytest.raises(KeyFileError):
        fairness.load_public_key(bad)


def test_save_and_load_base64_file(tmp_path: Path) -> None:
    signer = Signer.generate()
    path = tmp_path / "keys" / "signing.key"
    signer.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert text == signer.private_b64() + "\n"
    assert len(base64.b64decode(text)) == 32
    loaded = Signer.load(path)
    assert loaded.key_id == signer.key_id
    verify_record(loaded.signed(RECORD), signer.public_key)
    assert Signer.load(str(path)).key_id == signer.key_id


def test_load_pem(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path = tmp_path / "k.pem"
    path.write_bytes(b"\n" + pem)
    signer = Signer.load(path)
    verify_record(signer.signed(RECORD), key.public_key())


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match="cannot read"):
        Signer.load(tmp_path / "missing.key")
    (tmp_path / "short.key").write_text(base64.b64encode(bytes(31)).decode())
    with pytest.raises(KeyFileError, match="32 base64"):
        Signer.load(tmp_path / "short.key")
    (tmp_path / "junk.key").write_bytes(b"\xff\xfe junk")
    with pytest.raises(KeyFileError):
        Signer.load(tmp_path / "junk.key")
    (tmp_path / "bad.pem").write_text(
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
    )
    with pytest.raises(KeyFileError, match="PEM"):
        Signer.load(tmp_path / "bad.pem")
    x = X25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (tmp_path / "x25519.pem").write_bytes(x)
    with pytest.raises(KeyFileError, match="not an Ed25519 key"):
        Signer.load(tmp_path / "x25519.pem")
    with pytest.raises(KeyFileError):
        Signer.load(tmp_path)  # a directory


# -- secret box ------------------------------------------------------------------------------


def test_secretbox_round_trip() -> None:
    key = fairness.new_master_key()
    box = SecretBox(key)
    seed = fairness.new_server_seed()
    sealed = box.seal(seed, "m-0001")
    assert seed.hex() not in sealed and seed not in base64.b64decode(sealed)
    assert box.open(sealed, "m-0001") == seed
    assert SecretBox(key).open(sealed, "m-0001") == seed
    assert box.seal(seed, "m-0001") != sealed  # a fresh nonce every time
    assert box.open(box.seal(b"", ""), "") == b""
    assert box.open(box.seal(b"x", "ünïcode"), "ünïcode") == b"x"


def test_secretbox_wrong_key_or_aad() -> None:
    box = SecretBox(fairness.new_master_key())
    sealed = box.seal(b"secret seed", "m-1")
    with pytest.raises(SecretBoxError, match="does not open"):
        SecretBox(fairness.new_master_key()).open(sealed, "m-1")
    with pytest.raises(SecretBoxError, match="does not open"):
        box.open(sealed, "m-2")
    with pytest.raises(SecretBoxError, match="does not open"):
        box.open(sealed)


def test_secretbox_tampered() -> None:
    box = SecretBox(fairness.new_master_key())
    blob = bytearray(base64.b64decode(box.seal(b"secret seed", "m")))
    for i in range(len(blob)):
        t = bytearray(blob)
        t[i] ^= 0x01
        with pytest.raises(SecretBoxError):
            box.open(base64.b64encode(bytes(t)).decode(), "m")
    for bad in (
        "",
        "!!!",
        "é",
        base64.b64encode(bytes(blob[:28])).decode(),
        base64.b64encode(bytes(blob[:-1])).decode(),
    ):
        with pytest.raises(SecretBoxError):
            box.open(bad, "m")


def test_master_key_loading() -> None:
    key = fairness.new_master_key()
    assert fairness.load_master_key(base64.b64encode(key).decode() + "\n") == key
    with pytest.raises(SecretBoxError, match="base64"):
        fairness.load_master_key("%%%")
    with pytest.raises(SecretBoxError, match="32 bytes"):
        fairness.load_master_key(base64.b64encode(bytes(16)).decode())
    for bad in (b"", bytes(31), "k" * 32):
        with pytest.raises(SecretBoxError):
            SecretBox(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"type": "sealed", "shares": [{"item": 3, "share": "ab"}] * 60}, None),
        ({"a": [None, True, False, -(2**53 - 1), "é☕"]}, None),
        ({"a": [1, {"b": 2.5}]}, "$.a[1].b: 2.5 is not an integer"),
        ({"a": {"é": 1}}, "$.a: object key 'é' is not ASCII"),
        ({"a": [2**53]}, "$.a[0]: integer 9007199254740992 is outside"),
        ({"a": ["ok", chr(0xD800)]}, "$.a[1]: a string holds"),
        ({"a": (1, 2)}, "$.a: tuple is not JSON"),
        ({1: "x"}, "$: object key 1 is not ASCII"),
    ],
)
def test_a_canonical_value_is_walked_once_and_a_wrong_one_named(
    value: Any, message: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 50: an action of plain JSON values is checked in one walk (before, one call a
    value, each naming its place: a sealed share step's 200 of them); a value that does not
    fit is refused naming its first wrong place, as before."""
    walks = {"n": 0}
    check = fairness.check_canonical_value

    def counted(obj: Any, path: str = "$") -> None:  # a call for a value inside it
        walks["n"] += 1
        check(obj, path)

    monkeypatch.setattr(fairness.protocol, "check_canonical_value", counted)
    if message is None:
        fairness.check_canonical_value(value)
        assert walks["n"] == 0
    else:
        with pytest.raises(ValueError, match=re.escape(message)):
            fairness.check_canonical_value(value)

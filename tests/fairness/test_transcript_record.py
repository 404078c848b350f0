"""The transcript is a record (issue 48): fairness.records.open_transcript opens it in one
place, its fields by its protocol, its signature by the keys given; verify's shape check is
that opener's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fairness import PROTOCOL, V2, Signer, public_key_b64
from fairness.records import TRANSCRIPT_FIELDS, RecordError, open_transcript
from games.transcript import simulate_match
from verify_cli.replay_core import NotATranscript, check_shape

SERVER = Signer.generate()
KEYS = {SERVER.key_id: public_key_b64(SERVER.public_key)}


def _signed(protocol: Any = V2) -> dict[str, Any]:
    doc, _ = simulate_match("tawla", seed=4, protocol=protocol, signer=None)
    return SERVER.signed(doc)


@pytest.mark.parametrize("protocol", [V2, PROTOCOL], ids=["v2", "v1"])
def test_an_honest_transcript_opens_signed_and_from_its_text(protocol: Any) -> None:
    doc = _signed(protocol)
    assert open_transcript(doc, KEYS) is doc
    opened = open_transcript(json.dumps(doc), KEYS)
    assert opened == doc and opened["signature"]["key_id"] == SERVER.key_id
    assert open_transcript(doc, None)["protocol"] == doc["protocol"]


def _kind(raw: Any, keys: Any = None) -> tuple[str, str]:
    with pytest.raises(RecordError) as err:
        open_transcript(raw, keys)
    assert err.value.record == "transcript"
    return err.value.kind, str(err.value)


def test_each_malformed_transcript_is_refused_with_its_kind() -> None:
    doc = _signed()
    assert _kind([doc]) == ("shape", "not a transcript: the document is not a JSON object")
    assert _kind("{")[0] == "shape"
    no_proto = {k: v for k, v in doc.items() if k != "protocol"}
    assert _kind(no_proto) == ("protocol", "not a transcript: it has no 'protocol' field")
    kind, message = _kind({**doc, "protocol": "qahwa-fair/9"})
    assert kind == "protocol" and message.startswith('unknown protocol "qahwa-fair/9"')
    for name in TRANSCRIPT_FIELDS[doc["protocol"]]:
        gone = {k: v for k, v in doc.items() if k != name}
        assert _kind(gone) == ("shape", f"not a transcript: field {name!r} is missing")
    assert _kind({**doc, "lock_index": True}) == (
        "shape",
        "not a transcript: field 'lock_index' has the wrong type",
    )
    # a v1 transcript has no lock: its fields are v1's
    assert "lock" not in TRANSCRIPT_FIELDS[PROTOCOL]


def test_a_forged_or_unsigned_transcript_is_refused_as_signature() -> None:
    doc = _signed()
    forged = {**doc, "server_seed": "00" * 64}
    assert _kind(forged, KEYS)[0] == "signature"
    unsigned = {k: v for k, v in doc.items() if k != "signature"}
    with pytest.raises(RecordError) as err:
        open_transcript(unsigned, KEYS)
    assert err.value.kind == "signature" and err.value.step == "unsigned"
    other = Signer.generate()
    with pytest.raises(RecordError) as err:
        open_transcript(other.signed(unsigned), KEYS)
    assert err.value.step == "key"


def test_verify_shape_check_is_the_opener() -> None:
    doc = _signed()
    assert check_shape(doc).PROTOCOL is V2
    for bad in ([], {**doc, "chain": 7}, {"protocol": "qahwa-fair/9"}):
        with pytest.raises(NotATranscript) as err:
            check_shape(bad)
        with pytest.raises(RecordError) as opened:
            open_transcript(bad, None)
        assert str(err.value) == str(opened.value)

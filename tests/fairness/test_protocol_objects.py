"""fairness/protocol.py: one object per protocol version, chosen once per match."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from fairness import (
    PROTOCOL,
    PROTOCOL_V2,
    PROTOCOL_V3,
    PROTOCOLS,
    V1,
    V2,
    V3,
    UnknownProtocolError,
    commitment,
    match_key,
    protocol_for,
    signed_protocol,
)
from fairness.protocol import FairProtocol, register
from games.transcript import simulate_match, transcript_key


def test_one_object_per_version_chosen_from_any_form() -> None:
    assert PROTOCOLS == {PROTOCOL: V1, PROTOCOL_V2: V2, PROTOCOL_V3: V3}
    for proto in (V1, V2, V3):
        assert protocol_for(proto.name) is proto
        assert protocol_for(proto) is proto
        assert protocol_for({"protocol": proto.name, "events": []}) is proto
        assert protocol_for(SimpleNamespace(protocol=proto.name)) is proto
        assert str(proto) == proto.name
    for bad in ("qahwa-fair/9", None, {"no": "protocol"}, SimpleNamespace(), 2):
        with pytest.raises(UnknownProtocolError, match="unknown protocol"):
            protocol_for(bad)
        assert signed_protocol(bad) is False
    assert signed_protocol(PROTOCOL_V2) and not signed_protocol(PROTOCOL)


def test_what_each_version_has() -> None:
    assert (V1.seed_bytes, V1.key_bytes, V1.signed, V1.timed) == (32, 32, False, False)
    assert (V2.seed_bytes, V2.key_bytes, V2.signed, V2.timed) == (64, 64, True, True)
    assert V1.end_reasons == ("resigned", "abandoned")
    assert V2.end_reasons == ("resigned", "timeout", "expired")
    assert (V1.records, V2.records, V3.records) == (V1.name, V2.name, V2.name)  # K's and rows'
    assert (V1.deal, V2.deal, V3.deal) == ("seeded", "seeded", "sealed")
    assert len(V1.new_server_seed()) == 32 and len(V2.new_server_seed()) == 64


def test_the_one_set_of_names_is_each_versions_own_derivation() -> None:
    seed1, seed2 = "ab" * 32, "cd" * 64
    assert V1.commitment(seed1) == commitment(seed1)
    assert V1.match_key(seed1, "m", "hokm", "{}", ["a", "b"]) == match_key(
        seed1, "m", "hokm", "{}", ["a", "b"]
    )
    # v1's 32-byte seed is not v2's, and the other way round
    with pytest.raises(ValueError, match="128 hex"):
        V2.commitment(seed1)
    with pytest.raises(ValueError, match="64 hex"):
        V1.commitment(seed2)
    # the K of a transcript of either version is the one its replay used
    for proto in (V1, V2):
        doc, engine = simulate_match("tawla", {"match_length": 1}, seed=3, protocol=proto)
        assert protocol_for(doc) is proto
        assert proto.transcript_key(doc) == transcript_key(doc) == engine.chance.key
        assert len(engine.chance.key) == proto.key_bytes and engine.proto is proto


def test_v2_reads_json_strictly_v1_as_json_does() -> None:
    assert V1.loads('{"a": 1, "a": 2}') == {"a": 2}
    with pytest.raises(ValueError):
        V2.loads('{"a": 1, "a": 2}')


def test_a_later_version_registers_once() -> None:
    class Later(type(V2)):  # type: ignore[misc]
        """A test's stand-in for the next version."""

        name = "qahwa-fair/test"
        version = 99

    later = register(Later())
    try:
        assert isinstance(later, FairProtocol)
        assert protocol_for({"protocol": "qahwa-fair/test"}) is later
        assert signed_protocol("qahwa-fair/test")
        with pytest.raises(ValueError, match="already registered"):
            register(Later())
    finally:
        del PROTOCOLS["qahwa-fair/test"]

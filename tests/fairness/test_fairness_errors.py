"""Bad input to the fairness package: each raises the right fairness.errors subclass, with a
message naming the problem, and leaves nothing half-done."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

import fairness
from fairness import (
    ClientSeedError,
    FairnessError,
    ItemsError,
    LabelError,
    RangeError,
    SeedError,
    Stream,
)

SEED = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
K = hashlib.sha256(b"errors").digest()

# -- server seeds ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "match"),
    [
        (SEED[:-1], "64 hex characters, got 63"),
        (SEED + "0", "64 hex characters, got 65"),
        ("", "got 0"),
        ("zz" + SEED[2:], "not hexadecimal"),
        ("0x" + SEED[2:], "not hexadecimal"),
        ("g" + SEED[1:], "not hexadecimal"),
        ("G" + SEED[1:], "not hexadecimal"),
        # bytes.fromhex accepts spaces between bytes: 64 characters would give fewer bytes
        (" ".join(SEED[i : i + 2] for i in range(0, 42, 2)) + "  ", "not hexadecimal"),
        (SEED[:-2] + "\n0", "not hexadecimal"),
        ("٠" * 64, "not hexadecimal"),  # Arabic-Indic digits are not hex
        (bytes(31), "32 bytes, got 31"),
        (bytes(33), "32 bytes, got 33"),
        (bytearray(32), "hex string"),
        (None, "hex string"),
        (12345, "hex string"),
    ],
)
def test_bad_server_seed(seed: Any, match: str) -> None:
    if isinstance(seed, str):
        assert len(seed) in (63, 65, 0, 64), len(seed)
    for call in (
        fairness.parse_server_seed,
        fairness.commitment,
        lambda s: fairness.match_key(s, "m", "g", "{}", ["a"]),
    ):
        with pytest.raises(SeedError, match=match):
            call(seed)


def test_server_seed_must_be_lowercase() -> None:
    """A seed has one written form: 64 lowercase hex (the verify CLI says the same)."""
    upper = SEED.upper()
    mixed = SEED[:-1] + "F"
    for bad in (upper, mixed):
        with pytest.raises(SeedError, match="lowercase"):
            fairness.parse_server_seed(bad)
        with pytest.raises(SeedError, match="lowercase"):
            fairness.match_key(bad, "m", "tawla", "{}", ["a"])
    assert fairness.parse_server_seed(SEED) == bytes.fromhex(SEED)
    assert fairness.commitment(SEED) == fairness.commitment(SEED).lower()


def test_new_server_seed_parses() -> None:
    s = fairness.new_server_seed()
    assert fairness.parse_server_seed(s.hex()) == s == fairness.parse_server_seed(s)


# -- client seeds ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "match"),
    [
        ("", "empty"),
        ("x" * 129, "129 bytes"),
        ("☕" * 43, "129 bytes"),  # 43 characters, 3 bytes each
        ("a\x00b", "NUL"),
        ("\x00", "NUL"),
        ("line\nbreak", "unprintable"),
        ("tab\there", "unprintable"),
        ("del\x7f", "unprintable"),
        ("nbsp\u00a0", "unprintable"),
        ("zero\u200bwidth", "unprintable"),
        ("rtl\u202eoverride", "unprintable"),
        ("lone \ud800 surrogate", "unprintable"),
        (b"bytes", "must be a string"),
        (None, "must be a string"),
        (7, "must be a string"),
    ],
)
def test_bad_client_seed(seed: Any, match: str) -> None:
    with pytest.raises(ClientSeedError, match=match):
        fairness.check_client_seed(seed)
    with pytest.raises(ClientSeedError, match=match):
        fairness.match_key(SEED, "m", "g", "{}", ["fine", seed])


@pytest.mark.parametrize(
    "seed",
    ["x", "x" * 128, "é" * 64, "☕" * 42, " ", "a b", "قهوة", "🎲" * 32, '~!@#$%^&*()_+{}|:"<>?'],
)
def test_good_client_seed(seed: str) -> None:
    assert fairness.check_client_seed(seed) == seed
    fairness.match_key(SEED, "m", "g", "{}", [seed])


def test_match_key_other_fields_must_be_strings() -> None:
    with pytest.raises(TypeError, match="match_id"):
        fairness.match_key(SEED, 1, "g", "{}", [])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ruleset"):
        fairness.match_key(SEED, "m", "g", {"a": 1}, [])  # type: ignore[arg-type]


# -- ranges ----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, -1, 2**32 + 1, 2**64, 1.0, 2.5, True, False, "6", None])
def test_uniform_out_of_range(n: Any) -> None:
    s = Stream(K, "u")
    with pytest.raises(RangeError, match="uniform"):
        s.uniform(n)
    # nothing was read: the stream still starts at its first word
    assert s.blocks_used == 0
    assert s.uniform(2**32) == Stream(K, "u").word()


@pytest.mark.parametrize(
    ("count", "sides", "match"),
    [
        (0, 6, "count"),
        (-1, 6, "count"),
        (1001, 6, "count"),
        (True, 6, "count"),
        (2.0, 6, "count"),
        (1, 1, "sides"),
        (1, 0, "sides"),
        (1, 2**32 + 1, "sides"),
        (1, True, "sides"),
        (1, "6", "sides"),
    ],
)
def test_dice_out_of_range(count: Any, sides: Any, match: str) -> None:
    s = Stream(K, "d")
    with pytest.raises(RangeError, match=match):
        s.dice(count, sides)
    assert s.blocks_used == 0
    with pytest.raises(RangeError):
        fairness.dice(K, "d", count, sides)


@pytest.mark.parametrize("m", [-1, 100, True, 6.0, "6"])
def test_tiles_out_of_range(m: Any) -> None:
    with pytest.raises(RangeError, match="tiles"):
        fairness.tiles(m)


# -- labels and entropy ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "label", ["", "é", "h0/shuffle\x00", "a\nb", "\x7f", "x" * 257, None, b"d0", 3]
)
def test_bad_label(label: Any) -> None:
    with pytest.raises(LabelError):
        fairness.check_label(label)
    with pytest.raises(LabelError):
        Stream(K, label)


def test_longest_label() -> None:
    assert fairness.check_label("x" * 256) == "x" * 256
    Stream(K, "x" * 256).word()


@pytest.mark.parametrize("key", [b"", bytes(31), bytes(33), "00" * 32, None, bytearray(32)])
def test_bad_match_key(key: Any) -> None:
    with pytest.raises(SeedError, match="match key"):
        Stream(key, "d0")


@pytest.mark.parametrize("entropy", ["", "x" * 65, "a|b", "|", "é", "tab\t", "nul\x00", 5, b"abc"])
def test_bad_entropy(entropy: Any) -> None:
    with pytest.raises(LabelError, match="entropy"):
        fairness.check_entropy(entropy)
    with pytest.raises(LabelError, match="entropy"):
        fairness.entropy_label("g0/roll/1", entropy)


@pytest.mark.parametrize("entropy", ["x", "x" * 64, "hello world", "~!@#$%^&*()"])
def test_good_entropy(entropy: str) -> None:
    assert fairness.check_entropy(entropy) == entropy


# -- item lists ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "err"),
    [
        ("deck53", ItemsError),
        ("", ItemsError),
        ("DECK52", ItemsError),
        ("tiles:", ItemsError),
        ("tiles:x", ItemsError),
        ("tiles:-1", ItemsError),
        ("tiles:²", ItemsError),
        ("tiles:١٢", ItemsError),
        ("tiles:6-without:", ItemsError),
        ("tiles:6-without:7-7", ItemsError),
        ("tiles:6-without:2-1", ItemsError),
        ("tiles:6-without:02-3", ItemsError),
        ("tiles:6-without:x", ItemsError),
        ("tiles:100", RangeError),
        ("range:0", ItemsError),
        ("range:x", ItemsError),
        ("range:100001", ItemsError),
        ("range:²", ItemsError),
    ],
)
def test_bad_items(spec: str, err: type[Exception]) -> None:
    with pytest.raises(err):
        fairness.parse_items(spec)


def test_parse_items_good() -> None:
    assert len(fairness.parse_items("tiles:12-without:12-12")) == 90
    assert fairness.parse_items("tiles:12-without:12-12,0-0") == [
        t for t in fairness.tiles(12) if t not in ("12-12", "0-0")
    ]
    assert fairness.parse_items("range:3") == ["0", "1", "2"]
    assert fairness.parse_items("deck_qahve")[-2:] == ["JB", "JR"]


@pytest.mark.parametrize("code", ["1-0", "01-2", "a-b", "1", "1-2-3", "-1-2", "", 5])
def test_bad_tile(code: Any) -> None:
    with pytest.raises(ItemsError):
        fairness.parse_tile(code)


def test_restrict_and_canonical_sort_errors() -> None:
    with pytest.raises(ItemsError, match="duplicate"):
        fairness.restrict(fairness.deck52(), ["AS", "AS"])
    with pytest.raises(ItemsError, match="unknown"):
        fairness.restrict(fairness.deck52(), ["AS", "ZZ"])
    with pytest.raises(ItemsError):
        fairness.canonical_sort(["AS", 3])  # type: ignore[list-item]
    with pytest.raises(ItemsError):
        fairness.canonical_sort(["AS", "1-2"])
    with pytest.raises(ItemsError):
        fairness.canonical_sort(["nonsense"])
    assert fairness.restrict(fairness.deck52(), ["AS", "2C"]) == ["2C", "AS"]
    assert fairness.canonical_sort(["JR", "AS", "JB", "2C"]) == ["2C", "AS", "JB", "JR"]
    assert fairness.canonical_sort(["10-12", "2-3", "0-11"]) == ["0-11", "2-3", "10-12"]
    assert fairness.canonical_sort([3, 0, 2, 1]) == [0, 1, 2, 3]
    assert fairness.canonical_sort([]) == []


def test_every_error_is_a_fairness_error_and_a_value_error() -> None:
    for exc in (
        SeedError,
        ClientSeedError,
        LabelError,
        RangeError,
        ItemsError,
        fairness.SignatureError,
        fairness.KeyFileError,
        fairness.SecretBoxError,
    ):
        assert issubclass(exc, FairnessError) and issubclass(exc, ValueError)

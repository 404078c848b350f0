"""Known answers for qahwa-fair/1 and a cross-check against an independent implementation.

``tests/vectors/fairness_v1.json`` holds

- ``spec``: the test vectors of fairness-v1.md §7, typed in from the spec;
- ``derived``: further vectors computed by the reference implementation below (written from
  the spec with ``hmac``/``hashlib``/``struct`` only, sharing no code with ``fairness``):
  unicode ids and client seeds, one to eight seeds, rejection sampling, dice, and the
  shuffles of every canonical item list.

Every vector is checked against ``fairness``, and the reference implementation is checked
against the spec's vectors too, so neither side can drift alone. Hypothesis then compares
the two on random inputs.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairness
from tests.fairness.ref_draws import KEY_TEXTS, SHUFFLED, HmacDraws, label, printable
from tests.support import vector

VECTORS = vector("fairness_v1.json")

# -- the reference implementation (fairness-v1.md §1-4, nothing imported from fairness) ----


def ref_commitment(seed_hex: str) -> str:
    return hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest()


def ref_key(seed_hex: str, match_id: str, game: str, ruleset: str, seeds: list[str]) -> bytes:
    def lp(s: str) -> bytes:
        b = s.encode("utf-8")
        return struct.pack(">I", len(b)) + b

    t = b"qahwa-fair/1\x00" + lp(match_id) + lp(game) + lp(ruleset)
    t += struct.pack(">I", len(seeds)) + b"".join(lp(s) for s in seeds)
    return hmac.new(bytes.fromhex(seed_hex), t, hashlib.sha256).digest()


class RefStream(HmacDraws):
    digest = "sha256"


def ref_items(spec: str) -> list[Any]:
    """The canonical lists of §4 (and the plain sessions' integers), built from the spec."""
    suits, ranks = ["C", "D", "H", "S"], list("23456789TJQKA")
    deck = [r + s for s in suits for r in ranks]
    if spec == "deck52":
        return deck
    if spec == "deck_qahve":
        return [c for c in deck if c not in {"2D", "2H"}] + ["JB", "JR"]
    if spec.startswith("range:"):
        return list(range(int(spec[6:])))
    m_part, _, without = spec[len("tiles:") :].partition("-without:")
    m = int(m_part)
    out = [f"{a}-{b}" for a in range(m + 1) for b in range(a, m + 1)]
    return [t for t in out if t not in without.split(",")]


def ours_items(spec: str) -> list[Any]:
    if spec.startswith("range:"):  # plain sessions shuffle the integers themselves
        return list(range(int(spec[6:])))
    return fairness.parse_items(spec)


def ref_draw(key: bytes, d: dict[str, Any]) -> tuple[Any, RefStream]:
    s = RefStream(key, d["label"])
    if d["kind"] == "dice":
        return s.dice(d["count"], d["sides"]), s
    if d["kind"] == "uniform":
        return s.uniform(d["n"]), s
    return s.shuffle(ref_items(d["items"])), s


def ours_draw(key: bytes, d: dict[str, Any]) -> tuple[Any, fairness.Stream]:
    s = fairness.Stream(key, d["label"])
    if d["kind"] == "dice":
        return s.dice(d["count"], d["sides"]), s
    if d["kind"] == "uniform":
        return s.uniform(d["n"]), s
    return s.shuffle(ours_items(d["items"])), s


# -- the spec's vectors ----------------------------------------------------------------------

SPEC = VECTORS["spec"]


def test_vector_file_shape() -> None:
    assert VECTORS["protocol"] == fairness.PROTOCOL == "qahwa-fair/1"
    assert len(SPEC["draws"]) == 7
    assert len(VECTORS["derived"]) >= 10


def test_spec_commitment() -> None:
    assert fairness.commitment(SPEC["server_seed"]) == SPEC["commitment"]
    assert fairness.commitment(bytes.fromhex(SPEC["server_seed"])) == SPEC["commitment"]
    assert ref_commitment(SPEC["server_seed"]) == SPEC["commitment"]


def _spec_key(impl: str) -> bytes:
    args = (
        SPEC["server_seed"],
        SPEC["match_id"],
        SPEC["game"],
        SPEC["ruleset"],
        SPEC["client_seeds"],
    )
    if impl == "ours":
        return fairness.match_key(*args)
    return ref_key(*args)


@pytest.mark.parametrize("impl", ["ours", "ref"])
def test_spec_match_key(impl: str) -> None:
    assert _spec_key(impl).hex() == SPEC["K"]


@pytest.mark.parametrize("impl", ["ours", "ref"])
@pytest.mark.parametrize("i", range(7))
def test_spec_draws(impl: str, i: int) -> None:
    d = SPEC["draws"][i]
    draw = ours_draw if impl == "ours" else ref_draw
    result, _ = draw(bytes.fromhex(SPEC["K"]), d)
    if "result_prefix" in d:
        assert result[: len(d["result_prefix"])] == d["result_prefix"]
        assert sorted(map(str, result)) == sorted(map(str, ours_items(d["items"])))
    else:
        assert result == d["result"]


def test_spec_module_functions() -> None:
    """The module-level helpers are the same derivation as Stream's methods."""
    key = bytes.fromhex(SPEC["K"])
    assert fairness.dice(key, "g0/opening/0", 2) == [1, 3]
    assert fairness.dice(key, "g0/roll/1", 2, 6) == [2, 5]
    assert fairness.uniform(key, "dealer", 4) == 0
    assert fairness.shuffle(key, "h0/shuffle", fairness.deck52())[:3] == ["TD", "AH", "8C"]


# -- derived vectors -------------------------------------------------------------------------

DERIVED = VECTORS["derived"]


@pytest.mark.parametrize("v", DERIVED, ids=[v["name"] for v in DERIVED])
def test_derived_vector(v: dict[str, Any]) -> None:
    assert fairness.commitment(v["server_seed"]) == v["commitment"]
    key = fairness.match_key(
        v["server_seed"], v["match_id"], v["game"], v["ruleset"], v["client_seeds"]
    )
    assert key.hex() == v["K"]
    for d in v["draws"]:
        result, stream = ours_draw(key, d)
        assert result == d["result"], d["label"]
        if "blocks_used" in d:
            assert stream.blocks_used == d["blocks_used"], d["label"]


@pytest.mark.parametrize("v", DERIVED, ids=[v["name"] for v in DERIVED])
def test_derived_vector_matches_reference(v: dict[str, Any]) -> None:
    """The stored vectors are what the reference computes (guards against a typo'd file)."""
    key = ref_key(v["server_seed"], v["match_id"], v["game"], v["ruleset"], v["client_seeds"])
    assert key.hex() == v["K"]
    for d in v["draws"]:
        result, stream = ref_draw(key, d)
        assert result == d["result"]
        if "rejected" in d:
            assert stream.rejected == d["rejected"]


def test_derived_vectors_cover_the_brief() -> None:
    kinds = {(d["kind"], d.get("items")) for v in DERIVED for d in v["draws"]}
    for items in ("deck52", "deck_qahve", "tiles:6", "tiles:12-without:12-12", "range:10"):
        assert ("shuffle", items) in kinds
    assert any(d.get("rejected", 0) >= 1 for v in DERIVED for d in v["draws"])
    assert any(
        d.get("blocks_used", 0) >= 2 and d["kind"] == "uniform" for v in DERIVED for d in v["draws"]
    )
    assert any(not s.isascii() for v in DERIVED for s in v["client_seeds"])
    assert any(not v["match_id"].isascii() for v in DERIVED)
    assert {len(v["client_seeds"]) for v in DERIVED} >= {0, 1, 2, 3, 8}


@pytest.mark.parametrize(
    "spec",
    [
        "deck52",
        "deck_qahve",
        "tiles:6",
        "tiles:12",
        "tiles:12-without:12-12",
        "tiles:12-without:0-0,5-5",
    ],
)
def test_canonical_lists_match_reference(spec: str) -> None:
    assert fairness.parse_items(spec) == ref_items(spec)


# -- random cross-check ----------------------------------------------------------------------

# printable per str.isprintable: no category C (control, format, surrogate, ...) or Z
# (separators) except the ASCII space
client_seed = st.text(printable | st.just(" "), min_size=1, max_size=40).filter(
    lambda s: len(s.encode("utf-8")) <= 128
)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    **KEY_TEXTS,
    seeds=st.lists(client_seed, max_size=8),
)
def test_match_key_matches_reference(
    seed: bytes, match_id: str, game: str, ruleset: str, seeds: list[str]
) -> None:
    ours = fairness.match_key(seed, match_id, game, ruleset, seeds)
    assert ours == ref_key(seed.hex(), match_id, game, ruleset, seeds)
    assert fairness.match_key(seed.hex(), match_id, game, ruleset, seeds) == ours


# n near 2^32 (where a quarter to a half of all words are rejected), small n, and anything
big_n = st.sampled_from([2**31 + 1, 3 * 2**30, 3 * 2**30 + 7, 2**32 - 1, 2**32, 1, 2, 3])
n_strategy = big_n | st.integers(1, 2**32)


@settings(max_examples=120, deadline=None)
@given(
    key=st.binary(min_size=32, max_size=32),
    lab=label,
    ns=st.lists(n_strategy, min_size=1, max_size=12),
)
def test_uniform_sequence_matches_reference(key: bytes, lab: str, ns: list[int]) -> None:
    ours, ref = fairness.Stream(key, lab), RefStream(key, lab)
    assert [ours.uniform(n) for n in ns] == [ref.uniform(n) for n in ns]
    assert ours.blocks_used == -(-ref.read // 8)  # ceil: blocks are computed lazily


@settings(max_examples=60, deadline=None)
@given(
    key=st.binary(min_size=32, max_size=32),
    lab=label,
    count=st.integers(1, 30),
    sides=st.sampled_from([2, 4, 6, 8, 12, 20, 100, 2**31 + 1, 2**32]),
)
def test_dice_match_reference(key: bytes, lab: str, count: int, sides: int) -> None:
    assert fairness.Stream(key, lab).dice(count, sides) == RefStream(key, lab).dice(count, sides)


@settings(max_examples=40, deadline=None)
@given(
    key=st.binary(min_size=32, max_size=32),
    lab=label,
    items=st.sampled_from([*SHUFFLED, "range:1", "range:2", "range:37"]),
)
def test_shuffles_match_reference(key: bytes, lab: str, items: str) -> None:
    ours = fairness.Stream(key, lab).shuffle(ours_items(items))
    assert ours == RefStream(key, lab).shuffle(ref_items(items))


@settings(max_examples=40, deadline=None)
@given(
    key=st.binary(min_size=32, max_size=32),
    lab=label,
    plan=st.lists(st.sampled_from(["word", "u6", "u52", "big", "shuffle"]), max_size=15),
)
def test_mixed_reads_share_one_stream(key: bytes, lab: str, plan: list[str]) -> None:
    """Shuffles, uniforms and raw words interleaved on one stream read it in order."""
    ours, ref = fairness.Stream(key, lab), RefStream(key, lab)
    for step in plan:
        if step == "word":
            assert ours.word() == next(ref.words)
        elif step == "shuffle":
            assert ours.shuffle(list(range(9))) == ref.shuffle(list(range(9)))
        else:
            n = {"u6": 6, "u52": 52, "big": 2**31 + 1}[step]
            assert ours.uniform(n) == ref.uniform(n)


def test_long_shuffles_with_rejections_match_reference() -> None:
    """Shuffles long enough that words near 2^32 occur, and one is really rejected.

    ``big0``: a word is close enough to 2^32 to leave the fast path, yet none is rejected;
    ``big1``: one word is rejected, so every later swap uses the word after; ``big3``: the
    fast path all the way.
    """
    key = hashlib.sha256(b"slow path").digest()
    size = 70_000
    for lab, rejected, near_top in (("big0", 0, True), ("big1", 1, True), ("big3", 0, False)):
        ref = RefStream(key, lab)
        expected = ref.shuffle(list(range(size)))
        assert ref.rejected == rejected
        words = RefStream(key, lab).words
        assert (max(next(words) for _ in range(size - 1)) >= 2**32 - size) is near_top
        ours = fairness.Stream(key, lab)
        assert ours.shuffle(range(size)) == expected
        # the stream goes on exactly where the shuffle stopped
        assert ours.word() == next(ref.words)
        assert ours.blocks_used == -(-(ref.read + 1) // 8)


@settings(max_examples=40, deadline=None)
@given(
    key=st.binary(min_size=32, max_size=32),
    lab=label,
    before=st.integers(0, 20),
    size=st.integers(0, 70),
    after=st.integers(0, 20),
)
def test_shuffle_in_the_middle_of_a_stream(
    key: bytes, lab: str, before: int, size: int, after: int
) -> None:
    """Words read before a shuffle and after it line up with the reference."""
    ours, ref = fairness.Stream(key, lab), RefStream(key, lab)
    assert [ours.word() for _ in range(before)] == [next(ref.words) for _ in range(before)]
    ref.read = before
    assert ours.shuffle(list(range(size))) == ref.shuffle(list(range(size)))
    assert ours.blocks_used == -(-ref.read // 8)
    assert [ours.word() for _ in range(after)] == [next(ref.words) for _ in range(after)]

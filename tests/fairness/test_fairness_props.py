"""Properties of the qahwa-fair/1 derivation: ranges, permutations, independence, framing,
rejection sampling, and a fixed-seed statistical sanity check."""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairness
from fairness import Stream

keys = st.binary(min_size=32, max_size=32)
labels = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=30)
K0 = hashlib.sha256(b"props").digest()


def raw_words(key: bytes, label: str, block: int) -> tuple[int, ...]:
    msg = label.encode("ascii") + b"\x00" + struct.pack(">I", block)
    return struct.unpack(">8I", hmac.new(key, msg, hashlib.sha256).digest())


# -- shuffles --------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(key=keys, label=labels, items=st.lists(st.integers() | st.text(max_size=3), max_size=60))
def test_shuffle_is_a_permutation_and_copies(key: bytes, label: str, items: list[object]) -> None:
    before = list(items)
    out = Stream(key, label).shuffle(items)
    assert items == before  # the input is not touched
    assert Counter(map(repr, out)) == Counter(map(repr, items))


@pytest.mark.parametrize(
    "items",
    [
        fairness.deck52(),
        fairness.deck_qahve(),
        fairness.tiles(6),
        fairness.tiles(12),
        fairness.parse_items("tiles:12-without:12-12"),
    ],
    ids=lambda x: f"{len(x)}items",
)
def test_canonical_shuffles_are_permutations(items: list[str]) -> None:
    for i in range(20):
        out = Stream(K0, f"h{i}/shuffle").shuffle(items)
        assert sorted(out) == sorted(items) and len(set(out)) == len(items)
        assert fairness.canonical_sort(out) == items  # a recorded shuffle's input


def test_shuffle_of_zero_or_one_item_reads_nothing() -> None:
    for items in ([], ["AS"]):
        s = Stream(K0, "x")
        assert s.shuffle(items) == items
        assert s.blocks_used == 0


def test_shuffle_of_two_reads_one_word() -> None:
    w = raw_words(K0, "two", 0)
    s = Stream(K0, "two")
    expected = ["a", "b"] if w[0] % 2 == 1 else ["b", "a"]
    assert s.shuffle(["a", "b"]) == expected
    assert s.word() == w[1]  # exactly one word was read


def test_shuffle_accepts_any_sequence() -> None:
    assert Stream(K0, "t").shuffle(tuple(range(10))) == Stream(K0, "t").shuffle(list(range(10)))
    assert Stream(K0, "t").shuffle("abcdef") == Stream(K0, "t").shuffle(list("abcdef"))


# -- uniform ---------------------------------------------------------------------------------

EDGE_N = [1, 2, 3, 6, 52, 2**31 - 1, 2**31, 2**31 + 1, 3 * 2**30, 2**32 - 1, 2**32]


@settings(max_examples=100, deadline=None)
@given(key=keys, label=labels, n=st.sampled_from(EDGE_N) | st.integers(1, 2**32))
def test_uniform_in_range(key: bytes, label: str, n: int) -> None:
    s = Stream(key, label)
    for _ in range(5):
        assert 0 <= s.uniform(n) < n


def test_uniform_one_is_zero_and_still_reads_a_word() -> None:
    s = Stream(K0, "one")
    assert s.uniform(1) == 0
    assert s.word() == raw_words(K0, "one", 0)[1]


def test_uniform_2_32_is_the_word_itself() -> None:
    s = Stream(K0, "whole")
    assert [s.uniform(2**32) for _ in range(9)] == [
        *raw_words(K0, "whole", 0),
        raw_words(K0, "whole", 1)[0],
    ]
    assert s.blocks_used == 2


def _label_whose_first_word_is_rejected(n: int, *, at_least: int = 1) -> tuple[str, list[int]]:
    limit = 2**32 - (2**32 % n)
    for i in range(10_000):
        label = f"rej{i}"
        words = list(raw_words(K0, label, 0) + raw_words(K0, label, 1))
        k = next(j for j, w in enumerate(words) if w < limit)
        if k >= at_least:
            return label, words
    raise AssertionError("no rejecting label found")  # pragma: no cover


@pytest.mark.parametrize("n", [2**31 + 1, 3 * 2**30, 2**31 + 12345])
def test_rejected_first_word_gives_result_from_the_next(n: int) -> None:
    limit = 2**32 - (2**32 % n)
    label, words = _label_whose_first_word_is_rejected(n)
    assert words[0] >= limit and words[0] % n < n  # would have been a biased answer
    first_ok = next(w for w in words if w < limit)
    got = Stream(K0, label).uniform(n)
    assert got == first_ok % n
    assert got != words[0] % n  # the rejected word was really skipped


def test_rejection_crosses_a_block_boundary() -> None:
    n = 2**31 + 1
    label, words = _label_whose_first_word_is_rejected(n, at_least=8)
    limit = 2**32 - (2**32 % n)
    assert all(w >= limit for w in words[:8])
    s = Stream(K0, label)
    assert s.uniform(n) == next(w for w in words if w < limit) % n
    assert s.blocks_used == 2


def test_limit_is_the_largest_multiple_of_n() -> None:
    """For n = 3 * 2^30 the limit is n itself: every accepted word is its own result."""
    n = 3 * 2**30
    label, words = _label_whose_first_word_is_rejected(n)
    assert words[0] >= n
    assert Stream(K0, label).uniform(n) == next(w for w in words if w < n)


# -- dice ------------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(key=keys, label=labels, count=st.integers(1, 20), sides=st.integers(2, 2**32))
def test_dice_in_range(key: bytes, label: str, count: int, sides: int) -> None:
    d = Stream(key, label).dice(count, sides)
    assert len(d) == count and all(1 <= x <= sides for x in d)


def test_dice_are_uniforms_of_one_stream_first_die_first() -> None:
    s = Stream(K0, "dd")
    expect = [1 + s.uniform(6) for _ in range(5)]
    assert Stream(K0, "dd").dice(5) == expect
    assert Stream(K0, "dd").dice(3) == expect[:3]  # the first die does not depend on count


# -- independence and framing ----------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(key=keys, a=labels, b=labels)
def test_one_labels_stream_never_depends_on_another(key: bytes, a: str, b: str) -> None:
    chance_ab = fairness.Stream(key, a).shuffle(range(20)), fairness.Stream(key, b).dice(3)
    sb = fairness.Stream(key, b)
    sa = fairness.Stream(key, a)
    d = sb.dice(3)
    sh = sa.shuffle(range(20))
    assert (sh, d) == chance_ab


def test_interleaved_streams_are_independent() -> None:
    a, b = Stream(K0, "A"), Stream(K0, "B")
    mixed = []
    for _ in range(20):
        mixed.append((a.uniform(2**31 + 1), b.uniform(7)))
    a2, b2 = Stream(K0, "A"), Stream(K0, "B")
    assert [x for x, _ in mixed] == [a2.uniform(2**31 + 1) for _ in range(20)]
    assert [y for _, y in mixed] == [b2.uniform(7) for _ in range(20)]


def test_different_labels_give_different_streams() -> None:
    words = {Stream(K0, f"h{i}/shuffle").word() for i in range(200)}
    assert len(words) == 200
    # the 0x00 after the label keeps "ab"+block and "a"+... apart
    assert raw_words(K0, "a", 0) != raw_words(K0, "a\x00", 0)[:8]


SEED = "00" * 32


def test_client_seed_order_matters() -> None:
    k1 = fairness.match_key(SEED, "m", "hokm", "{}", ["alice", "bob"])
    k2 = fairness.match_key(SEED, "m", "hokm", "{}", ["bob", "alice"])
    assert k1 != k2


@pytest.mark.parametrize(
    ("x", "y"),
    [
        (("ab", "c", "{}", ["s"]), ("a", "bc", "{}", ["s"])),
        (("m", "tawla", "{}x", ["s"]), ("m", "tawla", "{}", ["xs"])),
        (("m", "g", "r", ["ab"]), ("m", "g", "r", ["a", "b"])),
        (("m", "g", "r", ["a", "b"]), ("m", "g", "r", ["a b"])),
        (("m", "g", "", []), ("m", "g", "", [" "])),
        (("", "mg", "r", ["s"]), ("m", "g", "r", ["s"])),
    ],
)
def test_lp_framing_prevents_ambiguity(x: tuple, y: tuple) -> None:  # type: ignore[type-arg]
    assert fairness.match_key(SEED, *x) != fairness.match_key(SEED, *y)


def test_every_input_changes_the_key() -> None:
    base = ("m-1", "tawla", '{"cube":true}', ["a", "b"])
    k = fairness.match_key(SEED, *base)
    assert fairness.match_key("01" + "00" * 31, *base) != k
    assert fairness.match_key(SEED, "m-2", *base[1:]) != k
    assert fairness.match_key(SEED, "m-1", "hokm", *base[2:]) != k
    assert fairness.match_key(SEED, "m-1", "tawla", '{"cube": true}', ["a", "b"]) != k
    assert fairness.match_key(SEED, "m-1", "tawla", '{"cube":true}', ["a", "c"]) != k
    assert fairness.match_key(SEED, "m-1", "tawla", '{"cube":true}', ["a"]) != k


def test_match_key_accepts_any_sequence_of_seeds() -> None:
    assert fairness.match_key(SEED, "m", "g", "{}", ("a", "b")) == fairness.match_key(
        SEED, "m", "g", "{}", ["a", "b"]
    )


def test_new_seeds_are_fresh_and_valid() -> None:
    seeds = {fairness.new_server_seed() for _ in range(50)}
    assert len(seeds) == 50 and all(len(s) == 32 for s in seeds)
    cs = {fairness.new_client_seed() for _ in range(50)}
    assert len(cs) == 50 and all(fairness.check_client_seed(c) == c for c in cs)


def test_entropy_label() -> None:
    assert fairness.entropy_label("g0/roll/3", None) == "g0/roll/3"
    assert fairness.entropy_label("g0/roll/3", "x y~") == "g0/roll/3|x y~"
    lab = fairness.entropy_label("g0/roll/3", "abc")
    assert Stream(K0, lab).word() == raw_words(K0, "g0/roll/3|abc", 0)[0]
    assert Stream(K0, lab).word() != Stream(K0, "g0/roll/3").word()


# -- statistics with fixed seeds (deterministic, generous bounds) ----------------------------


def chi_square(counts: list[int], expected: float) -> float:
    return sum((c - expected) ** 2 / expected for c in counts)


def test_die_faces_chi_square() -> None:
    key = fairness.match_key(SEED, "stats", "tawla", "{}", ["a", "b"])
    counts = [0] * 6
    for g in range(2000):
        for face in Stream(key, f"g0/roll/{g}").dice(6):
            counts[face - 1] += 1
    # 5 degrees of freedom: p = 1e-6 is about 35.9
    assert chi_square(counts, 12000 / 6) < 36, counts


def test_card_positions_chi_square() -> None:
    key = fairness.match_key(SEED, "stats", "hokm", "{}", ["a", "b", "c", "d"])
    deck = fairness.deck52()
    # position of the ace of spades and of the 2 of clubs over many shuffles
    pos_as, pos_2c = [0] * 52, [0] * 52
    top = Counter[str]()
    shuffles = 2600
    for h in range(shuffles):
        out = Stream(key, f"h{h}/shuffle").shuffle(deck)
        pos_as[out.index("AS")] += 1
        pos_2c[out.index("2C")] += 1
        top[out[0]] += 1
    # 51 degrees of freedom: p = 1e-6 is about 111
    assert chi_square(pos_as, shuffles / 52) < 111, pos_as
    assert chi_square(pos_2c, shuffles / 52) < 111, pos_2c
    assert chi_square([top[c] for c in deck], shuffles / 52) < 111


def test_uniform_large_n_halves() -> None:
    """n = 2^31 + 1 (half the words rejected): results still fill both halves evenly."""
    s = Stream(K0, "halves")
    n = 2**31 + 1
    low = sum(s.uniform(n) < n // 2 for _ in range(4000))
    assert 1700 < low < 2300


# -- the stream's HMAC from precomputed pads, the dice's batched words -------------------------


def ref_words(key: bytes, label: str, count: int) -> list[int]:
    """The first ``count`` words of a label's stream, by ``hmac.new`` block by block."""
    algo, fmt = (hashlib.sha256, ">8I") if len(key) == 32 else (hashlib.sha512, ">16I")
    out: list[int] = []
    block = 0
    while len(out) < count:
        msg = label.encode("ascii") + b"\x00" + struct.pack(">I", block)
        out += struct.unpack(fmt, hmac.new(key, msg, algo).digest())
        block += 1
    return out[:count]


def ref_dice(key: bytes, label: str, count: int, sides: int) -> tuple[list[int], int]:
    """Dice read word by word with rejection (fairness-v1.md §3), and the words read."""
    words = ref_words(key, label, 4 * count + 64)
    limit = 2**32 - (2**32 % sides)
    out, pos = [], 0
    while len(out) < count:
        w = words[pos]
        pos += 1
        if w < limit:
            out.append(1 + w % sides)
    return out, pos


@settings(max_examples=60, deadline=None)
@given(
    key=st.binary(min_size=32, max_size=32) | st.binary(min_size=64, max_size=64),
    label=labels,
    n=st.integers(1, 70),
)
def test_stream_words_are_hmac_blocks(key: bytes, label: str, n: int) -> None:
    want = ref_words(key, label, n)
    for k in (key, fairness.StreamKey(key)):
        s = Stream(k, label)
        assert [s.word() for _ in range(n)] == want
        assert s.blocks_used == -(-n // (8 if len(key) == 32 else 16))


@settings(max_examples=80, deadline=None)
@given(
    key=st.binary(min_size=32, max_size=32) | st.binary(min_size=64, max_size=64),
    label=labels,
    count=st.integers(1, 40),
    sides=st.integers(2, 12) | st.integers(2**31, 2**32),
)
def test_dice_equal_word_by_word_reading(key: bytes, label: str, count: int, sides: int) -> None:
    want, read = ref_dice(key, label, count, sides)
    per = 8 if len(key) == 32 else 16
    s = Stream(fairness.StreamKey(key), label)
    assert s.dice(count, sides) == want
    assert s.blocks_used == -(-read // per)
    # the stream goes on after the dice exactly where word-by-word reading would
    assert s.word() == ref_words(key, label, read + 1)[read]
    # StreamKey.dice (the replay's draw, a shortcut for a few dice) is the Stream's
    assert fairness.StreamKey(key).dice(label, count, sides) == want


def test_dice_with_a_rejected_word_read_on() -> None:
    n = 2**31 + 1
    label, words = _label_whose_first_word_is_rejected(n, at_least=2)
    limit = 2**32 - (2**32 % n)
    want = [1 + w % n for w in words if w < limit][:3]
    assert Stream(K0, label).dice(3, n) == want
    # StreamKey.dice, whose shortcut reads the first block only, reads on as the Stream
    assert fairness.StreamKey(K0).dice(label, 3, n) == want


@pytest.mark.parametrize(
    ("label", "count", "sides", "error"),
    [
        ("", 2, 6, fairness.LabelError),
        ("a\x00b", 2, 6, fairness.LabelError),
        ("x" * 257, 2, 6, fairness.LabelError),
        ("é", 2, 6, fairness.LabelError),
        ("ok", 0, 6, fairness.RangeError),
        ("ok", True, 6, fairness.RangeError),
        ("ok", 2, 1, fairness.RangeError),
        ("ok", 2, 6.0, fairness.RangeError),
        ("ok", 2, 2**32 + 1, fairness.RangeError),
    ],
)
def test_stream_key_dice_refuse_what_the_stream_refuses(
    label: str, count: object, sides: object, error: type[Exception]
) -> None:
    for draw in (
        lambda: fairness.StreamKey(K0).dice(label, count, sides),  # type: ignore[arg-type]
        lambda: Stream(K0, label).dice(count, sides),  # type: ignore[arg-type]
    ):
        with pytest.raises(error):
            draw()


def test_stream_key_is_checked_and_shared_by_copies() -> None:
    import copy
    import pickle

    with pytest.raises(fairness.SeedError):
        fairness.StreamKey(b"short")
    k = fairness.StreamKey(K0)
    assert copy.deepcopy(k) is k
    assert Stream(pickle.loads(pickle.dumps(k)), "x").dice(4) == Stream(K0, "x").dice(4)

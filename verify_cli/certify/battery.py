"""The kit's tests: scaled outcomes of the derivation as the games draw them, and the raw
words. Each test is a chi-square (Pearson) against exact expected counts; the family is
corrected with Holm–Bonferroni and judged at α = 0.01 family-wise.

Position tests use a result proved for uniform permutations: over D shuffles of n items,
the n×n count matrix O (item × position, E = D/n per cell) has
Σ (O − E)²/E ≈ n/(n−1) · χ²((n−1)²), so the kit reports X²·(n−1)/n with df (n−1)². Each
item's own row is a plain multinomial: χ²(n−1).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from fairness import fresh_label, tiles
from games.deals import deal_tiles, first_ace_seat, hokm_deck
from games.mexican_train import hand_size
from games.tiles import is_double, pips

from .sources import Source
from .statistics import ChiSquare, chi2_sf, chi_square, holm, pool_tail

ALPHA = 0.01
UNIFORM_NS = (3, 7, 37, 2**31 + 1, 3 * 2**30)
UNIFORM_BINS = 64
HOKM_TABLES = (4, 3, 2)
MEXICAN_PLAYERS = 4


#: the smallest sample sizes: every expected count of their tests is at least 5
MINIMUM = {"dice": 4_000, "decks": 1_000, "tiles": 500, "lots": 2_000, "words": 4_096}


@dataclass(frozen=True)
class Sizes:
    dice: int = 1_000_000
    decks: int = 200_000
    tiles: int = 20_000  # shuffles of 28 tiles, of 91 tiles, and Mexican Train deals each
    lots: int = 100_000  # per lot test: first hakem per table size, dealer lots, uniform(n)
    words: int = 1 << 20  # raw words for the bit and byte tests

    def __post_init__(self) -> None:
        # every problem at once, so one run says every minimum
        low = [
            f"--{name} must be at least {least:,}, got {getattr(self, name)!r}"
            for name, least in MINIMUM.items()
            if not isinstance(getattr(self, name), int) or getattr(self, name) < least
        ]
        problems = ["; ".join(low) + " (every expected count of their tests ≥ 5)"] if low else []
        if isinstance(self.dice, int) and self.dice % 4:
            problems.append(
                f"--dice must be a multiple of 4 (rolls of two dice, paired), got {self.dice:,}"
            )
        if problems:
            smallest = Sizes.smallest().args()
            raise ValueError("; ".join(problems) + f"; the smallest sizes: {smallest}")

    @classmethod
    def smallest(cls) -> Sizes:
        return cls(**MINIMUM)

    def scaled_to(self, nbytes: int) -> Sizes | None:
        """The largest sizes, each at most this one and none under its minimum, scaled by
        one factor, whose file source fits in ``nbytes`` (None: not even the smallest)."""
        if self.words_needed() * 4 <= nbytes:
            return self
        if Sizes.smallest().words_needed() * 4 > nbytes:
            return None

        def at(f: float) -> Sizes:
            n = {k: max(MINIMUM[k], min(v, int(v * f))) for k, v in self.as_dict().items()}
            n["dice"] = max(MINIMUM["dice"], n["dice"] - n["dice"] % 4)
            return Sizes(**n)

        lo, hi = 0.0, 1.0  # at(lo) fits, at(hi) does not
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if at(mid).words_needed() * 4 <= nbytes else (lo, mid)
        return at(lo)

    def args(self) -> str:
        return " ".join(f"--{k} {v}" for k, v in self.as_dict().items())

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def words_needed(self, samples: int = 2) -> int:
        """The words a file source needs for ``samples`` runs at these sizes (expected reads
        of the rejection paths, plus a margin of 0.1% and 4,096 words). A file source must
        hold two: the second is read only when the first fails (the confirmation)."""
        return samples * self._words_one() + 4_096

    def _words_one(self) -> int:
        reads = self.words + self.dice
        reads += self.decks * 51 + self.tiles * (27 + 90 + 89)
        reads += self.lots * (51 + 50 + 51)  # first hakem: 52, 51, 52 cards
        reads += 2 * self.lots  # dealer lots uniform(4), uniform(2)
        for n in UNIFORM_NS:
            accept = (2**32 - 2**32 % n) / 2**32
            reads += math.ceil(self.lots / accept)
        return math.ceil(reads * 1.001)


@dataclass
class TestResult:
    name: str
    group: str
    statistic: float
    df: int
    p_value: float
    n: int
    observed: list[float] = field(default_factory=list)
    expected: list[float] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    note: str = ""
    p_adjusted: float = 1.0
    passed: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "group": self.group,
            "statistic": round(self.statistic, 6),
            "df": self.df,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "pass": self.passed,
            "n": self.n,
            "note": self.note,
            "observed": self.observed,
            "expected": [round(e, 6) for e in self.expected],
            "labels": self.labels,
        }


@dataclass
class Matrix:
    """An item × position count matrix, for the report's plots."""

    name: str
    n: int
    draws: int
    counts: list[list[int]]  # counts[item][position]


@dataclass
class Battery:
    results: list[TestResult] = field(default_factory=list)
    matrices: list[Matrix] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def add(
        self,
        name: str,
        group: str,
        cs: ChiSquare,
        n: int,
        observed: Sequence[float],
        expected: Sequence[float],
        labels: Sequence[str] = (),
        note: str = "",
    ) -> None:
        self.results.append(
            TestResult(
                name,
                group,
                cs.statistic,
                cs.df,
                cs.p_value,
                n,
                list(observed),
                list(expected),
                list(labels),
                note,
            )
        )

    def judge(self, alpha: float = ALPHA) -> bool:
        adjusted = holm([r.p_value for r in self.results])
        for r, a in zip(self.results, adjusted, strict=True):
            r.p_adjusted = a
            r.passed = a > alpha
        return all(r.passed for r in self.results)


def _test(
    battery: Battery,
    name: str,
    group: str,
    counts: Sequence[float],
    probs: Sequence[float],
    n: int,
    labels: Sequence[str],
    note: str = "",
) -> None:
    expected = [p * n for p in probs]
    battery.add(name, group, chi_square(counts, expected), n, counts, expected, labels, note)


def _flat_test(
    battery: Battery,
    name: str,
    group: str,
    counts: Mapping[Any, int],
    keys: Sequence[Any],
    n: int,
    note: str,
    labels: Sequence[str] | None = None,
) -> None:
    """:func:`_test` of ``counts`` of ``keys`` (labelled ``str(key)`` by default) against
    equal probabilities."""
    probs = [1 / len(keys)] * len(keys)
    labels = [str(k) for k in keys] if labels is None else labels
    _test(battery, name, group, [counts.get(k, 0) for k in keys], probs, n, labels, note)


# -- raw words --------------------------------------------------------------------------------


def raw_tests(b: Battery, data: bytes) -> None:
    """Byte frequencies (df 255) and each of the 32 bit positions' frequency of ones
    (Σ z², df 32) over the raw words."""
    nwords = len(data) // 4
    byte_counts = Counter(data)
    _flat_test(
        b,
        "raw.bytes",
        "raw",
        byte_counts,
        range(256),
        len(data),
        "frequency of each byte value",
    )
    ones = []
    for lane in range(4):  # byte lane 0 holds bits 31..24 (big-endian)
        lane_counts = Counter(data[lane::4])
        for bit in range(7, -1, -1):
            ones.append(sum(c for v, c in lane_counts.items() if v >> bit & 1))
    z2 = sum((2 * k - nwords) ** 2 / nwords for k in ones)
    cs = ChiSquare(z2, 32, chi2_sf(z2, 32))
    b.add(
        "raw.bits",
        "raw",
        cs,
        nwords,
        ones,
        [nwords / 2] * 32,
        [f"bit {31 - i}" for i in range(32)],
        "ones per bit position (bit 31 first)",
    )


# -- dice -------------------------------------------------------------------------------------


def dice_tests(b: Battery, source: Source, count: int) -> None:
    """Tawla's rolls: dice(2) at fresh-roll labels ``g0/roll/t|hex(SHA-256(v_R || v_O))``,
    64 rolls a match; faces, ordered pairs within a roll and across rolls, runs of one
    face, and the lag-1 serial correlation."""
    rolls = count // 2
    faces = bytearray()
    values = _values(source)
    for t in range(rolls):
        label = fresh_label(f"g0/roll/{t % 64 + 1}", next(values), next(values))
        faces += bytes(source.stream("dice", "tawla", t, 64, label).dice(2))
    n = len(faces)
    _flat_test(b, "dice.faces", "dice", Counter(faces), range(1, 7), n, "faces of all dice")
    within = Counter(zip(faces[0::2], faces[1::2], strict=True))
    cells = [(x, y) for x in range(1, 7) for y in range(1, 7)]
    labels = [f"{x}{y}" for x, y in cells]
    _flat_test(
        b,
        "dice.pairs.within_roll",
        "dice",
        within,
        cells,
        n // 2,
        "ordered pairs (die 0, die 1) of each roll",
        labels,
    )
    between = Counter(zip(faces[1::4], faces[2::4], strict=False))
    pairs = sum(between.values())
    _flat_test(
        b,
        "dice.pairs.between_rolls",
        "dice",
        between,
        cells,
        pairs,
        "ordered pairs (die 1 of roll 2k, die 0 of roll 2k+1), non-overlapping",
        labels,
    )
    # runs of one face: each complete run's length is geometric, P(L = k) = (1/6)^(k-1)·5/6
    # (lengths from 30 on pooled, then the tail pooled until every expected count is ≥ 5)
    cap = 30
    lengths: Counter[int] = Counter()
    run = 1
    for prev, cur in zip(faces, faces[1:], strict=False):
        if cur == prev:
            run += 1
        else:
            lengths[min(run, cap)] += 1
            run = 1
    runs = sum(lengths.values())
    probs = [(1 / 6) ** (k - 1) * 5 / 6 for k in range(1, cap)] + [(1 / 6) ** (cap - 1)]
    by_index: Counter[int] = Counter({k - 1: c for k, c in lengths.items()})
    _pooled(
        b,
        "dice.runs",
        "dice",
        by_index,
        probs,
        runs,
        "lengths of runs of one face (geometric; the longest pooled)",
        offset=1,
    )
    # lag-1 serial correlation: r·√n is standard normal; r² n ~ χ²(1)
    mean = sum(faces) / n
    dev = [f - mean for f in faces]
    var = sum(d * d for d in dev)
    r = sum(x * y for x, y in zip(dev, dev[1:], strict=False)) / var
    z2 = r * r * (n - 1)
    b.add(
        "dice.serial_correlation",
        "dice",
        ChiSquare(z2, 1, chi2_sf(z2, 1)),
        n,
        [r],
        [0.0],
        ["r"],
        "lag-1 correlation of consecutive faces; statistic r²(n−1)",
    )


def _values(source: Source) -> Iterator[bytes]:
    """The roll-chain values of the two seats (fresh per roll, as a conforming client's)."""
    run = getattr(source, "run", None)
    draw = run.bytes if run is not None else os.urandom
    while True:
        yield draw(32)


# -- shuffles ---------------------------------------------------------------------------------


def position_tests(
    b: Battery,
    source: Source,
    name: str,
    game: str,
    n: int,
    draws: int,
    per_match: int,
    hand: str,
    item_names: Sequence[str],
) -> None:
    """Each item's position over ``draws`` shuffles of ``n`` items (at labels
    ``{hand}{i mod per_match}/shuffle``): the whole matrix (df (n−1)²) and each item's row
    (df n−1)."""
    buf = bytearray()
    items = list(range(n))
    for i in range(draws):
        buf += bytes(
            source.stream(name, game, i, per_match, f"{hand}{i % per_match}/shuffle").shuffle(items)
        )
    counts = [[0] * n for _ in range(n)]  # counts[item][position]
    for pos in range(n):
        col = Counter(buf[pos::n])
        for item, c in col.items():
            counts[item][pos] = c
    e = draws / n
    x2 = sum((c - e) ** 2 / e for row in counts for c in row)
    df = (n - 1) ** 2
    scaled = x2 * (n - 1) / n
    b.add(
        f"{name}.positions",
        name,
        ChiSquare(scaled, df, chi2_sf(scaled, df)),
        draws,
        [],
        [],
        [],
        f"all {n}×{n} item/position counts ({n * n} cells, E = {e:,.1f}); statistic X²·(n−1)/n",
    )
    b.matrices.append(Matrix(name, n, draws, counts))
    for item in range(n):
        _test(
            b,
            f"{name}.item[{item_names[item]}]",
            name,
            counts[item],
            [1 / n] * n,
            draws,
            [str(p) for p in range(n)],
            f"positions of {item_names[item]}",
        )


def shuffle_tests(b: Battery, source: Source, sizes: Sizes) -> None:
    deck = [r + s for s in "CDHS" for r in "23456789TJQKA"]
    for name, game, n, draws, per, prefix, items in (
        ("deck52", "hokm", 52, sizes.decks, 16, "h", deck),
        ("tiles28", "iraqi_domino", 28, sizes.tiles, 8, "r", tiles(6)),
        ("tiles91", "mexican_train", 91, sizes.tiles, 13, "r", tiles(12)),
    ):
        position_tests(b, source, name, game, n, draws, per, prefix, items)


def mexican_tests(b: Battery, source: Source, deals: int) -> None:
    """Mexican Train's first round with four players, as the engine deals it: 90 tiles
    (``tiles(12)`` without the engine 12-12), 15 a hand. Deal i's hand of seat i mod 4:
    its doubles (hypergeometric) and its pips (exact distribution)."""
    deck = [t for t in tiles(12) if t != "12-12"]
    h = hand_size(MEXICAN_PLAYERS)
    n_doubles = sum(1 for t in deck if is_double(t))
    doubles: Counter[int] = Counter()
    pip_totals: Counter[int] = Counter()
    for i in range(deals):
        shuffled = source.stream("mexican", "mexican_train", i, 1, "r0/shuffle").shuffle(deck)
        hands, _ = deal_tiles(shuffled, MEXICAN_PLAYERS, h)
        hand = hands[i % MEXICAN_PLAYERS]
        doubles[sum(1 for t in hand if is_double(t))] += 1
        pip_totals[sum(pips(t) for t in hand)] += 1
    total = math.comb(len(deck), h)
    probs = [
        math.comb(n_doubles, k) * math.comb(len(deck) - n_doubles, h - k) / total
        for k in range(min(h, n_doubles) + 1)
    ]
    _pooled(
        b,
        "mexican.doubles",
        "mexican",
        doubles,
        probs,
        deals,
        "doubles in a dealt hand of 15 (hypergeometric)",
    )
    # the exact distribution of a hand's pips: subsets of 15 of the 90 tiles by pip sum
    ways = [[0] * (24 * h + 1) for _ in range(h + 1)]
    ways[0][0] = 1
    for t in deck:
        p = pips(t)
        for k in range(h, 0, -1):
            row, prev = ways[k], ways[k - 1]
            for s in range(24 * h, p - 1, -1):
                if prev[s - p]:
                    row[s] += prev[s - p]
    probs = [w / total for w in ways[h]]
    _pooled(
        b,
        "mexican.pips",
        "mexican",
        pip_totals,
        probs,
        deals,
        "pips in a dealt hand of 15 (exact distribution, pooled to E ≥ 5)",
        min_expected=20,
    )


def _pooled(
    b: Battery,
    name: str,
    group: str,
    counts: Counter[int],
    probs: Sequence[float],
    n: int,
    note: str,
    min_expected: float = 5.0,
    offset: int = 0,
) -> None:
    """A chi-square over categories 0, 1, … (shown as offset + k), neighbours pooled until
    each bin expects at least ``min_expected``."""
    bins = pool_tail(probs, n, min_expected)
    obs = [sum(counts.get(k, 0) for k in range(lo, hi)) for lo, hi in bins]
    ps = [sum(probs[lo:hi]) for lo, hi in bins]
    labels = [
        str(lo + offset) if hi == lo + 1 else f"{lo + offset}–{hi - 1 + offset}" for lo, hi in bins
    ]
    _test(b, name, group, obs, ps, n, labels, note)


# -- lots -------------------------------------------------------------------------------------


def hakem_probs(cards: int, n_seats: int) -> list[float]:
    """P(first hakem = seat s): the first of 4 aces among ``cards`` dealt face up from seat
    0 lands at index i with probability C(cards−1−i, 3)/C(cards, 4)."""
    total = math.comb(cards, 4)
    out = [0.0] * n_seats
    for i in range(cards - 3):
        out[i % n_seats] += math.comb(cards - 1 - i, 3) / total
    return out


def lot_tests(b: Battery, source: Source, lots: int) -> None:
    """The first hakem of hokm (a face-up deal of ``shuffle(deck)`` at label ``hakem``, one
    per match, for 4, 3 and 2 players), the dealer lots (``uniform(4)`` / ``uniform(2)``
    at ``dealer``: qahve, shelem), and ``uniform(n)`` over awkward n (the rejection path)."""
    for n in HOKM_TABLES:
        deck = hokm_deck(n)
        seats: Counter[int] = Counter()
        for i in range(lots):
            seats[
                first_ace_seat(source.stream(f"hakem{n}", "hokm", i, 1, "hakem").shuffle(deck), n)
            ] += 1
        _test(
            b,
            f"hokm.first_hakem.{n}p",
            "lots",
            [seats.get(s, 0) for s in range(n)],
            hakem_probs(len(deck), n),
            lots,
            [f"seat {s}" for s in range(n)],
            f"first hakem's seat, {n} players ({len(deck)} cards; exact, not uniform)",
        )
    for n, game in ((4, "qahve"), (2, "shelem")):
        got: Counter[int] = Counter()
        for i in range(lots):
            got[source.stream(f"dealer{n}", game, i, 1, "dealer").uniform(n)] += 1
        seat_labels = [f"seat {s}" for s in range(n)]
        note = f"first dealer, uniform({n})"
        _flat_test(b, f"lots.dealer.{n}", "lots", got, range(n), lots, note, seat_labels)
    for n in UNIFORM_NS:
        per = 256
        if n <= UNIFORM_BINS:
            counts: Counter[int] = Counter(
                source.stream(f"uniform{n}", "rng", i, per, f"d{i % per}").uniform(n)
                for i in range(lots)
            )
            _flat_test(
                b, f"uniform.{n}", "uniform", counts, range(n), lots, f"uniform({n}), every value"
            )
            continue
        # v·B // n = k exactly when ⌈k·n/B⌉ ≤ v < ⌈(k+1)·n/B⌉
        edges = [-(-n * k // UNIFORM_BINS) for k in range(UNIFORM_BINS + 1)]
        binned: Counter[int] = Counter()
        for i in range(lots):
            v = source.stream(f"uniform{n}", "rng", i, per, f"d{i % per}").uniform(n)
            binned[v * UNIFORM_BINS // n] += 1
        probs = [(edges[k + 1] - edges[k]) / n for k in range(UNIFORM_BINS)]
        _test(
            b,
            f"uniform.{n}",
            "uniform",
            [binned.get(k, 0) for k in range(UNIFORM_BINS)],
            probs,
            lots,
            [str(e) for e in edges[:-1]],
            f"uniform({n}) in {UNIFORM_BINS} equal ranges (rejection path: "
            f"{(2**32 % n) / 2**32:.1%} of words rejected)",
        )


def run_battery(
    source: Source, sizes: Sizes, progress: Callable[[str], None] | None = None
) -> Battery:
    """Every test, in a fixed order (a file source is read in this order)."""
    import time

    b = Battery()
    steps: list[tuple[str, Callable[[], None]]] = [
        ("raw", lambda: raw_tests(b, source.raw(sizes.words))),
        ("dice", lambda: dice_tests(b, source, sizes.dice)),
        ("shuffles", lambda: shuffle_tests(b, source, sizes)),
        ("mexican", lambda: mexican_tests(b, source, sizes.tiles)),
        ("lots", lambda: lot_tests(b, source, sizes.lots)),
    ]
    for name, step in steps:
        if progress is not None:
            progress(name)
        t0 = time.perf_counter()
        step()
        b.timings[name] = time.perf_counter() - t0
    b.judge()
    return b

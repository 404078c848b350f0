"""The canonical item orders of fairness-v1.md §4."""

from __future__ import annotations

from .errors import ItemsError, RangeError

RANKS = "23456789TJQKA"
SUITS = "CDHS"
MAX_RANGE = 100_000

DECK52: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
DECK_QAHVE: tuple[str, ...] = tuple(c for c in DECK52 if c not in ("2D", "2H")) + ("JB", "JR")


def deck52() -> list[str]:
    """2C 3C ... AC 2D ... AS (index 0 = 2C, 51 = AS)."""
    return list(DECK52)


def deck_qahve() -> list[str]:
    """deck52 without 2D and 2H, then JB and JR: 52 cards."""
    return list(DECK_QAHVE)


def tile_code(a: int, b: int) -> str:
    lo, hi = (a, b) if a <= b else (b, a)
    return f"{lo}-{hi}"


def tiles(m: int) -> list[str]:
    """Tiles "a-b" with a <= b, for a in 0..m, b in a..m."""
    if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= 99:
        raise RangeError(f"tiles(m) needs 0 <= m <= 99, got {m!r}")
    return [f"{a}-{b}" for a in range(m + 1) for b in range(a, m + 1)]


def parse_tile(code: str) -> tuple[int, int]:
    try:
        a_s, b_s = code.split("-")
        a, b = int(a_s), int(b_s)
    except (ValueError, AttributeError):
        raise ItemsError(f"not a tile code: {code!r}") from None
    if a > b or a < 0 or f"{a}-{b}" != code:
        raise ItemsError(f"not a canonical tile code: {code!r}")
    return a, b


def restrict(canonical: list[str], codes: list[str]) -> list[str]:
    """The canonical order restricted to the given codes (§6: a shuffle's input)."""
    wanted = set(codes)
    if len(wanted) != len(codes):
        raise ItemsError("duplicate item codes")
    unknown = wanted - set(canonical)
    if unknown:
        raise ItemsError(f"unknown item codes: {sorted(unknown)}")
    return [c for c in canonical if c in wanted]


def parse_items(spec: str) -> list[str]:
    """`deck52`, `deck_qahve`, `tiles:M` or `tiles:M-without:A-B[,C-D...]`."""
    if spec == "deck52":
        return deck52()
    if spec == "deck_qahve":
        return deck_qahve()
    if spec.startswith("tiles:"):
        rest = spec[len("tiles:") :]
        without: list[str] = []
        if "-without:" in rest:
            rest, excl = rest.split("-without:", 1)
            without = [e for e in excl.split(",") if e]
            if not without:
                raise ItemsError(f"empty -without list in {spec!r}")
        if not (rest.isascii() and rest.isdigit()):
            raise ItemsError(f"tiles:M needs an integer M, got {spec!r}")
        items = tiles(int(rest))
        for w in without:
            parse_tile(w)
            if w not in items:
                raise ItemsError(f"tile {w} is not in tiles({rest})")
            items.remove(w)
        return items
    if spec.startswith("range:"):
        n = spec[len("range:") :]
        if not (n.isascii() and n.isdigit()) or not 1 <= int(n) <= MAX_RANGE:
            raise ItemsError(f"range:N needs an integer 1 to {MAX_RANGE}, got {spec!r}")
        return [str(i) for i in range(int(n))]
    raise ItemsError(
        f"unknown items {spec!r}: use deck52, deck_qahve, tiles:M or tiles:M-without:A-B"
    )


_CARD_ORDER = {c: i for i, c in enumerate(DECK52 + ("JB", "JR"))}


def canonical_sort(codes: list[str] | list[int]) -> list[str] | list[int]:
    """The canonical §4 order restricted to these codes: the input of a recorded shuffle.

    Cards sort as deck52 then JB, JR (which is also deck_qahve's order); tiles by (a, b),
    which is the order of every tiles(m); integers (plain sessions) ascending.
    """
    items: list[object] = list(codes)
    if not items:
        return []
    ints = [c for c in items if isinstance(c, int) and not isinstance(c, bool)]
    if len(ints) == len(items):
        return sorted(ints)
    strs = [c for c in items if isinstance(c, str)]
    if len(strs) != len(items):
        raise ItemsError("shuffle result mixes item kinds")
    if all(c in _CARD_ORDER for c in strs):
        return sorted(strs, key=_CARD_ORDER.__getitem__)
    return sorted(strs, key=parse_tile)

"""Tiles (c2sp.org/tlog-tiles): the tree served as static, cacheable resources.

A tile at level L holds up to 256 consecutive stored hashes of tree level 8·L: tile N of
level L holds nodes ``(8L, 256N + i)`` for i < W. A *full* tile has 256; the rightmost tile
of each level is *partial* for most sizes. Entry bundles hold the entries (leaves) of the
level-0 tile of the same N, each prefixed by its length as a big-endian uint16.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .merkle import (
    HASH_SIZE,
    ProofError,
    fold,
    node_hash,
    range_nodes,
    split_stored_hash_index,
)

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT  # 256
MAX_ENTRY = 0xFFFF


class TileError(ValueError):
    """A tile path, tile or entry bundle that is malformed or does not authenticate."""


@dataclass(frozen=True, order=True)
class Tile:
    """Tile ``n`` of ``level`` with ``width`` hashes (entries when ``entries``)."""

    level: int
    n: int
    width: int = TILE_WIDTH
    entries: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.level <= 63 or self.n < 0 or not 1 <= self.width <= TILE_WIDTH:
            raise TileError(f"no tile level {self.level} index {self.n} width {self.width}")
        if self.entries and self.level != 0:
            raise TileError("entry bundles are level 0")

    @property
    def full(self) -> bool:
        return self.width == TILE_WIDTH

    @property
    def path(self) -> str:
        """``tile/<L>/<N>[.p/<W>]`` or ``tile/entries/<N>[.p/<W>]``."""
        head = "tile/entries/" if self.entries else f"tile/{self.level}/"
        tail = "" if self.full else f".p/{self.width}"
        return head + encode_index(self.n) + tail

    def start(self) -> int:
        """The first leaf this tile spans."""
        return self.n << (TILE_HEIGHT * (self.level + 1))


def encode_index(n: int) -> str:
    """N in 3-digit path elements, all but the last prefixed ``x`` (1234067 → x001/x234/067)."""
    if n < 0:
        raise TileError(f"no tile index {n}")
    digits = str(n)
    digits = "0" * (-len(digits) % 3) + digits
    groups = [digits[i : i + 3] for i in range(0, len(digits), 3)]
    return "/".join(["x" + g for g in groups[:-1]] + [groups[-1]])


_PATH = re.compile(
    r"tile/(entries|0|[1-9][0-9]?)/((?:x[0-9]{3}/)*[0-9]{3})(?:\.p/([1-9][0-9]{0,2}))?"
)


def parse_path(path: str) -> Tile:
    """The tile a path names (``tile/...``, without the log's prefix); TileError if it is not
    a canonical tile path."""
    m = _PATH.fullmatch(path)
    if m is None:
        raise TileError(f"not a tile path: {path!r}")
    kind, index, width = m.groups()
    n = int(index.replace("x", "").replace("/", ""))
    w = int(width) if width else TILE_WIDTH
    if width and w >= TILE_WIDTH:
        raise TileError(f"a partial tile has 1 to 255 hashes, not {w}")
    entries = kind == "entries"
    tile = Tile(0 if entries else int(kind), n, w, entries)
    if tile.path != path:
        raise TileError(f"not a canonical tile path: {path!r} (expected {tile.path!r})")
    return tile


def tile_for_size(level: int, n: int, size: int, entries: bool = False) -> Tile | None:
    """Tile ``n`` of ``level`` as the tree of ``size`` has it (None if it has none)."""
    have = size >> (TILE_HEIGHT * level)  # hashes at level 8L
    width = min(TILE_WIDTH, have - n * TILE_WIDTH)
    if width <= 0:
        return None
    return Tile(level, n, width, entries)


def tiles_for_size(size: int) -> list[Tile]:
    """Every hash tile of the tree of ``size``: full ones, then the partial one, per level."""
    out: list[Tile] = []
    level = 0
    while size >> (TILE_HEIGHT * level):
        have = size >> (TILE_HEIGHT * level)
        out.extend(Tile(level, n) for n in range(have // TILE_WIDTH))
        if have % TILE_WIDTH:
            out.append(Tile(level, have // TILE_WIDTH, have % TILE_WIDTH))
        level += 1
    return out


def split_hashes(data: bytes, tile: Tile) -> list[bytes]:
    if len(data) != HASH_SIZE * tile.width:
        raise TileError(f"{tile.path} has {len(data)} bytes, not {HASH_SIZE * tile.width}")
    return [data[i : i + HASH_SIZE] for i in range(0, len(data), HASH_SIZE)]


def subtree_root(hashes: Sequence[bytes]) -> bytes:
    """The root over a power-of-two number of hashes (a complete subtree)."""
    level = list(hashes)
    while len(level) > 1:
        level = [node_hash(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


# -- entry bundles ---------------------------------------------------------------------------


def encode_bundle(entries: Sequence[bytes]) -> bytes:
    """An entry bundle: each entry prefixed by its length (big-endian uint16)."""
    parts = []
    for e in entries:
        if len(e) > MAX_ENTRY:
            raise TileError(f"an entry of {len(e)} bytes does not fit an entry bundle")
        parts.append(len(e).to_bytes(2, "big") + e)
    return b"".join(parts)


def iter_bundle(data: bytes) -> Iterator[bytes]:
    pos = 0
    while pos < len(data):
        if pos + 2 > len(data):
            raise TileError("an entry bundle ends inside a length prefix")
        n = int.from_bytes(data[pos : pos + 2], "big")
        if pos + 2 + n > len(data):
            raise TileError("an entry bundle ends inside an entry")
        yield data[pos + 2 : pos + 2 + n]
        pos += 2 + n


def parse_bundle(data: bytes, tile: Tile) -> list[bytes]:
    """The entries of ``tile``'s bundle: exactly ``tile.width`` of them."""
    out = list(iter_bundle(data))
    if len(out) != tile.width:
        raise TileError(f"{tile.path} holds {len(out)} entries, not {tile.width}")
    return out


# -- reading stored hashes from tiles --------------------------------------------------------


class TileHashReader:
    """A :class:`tlog.merkle.HashReader` over the tiles of the tree of ``size`` with root
    ``root``: every tile it uses is authenticated — a full tile by hashing into its parent
    tile, the partial tiles (the right edge) by recomputing ``root`` from them.
    ``fetch(tile)`` returns a tile's bytes."""

    def __init__(self, size: int, root: bytes, fetch: Callable[[Tile], bytes]) -> None:
        self.size = size
        self.root = root
        self.fetch = fetch
        self._tiles: dict[Tile, list[bytes]] = {}
        self._authed: set[Tile] = set()
        self._edge_checked = False

    def _get(self, tile: Tile) -> list[bytes]:
        got = self._tiles.get(tile)
        if got is None:
            got = split_hashes(self.fetch(tile), tile)
            self._tiles[tile] = got
        return got

    def _locate(self, level: int, k: int) -> tuple[Tile, bytes]:
        """The tile holding node ``(level, k)``'s hashes, and the node (unauthenticated)."""
        t_level, sub = divmod(level, TILE_HEIGHT)
        first = k << sub
        tile = tile_for_size(t_level, first // TILE_WIDTH, self.size)
        off = first % TILE_WIDTH
        if tile is None or off + (1 << sub) > tile.width:
            raise TileError(f"node ({level}, {k}) is not in the tree of size {self.size}")
        return tile, subtree_root(self._get(tile)[off : off + (1 << sub)])

    def _node_from(self, level: int, k: int) -> bytes:
        """Node ``(level, k)``, its tile authenticated."""
        tile, node = self._locate(level, k)
        self._authenticate(tile)
        return node

    def _check_edge(self) -> None:
        """The partial tiles (the right edge: each node of the tree's range is in one)
        recompute the root."""
        if self._edge_checked:
            return
        edge = [self._locate(level, k) for level, k in range_nodes(0, self.size)]
        if not edge or fold([node for _, node in edge]) != self.root:
            raise ProofError(f"the partial tiles of size {self.size} do not hash to its root")
        self._authed.update(tile for tile, _ in edge)
        self._edge_checked = True

    def _authenticate(self, tile: Tile) -> None:
        chain: list[Tile] = []
        t = tile
        while t not in self._authed:
            if not t.full:
                self._check_edge()
                break
            chain.append(t)
            parent = tile_for_size(t.level + 1, t.n // TILE_WIDTH, self.size)
            if parent is None:
                raise TileError(f"{t.path} has no parent in the tree of size {self.size}")
            if self._get(parent)[t.n % TILE_WIDTH] != subtree_root(self._get(t)):
                raise ProofError(f"{t.path} does not hash to its entry in {parent.path}")
            t = parent
        self._authed.update(chain)

    def read_hashes(self, indexes: Sequence[int]) -> list[bytes]:
        return [self._node_from(*split_stored_hash_index(i)) for i in indexes]

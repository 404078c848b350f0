"""Tawla legal-turn generation rate on a fixed sample of positions (`make bench`).

The sample: every position reached in random-bot matches with fixed seeds (plain dice, no
cube), plus a few hand-picked heavy ones (doubles with many checkers free to move, bar
entry, bear-off). Prints turn generations per second of CPU time (process time, so other
load on a shared machine skews it less), overall and for doubles / non-doubles.
"""

from __future__ import annotations

import random
import time

from games.tawla import Board, absolute_board, initial_points, legal_turns, relative_board


def _board(mine: dict[int, int], theirs: dict[int, int]) -> Board:
    """A mover-relative board from {point: count} maps (0 = off, 25 = bar)."""
    b = [0] * 26
    for p, n in mine.items():
        b[p] += n
    for p, n in theirs.items():
        b[p] -= n
    return tuple(b)


HEAVY: list[tuple[Board, tuple[int, int]]] = [
    # spread-out checkers, double 1s: the widest double search of the sample
    ((0, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), (1, 1)),
    ((0, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), (2, 2)),
    # the start position with 3-3 and with 6-5
    (relative_board(initial_points(), [0, 0], [0, 0], 0), (3, 3)),
    (relative_board(initial_points(), [0, 0], [0, 0], 0), (6, 5)),
    # two on the bar against a four-point board (the mover's points 19, 20, 22, 23 closed)
    (_board({3: 3, 4: 3, 5: 3, 6: 4, 25: 2}, {19: 2, 20: 2, 22: 2, 23: 2}), (3, 3)),
    (_board({3: 3, 4: 3, 5: 3, 6: 4, 25: 2}, {19: 2, 20: 2, 22: 2, 23: 2}), (4, 1)),
    # bear-off with gaps
    (_board({1: 3, 2: 0, 3: 2, 5: 4, 6: 1, 0: 5}, {20: 2}), (6, 4)),
    (_board({1: 3, 2: 0, 3: 2, 5: 4, 6: 1, 0: 5}, {20: 2}), (2, 2)),
]


def sample(n_games: int = 40, seed: int = 7) -> list[tuple[Board, tuple[int, int]]]:
    """Positions with dice from random games (both seats, mover-relative boards)."""
    rng = random.Random(seed)
    out: list[tuple[Board, tuple[int, int]]] = list(HEAVY)
    for _ in range(n_games):
        points, bar, off = initial_points(), [0, 0], [0, 0]
        seat = rng.randrange(2)
        while True:
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            board = relative_board(points, bar, off, seat)
            out.append((board, dice))
            turns = legal_turns(board, dice)
            if turns:
                end = rng.choice(sorted(turns))
                points, bar, off = absolute_board(end, seat, off[1 - seat])
                if off[seat] == 15:
                    break
            seat = 1 - seat
    return out


def _rate(positions: list[tuple[Board, tuple[int, int]]], min_time: float = 0.5) -> float:
    if not positions:
        return 0.0
    n = 0
    start = time.process_time()
    while True:
        for board, dice in positions:
            legal_turns(board, dice)
        n += len(positions)
        elapsed = time.process_time() - start
        if elapsed >= min_time:
            return n / elapsed


def run() -> None:
    positions = sample()
    doubles = [p for p in positions if p[1][0] == p[1][1]]
    others = [p for p in positions if p[1][0] != p[1][1]]
    turns = sum(len(legal_turns(b, d)) for b, d in positions)
    print(
        f"tawla sample: {len(positions)} positions ({len(doubles)} doubles), "
        f"{turns / len(positions):.1f} distinct turns per position on average"
    )
    for name, part in (("all:", positions), ("doubles:", doubles), ("non-doubles:", others)):
        print(f"tawla legal-turn generations/s, {name:<13}{_rate(part):10.0f}")
    heavy = HEAVY[:2]
    print(f"tawla legal-turn generations/s, widest doubles: {_rate(heavy):7.0f}")

"""The replay's shortcut for tawla and mahbusa moves agrees with generating every turn.

``check_turn(board, dice, steps)`` (games/tawla.py, games/mahbusa.py) settles whether the
one turn played is a turn ``legal_turns`` lists, without generating them all. On random
positions (from random play, and for tawla from random placements too) and every roll, it
must accept exactly the listed turns, each with its listed steps and end position, and
refuse every other step list: another order of the same steps, another route to the same
end, fewer dice, a lower die alone, and random steps.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from itertools import permutations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import V1
from games import mahbusa, tawla
from games.base import Chance, variant
from games.tawla import BAR, Board, Turn, TurnTable
from tests.support import examples

DICE = [(a, b) for a in range(1, 7) for b in range(1, 7)]
Check = Callable[[Board, tuple[int, int], Turn], Board | None]


def two_step_plays(
    board: Sequence[int], end: Sequence[int], dice: Sequence[int]
) -> list[Turn] | None:
    """Every two-step play that could lead from ``board`` to ``end`` (a superset: each must
    still be played out); None when the change is not that of two steps. Found by comparing
    the boards: the reference the move check's ``_plays_of_steps`` is held to.

    The mover's checkers per index (0 off, 1-24 the points, 25 the bar) that left make the
    sources, those that arrived the sinks; an opposing checker on a point counts as none."""
    sources: list[int] = []
    sinks: list[int] = []
    for p, x, y in zip(range(26), board, end, strict=False):  # 26: tawla's part
        if x == y:
            continue
        if 1 <= p <= 24:
            x, y = (x if x > 0 else 0), (y if y > 0 else 0)
        c = y - x
        if c < 0:
            sources += [p] * -c
        elif c > 0:
            sinks += [p] * c
    out: set[Turn] = set()
    if len(sources) == 2 and len(sinks) == 2:
        (a, b), (x, y) = sources, sinks
        out.update((((a, x), (b, y)), ((b, y), (a, x)), ((a, y), (b, x)), ((b, x), (a, y))))
    elif len(sources) == 1 and len(sinks) == 1:
        a, x = sources[0], sinks[0]
        for d in set(dice):
            m = a - d
            if m >= 1:
                out.update((((a, m), (m, x)), ((m, x), (a, m))))
    else:
        return None
    return sorted(out)


def wrong_variants(
    board: Board, dice: tuple[int, int], listed: dict[Turn, Board], rng: random.Random
) -> set[Turn]:
    """Step lists near the listed ones: reorderings, other routes, prefixes, random."""
    out: set[Turn] = set()
    some = rng.sample(sorted(listed.items()), min(8, len(listed)))
    for steps, end in some:
        out.update(permutations(steps))
        out.update(steps[:k] for k in range(1, len(steps)))
        out.update(two_step_plays(board, end, dice) or [])
        out.add(tuple((f, max(0, t - 1)) for f, t in steps))
    for _ in range(12):
        n = rng.randint(1, 4)
        out.add(tuple((f, rng.randint(0, f - 1)) for f in (rng.randint(1, BAR) for _ in range(n))))
    return out


def agree(
    board: Board,
    dice: tuple[int, int],
    generate: Any,
    check: Check,
    can_move: Any,
    rng: random.Random,
) -> None:
    listed = {steps: end for end, steps in generate(board, dice).items()}
    assert can_move(board, dice) == bool(listed)
    for steps, end in rng.sample(sorted(listed.items()), min(40, len(listed))):
        assert check(board, dice, steps) == end, (board, dice, steps)
    for steps in wrong_variants(board, dice, listed, rng):
        assert check(board, dice, steps) == listed.get(steps), (board, dice, steps)
    table = TurnTable(board, dice, generate, check, can_move(board, dice))
    assert dict(table) == listed  # all of them, generated when asked


def positions(game: str, seed: int, turns: int) -> list[Board]:
    """Boards of the side on roll met in a random match, one per roll."""
    rng = random.Random(seed)
    cls = variant({"tawla": tawla.TawlaEngine, "mahbusa": mahbusa.MahbusaEngine}[game], V1)
    eng = cls(
        cls.parse_ruleset({"match_length": 0, "cube": False}),
        Chance(hashlib.sha256(f"turns-{seed}".encode()).digest()),
    )
    seen: list[Board] = []
    while len(seen) < turns and eng.outcome is None:
        seat = eng.turn
        assert seat is not None
        if eng.phase == tawla.MOVE:
            seen.append(eng._board(seat))
        eng.apply(seat, rng.choice(eng.bot_actions(seat)))
    return seen


def random_tawla_board(rng: random.Random, home_only: bool) -> Board:
    """Any placement of both sides' checkers (the mover's bar and off included)."""
    b = [0] * 26
    spots = list(range(0, 7)) if home_only else list(range(0, 26))
    for _ in range(15):
        b[rng.choice(spots)] += 1
    free = [p for p in range(1, 25) if b[p] == 0]
    for _ in range(rng.randint(0, 15)):  # the rest of the opponent's is on its bar or off
        p = rng.choice(free)
        b[p] -= 1
    return tuple(b)


@settings(max_examples=examples(25))
@given(st.integers(0, 2**32 - 1), st.sampled_from(["tawla", "mahbusa"]))
def test_the_shortcut_agrees_with_every_legal_turn_in_play(seed: int, game: str) -> None:
    mod: Any = tawla if game == "tawla" else mahbusa
    rng = random.Random(seed)
    boards = positions(game, seed, 60)
    for board in rng.sample(boards, min(6, len(boards))):
        for dice in rng.sample(DICE, 4):
            agree(board, dice, mod.legal_turns, mod.check_turn, mod.can_move, rng)


@pytest.mark.parametrize("game", ["tawla", "mahbusa"])
@settings(max_examples=examples(60))
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_the_shortcut_agrees_on_random_placements(game: str, seed: int, home_only: bool) -> None:
    mod: Any = tawla if game == "tawla" else mahbusa
    placed = random_tawla_board if game == "tawla" else random_mahbusa_board  # (below)
    rng = random.Random(seed)
    board = placed(rng, home_only)
    for dice in rng.sample(DICE, 8):
        agree(board, dice, mod.legal_turns, mod.check_turn, mod.can_move, rng)


def test_known_blocked_and_bear_off_rolls() -> None:
    """Hand-picked corners: one die only (the higher must be played), bearing off with a
    higher die from the highest point, and a double that plays fewer than four."""
    rng = random.Random(1)
    # the mover: one checker on 24; the opponent blocks 18 and 20 (6 and 4 from 24)
    b = [0] * 26
    b[24], b[0] = 1, 14
    b[18] = b[20] = -2
    agree(tuple(b), (6, 4), tawla.legal_turns, tawla.check_turn, tawla.can_move, rng)
    agree(tuple(b), (6, 5), tawla.legal_turns, tawla.check_turn, tawla.can_move, rng)
    # bearing off: checkers on 2 and 3 only, dice 6-5
    b = [0] * 26
    b[0], b[2], b[3] = 13, 1, 1
    agree(tuple(b), (6, 5), tawla.legal_turns, tawla.check_turn, tawla.can_move, rng)
    assert tawla.check_turn(tuple(b), (6, 5), ((3, 0), (2, 0))) is not None
    assert tawla.check_turn(tuple(b), (6, 5), ((2, 0), (3, 0))) is None
    # a double that plays two steps only: 2-2 from the bar, with 21 open and 19 closed
    b = [0] * 26
    b[25], b[13] = 1, 14
    b[19] = -2
    b[11] = b[9] = -2
    agree(tuple(b), (2, 2), tawla.legal_turns, tawla.check_turn, tawla.can_move, rng)


def random_mahbusa_board(rng: random.Random, home_only: bool) -> Board:
    """A mahbusa mover-relative board: free checkers, prisoners under single opposing
    checkers (either side's), some borne off."""
    b = [0] * mahbusa.SIZE
    spots = list(range(0, 7)) if home_only else list(range(0, 25))
    for _ in range(15):
        p = rng.choice(spots)
        b[p] += 1
    for _ in range(rng.randint(0, 15)):
        p = rng.randint(1, 24)
        if b[p] <= 0:
            b[p] -= 1
    for p in range(1, 25):  # a prisoner under a lone checker, now and then
        if rng.random() < 0.15 and b[p] == 1:
            b[mahbusa.PR + p] = -1
        elif rng.random() < 0.15 and b[p] == -1:
            b[mahbusa.PR + p] = 1
    return tuple(b)


@settings(max_examples=examples(60))
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_one_step_check_agrees_with_the_step_lists(seed: int, home_only: bool) -> None:
    """``_step_ok`` (what ``check_turn`` plays a step with) is exactly membership in
    ``_single_steps``, for every step, die and from-point bound, on random boards and on
    boards met in play."""
    rng = random.Random(seed)
    tboards = [random_tawla_board(rng, home_only), *rng.sample(positions("tawla", seed, 40), 2)]
    for board in tboards:
        b = list(board)
        outside = tawla._outside(b)
        for d in range(1, 7):
            for max_from in (BAR, *rng.sample(range(1, 25), 3)):
                listed = set(tawla._single_steps(b, d, outside, max_from))
                for f in range(26):
                    for t in range(26):
                        assert tawla._step_ok(b, f, t, d, outside, max_from) == (
                            (f, t) in listed
                        ), (board, f, t, d, max_from)
    mboards = [random_mahbusa_board(rng, home_only), *rng.sample(positions("mahbusa", seed, 40), 2)]
    for board in mboards:
        for d in range(1, 7):
            for max_from in (24, *rng.sample(range(1, 25), 3)):
                listed = set(mahbusa._single_steps(board, d, max_from))
                for f in range(26):
                    for t in range(26):
                        assert mahbusa._step_ok(board, f, t, d, max_from) == ((f, t) in listed), (
                            board,
                            f,
                            t,
                            d,
                            max_from,
                        )


@settings(max_examples=examples(60))
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_plays_from_the_steps_are_those_from_the_boards(seed: int, home_only: bool) -> None:
    """check_turn takes the plays that could reach a two-step turn's end from the steps
    (``_plays_of_steps``); they are the plays ``two_step_plays`` finds by comparing the
    boards, for every listed two-step turn of random placements and positions in play."""
    rng = random.Random(seed)
    boards = [
        random_tawla_board(rng, home_only),
        *rng.sample(positions("tawla", seed, 40), 2),
        *rng.sample(positions("mahbusa", seed, 40), 2),  # mahbusa's check uses them too
    ]
    for board in boards:
        game: Any = mahbusa if len(board) > 26 else tawla
        for dice in DICE:
            if dice[0] == dice[1]:
                continue
            hi, lo = max(dice), min(dice)
            for end, steps in game.legal_turns(board, dice).items():
                if len(steps) == 2:
                    plays = tawla._plays_of_steps(steps, (hi, lo))
                    assert sorted(set(plays)) == two_step_plays(board, end, (hi, lo))


@settings(max_examples=examples(30))
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_the_engines_outside_count_is_the_plain_one(seed: int, home_only: bool) -> None:
    """The engine counts the checkers outside home from its six home points
    (``_outside_of_15``: all 15 of the mover's are on the board, the bar or off); the plain
    count over the bar and points 7-24 gives the same on placements and boards in play."""
    rng = random.Random(seed)
    boards = [random_tawla_board(rng, home_only), *positions("tawla", seed, 30)]
    for board in boards:
        assert tawla._outside_of_15(board) == tawla._outside(board)


@settings(max_examples=examples(40))
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_two_steps_unrolled_are_played_as_the_loop_plays_them(seed: int, home_only: bool) -> None:
    """``_play_two`` (check_turn's two-step play) is ``_play_ordered`` for two steps: the
    same end or refusal, for legal, reordered and random steps with every pair of dice."""
    rng = random.Random(seed)
    # and a board with one checker left outside home: a first step that brings it in lets
    # the second bear off
    last = list(random_tawla_board(rng, True))
    last[0 if last[0] else next(p for p in range(1, 7) if last[p] > 0)] -= 1
    last[rng.randint(7, 12)] += 1
    boards = [random_tawla_board(rng, home_only), tuple(last)]
    for board in (*boards, *rng.sample(positions("tawla", seed, 30), 2)):
        outside = tawla._outside(board)
        cands: set[Turn] = set()
        for dice in DICE:
            for steps in tawla.legal_turns(board, dice).values():
                if len(steps) == 2:
                    cands.update((steps, steps[::-1]))
        cands.update(
            tuple((f, rng.randint(0, f - 1)) for f in (rng.randint(1, BAR) for _ in range(2)))
            for _ in range(40)
        )
        for steps in cands:
            for d1, d2 in DICE:
                assert tawla._play_two(board, steps, d1, d2, outside) == tawla._play_ordered(
                    board, steps, (d1, d2), False, outside
                ), (board, steps, d1, d2)

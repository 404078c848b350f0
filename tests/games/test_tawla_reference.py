"""Tawla legal turns cross-checked against OpenSpiel's backgammon (``pip install open_spiel``).

Skipped when ``pyspiel`` is not installed. OpenSpiel cannot load an arbitrary position from
Python, so the positions are the ones its own random games reach; at each turn both
engines' legal turns are compared as sets of end positions. OpenSpiel plays a double as two
half-turns of two checker moves each and applies the maximum-usage rule per half, so its
composed turns are filtered to those using the most dice before comparing.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from games.tawla import Board, initial_points, legal_turns, relative_board

pyspiel = pytest.importorskip("pyspiel")

pytestmark = pytest.mark.reference


def decode(state: Any) -> tuple[list[int], list[int], list[int], list[int]]:
    """(points, bar, off, dice) in this engine's terms from OpenSpiel's observation tensor.

    OpenSpiel's player X (0) has its 24-point at index 0 and moves toward index 23; player O
    (1) the mirror way. Both map to our seat 0 index 23 - i; X is seat 0, O is seat 1.
    """
    t = state.observation_tensor(0)

    def counts(base: int) -> list[int]:
        out = []
        for i in range(24):
            a = t[base + 4 * i : base + 4 * i + 4]
            # one-hot for 1, 2, 3; the fourth slot holds count - 3 above three
            out.append(1 if a[0] else 2 if a[1] else 3 if a[2] else 3 + int(a[3]) if a[3] else 0)
        return out

    x, o = counts(0), counts(96)
    points = [0] * 24
    for i in range(24):
        points[23 - i] = x[i] - o[i]
    return (
        points,
        [int(t[192]), int(t[195])],
        [int(t[193]), int(t[196])],
        [int(t[198]), int(t[199])],
    )


def their_turns(state: Any, seat: int) -> set[Board]:
    """OpenSpiel's full turns from ``state`` as end positions (mover-relative)."""
    used_by_end: dict[Board, int] = {}

    def record(s: Any, used: int) -> None:
        points, bar, off, _ = decode(s)
        end = relative_board(points, bar, off, seat)
        used_by_end[end] = max(used_by_end.get(end, 0), used)

    for a in state.legal_actions():
        used = sum(m.pos >= 0 for m in state.spiel_move_to_checker_moves(seat, a))
        c = state.clone()
        c.apply_action(a)
        if not c.is_chance_node() and not c.is_terminal() and c.current_player() == seat:
            for a2 in c.legal_actions():  # the second half of a double
                used2 = sum(m.pos >= 0 for m in c.spiel_move_to_checker_moves(seat, a2))
                c2 = c.clone()
                c2.apply_action(a2)
                record(c2, used + used2)
        else:
            record(c, used)
    best = max(used_by_end.values(), default=0)
    return {end for end, used in used_by_end.items() if used == best and best > 0}


def test_decoding_matches_the_start_position() -> None:
    state = pyspiel.load_game("backgammon").new_initial_state()
    points, bar, off, _ = decode(state)
    assert points == initial_points() and bar == [0, 0] and off == [0, 0]


def test_legal_turns_agree_with_openspiel() -> None:
    game = pyspiel.load_game("backgammon")
    rng = random.Random(20261202)
    checked = doubles = on_bar = bearing_off = passes = 0
    for _ in range(8):
        state = game.new_initial_state()
        second_half = False
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
                second_half = False
                continue
            seat = state.current_player()
            if not second_half:
                points, bar, off, dice = decode(state)
                board = relative_board(points, bar, off, seat)
                mine = set(legal_turns(board, dice))
                theirs = their_turns(state, seat)
                assert mine == theirs, (points, bar, off, dice, seat)
                checked += 1
                doubles += dice[0] == dice[1]
                on_bar += board[25] > 0
                bearing_off += all(board[p] <= 0 for p in range(7, 26)) and board[0] < 15
                passes += not mine
            state.apply_action(rng.choice(state.legal_actions()))
            second_half = (
                not state.is_chance_node()
                and not state.is_terminal()
                and state.current_player() == seat
            )
    # the sample covers the tricky rules
    assert checked > 500 and doubles > 50 and on_bar > 20 and bearing_off > 20 and passes > 0

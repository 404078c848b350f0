"""Mahbusa (المحبوسة): the prison game on tawla's board, dice, cube and match machinery.

The rules as played here and every choice the sources leave open are in
``docs/games/mahbusa.md``. In short: all 15 checkers of each seat start on its own
24-point; both seats move toward their own 1-point as in tawla; nothing is ever hit and
there is no bar: a checker that lands on a *lone* opposing checker imprisons it, and the
prisoner cannot move until every checker on top of it has left; a point with two or more
opposing checkers, or with one opposing checker holding a prisoner of yours, is closed.
Bear-off as in tawla, once all 15 (prisoners included) are in the home board. A seat that
bears off all 15 wins a single game, or a *mars* (gammon, double) when the other has
borne off none; imprisoning the other seat's *mother* checker (its last on its own
24-point) wins a mars, and both mothers imprisoned is a drawn game.

Chance labels as tawla's (fairness-v1.md §5): ``g{g}/opening/{a}`` and ``g{g}/roll/{t}``.
Actions as tawla's: ``roll``, ``double``, ``take``, ``drop``, ``move {"steps": [[from, to],
…]}`` (0 is off; there is no bar), ``resign {"points": 1|2}``, ``accept``, ``reject``.

The turn generator works on a mover-relative board: a tuple of 50 ints, index 0 the mover's
borne-off count, 1–24 the top of each point in the mover's numbering (positive: the
mover's checkers, negative: the opponent's), 25 unused (no bar), and 25 + p the prisoner
under point p (+1: one of the mover's, −1: one of the opponent's, 0: none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from .base import JSON
from .errors import IllegalActionError
from .tawla import CHECKERS, OFF, Board, TawlaEngine, Turn, TurnTable, _plays_of_steps, listed_end
from .tawla import _play_ordered as tawla_play_ordered

PR = 25  # b[PR + p]: the prisoner under point p
#: each seat's own 24-point as an index of the view's ``points`` (seat 0's numbering)
MOTHER = (23, 0)
SIZE = 50


def _outside(b: Sequence[int]) -> int:
    """The mover's checkers that keep it from bearing off: those outside its home board,
    and every prisoner of its, wherever it lies (a prisoner is not free to be borne off)."""
    return sum([x for x in b[7:25] if x > 0]) + list(b[PR + 1 : PR + 25]).count(1)


def _is_open(b: Sequence[int], t: int) -> bool:
    """May the mover land on point ``t``: empty, its own, or one lone opposing checker."""
    return b[t] >= 0 or (b[t] == -1 and b[PR + t] == 0)


def _single_steps(b: Sequence[int], d: int, max_from: int = 24) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    home: bool | None = None  # all 15 home: worked out once a step would bear off
    for p in range(min(max_from, 24), 0, -1):
        if b[p] <= 0:
            continue
        t = p - d
        if t > 0:
            if b[t] >= 0 or (b[t] == -1 and b[PR + t] == 0):  # _is_open(b, t)
                out.append((p, t))
            continue
        if home is None:
            home = _outside(b) == 0
        if home and (t == 0 or not any(b[q] > 0 or b[PR + q] == 1 for q in range(p + 1, 7))):
            out.append((p, OFF))
    return out


def _step_ok(b: Sequence[int], f: int, t: int, d: int, max_from: int = 24) -> bool:
    """Whether ``(f, t) in _single_steps(b, d, max_from)``, without listing them
    (tests/games/test_turn_check.py holds the two together on random boards)."""
    if not 1 <= f <= max_from or f > 24 or b[f] <= 0:
        return False
    if f > d:
        return t == f - d and (b[t] >= 0 or (b[t] == -1 and b[PR + t] == 0))
    return (
        t == OFF
        and _outside(b) == 0
        and (f == d or not any(b[q] > 0 or b[PR + q] == 1 for q in range(f + 1, 7)))
    )


def _do(b: list[int], f: int, t: int) -> tuple[bool, bool]:
    """One step on ``b`` in place; (freed a prisoner at ``f``, imprisoned one at ``t``)."""
    b[f] -= 1
    freed = b[f] == 0 and b[PR + f] == -1
    if freed:
        b[f], b[PR + f] = -1, 0
    pinned = False
    if t == OFF:
        b[OFF] += 1
    elif b[t] == -1:
        b[t], b[PR + t] = 1, -1
        pinned = True
    else:
        b[t] += 1
    return freed, pinned


def _undo(b: list[int], f: int, t: int, info: tuple[bool, bool]) -> None:
    freed, pinned = info
    if t == OFF:
        b[OFF] -= 1
    elif pinned:
        b[t], b[PR + t] = -1, 0
    else:
        b[t] -= 1
    if freed:
        b[f], b[PR + f] = 0, -1
    b[f] += 1


def legal_turns(board: Sequence[int], dice: Sequence[int]) -> dict[Board, Turn]:
    """Every distinct legal turn for the mover: end position → canonical steps.

    As in tawla: play as many dice as possible (four for a double), and when only one of
    two different dice can be played, the higher one if it can. Turns that end in the same
    position are one turn, listed with the greatest of their step lists (for a double the
    steps come highest from-point first).
    """
    b = list(board)
    d1, d2 = int(dice[0]), int(dice[1])
    found: dict[Board, Turn] = {}
    best = [0]
    high_used: dict[Board, bool] = {}
    steps: list[tuple[int, int]] = []

    def record(used_high: bool) -> None:
        n = len(steps)
        if n > best[0]:
            best[0] = n
            found.clear()
            high_used.clear()
        if n == best[0] and n > 0:
            key = tuple(b)
            turn = tuple(steps)
            old = found.get(key)
            if old is None or turn > old:
                found[key] = turn
            high_used[key] = high_used.get(key, False) or used_high

    if d1 == d2:

        def rec_double(depth: int, max_from: int) -> None:
            moves = _single_steps(b, d1, max_from) if depth < 4 else []
            if not moves:
                record(True)
                return
            for f, t in moves:
                info = _do(b, f, t)
                steps.append((f, t))
                rec_double(depth + 1, f)
                steps.pop()
                _undo(b, f, t, info)

        rec_double(0, 24)
        return found

    hi = max(d1, d2)
    for first, second in ((d1, d2), (d2, d1)):
        for f1, t1 in _single_steps(b, first):
            info1 = _do(b, f1, t1)
            steps.append((f1, t1))
            seconds = _single_steps(b, second)
            if not seconds:
                record(first == hi)
            for f2, t2 in seconds:
                info2 = _do(b, f2, t2)
                steps.append((f2, t2))
                record(True)
                steps.pop()
                _undo(b, f2, t2, info2)
            steps.pop()
            _undo(b, f1, t1, info1)
    if best[0] == 1 and any(high_used.values()):
        return {k: v for k, v in found.items() if high_used[k]}
    return found


def _step_ok_from(b: Sequence[int], f: int, t: int, d: int, outside: int, max_from: int) -> bool:
    """``_step_ok`` as tawla's ``_play_ordered`` asks it (mahbusa keeps no ``outside``)."""
    return _step_ok(b, f, t, d, max_from)


def _play_ordered(
    board: Sequence[int], steps: Turn, dice: Sequence[int], chained: bool
) -> Board | None:
    """tawla's ``_play_ordered`` with mahbusa's steps."""
    return tawla_play_ordered(board, steps, dice, chained, 0, _step_ok_from, _do)


def check_turn(board: Sequence[int], dice: Sequence[int], steps: Turn) -> Board | None:
    """The end position if ``steps`` is a turn ``legal_turns(board, dice)`` lists (with its
    canonical steps), else None: as tawla's ``check_turn``, with mahbusa's rule that the
    greatest step list of either die order is the one listed."""
    d1, d2 = int(dice[0]), int(dice[1])
    if d1 == d2:
        if len(steps) != 4:
            return listed_end(legal_turns(board, dice), steps)
        return _play_ordered(board, steps, (d1,) * 4, chained=True)
    if len(steps) != 2:
        return listed_end(legal_turns(board, dice), steps)
    end = _play_ordered(board, steps, (d1, d2), chained=False) or _play_ordered(
        board, steps, (d2, d1), chained=False
    )
    if end is None:
        return None
    plays = _plays_of_steps(steps, (d1, d2))
    if steps not in plays:
        return listed_end(legal_turns(board, dice), steps)
    for p in plays:  # is a greater play reaching ``end`` (in either order) the listed one?
        if p > steps and (
            _play_ordered(board, p, (d1, d2), chained=False) == end
            or _play_ordered(board, p, (d2, d1), chained=False) == end
        ):
            return None
    return end


def can_move(board: Sequence[int], dice: Sequence[int]) -> bool:
    """Whether ``legal_turns(board, dice)`` lists any turn (some die plays one step)."""
    return any(_single_steps(board, int(d)) for d in set(dice))


def relative_board(
    points: Sequence[int], prisoners: Sequence[int], off: Sequence[int], seat: int
) -> Board:
    """The mover-relative board of ``seat`` (``prisoners`` in seat 0's numbering, +1 for a
    prisoner of seat 0's)."""
    if seat == 0:
        return (off[0], *points, 0, *prisoners)
    return (off[1], *[-n for n in reversed(points)], 0, *[-x for x in reversed(prisoners)])


def absolute_board(board: Board, seat: int) -> tuple[list[int], list[int]]:
    """``(points, prisoners)`` in seat 0's numbering from ``seat``'s relative board."""
    if seat == 0:
        return list(board[1:25]), list(board[PR + 1 : PR + 25])
    return ([-board[24 - i] for i in range(24)], [-board[PR + 24 - i] for i in range(24)])


def play_steps(board: Sequence[int], dice: Sequence[int], steps: Turn) -> Board:
    """Play ``steps`` one by one, each with some unused die (IllegalActionError naming the
    first impossible step); the maximum-usage rule is not checked here."""
    b = list(board)
    left = [int(dice[0]), int(dice[1])] * (2 if dice[0] == dice[1] else 1)
    for f, t in steps:
        where = f"step [{f}, {t}]"
        if not 1 <= f <= 24 or t >= f:
            raise IllegalActionError(f"{where}: checkers move from a point toward your 1-point")
        if b[f] <= 0:
            why = (
                "your checker there is imprisoned"
                if b[PR + f] == 1
                else "you have no free checker there"
            )
            raise IllegalActionError(f"{where}: {why}")
        legal = {s for d in set(left) for s in _single_steps(b, d)}
        if (f, t) not in legal:
            if t != OFF and not _is_open(b, t):
                raise IllegalActionError(
                    f"{where}: point {t} is closed (two or more opposing checkers, or one "
                    "holding a prisoner of yours)"
                )
            raise IllegalActionError(f"{where}: no unused die plays it (dice left {left})")
        die = (
            f - t
            if t != OFF and f - t in left
            else (f if f in left else min(x for x in left if x > f))
        )
        left.remove(die)
        _do(b, f, t)
    return tuple(b)


def pip_counts(points: Sequence[int], prisoners: Sequence[int]) -> list[int]:
    p0 = sum(n * (i + 1) for i, n in enumerate(points) if n > 0)
    p0 += sum(i + 1 for i, x in enumerate(prisoners) if x == 1)
    p1 = sum(-n * (24 - i) for i, n in enumerate(points) if n < 0)
    p1 += sum(24 - i for i, x in enumerate(prisoners) if x == -1)
    return [p0, p1]


class MahbusaEngine(TawlaEngine):
    game: ClassVar[str] = "mahbusa"
    RESIGN_POINTS: ClassVar[tuple[int, ...]] = (1, 2)
    START: ClassVar[tuple[tuple[int, int], ...]] = ((24, CHECKERS),)  # all 15 on the 24-point

    def _setup_board(self) -> None:
        super()._setup_board()
        self.prisoners: list[int] = [0] * 24

    def _board(self, seat: int) -> Board:
        return relative_board(self.points, self.prisoners, self.off, seat)

    def _turn_table(self, board: Board, dice: Sequence[int]) -> TurnTable:
        return TurnTable(board, dice, legal_turns, check_turn, can_move(board, dice))

    def _set_board(self, end: Board, seat: int) -> None:
        self.points, self.prisoners = absolute_board(end, seat)
        self.off[seat] = end[OFF]

    def _play_steps(self, board: Board, dice: Sequence[int], steps: Turn) -> Board:
        return play_steps(board, dice, steps)

    def _result_level(self, loser: int) -> int:
        """1 single, 2 mars (the loser has borne off none); mahbusa has no backgammon."""
        return 1 if self.off[loser] > 0 else 2

    def _mother_held(self, seat: int) -> bool:
        """``seat``'s last checker on its own 24-point is imprisoned there."""
        return self.prisoners[MOTHER[seat]] == (1 if seat == 0 else -1)

    def _at_home_point(self, seat: int) -> bool:
        """``seat`` still has a checker (free or not) on its own 24-point."""
        i = MOTHER[seat]
        mine = self.points[i] > 0 if seat == 0 else self.points[i] < 0
        return mine or self._mother_held(seat)

    def _game_result(self, seat: int) -> tuple[str, int] | None:
        """The mother checker: with the other seat's mother imprisoned, ``seat`` wins a mars
        at once — unless ``seat`` still has a checker on its own 24-point, in which case play
        goes on until it has left (then ``seat`` wins) or its own mother is imprisoned too
        (then the game is drawn). Else tawla's bear-off."""
        other = 1 - seat
        if self._mother_held(other):
            if self._mother_held(seat):
                return "both mothers", 0
            if not self._at_home_point(seat):
                return "mother", 2
        return super()._game_result(seat)

    def set_position(
        self,
        points: Sequence[int],
        bar: Sequence[int],
        off: Sequence[int],
        on_roll: int,
        prisoners: Sequence[int] | None = None,
    ) -> None:
        """As tawla's, plus ``prisoners`` (seat 0's numbering: +1 a prisoner of seat 0's
        under seat 1's checkers, −1 the other way round); ``bar`` must be ``[0, 0]``."""
        prisoners = list(prisoners or [0] * 24)
        if (
            len(prisoners) != 24
            or any(bar)
            or any(
                x not in (-1, 0, 1) or (x == 1 and points[i] >= 0) or (x == -1 and points[i] <= 0)
                for i, x in enumerate(prisoners)
            )
        ):
            raise ValueError("a prisoner lies under at least one opposing checker; no bar")
        mine = [
            sum(n for n in points if n > 0) + prisoners.count(1),
            -sum(n for n in points if n < 0) + prisoners.count(-1),
        ]
        if any(mine[s] + off[s] != CHECKERS for s in (0, 1)):
            raise ValueError("each seat needs 15 checkers on the board or off")
        self.points, self.bar, self.off = list(points), [0, 0], list(off)
        self.prisoners = prisoners
        self._reset_turn(on_roll)

    def _view(self, seat: int | None) -> dict[str, JSON]:
        out: dict[str, Any] = super()._view(seat)
        out["prisoners"] = list(self.prisoners)
        out["pips"] = pip_counts(self.points, self.prisoners)
        return out


ENGINE = MahbusaEngine

"""Tawla: international backgammon, with the doubling cube, match play and money play.

The rules as played here, every action's format and the choices the spec left open are in
``docs/games/tawla.md``. In short:

- Seats 0 and 1; each seat numbers the points from its own side (its 1-point is the other
  seat's 24-point); 25 is the bar and 0 is off in a move's steps.
- Chance: ``g{g}/opening/{a}`` (drawn when game g begins) and ``g{g}/roll/{t}`` (each roll
  action, t = 1, 2, …); with ``live_entropy`` (v1) a roll may carry ``entropy`` and the
  label becomes ``label|entropy``.
- Actions: ``roll`` (optional ``entropy``), ``double``, ``take``, ``drop``,
  ``move {"steps": [[from, to], …]}``, ``resign {"points": 1|2|3}``, ``accept``, ``reject``.
- Fresh rolls (qahwa-fair/2, ruleset ``fresh_rolls``, the default; fairness-v2.md §6): the
  roller sends ``{"type": "roll", "value": hex}`` (its next roll-chain value), then the
  opponent ``{"type": "roll_value", "value": hex}``; an opening takes seat 0's value, then
  seat 1's, each as ``roll_value``. The dice are drawn at ``fresh_label(L, v_R, v_O)`` when
  the second value is accepted. ``turn`` is the seat that owes the next step.

The legal-turn generator works on a *mover-relative board*: a tuple of 26 ints where index 0
is the mover's borne-off count, indices 1–24 the points in the mover's numbering (positive:
the mover's checkers, negative: the opponent's) and index 25 the mover's bar. The
opponent's bar is implied (15 minus its checkers on the board and off).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import neg
from typing import Any, ClassVar

from fairness import CURRENT, FairProtocol, check_roll_value, entropy_label, fresh_label, parse_hex
from fairness.errors import LabelError, SeedError
from fairness.protocol import ROLL_CHAIN_LENGTH

from .base import JSON, Action, Engine, Outcome, only_keys
from .errors import IllegalActionError, MalformedActionError, RulesetError

CHECKERS = 15
BAR = 25
OFF = 0

Board = tuple[int, ...]
Step = tuple[int, int]
Turn = tuple[Step, ...]

START_POINTS: tuple[tuple[int, int], ...] = ((24, 2), (13, 5), (8, 3), (6, 5))
CUBE_CAPS = tuple(2**k for k in range(1, 11))  # 2 … 1024
RESIGN_LEVELS = {1: "single", 2: "gammon", 3: "backgammon"}

# phases
ROLL = "roll"  # the seat on turn may double, resign or roll
MOVE = "move"  # the seat on turn has rolled and must send its move
DOUBLED = "double"  # the opponent must take or drop
RESIGNING = "resign"  # the opponent must accept or reject a resignation offer
OPENING = "opening"  # fresh rolls: the opening waits for seat 0's, then seat 1's value
ROLL_VALUE = "roll_value"  # fresh rolls: the roller has rolled; the opponent owes its value
OVER = "over"
#: the end reason of a fresh-roll match whose seat has used all its roll-chain values
CHAIN_EXHAUSTED = "chain_exhausted"


# -- legal turn generation -------------------------------------------------------------------


def _highest_home(b: Sequence[int]) -> int:
    """The mover's highest occupied home point (0: none)."""
    for q in range(6, 0, -1):
        if b[q] > 0:
            return q
    return 0


def _single_steps(b: Sequence[int], d: int, outside: int, max_from: int) -> list[Step]:
    """The one-die steps with die ``d`` from board ``b`` (from-points at most ``max_from``).

    ``outside`` is the number of the mover's checkers outside its home board (bar included).
    """
    if b[BAR] > 0:
        t = BAR - d
        if max_from >= BAR and b[t] >= -1:
            return [(BAR, t)]
        return []
    top = 24 if max_from > 24 else max_from
    if outside:
        # no bearing off: every step stays on the board (from-points above d)
        return [(p, p - d) for p in range(top, d, -1) if b[p] > 0 and b[p - d] >= -1]
    # every checker is home (points 1-6) or off
    out: list[Step] = []
    highest = _highest_home(b)
    for p in range(top if top < highest else highest, 0, -1):
        if b[p] <= 0:
            continue
        t = p - d
        if t > 0:
            if b[t] >= -1:
                out.append((p, t))
        elif t == 0 or p == highest:
            out.append((p, OFF))
    return out


def _step_ok(b: Sequence[int], f: int, t: int, d: int, outside: int, max_from: int) -> bool:
    """Whether ``(f, t) in _single_steps(b, d, outside, max_from)``, without listing them
    (tests/games/test_turn_check.py holds the two together on random boards)."""
    if b[BAR] > 0:
        return f == BAR and max_from >= BAR and t == BAR - d and b[t] >= -1
    if not 1 <= f <= max_from or f > 24 or b[f] <= 0:
        return False
    if outside:
        return f > d and t == f - d and b[t] >= -1
    # every checker is home: f must not be above the highest occupied home point
    highest = _highest_home(b)
    if f > highest:
        return False
    if f > d:
        return t == f - d and b[t] >= -1
    return t == OFF and (f == d or f == highest)


def _do(b: list[int], f: int, t: int) -> bool:
    """Play one step on ``b`` in place; True if it hit a blot."""
    b[f] -= 1
    if t == OFF:
        b[OFF] += 1
        return False
    if b[t] == -1:
        b[t] = 1
        return True
    b[t] += 1
    return False


def _undo(b: list[int], f: int, t: int, hit: bool) -> None:
    if t == OFF:
        b[OFF] -= 1
    elif hit:
        b[t] = -1
    else:
        b[t] -= 1
    b[f] += 1


def _outside(b: Sequence[int]) -> int:
    """The mover's checkers not yet in its home board (bar included)."""
    n = b[BAR]
    for p in range(7, 25):
        if b[p] > 0:
            n += b[p]
    return n


def _outside_of_15(b: Sequence[int]) -> int:
    """``_outside(b)`` for a board with all 15 of the mover's checkers (an engine's): those
    not off and not on points 1-6, from the six home points alone."""
    home = 0
    for x in b[1:7]:
        if x > 0:
            home += x
    return CHECKERS - b[OFF] - home


def legal_turns(board: Sequence[int], dice: Sequence[int]) -> dict[Board, Turn]:
    """Every distinct legal turn for the mover: end position → canonical steps.

    ``board`` is mover-relative (see the module docstring), ``dice`` two values 1–6. Turns
    that end in the same position are one turn, listed with its *canonical* steps: for a
    double, the steps by from-point, highest first; otherwise a play that uses the higher
    die first if one reaches that position, else one that uses the lower die first, and
    among those the lexicographically greatest step list. An empty dict means the roll
    cannot be played at all.
    """
    b = list(board)
    d1, d2 = int(dice[0]), int(dice[1])
    outside = _outside(b)
    found: dict[Board, Turn] = {}
    if d1 == d2:
        best = [0]
        steps: list[Step] = []

        def rec(depth: int, max_from: int, outside: int) -> None:
            moves = _single_steps(b, d1, outside, max_from) if depth < 4 else []
            if not moves:
                if depth > best[0]:
                    best[0] = depth
                    found.clear()
                if depth == best[0] and depth > 0:
                    found[tuple(b)] = tuple(steps)
                return
            for f, t in moves:
                hit = _do(b, f, t)
                steps.append((f, t))
                rec(depth + 1, f, outside - 1 if f >= 7 and t <= 6 else outside)
                steps.pop()
                _undo(b, f, t, hit)

        rec(0, BAR, outside)
        return found

    hi, lo = max(d1, d2), min(d1, d2)
    level = 0  # 4: both dice, 3: the higher alone, 2: the lower alone
    high_first: set[Board] = set()  # end positions reached playing the higher die first
    for first, second, alone in ((hi, lo, 3), (lo, hi, 2)):
        for f1, t1 in _single_steps(b, first, outside, BAR):
            hit1 = _do(b, f1, t1)
            out1 = outside - 1 if f1 >= 7 and t1 <= 6 else outside
            seconds = _single_steps(b, second, out1, BAR)
            if seconds:
                if level < 4:
                    level = 4
                    found.clear()
                for f2, t2 in seconds:
                    hit2 = _do(b, f2, t2)
                    key = tuple(b)
                    turn = ((f1, t1), (f2, t2))
                    old = found.get(key)
                    if alone == 3:
                        high_first.add(key)
                        if old is None or turn > old:
                            found[key] = turn
                    elif key not in high_first and (old is None or turn > old):
                        found[key] = turn
                    _undo(b, f2, t2, hit2)
            elif level <= alone:
                if level < alone:
                    level = alone
                    found.clear()
                key = tuple(b)
                turn1: Turn = ((f1, t1),)
                old = found.get(key)
                if old is None or turn1 > old:
                    found[key] = turn1
            _undo(b, f1, t1, hit1)
    return found


# -- checking the one turn played ------------------------------------------------------------
#
# A replay needs to know only whether the turn a seat sent is one that ``legal_turns`` lists,
# not all of them. ``check_turn`` settles that from the played turn: it plays the steps the
# way the generator does, and then looks only at the plays that can end in the same position
# (the mover's checkers that left and arrived fix them: two single moves in either order, or
# one checker moving twice through either intermediate point) to find the one the generator
# would list for that position. Turns that use fewer dice than the roll has (a blocked board)
# are checked against the full generation, as is anything the shortcut cannot place.
# tests/games/test_turn_check.py holds it to ``legal_turns`` on random positions.


def _plays_of_steps(steps: Turn, dice: Sequence[int]) -> tuple[Turn, ...]:
    """Every two-step play that could lead to the ``end`` that playing the two ``steps`` on
    ``board`` reaches (a superset, unsorted, perhaps repeated: each must still be played
    out), from the steps alone:
    each step takes one of the mover's checkers from its from-index to its to-index (a hit
    blot counts as none of the mover's), so the sources and sinks are the steps' own, less
    a point one checker passed through. tests/games/test_turn_check.py holds the two together."""
    (a, x), (b, y) = steps
    if x == b or y == a:  # one checker moving twice: from its first source to its last sink
        if x == b:
            x = y
        else:
            a = b
        out: list[Turn] = []
        for d in dice if dice[0] != dice[1] else dice[:1]:
            m = a - d
            if m >= 1:
                out += (((a, m), (m, x)), ((m, x), (a, m)))
        return tuple(out)
    return ((a, x), (b, y)), ((b, y), (a, x)), ((a, y), (b, x)), ((b, x), (a, y))


def _play_ordered(
    board: Sequence[int],
    steps: Turn,
    dice: Sequence[int],
    chained: bool,
    outside: int,
    step_ok: Callable[[list[int], int, int, int, int, int], bool] = _step_ok,
    do: Callable[[list[int], int, int], object] = _do,
) -> Board | None:
    """Play ``steps`` as the generator does, step i with die ``dice[i]`` (``chained``: each
    from-point at most the previous one, as for a double); None if it never plays them.
    ``outside``: ``_outside(board)``. ``step_ok`` and ``do``: the game's (mahbusa's)."""
    for (f, t), d in zip(steps, dice, strict=True):
        # what every step _step_ok allows has: a step to a point moves exactly its die, one
        # off the board a die at least its point (settled here before copying the board)
        if (f - t != d) if t else (f > d):
            return None
    b = list(board)
    max_from = BAR
    for (f, t), d in zip(steps, dice, strict=True):
        if not step_ok(b, f, t, d, outside, max_from):
            return None
        do(b, f, t)
        if f >= 7 and t <= 6:
            outside -= 1
        if chained:
            max_from = f
    return tuple(b)


def _play_two(board: Sequence[int], steps: Turn, d1: int, d2: int, outside: int) -> Board | None:
    """``_play_ordered(board, steps, (d1, d2), False, outside)`` for two steps, unrolled
    (the move check's usual case; most of the other plays it is asked about move a checker
    by neither die in that order, settled before the board is copied)."""
    (f, t), (g, u) = steps
    if ((f - t != d1) if t else (f > d1)) or ((g - u != d2) if u else (g > d2)):
        return None
    b = list(board)
    if not _step_ok(b, f, t, d1, outside, BAR):
        return None
    _do(b, f, t)
    if f >= 7 and t <= 6:
        outside -= 1
    if not _step_ok(b, g, u, d2, outside, BAR):
        return None
    _do(b, g, u)
    return tuple(b)


def listed_end(turns: Mapping[Board, Turn], steps: Turn) -> Board | None:
    """The end position ``turns`` (end → canonical steps) lists ``steps`` for, or None."""
    for end, listed in turns.items():
        if listed == steps:
            return end
    return None


def check_turn(
    board: Sequence[int], dice: Sequence[int], steps: Turn, outside: int | None = None
) -> Board | None:
    """The end position if ``steps`` is a turn ``legal_turns(board, dice)`` lists (with its
    canonical steps), else None; without generating every turn where the roll is played in
    full. ``outside``: ``_outside(board)`` when the caller has it."""
    d1, d2 = int(dice[0]), int(dice[1])
    if outside is None:
        outside = _outside(board)
    if d1 == d2:
        if len(steps) != 4:
            return listed_end(legal_turns(board, dice), steps)
        # four steps are the most there are; for a double one step list reaches an end
        # position (the from-points it moves are fixed by it), so a play is its canonical one
        return _play_ordered(board, steps, (d1,) * 4, True, outside)
    if len(steps) != 2:
        return listed_end(legal_turns(board, dice), steps)
    hi, lo = (d1, d2) if d1 > d2 else (d2, d1)
    end = _play_two(board, steps, hi, lo, outside)
    high_first = end is not None
    if end is None:
        end = _play_two(board, steps, lo, hi, outside)
        if end is None:
            return None
    (a, x), (b, y) = steps
    if high_first and y != a:
        # Played higher die first, and not onto the point the first step left: no greater
        # play reaches ``end`` higher die first, so this one is listed. (The other plays
        # through the same points either move a checker by the other die, which would make
        # the dice equal, or, for one checker moving twice or a bear-off, start from a lower
        # point, or bear off with a die above a point that is not the highest. The step back
        # onto ``a`` is the exception: moving that checker from ``b`` through ``b - hi`` can
        # be greater.) tests/games/test_turn_check.py holds this to ``legal_turns``.
        return end
    plays = _plays_of_steps(steps, (hi, lo))
    if steps not in plays:
        return listed_end(legal_turns(board, dice), steps)
    # The generator lists the greatest play reaching ``end`` with the higher die first, or,
    # if none does, the greatest with the lower die first: ``steps`` is that one unless
    # another play reaching ``end`` is greater and played higher die first (or either way,
    # when ``steps`` is lower die first), or is played higher die first while ``steps`` is not.
    for p in plays:
        if p == steps:
            continue
        if p > steps:
            if _play_two(board, p, hi, lo, outside) == end:
                return None
            if not high_first and _play_two(board, p, lo, hi, outside) == end:
                return None
        elif not high_first and _play_two(board, p, hi, lo, outside) == end:
            return None
    return end


def can_move(board: Sequence[int], dice: Sequence[int], outside: int | None = None) -> bool:
    """Whether ``legal_turns(board, dice)`` lists any turn (some die plays one step).
    ``outside``: ``_outside(board)`` when the caller has it."""
    b = board
    d1, d2 = int(dice[0]), int(dice[1])
    if b[BAR] > 0:  # entering is the only step there is
        return b[BAR - d1] >= -1 or b[BAR - d2] >= -1
    if outside is None:
        outside = _outside(b)
    if outside:  # no bearing off: a step to an open point
        for p in range(24, 1, -1):
            if b[p] > 0 and ((p - d1 > 0 and b[p - d1] >= -1) or (p - d2 > 0 and b[p - d2] >= -1)):
                return True
        return False
    return any(_single_steps(b, d, 0, BAR) for d in {d1, d2})


class TurnTable(Mapping[Turn, Board]):
    """The turns of one roll as ``legal_turns`` lists them (steps → end position), generated
    only when all of them are asked for; looking up the one turn played checks it alone.

    ``check(board, dice, steps)`` checks one turn; with ``extra`` (a tuple) it is called
    ``check(board, dice, steps, *extra)`` (what the engine already knew of the board)."""

    __slots__ = ("_all", "_board", "_check", "_dice", "_extra", "_generate", "_playable")

    def __init__(
        self,
        board: Board,
        dice: Sequence[int],
        generate: Any,
        check: Any,
        playable: bool,
        extra: tuple[Any, ...] = (),
    ) -> None:
        self._board, self._dice = board, (int(dice[0]), int(dice[1]))
        self._generate, self._check = generate, check
        self._playable = playable
        self._extra = extra
        self._all: dict[Turn, Board] | None = None

    def _full(self) -> dict[Turn, Board]:
        if self._all is None:
            found = self._generate(self._board, self._dice)
            self._all = {steps: end for end, steps in found.items()}
        return self._all

    def __getitem__(self, steps: Turn) -> Board:
        end: Board | None = self.get(steps)
        if end is None:
            raise KeyError(steps)
        return end

    def get(self, steps: Turn, default: Any = None) -> Any:  # Mapping.get, without a KeyError
        if self._all is not None:
            return self._all.get(steps, default)
        if not self._playable:
            return default
        end = self._check(self._board, self._dice, steps, *self._extra)
        return default if end is None else end

    def __iter__(self) -> Any:
        return iter(self._full())

    def __len__(self) -> int:
        return len(self._full())

    def __bool__(self) -> bool:
        return self._playable


def play_steps(board: Sequence[int], dice: Sequence[int], steps: Sequence[Step]) -> Board:
    """Play ``steps`` one by one, each with some unused die, checking each step alone.

    Raises IllegalActionError naming the first step that is impossible. This does *not*
    check the maximum-usage rule; it exists to explain why a move was refused and to let
    tests play positions by hand.
    """
    b = list(board)
    left = [int(dice[0]), int(dice[1])] * (2 if dice[0] == dice[1] else 1)
    for f, t in steps:
        where = f"step [{f}, {t}]"
        if f == OFF:
            raise IllegalActionError(f"{where}: a step cannot start from off (0)")
        if t == BAR:
            raise IllegalActionError(f"{where}: a step cannot end on the bar (25)")
        if t >= f:
            raise IllegalActionError(f"{where}: checkers move toward your 1-point")
        if f != BAR and b[BAR] > 0:
            raise IllegalActionError(f"{where}: you must enter your checkers from the bar first")
        if b[f] <= 0:
            what = "on the bar" if f == BAR else f"on your point {f}"
            raise IllegalActionError(f"{where}: you have no checker {what}")
        if t != OFF:
            die = f - t
            if die not in left:
                raise IllegalActionError(f"{where}: no unused die of {die} (dice left {left})")
            if b[t] <= -2:
                raise IllegalActionError(f"{where}: point {t} is closed (two or more opposing)")
        else:
            if _outside(b) > 0:
                raise IllegalActionError(
                    f"{where}: bearing off needs all 15 checkers in your home board"
                )
            if f in left:
                die = f
            else:
                higher = sorted(x for x in left if x > f)
                if not higher:
                    raise IllegalActionError(
                        f"{where}: no unused die of {f} or more (dice left {left})"
                    )
                if any(b[q] > 0 for q in range(f + 1, 7)):
                    raise IllegalActionError(
                        f"{where}: a die higher than the point bears off only from your "
                        "highest occupied point"
                    )
                die = higher[0]
        left.remove(die)
        _do(b, f, t)
    return tuple(b)


# -- board conversions -----------------------------------------------------------------------


def initial_points(start: Sequence[tuple[int, int]] = START_POINTS) -> list[int]:
    """The start position as the view's ``points`` (seat 0's numbering): ``start`` lists
    (point, checkers) in each seat's own numbering."""
    pts = [0] * 24
    for p, n in start:
        pts[p - 1] += n  # seat 0's point p
        pts[24 - p] -= n  # seat 1's point p is seat 0's point 25 - p
    return pts


def relative_board(
    points: Sequence[int], bar: Sequence[int], off: Sequence[int], seat: int
) -> Board:
    """The mover-relative board of ``seat`` from the view's ``points``/``bar``/``off``."""
    if seat == 0:
        return (off[0], *points, bar[0])
    return (off[1], *map(neg, reversed(points)), bar[1])


def absolute_board(board: Board, seat: int, opp_off: int) -> tuple[list[int], list[int], list[int]]:
    """``(points, bar, off)`` in the view's form from ``seat``'s mover-relative board."""
    on_board = board[1:25]
    # the board's sum is the mover's checkers on it (15 less off and bar) less the opponent's
    opp_on_board = CHECKERS - board[OFF] - board[BAR] - sum(on_board)
    opp_bar = CHECKERS - opp_off - opp_on_board
    if seat == 0:
        return list(on_board), [board[BAR], opp_bar], [board[OFF], opp_off]
    points = list(map(neg, reversed(on_board)))
    return points, [opp_bar, board[BAR]], [opp_off, board[OFF]]


def pip_counts(points: Sequence[int], bar: Sequence[int]) -> list[int]:
    """Pips each seat still has to travel (a checker on the bar counts 25)."""
    p0 = 25 * bar[0] + sum(n * (i + 1) for i, n in enumerate(points) if n > 0)
    p1 = 25 * bar[1] + sum(-n * (24 - i) for i, n in enumerate(points) if n < 0)
    return [p0, p1]


def _parse_steps(raw: Any) -> Turn:
    if not isinstance(raw, (list, tuple)):
        raise MalformedActionError("'steps' must be a list of [from, to] pairs")
    if not 1 <= len(raw) <= 4:
        raise MalformedActionError(f"'steps' must have 1 to 4 steps, got {len(raw)}")
    out: list[Step] = []
    for step in raw:
        # the usual case: a list of two ints in range (exactly what the checks below pass)
        if (type(step) is list or type(step) is tuple) and len(step) == 2:
            f, t = step
            if type(f) is int and type(t) is int and 0 <= f <= 25 and 0 <= t <= 25:
                out.append((f, t))
                continue
        if (
            not isinstance(step, (list, tuple))
            or len(step) != 2
            or any(isinstance(x, bool) or not isinstance(x, int) for x in step)
        ):
            raise MalformedActionError(f"each step must be a pair of integers, got {step!r}")
        f, t = step
        if not (0 <= f <= 25 and 0 <= t <= 25):
            raise MalformedActionError(
                f"step {list(step)}: points are 0 (off) to 25 (bar) in your own numbering"
            )
        out.append((f, t))
    return tuple(out)


# -- the engine ------------------------------------------------------------------------------


class TawlaEngine(Engine):
    game: ClassVar[str] = "tawla"
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {
        "match_length": 5,
        "cube": True,
        "cube_cap": 64,
        "crawford": True,
        "jacoby": False,
        "live_entropy": False,
    }
    RULESET_RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {"match_length": (0, 25)}
    RULESET_CHOICES: ClassVar[Mapping[str, tuple[Any, ...]]] = {"cube_cap": CUBE_CAPS}
    RULESET_V1_ONLY: ClassVar[tuple[str, ...]] = ("live_entropy",)
    RULESET_V2_EXTRA: ClassVar[Mapping[str, Any]] = {"fresh_rolls": True}
    SEATS: ClassVar[int | None] = 2
    ACTION_TYPES: ClassVar[tuple[str, ...]] = (
        "roll",
        "roll_value",
        "double",
        "take",
        "drop",
        "move",
        "resign",
        "accept",
        "reject",
    )
    #: the start position: (point, checkers) in each seat's own numbering
    START: ClassVar[tuple[tuple[int, int], ...]] = START_POINTS
    #: the resignation levels a seat may offer (``resign {"points": n}``)
    RESIGN_POINTS: ClassVar[tuple[int, ...]] = (1, 2, 3)
    #: the values on a seat's roll chain (fairness-v2.md §6: c[1] … c[65536])
    ROLL_CHAIN_VALUES: ClassVar[int] = ROLL_CHAIN_LENGTH

    @classmethod
    def parse_ruleset(
        cls, raw: Mapping[str, Any] | None, *, protocol: str | FairProtocol = CURRENT
    ) -> dict[str, Any]:
        rs = super().parse_ruleset(raw, protocol=protocol)
        if rs["jacoby"] and rs["match_length"] != 0:
            raise RulesetError("ruleset key 'jacoby' applies only to money play (match_length 0)")
        return rs

    def _start_match(self) -> None:
        #: fresh rolls (fairness-v2.md §6): v2 with ruleset ``fresh_rolls``
        self.fresh: bool = self.proto.signed and bool(self.ruleset.get("fresh_rolls", False))
        #: per seat: the last value it sent (its tip before any), and how many it sent
        self._chain_prev: list[bytes] = []
        self.values_used = [0, 0]
        #: the roll waiting for values: {"label", "owes", "values"} (None: none)
        self.fresh_pending: dict[str, Any] | None = None
        self.opening_attempt = 0
        if self.fresh:
            if self.ctx is None or len(self.ctx.roll_tips) != 2:
                raise ValueError(
                    "fresh rolls need the match context: the match id and both "
                    "seats' roll-chain tips from the lock"
                )
            self._chain_prev = self.ctx.roll_chain_tips(2)
        self.match_length: int = self.ruleset["match_length"]
        self.score = [0, 0]
        self.games: list[dict[str, JSON]] = []
        self.game_number = 0
        self._crawford_used = False
        self.phase = ROLL
        self.on_roll = 0  # the seat whose turn it is in the game
        self.dice: list[int] | None = None
        self.opening: dict[str, JSON] = {}
        self._turns: Mapping[Turn, Board] = {}
        self._begin_game()

    # -- fresh rolls -------------------------------------------------------------------------
    def _owe(self, label: str, owes: list[int], values: list[bytes]) -> None:
        """Wait for fresh-roll values: ``owes`` the seats still to send one, in order."""
        self.fresh_pending = {"label": label, "owes": owes, "values": values}
        if any(self.values_used[seat] >= self.ROLL_CHAIN_VALUES for seat in owes):
            self._exhausted()

    def _exhausted(self) -> None:
        """A seat would need a value past the end of its chain: no winner (§6)."""
        self._over()
        self.outcome = Outcome(CHAIN_EXHAUSTED, (), tuple(self.score), self.forfeit_detail())

    def _take_value(self, seat: int, action: Action) -> bytes:
        """The seat's next roll-chain value from ``action["value"]``, checked against the
        seat's previous value (its tip before any), then counted as the seat's latest (a
        refused value changes nothing)."""
        if "value" not in action:
            raise MalformedActionError(
                "a fresh roll carries 'value': your next roll-chain value (64 hex)"
            )
        try:
            raw = parse_hex(action["value"], 32, "'value'")
        except SeedError as exc:
            raise MalformedActionError(str(exc)) from None
        assert self.ctx is not None
        try:
            if self.values_used[seat] >= self.ROLL_CHAIN_VALUES:
                raise SeedError(f"seat {seat} has sent every value of its roll chain")
            check_roll_value(self.ctx.match_id, seat, self._chain_prev[seat], raw)
        except SeedError:
            err = IllegalActionError(
                f"'value' is not seat {seat}'s next value on its roll chain (value "
                f"{self.values_used[seat] + 1}: it must hash once to "
                f"{self._chain_prev[seat].hex()})"
            )
            err.kind = "roll_chain"
            raise err from None
        self._chain_prev[seat] = raw
        self.values_used[seat] += 1
        return raw

    def _roll_value(self, seat: int, action: Action) -> None:
        only_keys(action, "value")
        if not self.fresh:
            raise IllegalActionError('this ruleset has no fresh rolls: send {"type": "roll"}')
        if self.fresh_pending is None or self.phase not in (OPENING, ROLL_VALUE):
            raise IllegalActionError(
                'no roll value is owed now: the roller sends {"type": "roll", "value"} first'
            )
        raw = self._take_value(seat, action)
        pending = self.fresh_pending
        pending["owes"] = pending["owes"][1:]
        pending["values"] = [*pending["values"], raw]
        if pending["owes"]:
            return
        first, second = pending["values"]
        label = fresh_label(pending["label"], first, second)
        self.fresh_pending = None
        dice = self.chance.dice(label, 2)
        if self.phase == OPENING:
            self._opened(dice)
        else:
            self.rolls += 1
            self._start_move(dice)

    # -- game flow -------------------------------------------------------------------------
    def _begin_game(self) -> None:
        g = self.game_number
        self._setup_board()
        self.bar = [0, 0]
        self.off = [0, 0]
        self.cube_value = 1
        self.cube_owner: int | None = None
        self.pending: dict[str, JSON] | None = None
        self.resign_rejected = False
        self.rolls = 0  # rolls after the opening in this game
        self.last_turn: dict[str, JSON] | None = None
        self.crawford_game = False
        if (
            self.ruleset["crawford"]
            and self.match_length > 1
            and not self._crawford_used
            and max(self.score) == self.match_length - 1
        ):
            self.crawford_game = True
            self._crawford_used = True
        if self.fresh:
            self.opening = {}
            self.dice = None
            self._turns = {}
            self.opening_attempt = 0
            self._await_opening()
            return
        attempt = 0
        while True:
            dice = self.chance.dice(f"g{g}/opening/{attempt}", 2)
            if dice[0] != dice[1]:
                break
            attempt += 1
        self._open_with(dice, attempt)

    def _await_opening(self) -> None:
        """Fresh rolls: opening attempt ``opening_attempt`` waits for seat 0's value, then
        seat 1's."""
        self.phase = OPENING
        self._owe(f"g{self.game_number}/opening/{self.opening_attempt}", [0, 1], [])

    def _opened(self, dice: list[int]) -> None:
        if dice[0] == dice[1]:
            self.opening_attempt += 1
            self._await_opening()
            return
        self._open_with(dice, self.opening_attempt)

    def _open_with(self, dice: list[int], attempt: int) -> None:
        """The opening roll (unequal ``dice`` at ``attempt``): the higher die moves first."""
        self.opening = {"dice": list(dice), "attempts": attempt + 1}
        self.on_roll = 0 if dice[0] > dice[1] else 1
        self._start_move(list(dice))

    # -- the board (hooks that a variant on the same machinery replaces) -------------------
    def _setup_board(self) -> None:
        self.points = initial_points(self.START)

    def _board(self, seat: int) -> Board:
        return relative_board(self.points, self.bar, self.off, seat)

    def _turn_table(self, board: Board, dice: Sequence[int]) -> TurnTable:
        outside = _outside_of_15(board)  # (once for both)
        return TurnTable(
            board, dice, legal_turns, check_turn, can_move(board, dice, outside), (outside,)
        )

    def _set_board(self, end: Board, seat: int) -> None:
        self.points, self.bar, self.off = absolute_board(end, seat, self.off[1 - seat])

    def _play_steps(self, board: Board, dice: Sequence[int], steps: Turn) -> Board:
        return play_steps(board, dice, steps)

    def set_position(
        self, points: Sequence[int], bar: Sequence[int], off: Sequence[int], on_roll: int
    ) -> None:
        """Set up a position with ``on_roll`` to act before rolling (a test or puzzle
        position, as python-chess's ``Board.set_fen``): ``points`` in seat 0's numbering
        (positive: seat 0's checkers), ``bar`` and ``off`` per seat. The match, cube and
        score stay as they are; the position is not a replayable transcript."""
        points, bar, off = list(points), list(bar), list(off)
        if len(points) != 24 or len(bar) != 2 or len(off) != 2 or on_roll not in (0, 1):
            raise ValueError("a position is 24 points, bar and off per seat, and a seat")
        mine = [sum(n for n in points if n > 0), -sum(n for n in points if n < 0)]
        if any(mine[s] + bar[s] + off[s] != CHECKERS for s in (0, 1)):
            raise ValueError("each seat needs 15 checkers on the board, the bar or off")
        self.points, self.bar, self.off = points, bar, off
        self._reset_turn(on_roll)

    def _reset_turn(self, on_roll: int) -> None:
        self.on_roll = on_roll
        self.phase = ROLL
        self.dice = None
        self._turns = {}
        self.pending = None
        self.resign_rejected = False
        if self.fresh:
            # the turn's roll will need a value from each seat
            self.fresh_pending = None
            if any(self.values_used[s] >= self.ROLL_CHAIN_VALUES for s in (0, 1)):
                self._exhausted()

    def _start_move(self, dice: list[int]) -> None:
        """The seat on roll has ``dice``: list its turns, or pass if there are none."""
        seat = self.on_roll
        turns = self._turn_table(self._board(seat), dice)
        if not turns:
            self.last_turn = {"seat": seat, "dice": list(dice), "steps": [], "passed": True}
            self._next_turn()
            return
        self.dice = list(dice)
        self._turns = turns
        self.phase = MOVE

    def _next_turn(self) -> None:
        self._reset_turn(1 - self.on_roll)

    def _can_double(self, seat: int) -> str | None:
        """Why ``seat`` may not double now (None: it may)."""
        if not self.ruleset["cube"]:
            return "this ruleset plays without the doubling cube"
        if self.phase != ROLL:
            return "you may double only before rolling"
        if self.crawford_game:
            return "no doubling in the Crawford game"
        if self.cube_owner is not None and self.cube_owner != seat:
            return "your opponent owns the cube"
        if self.cube_value * 2 > self.ruleset["cube_cap"]:
            return f"the cube is at its cap ({self.ruleset['cube_cap']})"
        return None

    def _result_level(self, loser: int) -> int:
        """1 single, 2 gammon, 3 backgammon for the loser of a played-out game."""
        if self.off[loser] > 0:
            return 1
        if self.bar[loser] > 0:
            return 3
        # the winner's home board: seat 0's points 1-6 are indices 0-5, seat 1's 18-23
        if loser == 1 and any(n < 0 for n in self.points[0:6]):
            return 3
        if loser == 0 and any(n > 0 for n in self.points[18:24]):
            return 3
        return 2

    def _value(self, level: int) -> int:
        """Points for a result of ``level`` with the current cube (Jacoby applied)."""
        if self.ruleset["jacoby"] and self.match_length == 0 and self.cube_value == 1:
            level = 1
        return level * self.cube_value

    def _end_game(self, winner: int | None, how: str, level: int, points: int) -> None:
        """Score a finished game; ``winner`` None is a drawn game (mahbusa: both mother
        checkers imprisoned), worth nothing."""
        if winner is not None:
            self.score[winner] += points
        self.games.append(
            {
                "game": self.game_number,
                "winner": winner,
                "how": how,
                "result": RESIGN_LEVELS[level] if winner is not None else "draw",
                "cube": self.cube_value,
                "points": points,
                "score": list(self.score),
                "crawford": self.crawford_game,
            }
        )
        if self.match_length == 0 or (
            winner is not None and self.score[winner] >= self.match_length
        ):
            self._over()
            winners = () if winner is None else (winner,)
            self.outcome = Outcome("finished", winners, tuple(self.score), self.forfeit_detail())
            return
        self.game_number += 1
        self._begin_game()

    # -- interface -------------------------------------------------------------------------
    def _turn(self) -> int | None:
        if self.phase in (OPENING, ROLL_VALUE):
            assert self.fresh_pending is not None
            return int(self.fresh_pending["owes"][0])
        if self.phase in (DOUBLED, RESIGNING):
            return 1 - self.on_roll
        return self.on_roll

    def _legal(self, seat: int) -> list[Action]:
        """With fresh rolls ``roll`` and ``roll_value`` are listed without their ``value``
        (the seat adds its next roll-chain value)."""
        if self.phase in (OPENING, ROLL_VALUE):
            return [{"type": "roll_value"}]
        if self.phase == ROLL:
            out: list[Action] = [{"type": "roll"}]
            if self._can_double(seat) is None:
                out.append({"type": "double"})
            if not self.resign_rejected:
                out.extend({"type": "resign", "points": p} for p in self.RESIGN_POINTS)
            return out
        if self.phase == MOVE:
            return [
                {"type": "move", "steps": [list(s) for s in steps]}
                for steps in sorted(self._turns, reverse=True)
            ]
        if self.phase == DOUBLED:
            return [{"type": "take"}, {"type": "drop"}]
        if self.phase == RESIGNING:
            return [{"type": "accept"}, {"type": "reject"}]
        return []

    def bot_actions(self, seat: int) -> list[Action]:
        """Random bots roll instead of doubling or resigning, so their games get played out.

        (A uniformly random bot would offer a resignation or a double most turns and end
        nearly every game within a few rolls.) Takes, drops and moves stay as listed.
        """
        if self.outcome is None and seat == self.turn and self.phase == ROLL:
            return [{"type": "roll"}]
        return self.legal_actions(seat)

    def _apply(self, seat: int, action: Action) -> None:
        # each action type's method is ``_<type>`` (looked up by name: a subclass may
        # override one)
        getattr(self, "_" + action["type"])(seat, action)

    def _need_phase(self, phase: str, what: str) -> None:
        if self.phase == phase:
            return
        now = {
            ROLL: "the seat on turn has not rolled yet",
            MOVE: "the dice are rolled and a move is due",
            DOUBLED: "a double is waiting for take or drop",
            RESIGNING: "a resignation offer is waiting for accept or reject",
            OPENING: "the opening roll waits for the seats' roll values",
            ROLL_VALUE: "the roll waits for the opponent's roll value",
        }.get(self.phase, "the game is over")
        raise IllegalActionError(f"cannot {what} now: {now}")

    def _roll(self, seat: int, action: Action) -> None:
        label = f"g{self.game_number}/roll/{self.rolls + 1}"
        if self.fresh:
            only_keys(action, "value")
            self._need_phase(ROLL, "roll")
            raw = self._take_value(seat, action)
            self.phase = ROLL_VALUE
            self._owe(label, [1 - seat], [raw])
            return
        if len(action) != 1:  # (only its type: the usual roll)
            only_keys(action, "entropy")
        if self.phase != ROLL:
            self._need_phase(ROLL, "roll")
        if "entropy" in action:
            if not self.ruleset.get("live_entropy", False):
                raise MalformedActionError(
                    'this ruleset has no live entropy: send {"type": "roll"}'
                )
            if not isinstance(action["entropy"], str):
                raise MalformedActionError("bad 'entropy': it must be a string")
            try:
                label = entropy_label(label, action["entropy"])
            except LabelError as exc:
                raise MalformedActionError(f"bad 'entropy': {exc}") from None
        dice = self.chance.dice(label, 2)
        self.rolls += 1
        self._start_move(dice)

    def _double(self, seat: int, action: Action) -> None:
        only_keys(action)
        self._need_phase(ROLL, "double")
        why = self._can_double(seat)
        if why is not None:
            raise IllegalActionError(f"cannot double: {why}")
        self.phase = DOUBLED
        self.pending = {"type": "double", "by": seat, "value": self.cube_value * 2}

    def _take(self, seat: int, action: Action) -> None:
        only_keys(action)
        self._need_phase(DOUBLED, "take")
        self.cube_value *= 2
        self.cube_owner = seat
        self.pending = None
        self.phase = ROLL

    def _drop(self, seat: int, action: Action) -> None:
        only_keys(action)
        self._need_phase(DOUBLED, "drop")
        self._end_game(self.on_roll, "drop", 1, self.cube_value)

    def _resign(self, seat: int, action: Action) -> None:
        only_keys(action, "points")
        level = action.get("points")
        # an int exactly (not bool, not 1.0, nothing unhashable) before the dict lookup
        if type(level) is not int or level not in self.RESIGN_POINTS:
            names = ", ".join(f"{p} ({RESIGN_LEVELS[p]})" for p in self.RESIGN_POINTS)
            raise MalformedActionError(f"'points' must be one of {names}")
        self._need_phase(ROLL, "offer a resignation")
        if self.resign_rejected:
            raise IllegalActionError(
                "your resignation was rejected this turn: roll before offering another"
            )
        self.phase = RESIGNING
        self.pending = {
            "type": "resign",
            "by": seat,
            "points": level,
            "value": self._value(level),
        }

    def _accept(self, seat: int, action: Action) -> None:
        only_keys(action)
        self._need_phase(RESIGNING, "accept")
        assert self.pending is not None
        level = int(self.pending["points"])
        self._end_game(seat, "resign", level, self._value(level))

    def _reject(self, seat: int, action: Action) -> None:
        only_keys(action)
        self._need_phase(RESIGNING, "reject")
        self.pending = None
        self.phase = ROLL
        self.resign_rejected = True

    def _move(self, seat: int, action: Action) -> None:
        if len(action) != 2 or "steps" not in action:  # (the usual move: type and steps)
            only_keys(action, "steps")
            if "steps" not in action:
                raise MalformedActionError("a move needs 'steps': [[from, to], …]")
        steps = _parse_steps(action["steps"])
        if self.phase != MOVE:
            self._need_phase(MOVE, "move")
        end = self._turns.get(steps)
        if end is None:
            raise IllegalActionError(self._why_not(seat, steps))
        self._set_board(end, seat)
        self.last_turn = {
            "seat": seat,
            "dice": list(self.dice or []),
            "steps": list(map(list, steps)),
            "passed": False,
        }
        result = self._game_result(seat)
        if result is not None:
            how, level = result
            if level == 0:
                self._end_game(None, how, 0, 0)
            else:
                self._end_game(seat, how, level, self._value(level))
            return
        self._next_turn()

    def _game_result(self, seat: int) -> tuple[str, int] | None:
        """How ``seat``'s move just ended the game: ``(how, level)`` with level 1-3 for a
        win by ``seat``, 0 for a drawn game; None: play on."""
        if self.off[seat] == CHECKERS:
            return "bear-off", self._result_level(1 - seat)
        return None

    def _why_not(self, seat: int, steps: Turn) -> str:
        """The reason a move is not one of the listed turns."""
        assert self.dice is not None
        dice = self.dice
        try:
            end = self._play_steps(self._board(seat), dice, steps)
        except IllegalActionError as exc:
            return f"not a legal turn for dice {dice}: {exc}"
        for listed, listed_end in self._turns.items():
            if listed_end == end:
                return (
                    f"that play ends in the same position as the listed turn "
                    f"{[list(s) for s in listed]}; send it exactly as listed"
                )
        most = max(len(s) for s in self._turns)
        if len(steps) < most:
            return f"not a legal turn for dice {dice}: you must play {most} dice"
        if len(steps) == 1 and dice[0] != dice[1]:
            return (
                f"not a legal turn for dice {dice}: when either die but not both can be "
                "played, the higher one must be"
            )
        return f"not a legal turn for dice {dice}"

    def _view(self, seat: int | None) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "points": list(self.points),
            "bar": list(self.bar),
            "off": list(self.off),
            "dice": list(self.dice) if self.dice is not None else None,
            "cube": {"value": self.cube_value, "owner": self.cube_owner},
            "score": list(self.score),
            "pips": pip_counts(self.points, self.bar),
            "match_length": self.match_length,
            "game_number": self.game_number,
            "crawford": self.crawford_game,
            "phase": self.phase,
            "on_roll": self.on_roll if self.outcome is None else None,
            "pending": dict(self.pending) if self.pending is not None else None,
            "may_double": self.outcome is None
            and self.phase == ROLL
            and self._can_double(self.on_roll) is None,
            "rolls": self.rolls,
            "opening": dict(self.opening),
            "last_turn": dict(self.last_turn) if self.last_turn is not None else None,
            "games": [dict(x) for x in self.games],
        }
        if self.proto.signed:
            pending = self.fresh_pending if self.outcome is None else None
            out["fresh_roll"] = (
                {"label": pending["label"], "owes": list(pending["owes"])}
                if pending is not None
                else None
            )
            out["values_used"] = list(self.values_used)
        return out

    def side_scores(self) -> tuple[int, ...]:
        return (self.score[0], self.score[1])

    # -- forfeits (v2) -----------------------------------------------------------------------
    def forfeit_scores(self, winning_sides: Sequence[int]) -> tuple[int, ...]:
        """The forfeiting seat loses the match: in match play its opponent's score becomes
        (at least) the match length; in money play its opponent wins the worst game the
        rules allow times the cube (tawla: a backgammon, 3 × the cube; mahbusa: a mars,
        2 × the cube)."""
        score = list(self.score)
        for w in winning_sides:
            if self.match_length == 0:
                score[w] += max(self.RESIGN_POINTS) * self.cube_value
            else:
                score[w] = max(score[w], self.match_length)
        return tuple(score)

    def forfeit_detail(self) -> dict[str, JSON]:
        """The result's extras, however the match ends."""
        return {"match_length": self.match_length, "games": [dict(x) for x in self.games]}

    @classmethod
    def no_reveal_scores(
        cls, ruleset: Mapping[str, Any], winning_sides: Sequence[int]
    ) -> tuple[int, ...]:
        """Before any play a forfeit loses the match as well (money play: the worst game
        with the cube at 1: 3 points in tawla, 2 in mahbusa)."""
        ml = int(ruleset["match_length"])
        worst = ml if ml else max(cls.RESIGN_POINTS)
        return tuple(worst if s in winning_sides else 0 for s in (0, 1))

    def _forfeit(self, reason: str, seats: Sequence[int]) -> None:
        super()._forfeit(reason, seats)
        if self.outcome is not None and seats:
            self.score = list(self.outcome.scores)
        self._over()

    def _over(self) -> None:
        """The match is over: no roll, move, offer or roll value waits any more."""
        self.phase = OVER
        self.fresh_pending = None
        self.dice = None
        self._turns = {}
        self.pending = None


ENGINE = TawlaEngine

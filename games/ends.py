"""Ends of a qahwa-fair/2 match that no play decides (fairness-v2.md §7).

Ends of a running match (``resigned``, ``timeout``, ``expired``) are
:meth:`games.base.Engine.end_match`. A ``no_reveal`` end comes before any engine exists: a
seat did not reveal its seed by ``reveal_by``, so there is no match key and nothing is ever
drawn. Its transcript holds the one event ``{"seq": 0, "type": "end", "reason":
"no_reveal", "seats": [...]}`` and its result is :func:`no_reveal_result`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .base import JSON, Action, Chance, Engine, Event, Outcome, check_seat
from .errors import IllegalActionError, MatchOverError

NO_REVEAL = "no_reveal"


def _check_seats(n_seats: int, seats: Any) -> tuple[int, ...]:
    if not isinstance(seats, (list, tuple)) or not seats:
        raise IllegalActionError("a no_reveal end names the seats that did not reveal")
    for s in seats:
        check_seat(s, n_seats)
    if list(seats) != sorted(set(seats)):
        raise IllegalActionError(
            f"a no_reveal end lists each seat once, in seat order, got {list(seats)}"
        )
    return tuple(seats)


def no_reveal_outcome(
    engine_cls: type[Engine], ruleset: Mapping[str, Any], forfeited_seats: Sequence[int]
) -> Outcome:
    """The :class:`Outcome` of a match ended ``no_reveal`` (see :func:`no_reveal_result`)."""
    sides = engine_cls.seat_sides(ruleset)
    seats = _check_seats(len(sides), forfeited_seats)
    lost = {sides[s] for s in seats}
    winners = tuple(s for s in range(len(sides)) if sides[s] not in lost)
    winning_sides = sorted({sides[s] for s in winners})
    return Outcome(
        NO_REVEAL, winners, engine_cls.no_reveal_scores(ruleset, winning_sides), {}, forfeited=seats
    )


def no_reveal_result(
    engine_cls: type[Engine], ruleset_parsed: Mapping[str, Any], forfeited_seats: Sequence[int]
) -> dict[str, JSON]:
    """The result of a match whose ``forfeited_seats`` did not reveal by ``reveal_by``.

    ``{"status": "finished", "reason": "no_reveal", "forfeited": [...], "winners": [...],
    "scores": [...]}``: the forfeiting seats' sides lose; every other side shares the win
    (no winner when every side forfeited); scores as the game scores a forfeit before any
    play (zero, except tawla and mahbusa: the match, or 3 points in money play).
    IllegalActionError / NotYourTurnError for an empty, unordered or unknown seat list.
    """
    return no_reveal_outcome(engine_cls, ruleset_parsed, forfeited_seats).to_json()


def no_reveal_event(forfeited_seats: Sequence[int]) -> Event:
    """The single transcript event of a ``no_reveal`` end."""
    return {"seq": 0, "type": "end", "reason": NO_REVEAL, "seats": list(forfeited_seats)}


class NoRevealMatch(Engine):
    """What a replay of a ``no_reveal`` transcript returns: a match that never started.

    It holds the game's ruleset and seats and the ``no_reveal`` outcome; it has no match key,
    drew nothing and accepts no action.
    """

    game: ClassVar[str] = NO_REVEAL
    RULESET_DEFAULTS: ClassVar[Mapping[str, Any]] = {}
    ACTION_TYPES: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self, engine_cls: type[Engine], ruleset: Mapping[str, Any], forfeited_seats: Any
    ) -> None:
        # no match key exists: the chance object is keyless and never drawn from
        super().__init__(ruleset, Chance(b"\x00" * 64))
        self.engine_cls = engine_cls
        self.n_seats = engine_cls.seat_count(self.ruleset)
        self._sides = engine_cls.seat_sides(self.ruleset)
        self.outcome = no_reveal_outcome(engine_cls, self.ruleset, forfeited_seats)

    @classmethod
    def seat_count(cls, ruleset: Mapping[str, Any]) -> int:
        return 0  # replaced by the game's own count in __init__

    def apply(self, seat: int, action: Action, sig: str | None = None) -> list[Event]:
        raise MatchOverError("the match has ended: it never started (no_reveal)")

    def replay_action(self, seat: int, action: Action) -> list[Event]:
        return self.apply(seat, action)

    def _apply(self, seat: int, action: Action) -> None:  # pragma: no cover - apply refuses
        raise MatchOverError("the match has ended")

    def end_match(
        self, reason: str, seats: int | Sequence[int] | None = None, sig: str | None = None
    ) -> list[Event]:
        raise MatchOverError("the match has ended: it never started (no_reveal)")

    def _view(self, seat: int | None) -> dict[str, JSON]:
        return {}

    def view(self, seat: int | None) -> dict[str, JSON]:
        out = super().view(seat)
        out["game"] = self.engine_cls.game
        return out

    def side_scores(self) -> tuple[int, ...]:
        assert self.outcome is not None
        return self.outcome.scores

"""What every proof is bound to (fairness-v3 §1): the match, the hand, the seat."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import SealedError
from .group import lp, u32be


@dataclass(frozen=True, slots=True)
class Context:
    match_id: str
    hand: int
    seat: int

    def __post_init__(self) -> None:
        if not isinstance(self.match_id, str) or not self.match_id:
            raise SealedError("context: match_id must be a non-empty string")
        for name in ("hand", "seat"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**32:
                raise SealedError(f"context: {name} must be an integer in 0..2^32-1")

    def encode(self) -> bytes:
        """ctx = lp(match_id) || u32be(hand) || u32be(seat)."""
        return lp(self.match_id.encode("utf-8")) + u32be(self.hand) + u32be(self.seat)

    def for_seat(self, seat: int) -> Context:
        return Context(self.match_id, self.hand, seat)

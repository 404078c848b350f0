"""The one error of the sealed deal: a refused input, with what was wrong in words."""

from __future__ import annotations


class SealedError(ValueError):
    """A malformed value or a proof that does not verify (nothing was changed)."""

"""HTTP routes: thin wrappers over :class:`service.matches.MatchService`; each answers with
:func:`json_response` (defined in :mod:`service.front`, the request layer)."""

from __future__ import annotations

from ..front import json_response

__all__ = ["json_response"]

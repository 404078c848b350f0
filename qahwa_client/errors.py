"""Errors the server answered: ``ApiError(status, code, message)``; 409 stale is its own.
The seat's own refusals (:class:`ClientError` and its kinds) are the conforming seat's,
:mod:`fairness.seat`."""

from __future__ import annotations

from typing import Any

import httpx

from fairness.seat import ClientError, FreshRollsRefused, NotOurMatch, TranscriptMismatch


class ApiError(Exception):
    """A 4xx/5xx answer: ``status``, the documented ``code`` and the server's ``message``."""

    def __init__(
        self, status: int, code: str, message: str, refusal: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        #: the server's signed refusal of a seat's request, as sent (checked by the seat)
        self.refusal = refusal


class StaleVersion(ApiError):
    """409 ``stale_version``: the match moved on since the view the action was chosen from."""


def raise_for(resp: httpx.Response) -> None:
    """Raise :class:`ApiError` (or :class:`StaleVersion`) unless the answer is 2xx."""
    if resp.status_code < 400:
        return
    code, message = "error", resp.text[:200]
    refusal = None
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = str(body["error"].get("code", code))
        message = str(body["error"].get("message", message))
        if isinstance(body.get("refusal"), dict):
            refusal = body["refusal"]
    cls = StaleVersion if code == "stale_version" else ApiError
    raise cls(resp.status_code, code, message, refusal)


__all__ = [
    "ApiError",
    "ClientError",
    "FreshRollsRefused",
    "NotOurMatch",
    "StaleVersion",
    "TranscriptMismatch",
    "raise_for",
]

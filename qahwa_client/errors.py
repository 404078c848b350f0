"""Errors the server answered: ``ApiError(status, code, message)``; 409 stale is its own."""

from __future__ import annotations

import httpx


class ApiError(Exception):
    """A 4xx/5xx answer: ``status``, the documented ``code`` and the server's ``message``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class StaleVersion(ApiError):
    """409 ``stale_version``: the match moved on since the view the action was chosen from."""


def raise_for(resp: httpx.Response) -> None:
    """Raise :class:`ApiError` (or :class:`StaleVersion`) unless the answer is 2xx."""
    if resp.status_code < 400:
        return
    code, message = "error", resp.text[:200]
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = str(body["error"].get("code", code))
        message = str(body["error"].get("message", message))
    cls = StaleVersion if code == "stale_version" else ApiError
    raise cls(resp.status_code, code, message)


class ClientError(Exception):
    """The client refused to go on: what the server sent fails a check of fairness-v2.md §3a
    (or the player asked for something a conforming client does not do)."""


class NotOurMatch(ClientError):
    """The lock (or the commit record) is not what this seat agreed to: the seat does not
    reveal, and the match is not its own (fairness-v2.md §3a.4)."""

    def __init__(self, match_id: str, seat: int, reason: str) -> None:
        super().__init__(
            f"match {match_id} is not this seat's own (seat {seat}): {reason}; "
            f"the seat did not reveal"
        )
        self.match_id = match_id
        self.seat = seat
        self.reason = reason


class FreshRollsRefused(NotOurMatch):
    """A tawla or mahbusa ruleset with ``"fresh_rolls": false``: the operator could compute
    every roll in advance. A conforming client refuses it unless the player asked for it
    (fairness-v2.md §3a.3): ``computable_rolls=True``, or that ruleset in ``create_match``."""

    def __init__(self, match_id: str, seat: int, game: str) -> None:
        super().__init__(
            match_id,
            seat,
            f'its {game} ruleset has "fresh_rolls": false, so the operator could compute '
            "every roll in advance; a conforming client refuses it unless asked for "
            "(computable_rolls=True, fairness-v2.md §3a.3)",
        )


class TranscriptMismatch(ClientError):
    """The transcript disagrees with what this seat holds: the lock it revealed against or a
    signed receipt. Keep the lock and the receipts: they are signed evidence."""

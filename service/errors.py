"""The service's errors, and the one table that turns them into HTTP responses.

The service layer knows no HTTP: it raises :class:`ServiceError` subclasses (and lets the
games' and fairness' input errors through :func:`user_errors`). Each class's ``status`` is the
only place that maps it to a status; :func:`error_body` is the documented shape
``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from fairness import ClientSeedError
from games import (
    ActionError,
    IllegalActionError,
    MalformedActionError,
    MatchOverError,
    NotYourTurnError,
    RulesetError,
    UnknownGameError,
)


class LogError(Exception):
    """A request the log cannot answer (:data:`service.errors.USER_ERRORS` maps each kind to
    the service's error)."""


class NotInLog(LogError):
    """The entry or tree size asked for is not in the log (yet)."""


class BadLogRequest(LogError):
    """A request no log can answer (a consistency proof from 0, or backwards)."""


class ServiceError(Exception):
    """A request the service refuses; ``code`` is stable, ``message`` is for people."""

    default_code: ClassVar[str] = "error"
    #: the HTTP status it answers (each class's own, in this one module)
    status: ClassVar[int] = 500

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code or self.default_code
        self.message = message


class BadRequest(ServiceError):
    default_code, status = "bad_request", 400


class Unauthorized(ServiceError):
    default_code, status = "unauthorized", 401


class Forbidden(ServiceError):
    default_code, status = "forbidden", 403


class NotFound(ServiceError):
    default_code, status = "not_found", 404


class Conflict(ServiceError):
    """The request conflicts with the match's state (``code``: stale_version, …)."""

    default_code, status = "conflict", 409


class TooLarge(ServiceError):
    default_code, status = "body_too_large", 413


class Invalid(ServiceError):
    """A bad value or an action the rules forbid (``code``: illegal_action, …)."""

    default_code, status = "validation_error", 422


class Unavailable(ServiceError):
    default_code, status = "unavailable", 503


#: The games', fairness' and the log's errors caused by a client's input: the service error and code
#: each becomes (looked up along the exception's MRO, most specific first).
USER_ERRORS: dict[type[Exception], tuple[type[ServiceError], str]] = {
    NotYourTurnError: (Conflict, "not_your_turn"),
    MatchOverError: (Conflict, "match_over"),
    IllegalActionError: (Invalid, "illegal_action"),
    MalformedActionError: (Invalid, "malformed_action"),
    ActionError: (Invalid, "malformed_action"),
    RulesetError: (Invalid, "bad_ruleset"),
    UnknownGameError: (Invalid, "unknown_game"),
    ClientSeedError: (Invalid, "bad_client_seed"),
    NotInLog: (NotFound, "not_found"),
    BadLogRequest: (BadRequest, "bad_request"),
}

#: Codes for HTTP-level errors raised by the framework (no route ran).
HTTP_CODES: dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "rate_limited",
    503: "unavailable",
}


def translate(exc: Exception) -> ServiceError | None:
    """The ServiceError a game/fairness input error stands for (None: not a user error)."""
    for cls in type(exc).__mro__:
        hit = USER_ERRORS.get(cls)
        if hit is not None:
            kind, code = hit
            return kind(str(exc), code)
    return None


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the games', fairness' and the log's input errors raised in the block into ServiceErrors."""
    try:
        yield
    except (ActionError, RulesetError, UnknownGameError, ClientSeedError, LogError) as exc:
        mapped = translate(exc)
        assert mapped is not None
        raise mapped from None


def error_body(code: str, message: str) -> dict[str, Any]:
    """The documented error shape."""
    return {"error": {"code": code, "message": message}}

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
from games import errors as game


class LogError(Exception):
    """A request the log cannot answer (:data:`service.errors.USER_ERRORS` maps each kind to
    the service's error)."""


class NotInLog(LogError):
    """The entry or tree size asked for is not in the log (yet)."""


class BadLogRequest(LogError):
    """A request no log can answer (a consistency proof from 0, or backwards)."""


class ServiceError(Exception):
    """A request the service refuses; ``code`` is stable, ``message`` is for people. Each
    subclass names the HTTP status it answers (``class NotFound(ServiceError, status=404)``,
    in this one module); its default ``code`` is that status's in :data:`HTTP_CODES`."""

    #: the HTTP status it answers
    status: ClassVar[int] = 500

    def __init_subclass__(cls, status: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if status is not None:
            cls.status = status

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code or HTTP_CODES.get(self.status, "error")
        self.message = message


class BadRequest(ServiceError, status=400): ...


class Unauthorized(ServiceError, status=401): ...


class Forbidden(ServiceError, status=403): ...


class NotFound(ServiceError, status=404): ...


class Conflict(ServiceError, status=409):
    """The request conflicts with the match's state (``code``: stale_version, …)."""


class Invalid(ServiceError, status=422):
    """A bad value or an action the rules forbid (``code``: illegal_action, …)."""


class Unavailable(ServiceError, status=503): ...


#: The games', fairness' and the log's errors caused by a client's input: the service error and code
#: each becomes (looked up along the exception's MRO, most specific first).
USER_ERRORS: dict[type[Exception], tuple[type[ServiceError], str]] = {
    game.NotYourTurnError: (Conflict, "not_your_turn"),
    game.MatchOverError: (Conflict, "match_over"),
    game.IllegalActionError: (Invalid, "illegal_action"),
    game.MalformedActionError: (Invalid, "malformed_action"),
    game.ActionError: (Invalid, "malformed_action"),
    game.RulesetError: (Invalid, "bad_ruleset"),
    game.UnknownGameError: (Invalid, "unknown_game"),
    ClientSeedError: (Invalid, "bad_client_seed"),
    NotInLog: (NotFound, "not_found"),
    BadLogRequest: (BadRequest, "bad_request"),
}

#: The code of each status: a :class:`ServiceError`'s default, and the code of an HTTP-level
#: error the framework raises (no route ran).
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


def signs_refusal(status: int) -> bool:
    """Whether a refusal of a seat's request with ``status`` carries the server's signed
    refusal (service/front.py, fairness-v2.md §7): every 4xx of :data:`HTTP_CODES` but
    429 (a rate limit changed nothing and is resent after its ``Retry-After``) and 413 (the
    body was not read whole, so it has no hash). A 5xx is never signed: the seat counts it
    as no answer."""
    return 400 <= status < 500 and status not in (413, 429)


def service_error(exc: BaseException) -> BaseException:
    """The service error a games', fairness' or the log's input error becomes
    (:data:`USER_ERRORS`, looked up along the exception's MRO); any other exception as it
    is."""
    for c in type(exc).__mro__:
        found = USER_ERRORS.get(c)
        if found is not None:
            return found[0](str(exc), found[1])
    return exc


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the games', fairness' and the log's input errors raised in the block into
    ServiceErrors (:func:`service_error`)."""
    try:
        yield
    except tuple(USER_ERRORS) as exc:
        raise service_error(exc) from None


def error_body(code: str, message: str) -> dict[str, Any]:
    """The documented error shape."""
    return {"error": {"code": code, "message": message}}

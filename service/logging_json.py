"""``qahwa serve --log-format json``: one JSON object a line, with request ids, no secrets.

Each request gets an id: the client's ``X-Request-ID`` when it is 1–64 of ``A-Z a-z 0-9 . _
-``, else a new random one; it is sent back in ``X-Request-ID`` and is the ``request_id``
of every line logged while the request runs (uvicorn's access line included); the
request layer (:class:`service.front.Front`) sets it in :data:`request_id`.

Nothing secret is logged: the service never logs a token, key or seed itself, and as a
second line of defence every message is scrubbed before it is written — ``Bearer …``
credentials, operator keys (``qop_…``), ``token=``/``seed=``/``key=`` values, and any run
of 40 or more base64/hex characters (seat tokens, seeds, keys, commitments) become
``[redacted]``; an access line carries the path without its query string.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time
from typing import Any

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "qahwa_request_id", default=None
)

_SECRETS = [
    re.compile(r"(?i)(bearer\s+)\S+"),
    re.compile(r"qop_[A-Za-z0-9_-]+"),
    re.compile(r"(?i)((?:token|seed|key|secret|password)[\"']?\s*[=:]\s*[\"']?)[^\s\"'&,;}]+"),
    re.compile(r"[A-Za-z0-9+/_=-]{40,}"),
]


def scrub(text: str) -> str:
    for i, pattern in enumerate(_SECRETS):
        if i in (0, 2):
            text = pattern.sub(lambda m: m.group(1) + "[redacted]", text)
        else:
            text = pattern.sub("[redacted]", text)
    return text


class JsonFormatter(logging.Formatter):
    """A log record as one JSON object: time (UTC), level, logger, message, request_id, and
    for uvicorn's access lines client, method, path (no query), status."""

    converter = time.gmtime  # type: ignore[assignment]

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        rid = request_id.get()
        if rid is not None:
            out["request_id"] = rid
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            client, method, path, version, status = args
            out.update(
                message="request",
                client=str(client),
                method=str(method),
                path=scrub(str(path).split("?", 1)[0]),
                http=str(version),
                status=status,
            )
        else:
            out["message"] = scrub(record.getMessage())
        if record.exc_info:
            out["exception"] = scrub(self.formatException(record.exc_info))
        return json.dumps(out, ensure_ascii=False)


def log_config(fmt: str, level: str = "INFO") -> dict[str, Any]:
    """The ``logging.config.dictConfig`` for uvicorn and the service: ``text`` (uvicorn's
    own look) or ``json`` (everything through :class:`JsonFormatter`, on stderr)."""
    if fmt == "text":
        from uvicorn.config import LOGGING_CONFIG

        return LOGGING_CONFIG
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "service.logging_json.JsonFormatter"}},
        "handlers": {"json": handler},
        "loggers": {
            "uvicorn": {"handlers": ["json"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["json"], "level": level, "propagate": False},
            "qahwa": {"handlers": ["json"], "level": level, "propagate": False},
        },
    }

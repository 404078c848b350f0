"""Reading untrusted JSON (transcripts, receipts, keys) without ever raising a traceback.

Every refusal is an :class:`InputError` with a one-line reason: too large, not UTF-8, not
JSON, a duplicate key (fairness-v2.md §1 refuses them; a document with one means whatever
the reader's parser picks, so ``verify`` refuses it for qahwa-fair/1 too), nested too
deeply, a lone surrogate, and — for a qahwa-fair/2 document — anything outside §1's
canonical JSON (floats, integers beyond ±(2^53−1), non-ASCII keys).

This module needs only ``fairness`` (the verify page's Python may use it too).
"""

from __future__ import annotations

from typing import Any

from fairness import loads_strict
from fairness.protocol import known_protocol

#: the largest document read (a long Mexican Train match is a few MB)
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
#: the deepest nesting of arrays and objects accepted (a transcript needs about 6)
MAX_DEPTH = 64


class InputError(ValueError):
    """Input that cannot be used at all (the message is one line)."""


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of a parsed JSON value (iterative: never a RecursionError); stops
    counting once ``limit`` is passed."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            children = v.values() if isinstance(v, dict) else v
            stack.extend((c, d + 1) for c in children if isinstance(c, dict | list))
    return deepest


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_json(data: bytes | str) -> Any:
    """Parse untrusted JSON (see the module doc); InputError with the reason."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise InputError(f"too large ({len(data)} bytes; at most {MAX_DOCUMENT_BYTES} are read)")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text (byte {exc.start})") from None
    else:
        text = data
    try:
        doc = loads_strict(text)
    except RecursionError:
        raise InputError(f"nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ValueError as exc:
        raise InputError(f"not JSON ({_one_line(str(exc))})") from None
    if depth_of(doc) > MAX_DEPTH:
        raise InputError(f"nested too deeply (more than {MAX_DEPTH} levels)")
    try:
        known_protocol(doc).check_value(doc)
    except UnicodeEncodeError:  # qahwa-fair/1 (or no transcript): JSON with a UTF-8 form
        raise InputError("a string holds a lone surrogate (it has no UTF-8 form)") from None
    except ValueError as exc:
        raise InputError(f"not canonical JSON (fairness-v2.md §1): {_one_line(str(exc))}") from None
    return doc

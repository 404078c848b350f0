"""Canonical JSON (fairness-v1.md §6): keys sorted, separators ',' and ':', UTF-8, no ASCII escaping."""

from __future__ import annotations

import json
from typing import Any

#: the encoder ``json.dumps`` would build for these options on every call, built once.
#: Without the check for circular references (its bookkeeping per object is a fifth of the
#: encoding): what is encoded here is parsed JSON or records built of fresh values, never
#: circular, and one that were would still raise (RecursionError) instead of looping.
_ENCODE = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=False,
    allow_nan=False,
    check_circular=False,
).encode


def canonical_json(obj: Any) -> bytes:
    return _ENCODE(obj).encode("utf-8")


def canonical_ruleset(ruleset: dict[str, Any]) -> str:
    """The ruleset string a transcript carries: compact JSON with sorted keys."""
    return canonical_json(ruleset).decode("utf-8")

"""The entry of ``verify``'s rules part: shape, the report, the draws and the browser's JSON.

A transcript's ``protocol`` picks the checks in :mod:`verify_cli.rules` (one module for every
protocol: qahwa-fair/1's commitment, match key, replay, result; qahwa-fair/2's lock, seats
from the lock, reveals, chain, fresh rolls, the drawn cut, replay, result). The wording of a
replay failure is :mod:`verify_cli.render`'s.

This is every check of :func:`verify_cli.core.verify_document` except the signatures, and it
needs only ``fairness`` and ``games`` (no ``cryptography``, no network, no ``rich``): the
verify page runs this very module in the browser (Pyodide, ``qahwa_page/static/verify-worker.js``)
through :func:`browser_report`, so the page and the CLI give their rules verdict with the same
code. ``core.verify_document`` adds the signature check and the status.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fairness.protocol import known_protocol
from fairness.records import RecordError, open_transcript
from games.base import Engine
from games.errors import GameError
from games.registry import find_engine

from . import render
from .inputs import InputError, parse_json
from .rules import RULES, Progress, V2State

_COUNTERS = (
    ("games", re.compile(r"^g(\d+)/")),
    ("hands", re.compile(r"^h(\d+)/")),
    ("rounds", re.compile(r"^r(\d+)/")),
)


class NotATranscript(Exception):
    """The document is no transcript this tool can verify (the message says why)."""


def check_shape(doc: Any) -> type[Engine]:
    """The engine class of a transcript's game (NotATranscript when it is unusable): the
    transcript opened (:func:`fairness.records.open_transcript`), its game's variant found."""
    try:
        proto = open_transcript(doc, None)["protocol"]
    except RecordError as exc:
        raise NotATranscript(str(exc)) from None
    try:
        cls = find_engine(doc["game"], doc["ruleset"], protocol=proto)
    except GameError as exc:
        raise NotATranscript(str(exc)) from None
    if cls.PROTOCOL.name != proto:  # a sealed ruleset under qahwa-fair/2 (fairness-v3 §9a)
        raise NotATranscript(f"a sealed deal ('deal': 'sealed') is {cls.PROTOCOL}, not {proto}")
    return cls


class Report:
    """The checks and failures collected so far, in order."""

    def __init__(self, source: str, doc: dict[str, Any]) -> None:
        self.checks: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []
        self.source = source
        self.doc = doc
        # seq -> (the chance result this replay computed from the seeds through the rules,
        # whether the transcript holds that result)
        self.computed: dict[int, tuple[Any, bool]] = {}
        #: what the qahwa-fair/2 checks found (None for a qahwa-fair/1 transcript)
        self.locked: V2State | None = None

    def ok(self, name: str, detail: str) -> None:
        self.checks.append({"name": name, "ok": True, "detail": detail})

    def fail(
        self,
        name: str,
        message: str,
        *,
        seq: int | None = None,
        expected: Any = None,
        found: Any = None,
    ) -> None:
        self.checks.append({"name": name, "ok": False, "detail": message})
        self.failures.append(
            {"check": name, "message": message, "seq": seq, "expected": expected, "found": found}
        )

    def skip(self, name: str, detail: str) -> None:
        self.checks.append({"name": name, "ok": None, "detail": detail})


def check_rules(
    rep: Report, doc: dict[str, Any], cls: type[Engine], *, progress: Progress | None = None
) -> render.DrawContext:
    """The rules checks of a transcript (its protocol's, :data:`verify_cli.rules.RULES`) into
    ``rep``; the draws seen."""
    ctx, rep.locked = RULES[doc["protocol"]](rep, doc, cls, progress=progress)
    return ctx


def count_units(events: list[Any], game: str) -> dict[str, int]:
    """Rounds / hands / games dealt, from the chance labels (draws for a plain session)."""
    if game == "rng":
        return {
            "draws": sum(1 for e in events if isinstance(e, dict) and e.get("type") == "chance")
        }
    seen: dict[str, set[int]] = {name: set() for name, _ in _COUNTERS}
    # one pass: a label starts with at most one of g/h/r (the counters' own patterns decide)
    patterns = {rx.pattern[1]: (name, rx) for name, rx in _COUNTERS}
    # a pattern reads no further than the label's first "/": match that head once
    heads: dict[str, tuple[str, int] | None] = {}
    for e in events:
        label = e.get("label") if isinstance(e, dict) else None
        if isinstance(label, str) and label[:1] in patterns:
            head = label[: label.find("/") + 1]
            if head in heads:
                found = heads[head]
            else:
                name, rx = patterns[label[0]]
                m = rx.match(head)
                heads[head] = found = (name, int(m.group(1))) if m else None
            if found is not None:
                seen[found[0]].add(found[1])
    return {name: len(seen[name]) for name, _ in _COUNTERS if seen[name]}


def assemble(
    rep: Report,
    doc: dict[str, Any],
    ctx: render.DrawContext,
    *,
    status: str,
    signature: dict[str, Any],
    draws_limit: int | None,
) -> dict[str, Any]:
    """The report dict of ``verify`` (see :mod:`verify_cli.core`)."""
    events: list[Any] = doc["events"]
    types = [e.get("type") for e in events if isinstance(e, dict)]
    counts = {
        "events": len(events),
        "actions": types.count("action"),
        "chance": types.count("chance"),
    }
    counts.update(count_units(events, doc["game"]))
    about = known_protocol(doc).seat_about  # v1: seed_source; v2: house
    return {
        "source": rep.source,
        "status": status,
        "match_id": doc["match_id"],
        "game": doc["game"],
        "ruleset": doc["ruleset"],
        "seats": [
            {k: s.get(k) for k in ("seat", "name", about)}
            for s in doc["seats"]
            if isinstance(s, dict)
        ],
        "counts": counts,
        "checks": rep.checks,
        "failures": render.with_differences(rep.failures),
        "signature": signature,
        "result": doc.get("result"),
        "draws": ctx.lines(draws_limit),
        "draws_total": ctx.total + ctx.sealed_total,
        "reason": None,
    }


def draw_context(ctx: render.DrawContext) -> list[dict[str, Any]]:
    """For every chance event replayed: the seats the rules put in charge when it was drawn
    (``dealer`` / ``hakem`` from the replayed engine, so for every hand, not just the first)
    and the CLI's text for it."""
    out = []
    for (ev, info), line in zip(ctx.entries, ctx.lines(None), strict=True):
        item: dict[str, Any] = {"seq": ev.get("seq"), "text": line["text"]}
        item.update({k: info[k] for k in ("dealer", "hakem") if isinstance(info.get(k), int)})
        out.append(item)
    return out


def browser_report(text: str, progress: Progress | None = None) -> str:
    """What the verify page's worker asks for: the rules checks of a transcript, as JSON.

    ``{"status": "checked"|"unusable", "reason", "checks", "failures", "computed":
    [[seq, result, same_as_transcript], ...], "draws": [{"seq", "text", "dealer"?,
    "hakem"?}], "counts"}``.
    The page checks the signature itself (Web Crypto), so it is not part of this.
    """
    try:
        doc = parse_json(text)
    except InputError as exc:
        return json.dumps({"status": "unusable", "reason": str(exc)})
    if isinstance(doc, dict) and "protocol" not in doc and isinstance(doc.get("transcript"), dict):
        doc = doc["transcript"]  # the page accepts a {"transcript": {...}} wrapper too
    try:
        cls = check_shape(doc)
    except NotATranscript as exc:
        return json.dumps({"status": "unusable", "reason": str(exc)})
    rep = Report("<page>", doc)
    ctx = check_rules(rep, doc, cls, progress=progress)
    full = assemble(rep, doc, ctx, status="checked", signature={"checked": False}, draws_limit=0)
    return json.dumps(
        {
            "status": "checked",
            "reason": None,
            "checks": rep.checks,
            "failures": render.with_differences(rep.failures),
            "computed": [[seq, value, same] for seq, (value, same) in sorted(rep.computed.items())],
            "draws": draw_context(ctx),
            "counts": full["counts"],
        },
        ensure_ascii=False,
        default=str,
    )

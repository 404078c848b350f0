"""The rules part of ``verify``: shape, commitment, match key, replay and result.

A transcript's ``protocol`` picks the checks: qahwa-fair/1's here, qahwa-fair/2's in
:mod:`verify_cli.v2_rules` (lock, seats from the lock, reveals, chain, fresh rolls, the drawn
cut, replay, result). Replay failures are described from ``ReplayError.kind`` and its fields.

This is every check of :func:`verify_cli.core.verify_document` except the signatures, and it
needs only ``fairness`` and ``games`` (no ``cryptography``, no network, no ``rich``): the
verify page runs this very module in the browser (Pyodide, ``qahwa_page/static/verify-worker.js``)
through :func:`browser_report`, so the page and the CLI give their rules verdict with the same
code. ``core.verify_document`` adds the signature check and the status.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from fairness import (
    PROTOCOL,
    PROTOCOL_V2,
    FairnessError,
    commitment,
    match_key,
    parse_server_seed,
)
from games.base import Engine, Event
from games.errors import ReplayError, UnknownGameError
from games.registry import engine_class
from games.replay import replay

from . import render
from .inputs import InputError, parse_json
from .v2_rules import V2State, check_rules_v2, check_shape_v2, is_int, strict_equal

REQUIRED: dict[str, type | tuple[type, ...]] = {
    "match_id": str,
    "game": str,
    "ruleset": str,
    "commitment": str,
    "server_seed": str,
    "seats": list,
    "events": list,
}

_COUNTERS = (
    ("games", re.compile(r"^g(\d+)/")),
    ("hands", re.compile(r"^h(\d+)/")),
    ("rounds", re.compile(r"^r(\d+)/")),
)

Progress = Callable[[int, int], Any]
"""``progress(done, total)``: events replayed so far, out of the transcript's events."""


class NotATranscript(Exception):
    """The document is no transcript this tool can verify (the message says why)."""


def check_shape(doc: Any) -> type[Engine]:
    """The engine class of a transcript's game (NotATranscript when it is unusable)."""
    if not isinstance(doc, dict):
        raise NotATranscript("not a transcript: the document is not a JSON object")
    proto = doc.get("protocol")
    if proto is None:
        raise NotATranscript("not a transcript: it has no 'protocol' field")
    if proto == PROTOCOL_V2:
        why = check_shape_v2(doc)
        if why is not None:
            raise NotATranscript(why)
    elif proto == PROTOCOL:
        for name, typ in REQUIRED.items():
            if name not in doc:
                raise NotATranscript(f"not a transcript: field {name!r} is missing")
            if not isinstance(doc[name], typ):
                raise NotATranscript(f"not a transcript: field {name!r} has the wrong type")
    else:
        raise NotATranscript(
            f"unknown protocol {render.short(proto, 40)} (this tool "
            f"verifies {PROTOCOL_V2!r} and {PROTOCOL!r})"
        )
    try:
        return engine_class(doc["game"])
    except UnknownGameError as exc:
        raise NotATranscript(str(exc)) from None


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
        self.v2: V2State | None = None

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


def seat_seeds(rep: Report, doc: dict[str, Any]) -> list[str] | None:
    """The client seeds in seat order (None and a failure when the seat list is bad)."""
    seats = doc["seats"]
    if not all(isinstance(s, dict) for s in seats):
        rep.fail("seats", "a seat entry is not an object")
        return None
    numbers = [s.get("seat") for s in seats]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers) or sorted(
        numbers
    ) != list(range(len(seats))):
        rep.fail("seats", f"seats are not numbered 0..{len(seats) - 1}: {numbers}")
        return None
    ordered = sorted(seats, key=lambda s: s["seat"])
    seeds = [s.get("client_seed") for s in ordered]
    if not all(isinstance(c, str) for c in seeds):
        rep.fail("seats", "a seat has no client seed")
        return None
    bad_src = [s["seat"] for s in ordered if s.get("seed_source") not in ("player", "server")]
    if bad_src:
        rep.fail("seats", f"seat(s) {bad_src}: seed_source must be 'player' or 'server'")
        return None
    return seeds


def describe_replay_error(exc: ReplayError, events: list[Any]) -> str:
    """A replay failure as one line naming the event, from the error's ``kind`` and fields
    (never by parsing its message)."""
    seq = exc.seq
    msg = str(exc)
    if seq is not None:
        msg = msg.removeprefix(f"event {seq}: ")
    if exc.kind == "seq" and is_int(seq) and 0 <= seq < len(events):
        ev = events[seq]
        got = ev.get("seq") if isinstance(ev, dict) else None
        if is_int(got) and got > seq:
            n = got - seq
            missing = f"event {seq}" if n == 1 else f"events {seq}-{seq + n - 1}"
            return f"{missing} missing (the next event has seq {got})"
    if exc.kind == "truncated":
        return msg
    if seq is not None and 0 <= seq < len(events) and isinstance(events[seq], dict):
        ev = events[seq]
        if ev.get("type") == "chance":
            what = f"chance event {seq} ({ev.get('kind')} {ev.get('label')!r})"
        elif ev.get("type") == "action":
            act = ev.get("action")
            atype = act.get("type") if isinstance(act, dict) else act
            what = f"event {seq} (action {atype!r} by seat {ev.get('seat')})"
        else:
            what = f"event {seq} ({ev.get('type')})"
        if exc.kind == "chance" and isinstance(exc.expected, dict) and isinstance(exc.found, dict):
            if exc.expected.get("label") == exc.found.get("label"):
                return (
                    f"{what}: the result differs from its recomputation from the seeds "
                    f"({render.first_difference(exc.expected.get('result'), exc.found.get('result'))})"
                )
            return (
                f"{what}: the rules draw {exc.expected.get('kind')} "
                f"{exc.expected.get('label')!r} here"
            )
        return f"{what}: {msg}"
    return msg


def check_rules(
    rep: Report, doc: dict[str, Any], cls: type[Engine], *, progress: Progress | None = None
) -> render.DrawContext:
    """The rules checks of a transcript into ``rep``; the draws seen. qahwa-fair/2: see
    :mod:`verify_cli.v2_rules`; qahwa-fair/1: commitment, match key, replay, result."""
    if doc.get("protocol") == PROTOCOL_V2:
        ctx, rep.v2 = check_rules_v2(
            rep, doc, cls, progress=progress, describe=describe_replay_error
        )
        return ctx
    return check_rules_v1(rep, doc, cls, progress=progress)


def check_rules_v1(
    rep: Report, doc: dict[str, Any], cls: type[Engine], *, progress: Progress | None = None
) -> render.DrawContext:
    """Checks 1–4 (commitment, match key, replay, result) into ``rep``; the draws seen."""
    game, ruleset_str, match_id = doc["game"], doc["ruleset"], doc["match_id"]
    events: list[Any] = doc["events"]

    # 1. commitment = SHA-256(server_seed)
    seed: bytes | None
    try:
        seed = parse_server_seed(doc["server_seed"])
    except FairnessError as exc:
        seed = None
        rep.fail("commitment", f"server_seed is unusable: {exc}")
    if seed is not None:
        if doc["server_seed"] != seed.hex():
            rep.fail("commitment", "server_seed must be lowercase hex")
        else:
            calc = commitment(seed)
            if calc == doc["commitment"]:
                rep.ok("commitment", f"SHA-256(server_seed) = {calc[:16]}… as committed")
            else:
                rep.fail(
                    "commitment",
                    "SHA-256(server_seed) is not the commitment",
                    expected=calc,
                    found=doc["commitment"],
                )

    # 2. the match key
    seeds = seat_seeds(rep, doc)
    key: bytes | None = None
    if seed is not None and seeds is not None:
        try:
            key = match_key(seed, match_id, game, ruleset_str, seeds)
            rep.ok("match key", f"K = {key.hex()[:16]}… from {len(seeds)} client seed(s)")
        except FairnessError as exc:
            rep.fail("match key", f"cannot compute K: {exc}")

    # 3. replay every event through the rules
    engine: Engine | None = None
    ctx = render.DrawContext(doc, rep.computed)
    if key is not None:
        total = len(events)
        step = max(1, total // 50)
        done = 0
        on_event = ctx.observe  # which notes each chance result as recomputed

        def on_event_shown(ev: Event, live: Engine) -> None:
            nonlocal done
            on_event(ev, live)
            done += 1
            if progress is not None and done % step == 0:
                progress(done, total)

        try:
            engine = replay(
                cls,
                ruleset_str,
                key,
                events,
                protocol=PROTOCOL,
                on_event=on_event if progress is None else on_event_shown,
            )
        except ReplayError as exc:
            if (
                exc.seq is not None
                and isinstance(exc.expected, dict)
                and isinstance(exc.found, dict)
                and exc.expected.get("label") == exc.found.get("label")
            ):
                rep.computed[exc.seq] = (exc.expected.get("result"), False)
            rep.fail(
                "replay",
                describe_replay_error(exc, events),
                seq=exc.seq,
                expected=exc.expected,
                found=exc.found,
            )
        except Exception as exc:  # not a refused event: a bug in the engine itself
            rep.fail(
                "replay",
                f"the rules engine failed (a bug in qahwa, not a verdict on "
                f"the transcript): {exc.__class__.__name__}: {exc}",
            )
        if engine is not None:
            n_seats = engine.n_seats
            if seeds is not None and len(seeds) != n_seats:
                rep.fail("seats", f"the ruleset has {n_seats} seats, the transcript {len(seeds)}")
            n_chance = ctx.total  # every event was observed: the chance events
            rep.ok(
                "replay",
                f"{len(events)} events replayed: {n_chance} chance results "
                f"recomputed, every action legal",
            )
            # 4. the result
            if engine.outcome is None:
                rep.fail("result", "the events end before the match is over")
            else:
                # as JSON (tuples in an outcome's detail are lists in the transcript)
                calc_result = json.loads(json.dumps(engine.outcome.to_json()))
                if strict_equal(calc_result, doc.get("result")):
                    rep.ok("result", render.result_text(calc_result, doc))
                else:
                    rep.fail(
                        "result",
                        "the replayed result differs from the transcript's",
                        expected=calc_result,
                        found=doc.get("result"),
                    )
    else:
        rep.skip("replay", "not replayed: no match key")
    if not any(c["name"] == "result" for c in rep.checks):
        rep.skip("result", "not checked: the events did not replay")
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
    actions = chance = 0
    for e in events:
        if isinstance(e, dict):
            t = e.get("type")
            if t == "chance":
                chance += 1
            elif t == "action":
                actions += 1
    counts = {"events": len(events), "actions": actions, "chance": chance}
    counts.update(count_units(events, doc["game"]))
    return {
        "source": rep.source,
        "status": status,
        "match_id": doc["match_id"],
        "game": doc["game"],
        "ruleset": doc["ruleset"],
        "seats": [
            {
                "seat": s.get("seat"),
                "name": s.get("name"),
                **(
                    {"house": s.get("house")}
                    if doc.get("protocol") == PROTOCOL_V2
                    else {"seed_source": s.get("seed_source")}
                ),
            }
            for s in doc["seats"]
            if isinstance(s, dict)
        ],
        "counts": counts,
        "checks": rep.checks,
        "failures": render.with_differences(rep.failures),
        "signature": signature,
        "result": doc.get("result"),
        "draws": ctx.lines(draws_limit),
        "draws_total": ctx.total,
        "reason": None,
    }


def draw_context(ctx: render.DrawContext) -> list[dict[str, Any]]:
    """For every chance event replayed: the seats the rules put in charge when it was drawn
    (``dealer`` / ``hakem`` from the replayed engine, so for every hand, not just the first)
    and the CLI's text for it."""
    out = []
    for (ev, info), line in zip(ctx.entries, ctx.lines(None), strict=True):
        item: dict[str, Any] = {"seq": ev.get("seq"), "text": line["text"]}
        for k in ("dealer", "hakem"):
            if isinstance(info.get(k), int):
                item[k] = info[k]
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

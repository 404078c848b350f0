"""Verify one transcript (fairness-v1.md §6): the checks, in order, and a JSON-ready report.

A report is a dict::

    {"source", "status": "verified" | "failed" | "unchecked" | "unusable",
     "match_id", "game", "ruleset", "seats": [{"seat", "name", "seed_source"}],
     "counts": {"events", "actions", "chance", "rounds"|"hands"|"games"|"draws": n},
     "checks": [{"name", "ok": true|false|null, "detail"}],
     "failures": [{"check", "message", "seq", "expected", "found"}],
     "signature": {"checked", "key_id", "key_source", "key_origin"},
     "draws": [{"seq", "label", "kind", "text"}], "draws_total": n, "reason"}

``unchecked``: everything checked out except the signature, which could not be checked
(no key); ``unusable``: the input is no transcript we can verify (``reason`` says why).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fairness import (
    PROTOCOL,
    FairnessError,
    SignatureError,
    commitment,
    match_key,
    parse_server_seed,
    verify_record,
)
from games.base import Engine, replay
from games.errors import ReplayError, UnknownGameError
from games.registry import engine_class

from . import render
from .keys import KeySet, UnusableInput

VERIFIED = "verified"
FAILED = "failed"
UNCHECKED = "unchecked"
UNUSABLE = "unusable"

REQUIRED: dict[str, type | tuple[type, ...]] = {
    "match_id": str,
    "game": str,
    "ruleset": str,
    "commitment": str,
    "server_seed": str,
    "seats": list,
    "events": list,
}

_COUNTERS = (("games", re.compile(r"^g(\d+)/")), ("hands", re.compile(r"^h(\d+)/")),
             ("rounds", re.compile(r"^r(\d+)/")))


def load_document(path: str) -> Any:
    """Read and parse a transcript file (UnusableInput when unreadable or not JSON)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except IsADirectoryError:
        raise UnusableInput(f"{path}: is a directory") from None
    except OSError as exc:
        raise UnusableInput(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UnusableInput(f"{path}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UnusableInput(f"{path}: not JSON ({exc})") from None


def unusable(source: str, reason: str) -> dict[str, Any]:
    return {"source": source, "status": UNUSABLE, "reason": reason, "checks": [],
            "failures": [], "draws": [], "draws_total": 0}


def _check_shape(doc: Any) -> type[Engine]:
    if not isinstance(doc, dict):
        raise UnusableInput("not a transcript: the document is not a JSON object")
    proto = doc.get("protocol")
    if proto is None:
        raise UnusableInput("not a transcript: it has no 'protocol' field")
    if proto != PROTOCOL:
        raise UnusableInput(f"unknown protocol {proto!r} (this tool verifies {PROTOCOL!r})")
    for name, typ in REQUIRED.items():
        if name not in doc:
            raise UnusableInput(f"not a transcript: field {name!r} is missing")
        if not isinstance(doc[name], typ):
            raise UnusableInput(f"not a transcript: field {name!r} has the wrong type")
    try:
        return engine_class(doc["game"])
    except UnknownGameError as exc:
        raise UnusableInput(str(exc)) from None


class _Report:
    def __init__(self, source: str, doc: dict[str, Any]) -> None:
        self.checks: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []
        self.source = source
        self.doc = doc

    def ok(self, name: str, detail: str) -> None:
        self.checks.append({"name": name, "ok": True, "detail": detail})

    def fail(self, name: str, message: str, *, seq: int | None = None,
             expected: Any = None, found: Any = None) -> None:
        self.checks.append({"name": name, "ok": False, "detail": message})
        self.failures.append({"check": name, "message": message, "seq": seq,
                              "expected": expected, "found": found})

    def skip(self, name: str, detail: str) -> None:
        self.checks.append({"name": name, "ok": None, "detail": detail})


def _seats(rep: _Report, doc: dict[str, Any]) -> list[str] | None:
    """The client seeds in seat order (None and a failure when the seat list is bad)."""
    seats = doc["seats"]
    if not all(isinstance(s, dict) for s in seats):
        rep.fail("seats", "a seat entry is not an object")
        return None
    numbers = [s.get("seat") for s in seats]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers) \
            or sorted(numbers) != list(range(len(seats))):
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


def _describe_replay_error(exc: ReplayError, events: list[Any]) -> str:
    seq = exc.seq
    msg = re.sub(r"^event \d+: ", "", str(exc))
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
        if exc.expected is not None and exc.found is not None and ev.get("type") == "chance":
            if exc.expected.get("label") == exc.found.get("label"):
                return (f"{what}: the result differs from its recomputation from the seeds "
                        f"({render.first_difference(exc.expected.get('result'), exc.found.get('result'))})")
            return (f"{what}: the rules draw {exc.expected.get('kind')} "
                    f"{exc.expected.get('label')!r} here")
        return f"{what}: {msg}"
    return msg


def verify_document(doc: Any, keys: KeySet | None, *, source: str = "<transcript>",
                    draws_limit: int | None = 12, allow_unsigned: bool = False,
                    ) -> dict[str, Any]:
    """Verify a parsed transcript; never raises for bad content (see the module doc)."""
    try:
        cls = _check_shape(doc)
    except UnusableInput as exc:
        return unusable(source, str(exc))
    rep = _Report(source, doc)
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
                rep.fail("commitment", "SHA-256(server_seed) is not the commitment",
                         expected=calc, found=doc["commitment"])

    # 2. the match key
    seeds = _seats(rep, doc)
    key: bytes | None = None
    if seed is not None and seeds is not None:
        try:
            key = match_key(seed, match_id, game, ruleset_str, seeds)
            rep.ok("match key", f"K = {key.hex()[:16]}… from {len(seeds)} client seed(s)")
        except FairnessError as exc:
            rep.fail("match key", f"cannot compute K: {exc}")

    # 3. replay every event through the rules
    engine: Engine | None = None
    ctx = render.DrawContext(doc)
    if key is not None:
        try:
            engine = replay(cls, ruleset_str, key, events, on_event=ctx.observe)
        except ReplayError as exc:
            rep.fail("replay", _describe_replay_error(exc, events), seq=exc.seq,
                     expected=exc.expected, found=exc.found)
        except Exception as exc:  # not a refused event: a bug in the engine itself
            rep.fail("replay", f"the rules engine failed (a bug in qahwa, not a verdict on "
                     f"the transcript): {exc.__class__.__name__}: {exc}")
        else:
            n_seats = engine.n_seats
            if seeds is not None and len(seeds) != n_seats:
                rep.fail("seats", f"the ruleset has {n_seats} seats, the transcript "
                         f"{len(seeds)}")
            n_chance = sum(1 for e in events if e.get("type") == "chance")
            rep.ok("replay", f"{len(events)} events replayed: {n_chance} chance results "
                   f"recomputed, every action legal")
            # 4. the result
            if engine.outcome is None:
                rep.fail("result", "the events end before the match is over")
            else:
                # as JSON (tuples in an outcome's detail are lists in the transcript)
                calc_result = json.loads(json.dumps(engine.outcome.to_json()))
                if calc_result == doc.get("result"):
                    rep.ok("result", render.result_text(calc_result, doc))
                else:
                    rep.fail("result", "the replayed result differs from the transcript's",
                             expected=calc_result, found=doc.get("result"))
    else:
        rep.skip("replay", "not replayed: no match key")
    if not any(c["name"] == "result" for c in rep.checks):
        rep.skip("result", "not checked: the events did not replay")

    # 5. the signature
    sig_info: dict[str, Any] = {"checked": False, "key_id": None, "key_source": None,
                                "key_origin": None}
    sig = doc.get("signature")
    if isinstance(sig, dict):
        sig_info["key_id"] = sig.get("key_id")
    if keys is None:
        rep.skip("signature", "signature not checked: no server key (use --key or --server)")
    elif not isinstance(sig, dict):
        rep.fail("signature", "the transcript carries no signature")
    else:
        pub, note = keys.pick(sig.get("key_id"))
        sig_info.update(key_source=keys.source, key_origin=keys.origin)
        if pub is None:
            rep.fail("signature", note)
        else:
            try:
                verify_record(doc, pub)
            except SignatureError as exc:
                rep.fail("signature", f"{exc}" + (f" ({note})" if note else ""))
            else:
                sig_info["checked"] = True
                where = ("fetched from the server, so only as trustworthy as that server"
                         if keys.source == "server" else f"from {keys.origin}")
                rep.ok("signature", f"Ed25519 signature valid for key {sig.get('key_id')} "
                       f"({where})")

    if rep.failures:
        status = FAILED
    elif not sig_info["checked"]:
        status = VERIFIED if allow_unsigned else UNCHECKED
    else:
        status = VERIFIED
    counts = {"events": len(events),
              "actions": sum(1 for e in events if isinstance(e, dict) and e.get("type") == "action"),
              "chance": sum(1 for e in events if isinstance(e, dict) and e.get("type") == "chance")}
    counts.update(count_units(events, game))
    draws = ctx.lines(draws_limit)
    return {
        "source": source,
        "status": status,
        "match_id": match_id,
        "game": game,
        "ruleset": ruleset_str,
        "seats": [{"seat": s.get("seat"), "name": s.get("name"),
                   "seed_source": s.get("seed_source")}
                  for s in doc["seats"] if isinstance(s, dict)],
        "counts": counts,
        "checks": rep.checks,
        "failures": rep.failures,
        "signature": sig_info,
        "result": doc.get("result"),
        "draws": draws,
        "draws_total": ctx.total,
        "reason": None,
    }


def count_units(events: list[Any], game: str) -> dict[str, int]:
    """Rounds / hands / games dealt, from the chance labels (draws for a plain session)."""
    if game == "rng":
        return {"draws": sum(1 for e in events if isinstance(e, dict) and e.get("type") == "chance")}
    out: dict[str, int] = {}
    for name, rx in _COUNTERS:
        seen = set()
        for e in events:
            if isinstance(e, dict) and isinstance(e.get("label"), str):
                m = rx.match(e["label"])
                if m:
                    seen.add(int(m.group(1)))
        if seen:
            out[name] = len(seen)
    return out


def verify_item(item: tuple[str, Any, str], keys_b64: dict[str, Any] | None,
                draws_limit: int | None, allow_unsigned: bool) -> dict[str, Any]:
    """Worker entry point: ``item`` is ("file", path, source) or ("doc", document, source)."""
    kind, payload, source = item
    try:
        doc = load_document(payload) if kind == "file" else payload
    except UnusableInput as exc:
        return unusable(source, str(exc))
    keys = KeySet.from_b64(keys_b64) if keys_b64 is not None else None
    try:
        return verify_document(doc, keys, source=source, draws_limit=draws_limit,
                               allow_unsigned=allow_unsigned)
    except Exception as exc:  # a bug must not turn into a traceback for the user
        return unusable(source, f"internal error while verifying: {exc.__class__.__name__}: {exc}")

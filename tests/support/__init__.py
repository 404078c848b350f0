"""Small helpers shared by the test modules."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from socketserver import BaseServer
from typing import Any, TypeVar

import pytest
from hypothesis import settings

from fairness import PROTOCOL
from games.base import V2_RULESET_DEFAULTS, Chance, Engine
from games.errors import ActionError
from games.registry import engine_class, find_engine
from games.replay import Replayer, parse_transcript_ruleset
from games.transcript import simulate_match, transcript_context, transcript_key
from verify_cli.core import VERIFIED, verify_document

T = TypeVar("T")
E = TypeVar("E", bound=Engine)
ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors"


def vector(name: str) -> Any:
    """The JSON of the test vector file tests/vectors/``name``."""
    return json.loads((VECTORS / name).read_text("utf-8"))


class ScriptedChance(Chance):
    """A Chance whose scripted labels ``{label: result}`` return their result, recorded as
    the stream's own draw would be. Without ``key`` every draw must be scripted; with one, an
    unscripted label draws from that key's stream. ``drawn`` lists the scripted labels drawn."""

    def __init__(self, script: Mapping[str, Any], key: bytes | None = None) -> None:
        super().__init__(bytes(range(32)) if key is None else key)
        self.script = dict(script)
        self.streamed = key is not None
        self.drawn: list[str] = []

    def _take(self, label: str) -> Any:
        """The scripted result at ``label`` (a label not drawn before), or None: draw it from
        the stream."""
        if label not in self.script:
            if self.streamed:
                return None
            raise AssertionError(f"unscripted draw {label}")
        self._key(label)  # checks the label is new
        self.drawn.append(label)
        return self.script.pop(label)

    def dice(self, label: str, count: int, sides: int = 6) -> list[int]:
        r = self._take(label)
        if r is None:
            return super().dice(label, count, sides)
        args = {"count": count, "sides": sides}
        self._record(
            {"type": "chance", "label": label, "kind": "dice", "args": args, "result": list(r)}
        )
        return list(r)

    def uniform(self, label: str, n: int) -> int:
        r = self._take(label)
        if r is None:
            return super().uniform(label, n)
        assert 0 <= int(r) < n
        self._record(
            {
                "type": "chance",
                "label": label,
                "kind": "uniform",
                "args": {"n": n},
                "result": int(r),
            }
        )
        return int(r)

    def shuffle(self, label: str, items: Sequence[T]) -> list[T]:
        r = self._take(label)
        if r is None:
            return super().shuffle(label, items)
        assert sorted(r) == sorted(items)  # type: ignore[type-var]
        self._record({"type": "chance", "label": label, "kind": "shuffle", "result": list(r)})
        return list(r)


def assert_defaults(game: str, cls: type[Engine], defaults: dict[str, Any]) -> None:
    """``game`` is ``cls`` in the registry, whose empty ruleset parses to ``defaults`` under
    qahwa-fair/1, and to them with the v2 timing rules under qahwa-fair/2."""
    assert engine_class(game) is cls
    assert cls.parse_ruleset({}, protocol=PROTOCOL) == defaults
    assert cls.parse_ruleset({}) == {**defaults, **V2_RULESET_DEFAULTS}


def fresh_engine(cls: type[E], key: bytes, **ruleset: Any) -> E:
    """A new ``cls`` engine of ``ruleset`` (parsed), drawing under ``key``."""
    return cls(cls.parse_ruleset(ruleset), Chance(key))


def all_views(e: Engine) -> str:
    """The public view and every seat's, as one JSON text (to compare before and after)."""
    return json.dumps([e.view(None)] + [e.view(s) for s in range(e.n_seats)], sort_keys=True)


def engine_state(e: Engine) -> Any:
    """The engine's whole state, copied: its fields, and its chance's labels and pending draws."""
    state = {k: copy.deepcopy(v) for k, v in vars(e).items() if k != "chance"}
    return state, sorted(e.chance.labels), list(e.chance._pending)


def rejects(
    e: Engine, seat: int, action: Any, exc: type[Exception], match: str | None = None
) -> None:
    """``action`` by ``seat`` is refused with ``exc`` (matching ``match``), changing nothing."""
    before = engine_state(e)
    with pytest.raises(exc, match=match):
        e.apply(seat, action)
    assert engine_state(e) == before


def refuses_unlisted(
    e: Engine, field: str, pairs: list[tuple[Any, Any]], state: Callable[[Engine], Any]
) -> int:
    """Seat 0's ``play``, ``draw`` and ``pass`` with each (``tile``, ``field``) value of
    ``pairs`` ("absent": no such field) that ``legal_actions`` does not list (compared
    type-strictly) is refused with an ActionError and changes nothing (``state(e)``): how
    many were tried."""
    listed = {json.dumps(a, sort_keys=True) for a in e.legal_actions(0)}
    before = state(e)
    tried = 0
    for kind in ("play", "draw", "pass"):
        for tile, other in pairs:
            action: dict[str, Any] = {"type": kind}
            if tile != "absent":
                action["tile"] = tile
            if other != "absent":
                action[field] = other
            if json.dumps(action, sort_keys=True) in listed:
                continue
            with pytest.raises(ActionError):
                e.apply(0, action)
            assert state(e) == before, action
            tried += 1
    return tried


def play_randomly(
    e: Engine,
    seed: int,
    limit: int,
    before: Callable[[int, list[Any], int], None],
    after: Callable[[], None],
) -> None:
    """Random legal bots (``random.Random(seed)``) play ``e`` to its end, in fewer than
    ``limit`` actions; some action is listed for the seat to move while the match runs.
    ``before(seat, legal, step)`` runs before each action, ``after()`` after it."""
    bots = random.Random(seed)
    steps = 0
    while e.outcome is None:
        seat = e.turn
        assert seat is not None
        legal = e.legal_actions(seat)
        assert legal, "no legal action while the match runs"
        before(seat, legal, steps)
        e.apply(seat, bots.choice(legal))
        after()
        steps += 1
        assert steps < limit


def examples(n: int) -> int:
    """``n`` hypothesis examples under the default profile, scaled with the loaded profile's
    ``max_examples`` (``QAHWA_HYPOTHESIS_PROFILE=thorough`` gives 5n): a fixed
    ``max_examples`` in ``@settings`` would otherwise override the profile."""
    return max(n, n * settings().max_examples // 100)


def untimed(event: dict[str, Any]) -> dict[str, Any]:
    """A v2 event without the server's time ``at`` (fairness-v2.md §7), which every event a
    server makes carries; the rest is compared exactly."""
    assert "at" in event, f"the server's event carries no time: {event}"
    return {k: v for k, v in event.items() if k != "at"}


def listed_form(action: dict[str, Any]) -> dict[str, Any]:
    """An action as ``legal_actions`` lists it: a fresh roll's ``value`` is the seat's own."""
    if action.get("type") in ("roll", "roll_value"):
        return {k: v for k, v in action.items() if k != "value"}
    return action


def transcript_engine(doc: dict[str, Any]) -> Any:
    """A fresh engine of a started match's transcript: its game, ruleset, key and context."""
    cls = find_engine(doc["game"], doc["ruleset"], protocol=doc["protocol"])
    parsed = parse_transcript_ruleset(cls, doc["ruleset"], doc["protocol"])
    key = transcript_key(doc)
    assert key is not None, "a started match has a key"
    ctx = transcript_context(doc)
    return cls(parsed, Chance(key), ctx) if ctx is not None else cls(parsed, Chance(key))


def walk_transcript(
    doc: dict[str, Any], cls: type[Engine], check: Callable[[Any, int, dict[str, Any]], None]
) -> Engine:
    """Re-run the transcript step by step through the one replay loop (games.replay),
    calling ``check(engine, seat, action)`` before each action, which must be listed in
    ``legal_actions``; every chance event is compared with what the engine draws."""
    assert engine_class(doc["game"]) is cls
    engine = transcript_engine(doc)
    walker = Replayer(engine, pending=engine.chance.take_events())
    for ev in doc["events"]:
        if ev["type"] == "action" and not walker.pending:
            assert listed_form(ev["action"]) in engine.legal_actions(ev["seat"])
            check(engine, ev["seat"], ev["action"])
        walker.feed([ev])
    return walker.finish()


def commit_all(
    svc: Any,
    mid: str,
    tokens: list[str],
    seed: Callable[[int], str],
    keys: Sequence[str | None] | None = None,
) -> list[str]:
    """Every seat of a v2 match commits to ``seed(seat)`` with its seat key from ``keys``
    (none without) and no roll chain (``svc`` a ``service.matches.MatchService``); returns
    the seats' nonces (hex)."""
    from fairness import new_nonce, seed_commitment

    nonces = [new_nonce().hex() for _ in tokens]
    for seat, tok in enumerate(tokens):
        svc.commit(
            mid,
            seat=seat,
            token=tok,
            key=None if keys is None else keys[seat],
            roll_chain=None,
            seed_commitment=seed_commitment(mid, seat, nonces[seat], seed(seat)),
        )
    return nonces


@contextmanager
def serving(server: BaseServer) -> Iterator[str]:
    """``server`` answering on a thread of its own until the block ends: its
    ``http://host:port`` URL."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def sqlite_settings(folder: Path, **fields: Any) -> Any:
    """The service's settings over a new SQLite database in ``folder`` (its data dir too),
    with no key from the environment: no master key, the signing key made in ``folder``;
    ``fields`` set more (or another signing key)."""
    from service.settings import Settings

    return Settings(
        **{
            "database_url": f"sqlite:///{folder / 'q.db'}",
            "data_dir": folder,
            "master_key": None,
            "signing_key": None,
            "signing_key_file": None,
            **fields,
        }
    )


def fresh_python(code: str) -> str:
    """What ``python -c code`` prints (stripped) in a new interpreter at the repository's
    root; it must succeed."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return out.stdout.strip()


def captured(args: Sequence[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    """``args`` run to their end (``kw``: cwd, env, timeout), the output captured as text;
    the exit code is the caller's to check."""
    return subprocess.run(list(args), capture_output=True, text=True, check=False, **kw)


def bash_ok(
    script: str, what: str, cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``bash -euo pipefail -c script``, which must succeed (else ``what`` and its output)."""
    proc = captured(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, timeout=timeout)
    assert proc.returncode == 0, f"{what}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    return proc


def reveal_all(
    svc: Any, mid: str, tokens: list[str], nonces: list[str], seed: Callable[[int], str]
) -> None:
    """Every seat reveals what :func:`commit_all` committed it to."""
    for seat, tok in enumerate(tokens):
        svc.reveal(mid, seat=seat, token=tok, client_seed=seed(seat), nonce=nonces[seat])


def made_up_v1(svc: Any, match_id: str) -> dict[str, Any]:
    """A qahwa-fair/1 transcript made up for ``match_id``, signed with the operator's key
    (``svc``: the server's MatchService), sound by itself: the downgrade of fairness-v2 §9."""
    doc, _ = simulate_match("tawla", {"match_length": 1}, seed=5, protocol=PROTOCOL)
    doc = {k: v for k, v in doc.items() if k != "signature"}
    doc["match_id"] = match_id
    # the match key binds the id: draw the events again for it
    doc2, _ = simulate_match(
        "tawla", {"match_length": 1}, seed=5, protocol=PROTOCOL, match_id=match_id
    )
    doc.update({k: doc2[k] for k in ("events", "result")})
    signed = svc.signer.signed(doc)
    rep = verify_document(signed, None, allow_unsigned=True)
    assert rep["status"] == VERIFIED, rep["failures"]  # a sound v1 transcript by itself
    return signed

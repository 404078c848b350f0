"""``make profile-api``: where a live ``qahwa serve`` spends its CPU on an action.

Three parts, one command (``python -m bench.profile_api``; ``--help`` for the options;
docs/performance.md "Where an action's server CPU goes" reads their output):

1. **the live profile** — one ``qahwa serve`` on SQLite, run as ``make bench-api`` runs it,
   under the bench's load (8 clients playing whole keyed qahwa-fair/2 matches of
   ``--game``), sampled by py-spy (it needs ptrace: root, or ``kernel.yama.ptrace_scope``
   0), the samples split by part of the stack and scaled to the server's CPU per action
   read from /proc over the same span. Written to ``--out``: ``profile.txt`` (collapsed
   stacks), ``flamegraph.svg`` (a second, shorter recording) and ``table.md``.
2. **the counts** — the same server in this process (``service.server.ServerThread``) and
   the same client, counting per action: SQL statements by verb, transactions, thread-pool
   hand-offs, and ``json`` encodes/decodes made by the server's threads.
3. **the service without HTTP** — on that server, ``MatchService.state`` and ``.act`` and
   the routes' encoding called in one thread under cProfile on the process CPU clock.

py-spy counts a runnable thread as at work, including one woken from a wait and still
waiting for a core, so on a busy machine frames right after system calls and lock waits in
C get more samples than the CPU they use: part 1's ms are approximate shares; the counts of
parts 2 and 3 are exact.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from bench import api

PY_SPY = Path(sys.executable).parent / "py-spy"
EXTRA = os.environ.get("PYSPY_EXTRA", "").split()

#: (part, pattern searched in one frame "function (file:line)"): a sample goes to the first
#: part, in this order, that any frame of its stack matches (the protocol's crypto claims
#: its canonical JSON and SHA-256; the SQL driver's time is SQL's wherever it is called from)
OWNERS: list[tuple[str, re.Pattern[str]]] = [
    (
        "protocol crypto (Ed25519 verify and sign, SHA-256 chain step, their canonical JSON)",
        re.compile(
            r"cryptography/|fairness/signing\.py|^(chain_next|seat_sig_message|_verify_seat_sig) "
        ),
    ),
    ("SQL (SQLAlchemy Core, the sqlite3 driver)", re.compile("sqlalchemy/|sqlite3")),
    ("engine (apply, legal moves, seat view, catch-up)", re.compile("games/")),
    ("pydantic (request models)", re.compile("pydantic")),
    ("middleware: metrics (prometheus-client)", re.compile("prometheus_client/")),
    ("middleware: body limit and duplicate-key check", re.compile("^json_body_problem ")),
]
#: parts of the innermost frame, for the samples no owner claimed
INNERMOST: list[tuple[str, re.Pattern[str]]] = [
    ("JSON encode/decode (views, events, bodies)", re.compile("json/")),
    (
        "middleware: Front (service/front.py: CORS, request id, limits, body, refusals, metrics)",
        re.compile(r"service/front\.py"),
    ),
    (
        "thread hand-offs (anyio worker threads, queues, locks)",
        re.compile(r"anyio/|threading\.py|queue\.py|concurrent/"),
    ),
    (
        "ASGI framework (Starlette, FastAPI: routing, dependencies)",
        re.compile("starlette/|fastapi/"),
    ),
    (
        "HTTP server and event loop (uvicorn, h11, asyncio)",
        re.compile(r"uvicorn/|h11/|asyncio/|selectors\.py"),
    ),
    ("service code (matches, store, routes)", re.compile("service/")),
]


def part_of(stack: list[str]) -> str:
    for name, pattern in OWNERS:
        if any(pattern.search(f) for f in stack):
            return name
    for f in reversed(stack):  # innermost first
        for name, pattern in INNERMOST:
            if pattern.search(f):
                return name
    return "other (stdlib, ...)"


#: innermost frames of a thread that waits (blocked in C): py-spy counts a thread that is
#: runnable but not running (waiting for a core, or woken and waiting for the GIL) as
#: active, so on a busy machine these show up; they are dropped as idle
IDLE_LEAVES = ("Condition.wait ", "EpollSelector.select ", "Event.wait ", "Thread.join ")


def read_collapsed(path: Path) -> tuple[list[tuple[list[str], int]], int]:
    """py-spy's raw output (one ``frame;frame;… count`` line a stack, outermost first):
    the stacks of threads at work, and the count of samples dropped as idle waits."""
    out, idle = [], 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if stack and n.isdigit():
            frames = [f for f in stack.split(";") if not f.startswith(("process ", "thread "))]
            if frames and frames[-1].startswith(IDLE_LEAVES):
                idle += int(n)
                continue
            out.append((frames, int(n)))
    return out, idle


def table(
    stacks: list[tuple[list[str], int]], idle: int, cpu_ms: float, actions: int, top: int
) -> str:
    """Markdown: ms of server CPU per action by part, then by function (self, inclusive)."""
    total = sum(n for _, n in stacks) or 1
    per = cpu_ms / total  # ms per action that one sample stands for

    def fn_of(frame: str) -> str:
        name, _, where = frame.partition(" (")
        file = where.rsplit(":", 1)[0]
        return f"{name} ({file})"

    parts: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    for frames, n in stacks:
        parts[part_of(frames)] += n
        if frames:
            own[fn_of(frames[-1])] += n
        for f in {fn_of(f) for f in frames}:
            incl[f] += n
    lines = [
        f"Server CPU per action (from /proc over the recording): **{cpu_ms:.2f} ms**, "
        f"{actions} actions, {total} samples of threads at work ({idle} more of threads "
        "blocked in a wait, dropped); each row is its share of the samples times that CPU.",
    ]
    for title, counter, most, shown in (
        ("part of the stack", parts, None, "{}"),
        ("function (self)", own, top, "`{}`"),
        ("function (inclusive)", incl, top, "`{}`"),
    ):
        lines += ["", f"| {title} | ms / action | share |", "|---|---|---|"]
        for name, n in counter.most_common(most):
            lines.append(f"| {shown.format(name)} | {n * per:.3f} | {100 * n / total:.1f}% |")
    return "\n".join(lines) + "\n"


def _record(server: api.Server, game: str, seconds: int, *args: str) -> api.Tally:
    """py-spy on ``server`` for ``seconds`` (``args``: its options) under the bench's load,
    which starts a warm-up before and ends a second after it; the load's tally."""
    tally = api.Tally()
    loader = threading.Thread(
        target=api.load, args=([server], game, tally, seconds + 1.0), daemon=True
    )
    loader.start()
    time.sleep(api.WARMUP)
    spy = subprocess.run(
        [str(PY_SPY), "record", "--pid", str(server.proc.pid), "--duration", str(seconds)]
        + [*args, "--nonblocking", *EXTRA],
        capture_output=True,
        text=True,
    )
    loader.join()
    if spy.returncode != 0:
        raise SystemExit(f"py-spy failed ({spy.returncode}): {spy.stderr.strip()[-500:]}")
    return tally


def live(game: str, seconds: float, rate: int, out: Path, top: int) -> str:
    """Part 1: py-spy on a live ``qahwa serve`` under the bench's load."""
    if not PY_SPY.exists():
        raise SystemExit(f"{PY_SPY} is missing: make .venv/.installed-dev (the dev lock has it)")
    raw = out / "profile.txt"
    with tempfile.TemporaryDirectory(prefix="qahwa-profile-") as tmp:
        kind = "bare" if game == "bare" else "qahwa"
        server = api.Server(kind, f"sqlite:///{tmp}/q.db", Path(tmp))
        try:
            api.load([server], game, api.Tally(), 2.0)  # warm: caches, pools, threads
            rec = ("--rate", str(rate), "--output")
            tally = _record(
                server, game, int(seconds), "--format", "raw", "--full-filenames", *rec, str(raw)
            )
            # a second, shorter recording as py-spy's own flame graph
            _record(server, game, 5, *rec, str(out / "flamegraph.svg"))
        finally:
            server.stop()
    if api.FAILURES:
        raise SystemExit(f"a client failed: {api.FAILURES[0]}")
    stacks, idle = read_collapsed(raw)
    return table(stacks, idle, tally.summary()["cpu"], tally.actions, top)


@contextmanager
def _counting(
    counts: collections.Counter[str], client: threading.Thread, on: threading.Event
) -> Iterator[None]:
    """Count, on every thread but ``client``'s, the server's ``json`` calls and thread-pool
    hand-offs made while ``on`` is set."""
    import anyio.to_thread

    def counted(orig: Callable[..., Any], key: str) -> Callable[..., Any]:
        def call(*a: Any, **k: Any) -> Any:
            if on.is_set() and threading.current_thread() is not client:
                counts[key] += 1
            return orig(*a, **k)

        return call

    import service.store

    dumps_key = (
        "json.dumps (the service's dumps and JSONEncoder.encode; canonical JSON not counted)"
    )
    with ExitStack() as stack:
        for obj, attr, key in (
            (anyio.to_thread, "run_sync", "thread-pool hand-offs (anyio.to_thread.run_sync)"),
            (json, "loads", "json.loads"),
            (json.JSONEncoder, "encode", dumps_key),
        ):
            stack.enter_context(mock.patch.object(obj, attr, counted(getattr(obj, attr), key)))
        # service.store.dumps runs the C encoder itself (no JSONEncoder.encode): counted
        # in every module that holds it by name
        own = service.store.dumps
        for module in list(sys.modules.values()):
            if getattr(module, "dumps", None) is own:
                stack.enter_context(mock.patch.object(module, "dumps", counted(own, dumps_key)))
        yield


def counts(game: str, actions: int, top: int) -> str:
    """Part 2: per action, SQL statements, transactions, hand-offs and JSON calls; then
    part 3 (:func:`_service_profile`) on the same server."""
    from sqlalchemy import event

    from service.server import ServerThread
    from service.settings import Settings

    got: collections.Counter[str] = collections.Counter()
    on = threading.Event()

    def traced(sql: str) -> None:
        if on.is_set():
            verb = sql.split(None, 1)[0].upper()
            got["transactions (BEGIN)" if verb == "BEGIN" else f"SQL {verb}"] += 1

    def checkout(dbapi_conn: Any, *_: Any) -> None:
        # every statement the driver runs (the store's own DB-API cursors included; BEGIN
        # and COMMIT too), whichever layer sent it
        dbapi_conn.set_trace_callback(traced)
        traced_conns.append(dbapi_conn)

    traced_conns: list[Any] = []

    with (
        tempfile.TemporaryDirectory(prefix="qahwa-profile-counts-") as tmp,
        mock.patch.dict(os.environ, api.QAHWA_ENV),
    ):
        settings = Settings(database_url=f"sqlite:///{tmp}/q.db", data_dir=Path(tmp) / "data")
        srv = ServerThread(settings)  # the app made, not serving yet
        db = srv.app.state.db
        listeners = [
            (eng, name, fn)
            for eng in {id(e): e for e in (db._read, db._write, db._read_rows)}.values()
            for name, fn in (("checkout", checkout),)
        ]
        for eng, name, fn in listeners:  # before any thread of the server runs
            event.listen(eng, name, fn)
        with srv:
            env = {
                **os.environ,
                "QAHWA_DATABASE_URL": settings.database_url,
                "QAHWA_DATA_DIR": str(settings.data_dir),
            }
            api.OPERATOR_KEYS[f"127.0.0.1:{srv.port}"] = api.add_operator(env, "profile")
            rot = api.Rotation([srv.url])
            rnd = random.Random(3)
            done = 0
            try:
                with _counting(got, threading.current_thread(), on):
                    while done < actions:
                        m = api._new_match(rot, game)
                        for _ in range(20):  # warm: the engine is cached, the key parsed
                            api._action(rot, m, rnd)
                        on.set()
                        status = "playing"
                        while done < actions and status == "playing":
                            status = api._action(rot, m, rnd)["status"]
                            done += 1
                        on.clear()
                for eng, name, fn in listeners:  # the counters are not the service's cost
                    event.remove(eng, name, fn)
                for conn in traced_conns:
                    conn.set_trace_callback(None)
                service = _service_profile(srv.app.state.service, rot, game, actions, top)
            finally:
                rot.close()
    lines = [
        f"Per action ({game}, {done} actions after 20 warm ones per match; GET state + POST "
        "action), counted in the server's threads:",
        "",
        "| what | per action |",
        "|---|---|",
    ]
    lines += [f"| {k} | {n / max(1, done):.2f} |" for k, n in sorted(got.items())]
    return "\n".join(lines) + "\n\n" + service


def _service_profile(svc: Any, rot: api.Rotation, game: str, actions: int, top: int) -> str:
    """Part 3: the service without HTTP — ``MatchService.state`` and ``.act`` and the
    routes' encoding (``json_response``) called in this thread on 8 matches in turn, under
    cProfile timed by this process's CPU clock (the client's signing left out of the
    profile). Deterministic: every call counted, no sampling."""
    import cProfile
    import io
    import pstats

    from service.front import json_response

    rnd = random.Random(5)
    prof = cProfile.Profile(time.process_time)

    def one(m: api.Play) -> str:
        mover = m.mover
        prof.enable()
        view = svc.state(m.match_id, token=m.tokens[mover])
        json_response(view)
        prof.disable()
        action, sig = m.complete(view, rnd.choice(view["suggested_actions"]))
        assert sig is not None
        prof.enable()
        out = svc.act(
            m.match_id, token=m.tokens[mover], action=action, version=view["version"], sig=sig
        )
        json_response(out)
        prof.disable()
        m.acted(action, out)
        return str(out["status"])

    plays = [api._new_match(rot, game) for _ in range(8)]
    for m in plays:
        for _ in range(5):
            one(m)
    prof = cProfile.Profile(time.process_time)  # the warm-up left out
    for i in range(actions):
        if one(plays[i % 8]) != "playing":
            plays[i % 8] = api._new_match(rot, game)
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    total = stats.total_tt  # type: ignore[attr-defined]
    out.write(
        f"The service without HTTP ({game}, {actions} actions: state + act + the routes' "
        f"encoding, in one thread; cProfile on the process CPU clock, which inflates "
        f"call-heavy code): {1000 * total / actions:.2f} ms CPU per action.\n"
    )
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return "```\n" + out.getvalue().replace(str(Path.cwd()) + "/", "") + "```\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m bench.profile_api", description=__doc__.split("\n")[0]
    )
    p.add_argument(
        "--game",
        default="hokm",
        choices=["hokm", "tawla", "bare"],
        help="bare: the bench's bare endpoint instead of qahwa, for comparison (live only)",
    )
    p.add_argument("--seconds", type=float, default=15.0, help="recording length (default 15)")
    p.add_argument("--rate", type=int, default=250, help="samples a second (default 250)")
    p.add_argument("--out", type=Path, default=Path("profile-api"), help="output directory")
    p.add_argument("--top", type=int, default=30, help="functions listed (default 30)")
    p.add_argument("--actions", type=int, default=400, help="actions counted in part 2")
    p.add_argument("--only", choices=["live", "counts"], help="run part 1 (live) or parts 2 and 3")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    text = f"# qahwa serve, {args.game}: where an action's server CPU goes\n\n"
    if args.only != "counts":
        text += live(args.game, args.seconds, args.rate, args.out, args.top) + "\n"
    if args.only != "live" and args.game != "bare":
        text += counts(args.game, args.actions, args.top)
    (args.out / "table.md").write_text(text)
    print(text)
    print(
        f"written: {args.out}/table.md"
        + (
            ""
            if args.only == "counts"
            else f", {args.out}/profile.txt (collapsed stacks), {args.out}/flamegraph.svg"
        )
    )


if __name__ == "__main__":
    main()

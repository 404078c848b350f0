"""Clients riding through key rotations (``python -m bench rotation``; part of ``make
bench``; issue 49's target).

8 conforming clients (qahwa_client, one thread each, both seats of their own tawla
matches) play on one loopback server while its signing key rotates twice: ``qahwa keys
rotate`` stages a key (announced by the key in force), then the server's clock is moved
past its activation. The rotations happen at fixed counts of actions taken by all clients
together; each client plays until every rotation has happened and its match has ended, at
most ``MAX_MATCHES`` matches (bounded). Every finished transcript is then checked by
``verify``'s core with the receipts of both seats, against the keys one of the clients
trusts at the end (the keys it had at its start, extended by announcements).

Printed: client errors and transcripts that fail to verify (target: 0 and 0), the matches,
actions and receipts per key. A count, not a time: it does not depend on the machine.
"""

from __future__ import annotations

import random
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLIENTS = 8
#: actions of all clients together after which the next step comes
STEPS = ((60, "rotate"), (160, "switch"), (260, "rotate"), (360, "switch"))
MAX_MATCHES = 6
FORFEITS = {"timeout", "no_reveal", "expired", "abandoned", "not_locked", "resigned"}


class SteppedClock:
    """The server's clock: the machine's, plus the seconds :meth:`advance` added."""

    def __init__(self) -> None:
        self.offset = 0.0
        self._guard = threading.Lock()

    def now(self) -> float:
        with self._guard:
            return time.time() + self.offset

    def monotonic(self) -> float:
        with self._guard:
            return time.monotonic() + self.offset

    def advance(self, seconds: float) -> None:
        with self._guard:
            self.offset += seconds


@dataclass
class Figures:
    clients: int = CLIENTS
    errors: list[str] = field(default_factory=list)
    matches: int = 0
    failed_verify: int = 0
    forfeits: int = 0  # matches ended by a timeout or another forfeit (a monitor's count)
    actions: int = 0
    rotations: int = 0
    switches: int = 0
    receipts_by_key: dict[str, int] = field(default_factory=dict)
    announced: list[str] = field(default_factory=list)


def measure(clients: int = CLIENTS, seed: int = 49) -> Figures:
    from qahwa_client import Client
    from service import keys as service_keys
    from service.server import ServerThread
    from service.settings import Settings

    out = Figures(clients=clients)
    clock = SteppedClock()
    lock = threading.Lock()
    steps = list(STEPS)
    finished: list[tuple[Any, Any]] = []  # (client, transcript with both seats' receipts)
    with tempfile.TemporaryDirectory(prefix="qahwa-bench-rotation-") as tmp:
        settings = Settings(
            database_url=f"sqlite:///{Path(tmp) / 'q.db'}",
            data_dir=Path(tmp),
            key_poll_seconds=0.2,
            create_rate_per_minute=100_000,
        )
        with ServerThread(settings, clock=clock) as srv:
            ring = srv.app.state.signer
            operator_key = settings.operator_key_path.read_text(encoding="ascii").strip()

            def step() -> None:
                """After an action: the next step, when the actions reach it."""
                with lock:
                    out.actions += 1
                    if not steps or out.actions < steps[0][0]:
                        return
                    _, what = steps.pop(0)
                    if what == "rotate":
                        with ring.db.write() as s:
                            service_keys.rotate(settings, s, ring.box, clock.now(), 4)
                        out.rotations += 1
                    else:
                        clock.advance(5)
                        out.switches += 1

            def player(n: int) -> None:
                rnd = random.Random(seed * 100 + n)
                try:
                    with Client(srv.url, operator_key=operator_key) as qc:
                        for _ in range(MAX_MATCHES):
                            match = qc.create_match("tawla", {"match_length": 1})
                            match.start()
                            while (view := match.seats[0].state()).status == "playing":
                                seat = match.seats[view.turn or 0]
                                mine = seat.state()
                                if mine.status != "playing" or mine.turn != seat.seat:
                                    continue
                                seat.act(rnd.choice(mine.suggested_actions or mine.legal_actions))
                                step()
                            doc = match.check_transcript()
                            receipts = [r for s in match.seats for r in s.receipts]
                            disputes = [d for s in match.seats for d in s.disputes]
                            if disputes:
                                raise RuntimeError(f"disputed: {disputes[0].message}")
                            with lock:
                                finished.append((qc, (doc, receipts)))
                                if not steps:
                                    break
                        with lock:
                            out.announced = sorted(set(out.announced) | set(qc.announced))
                except Exception as exc:  # a client error: the target is none
                    with lock:
                        out.errors.append(f"client {n}: {type(exc).__name__}: {exc}")

            threads = [threading.Thread(target=player, args=(n,)) for n in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=900)
            import json

            from verify_cli.core import verify_document
            from verify_cli.keys import parse_keys

            for qc, (doc, receipts) in finished:
                out.matches += 1
                for r in receipts:
                    kid = r["signature"]["key_id"]
                    out.receipts_by_key[kid] = out.receipts_by_key.get(kid, 0) + 1
                # the keys this client trusts at the end: its first set and the announced
                # (verify --key extended.json --receipt …)
                pinned = parse_keys(
                    json.dumps(qc.keys_document()), source="file", origin="extended.json"
                )
                report = verify_document(
                    doc, pinned, source=srv.url, draws_limit=0, receipts=receipts
                )
                if report["status"] != "verified":
                    out.failed_verify += 1
                if (doc.get("result") or {}).get("reason") in FORFEITS:
                    out.forfeits += 1
    return out


def run() -> None:
    t0 = time.perf_counter()
    f = measure()
    took = time.perf_counter() - t0
    print(
        f"{f.clients} clients, {f.rotations} rotations ({f.switches} switches): "
        f"{f.matches} matches, {f.actions} actions in {took:.0f} s"
    )
    print(f"  receipts per key: {sorted(f.receipts_by_key.values())}")
    print(f"  client errors: {len(f.errors)} (target 0)")
    for e in f.errors[:3]:
        print(f"    {e}")
    print(f"  transcripts that fail to verify: {f.failed_verify} (target 0)")
    print(f"  matches ended by a forfeit: {f.forfeits} of {f.matches}")

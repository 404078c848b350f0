"""Transcripts verified per second, per game (``python -m bench verify``).

Transcripts are genuine random-bot matches made with ``simulate_match`` and signed, in both
protocols (qahwa-fair/2 with keyed seats: every seat signature is checked too); each is
verified the way ``verify FILE`` does it (commitment, key, replay, result, signatures, the
report's first draws in human form), in this one process. Rates are given per second of wall time and per second of this process's CPU time
(steadier on a shared machine), as matches and as events per second.

Each form is timed in ``REPEATS`` windows of at least ``MIN_SECONDS`` each, verifying all of
its transcripts over and over; the rates printed are those of the window with the most
matches per CPU second (as ``timeit`` advises: the slower windows measure the other jobs on
the machine, not the verifier). ``python -m bench.verify_pair`` compares two trees.

``QAHWA_BENCH_VERIFY_GAMES=tawla,shelem`` measures only the games listed.
"""

from __future__ import annotations

import os
import time
from typing import Any

from fairness import V1, V2, FairProtocol, Signer, public_key_b64
from games.registry import available_games
from games.transcript import simulate_match
from verify_cli.core import VERIFIED, verify_document
from verify_cli.keys import parse_keys

MATCHES = 12
MIN_SECONDS = 0.5
REPEATS = 3


#: (protocol, seats keyed): a conforming qahwa-fair/2 client is keyed, so every action carries
#: a seat signature to check; unkeyed v2 and v1 show what that costs
FORMS = ((V2, True), (V2, False), (V1, False))


def _transcripts(
    game: str, signer: Signer, protocol: FairProtocol, keyed: bool
) -> tuple[list[dict[str, Any]], str]:
    docs = []
    how = "full matches"
    kw: dict[str, Any] = {"signer": signer, "keyed": keyed} if protocol.signed else {}
    for seed in range(MATCHES):
        try:
            doc, _ = simulate_match(game, seed=seed, max_actions=20_000, protocol=protocol, **kw)
        except RuntimeError:
            doc, _ = simulate_match(game, seed=seed, resign_at=200, protocol=protocol, **kw)
            how = "matches resigned after 200 actions"
        docs.append(signer.signed(doc))
    return docs, how


def _window(game: str, docs: list[dict[str, Any]], keys: Any) -> tuple[int, float, float]:
    """Verify ``docs`` over and over for at least MIN_SECONDS: (matches, wall s, CPU s)."""
    done = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while True:
        for doc in docs:
            rep = verify_document(doc, keys, draws_limit=12)
            if rep["status"] != VERIFIED:
                raise SystemExit(
                    f"{game}: a genuine transcript did not verify: "
                    f"{rep['failures'] or rep.get('reason')}"
                )
            done += 1
        elapsed = time.perf_counter() - start
        if elapsed >= MIN_SECONDS:
            break
    return done, elapsed, max(time.process_time() - cpu_start, 1e-9)


def run() -> None:
    signer = Signer.generate()
    keys = parse_keys(public_key_b64(signer.public_key), source="file", origin="bench")
    print(
        f"the fastest of {REPEATS} windows of at least {MIN_SECONDS} s per form "
        "(CPU: this process's CPU seconds)"
    )
    print(
        f"{'game':<14} {'protocol':<19} {'matches/s':>10} {'events/s':>10} "
        f"{'CPU matches/s':>14} {'CPU events/s':>13} {'events/match':>13}  transcripts"
    )
    only = [g for g in os.environ.get("QAHWA_BENCH_VERIFY_GAMES", "").split(",") if g]
    games = [g for g in available_games() + ["rng"] if not only or g in only]
    for game, (protocol, keyed) in [(g, f) for g in games for f in FORMS]:
        docs, how = _transcripts(game, signer, protocol, keyed)
        windows = [_window(game, docs, keys) for _ in range(REPEATS)]
        done, elapsed, cpu = max(windows, key=lambda w: w[0] / w[2])  # matches per CPU s
        events = sum(len(d["events"]) for d in docs) / len(docs)
        form = protocol.name + (" keyed" if keyed else "")
        print(
            f"{game:<14} {form:<19} {done / elapsed:>10.1f} {done * events / elapsed:>10.0f} "
            f"{done / cpu:>14.1f} {done * events / cpu:>13.0f} {events:>13.0f}  {how}"
        )


if __name__ == "__main__":
    run()

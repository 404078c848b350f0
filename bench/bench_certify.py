"""qahwa-certify: its run time at lab sizes, its throughput against the bare derivation, and
its false-failure rate on a perfect generator.

``python -m bench certify`` measures, in one process and one run:

- the kit (``run_battery``) at lab sizes — 1M dice, 200k decks, 20k shuffles of 28 and of 91
  tiles and Mexican Train deals, 100k of each lot test, 1M raw words — (the goal: ≤ 60 s);
- the bare derivation beside it: the same matches, keys, labels and draws with nothing
  counted or tested, and the ratio bare time / kit time, i.e. the kit's throughput as a
  fraction of the bare derivation's (the goal: ≥ 0.5).

``python -m bench.bench_certify calibrate RUNS`` runs the whole battery RUNS times at small
sizes on a perfect generator (``os.urandom`` words through the spec's mappings) and on the
derivation with fresh seeds, and prints how often it failed (the goal: ≤ 1%).
It prints and never fails on timing.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable

from fairness import fresh_label, tiles
from games.deals import hokm_deck
from verify_cli.certify.battery import HOKM_TABLES, UNIFORM_NS, Sizes, run_battery
from verify_cli.certify.sources import DerivationSource, FileSource

LAB = Sizes()
SMALL = Sizes(dice=20_000, decks=1_000, tiles=500, lots=2_000, words=16_384)


def bare(source: DerivationSource, sizes: Sizes) -> None:
    """Every draw the kit makes, in the same order, from the same kind of matches."""
    source.raw(sizes.words)
    run = source.run
    for t in range(sizes.dice // 2):
        label = fresh_label(f"g0/roll/{t % 64 + 1}", run.bytes(32), run.bytes(32))
        source.stream("dice", "tawla", t, 64, label).dice(2)
    for name, game, n, draws, per, h in (
        ("deck52", "hokm", 52, sizes.decks, 16, "h"),
        ("tiles28", "iraqi_domino", 28, sizes.tiles, 8, "r"),
        ("tiles91", "mexican_train", 91, sizes.tiles, 13, "r"),
    ):
        items = list(range(n))
        for i in range(draws):
            source.stream(name, game, i, per, f"{h}{i % per}/shuffle").shuffle(items)
    deck = [t for t in tiles(12) if t != "12-12"]
    for i in range(sizes.tiles):
        source.stream("mexican", "mexican_train", i, 1, "r0/shuffle").shuffle(deck)
    for n in HOKM_TABLES:
        cards = hokm_deck(n)
        for i in range(sizes.lots):
            source.stream(f"hakem{n}", "hokm", i, 1, "hakem").shuffle(cards)
    for n, game in ((4, "qahve"), (2, "shelem")):
        for i in range(sizes.lots):
            source.stream(f"dealer{n}", game, i, 1, "dealer").uniform(n)
    for n in UNIFORM_NS:
        for i in range(sizes.lots):
            source.stream(f"uniform{n}", "rng", i, 256, f"d{i % 256}").uniform(n)


def run() -> None:
    t0 = time.perf_counter()
    b = run_battery(DerivationSource(), LAB)
    kit = time.perf_counter() - t0
    t0 = time.perf_counter()
    bare(DerivationSource(), LAB)
    plain = time.perf_counter() - t0
    verdict = "pass" if all(r.passed for r in b.results) else "FAIL"
    sizes = ", ".join(f"{k} {v:,}" for k, v in LAB.as_dict().items())
    print(
        f"qahwa-certify at lab sizes ({sizes}): {kit:.1f} s, {len(b.results)} tests, "
        f"{verdict} (goal <= 60 s)"
    )
    print("  per step: " + ", ".join(f"{k} {v:.1f} s" for k, v in b.timings.items()))
    print(f"bare derivation, the same draws:       {plain:.1f} s")
    print(f"kit throughput / bare derivation:      {plain / kit:.2f}x (goal >= 0.5)")


def _failed(runs: int, source: Callable[[], FileSource | DerivationSource]) -> tuple[int, int]:
    """Of ``runs`` battery runs on a new ``source()`` each: how often the first sample
    failed (Holm at α = 0.01), and the kit's verdict (a second, independent sample must fail
    too); every 50 runs the counts so far."""
    first = verdict = 0
    for i in range(runs):
        src = source()
        if not all(r.passed for r in run_battery(src, SMALL).results):
            first += 1
            if isinstance(src, DerivationSource):  # a file's words simply go on
                src.sample = 1
            verdict += not all(r.passed for r in run_battery(src, SMALL).results)
        if (i + 1) % 50 == 0:
            print(
                f"  {i + 1} runs: first sample failed {first}, verdict failed {verdict}", flush=True
            )
    return first, verdict


def calibrate(runs: int, derivation_runs: int) -> None:
    """How often a perfect generator fails, and the derivation with fresh seeds."""
    need = SMALL.words_needed() * 4
    t0 = time.perf_counter()
    first, verdict = _failed(runs, lambda: FileSource(os.urandom(need), "urandom"))
    print(
        f"perfect generator (os.urandom words), {runs} runs at {SMALL.as_dict()}: first "
        f"sample failed {first} ({first / runs:.2%} ±{_ci(first, runs):.2%}), verdict "
        f"failed {verdict} ({verdict / runs:.2%}); {time.perf_counter() - t0:.0f} s"
    )
    if derivation_runs:
        first, verdict = _failed(derivation_runs, DerivationSource)
        print(
            f"the derivation, fresh seeds, {derivation_runs} runs: first sample failed "
            f"{first} ({first / derivation_runs:.2%}), verdict failed {verdict}"
        )


def _ci(k: int, n: int) -> float:
    """Half-width of a 95% interval for a rate k/n (normal approximation, floored)."""
    rate = k / n
    return 1.96 * math.sqrt(max(rate * (1 - rate), 1 / n) / n)


if __name__ == "__main__":
    if sys.argv[1:2] == ["calibrate"]:
        calibrate(
            int(sys.argv[2]) if len(sys.argv) > 2 else 1000,
            int(sys.argv[3]) if len(sys.argv) > 3 else 200,
        )
    else:
        run()

"""A browser sealed seat's CPU per four-seat sealed hokm hand against the Python seat's, in one
run taking turns (``python -m bench seat_chromium``; issue 47's target: at most 3×).

The TypeScript side is clients/ts's harness/sealed-bench-page.ts, bundled here with esbuild and
run in Chromium headless (Debian's /usr/bin/chromium under playwright, bench.browser): four
seats deal and play one sealed hokm hand among themselves over a shared log in the page, each
seat's time on its own calls summed (``performance.now()``; the page's main thread runs nothing
else). The renderer process's CPU time over the same hands (the DevTools protocol's
``SystemInfo.getProcessInfo``) is printed beside it. The four seats share the page's cache of
decoded points; a second row empties it before each seat's call (``alone``), so that each
seat decodes what it reads itself, as a seat alone in its browser does. The Python side is
bench.bench_sealed_seat's match of one hand (four ``qahwa_client`` sealed seats, rbcl; its
seats' ``time.process_time``). One warm hand of each first, then ``HANDS`` of each, alternately.
Skipped without node, clients/ts's node_modules or Chromium. Figures are measured, never
judged."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

from bench.bench_sealed_seat import play
from bench.browser import CHROMIUM, launch

ROOT = Path(__file__).resolve().parent.parent
TS = ROOT / "clients" / "ts"
HANDS = 3


def _bundle(out: Path) -> str:
    esbuild = TS / "node_modules" / ".bin" / "esbuild"
    subprocess.run(
        [
            str(esbuild),
            "harness/sealed-bench-page.ts",
            "--bundle",
            "--format=iife",
            "--target=es2022",
            "--minify",
            f"--outfile={out}",
        ],
        cwd=TS,
        check=True,
        capture_output=True,
    )
    return out.read_text(encoding="utf-8")


def _renderer_cpu(cdp: Any) -> float:
    """The renderer processes' CPU seconds so far."""
    info = cdp.send("SystemInfo.getProcessInfo")
    return sum(float(p["cpuTime"]) for p in info["processInfo"] if p["type"] == "renderer")


def run() -> None:
    if not CHROMIUM.exists() or not (TS / "node_modules" / ".bin" / "esbuild").exists():
        print("skipped: needs /usr/bin/chromium and clients/ts's node_modules")
        return
    with tempfile.TemporaryDirectory() as tmp:
        script = _bundle(Path(tmp) / "sealed-bench-page.js")
    py: list[float] = []
    page_ms: list[float] = []
    renderer: list[float] = []
    alone_ms: list[float] = []
    alone_cpu: list[float] = []
    with launch() as browser:
        cdp = browser.new_browser_cdp_session()
        page = browser.new_page()
        page.goto("about:blank")
        page.add_script_tag(content=script)
        hands = "([first, count, alone]) => qahwaSealedHands('hokm', first, count, alone)"
        page.evaluate(hands, [0, 1, False])  # warm (tables, item points)
        play(0)
        for k in range(1, HANDS + 1):
            cpu, n = play(k)
            py.append(1000 * cpu / n)
            for alone, ms, cpus in ((False, page_ms, renderer), (True, alone_ms, alone_cpu)):
                c0 = _renderer_cpu(cdp)
                ms.extend(page.evaluate(hands, [k, 1, alone]))
                cpus.append(1000 * (_renderer_cpu(cdp) - c0))
    p = sum(py) / len(py)
    print(f"sealed hokm, four seats, {HANDS} hands of each after a warm one, taking turns")
    print(f"Python seat (rbcl): the four seats' CPU per hand: {p:.0f} ms")
    for what, ms, cpus in (
        ("", page_ms, renderer),
        (", each seat decoding what it reads itself", alone_ms, alone_cpu),
    ):
        t = sum(ms) / len(ms)
        r = sum(cpus) / len(cpus)
        print(
            f"TypeScript seat in Chromium headless{what}: the four seats' time per hand: "
            f"{t:.0f} ms (the renderer's CPU: {r:.0f} ms); Chromium / Python: {t / p:.2f}× "
            f"(the renderer's CPU: {r / p:.2f}×; target ≤ 3×)"
        )


if __name__ == "__main__":
    run()

"""The player's own verify page against the CLI and against Pyodide itself (``python -m bench
page``; part of ``make bench``; docs/performance.md "the player's own verify page" tells more
and what it found).

A keyed qahwa-fair/2 five-point tawla transcript is pasted with the server's key into
``verify page`` (served from this install on 127.0.0.1, as a player runs it), to the full
verdict (the rules replayed by Pyodide in the worker). Each the median of ``RUNS``, in one
run: **warm** (Python already running, the transcript checked again) against the ``verify``
CLI on the same transcript (target, issue 30: ≤ 4×); **cold** (a new browser context, from
navigation to the full verdict) against a blank page on the same origin that loads the same
Pyodide runtime and runs nothing (target ≤ 2×). Then a sealed hokm match for four
(qahwa-fair/3, two house seats): the warm page's full verdict (the page's sealed-verify.js)
against the CLI's (rbcl) on the same transcript (target, issue 34: ≤ 4×). Absolute times
are printed beside the ratios; a benchmark never fails on time.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from bench.browser import CHROMIUM, launch, paste_and_verify
from fairness import V2, Signer, public_key_b64
from games.transcript import simulate_match
from qahwa_page.pyodide import PYODIDE_VERSION, RUNTIME_DIR, runtime_installed
from qahwa_page.serve import PageServer

RUNS = 3
REPLAY_MS = 180_000  # the full verdict waited for up to this
VERIFY = str(Path(sys.executable).with_name("verify"))
#: a page on the page's origin that loads the same runtime the same way and runs nothing
BLANK = f"""<!doctype html><meta charset="utf-8"><title>blank</title>
<script type="module">
const base = new URL('/static/pyodide/{PYODIDE_VERSION}/', location.href).href;
const mod = await import(base + 'pyodide.mjs');
await mod.loadPyodide({{ indexURL: base, stdout: () => {{}}, stderr: () => {{}} }});
window.__done = true;
</script>"""


def _signed(game: str, ruleset: dict[str, Any], seed: int, **kw: Any) -> tuple[dict[str, Any], str]:
    """(a keyed transcript of ``game`` signed by a new key, that key in base64)."""
    signer = Signer.generate()
    doc, _ = simulate_match(game, ruleset, seed=seed, protocol=V2, signer=signer, keyed=True, **kw)
    return doc, public_key_b64(signer.public_key)


def cli_seconds(path: Path, key_file: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [VERIFY, str(path), "--key", str(key_file), "--jobs", "1"],
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"verify failed on the bench transcript: {proc.stdout[-2000:]}")
    return took


def cli_runs(text: str, key: str) -> list[float]:
    """The ``verify`` CLI on the transcript ``text`` with the server's ``key``, both read from
    files as a player passes them: seconds for each of ``RUNS`` runs."""
    with tempfile.TemporaryDirectory(prefix="qahwa-bench-page-") as tmp:
        path, key_file = Path(tmp) / "t.json", Path(tmp) / "server.pub"
        path.write_text(text, encoding="utf-8")
        key_file.write_text(key + "\n", encoding="ascii")
        return [cli_seconds(path, key_file) for _ in range(RUNS)]


@contextmanager
def _page_server() -> Iterator[PageServer]:
    """The verify page served from this install on 127.0.0.1, stopped afterwards."""
    with PageServer("127.0.0.1", 0, RUNTIME_DIR) as server:  # server_close() at the end
        server.start()
        try:
            yield server
        finally:
            server.shutdown()


def cold_page(browser: Any, url: str, text: str, key: str) -> tuple[float, float, str]:
    """A new context: (seconds from navigation to the full verdict, then the warm check of
    the same transcript on that page, its verdict)."""
    with closing(browser.new_context()) as ctx:
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(url)
        _, verdict = paste_and_verify(page, text, key, REPLAY_MS)
        cold = time.perf_counter() - t0
        warm, again = paste_and_verify(page, text, key, REPLAY_MS)
        return cold, warm, verdict if verdict == again else f"{verdict}/{again}"


def blank_page(browser: Any, base: str) -> float:
    with closing(browser.new_context()) as ctx:
        page = ctx.new_page()
        page.route(
            f"{base}/blank", lambda route: route.fulfill(content_type="text/html", body=BLANK)
        )
        t0 = time.perf_counter()
        page.goto(f"{base}/blank")
        page.wait_for_function("() => window.__done === true", timeout=180_000)
        return time.perf_counter() - t0


def run_sealed(browser: Any | None = None) -> None:
    """The sealed hokm row: the warm page's full verdict against the ``verify`` CLI's, on the
    same transcript: a keyed, timed qahwa-fair/3 whole sealed hokm match for four, seats 1
    and 3 the house's."""
    if browser is None:
        with launch() as b:
            run_sealed(b)
        return
    doc, key = _signed("hokm", {"deal": "sealed"}, 34, timed=True, house=(1, 3))
    assert doc["protocol"] == "qahwa-fair/3"
    text = json.dumps(doc)
    hands = sum(
        1
        for e in doc["events"]
        if e.get("type") == "action"
        and (e.get("action") or {}).get("step") == "key"
        and e.get("seat") == 0
    )
    cli = cli_runs(text, key)
    warm: list[float] = []
    verdicts: set[str] = set()
    with _page_server() as server, closing(browser.new_context()) as ctx:
        page = ctx.new_page()
        page.goto(server.url + "?lang=en")
        for i in range(RUNS + 1):
            took, verdict = paste_and_verify(page, text, key, REPLAY_MS)
            verdicts.add(verdict)
            if i:  # the first check starts Python and loads the verifier: warm only
                warm.append(took)
    print(
        f"sealed hokm for 4 (2 house seats), qahwa-fair/3: {hands} hands, "
        f"{len(doc['events'])} events, {len(text) / 1e6:.2f} MB; medians of {RUNS}"
    )
    _report({"verify CLI": cli, "warm page": warm}, verdicts)


def run() -> None:
    if not CHROMIUM.exists():
        print("skipped: needs Debian's /usr/bin/chromium")
        return
    if not runtime_installed():
        print("skipped: the Pyodide runtime is not installed (make pyodide)")
        return
    doc, key = _signed("tawla", {"match_length": 5}, 5)
    text = json.dumps(doc)
    print(
        f"keyed five-point tawla, qahwa-fair/2: {len(doc['events'])} events, "
        f"{len(text) / 1e6:.2f} MB, scores {doc['result']['scores']}"
    )
    times: dict[str, list[float]] = {"verify CLI": cli_runs(text, key)}
    for k in ("warm page", "blank Pyodide", "cold page"):
        times[k] = []
    verdicts: set[str] = set()
    with _page_server() as server, launch() as browser:
        base = server.url.removesuffix("/verify")
        for _ in range(RUNS):  # interleaved, so a busy moment hits both alike
            times["blank Pyodide"].append(blank_page(browser, base))
            c, w, v = cold_page(browser, server.url + "?lang=en", text, key)
            times["cold page"].append(c)
            times["warm page"].append(w)
            verdicts.add(v)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; medians of {RUNS}")
        _report(times, verdicts)
        run_sealed(browser)


def _report(times: dict[str, list[float]], verdicts: set[str]) -> None:
    """Each one's median and runs, the page's verdicts, then the ratios to their targets."""
    med = {k: statistics.median(xs) for k, xs in times.items()}
    for name, xs in times.items():
        print(f"{name:<17} {med[name]:6.2f} s   ({', '.join(f'{x:.2f}' for x in xs)})")
    print(f"page verdict: {', '.join(sorted(verdicts))}")
    print(f"warm / CLI   = {med['warm page'] / med['verify CLI']:.2f}x  (target <= 4x)")
    if "cold page" in med:
        print(f"cold / blank = {med['cold page'] / med['blank Pyodide']:.2f}x  (target <= 2x)")

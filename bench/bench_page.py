"""The player's own verify page against the CLI and against Pyodide itself (``python -m bench
page``; part of ``make bench``).

A keyed qahwa-fair/2 five-point tawla transcript (random bots, every seat's events signed) is
checked on ``verify page`` — the page served from this install on 127.0.0.1, as a player runs
it — by pasting it with the server's key, to the full verdict (the rules replayed by Pyodide
in the worker, ``data-replay="done"``). Measured in one run, each the median of ``RUNS``:

- **warm**: the page with Python already running, the transcript checked again; against the
  ``verify`` CLI on the same transcript (a new process each time, as a player runs it).
  Target (issue 30): warm ≤ 4× the CLI.
- **cold**: a new browser context (empty HTTP cache, code cache and CacheStorage) from
  navigation to the full verdict; against a blank page on the same origin that loads the same
  Pyodide runtime (``loadPyodide``) and runs nothing. Target: cold ≤ 2× the blank page.

Then a sealed hokm match for four (qahwa-fair/3, two house seats, played by the simulated
sealed seats, keyed and signed): the warm page's full verdict (the sealed engines checking
every key, shuffle proof, share, opening and revealed key through the page's own
sealed-verify.js over the vendored @noble/curves) against the ``verify`` CLI's (rbcl) on the
same transcript. Target (issue 34): the page within 4× the CLI.

Absolute times are printed beside the ratios. Numbers only: a benchmark never fails on time,
and they depend on how busy the machine is (the load average is printed too).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.browser import CHROMIUM, launch, paste_and_verify
from fairness import V2, Signer, public_key_b64
from games.transcript import simulate_match
from qahwa_page.pyodide import PYODIDE_VERSION, RUNTIME_DIR, runtime_installed
from qahwa_page.serve import PageServer

RUNS = 3
VERIFY = str(Path(sys.executable).with_name("verify"))
#: a page on the page's origin that loads the same runtime the same way and runs nothing
BLANK = f"""<!doctype html><meta charset="utf-8"><title>blank</title>
<script type="module">
const base = new URL('/static/pyodide/{PYODIDE_VERSION}/', location.href).href;
const mod = await import(base + 'pyodide.mjs');
await mod.loadPyodide({{ indexURL: base, stdout: () => {{}}, stderr: () => {{}} }});
window.__done = true;
</script>"""


def transcript() -> tuple[dict[str, Any], str]:
    """(a keyed v2 five-point tawla transcript signed by a new key, that key in base64)."""
    signer = Signer.generate()
    doc, _ = simulate_match(
        "tawla", {"match_length": 5}, seed=5, protocol=V2, signer=signer, keyed=True
    )
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


def _verdict(page: Any, text: str, key: str) -> tuple[float, str]:
    """Paste, verify, wait for the full verdict: (seconds from the click, verdict)."""
    return paste_and_verify(page, text, key, replay_ms=180_000)


def cli_runs(text: str, key: str) -> list[float]:
    """The ``verify`` CLI on the transcript ``text`` with the server's ``key``, both read from
    files as a player passes them: seconds for each of ``RUNS`` runs."""
    with tempfile.TemporaryDirectory(prefix="qahwa-bench-page-") as tmp:
        path, key_file = Path(tmp) / "t.json", Path(tmp) / "server.pub"
        path.write_text(text, encoding="utf-8")
        key_file.write_text(key + "\n", encoding="ascii")
        return [cli_seconds(path, key_file) for _ in range(RUNS)]


def cold_page(browser: Any, url: str, text: str, key: str) -> tuple[float, float, str]:
    """A new context: (seconds from navigation to the full verdict, then the warm check of
    the same transcript on that page, its verdict)."""
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(url)
        _, verdict = _verdict(page, text, key)
        cold = time.perf_counter() - t0
        warm, again = _verdict(page, text, key)
        return cold, warm, verdict if verdict == again else f"{verdict}/{again}"
    finally:
        ctx.close()


def blank_page(browser: Any, base: str) -> float:
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.route(
            f"{base}/blank", lambda route: route.fulfill(content_type="text/html", body=BLANK)
        )
        t0 = time.perf_counter()
        page.goto(f"{base}/blank")
        page.wait_for_function("() => window.__done === true", timeout=180_000)
        return time.perf_counter() - t0
    finally:
        ctx.close()


def sealed_transcript() -> tuple[dict[str, Any], str]:
    """(a keyed, timed qahwa-fair/3 transcript of a whole sealed hokm match for four, seats 1
    and 3 the house's, signed by a new key; that key in base64)."""
    signer = Signer.generate()
    doc, _ = simulate_match(
        "hokm",
        {"deal": "sealed"},
        seed=34,
        protocol=V2,
        signer=signer,
        keyed=True,
        timed=True,
        house=(1, 3),
    )
    assert doc["protocol"] == "qahwa-fair/3"
    return doc, public_key_b64(signer.public_key)


def run_sealed(browser: Any | None = None) -> None:
    """The sealed hokm row: the warm page's full verdict against the ``verify`` CLI's, on the
    same transcript."""
    if browser is None:
        with launch() as b:
            run_sealed(b)
        return
    doc, key = sealed_transcript()
    text = json.dumps(doc)
    hands = sum(
        1
        for e in doc["events"]
        if e.get("type") == "action"
        and (e.get("action") or {}).get("step") == "key"
        and e.get("seat") == 0
    )
    cli = cli_runs(text, key)
    server = PageServer("127.0.0.1", 0, RUNTIME_DIR)
    server.start()
    warm: list[float] = []
    verdicts: set[str] = set()
    try:
        ctx = browser.new_context()
        try:
            page = ctx.new_page()
            page.goto(server.url + "?lang=en")
            for i in range(RUNS + 1):
                took, verdict = _verdict(page, text, key)
                verdicts.add(verdict)
                if i:  # the first check starts Python and loads the verifier: warm only
                    warm.append(took)
        finally:
            ctx.close()
    finally:
        server.shutdown()
        server.server_close()
    med = statistics.median
    print(
        f"sealed hokm for 4 (2 house seats), qahwa-fair/3: {hands} hands, "
        f"{len(doc['events'])} events, {len(text) / 1e6:.2f} MB; medians of {RUNS}"
    )
    print(f"verify CLI        {med(cli):6.2f} s   ({', '.join(f'{x:.2f}' for x in cli)})")
    print(f"warm page         {med(warm):6.2f} s   ({', '.join(f'{x:.2f}' for x in warm)})")
    print(f"page verdict: {', '.join(sorted(verdicts))}")
    print(f"warm / CLI   = {med(warm) / med(cli):.2f}x  (target <= 4x)")


def run() -> None:
    if not CHROMIUM.exists():
        print("skipped: needs Debian's /usr/bin/chromium")
        return
    if not runtime_installed():
        print("skipped: the Pyodide runtime is not installed (make pyodide)")
        return
    doc, key = transcript()
    text = json.dumps(doc)
    print(
        f"keyed five-point tawla, qahwa-fair/2: {len(doc['events'])} events, "
        f"{len(text) / 1e6:.2f} MB, scores {doc['result']['scores']}"
    )
    cli = cli_runs(text, key)
    server = PageServer("127.0.0.1", 0, RUNTIME_DIR)
    server.start()
    cold: list[float] = []
    warm: list[float] = []
    blank: list[float] = []
    verdicts: set[str] = set()
    try:
        base = server.url.removesuffix("/verify")
        with launch() as browser:
            for _ in range(RUNS):  # interleaved, so a busy moment hits both alike
                blank.append(blank_page(browser, base))
                c, w, v = cold_page(browser, server.url + "?lang=en", text, key)
                cold.append(c)
                warm.append(w)
                verdicts.add(v)
            report_tawla(cli, warm, blank, cold, verdicts)
            run_sealed(browser)
    finally:
        server.shutdown()
        server.server_close()


def report_tawla(
    cli: list[float], warm: list[float], blank: list[float], cold: list[float], verdicts: set[str]
) -> None:
    med = statistics.median
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; medians of {RUNS}")
    print(f"verify CLI        {med(cli):6.2f} s   ({', '.join(f'{x:.2f}' for x in cli)})")
    print(f"warm page         {med(warm):6.2f} s   ({', '.join(f'{x:.2f}' for x in warm)})")
    print(f"blank Pyodide     {med(blank):6.2f} s   ({', '.join(f'{x:.2f}' for x in blank)})")
    print(f"cold page         {med(cold):6.2f} s   ({', '.join(f'{x:.2f}' for x in cold)})")
    print(f"page verdict: {', '.join(sorted(verdicts))}")
    print(
        f"warm / CLI   = {med(warm) / med(cli):.2f}x  (target <= 4x)\n"
        f"cold / blank = {med(cold) / med(blank):.2f}x  (target <= 2x)"
    )

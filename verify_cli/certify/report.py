"""report.json and report.html: every test, the sample sizes, the verdict, the code's
fingerprints and, with the ``certify`` extra (matplotlib), plots as embedded PNGs."""

from __future__ import annotations

import base64
import hashlib
import html
import importlib
import io
import json
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fairness
import games

from .battery import ALPHA, Battery, Sizes, TestResult

EXTRA_HINT = (
    "plots need the certify extra (matplotlib): pip install --require-hashes "
    "-r requirements/verify-certify.txt, or pip install 'qahwa-verify[certify]'"
)


def fingerprints() -> dict[str, Any]:
    """SHA-256 of every source file of fairness/, games/ and the kit, and of them all."""
    kit = Path(__file__).parent
    roots = {
        "fairness": Path(fairness.__file__).parent,
        "games": Path(games.__file__).parent,
        "verify_cli/certify": kit,
    }
    files: dict[str, str] = {}
    for prefix, root in roots.items():
        for path in sorted(root.rglob("*.py")):
            rel = f"{prefix}/{path.relative_to(root).as_posix()}"
            files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    combined = hashlib.sha256(
        "".join(f"{h}  {p}\n" for p, h in sorted(files.items())).encode()
    ).hexdigest()
    return {
        "files": files,
        "combined": combined,
        "combined_is": "SHA-256 of the lines '<sha256>  <path>\\n' sorted by path",
    }


def build(
    battery: Battery,
    sizes: Sizes,
    source: dict[str, Any],
    elapsed: float,
    passed: bool,
    second: Battery | None = None,
) -> dict[str, Any]:
    failed = [r.name for r in battery.results if not r.passed]
    confirmation: dict[str, Any] | None = None
    if second is not None:
        confirmation = {
            "why": "the first sample failed; the run fails only if this independent sample "
            "fails too",
            "tests_failed": [r.name for r in second.results if not r.passed],
            "tests": [r.to_json() for r in second.results],
        }
    return {
        "kit": "qahwa-certify",
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "verdict": "pass" if passed else "fail",
        "alpha": ALPHA,
        "correction": "Holm–Bonferroni over every test (family-wise error ≤ α); a failing "
        "first sample is confirmed on a second, independent sample",
        "tests_total": len(battery.results),
        "tests_failed": failed,
        "sizes": sizes.as_dict(),
        "source": source,
        "seconds": round(elapsed, 3),
        "seconds_per_step": {k: round(v, 3) for k, v in battery.timings.items()},
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "fingerprints": fingerprints(),
        "tests": [r.to_json() for r in battery.results],
        "confirmation": confirmation,
    }


# -- HTML -------------------------------------------------------------------------------------


def _plots(battery: Battery) -> list[tuple[str, str]] | None:
    """(title, base64 PNG) per plot, or None without matplotlib."""
    try:
        matplotlib: Any = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        return None
    out: list[tuple[str, str]] = []

    def png(fig: Any, title: str) -> None:
        buf = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buf, format="png", dpi=90)
        plt.close(fig)
        out.append((title, base64.b64encode(buf.getvalue()).decode("ascii")))

    def bars(r: TestResult) -> None:
        fig, ax = plt.subplots(figsize=(min(9.0, max(4.0, 0.22 * len(r.observed) + 2)), 3))
        xs = range(len(r.observed))
        ax.bar(xs, r.observed, color="#4c78a8", label="observed")
        ax.plot(xs, r.expected, "o-" if len(xs) < 40 else "-", color="#e45756", label="expected")
        step = max(1, len(xs) // 16)
        ax.set_xticks(list(xs)[::step], r.labels[::step], fontsize=7)
        lo = min(min(r.observed), min(r.expected))
        hi = max(max(r.observed), max(r.expected))
        ax.set_ylim(max(0.0, lo - 0.15 * (hi - lo + 1)), hi + 0.1 * (hi - lo + 1))
        ax.set_title(f"{r.name}: p = {r.p_value:.3g}", fontsize=9)
        ax.legend(fontsize=7)
        png(fig, f"{r.name}: observed vs expected ({r.note})")

    for r in battery.results:
        if r.group in ("dice", "lots", "uniform", "mexican") and len(r.observed) > 1:
            bars(r)
    for m in battery.matrices:
        e = m.draws / m.n
        z = [[(c - e) / e**0.5 for c in row] for row in m.counts]
        fig, ax = plt.subplots(figsize=(5.5, 4.6))
        im = ax.imshow(z, cmap="RdBu_r", vmin=-4, vmax=4, interpolation="nearest")
        ax.set_xlabel("position")
        ax.set_ylabel("item (canonical order)")
        ax.set_title(f"{m.name}: (observed − expected)/√expected, E = {e:,.1f}", fontsize=9)
        fig.colorbar(im, ax=ax, shrink=0.8)
        png(fig, f"{m.name}: each item's position over {m.draws:,} shuffles")
        fig, ax = plt.subplots(figsize=(6, 2.6))
        per_pos = [sum(row[p] for row in m.counts[: m.n // 4]) for p in range(m.n)]
        ax.plot(range(m.n), per_pos, ".-", color="#4c78a8", label="observed")
        ax.axhline(e * (m.n // 4), color="#e45756", label="expected")
        ax.set_xlabel("position")
        ax.set_title(
            f"{m.name}: how often the first {m.n // 4} items land at each position", fontsize=9
        )
        ax.legend(fontsize=7)
        png(fig, f"{m.name}: observed vs expected per position")
    fig, ax = plt.subplots(figsize=(5, 3))
    ps = [r.p_value for r in battery.results]
    ax.hist(ps, bins=20, range=(0, 1), color="#4c78a8", edgecolor="white")
    ax.axhline(len(ps) / 20, color="#e45756", label="uniform (a perfect generator)")
    ax.set_xlabel("p-value")
    ax.set_title(f"p-values of all {len(ps)} tests", fontsize=9)
    ax.legend(fontsize=7)
    png(fig, "p-value histogram: under a perfect generator p-values are uniform on [0, 1]")
    return out


def write_html(path: Path, report: dict[str, Any], battery: Battery, plot: bool = True) -> bool:
    """Write report.html; True when it has plots."""
    plots = _plots(battery) if plot else None
    hint = EXTRA_HINT if plot else "plots not drawn (--no-plots)"
    e = html.escape
    rows = "\n".join(
        f"<tr class={'ok' if t['pass'] else 'bad'}><td>{e(t['name'])}</td>"
        f"<td>{t['statistic']:.3f}</td><td>{t['df']}</td><td>{t['p_value']:.4g}</td>"
        f"<td>{t['p_adjusted']:.4g}</td><td>{'pass' if t['pass'] else 'FAIL'}</td>"
        f"<td>{t['n']:,}</td><td>{e(t['note'])}</td></tr>"
        for t in report["tests"]
    )
    figs = (
        "<p class=note>" + e(hint) + "</p>"
        if plots is None
        else "\n".join(
            f"<figure><img alt='{e(title)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{e(title)}</figcaption></figure>"
            for title, data in plots
        )
    )
    src = report["source"]
    sizes = ", ".join(f"{k} {v:,}" for k, v in report["sizes"].items())
    verdict = report["verdict"].upper()
    c = report.get("confirmation")
    conf = ""
    if c is not None:
        second = f"failed {e(', '.join(c['tests_failed']))}." if c["tests_failed"] else ""
        conf = " The first sample failed, so a second, independent sample was drawn: it " + (
            second or "passed every test."
        )
    doc = f"""<!doctype html>
<html lang=en><head><meta charset=utf-8><title>qahwa-certify: {verdict}</title>
<style>
body{{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:1100px}}
table{{border-collapse:collapse;font-size:12px}} td,th{{border:1px solid #ccc;padding:2px 6px}}
tr.bad{{background:#fdd}} .verdict{{font-size:1.6em;font-weight:bold}}
.pass{{color:#176}} .fail{{color:#b00}} figure{{display:inline-block;margin:6px}}
img{{max-width:100%}} figcaption{{font-size:11px;max-width:520px}} .note{{background:#ffd;padding:6px}}
code{{font-size:11px}}
</style></head><body>
<h1>qahwa-certify report</h1>
<p class="verdict {report["verdict"]}">Verdict: {verdict}</p>
<p>{len(report["tests"])} tests; family-wise α = {report["alpha"]} ({e(report["correction"])});
failed in the first sample: {e(", ".join(report["tests_failed"]) or "none")}.{conf}</p>
<p>Source: {e(json.dumps(src, ensure_ascii=False))}<br>Sizes: {e(sizes)}<br>
Time: {report["seconds"]} s; created {e(report["created_at"])}; Python {e(report["python"])}</p>
<p>Code fingerprint (fairness/, games/, the kit): <code>{report["fingerprints"]["combined"]}</code>
(per file in report.json)</p>
<h2>Plots</h2>
{figs}
<h2>Tests</h2>
<table><tr><th>test</th><th>statistic</th><th>df</th><th>p</th><th>p (Holm)</th><th></th>
<th>n</th><th>what</th></tr>
{rows}
</table>
</body></html>
"""
    path.write_text(doc, encoding="utf-8")
    return plots is not None


def write(out: Path, report: dict[str, Any], battery: Battery, plot: bool = True) -> bool:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(
        json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    return write_html(out / "report.html", report, battery, plot)

"""``verify certify`` (alias ``qahwa-certify``): the RNG certification kit
(docs/certification.md). :data:`HELP` gives its use; ``--raw OUT --bytes N`` only dumps the
raw derivation stream. Exit codes: 0 every test passed, 1 one failed, 2 unusable input.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any, TypeVar

import click

from .battery import ALPHA, Battery, Sizes, run_battery
from .report import EXTRA_HINT, build, write
from .sources import DerivationSource, FileSource, SourceExhausted, raw_chunks, raw_key

MAX_RAW_BYTES = 1 << 40
_CHUNK_WORDS = 1 << 18


def _me() -> str:
    """How the kit was called: ``verify certify``, or its alias ``qahwa-certify``."""
    ctx = click.get_current_context(silent=True)
    return ctx.command_path if ctx is not None else "qahwa-certify"


class Unusable(click.ClickException):
    """Input the kit cannot use: exit 2 (``verify certify`` prints it as its other errors)."""

    exit_code = 2


def dump_raw(out: str, nbytes: int, seed: str | None) -> dict[str, Any]:
    """Write ``nbytes`` of the raw derivation stream to ``out`` (``-`` = stdout)."""
    key, info = raw_key(seed)
    sha = hashlib.sha256()
    # one stream, read in chunks: Stream(K, "raw") words 0, 1, 2, …
    chunks = raw_chunks(key, str(info["label"]), _CHUNK_WORDS)
    left = nbytes
    with nullcontext(sys.stdout.buffer) if out == "-" else open(out, "wb") as sink:
        while left > 0:
            chunk = next(chunks)[:left]
            sink.write(chunk)
            sha.update(chunk)
            left -= len(chunk)
    return {**info, "bytes": nbytes, "sha256": sha.hexdigest(), "file": out}


def _read_source(path: str, sizes: Sizes) -> tuple[bytes, Sizes]:
    """The file's bytes and the sizes to run: ``sizes``, or scaled down to fit the file
    (said on stderr); a file too short for even the smallest sizes is unusable."""
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        raise Unusable(f"--source {path}: is a directory") from None
    except OSError as exc:
        raise Unusable(f"--source {path}: cannot read it ({exc.strerror or exc})") from None
    need = sizes.words_needed() * 4
    fit = sizes.scaled_to(len(data))
    if fit is None:
        least = Sizes.smallest().words_needed() * 4
        raise Unusable(
            f"--source {path}: {len(data):,} bytes is too short: even the smallest sizes "
            f"({Sizes.smallest().args()}) need at least {least:,} bytes ({least // 4:,} big-endian "
            f"32-bit words); these sizes need {need:,} bytes"
        )
    if fit != sizes:
        click.echo(
            f"{_me()}: --source {path} holds {len(data):,} bytes, these sizes need "
            f"{need:,}: sizes scaled to fit the file: {fit.args()}",
            err=True,
        )
    return data, fit


def certify(
    out: Path,
    sizes: Sizes,
    seed: str | None,
    source_file: str | None,
    quiet: bool = False,
    plot: bool = True,
) -> tuple[int, dict[str, Any]]:
    """Run the kit and write the reports; (exit code 0/1, report)."""
    source: FileSource | DerivationSource
    if source_file is not None:
        data, sizes = _read_source(source_file, sizes)
        source = FileSource(data, source_file)
    else:
        source = DerivationSource(seed)

    def progress(step: str) -> None:
        if not quiet:
            click.echo(f"{_me()}: {step} …", err=True)

    t0 = time.perf_counter()
    try:
        battery = run_battery(source, sizes, progress)
        second: Battery | None = None
        if not all(r.passed for r in battery.results):
            # a second, independent sample before a fail: new matches and seeds (or the
            # file's next words); the run fails only if that sample fails too
            progress("confirmation sample")
            if isinstance(source, DerivationSource):
                source.sample = 1
            second = run_battery(source, sizes, progress)
    except SourceExhausted as exc:
        raise Unusable(
            f"--source {exc}; it needs about {sizes.words_needed() * 4:,} bytes for these sizes"
        ) from None
    elapsed = time.perf_counter() - t0
    passed = second is None or all(r.passed for r in second.results)
    report = build(battery, sizes, source.describe(), elapsed, passed, second)
    try:
        plotted = write(out, report, battery, plot)
    except OSError as exc:
        raise Unusable(f"--out {out}: cannot write the report ({exc.strerror or exc})") from None
    if not quiet:
        click.echo(
            f"{_me()}: {'PASS' if passed else 'FAIL'} — {len(battery.results)} "
            f"tests at family-wise α = {ALPHA} (Holm), {elapsed:.1f} s; "
            f"report: {out / 'report.json'}, {out / 'report.html'}"
        )
        for label, b in (("first sample", battery), ("confirmation sample", second)):
            for r in b.results if b is not None else []:
                if not r.passed:
                    click.echo(
                        f"  {label}: failed {r.name}: statistic {r.statistic:.2f}, "
                        f"df {r.df}, p = {r.p_value:.3g} (Holm {r.p_adjusted:.3g})"
                    )
        if second is not None and passed:
            click.echo(
                "  the first sample failed, the independent confirmation sample "
                "passed: a pass (docs/certification.md)"
            )
        if plot and not plotted:
            click.echo(f"{_me()}: report.html has no plots: {EXTRA_HINT}", err=True)
    return (0 if passed else 1), report


F = TypeVar("F", bound=Callable[..., Any])
_SIZE_HELP = {
    "dice": "Dice to roll (two per roll, a multiple of 4).",
    "decks": "Decks of 52 to shuffle.",
    "tiles": "Shuffles of 28 tiles and of 91 tiles, and Mexican Train deals (each).",
    "lots": "Draws per lot test (first hakem per table size, dealer lots, uniform(n)).",
    "words": "Raw 32-bit words for the bit and byte frequency tests.",
}
_SIZE_OPTIONS = [
    click.option(
        f"--{name}",
        type=int,
        default=getattr(Sizes, name),
        show_default=True,
        metavar="N",
        help=text,
    )
    for name, text in _SIZE_HELP.items()
]


def size_options(f: F) -> F:
    """The sample-size options (--dice, --decks, --tiles, --lots, --words)."""
    for option in reversed(_SIZE_OPTIONS):
        f = option(f)
    return f


def sizes_from(args: dict[str, int]) -> Sizes:
    try:
        return Sizes(**args)
    except (TypeError, ValueError) as exc:
        raise Unusable(str(exc)) from None


HELP = """Certify the qahwa-fair/2 random number generator: scaled-outcome tests (dice faces,
serial pairs and runs, card and tile positions, hokm's first hakem, the dealer lots,
uniform(n) over awkward n, Mexican Train hands) and raw bit/byte tests, chi-square with
Holm-Bonferroni at family-wise alpha = 0.01. Writes DIR/report.json and DIR/report.html.

\b
Exit codes: 0 pass, 1 fail, 2 unusable input.
"""


@click.command(
    help=HELP, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.option(
    "--out",
    "out",
    default="certify-report",
    show_default=True,
    metavar="DIR",
    help="Where report.json and report.html go.",
)
@size_options
@click.option(
    "--seed",
    metavar="S",
    help="Derive every seed of the run from S "
    "(reproducible); default: fresh 64-byte server seeds from the OS CSPRNG.",
)
@click.option(
    "--source",
    "source_file",
    metavar="FILE",
    help="Read big-endian 32-bit words from FILE instead of the derivation.",
)
@click.option(
    "--raw",
    "raw_out",
    metavar="OUT",
    help="Only dump the raw derivation stream to OUT ('-' = stdout), with --bytes.",
)
@click.option("--bytes", "raw_bytes", type=int, metavar="N", help="How many bytes --raw writes.")
@click.option("--no-plots", is_flag=True, help="Draw no plots (report.html has the tables).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
def main(
    out: str,
    seed: str | None,
    source_file: str | None,
    raw_out: str | None,
    raw_bytes: int | None,
    no_plots: bool,
    quiet: bool,
    **size_args: int,
) -> int:
    if raw_out is not None or raw_bytes is not None:
        if raw_out is None or raw_bytes is None:
            raise Unusable("--raw OUT and --bytes N go together")
        if source_file is not None:
            raise Unusable("--raw dumps the derivation; it takes no --source")
        if not 1 <= raw_bytes <= MAX_RAW_BYTES:
            raise Unusable(f"--bytes must be 1 to {MAX_RAW_BYTES:,}, got {raw_bytes:,}")
        try:
            info = dump_raw(raw_out, raw_bytes, seed)
        except OSError as exc:
            raise Unusable(f"--raw {raw_out}: cannot write it ({exc.strerror or exc})") from None
        if not quiet:
            click.echo(json.dumps(info), err=raw_out == "-")
        return 0
    if seed is not None and source_file is not None:
        raise Unusable("--seed seeds the derivation; with --source the file is the stream")
    code, _ = certify(Path(out), sizes_from(size_args), seed, source_file, quiet, plot=not no_plots)
    return code


def run(argv: list[str] | None = None) -> int:
    """The console script: click's parsing, with exit 2 for every unusable input."""
    return run_command(main, argv, "qahwa-certify", "qahwa-certify")


def run_command(command: click.Command, argv: list[str] | None, prog: str, me: str) -> int:
    """Run ``command`` as a console script named ``prog``: its exit code, 2 for every
    unusable input (a usage error or :class:`Unusable`, said as ``me: error: …``)."""
    try:
        rv = command.main(args=argv, prog_name=prog, standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        click.echo(f"{me}: error: {exc.format_message()}", err=True)
        return 2
    except Unusable as exc:
        click.echo(f"{me}: error: {exc}", err=True)
        return 2
    except click.Abort:
        click.echo(f"{me}: aborted", err=True)
        return 130
    return rv if isinstance(rv, int) else 0


def console() -> None:  # pragma: no cover - the console script
    sys.exit(run())

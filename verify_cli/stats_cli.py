"""``verify stats``, the command: load and verify the player's transcripts, then print
:mod:`verify_cli.stats`'s analysis of them (its docstring says what is tested and how)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click

from .core import FAILED, UNCHECKED, UNUSABLE, VERIFIED, load_document, verify_document
from .keys import KeySet, UnusableInput, fetch_keys, http_get_json, load_key_file
from .options import match_option
from .stats import analyse, tally


def _load(
    sources: Sequence[str], server: str | None, matches: Sequence[str], key_file: str | None
) -> list[tuple[str, Any, KeySet | None]]:
    base = server.rstrip("/") if server else None
    keys: KeySet | None = load_key_file(key_file) if key_file else None
    if keys is None and base is not None:
        keys = fetch_keys(base)
    urls = [f"{base}/v1/matches/{m}/transcript" for m in matches] if base is not None else []
    return [
        (s, http_get_json(s) if s.startswith(("http://", "https://")) else load_document(s), keys)
        for s in [*sources, *urls]
    ]


@click.command(
    "stats",
    help="Statistics over your own verified transcripts: your dice "
    "faces, doubles and pips, and your first hands' strength, against what fair "
    "dice and shuffles give, with honest p-values and a plain verdict.",
)
@click.argument("sources", nargs=-1, metavar="FILE|URL...")
@click.option(
    "--server", metavar="URL", help="Fetch --match transcripts (and /v1/keys) from this server."
)
@match_option
@click.option(
    "--seat",
    type=click.IntRange(0, 7),
    help="Your seat in every transcript (default: every seat).",
)
@click.option(
    "--name",
    metavar="NAME",
    help="Your seat is the one with this name (instead of --seat).",
)
@click.option("--key", "key_file", metavar="FILE", help="The server's public key.")
@click.option(
    "--no-verify",
    is_flag=True,
    help="Count the transcripts as given, without "
    "verifying them (only for transcripts you have verified already).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def stats_cmd(
    sources: tuple[str, ...],
    server: str | None,
    matches: tuple[str, ...],
    seat: int | None,
    name: str | None,
    key_file: str | None,
    no_verify: bool,
    as_json: bool,
) -> int:
    if matches and not server:
        raise click.UsageError("--match needs --server URL")
    if not sources and not matches:
        raise click.UsageError("give transcript files or URLs, or --server URL --match ID")
    if seat is not None and name is not None:
        raise click.UsageError("give --seat or --name, not both")
    loaded = _load(sources, server, matches, key_file)
    counted: list[Mapping[str, Any]] = []
    excluded: list[dict[str, str]] = []
    unchecked = 0
    for source, doc, keys in loaded:
        if no_verify:
            if not isinstance(doc, dict):
                raise UnusableInput(f"{source}: not a transcript")
            counted.append(doc)
            continue
        rep = verify_document(doc, keys, source=source, draws_limit=0)
        if rep["status"] in (VERIFIED, UNCHECKED):
            counted.append(doc)
            unchecked += rep["status"] == UNCHECKED
        elif rep["status"] == UNUSABLE:
            raise UnusableInput(f"{source}: {rep['reason']}")
        else:
            first = (rep.get("failures") or [{}])[0]
            excluded.append({"source": source, "reason": str(first.get("message", FAILED))})
    result = analyse(tally(counted, seat, name))
    who = f"seat {seat}" if seat is not None else f"'{name}'" if name else "every seat"
    doc_out = {
        "player": who,
        "transcripts": len(counted),
        "signature_unchecked": unchecked,
        "verified": not no_verify,
        "excluded": excluded,
        **result,
    }
    if as_json:
        click.echo(json.dumps(doc_out, ensure_ascii=False, indent=2))
    else:
        _print(doc_out)
    return 1 if excluded else 0


def _fmt(v: Any) -> str:
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def _print(d: Mapping[str, Any]) -> None:
    head = f"verify stats: {d['transcripts']} transcript(s), {d['player']}"
    if not d["verified"]:
        head += " (NOT verified: --no-verify)"
    elif d["signature_unchecked"]:
        head += f" ({d['signature_unchecked']} without a signature check: give --key or --server)"
    click.echo(head)
    for x in d["excluded"]:
        click.echo(f"  excluded, failed verification: {x['source']}: {x['reason']}")
    for x in d["tests"]:
        if x["name"] == "dice faces":
            cells = "  ".join(
                f"{f}: {o} ({e:.1f})"
                for f, (o, e) in enumerate(zip(x["observed"], x["expected"], strict=True), 1)
            )
            line = f"  dice faces, {x['n']} dice — observed (expected): {cells}"
        else:
            line = (
                f"  {x['name']}, n = {x['n']}: observed {_fmt(x['observed'])}, expected "
                f"{_fmt(x['expected'])}"
            )
        if x.get("p_value") is None:
            click.echo(f"{line}; {x['method']}")
        else:
            click.echo(
                f"{line}; p = {x['p_value']:.3g} ({x['method']}; "
                f"{x['p_adjusted']:.3g} corrected for {len(d['tests'])} tests)"
            )
    click.echo(f"Verdict: {d['sentence']}.")

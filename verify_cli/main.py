"""The ``verify`` command group: ``check`` (the default, ``verify FILE``), ``derive``,
``demo``, ``log``, ``witness``, ``certify``, ``stats`` and ``page``. :data:`HELP` gives their
usage and the exit codes (0 verified, 1 failed, 2 unusable input).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import click

from fairness import (
    PROTOCOL,
    PROTOCOLS,
    V2,
    V3,
    FairnessError,
    Stream,
    canonical_json,
    check_label,
    fresh_label,
    parse_hex,
    parse_items,
    protocol_for,
    seed_commitment,
)

from .certify.cli import main as certify_cmd
from .core import (
    UNUSABLE,
    OwnSeed,
    exit_code,
    load_document,
    receipt_problem,
    unusable,
    verify_item,
)
from .keys import KeySet, UnusableInput, fetch_keys, http_get_json, load_key_file, server_base
from .log_check import load_proofs, log_hook, open_state
from .monitor import load_policy, log_cmd
from .options import (
    jobs_option,
    json_option,
    match_option,
    no_state_option,
    required_option,
    state_option,
)
from .output import echo_json, make_console, print_report, print_summary, progress_bar
from .page import page_cmd
from .stats_cli import stats_cmd
from .version import VERSION
from .witness import witness_cmd

HELP = """Verify qahwa-fair/2 and qahwa-fair/1 transcripts of café games and dice/shuffle
sessions.

\b
Usage:
  verify [OPTIONS] FILE|URL ...           verify transcript files or transcript URLs
  verify [OPTIONS] --server URL --match ID [--match ID ...]
  verify FILE --receipt FILE [...]        also check the server's receipts
  verify FILE --seat N --client-seed S --nonce HEX   also check seat N holds your seed
  verify derive [--protocol qahwa-fair/2] --server-seed HEX --match-id ID --game G
                --ruleset STR --client-seed S [--nonce HEX] [...] --label L
                [--roll-values V_R V_O]
                (--dice N [--sides 6] | --uniform N | --shuffle ITEMS)
  verify demo --server URL [--operator-key KEY] [--game G ...]
  verify log --server URL [--policy FILE]  audit the server's whole transparency log
  verify witness --log VKEY [--listen HOST:PORT]   run a witness for a log
  verify certify [--out DIR] [--source FILE] [...]  the RNG certification kit
  verify page [--port N]                   the verify page from this install

\b
Checks, for every transcript: the protocol; SHA-256(server_seed) equals the commitment;
qahwa-fair/2: the signed lock matches the transcript, the seats are the lock's, every
revealed seed matches its commitment in the lock, fresh rolls chain to the seats' tips in
order, the hokm cut is drawn, the event chain recomputes, keyed seats signed their events,
the events' times never decrease and a timeout comes at or after its deadline (a
transcript without times: timeouts not checked);
the match key from the seeds; every chance event recomputed and every action replayed
through the game's rules; the replayed result equals the transcript's; the Ed25519
signatures against the server's key (--key FILE, or fetched from the server, which makes
it only as trustworthy as that server).

\b
The log: qahwa-fair/2 logs each match's lock and reveal records (qahwa-fair/1 logged a
commitment record). With --server URL (or a transcript URL) verify fetches the match's
tlog-proof from that server itself and checks that its lock is in the log at lock_index,
under a checkpoint signed by the log's key (--policy FILE, else the log key of the saved
/v1/keys document given as --key, else the server's own) and consistent with the
checkpoints seen before (--state FILE, --no-state); then that the match's reveal record in
the log signs the transcript's chain head, result, ended_at and SHA-256 (until the log
gives it: not checked yet, never verified); offline, with --log-proof FILE.tlog-proof and
--policy FILE (for a log without witnesses, a policy of "log VKEY" and "quorum none").
With a log, a transcript whose protocol is not the one its match's log entry asks for
fails (a qahwa-fair/1 transcript for a qahwa-fair/2 match: a downgrade; a sealed match's
lock asks for qahwa-fair/3), and so does one whose match is not in the log; without a log
the report says a downgrade was not excluded (the exit code does not depend on it). A
retired key's signature counts only on a record naming its own time before retired_at.

\b
Exit codes: 0 all verified; 1 a transcript failed, its signature was not checked, a
receipt disagreed or seat N does not hold your seed; 2 unusable input (not JSON, too
large, nested too deeply, a duplicate key, unknown protocol or game, unreadable file,
unreachable URL), with one line on stderr.
"""


def one_line(text: str) -> str:
    """``text`` as one printable line: every character that is not printable (a newline,
    U+0085, U+2028, a control) is written as its escape, so an error is always one line."""
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


class VerifyGroup(click.Group):
    """A group whose default command is ``check`` (``verify FILE`` = ``verify check FILE``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        check = self.commands["check"]
        rows = [
            (
                "FILE|URL ...",
                "transcript files, or transcript URLs (http://host/v1/matches/ID/transcript)",
            )
        ]
        rows += [
            r
            for p in check.get_params(ctx)
            if not isinstance(p, click.Argument) and (r := p.get_help_record(ctx))
        ]
        with formatter.section("Options of `verify FILE|URL ...` (= `verify check`)"):
            formatter.write_dl(rows)
        formatter.write_paragraph()
        formatter.write_text("`verify derive --help` and `verify demo --help` list theirs.")

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            rv = super().main(
                args, prog_name or "verify", complete_var, standalone_mode=False, **extra
            )
        except click.exceptions.Exit as exc:
            code = exc.exit_code
        except click.UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError" and exc.ctx is not None:
                click.echo(exc.ctx.get_help(), err=True)
            else:
                where = f"verify {exc.ctx.info_name}" if exc.ctx and exc.ctx.parent else "verify"
                click.echo(one_line(f"{where}: error: {exc.format_message()}"), err=True)
            code = 2
        except click.ClickException as exc:
            click.echo(one_line(f"verify: error: {exc.format_message()}"), err=True)
            code = exc.exit_code
        except UnusableInput as exc:
            click.echo(one_line(f"verify: error: {exc}"), err=True)
            code = 2
        except click.Abort:
            click.echo("verify: aborted", err=True)
            code = 130
        except KeyboardInterrupt:
            click.echo("verify: interrupted", err=True)
            code = 130
        else:
            code = rv if isinstance(rv, int) else 0
        if standalone_mode:
            sys.exit(code)
        return code


@click.group(
    cls=VerifyGroup,
    help=HELP,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(
    VERSION,
    "--version",
    prog_name="verify",
    message=f"%(prog)s %(version)s ({', '.join(PROTOCOLS)})",
)
def app() -> None:
    pass


def _is_url(arg: str) -> bool:
    return arg.startswith(("http://", "https://"))


def verify_many(
    items: list[tuple[str, Any, str]],
    keys: list[dict[str, Any] | None],
    *,
    draws_limit: int | None,
    allow_unsigned: bool,
    jobs: int | None,
    progress: bool,
    receipts: list[dict[str, Any]] | None = None,
    own: OwnSeed | None = None,
) -> list[dict[str, Any]]:
    """Verify items (see core.verify_item), on all cores when there are several."""
    results: list[dict[str, Any] | None] = [None] * len(items)
    workers = max(1, min(jobs or os.cpu_count() or 1, len(items)))
    with progress_bar(disable=not progress) as bar:
        task = bar.add_task("verifying", total=len(items))
        args = (draws_limit, allow_unsigned, receipts, own)
        if workers == 1:
            for i, item in enumerate(items):
                results[i] = verify_item(item, keys[i], *args)
                bar.advance(task)
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = {
                    pool.submit(verify_item, item, keys[i], *args): i
                    for i, item in enumerate(items)
                }
                for fut in as_completed(futures):
                    i = futures[fut]
                    try:
                        results[i] = fut.result()
                    except Exception as exc:  # a crashed worker: say so, keep going
                        results[i] = unusable(items[i][2], f"worker failed: {exc}")
                    bar.advance(task)
    return [r for r in results if r is not None]


def collect(
    sources: Sequence[str], base: str | None, key_file: str | None
) -> tuple[list[tuple[str, Any, str]], list[dict[str, Any] | None], list[dict[str, Any]]]:
    """Items to verify with their key sets (``sources``: files and URLs; ``base``: the
    server whose keys every input takes, else a URL its own server's); reports of inputs
    already known unusable."""
    fixed: KeySet | None = load_key_file(key_file) if key_file else None
    cache: dict[str, KeySet | UnusableInput] = {}

    def keys_for(base: str | None) -> KeySet | None:
        if fixed is not None:
            return fixed
        if base is None:
            return None
        if base not in cache:
            try:
                cache[base] = fetch_keys(base)
            except UnusableInput as exc:
                cache[base] = exc
        got = cache[base]
        if isinstance(got, UnusableInput):
            raise got
        return got

    items: list[tuple[str, Any, str]] = []
    keys: list[dict[str, Any] | None] = []
    bad: list[dict[str, Any]] = []
    for src in [s for s in sources if not _is_url(s)] + [s for s in sources if _is_url(s)]:
        try:
            if _is_url(src):
                item: tuple[str, Any, str] = ("doc", http_get_json(src), src)
                ks = keys_for(server_base(src) if base is None else base)
            else:
                item, ks = ("file", src, src), keys_for(base)
        except UnusableInput as exc:
            bad.append(unusable(src, str(exc)))
            continue
        items.append(item)
        keys.append(ks.to_b64() if ks else None)
    return items, keys, bad


@app.command("check", help="Verify transcripts (the default command: `verify FILE` runs this).")
@click.argument("sources", nargs=-1, metavar="FILE|URL...")
@click.option(
    "--server",
    metavar="URL",
    help="Server base URL: fetch --match transcripts, its /v1/keys and each match's log "
    "proof (GET /v1/matches/{id}/log-proof) from it.",
)
@match_option
@click.option(
    "--key",
    "key_file",
    metavar="FILE",
    help="The server's public key: base64 of the raw 32 bytes, or the JSON of GET /v1/keys.",
)
@json_option
@click.option(
    "--no-signature",
    "allow_unsigned",
    is_flag=True,
    help="Accept a transcript whose signature cannot be checked (no key) as verified.",
)
@click.option("--all-draws", is_flag=True, help="List every draw in the report.")
@click.option(
    "--draws",
    "draws_n",
    type=click.IntRange(min=0),
    default=12,
    show_default=True,
    help="How many draws to list per match.",
)
@jobs_option("Worker processes (default: all cores).")
@state_option
@no_state_option
@click.option(
    "--log-proof",
    "log_proofs",
    multiple=True,
    metavar="FILE",
    help="A proof to check a transcript's log entry with, instead of fetching it "
    "(repeatable): the c2sp.org/tlog-proof of GET /v1/matches/{id}/log-proof (with "
    "--policy; a qahwa-fair/2 match's lock), or for a qahwa-fair/1 transcript the JSON of "
    "GET /v1/log/proof (its commitment record).",
)
@click.option(
    "--policy",
    "policy_file",
    metavar="FILE",
    help="A c2sp.org/tlog-policy file (the log's key, the witnesses' keys, the "
    "quorum; 'quorum none' for a log without witnesses): tlog-proofs, offline or "
    "fetched with --server, are checked against it, and fail when the quorum is not met.",
)
@click.option(
    "--receipt",
    "receipt_files",
    multiple=True,
    metavar="FILE",
    help="A file of receipts the server gave you (one receipt or a JSON list): each "
    "must be signed by a listed key and agree with the transcript's chain at its "
    "seq (repeatable).",
)
@click.option(
    "--seat",
    "own_seat",
    metavar="N|FILE",
    help="Check that seat N holds exactly your seed (with --client-seed, --nonce); or a "
    "seat file (a conforming client's export, e.g. the web table's seat.json), which gives "
    "the seat, its seed, its nonce and its receipts.",
)
@click.option(
    "--client-seed",
    "own_seed",
    metavar="S",
    help="The client seed you sent for --seat N.",
)
@click.option(
    "--nonce",
    "own_nonce",
    metavar="HEX",
    help="The nonce you sent for --seat N (qahwa-fair/2).",
)
def check_cmd(
    sources: tuple[str, ...],
    server: str | None,
    matches: tuple[str, ...],
    key_file: str | None,
    as_json: bool,
    allow_unsigned: bool,
    all_draws: bool,
    draws_n: int,
    jobs: int | None,
    state_file: str | None,
    no_state: bool,
    log_proofs: tuple[str, ...],
    policy_file: str | None,
    receipt_files: tuple[str, ...],
    own_seat: str | None,
    own_seed: str | None,
    own_nonce: str | None,
) -> int:
    if matches and not server:
        raise click.UsageError("--match needs --server URL")
    seat_receipts: list[dict[str, Any]] = []
    seat_no: int | None = None
    if own_seat is not None and own_seat.isdigit():
        seat_no = int(own_seat)
    elif own_seat is not None:
        if own_seed is not None or own_nonce is not None:
            raise click.UsageError(
                "--seat FILE gives the seed and nonce: no --client-seed, --nonce"
            )
        seat_no, own_seed, own_nonce, seat_receipts = load_seat_file(own_seat)
    if seat_no is None and (own_seed is not None or own_nonce is not None):
        raise click.UsageError("--client-seed and --nonce need --seat N")
    own: OwnSeed | None = None
    if seat_no is not None:
        if own_seed is None:
            raise click.UsageError(
                "--seat N needs --client-seed S (and, for qahwa-fair/2, --nonce HEX)"
            )
        own = OwnSeed(seat_no, own_seed, own_nonce)
    receipts = load_receipts(receipt_files) + seat_receipts
    if not sources and not matches:
        raise click.UsageError("give transcript files or URLs, or --server URL --match ID")
    if server and not _is_url(server):
        raise click.UsageError(f"--server must be an http(s) URL, got {server!r}")
    state = open_state(state_file, no_state)
    proofs = load_proofs(log_proofs)
    policy = load_policy(policy_file)
    base = server.rstrip("/") if server else None
    wanted = [*sources, *(f"{base}/v1/matches/{m}/transcript" for m in matches)]
    items, keys, bad = collect(wanted, base, key_file)
    console = make_console()
    checked = verify_many(
        items,
        keys,
        draws_limit=None if all_draws else draws_n,
        allow_unsigned=allow_unsigned,
        jobs=jobs,
        progress=len(items) > 1 and not as_json,
        receipts=receipts,
        own=own,
    )
    seen = {str(r.get("match_id")) for r in checked if r["status"] != UNUSABLE}
    stray = sorted({str(r["match_id"]) for r in receipts} - seen)
    if stray and not any(r["status"] == UNUSABLE for r in checked):
        bad.append(
            unusable(
                "--receipt",
                f"receipt(s) for match {', '.join(stray)}, which none of the transcripts is",
            )
        )
    log_hook(checked, items, keys, server, proofs, state, policy)
    reports = bad + checked
    order = {s: i for i, s in enumerate(wanted)}  # keep the order the inputs were given in
    reports.sort(key=lambda r: order.get(str(r.get("source")), len(order)))
    code = exit_code(reports)
    if as_json:
        return echo_json(code, {"results": reports})
    for rep in reports:
        print_report(console, rep)
    if len(reports) > 1:
        print_summary(console, reports)
    if any(
        r["status"] != UNUSABLE and r["signature"].get("key_source") == "server" for r in reports
    ):
        console.print(
            "[dim]note: the public key was fetched from the server, so the "
            "signature check is only as trustworthy as that server.[/]"
        )
    if code == 2:
        first = next(r for r in reports if r["status"] == UNUSABLE)
        click.echo(one_line(f"verify: error: {first['source']}: {first['reason']}"), err=True)
    return code


app.add_command(log_cmd)
app.add_command(certify_cmd, "certify")
app.add_command(stats_cmd)
app.add_command(witness_cmd)


def load_seat_file(path: str) -> tuple[int, str, str | None, list[dict[str, Any]]]:
    """``--seat FILE``: a seat export (``seat``, ``client_seed``, ``nonce``, ``receipts``;
    clients/ts ``Seat.export``, qahwa_client ``Seat.save``) → seat, seed, nonce, receipts."""
    doc = load_document(path)
    if not isinstance(doc, dict):
        raise UnusableInput(f"{path}: a seat file is a JSON object (seat, client_seed, nonce)")
    seat, seed, nonce = doc.get("seat"), doc.get("client_seed"), doc.get("nonce")
    if not isinstance(seat, int) or isinstance(seat, bool) or seat < 0:
        raise UnusableInput(f'{path}: no seat number ("seat") in the seat file')
    if not isinstance(seed, str):
        raise UnusableInput(f'{path}: no client seed ("client_seed") in the seat file')
    if nonce is not None and not isinstance(nonce, str):
        raise UnusableInput(f"{path}: the seat file's nonce is not a string")
    receipts = doc.get("receipts", [])
    if not isinstance(receipts, list):
        raise UnusableInput(f"{path}: the seat file's receipts are not a list")
    receipts = receipts + dispute_records(doc)
    for r in receipts:
        why = receipt_problem(r)
        if why is not None:
            raise UnusableInput(f"{path}: {why}")
    return seat, seed, nonce, receipts


def dispute_records(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The signed heads and receipts a seat file's disputes keep as evidence (a
    ``backdated`` dispute's ``head`` and ``signed_after``: fairness-v2.md §7, heads), each
    once: checked against the transcript like its receipts."""
    out: dict[bytes, dict[str, Any]] = {}  # by canonical JSON, in the order first seen
    disputes = doc.get("disputes")
    for d in disputes if isinstance(disputes, list) else []:
        evidence = d.get("evidence") if isinstance(d, dict) else None
        for key in ("head", "signed_after"):
            r = evidence.get(key) if isinstance(evidence, dict) else None
            if isinstance(r, dict) and r.get("type") in ("head", "receipt"):
                out.setdefault(canonical_json(r), r)
    return list(out.values())


def load_receipts(paths: Sequence[str]) -> list[dict[str, Any]]:
    """``--receipt`` files: each a receipt or a JSON list of them (UnusableInput if not)."""
    out: list[dict[str, Any]] = []
    for p in paths:
        doc = load_document(p)
        items = doc if isinstance(doc, list) else [doc]
        if not items:
            raise UnusableInput(f"{p}: no receipt in it")
        for r in items:
            why = receipt_problem(r)
            if why is not None:
                raise UnusableInput(f"{p}: {why}")
            out.append(r)
    return out


app.add_command(page_cmd)


# -- derive ----------------------------------------------------------------------------------


class DeriveError(click.UsageError):
    pass


class _DeriveV1:
    """``verify derive``'s seat inputs for qahwa-fair/1: the client seeds alone."""

    @staticmethod
    def seats(seeds: Sequence[str], nonces: Sequence[str], rolls: Any) -> list[Any]:
        if nonces or rolls:
            raise DeriveError(f"--nonce and --roll-values are {V2} inputs: add --protocol {V2}")
        return list(seeds)

    @staticmethod
    def seed_hint(server_seed: str) -> str:
        return (
            f" (a 128-hex seed is {V2}'s: add --protocol {V2})" if len(server_seed) == 128 else ""
        )

    @staticmethod
    def commitments(match_id: str, seats: Sequence[Any]) -> dict[str, Any]:
        return {}


class _DeriveV2(_DeriveV1):
    """qahwa-fair/2 and later: each seat's (client seed, nonce) and its seed commitment."""

    @staticmethod
    def seats(seeds: Sequence[str], nonces: Sequence[str], rolls: Any) -> list[Any]:
        if len(nonces) != len(seeds):
            raise DeriveError(
                f"{V2} needs one --nonce per --client-seed (got "
                f"{len(seeds)} seeds, {len(nonces)} nonces)"
            )
        return list(zip(seeds, nonces, strict=True))

    @staticmethod
    def seed_hint(server_seed: str) -> str:
        return ""

    @staticmethod
    def commitments(match_id: str, seats: Sequence[Any]) -> dict[str, Any]:
        return {
            "seed_commitments": [
                seed_commitment(match_id, i, n, cs) for i, (cs, n) in enumerate(seats)
            ]
        }


#: ``verify derive``'s seat inputs, by protocol
DERIVE_INPUTS: dict[str, type[_DeriveV1]] = {
    PROTOCOL: _DeriveV1,
    V2.name: _DeriveV2,
    V3.name: _DeriveV2,
}


@app.command(
    "derive",
    help="Recompute one draw from the seeds; prints JSON (commitment, "
    "match key, label, kind, result).",
)
@click.option(
    "--protocol",
    type=click.Choice(list(PROTOCOLS)),
    default=PROTOCOL,
    show_default=True,
    help="The transcript's protocol.",
)
@required_option("--server-seed", "HEX", "64 hex characters (qahwa-fair/1) or 128 (qahwa-fair/2).")
@required_option("--match-id", "ID")
@required_option("--game", "G")
@required_option("--ruleset", "STR", "The ruleset string exactly as the transcript carries it.")
@click.option(
    "--client-seed",
    "client_seeds",
    multiple=True,
    required=True,
    metavar="S",
    help="Client seeds in seat order (repeat for every seat).",
)
@click.option(
    "--nonce",
    "nonces",
    multiple=True,
    metavar="HEX",
    help="qahwa-fair/2: each seat's nonce (64 hex), in seat order, one per --client-seed.",
)
@required_option(
    "--label", "L", "The draw's label (with --roll-values: the v1 label, e.g. g0/roll/3)."
)
@click.option(
    "--roll-values",
    nargs=2,
    default=None,
    metavar="V_R V_O",
    help="qahwa-fair/2 fresh roll: the roller's value then the opponent's (an "
    "opening: seat 0's then seat 1's), 64 hex each; the draw is at "
    "L|hex(SHA-256(V_R || V_O)).",
)
@click.option("--dice", type=int, metavar="N", help="Roll N dice.")
@click.option("--sides", type=int, default=6, show_default=True, help="Sides per die.")
@click.option("--uniform", type=int, metavar="N", help="An integer in 0…N-1.")
@click.option(
    "--shuffle",
    "shuffle_items",
    metavar="ITEMS",
    help="deck52, deck_qahve, tiles:M, tiles:M-without:A-B[,C-D], range:N.",
)
def derive_cmd(
    protocol: str,
    server_seed: str,
    match_id: str,
    game: str,
    ruleset: str,
    client_seeds: tuple[str, ...],
    nonces: tuple[str, ...],
    label: str,
    roll_values: tuple[str, str] | None,
    dice: int | None,
    sides: int,
    uniform: int | None,
    shuffle_items: str | None,
) -> int:
    chosen = [
        n
        for n, v in (("--dice", dice), ("--uniform", uniform), ("--shuffle", shuffle_items))
        if v is not None
    ]
    if len(chosen) != 1:
        raise DeriveError(
            "give exactly one of --dice N, --uniform N, --shuffle ITEMS"
            + (f" (got {', '.join(chosen)})" if chosen else "")
        )
    proto = protocol_for(protocol)
    inputs = DERIVE_INPUTS[proto.name]
    seats = inputs.seats(client_seeds, nonces, roll_values)
    out: dict[str, Any] = {"protocol": protocol}
    try:
        try:
            seed = proto.parse_server_seed(server_seed)
        except FairnessError as exc:
            raise DeriveError(f"{exc}{inputs.seed_hint(server_seed)}") from None
        key = proto.match_key(seed, match_id, game, ruleset, seats)
        out["commitment"] = proto.commitment(seed)
        out.update(inputs.commitments(match_id, seats))
        out["match_key"] = key.hex()
        if roll_values is not None:
            check_label(label)
            v_r = parse_hex(roll_values[0], 32, "roll value V_R")
            v_o = parse_hex(roll_values[1], 32, "roll value V_O")
            out["base_label"] = label
            label = fresh_label(label, v_r, v_o)
        check_label(label)
        out["label"] = label
        stream = Stream(key, label)
        if dice is not None:
            out.update(
                kind="dice", args={"count": dice, "sides": sides}, result=stream.dice(dice, sides)
            )
        elif uniform is not None:
            out.update(kind="uniform", args={"n": uniform}, result=stream.uniform(uniform))
        else:
            assert shuffle_items is not None
            items: list[Any] = parse_items(shuffle_items)
            if shuffle_items.startswith("range:"):
                items = [int(x) for x in items]
            out.update(kind="shuffle", args={"items": shuffle_items}, result=stream.shuffle(items))
    except (FairnessError, ValueError, TypeError) as exc:
        raise DeriveError(str(exc)) from None
    click.echo(json.dumps(out, ensure_ascii=False))
    return 0


# -- demo ------------------------------------------------------------------------------------


@app.command(
    "demo",
    help="Play one full match of each available game against a running "
    "server with random legal bots, then verify every transcript.",
)
@required_option("--server", "URL", "The server's base URL.")
@click.option(
    "--game",
    "game_list",
    multiple=True,
    metavar="G",
    help="Only these games (repeatable; default: every available game and rng).",
)
@click.option("--seed", type=int, help="Seed the bots' choices.")
@click.option(
    "--operator-key",
    metavar="KEY",
    envvar="QAHWA_OPERATOR_KEY",
    help="The operator key the server requires to create matches and rng sessions "
    "(`qahwa operators add NAME` prints one; a new server writes its first to "
    "operator.key), sent as 'Authorization: Bearer KEY'. Default: "
    "$QAHWA_OPERATOR_KEY, which keeps it out of the process list.",
)
def demo_cmd(
    server: str, game_list: tuple[str, ...], seed: int | None, operator_key: str | None
) -> int:
    from .demo import run_demo

    return run_demo(server, list(game_list) or None, seed=seed, operator_key=operator_key or None)


def main() -> None:  # pragma: no cover - `python -m verify_cli`
    app()

"""The ``qahwa`` command's surface (click, as ``verify``): every command and option with its
help, the help shown without a command, usage errors with exit code 2 that change nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from service.cli import app

DB_HELP = "SQLAlchemy URL (default: $QAHWA_DATABASE_URL or sqlite:///./data/qahwa.db)"
# every command's help: its summary, then each option and argument with its help
SURFACE: dict[str, list[str]] = {
    "": [
        "qahwa: provably fair dice and shuffles for café games",
        "serve",
        "Run the HTTP service (migrates the database and creates keys on first start).",
        "demo",
        "Start a server on a temporary database, play a demo, verify it with `verify`.",
        "operators",
        "Operator keys: who may create matches and rng sessions.",
        "keys",
        "The Ed25519 signing keys of records and transcripts.",
    ],
    "serve": [
        "--host",
        "address to listen on",
        "[default: 127.0.0.1]",
        "--port",
        "port to listen on",
        "[default: 8000]",
        "--database-url",
        DB_HELP,
        "--workers",
        "server processes",
        "x>=1",
        "--access-log / --no-access-log",
        "log one line per request (uvicorn's access log)",
        "--log-format",
        "text, or json: one JSON object a line, with request ids and no secrets",
        "[default: text]",
    ],
    "demo": [
        "--game",
        "only this game (repeatable; default: every game and an rng session)",
        "--seed",
        "seed the bots' choices",
    ],
    "operators": [
        "add",
        "Make a key for NAME; it is printed once, alone on the last line (stored hashed).",
        "list",
        "Every operator: name, created, revoked (never the key).",
        "revoke",
        "Revoke NAME's key: refused at once by every process on this database.",
    ],
    "operators add": ["NAME", "a name for the key's holder", "--database-url", DB_HELP],
    "operators list": ["--database-url", DB_HELP],
    "operators revoke": ["NAME", "the operator to revoke", "--database-url", DB_HELP],
    "keys": [
        "rotate",
        "Stage a new signing key; every process switches to it without a restart.",
        "list",
        "Every signing key: id, created, and next, current or retired (with the time).",
        "new-log",
        "Start a new log: a new note key under ORIGIN (docs/deploy.md §10).",
    ],
    "keys rotate": [
        "Running processes load it from the database (QAHWA_KEY_POLL_SECONDS) and switch at",
        "--in",
        "--no-seal",
        "--database-url",
        DB_HELP,
    ],
    "keys new-log": ["ORIGIN", "--database-url", DB_HELP],
    "keys list": ["--database-url", DB_HELP],
}


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args), prog_name="qahwa", env={"COLUMNS": "100"})
    return res.exit_code, res.output


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("command", list(SURFACE))
def test_every_command_shows_its_help(command: str) -> None:
    code, out = _run(*command.split(), "--help")
    assert code == 0, out
    assert out.startswith(f"Usage: qahwa {command} ".replace("  ", " "))
    flat = _flat(out)
    for text in SURFACE[command]:
        assert _flat(text) in flat, (text, out)
    # no line of the help is cut short with an ellipsis, and it fits 100 columns
    assert "..." not in out.replace("[ARGS]...", "")
    assert max(map(len, out.splitlines())) <= 100


@pytest.mark.parametrize("group", ["", "operators", "keys"])
def test_a_group_without_a_command_shows_its_help_and_exits_2(group: str) -> None:
    code, out = _run(*group.split())
    assert code == 2
    assert _flat(SURFACE[group][1]) in _flat(out) and "Commands:" in out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["bogus"], "No such command 'bogus'."),
        (["operators", "add"], "Missing argument 'NAME'."),
        (["keys", "forget"], "No such command 'forget'."),
        (["serve", "--log-format", "xml"], "Invalid value for --log-format: text or json"),
        (["serve", "--workers", "0"], "Invalid value for '--workers': 0 is not in the range x>=1."),
        (["serve", "--port", "abc"], "Invalid value for '--port': 'abc' is not a valid integer."),
        (["demo", "--seed", "x"], "Invalid value for '--seed': 'x' is not a valid integer."),
    ],
)
def test_usage_errors_exit_2_and_change_nothing(
    args: list[str], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QAHWA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("QAHWA_DATABASE_URL", f"sqlite:///{tmp_path / 'q.db'}")
    code, out = _run(*args)
    assert code == 2, out
    assert f"Error: {says}" in out
    assert "Try 'qahwa" in out
    assert list(tmp_path.iterdir()) == []  # no database, no key file


def test_the_operator_commands_run_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """add, list, revoke and their exit codes (test_ops.py runs the installed command)."""
    monkeypatch.setenv("QAHWA_DATA_DIR", str(tmp_path))
    db = ("--database-url", f"sqlite:///{tmp_path / 'q.db'}")
    assert _run("operators", "list", *db) == (0, "no operators (qahwa operators add NAME)\n")
    code, out = _run("operators", "add", "alice", *db)
    assert code == 0
    first, key = out.splitlines()
    assert first == (
        "operator 'alice' added; its key (shown only now, send it as "
        "'Authorization: Bearer <key>'):"
    )
    assert key.startswith("qop_") and len(key) > 40
    code, out = _run("operators", "add", "alice", *db)
    assert code == 1 and out.startswith("qahwa: an operator named 'alice' exists already")
    assert _run("operators", "revoke", "alice", *db) == (0, "operator 'alice' revoked\n")
    code, out = _run("operators", "list", *db)
    assert code == 0 and out.startswith("alice\tcreated ") and "\trevoked " in out
    code, out = _run("operators", "revoke", "bob", *db)
    assert code == 1 and out.startswith("qahwa: ")

"""The options several ``verify`` commands share, declared once (a ``click.option`` makes a
new parameter each time it decorates a command)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

#: ``verify check`` and ``verify stats``
match_option = click.option(
    "--match",
    "matches",
    multiple=True,
    metavar="ID",
    help="A match id to fetch from --server (repeatable).",
)
#: ``verify check`` and ``verify log``: the file of heads and checkpoints seen before
state_option = click.option(
    "--state",
    "state_file",
    metavar="FILE",
    help="The file of heads seen before (default: $XDG_STATE_HOME/qahwa/heads.json).",
)
no_state_option = click.option(
    "--no-state", is_flag=True, help="Neither read nor write the file of heads seen before."
)
json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document for machines."
)


def jobs_option(help: str) -> Decorator:
    return click.option("--jobs", type=click.IntRange(min=1), help=help)


def required_option(name: str, metavar: str, help: str | None = None) -> Decorator:
    return click.option(name, required=True, metavar=metavar, help=help)

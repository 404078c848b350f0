"""What the ``qahwa`` command's click commands share: the first line of a docstring, whole,
as the short help, and a group that keeps its commands in the order they were added."""

from __future__ import annotations

from typing import Any

import click

#: the context of every ``qahwa`` command: help as wide as ``verify``'s
CONTEXT = {"max_content_width": 100}
#: ``--database-url`` of ``qahwa serve`` and the operations commands
DATABASE_URL = click.option(
    "--database-url",
    help="SQLAlchemy URL (default: $QAHWA_DATABASE_URL or sqlite:///./data/qahwa.db)",
)


def _first_line(cmd: click.Command) -> None:
    """The first line of ``cmd``'s help, whole, as its short help (click would cut it at
    45 characters or the first full stop)."""
    if cmd.short_help is None and cmd.help:
        cmd.short_help = cmd.help.strip().splitlines()[0]


class Command(click.Command):
    """A command whose short help (in its group's list) is the first line of its help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _first_line(self)


class Group(click.Group):
    """A group of :class:`Command` s, listed in the order they were added, shown with its
    help when called without one."""

    command_class = Command
    group_class = type  # its subgroups are of this class too

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("no_args_is_help", True)
        kwargs.setdefault("context_settings", CONTEXT)
        super().__init__(*args, **kwargs)
        _first_line(self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

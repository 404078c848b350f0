"""Checkpoints (c2sp.org/tlog-checkpoint): the signed note body ``origin``, ``size``,
``base64(root)`` and optional extension lines."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .merkle import HASH_SIZE
from .note import Note, NoteError, Verifier, b64, open_note, unb64

_SIZE = re.compile(r"0|[1-9][0-9]*")


class CheckpointError(NoteError):
    """A checkpoint that is malformed or not signed by the log."""


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.origin or "\n" in self.origin:
            raise CheckpointError("a checkpoint's origin is one non-empty line")
        if self.size < 0:
            raise CheckpointError("a checkpoint's size is not negative")
        if len(self.root) != HASH_SIZE:
            raise CheckpointError(f"a checkpoint's root has {HASH_SIZE} bytes")
        if any(not e or "\n" in e for e in self.extensions):
            raise CheckpointError("extension lines are non-empty lines")

    @property
    def text(self) -> str:
        return "\n".join([self.origin, str(self.size), b64(self.root), *self.extensions]) + "\n"


def parse_checkpoint(text: str) -> Checkpoint:
    """A checkpoint from a note text (ending in a newline)."""
    if not text.endswith("\n"):
        raise CheckpointError("a checkpoint ends with a newline")
    lines = text[:-1].split("\n")
    if len(lines) < 3:
        raise CheckpointError("a checkpoint has an origin, a size and a root hash line")
    origin, size, root, *ext = lines
    if not _SIZE.fullmatch(size) or len(size) > 19:
        raise CheckpointError(f"a checkpoint's size is a decimal, not {size[:30]!r}")
    try:
        raw = unb64(root, "the checkpoint's root hash")
    except NoteError as exc:
        raise CheckpointError(str(exc)) from None
    return Checkpoint(origin, int(size), raw, tuple(ext))


def open_checkpoint(
    msg: str | bytes, log: Verifier, others: Iterable[Verifier] = ()
) -> tuple[Checkpoint, Note]:
    """Verify a checkpoint note signed by ``log`` (whose key name must be its origin); the
    signatures by ``others`` (witnesses) that are present are verified too."""
    note = open_note(msg, [log, *others])
    if not note.signed_by(log):
        raise CheckpointError(f"the checkpoint is not signed by the log key {log.name}")
    cp = parse_checkpoint(note.text)
    if cp.origin != log.name:
        raise CheckpointError(
            f"the checkpoint's origin {cp.origin!r} is not the log key's name {log.name!r}"
        )
    return cp, note

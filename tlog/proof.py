"""Offline proofs (c2sp.org/tlog-proof@v1): an entry's index, its inclusion proof, and the
(cosigned) checkpoint it is proven under."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .checkpoint import Checkpoint
from .merkle import HASH_SIZE, ProofError, check_record
from .note import NoteError, b64, split_note, unb64
from .policy import Policy

HEADER = "c2sp.org/tlog-proof@v1"
_INDEX = re.compile(r"index (0|[1-9][0-9]{0,18})")


@dataclass(frozen=True)
class TlogProof:
    index: int
    hashes: tuple[bytes, ...]
    checkpoint: str  # the signed checkpoint note, verbatim
    extra: bytes | None = None

    @property
    def text(self) -> str:
        lines = [HEADER]
        if self.extra is not None:
            lines.append(f"extra {b64(self.extra)}")
        lines.append(f"index {self.index}")
        lines.extend(b64(h) for h in self.hashes)
        return "\n".join(lines) + "\n\n" + self.checkpoint

    def verify(self, leaf_h: bytes, policy: Policy) -> tuple[Checkpoint, list[str]]:
        """The checkpoint (accepted by ``policy``) that includes the entry with leaf hash
        ``leaf_h`` at ``index``, and the witnesses that cosigned it."""
        cp, cosigned = policy.verify_checkpoint(self.checkpoint)
        check_record(self.hashes, cp.size, cp.root, self.index, leaf_h)
        return cp, cosigned


def parse_proof(text: str | bytes) -> TlogProof:
    """A tlog-proof from its text (ProofError if malformed; nothing verified yet)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise ProofError("a tlog proof is UTF-8") from None
    head, sep, checkpoint = text.partition("\n\n")
    if not sep:
        raise ProofError("a tlog proof has its proof lines, a blank line and a checkpoint")
    lines = head.split("\n")
    if lines[0] != HEADER:
        raise ProofError(f"a tlog proof starts with {HEADER!r}")
    pos = 1
    extra = None
    try:
        if pos < len(lines) and lines[pos].startswith("extra "):
            extra = unb64(lines[pos][6:], "the extra data")
            pos += 1
        if pos >= len(lines) or not _INDEX.fullmatch(lines[pos]):
            raise ProofError("a tlog proof has an 'index N' line")
        index = int(lines[pos][6:])
        hashes = tuple(
            unb64(line, f"proof hash {i + 1}") for i, line in enumerate(lines[pos + 1 :])
        )
        split_note(checkpoint)
    except NoteError as exc:
        raise ProofError(str(exc)) from None
    if any(len(h) != HASH_SIZE for h in hashes) or len(hashes) > 63:
        raise ProofError("a proof line is a 32-byte hash, and there are at most 63")
    return TlogProof(index, hashes, checkpoint, extra)

"""Trust policies (c2sp.org/tlog-policy): the logs, the witnesses, and the quorum of
witnesses whose cosignatures make a checkpoint valid."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from .checkpoint import Checkpoint, CheckpointError, parse_checkpoint
from .note import ALG_COSIGNATURE_V1, ALG_ED25519, NoteError, Verifier, open_note, parse_vkey


class PolicyError(ValueError):
    """A policy file that is malformed, or a checkpoint the policy does not accept."""


@dataclass(frozen=True)
class Group:
    name: str
    threshold: int
    members: tuple[str, ...]


@dataclass
class Policy:
    logs: list[tuple[Verifier, str | None]] = field(default_factory=list)
    witnesses: dict[str, tuple[Verifier, str | None]] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    quorum: str = "none"

    def satisfied(self, cosigned: Collection[str]) -> bool:
        """Whether the witnesses named in ``cosigned`` meet the quorum."""
        return self._witnessed(self.quorum, cosigned)

    def _witnessed(self, name: str, cosigned: Collection[str]) -> bool:
        if name == "none":
            return True
        if name in self.witnesses:
            return name in cosigned
        g = self.groups[name]
        return sum(self._witnessed(m, cosigned) for m in g.members) >= g.threshold

    def verify_checkpoint(self, msg: str | bytes) -> tuple[Checkpoint, list[str]]:
        """The checkpoint, if signed by a listed log (key name = origin) and cosigned by a
        quorum of the witnesses; also the names of the witnesses whose cosignatures verify.
        A signature by a listed key that does not verify rejects the checkpoint."""
        if not self.logs:
            raise PolicyError("the policy lists no log")
        all_keys = [v for v, _ in self.logs] + [v for v, _ in self.witnesses.values()]
        try:
            note = open_note(msg, all_keys)
        except NoteError as exc:
            raise PolicyError(f"the checkpoint: {exc}") from None
        signers = {v for v, _ in note.verified}
        logs = [v for v, _ in self.logs if v in signers]
        if not logs:
            raise PolicyError("the checkpoint is not signed by a log of the policy")
        try:
            cp = parse_checkpoint(note.text)
        except CheckpointError as exc:
            raise PolicyError(f"the checkpoint: {exc}") from None
        if all(v.name != cp.origin for v in logs):
            raise PolicyError(
                f"the checkpoint's origin {cp.origin!r} is not the name of the "
                f"log key that signed it"
            )
        cosigned = [n for n, (v, _) in self.witnesses.items() if v in signers]
        if not self.satisfied(cosigned):
            have = ", ".join(cosigned) or "none"
            raise PolicyError(
                f"the checkpoint's cosignatures do not meet the quorum "
                f"{self.quorum!r} (cosigned by: {have})"
            )
        return cp, cosigned


def parse_policy(text: str | bytes) -> Policy:
    """A policy from its file (PolicyError naming the line of the first problem)."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    if any(b < 0x20 and b not in (0x09, 0x0A) or b == 0x7F for b in raw):
        raise PolicyError("a policy holds no control characters but tab and newline")
    p = Policy()
    quorum: str | None = None
    pubkeys: set[bytes] = set()
    names: set[str] = set()
    for no, line in enumerate(raw.decode("utf-8", "surrogateescape").split("\n"), 1):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        where = f"policy line {no}"
        try:
            if f[0] == "log" and len(f) in (2, 3):
                v = parse_vkey(f[1])
                if v.alg != ALG_ED25519:
                    raise PolicyError(f"{where}: a log key is an Ed25519 note key (type 0x01)")
                if v.public_key in pubkeys:
                    raise PolicyError(f"{where}: a duplicate key")
                pubkeys.add(v.public_key)
                p.logs.append((v, f[2] if len(f) == 3 else None))
            elif f[0] == "witness" and len(f) in (3, 4):
                name = f[1]
                v = parse_vkey(f[2])
                if v.alg != ALG_COSIGNATURE_V1:
                    raise PolicyError(f"{where}: a witness key is a cosignature key (type 0x04)")
                if name in names or name == "none":
                    raise PolicyError(f"{where}: the name {name!r} is taken")
                if v.public_key in pubkeys:
                    raise PolicyError(f"{where}: a duplicate key")
                pubkeys.add(v.public_key)
                names.add(name)
                p.witnesses[name] = (v, f[3] if len(f) == 4 else None)
            elif f[0] == "group" and len(f) >= 4:
                name, k, members = f[1], f[2], tuple(f[3:])
                if name in names or name == "none":
                    raise PolicyError(f"{where}: the name {name!r} is taken")
                for m in members:
                    if m not in names:
                        raise PolicyError(f"{where}: {m!r} is not defined above")
                if len(set(members)) != len(members):
                    raise PolicyError(f"{where}: a member is listed twice")
                if k == "all":
                    t = len(members)
                elif k == "any":
                    t = 1
                elif k.isdigit() and k == str(int(k)) and 1 <= int(k) <= len(members):
                    t = int(k)
                else:
                    raise PolicyError(
                        f"{where}: the threshold is all, any or 1 to {len(members)}, not {k!r}"
                    )
                names.add(name)
                p.groups[name] = Group(name, t, members)
            elif f[0] == "quorum" and len(f) == 2:
                if quorum is not None:
                    raise PolicyError(f"{where}: a second quorum line")
                if f[1] != "none" and f[1] not in names:
                    raise PolicyError(f"{where}: {f[1]!r} is not defined above")
                quorum = f[1]
            else:
                raise PolicyError(f"{where}: not a log, witness, group or quorum line")
        except NoteError as exc:
            raise PolicyError(f"{where}: {exc}") from None
    if quorum is None:
        raise PolicyError("a policy has a quorum line")
    p.quorum = quorum
    return p

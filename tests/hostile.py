"""The conformance suite's lies: one list of the ways a hostile server lies to the seats it
serves, each with what a conforming client (fairness-v2.md §3a) must do about it.

Each :class:`Lie` names the tampers of tests/fake_http.py that make its fake server lie that
way, and the outcome a conforming client must reach, checked the same way for every client:
tests/client/test_hostile.py runs the list against the Python client (``qahwa_client``) and
clients/ts/test/hostile.test.ts against the TypeScript one (given the list as JSON by
tests/client/test_clients_ts.py). Both play the same scenario (:data:`SCENARIO`) and report
the same :class:`Outcome`.

A new lie is one entry here (and its tamper in tests/fake_http.py): a key rotation forged,
a witness gone, a sealed seat's lies.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

#: What every client's runner does with a lie's fake, in order:
SCENARIO = (
    "create a two-seat tawla match and start it (every seat commits, checks the lock in the "
    "log under the log key /v1/keys publishes, pinning no witness, and reveals)",
    "play the fake's script: seat 0 reads its view, the seat on turn reads its own and sends "
    "its first legal action; an error ends play and is kept",
    "after an error, read seat 0's view every 0.25 s (at most 15 s) until the match is over",
    "each checking seat reads the whole event stream when the lie says watch, then checks the "
    "transcript; every error is kept",
    "report every error (its class name and message) and the kind of every dispute kept",
)


@dataclass(frozen=True)
class Outcome:
    """What a client's run of a lie ended with."""

    errors: list[str] = field(default_factory=list)  # "ClassName: message"
    disputes: list[str] = field(default_factory=list)  # the kinds of the disputes kept


@dataclass(frozen=True)
class Lie:
    name: str
    #: tests/fake_http.py's tampers that make the fake tell this lie
    tampers: tuple[str, ...]
    #: what the server does
    lie: str
    #: what a conforming client must do
    must: str
    #: the kind of dispute some seat must keep (None: no dispute needed)
    dispute: str | None = None
    #: a pattern some error the client raised must match (None: none needed)
    refuse: str | None = None
    #: the checking seats read the whole event stream before they check the transcript
    watch: bool = False
    #: the seats that check the transcript
    checkers: tuple[int, ...] = (0, 1)
    #: no lie at all to a conforming client (an honest operator's ordinary day): the client
    #: must raise no error and keep no dispute
    clean: bool = False
    issue: int = 49

    def failures(self, out: Outcome) -> list[str]:
        """What a client's outcome lacks of what this lie's entry asks for."""
        bad = []
        if self.clean and (out.errors or out.disputes):
            bad.append(f"not played through (errors: {out.errors}, disputes: {out.disputes})")
        if self.dispute is not None and self.dispute not in out.disputes:
            bad.append(f"no {self.dispute!r} dispute kept (disputes: {out.disputes})")
        if self.refuse is not None and not any(re.search(self.refuse, e) for e in out.errors):
            bad.append(f"no error matches {self.refuse!r} (errors: {out.errors})")
        return bad

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "tampers": list(self.tampers), "checkers": list(self.checkers)}


LIES: list[Lie] = [
    Lie(
        "unsigned refusal until the deadline",
        ("refuse_unsigned",),
        "the server answers seat 0's signed move with 409 and no signed refusal, again and "
        "again, then ends the match by seat 0's timeout at its deadline",
        "keep the request unreceipted: an unsigned refusal is no answer; when the timeout "
        "follows, keep a censored dispute with the request and its send time",
        dispute="censored",
    ),
    Lie(
        "refusal of another request",
        ("refuse_forged",),
        "the server refuses seat 0's move with a signed refusal whose request hash is not the "
        "move's, then times seat 0 out",
        "hold the refusal to the request's own bytes: a refusal of another request answers "
        "nothing; keep a censored dispute when the timeout follows",
        dispute="censored",
    ),
    Lie(
        "503 until the deadline",
        ("unavailable",),
        "the server answers seat 0's signed move with 503 to every identical resend until the "
        "deadline passes, then ends the match by seat 0's timeout",
        "resend the identical bytes, then keep the request unreceipted (a 5xx is not a "
        "refusal); when the timeout follows, keep a censored dispute",
        dispute="censored",
    ),
    Lie(
        "back-dated events",
        ("backdate",),
        "every event is stamped 20 s before the time the server signs its heads with: a move "
        "appears after a signed head that did not include it, stamped before that head",
        "hold every event after a signed head to that head's time; keep a backdated dispute "
        "with both signed records (the head, and the head or receipt that covers the event)",
        dispute="backdated",
    ),
    Lie(
        "a rewrite the stream showed, without chain heads",
        ("sse_unchained", "rewrite"),
        "the event stream carries no chain heads, and the transcript rewrites the last move, "
        "made after seat 1's last receipt",
        "compute the chain heads from the lock and each streamed event itself; the transcript "
        "that disagrees with the events the stream showed is a TranscriptMismatch",
        refuse=r"^TranscriptMismatch: .*(shown|stream)",
        watch=True,
        checkers=(1,),
        issue=47,
    ),
    Lie(
        "a key rotation mid-match",
        ("rotate",),
        "after seat 0's first move the server signs with a new key; /v1/keys lists it with its "
        "announcement signed by the key the client trusts, which is retired from then (an "
        "honest operator's qahwa keys rotate)",
        "take the announced key (read /v1/keys again when a record names a key not trusted "
        "yet) and play on: no error, no dispute",
        clean=True,
    ),
    Lie(
        "a forged key rotation",
        ("rotate_unannounced",),
        "after seat 0's first move the server signs with a new key whose only announcement is "
        "signed by a key nobody trusts",
        "refuse every record the unannounced key signed (a key is taken only through an "
        "announcement by a trusted key, never from /v1/keys alone); keep an unannounced_key "
        "dispute with the record and the refused announcement",
        dispute="unannounced_key",
        refuse=r"not one of the server keys",
    ),
    Lie(
        "a witness outage",
        ("witness_down",),
        "the log's only witness is down: log-proof serves the lock's proof under a checkpoint "
        "the log alone signed, naming the witness in Qahwa-Witnesses-Missing",
        "let the player's own log policy decide (it pins no witness): check the lock under "
        "the log's key, reveal and play on; no error, no dispute",
        clean=True,
    ),
    Lie(
        "a cut-short transcript",
        ("cut_short",),
        "the transcript ends the match by seat 0's timeout at the deadline of its last move, "
        "which it leaves out, and is re-signed",
        "hold the transcript to the seat's receipts and to the events it was shown: the "
        "receipt of the move left out is signed proof the match went on; a "
        "TranscriptMismatch",
        refuse=r"^TranscriptMismatch: ",
    ),
]

assert len({lie.name for lie in LIES}) == len(LIES)

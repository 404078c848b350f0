"""The conformance suite's lies: one list of the ways a hostile server lies to the seats it
serves, each with what a conforming client (fairness-v2.md §3a) must do about it.

Each :class:`Lie` names the tampers of tests/support/fake_http.py that make its fake server lie that
way, and the outcome a conforming client must reach, checked the same way for every client:
tests/client/test_hostile.py runs the list against the Python client (``qahwa_client``) and
clients/ts/harness/hostile.test.ts against the TypeScript one (given the list as JSON by
tests/client/test_clients_ts.py). Both play the same scenario (:data:`SCENARIO`) and report
the same :class:`Outcome`.

A lie at a tawla table is told by tests/support/fake_http.py's scripted fake (FakeC2SP); a lie to a
sealed seat (issue 46) by its SealedLiar, a proxy in front of a real server. Each fake says
which lie it told (``told``) and what the client gave away that it keeps (``leaks()``). A
new lie is one entry here and its tamper in tests/support/fake_http.py. The list is in docs/bot.md
("The lying servers it is tested against") and clients/ts/README.md: keep them in step.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

#: What every client's runner does with a lie's fake, in order:
SCENARIO = (
    "create the lie's table (game, ruleset, names) and start it (every seat commits, checks "
    "the lock in the log under the log key /v1/keys publishes, pinning no witness, and "
    "reveals); an error here is kept and ends the run",
    "play the fake's script: seat 0 reads its view, the seat on turn reads its own and sends "
    "its first legal action; an error ends play and is kept (when the lie says play_on, the "
    "error is kept and play goes on, at most 3 errors)",
    "after an error that ended play, read seat 0's view every 0.25 s (at most 15 s) until the "
    "match is over",
    "each checking seat reads the whole event stream when the lie says watch, then checks the "
    "transcript; every error is kept",
    "report every error (its class name and message), the kind of every dispute kept, how "
    "many commits the seats sent, and what the fake says the client gave away",
)


@dataclass(frozen=True)
class Outcome:
    """What a client's run of a lie ended with."""

    errors: list[str] = field(default_factory=list)  # "ClassName: message"
    disputes: list[str] = field(default_factory=list)  # the kinds of the disputes kept
    committed: int = 0  # the commit requests the seats sent
    #: what the fake says the client gave away that it keeps from this lie (the fake's
    #: ``leaks()``: a sealed seat's shares of its own items, its key, a card's code…)
    leaked: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Lie:
    name: str
    #: tests/support/fake_http.py's tampers that make the fake tell this lie
    tampers: tuple[str, ...]
    #: what the server does
    lie: str
    #: what a conforming client must do
    must: str
    #: the table: tawla between two people on tests/support/fake_http.py's scripted fake, else a
    #: real server behind the fake (SealedLiar)
    game: str = "tawla"
    ruleset: dict[str, Any] | None = None
    names: tuple[str, ...] | None = ("Layla", "Omar")
    #: the kind of dispute some seat must keep (None: no dispute needed)
    dispute: str | None = None
    #: a pattern some error the client raised must match (None: none needed)
    refuse: str | None = None
    #: the checking seats read the whole event stream before they check the transcript
    watch: bool = False
    #: the seats that check the transcript
    checkers: tuple[int, ...] = (0, 1)
    #: the lie is told once: after the client's error, play goes on to the match's end
    play_on: bool = False
    #: a pattern of the error a conforming client that does not play this table at all
    #: raises instead, before it commits anything (then nothing else is asked of it)
    unsupported: str | None = None
    #: no lie at all to a conforming client (an honest operator's ordinary day): the client
    #: must raise no error and keep no dispute
    clean: bool = False
    issue: int = 49

    def failures(self, out: Outcome) -> list[str]:
        """What a client's outcome lacks of what this lie's entry asks for."""
        bad = []
        if out.leaked:
            bad.append(f"the client gave away what it keeps: {out.leaked}")
        if self.unsupported is not None and any(re.search(self.unsupported, e) for e in out.errors):
            if out.committed:
                bad.append(f"it refused the table after {out.committed} commit(s)")
            return bad
        if self.clean and (out.errors or out.disputes):
            bad.append(f"not played through (errors: {out.errors}, disputes: {out.disputes})")
        if self.dispute is not None and self.dispute not in out.disputes:
            bad.append(f"no {self.dispute!r} dispute kept (disputes: {out.disputes})")
        if self.refuse is not None and not any(re.search(self.refuse, e) for e in out.errors):
            bad.append(f"no error matches {self.refuse!r} (errors: {out.errors})")
        return bad

    def to_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "tampers": list(self.tampers),
            "checkers": list(self.checkers),
            "names": None if self.names is None else list(self.names),
        }


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
        "a receipt signed by a retired key",
        ("rotate", "retired_resign"),
        "after an announced rotation the server signs seat 0's receipts with the key it "
        "retired, stamped after its retired_at",
        "count a retired key's signature only on a record naming its time before the key's "
        "retired_at (the keys document's retired_at, or the not_before of the announcement it "
        "signed): refuse the receipt and keep a retired_key dispute with it",
        dispute="retired_key",
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
    Lie(
        "forged events in an action's answer",
        ("answer_events_forged",),
        "every accepted action's answer shows the events it logged (``events``) with the move "
        "rewritten, while its view's chain head and its receipt are honest",
        "take an answer's events as the log only when they chain, from the head the action "
        "was signed over, to the chain head its receipt signs; these do not: read the log "
        "instead and play on: no error, no dispute (taken as they are, they would make the "
        "honest transcript look rewritten)",
        clean=True,
        issue=47,
    ),
]


#: issue 46's sealed table: four people at sealed hokm (no house seat)
SEALED_HOKM = {"players": 4, "target": 1, "deal": "sealed"}


def _sealed(name: str, tamper: str, lie: str, must: str) -> Lie:
    """One of issue 46's lies, told once to seat 0 of a sealed hokm table (the real server
    behind tests/support/fake_http.py's SealedLiar): a conforming sealed seat refuses the view with a
    sealed_view dispute, sends nothing for it and plays on; or the client does not play
    sealed tables and refuses the table before it commits anything (SealedUnsupported)."""
    return Lie(
        name,
        (tamper,),
        lie,
        must + "; keep a sealed_view dispute with the view, send nothing for it and play on "
        "to the end (a client that does not play sealed tables refuses the table before any "
        "commit: SealedUnsupported)",
        dispute="sealed_view",
        refuse=r"^SealedStepRefused: .*the view disagrees with the log",
        game="hokm",
        ruleset=SEALED_HOKM,
        names=None,
        play_on=True,
        unsupported=r"^SealedUnsupported: ",
        issue=46,
    )


LIES += [
    _sealed(
        "owed naming the seat's own items",
        "sealed_owed_own_items",
        "a view asks seat 0 for its shares of the items dealt to it, which would open its hand",
        "derive the items it owes shares of from its own deal machine, never from the view's "
        "owed: refuse a share of its own items",
    ),
    _sealed(
        "a made-up reveal_key in mid-hand",
        "sealed_reveal_mid_hand",
        "a view in mid-hand asks seat 0 for reveal_key, its hand secret (every card of its hand)",
        "send its key only when its own machine says the hand's play is over",
    ),
    _sealed(
        "a made-up open step",
        "sealed_open_made_up",
        "a view in mid-hand asks seat 0 for an open step of one of its cards (the card's code "
        "in clear, with its share)",
        "send no open step that no rule asks for",
    ),
    _sealed(
        "dealt lying about whose items are whose",
        "sealed_dealt_swapped",
        "a view's dealt says seat 0's items are seat 1's and asks for its shares of them",
        "take its hand and whose items are whose from its own machine over the signed log, "
        "never from the view's dealt",
    ),
]

assert len({lie.name for lie in LIES}) == len(LIES)

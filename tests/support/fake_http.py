"""tests/support/fake_server.py's scripted qahwa-fair/2 server over real HTTP, with the C2SP log a
client checks (a checkpoint signed by the log's note key, a tlog-proof of the lock, the
consistency proofs between checkpoints), event times and deadlines, for clients that are not
Python (clients/ts, tests/client/test_clients_ts.py).

``with FakeHub() as hub``: ``POST {hub.url}/new?tamper=a,b`` makes a fresh fake and answers
``{"base": URL}``; that fake answers under it. ``GET {base}/_sent`` lists what it received,
``GET {base}/_leaks`` what the client gave away that it keeps from that lie. Each tamper
makes it lie one way a dishonest operator could (``TAMPERS``). A sealed seat's lies
(``SEALED_LIES``) are told by :class:`SealedLiar`, a proxy in front of a real server
(``FakeHub(upstream=URL)``)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

import tlog
from fairness import PROTOCOL_V2, Signer, chain_next, chain_start, public_key_b64
from fairness.announce import announcement_body
from fairness.protocol import canonical_json
from tests.support.fake_server import FakeServer, Sent, err
from tests.support.rfc6962 import audit_path, consistency_proof, leaf_hash, root

# What each tamper does (the client must refuse it before it gives away what it protects).
TAMPERS = {
    "lock_signer": "the lock claims the server's key but another key signed it",
    "lock_ruleset": "the lock's ruleset is not the commit record's",
    "lock_commitment": "the lock holds another seed commitment at seat 0",
    "lock_not_logged": "the log entry at the lock's index is something else",
    "checkpoint_forged": "the checkpoint is signed by another key under the log's name",
    "equivocate": "/log/checkpoint shows another root for the same size as the proof's",
    "fork": "the proof's checkpoint does not extend the one shown before",
    "value_early": "seat 1 is asked for its roll value before seat 0 rolled",
    "values_used_ahead": "the view claims the seat used more values than it sent",
    "receipt_lies": "a receipt's chain is not the head the answer shows",
    "rewrite": "the transcript's last move is not the one receipted",
    "early_timeout": "seat 0 is timed out before its deadline",
    "skew": "the server's times are an hour behind",
    "precomputed": 'the ruleset has "fresh_rolls": false',
    # the lies of tests/support/hostile.py (each entry there says what a conforming client must do)
    "refuse_unsigned": "seat 0's move is refused (409) with no signed refusal until its deadline",
    "refuse_forged": "seat 0's move is refused with a signed refusal of another request",
    "unavailable": "seat 0's move is answered 503 until its deadline passes",
    "backdate": "every event is stamped 20 s before the time the server signs its heads with",
    "sse_unchained": "the event stream leaves out each event's chain head",
    "rotate": "mid-match the server rotates its key as qahwa keys rotate does: /v1/keys lists "
    "the new key with its announcement signed by the old one, retired from then",
    "rotate_unannounced": "mid-match the server signs with a new key whose only announcement "
    "is signed by a key nobody trusts",
    "witness_down": "the log's witness is down: log-proof answers with the log's signature "
    "alone and names the witness in Qahwa-Witnesses-Missing",
    "retired_resign": "with rotate: the receipts after the rotation are signed by the retired key",
    "cut_short": "the transcript ends the match by seat 0's timeout before its last move, "
    "re-signed",
    "answer_events_forged": "every action's answer shows the events it logged with the move "
    "rewritten (its view, chain head and receipt honest)",
}

#: the tampers that refuse seat 0's move at step 3 and then time seat 0 out at its deadline
CENSOR = {"refuse_unsigned", "refuse_forged", "unavailable"}
#: a turn short enough for a test to wait out (seconds; the ruleset's turn_seconds)
CENSOR_TURN = 3
#: how far the backdate tamper stamps events before its heads (seconds)
BACKDATE = 20.0
#: the tampers that rotate the server's signing key once seat 0 has made its first move
ROTATE = {"rotate", "rotate_unannounced"}
#: the name of the fake log's witness (it cosigns every checkpoint, unless witness_down)
WITNESS = "witness.example/w1"
#: the seat requests a server answers with a signed refusal when it refuses them
SEAT_POSTS = ("/actions", "/resign", "/commit", "/reveal")


def iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class FakeC2SP(FakeServer):
    """The fake with a C2SP log, ``at`` on events and receipts, and deadlines."""

    def __post_init__(self) -> None:
        if "precomputed" in self.tamper:
            self.ruleset = {**self.ruleset, "fresh_rolls": False}
        if self.tamper & CENSOR:
            self.ruleset = {**self.ruleset, "turn_seconds": CENSOR_TURN}
        super().__post_init__()
        self.note = tlog.NoteSigner.from_seed("fake.example/log", hashlib.sha256(b"n").digest())
        self.other_note = tlog.NoteSigner.from_seed(
            "fake.example/log", hashlib.sha256(b"o").digest()
        )
        #: tampers the client must see through before it reveals its seed and nonce
        self.before_reveal = bool(
            self.tamper
            & {
                "lock_signer",
                "lock_ruleset",
                "lock_commitment",
                "lock_not_logged",
                "checkpoint_forged",
                "equivocate",
                "fork",
                "precomputed",
                "skew",
            }
        )
        self.timed_out = False  # the early_timeout tamper ended the match
        self.retry_after_at: float | None = None
        self.censoring = False  # a CENSOR tamper refused seat 0's move
        self.owed_at: datetime | None = None  # the at of the event that put a seat on turn
        self.witness = tlog.CosignatureSigner.from_seed(WITNESS, hashlib.sha256(b"w").digest())
        #: after a ROTATE tamper rotated the key: the retired key, its announcement of the
        #: new one (or the forged one) and when the new key took over
        self.rotated: tuple[Signer, dict[str, Any], str] | None = None
        #: the tampers that took effect: the lie told (a test holds a fake to it)
        self.told: set[str] = set()

    def leaks(self) -> list[str]:
        """What the client gave away that it keeps from a server telling this fake's lies:
        its seed or nonce, sent to a server that lied before the reveal."""
        if not self.before_reveal:
            return []
        return [f"{s.path}: {s.content.decode()}" for s in self.posts("/reveal")]

    def rotate(self) -> None:
        """The ROTATE tampers: the server signs with a new key from now on, announced by the
        key it signed with so far (``rotate``) or by a key nobody trusts
        (``rotate_unannounced``)."""
        old, new = self.signer, Signer.generate()
        now = datetime.now(UTC)
        body = announcement_body(
            new.key_id, public_key_b64(new.public_key), iso(now), iso(now - timedelta(seconds=1))
        )
        by = self.other if "rotate_unannounced" in self.tamper else old
        self.rotated = (old, by.signed(body), iso(now))
        self.signer = new
        self.told |= self.tamper & ROTATE

    def handle(self, request: httpx.Request) -> httpx.Response:
        resp = self._handle(request)
        path = request.url.path
        if (
            request.method == "POST"
            and path.startswith(f"/v1/matches/{self.match_id}/")
            and path.endswith(SEAT_POSTS)
            and 400 <= resp.status_code < 500
            and resp.status_code != 429
            and not self.tamper & {"refuse_unsigned", "refuse_forged"}
        ):  # an honest server signs its refusals of a seat's requests (fairness-v2 §7)
            doc = resp.json()
            doc["refusal"] = self.refusal(request.content, resp.status_code, doc["error"]["code"])
            return httpx.Response(resp.status_code, json=doc)
        return resp

    def refusal(self, body: bytes, status: int, reason: str) -> dict[str, Any]:
        return self.signer.signed(
            {
                "type": "refusal",
                "protocol": PROTOCOL_V2,
                "match_id": self.match_id,
                "request": hashlib.sha256(body).hexdigest(),
                "status": status,
                "reason": reason,
                "at": iso(datetime.now(UTC)),
            }
        )

    def head(self) -> dict[str, Any]:
        """The signed head the server stands at now (at its own time: the backdate tamper's
        events are stamped before it)."""
        assert self.chain is not None
        self.told |= self.tamper & {"backdate"}
        return self.signer.signed(
            {
                "type": "head",
                "protocol": PROTOCOL_V2,
                "match_id": self.match_id,
                "seq": len(self.events) - 1,
                "chain": self.chain.hex(),
                "at": iso(
                    self.now()
                    + (timedelta(seconds=BACKDATE) if "backdate" in self.tamper else timedelta())
                ),
            }
        )

    def due(self) -> datetime | None:
        """The owing seat's deadline: the at of the event that put it on turn plus
        turn_seconds."""
        if self.owed_at is None:
            return None
        return self.owed_at + timedelta(seconds=float(self.ruleset["turn_seconds"]))

    def censor(self, request: httpx.Request) -> httpx.Response | None:
        """The CENSOR tampers: seat 0's move at step 3 refused (unsigned, with a forged
        refusal, or 503), again and again; once its deadline has passed, the next request
        finds the match ended by seat 0's timeout."""
        due = self.due()
        if self.censoring and not self.timed_out and due is not None and datetime.now(UTC) >= due:
            self._append({"type": "end", "reason": "timeout", "seat": 0})
            self.timed_out = True
            self.ended = {
                "status": "finished",
                "reason": "timeout",
                "forfeited": [0],
                "winners": [1],
            }
            self.version += 1
        if (
            request.method != "POST"
            or not request.url.path.endswith("/actions")
            or self._seat(request) != 0
            or self.owing() != ("move", 0)
            or self.step < 3
            or self.timed_out
        ):
            return None
        self.censoring = True
        self.told |= self.tamper & CENSOR
        self.sent.append(Sent(request.method, request.url.path, request.content))
        if "unavailable" in self.tamper:
            return err(503, "unavailable", "try again later")
        resp = {"error": {"code": "stale_chain", "message": "the chain moved on"}}
        if "refuse_forged" in self.tamper:
            resp["refusal"] = self.refusal(b'{"another": "request"}', 409, "stale_chain")
        return httpx.Response(409, json=resp)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        if self.tamper & ROTATE and self.rotated is None and self.step >= 2:
            self.rotate()
        if self.tamper & CENSOR:
            refused = self.censor(request)
            if refused is not None:
                return refused
        plan = self.faults.get("/actions")
        if request.method == "POST" and request.url.path.endswith("/actions") and plan:
            if plan[0] == "429":
                plan.pop(0)
                self.sent.append(Sent(request.method, request.url.path, request.content))
                self.retry_after_at = time.monotonic()
                return httpx.Response(
                    429,
                    json={"error": {"code": "rate_limited", "message": "slow down"}},
                    headers={"Retry-After": "1"},
                )
        return super().handle(request)

    def now(self) -> datetime:
        t = datetime.now(UTC)
        return t - timedelta(hours=1) if "skew" in self.tamper else t

    def keys(self) -> dict[str, Any]:
        out = super().keys()
        if self.rotated is not None:  # the old key, retired, then the new one, announced
            old, announcement, at = self.rotated
            (new,) = out["keys"]
            out["keys"] = [
                {
                    **new,
                    "key_id": old.key_id,
                    "public_key": public_key_b64(old.public_key),
                    "current": False,
                    "retired_at": at,
                },
                {
                    **new,
                    "created_at": announcement["created_at"],
                    "activates_at": at,
                    "announcements": [announcement],
                },
            ]
        out["log"] = {"origin": self.note.name, "vkey": self.note.vkey}
        return out

    def receipt(self, seq: int, chain: bytes) -> dict[str, Any]:
        signer = self.signer
        if "retired_resign" in self.tamper and self.rotated is not None:
            signer = self.rotated[0]  # the key retired when the rotation took over
            self.told.add("retired_resign")
        return signer.signed(
            {
                "type": "receipt",
                "protocol": PROTOCOL_V2,
                "match_id": self.match_id,
                "seq": seq,
                "chain": chain.hex(),
                "at": iso(self.now()),
            }
        )

    def _append(self, ev: dict[str, Any], at: float | None = None) -> None:
        assert self.chain is not None and at is None
        self.owed_at = self.now()
        ev = {"seq": len(self.events), **ev, "at": iso(self.owed_at)}
        self.events.append(ev)
        self.chain = chain_next(self.chain, ev)

    def checkpoint(self, leaves: list[bytes], signer: tlog.NoteSigner | None = None) -> str:
        hashes = [leaf_hash(x) for x in leaves]
        cp = tlog.Checkpoint(self.note.name, len(hashes), root(hashes))
        note = tlog.sign_note(cp.text, [signer or self.note])
        if "witness_down" in self.tamper:
            return note
        return note + self.witness.cosign(cp.text).line

    def forked(self) -> list[bytes]:
        """Another history: an early entry rewritten."""
        out = list(self.leaves)
        out[1] = canonical_json({"type": "filler", "i": "rewritten"})
        return out

    def status(self) -> str:
        return "finished" if self.timed_out else super().status()

    def view(self, seat: int) -> dict[str, Any]:
        out = super().view(seat)
        owing = self.owing()
        if out["status"] == "playing" and owing is not None:
            due = self.due() or datetime.now(UTC) + timedelta(seconds=300)
            out["deadline"] = {"seat": owing[1], "seq": len(self.events), "due": iso(due)}
        if self.chain is not None:
            out["head"] = self.head()
        if "value_early" in self.tamper and owing == ("move", 0) and seat == 1 and self.step > 1:
            out["turn"] = 1
            out["legal_actions"] = [{"type": "roll_value"}]
            out["fresh_roll"] = {"label": f"g0/roll/{self.step}", "owes": [1]}
        if self.timed_out:
            out["turn"] = None
            out["legal_actions"] = []
            out.pop("deadline", None)
        return out

    def act(self, seat: int, body: dict[str, Any]) -> httpx.Response:
        if self.timed_out:
            return err(409, "match_over")
        if "early_timeout" in self.tamper and self.owing() == ("move", 0) and self.step > 1:
            # it read the move, ignores it and times the seat out long before its deadline
            self._append({"type": "end", "reason": "timeout", "seat": seat})
            self.timed_out = True
            return err(409, "match_over", "the match ended")
        resp = super().act(seat, body)
        if resp.status_code != 200:
            return resp
        # what the action logged, as the public log shows it (the answer's ``events``)
        doc = resp.json()
        logged = [dict(e) for e in self.events[doc["first_seq"] :]]
        if "answer_events_forged" in self.tamper and logged:
            self.told.add("answer_events_forged")
            logged[0]["action"] = {"type": "move", "steps": [[13, 10]]}
        return httpx.Response(200, json={**doc, "events": logged})

    def transcript(self) -> dict[str, Any]:
        doc = super().transcript()
        if "rewrite" in self.tamper:
            self.told.add("rewrite")
            events = [dict(e) for e in doc["events"]]
            last = max(i for i, e in enumerate(events) if e["type"] == "action")
            events[last]["action"] = {"type": "move", "steps": [[13, 10]]}
            assert self.lock is not None
            chain = chain_start(self.lock)
            for e in events:
                chain = chain_next(chain, e)
            body = {k: v for k, v in doc.items() if k != "signature"}
            doc = self.signer.signed({**body, "events": events, "chain": chain.hex()})
        if "cut_short" in self.tamper:
            self.told.add("cut_short")
            doc = self.cut_short(doc)
        return doc

    def cut_short(self, doc: dict[str, Any]) -> dict[str, Any]:
        """The cut_short tamper: the match as if seat 0 had timed out instead of making its
        last move (at that move's deadline), its result replayed and the transcript
        re-signed."""
        last = max(
            i for i, e in enumerate(doc["events"]) if e["type"] == "action" and e["seat"] == 0
        )
        events = [dict(e) for e in doc["events"][:last]]
        due = datetime.fromisoformat(events[-1]["at"]) + timedelta(
            seconds=float(self.ruleset["turn_seconds"])
        )
        events.append({"seq": last, "type": "end", "reason": "timeout", "seat": 0, "at": iso(due)})
        assert self.lock is not None
        chain = chain_start(self.lock)
        for e in events:
            chain = chain_next(chain, e)
        body = {k: v for k, v in doc.items() if k != "signature"}
        result = {"status": "finished", "reason": "timeout", "forfeited": [0], "winners": [1]}
        return self.signer.signed(
            {**body, "events": events, "chain": chain.hex(), "result": result, "ended_at": iso(due)}
        )

    def route(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        base = f"/v1/matches/{self.match_id}"
        text = {"content-type": "text/plain; charset=utf-8"}
        if path == base + "/log-proof":
            if self.log_index is None:
                return err(409, "not_locked")
            note = self.checkpoint(
                self.leaves, self.other_note if "checkpoint_forged" in self.tamper else None
            )
            hashes = [leaf_hash(x) for x in self.leaves]
            proof = tlog.TlogProof(
                self.log_index,
                tuple(audit_path(self.log_index, hashes)),
                note,
                extra=self.leaves[self.log_index],
            )
            missing = WITNESS if "witness_down" in self.tamper else ""
            self.told |= self.tamper & {"witness_down"}
            return httpx.Response(
                200,
                content=proof.text.encode(),
                headers={**text, "qahwa-witnesses-missing": missing},
            )
        if path == "/log/checkpoint":
            if "equivocate" in self.tamper:
                note = self.checkpoint(self.forked())
            elif "fork" in self.tamper:
                note = self.checkpoint(self.forked()[:3])
            else:
                note = self.checkpoint(self.leaves)
            return httpx.Response(200, content=note.encode(), headers=text)
        if path == "/v1/log/consistency":
            first = int(request.url.params["first"])
            second = int(request.url.params["second"])
            hashes = [leaf_hash(x) for x in self.leaves[:second]]
            between = consistency_proof(first, hashes)
            return httpx.Response(
                200, json={"first": first, "second": second, "proof": [h.hex() for h in between]}
            )
        if path == base + "/events/stream":
            after = int(request.url.params.get("after", "-1"))
            chain, shown = chain_start(self.lock) if self.lock is not None else b"", []
            for e in self.events:
                chain = chain_next(chain, e)
                if e["seq"] > after:  # each with the chain head after it, unless the lie
                    self.told |= self.tamper & {"sse_unchained"}
                    shown.append(
                        e if "sse_unchained" in self.tamper else {**e, "chain": chain.hex()}
                    )
            chunks = "".join(
                f"id: {e['seq']}\nevent: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in shown
            )
            if self.chain is not None:
                chunks += f"event: head\ndata: {json.dumps(self.head())}\n\n"
            if self.status() == "finished":
                chunks += 'event: finished\ndata: {"status": "finished"}\n\n'
            return httpx.Response(
                200, content=chunks.encode(), headers={"content-type": "text/event-stream"}
            )
        if path == base + "/state" and "events_after" in request.url.params:
            # the view with the log's events after a seq, up to the view's (one read)
            after = int(request.url.params["events_after"])
            resp = super().route(request)
            if resp.status_code != 200:
                return resp
            events = [e for e in self.events if e["seq"] > after]
            return httpx.Response(200, json={**resp.json(), "events": events})
        if path == base + "/events":
            after = int(request.url.params.get("after", "-1"))
            return httpx.Response(
                200,
                json={
                    "match_id": self.match_id,
                    "status": self.status(),
                    "version": self.version,
                    "next_seq": len(self.events),
                    "events": [e for e in self.events if e["seq"] > after],
                },
            )
        return super().route(request)


#: issue 46's lies a server tells a sealed seat in one of its views (:class:`SealedLiar`)
SEALED_LIES = {
    "sealed_owed_own_items": "a view's owed share step names seat 0's own items",
    "sealed_reveal_mid_hand": "a view in mid-hand asks seat 0 for reveal_key (its hand secret)",
    "sealed_open_made_up": "a view in mid-hand asks seat 0 for an open step of its first item",
    "sealed_dealt_swapped": "a view's dealt says seat 0's items are seat 1's (and asks seat 0 "
    "for its shares of them)",
}
TAMPERS.update(SEALED_LIES)


class SealedLiar:
    """A real server (``upstream``) behind a proxy that lies to seat 0 of a sealed table the
    way its tamper (one of :data:`SEALED_LIES`) says, in the first of seat 0's views the lie
    applies to. Seat 0 is the seat whose token read a view of seat 0. A POST of seat 0 sent
    after the lying view (before its next view) is answered 409 and kept as ``stolen``: a
    conforming seat sends none. :meth:`leaks` lists what seat 0 gave away over the match."""

    def __init__(self, tamper: set[str], upstream: str) -> None:
        (self.lie,) = tamper & set(SEALED_LIES)
        self.tamper = tamper
        self.upstream = httpx.URL(upstream)
        self.inner = httpx.HTTPTransport()
        self.sent: list[Sent] = []
        self.told: set[str] = set()
        self.lied: dict[str, Any] | None = None  # the lying view, once served
        self.after_lie = False
        self.token: str | None = None  # seat 0's
        #: seat 0's actions: (action, the honest owed then, the hand then)
        self.posts: list[tuple[dict[str, Any], Any, int]] = []
        self.stolen: list[dict[str, Any]] = []
        self.honest_owed: Any = None
        self.hand = -1
        self.dealt0: dict[int, set[int]] = {}  # hand -> every item dealt to seat 0

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def close(self) -> None:
        self.inner.close()

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        path = request.url.path
        self.sent.append(Sent(request.method, path, body))
        mine = request.headers.get("authorization") == f"Bearer {self.token}"
        if request.method == "POST" and path.endswith("/actions") and mine:
            action = json.loads(body)["action"]
            if self.after_lie:
                self.stolen.append(action)
                self.after_lie = False
                return err(409, "stale_version", "the match moved on")
            self.posts.append((action, self.honest_owed, self.hand))
        headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
        url = self.upstream.copy_with(path=path, query=request.url.query or None)
        resp = self.inner.handle_request(
            httpx.Request(request.method, url, headers=headers, content=body)
        )
        content = resp.read()
        resp.close()
        keep = {"content-type": resp.headers.get("content-type", "application/json")}
        if "retry-after" in resp.headers:
            keep["retry-after"] = resp.headers["retry-after"]
        out = httpx.Response(resp.status_code, content=content, headers=keep)
        if request.method != "GET" or not path.endswith("/state") or resp.status_code != 200:
            return out
        view = out.json()
        if view.get("seat") != 0:
            return out
        self.token = request.headers.get("authorization", "").removeprefix("Bearer ")
        sv = view.get("sealed") or {}
        self.honest_owed = sv.get("owed")
        if sv.get("dealt"):
            self.hand = int(sv["hand"])
            self.dealt0.setdefault(self.hand, set()).update(sv["dealt"][0])
        self.after_lie = False
        if self.lied is None and view.get("turn") == 0 and sv:
            changed = self._lie(view)
            if changed is not None:
                self.lied = changed
                self.after_lie = True
                self.told.add(self.lie)
                return httpx.Response(200, json=changed)
        return out

    def _lie(self, view: dict[str, Any]) -> dict[str, Any] | None:
        v = json.loads(json.dumps(view))
        sv = v["sealed"]
        owed = sv.get("owed")
        mine = list(sv["dealt"][0])
        plays = any(a.get("type") == "play" for a in v["legal_actions"])
        if self.lie == "sealed_owed_own_items" and owed and owed["step"] == "share" and mine:
            sv["owed"] = {**owed, "items": mine}
        elif self.lie == "sealed_dealt_swapped" and owed and owed["step"] == "share" and mine:
            # the seat's items said to be seat 1's (and seat 1's its own): its shares asked
            # for are of its own items, which the lying view says are seat 1's
            sv["dealt"][0], sv["dealt"][1] = sv["dealt"][1], sv["dealt"][0]
            v["hand"] = sorted(sv["dealt"][0])
            sv["owed"] = {**owed, "items": mine}
        elif self.lie == "sealed_reveal_mid_hand" and plays:
            sv["owed"] = {"seat": 0, "step": "reveal_key"}
            v["legal_actions"] = v["suggested_actions"] = [{"type": "sealed", "step": "reveal_key"}]
        elif self.lie == "sealed_open_made_up" and plays:
            sv["owed"] = {"seat": 0, "step": "open", "items": [v["hand"][0]]}
            v["legal_actions"] = v["suggested_actions"] = [{"type": "sealed", "step": "open"}]
        else:
            return None
        return v

    def leaks(self) -> list[str]:
        """What seat 0 gave away over the match that a conforming sealed seat keeps: any POST
        after the lie, a share of its own items (but each one's opening as it plays it), its
        key before its machine owed it, an open step, an item opened twice."""
        out = [f"sent after the lie: {a}" for a in self.stolen]
        opened: list[tuple[int, Any]] = []
        for action, honest, hand in self.posts:
            own = self.dealt0.get(hand, set())
            if action.get("type") == "sealed":
                step = action.get("step")
                if step == "open":
                    out.append(f"an open step: {action}")
                elif honest is None or step != honest.get("step"):
                    out.append(f"a {step} step not owed (owed: {honest})")
                elif step == "share" and own & {x["item"] for x in action["shares"]}:
                    out.append(f"a share of its own items {own}: {action}")
            elif "share" in action:
                if action["type"] != "play" or action.get("item") not in own:
                    out.append(f"a share with an action not its own item's play: {action}")
                opened.append((hand, action.get("item")))
        if len(set(opened)) != len(opened):
            out.append(f"an item opened twice: {opened}")
        return out


class FakeHub:
    """A local HTTP server making and serving :class:`FakeC2SP` fakes."""

    def __init__(self, upstream: str | None = None) -> None:
        #: the real server a :class:`SealedLiar` lies in front of
        self.upstream = upstream
        self.fakes: dict[str, FakeC2SP | SealedLiar] = {}
        self._lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n) if n else b""
                url = urlsplit(self.path)
                if url.path == "/new" and self.command == "POST":
                    q = parse_qs(url.query)
                    tamper = {t for t in q.get("tamper", [""])[0].split(",") if t}
                    faults = [f for f in q.get("faults", [""])[0].split(",") if f]
                    unknown = tamper - set(TAMPERS)
                    if unknown:
                        return self._answer(httpx.Response(400, text=f"unknown {unknown}"))
                    with hub._lock:
                        name = f"f{len(hub.fakes)}"
                        if tamper & set(SEALED_LIES):
                            assert hub.upstream is not None, "FakeHub(upstream=URL)"
                            hub.fakes[name] = SealedLiar(tamper, hub.upstream)
                        else:
                            hub.fakes[name] = FakeC2SP(tamper=tamper, faults={"/actions": faults})
                    return self._answer(httpx.Response(200, json={"base": f"{hub.url}/{name}"}))
                parts = url.path.split("/", 2)
                fake = hub.fakes.get(parts[1]) if len(parts) > 2 else None
                if fake is None:
                    return self._answer(err(404, "not_found"))
                rest = "/" + parts[2]
                if rest == "/_sent":
                    sent = [
                        {"method": s.method, "path": s.path, "body": s.content.decode()}
                        for s in fake.sent
                    ]
                    return self._answer(httpx.Response(200, json=sent))
                if rest == "/_leaks":
                    return self._answer(httpx.Response(200, json=fake.leaks()))
                headers = {k.lower(): v for k, v in self.headers.items()}
                req = httpx.Request(
                    self.command,
                    f"http://fake{rest}" + (f"?{url.query}" if url.query else ""),
                    headers=headers,
                    content=body,
                )
                with hub._lock:
                    try:
                        resp = fake.handle(req)
                    except httpx.TransportError:  # a dropped connection or a lost answer
                        self.close_connection = True
                        return None
                return self._answer(resp)

            def _answer(self, resp: httpx.Response) -> None:
                data = resp.content
                self.send_response(resp.status_code)
                self.send_header(
                    "Content-Type", resp.headers.get("content-type", "application/json")
                )
                for name in ("Retry-After", "Qahwa-Witnesses-Missing"):
                    if name.lower() in resp.headers:
                        self.send_header(name, resp.headers[name.lower()])
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _serve
            do_POST = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.shutdown()
        self.server.server_close()
        for fake in self.fakes.values():
            if isinstance(fake, SealedLiar):
                fake.close()
        self._thread.join(timeout=5)

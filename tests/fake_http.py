"""tests/fake_server.py's scripted qahwa-fair/2 server over real HTTP, with the C2SP log a
client checks (a checkpoint signed by the log's note key, a tlog-proof of the lock, the
consistency proofs between checkpoints), event times and deadlines, for clients that are not
Python (clients/ts, tests/client/test_clients_ts.py).

``with FakeHub() as hub``: ``POST {hub.url}/new?tamper=a,b`` makes a fresh fake and answers
``{"base": URL}``; that fake answers under it. ``GET {base}/_sent`` lists what it received.
Each tamper makes it lie one way a dishonest operator could (``TAMPERS``)."""

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
from fake_server import FakeServer, Sent, err
from rfc6962 import audit_path, consistency_proof, leaf_hash, root

import tlog
from fairness import PROTOCOL_V2, chain_next, chain_start
from fairness.canonical import canonical_json

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
}


def iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class FakeC2SP(FakeServer):
    """The fake with a C2SP log, ``at`` on events and receipts, and deadlines."""

    def __post_init__(self) -> None:
        if "precomputed" in self.tamper:
            self.ruleset = {**self.ruleset, "fresh_rolls": False}
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

    def handle(self, request: httpx.Request) -> httpx.Response:
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
        out["log"] = {"origin": self.note.name, "vkey": self.note.vkey}
        return out

    def receipt(self, seq: int, chain: bytes) -> dict[str, Any]:
        return self.signer.signed(
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
        ev = {"seq": len(self.events), **ev, "at": iso(self.now())}
        self.events.append(ev)
        self.chain = chain_next(self.chain, ev)

    def checkpoint(self, leaves: list[bytes], signer: tlog.NoteSigner | None = None) -> str:
        hashes = [leaf_hash(x) for x in leaves]
        cp = tlog.Checkpoint(self.note.name, len(hashes), root(hashes))
        return tlog.sign_note(cp.text, [signer or self.note])

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
            due = datetime.now(UTC) + timedelta(seconds=300)
            out["deadline"] = {"seat": owing[1], "seq": len(self.events), "due": iso(due)}
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
        return super().act(seat, body)

    def transcript(self) -> dict[str, Any]:
        doc = super().transcript()
        if "rewrite" in self.tamper:
            events = [dict(e) for e in doc["events"]]
            last = max(i for i, e in enumerate(events) if e["type"] == "action")
            events[last]["action"] = {"type": "move", "steps": [[13, 10]]}
            assert self.lock is not None
            chain = chain_start(self.lock)
            for e in events:
                chain = chain_next(chain, e)
            body = {k: v for k, v in doc.items() if k != "signature"}
            doc = self.signer.signed({**body, "events": events, "chain": chain.hex()})
        return doc

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
            return httpx.Response(200, content=proof.text.encode(), headers=text)
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
            chunks = "".join(
                f"id: {e['seq']}\nevent: {e['type']}\ndata: {json.dumps(e)}\n\n"
                for e in self.events
            )
            if self.status() == "finished":
                chunks += 'event: finished\ndata: {"status": "finished"}\n\n'
            return httpx.Response(
                200, content=chunks.encode(), headers={"content-type": "text/event-stream"}
            )
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


class FakeHub:
    """A local HTTP server making and serving :class:`FakeC2SP` fakes."""

    def __init__(self) -> None:
        self.fakes: dict[str, FakeC2SP] = {}
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
                if "retry-after" in resp.headers:
                    self.send_header("Retry-After", resp.headers["retry-after"])
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
        self._thread.join(timeout=5)

"""A small qahwa-fair/2 server behind ``httpx.MockTransport``, for the client's own tests.

It speaks the v2 flow of docs/api.md (create → commit → lock → reveal → play → transcript)
with real signatures (``fairness.Signer``), a real log (leaves, RFC 9162 proofs under signed
tree heads), the event chain, receipts and seat-signature checks, and a scripted game of
fresh rolls: each step is owed by the seats it names, and a roll-chain value is checked
against the seat's tip in the lock. ``tamper`` switches make it lie the ways a dishonest
operator could; every request is recorded as sent (method, path, bytes).

With a ``clock`` (tests/support/fake_clock.py) it writes the times of the 2026-12-03 revision
(fairness-v2.md §7): every event and receipt carries ``at`` from that clock, views show the
``deadline``, and :meth:`FakeServer.end_by_timeout` ends the match by the owing seat's timeout
(at the deadline, or as early or as late as the test says).
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from fairness import (
    PROTOCOL_V2,
    V2,
    SeedError,
    Signer,
    chain_next,
    chain_start,
    check_roll_value,
    public_key_b64,
    seat_sig_message,
    seed_commitment,
    verify_bytes,
)
from fairness.errors import SignatureError
from fairness.protocol import canonical_json
from fairness.records import Lock, lock_seats
from tests.support.rfc6962 import audit_path, leaf_hash, root

RULESET = {
    "cube": True,
    "crawford": True,
    "fresh_rolls": True,
    "match_length": 1,
    "max_seconds": 86400,
    "reveal_seconds": 120,
    "turn_seconds": 300,
}

# The scripted game: (step, the seats that owe it, in order). A "roll" step is the roller's
# {"type": "roll", "value"} then the opponent's {"type": "roll_value", "value"}; "move" is any
# other action by the seat on turn.
SCRIPT = [
    ("opening", [0, 1]),
    ("move", [0]),
    ("roll", [1, 0]),
    ("move", [1]),
    ("roll", [0, 1]),
    ("move", [0]),
]


def err(status: int, code: str, message: str = "") -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "message": message or code}})


@dataclass
class Sent:
    method: str
    path: str
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content) if self.content else None


@dataclass
class FakeServer:
    game: str = "tawla"
    ruleset: dict[str, Any] = field(default_factory=lambda: dict(RULESET))
    names: list[str] = field(default_factory=lambda: ["Layla", "Omar"])
    tamper: set[str] = field(default_factory=set)
    # requests to fail: path suffix → list of what to do on successive hits
    # ("drop": raise ConnectError before acting, "lose": act, then raise ReadTimeout,
    #  "503": answer 503 before acting)
    faults: dict[str, list[str]] = field(default_factory=dict)
    #: a clock with ``now()`` (epoch seconds): the server's times (None: a server from before
    #: the revision, whose events and receipts carry none)
    clock: Any = None

    def __post_init__(self) -> None:
        self.ended: dict[str, Any] | None = None  # the result of an end other than by play
        self.owed_since: float | None = None  # when the owing seat was put on turn
        self.signer = Signer.generate()
        self.other = Signer.generate()
        self.server_seed = V2.new_server_seed()
        self.match_id = "m-fake"
        self.sent: list[Sent] = []
        self.leaves: list[bytes] = [canonical_json({"type": "filler", "i": i}) for i in range(5)]
        self.tokens = [f"tok{i}" for i in range(len(self.names))]
        self.commits: list[dict[str, Any] | None] = [None] * len(self.names)
        self.revealed: list[dict[str, Any] | None] = [None] * len(self.names)
        self.lock: dict[str, Any] | None = None
        self.log_index: int | None = None
        self.events: list[dict[str, Any]] = []
        self.chain: bytes | None = None
        self.step = 0  # index into SCRIPT
        self.owed_i = 0  # index into the step's owing seats
        self.values_used = [0] * len(self.names)
        self.last_value: list[bytes | None] = [None] * len(self.names)
        self.version = 0
        self.record = self.signer.signed(
            {
                "type": "commit",
                "protocol": PROTOCOL_V2,
                "match_id": self.match_id,
                "game": self.game,
                "ruleset": canonical_json(self.ruleset).decode(),
                "commitment": V2.commitment(self.server_seed),
                "seats": [{"seat": i, "name": n, "house": False} for i, n in enumerate(self.names)],
                "created_at": "2026-12-03T09:00:00Z",
            }
        )

    # -- plumbing -------------------------------------------------------------------------------
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def client_args(self) -> dict[str, Any]:
        return {"http": httpx.Client(transport=self.transport()), "retry_delay": 0}

    def keys(self) -> dict[str, Any]:
        return {
            "keys": [
                {
                    "key_id": self.signer.key_id,
                    "alg": "ed25519",
                    "public_key": public_key_b64(self.signer.public_key),
                    "created_at": "2026-12-03T09:00:00Z",
                    "current": True,
                }
            ]
        }

    def posts(self, tail: str) -> list[Sent]:
        return [s for s in self.sent if s.method == "POST" and s.path.endswith(tail)]

    def receipt(self, seq: int, chain: bytes) -> dict[str, Any]:
        body = {
            "type": "receipt",
            "protocol": PROTOCOL_V2,
            "match_id": self.match_id,
            "seq": seq,
            "chain": chain.hex(),
        }
        if self.clock is not None:
            assert self.lock is not None
            body["at"] = self.lock["locked_at"] if seq < 0 else self.events[seq]["at"]
        return self.signer.signed(body)

    @staticmethod
    def iso(ts: float) -> str:
        ms = round(ts * 1000)  # the times here are whole milliseconds, give or take a float
        t = datetime.datetime.fromtimestamp(ms // 1000, datetime.UTC)
        return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"

    def deadline(self) -> float | None:
        """When the owing seat's step is due (§7): owed since the event that put it on turn
        (the lock's locked_at for the first step) plus turn_seconds."""
        if self.owed_since is None or self.owing() is None or self.ended is not None:
            return None
        return self.owed_since + float(self.ruleset["turn_seconds"])

    def end_by_timeout(self, early: float = 0.0) -> dict[str, Any]:
        """End the match by the owing seat's timeout, ``early`` seconds before its deadline
        (0: exactly at it; negative: later), and return the end event."""
        owing = self.owing()
        due = self.deadline()
        assert owing is not None and due is not None and self.clock is not None
        seat = owing[1]
        self._append({"type": "end", "reason": "timeout", "seat": seat}, at=due - early)
        self.ended = {
            "status": "finished",
            "reason": "timeout",
            "forfeited": [seat],
            "winners": [1 - seat],
        }
        self.version += 1
        return self.events[-1]

    def _seat(self, request: httpx.Request) -> int | None:
        auth = request.headers.get("authorization", "")
        tok = auth.removeprefix("Bearer ")
        return self.tokens.index(tok) if tok in self.tokens else None

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.sent.append(Sent(request.method, path, request.content))
        fault = None
        for tail, plan in self.faults.items():
            if path.endswith(tail) and request.method == "POST" and plan:
                fault = plan.pop(0)
        if fault == "drop":
            raise httpx.ConnectError("connection refused", request=request)
        if fault == "503":
            return err(503, "unavailable")
        resp = self.route(request)
        if fault == "lose":
            raise httpx.ReadTimeout("no answer", request=request)
        return resp

    def route(self, request: httpx.Request) -> httpx.Response:
        path, method = request.url.path, request.method
        body: Any = json.loads(request.content) if request.content else None
        base = f"/v1/matches/{self.match_id}"
        if path == "/v1/keys":
            return httpx.Response(200, json=self.keys())
        if path == "/v1/matches" and method == "POST":
            return httpx.Response(201, json=self.created())
        if path == "/v1/log/proof":
            return self.proof(int(request.url.params["index"]))
        if path.startswith("/v1/rng"):
            return self.rng(request, path, body)
        if path == base:
            return httpx.Response(200, json={"record": self.record})
        seat = self._seat(request)
        if path.startswith(base + "/seats/") and method == "POST":
            n = int(path.split("/")[5])
            if seat != n:
                return err(401, "unauthorized")
            if path.endswith("/commit"):
                return self.commit(n, body)
            return self.reveal(n, body)
        if path == base + "/lock":
            if self.lock is None:
                return err(409, "not_locked")
            assert self.chain is not None
            return httpx.Response(
                200,
                json={
                    "match_id": self.match_id,
                    "lock": self.lock,
                    "log_index": self.log_index,
                    "receipt": self.receipt(-1, chain_start(self.lock)),
                },
            )
        if path == base + "/state":
            assert seat is not None
            return httpx.Response(200, json=self.view(seat))
        if path == base + "/actions":
            assert seat is not None
            return self.act(seat, body)
        if path == base + "/events":
            return httpx.Response(
                200,
                json={
                    "match_id": self.match_id,
                    "status": "playing",
                    "version": self.version,
                    "next_seq": len(self.events),
                    "events": self.events,
                },
            )
        if path == base + "/transcript":
            return httpx.Response(200, json=self.transcript())
        return err(404, "not_found")

    # -- a plain session (seat 0 of a one-seat "match") ------------------------------------------
    def rng(self, request: httpx.Request, path: str, body: Any) -> httpx.Response:
        sid = "r-fake"
        if path == "/v1/rng":
            if body:
                return err(422, "validation_error")
            sent, signer = self.sent, self.signer
            self.game, self.names, self.ruleset = "rng", ["session"], {}
            self.__post_init__()  # one seat now; the requests seen and the key stay
            self.sent, self.signer, self.match_id = sent, signer, sid
            rec = {**self.record, "match_id": sid, "game": "rng", "ruleset": "{}"}
            self.record = self.signer.signed(rec)
            return httpx.Response(
                201,
                json={
                    "session_id": sid,
                    "protocol": PROTOCOL_V2,
                    "commitment": rec["commitment"],
                    "created_at": rec["created_at"],
                    "status": "seating",
                    "version": 0,
                    "record": self.record,
                    "token": self.tokens[0],
                },
            )
        if self._seat(request) != 0:
            return err(401, "unauthorized")
        if path.endswith("/seed"):
            com = seed_commitment(sid, 0, body["nonce"], body["client_seed"])
            if "lock_commitment" in self.tamper:
                com = com[::-1]
            self.commits[0] = {"seed_commitment": com, "key": None, "roll_chain": None}
            self._lock()
            self.revealed[0] = body
            assert self.chain is not None
            return httpx.Response(
                200,
                json={
                    "session_id": sid,
                    "status": "playing",
                    "version": 1,
                    "chain": self.chain.hex(),
                    "lock": self.lock,
                    "log_index": self.log_index,
                    "receipt": self.receipt(-1, self.chain),
                },
            )
        if path.endswith("/draws"):
            self._append(
                {
                    "type": "chance",
                    "label": f"d{len(self.events)}",
                    "kind": "dice",
                    "result": [2, 5],
                }
            )
            assert self.chain is not None
            chain = bytes(32) if "receipt_lies" in self.tamper else self.chain
            return httpx.Response(
                200,
                json={
                    "session_id": sid,
                    "version": 2,
                    "status": "playing",
                    "seq": len(self.events) - 1,
                    "label": self.events[-1]["label"],
                    "kind": "dice",
                    "result": [2, 5],
                    "receipt": self.receipt(len(self.events) - 1, chain),
                },
            )
        return err(404, "not_found")

    # -- seating --------------------------------------------------------------------------------
    def created(self) -> dict[str, Any]:
        record = self.record
        if "record_ruleset" in self.tamper:
            record = self.signer.signed(
                {**record, "ruleset": canonical_json({**self.ruleset, "match_length": 7}).decode()}
            )
        return {
            "match_id": self.match_id,
            "protocol": PROTOCOL_V2,
            "game": self.game,
            "ruleset": record["ruleset"],
            "commitment": record["commitment"],
            "created_at": record["created_at"],
            "status": "seating",
            "version": 0,
            "seats": [
                {"seat": i, "name": n, "token": self.tokens[i], "house": False}
                for i, n in enumerate(self.names)
            ],
            "record": record,
        }

    def commit(self, n: int, body: dict[str, Any]) -> httpx.Response:
        if self.commits[n] is not None:
            return err(409, "already_committed")
        if "refuse_commit" in self.tamper:
            return err(409, "duplicate_commitment")
        self.commits[n] = body
        if all(c is not None for c in self.commits):
            self._lock()
        out = {
            "match_id": self.match_id,
            "seat": n,
            "status": "seating",
            "version": self.version,
            "chain": self.chain.hex() if self.chain else None,
            "lock": self.lock,
            "receipt": self.receipt(-1, self.chain) if self.chain is not None else None,
        }
        return httpx.Response(200, json=out)

    def _lock(self) -> None:
        seats = []
        for i, name in enumerate(self.names):
            c = self.commits[i]
            assert c is not None
            seats.append(
                {
                    "seat": i,
                    "name": name,
                    "house": False,
                    "seed_commitment": c["seed_commitment"],
                    "key": c["key"],
                    "roll_chain": c["roll_chain"],
                }
            )
        ruleset = canonical_json(self.ruleset).decode()
        if "lock_ruleset" in self.tamper:
            ruleset = canonical_json({**self.ruleset, "match_length": 7}).decode()
        if "lock_commitment" in self.tamper and len(seats) > 1:  # seat 0 holds seat 1's, turned
            seats[0]["seed_commitment"] = seats[1]["seed_commitment"][::-1]
        times = ("2026-12-03T09:01:00Z", "2026-12-03T09:03:00Z", "2026-12-04T09:01:00Z")
        if self.clock is not None:
            now = self.clock.now()
            times = (
                self.iso(now),
                self.iso(now + self.ruleset["reveal_seconds"]),
                self.iso(now + self.ruleset["max_seconds"]),
            )
            self.owed_since = round(now * 1000) / 1000
        record = Lock(
            self.match_id,
            self.game,
            ruleset,
            self.record["commitment"],
            lock_seats(seats),
            *times,
        ).to_json()
        if "lock_signer" in self.tamper:  # claims the server's key, signed by another
            lock = self.other.signed(record)
            lock["signature"]["key_id"] = self.signer.key_id
            self.lock = lock
        elif "lock_unknown_key" in self.tamper:
            self.lock = self.other.signed(record)
        else:
            self.lock = self.signer.signed(record)
        self.log_index = len(self.leaves)
        if "lock_not_logged" not in self.tamper:
            self.leaves.append(canonical_json(self.lock))
        else:  # the index points at something else
            self.leaves.append(canonical_json({"type": "filler", "i": 99}))
        self.leaves.append(canonical_json({"type": "filler", "i": 100}))
        self.chain = chain_start(self.lock)

    def proof(self, index: int) -> httpx.Response:
        if "no_proof" in self.tamper or index >= len(self.leaves):
            return err(404, "not_found")
        hashes = [leaf_hash(x) for x in self.leaves]
        head = self.signer.signed(
            {
                "type": "tree_head",
                "protocol": "qahwa-fair/1",
                "tree_size": len(hashes),
                "root_hash": root(hashes).hex(),
                "timestamp": "2026-12-03T09:02:00Z",
            }
        )
        return httpx.Response(
            200,
            json={
                "index": index,
                "tree_size": len(hashes),
                "leaf": json.loads(self.leaves[index]),
                "leaf_hash": hashes[index].hex(),
                "audit_path": [h.hex() for h in audit_path(index, hashes)],
                "tree_head": head,
            },
        )

    def reveal(self, n: int, body: dict[str, Any]) -> httpx.Response:
        if self.lock is None:
            return err(409, "not_locked")
        assert self.chain is not None
        want = self.lock["seats"][n]["seed_commitment"]
        try:
            got = seed_commitment(self.match_id, n, body["nonce"], body["client_seed"])
        except (SeedError, ValueError):
            return err(422, "bad_reveal")
        if got != want:
            return err(422, "bad_reveal")
        self.revealed[n] = body
        if all(r is not None for r in self.revealed):
            self.version += 1
        return self.seat_answer(
            n,
            chain=self.chain.hex(),
            lock=self.lock,
            receipt=self.receipt(-1, chain_start(self.lock)),
        )

    def seat_answer(self, seat: int, **fields: Any) -> httpx.Response:
        """200 to ``seat``: the match, the seat, the version and status, then ``fields``."""
        return httpx.Response(
            200,
            json={
                "match_id": self.match_id,
                "seat": seat,
                "version": self.version,
                "status": self.status(),
                **fields,
            },
        )

    # -- playing --------------------------------------------------------------------------------
    def status(self) -> str:
        if not all(r is not None for r in self.revealed):
            return "seating"
        if self.ended is not None:
            return "finished"
        return "finished" if self.step >= len(SCRIPT) else "playing"

    def owing(self) -> tuple[str, int] | None:
        if self.step >= len(SCRIPT) or self.ended is not None:
            return None
        kind, seats = SCRIPT[self.step]
        return kind, seats[self.owed_i]

    def view(self, seat: int) -> dict[str, Any]:
        status = self.status()
        base: dict[str, Any] = {
            "match_id": self.match_id,
            "seat": seat,
            "version": self.version,
            "chain": self.chain.hex() if self.chain else None,
            "lock": self.lock,
            "status": status,
            "game": self.game,
        }
        if status == "seating":
            return {
                **base,
                "turn": None,
                "legal_actions": [],
                "seats": [
                    {"seat": i, "name": n, "has_seed": False} for i, n in enumerate(self.names)
                ],
            }
        owing = self.owing()
        turn = owing[1] if owing else None
        legal: list[dict[str, Any]] = []
        fresh = None
        if owing is not None and owing[1] == seat:
            kind, _ = owing
            if kind == "move":
                legal = [{"type": "move", "steps": [[24, 21]]}, {"type": "double"}]
            elif kind == "roll" and self.owed_i == 0:
                legal = [{"type": "roll"}, {"type": "double"}]
            else:
                legal = [{"type": "roll_value"}]
        # as the engines show it: an opening owes both values, in order; a roll is pending
        # (owed by the opponent) once the roller has rolled with its own value
        if owing is not None and (
            owing[0] == "opening" or (owing[0] == "roll" and self.owed_i > 0)
        ):
            fresh = {
                "label": f"g0/{owing[0]}/{self.step}",
                "owes": SCRIPT[self.step][1][self.owed_i :],
            }
        if "values_used_ahead" in self.tamper:
            used = [u + 3 for u in self.values_used]
        else:
            used = list(self.values_used)
        due = self.deadline()
        if self.clock is not None:
            base["deadline"] = (
                {"seat": turn, "seq": len(self.events), "due": self.iso(due)}
                if due is not None and turn is not None
                else None
            )
        if self.ended is not None:
            base["result"] = self.ended
        return {
            **base,
            "turn": turn,
            "legal_actions": legal,
            "points": [0] * 24,
            "bar": [0, 0],
            "off": [0, 0],
            "dice": None,
            "cube": {"value": 1, "owner": None},
            "score": [0, 0],
            "phase": "roll",
            "match_length": 1,
            "crawford": False,
            "may_double": True,
            "fresh_roll": fresh,
            "values_used": used,
        }

    def act(self, seat: int, body: dict[str, Any]) -> httpx.Response:
        owing = self.owing()
        if owing is None:
            return err(409, "match_over")
        if body.get("version") != self.version:
            return err(409, "stale_version")
        assert self.chain is not None and self.lock is not None
        if body.get("prev") != self.chain.hex():
            return err(409, "stale_chain")
        if owing[1] != seat:
            return err(409, "not_your_turn")
        action = body["action"]
        event = {"type": "action", "seat": seat, "action": action}
        key = self.lock["seats"][seat]["key"]
        try:
            verify_bytes(
                key, str(body.get("sig")), seat_sig_message(self.match_id, self.chain, event)
            )
        except SignatureError:
            return err(422, "bad_signature")
        kind = owing[0]
        if kind in ("opening", "roll"):
            want = "roll" if kind == "roll" and self.owed_i == 0 else "roll_value"
            if action.get("type") != want:
                return err(422, "illegal_action")
            prev = self.last_value[seat] or bytes.fromhex(self.lock["seats"][seat]["roll_chain"])
            try:
                raw = check_roll_value(self.match_id, seat, prev, action.get("value"))
            except SeedError:
                return err(422, "illegal_action", "not the seat's next value")
            self.last_value[seat] = raw
            self.values_used[seat] += 1
        elif action not in ({"type": "move", "steps": [[24, 21]]}, {"type": "double"}):
            return err(422, "illegal_action")
        first_seq = len(self.events)
        self._append({**event, "sig": body["sig"]})
        if kind in ("opening", "roll") and self.owed_i + 1 < len(SCRIPT[self.step][1]):
            self.owed_i += 1
        else:
            if kind in ("opening", "roll"):
                self._append(
                    {
                        "type": "chance",
                        "label": f"g0/{kind}/{self.step}|x",
                        "kind": "dice",
                        "result": [3, 4],
                    }
                )
            self.step += 1
            self.owed_i = 0
        self.version += 1
        seq = len(self.events) - 1
        receipt_chain = self.chain
        if "receipt_lies" in self.tamper:
            receipt_chain = bytes(32)
        return self.seat_answer(
            seat,
            first_seq=first_seq,
            state=self.view(seat),
            chain=self.chain.hex(),
            receipt=self.receipt(seq, receipt_chain),
        )

    def _append(self, ev: dict[str, Any], at: float | None = None) -> None:
        assert self.chain is not None
        ev = {"seq": len(self.events), **ev}
        if self.clock is not None:
            when = self.clock.now() if at is None else at
            ev["at"] = self.iso(when)
            self.owed_since = round(when * 1000) / 1000
        self.events.append(ev)
        self.chain = chain_next(self.chain, ev)

    def transcript(self) -> dict[str, Any]:
        assert self.lock is not None and self.chain is not None
        return self.signer.signed(
            {
                "protocol": PROTOCOL_V2,
                "match_id": self.match_id,
                "game": self.game,
                "ruleset": self.lock["ruleset"],
                "commitment": self.record["commitment"],
                "server_seed": self.server_seed.hex(),
                "lock": self.lock,
                "lock_index": self.log_index,
                "seats": [
                    {
                        "seat": i,
                        "name": n,
                        "house": False,
                        "client_seed": (self.revealed[i] or {}).get("client_seed"),
                        "nonce": (self.revealed[i] or {}).get("nonce"),
                        "key": self.lock["seats"][i]["key"],
                        "roll_chain": self.lock["seats"][i]["roll_chain"],
                    }
                    for i, n in enumerate(self.names)
                ],
                "events": self.events,
                "chain": self.chain.hex(),
                "result": None,
                "created_at": "2026-12-03T09:00:00Z",
                "ended_at": "2026-12-03T09:05:00Z",
            }
        )

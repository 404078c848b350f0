"""The asynchronous client: the same handles as :mod:`qahwa_client.client`, awaitable, and
as conforming (fairness-v2.md §3a): both drive :class:`qahwa_client.conform.SeatProtocol`.

```python
async with AsyncClient("http://127.0.0.1:8000", operator_key=KEY) as qc:
    match = await qc.create_match("hokm")
    await match.start()
    view = await match.seats[0].state()
```
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from qahwa_wire.models import (
    ActionOut,
    DrawOut,
    EventsOut,
    KeysOut,
    LockOut,
    MatchCreatedOut,
    MatchOut,
    ResignOut,
    RngClosedOut,
    RngCreatedOut,
    RngSeededOut,
    SeatingOut,
    StateOut,
)

from .client import LATEST, RESEND_STATUS, STATE, Unanswered, _auth, create_body, rate_limit_delay
from .conform import MAX_SKEW, Dispute, SeatProtocol, Terms, terms_for, trusted_keys
from .errors import ApiError, raise_for
from .proto import canonical
from .sse import aiter_sse


class AsyncClient:
    """As :class:`qahwa_client.Client` (``keys``, ``operator_key``, ``retries``,
    ``retry_delay``, ``rate_limit_wait``, ``clock``, ``max_skew``), awaitable."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 30.0,
        http: httpx.AsyncClient | None = None,
        keys: Any = None,
        operator_key: str | None = None,
        retries: int = 3,
        retry_delay: float = 0.25,
        rate_limit_wait: float = 60.0,
        clock: Callable[[], float] | None = None,
        max_skew: float = MAX_SKEW,
    ) -> None:
        self.clock: Callable[[], float] = clock or time.time
        self.max_skew = max_skew
        self.base_url = base_url.rstrip("/")
        self.http = http or httpx.AsyncClient(timeout=timeout)
        self.rate_limit_wait = rate_limit_wait
        self._own = http is None
        self.pinned = trusted_keys(keys) if keys is not None else None
        self._fetched: dict[str, str] | None = None
        self.operator_key = operator_key
        self.retries = retries
        self.retry_delay = retry_delay

    async def request(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        resp = await self._exchange(
            self.http.build_request(
                method,
                self.base_url + path,
                headers=_auth(token) if token else None,
                json=json_body,
                params=params,
            )
        )
        raise_for(resp)
        return resp.json()

    async def _exchange(self, request: httpx.Request) -> httpx.Response:
        """As :meth:`qahwa_client.Client._exchange`: the same bytes again after each 429's
        ``Retry-After`` with jitter, within ``rate_limit_wait`` seconds in all."""
        waited = 0.0
        while True:
            resp = await self.http.send(request)
            delay = rate_limit_delay(resp, waited, self.rate_limit_wait)
            if delay is None:
                return resp
            waited += delay
            await asyncio.sleep(delay)

    async def send(
        self,
        method: str,
        path: str,
        body: Any,
        *,
        token: str | None = None,
        entry: dict[str, Any] | None = None,
    ) -> tuple[Any, int]:
        """As :meth:`qahwa_client.Client.send`: identical bytes on every resend."""
        content = canonical(body)
        headers = {"Content-Type": "application/json", **(_auth(token) if token else {})}
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt and self.retry_delay:
                await asyncio.sleep(self.retry_delay * attempt)
            if entry is not None:
                entry["attempts"] = attempt + 1
            try:
                resp = await self._exchange(
                    self.http.build_request(
                        method, self.base_url + path, content=content, headers=headers
                    )
                )
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                continue
            if resp.status_code in RESEND_STATUS:
                problem = f"HTTP {resp.status_code}"
                if attempt == self.retries:
                    raise_for(resp)
                continue
            raise_for(resp)
            return resp.json(), attempt
        raise Unanswered(
            f"{method} {path}: no answer after {self.retries + 1} identical attempts ({problem})"
        )

    async def trusted(self) -> dict[str, str]:
        if self.pinned is not None:
            return self.pinned
        if self._fetched is None:
            self._fetched = trusted_keys(await self.request("GET", "/v1/keys"))
        return self._fetched

    async def aclose(self) -> None:
        if self._own:
            await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def create_match(
        self,
        game: str,
        ruleset: Mapping[str, Any] | None = None,
        names: Sequence[str] | None = None,
        house: Sequence[bool] | None = None,
        *,
        operator_key: str | None = None,
    ) -> AsyncMatch:
        created = MatchCreatedOut.model_validate(
            await self.request(
                "POST",
                "/v1/matches",
                token=operator_key or self.operator_key,
                json_body=create_body(game, ruleset, names, house),
            )
        )
        return AsyncMatch(self, created, terms_for(game, ruleset, names, house))

    async def match(self, match_id: str) -> MatchOut:
        return MatchOut.model_validate(await self.request("GET", f"/v1/matches/{match_id}"))

    async def lock(self, match_id: str) -> LockOut:
        return LockOut.model_validate(await self.request("GET", f"/v1/matches/{match_id}/lock"))

    async def log_proof(self, index: int, tree_size: int | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"index": index}
        if tree_size is not None:
            params["tree_size"] = tree_size
        proof: dict[str, Any] = await self.request("GET", "/v1/log/proof", params=params)
        return proof

    async def transcript(self, match_id: str) -> dict[str, Any]:
        doc: dict[str, Any] = await self.request("GET", f"/v1/matches/{match_id}/transcript")
        return doc

    async def events(self, match_id: str, after: int = -1, wait: float = 0) -> EventsOut:
        return EventsOut.model_validate(
            await self.request(
                "GET", f"/v1/matches/{match_id}/events", params={"after": after, "wait": wait}
            )
        )

    async def stream(
        self, match_id: str, after: int = -1, timeout: float = 60
    ) -> AsyncIterator[dict[str, Any]]:
        last = after
        while True:
            async with self.http.stream(
                "GET",
                f"{self.base_url}/v1/matches/{match_id}/events/stream",
                params={"after": last, "timeout": timeout},
                timeout=httpx.Timeout(timeout + 30),
            ) as resp:
                if resp.status_code >= 400:
                    await resp.aread()
                    raise_for(resp)
                async for kind, data in aiter_sse(resp.aiter_lines()):
                    if kind == "finished":
                        return
                    event = json.loads(data)
                    last = event["seq"]
                    yield event

    async def keys(self) -> KeysOut:
        return KeysOut.model_validate(await self.request("GET", "/v1/keys"))

    async def verify(
        self,
        transcript: Mapping[str, Any] | str,
        *,
        keys: KeysOut | None = None,
        receipts: Sequence[dict[str, Any]] = (),
    ) -> dict[str, Any]:
        """As :meth:`qahwa_client.Client.verify` (the checks run here, in this process)."""
        from .verify import verify_transcript

        doc = await self.transcript(transcript) if isinstance(transcript, str) else dict(transcript)
        return verify_transcript(
            doc, keys or await self.keys(), source=self.base_url, receipts=receipts
        )

    async def rng(self, *, operator_key: str | None = None) -> AsyncRngSession:
        created = RngCreatedOut.model_validate(
            await self.request(
                "POST", "/v1/rng", token=operator_key or self.operator_key, json_body={}
            )
        )
        return AsyncRngSession(self, created)


class AsyncMatch:
    def __init__(
        self, client: AsyncClient, created: MatchCreatedOut, terms: Terms | None = None
    ) -> None:
        self.client = client
        self.created = created
        self.match_id = created.match_id
        self.seats = [
            AsyncSeat(client, self.match_id, s.seat, s.token, record=created.record, terms=terms)
            for s in created.seats
        ]

    async def start(self, client_seeds: Sequence[str | None] | None = None) -> None:
        """Every seat commits, then each checks the lock and reveals."""
        seeds = list(client_seeds) if client_seeds is not None else [None] * len(self.seats)
        for seat, seed in zip(self.seats, seeds, strict=True):
            await seat.commit(seed)
        for seat in self.seats:
            await seat.reveal()

    async def public(self) -> MatchOut:
        return await self.client.match(self.match_id)

    async def transcript(self) -> dict[str, Any]:
        return await self.client.transcript(self.match_id)

    async def verify(self, *, keys: KeysOut | None = None) -> dict[str, Any]:
        """verify's report, with every receipt this match's seats kept."""
        return await self.client.verify(
            await self.transcript(), keys=keys, receipts=[r for s in self.seats for r in s.receipts]
        )

    async def check_transcript(self, doc: Mapping[str, Any] | None = None) -> dict[str, Any]:
        got = dict(doc) if doc is not None else await self.transcript()
        for seat in self.seats:
            if seat.lock is not None:
                seat.check_transcript(got)
        return got

    def events(self, after: int = -1, timeout: float = 60) -> AsyncIterator[dict[str, Any]]:
        return self.client.stream(self.match_id, after, timeout)


class AsyncSeat:
    """As :class:`qahwa_client.Seat`, awaitable."""

    def __init__(
        self,
        client: AsyncClient,
        match_id: str,
        seat: int,
        token: str,
        *,
        record: Mapping[str, Any] | None = None,
        terms: Terms | None = None,
        receipts_file: str | Path | None = None,
    ) -> None:
        self.client = client
        self.match_id = match_id
        self.seat = seat
        self.token = token
        self.version: int | None = None
        self.view: StateOut | None = None
        self._record = dict(record) if record is not None else None
        self.proto = SeatProtocol(
            match_id, seat, terms=terms, clock=client.clock, max_skew=client.max_skew
        )
        if receipts_file is not None:
            self.proto.receipts_path = Path(receipts_file)

    @property
    def client_seed(self) -> str | None:
        return self.proto.client_seed

    @property
    def nonce(self) -> str | None:
        return self.proto.nonce

    @property
    def lock(self) -> dict[str, Any] | None:
        return self.proto.lock

    @property
    def log_index(self) -> int | None:
        return self.proto.log_index

    @property
    def key(self) -> str | None:
        return self.proto.key.public_b64 if self.proto.key is not None else None

    @property
    def receipts(self) -> list[dict[str, Any]]:
        return self.proto.receipts

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.proto.requests

    @property
    def disputes(self) -> list[Dispute]:
        """As :attr:`qahwa_client.Seat.disputes` (fairness-v2.md §3a.8)."""
        return self.proto.disputes

    @property
    def disputed(self) -> bool:
        return bool(self.proto.disputes)

    @property
    def unreceipted(self) -> list[dict[str, Any]]:
        """The signed requests sent that neither a receipt nor a refusal answered, each with
        its local ``sent_at`` (fairness-v2.md §3a.8)."""
        return self.proto.unreceipted

    def save_receipts(self, path: str | Path) -> Path:
        return self.proto.save_receipts(path)

    def save(self, path: str | Path) -> Path:
        return self.proto.save(path)

    def _path(self, tail: str) -> str:
        return f"/v1/matches/{self.match_id}{tail}"

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        return await self.client.request(method, self._path(path), token=self.token, json_body=body)

    async def _send(self, path: str, body: Any) -> tuple[Any, dict[str, Any]]:
        entry = self.proto.sent("POST", self._path(path), body)
        try:
            answer, _ = await self.client.send(
                "POST", self._path(path), body, token=self.token, entry=entry
            )
        except ApiError as exc:
            self.proto.refused(entry, exc.status, exc.code)
            raise
        return answer, entry

    async def _seen(self, view: Any) -> None:
        deadline = getattr(view, "deadline", None)
        if deadline is not None:
            self.proto.last_deadline = deadline.model_dump(mode="json")
        result = getattr(view, "result", None)
        reason = result.get("reason") if isinstance(result, dict) else None
        if view.status == "finished" and reason == "timeout" and self.proto.lock is not None:
            await self.check_end()

    async def check_end(self) -> list[Dispute]:
        """As :meth:`qahwa_client.Seat.check_end`."""
        return self.proto.check_end((await self.client.events(self.match_id)).events)

    async def commit(self, client_seed: str | None = None) -> SeatingOut | None:
        record = (
            self._record
            if self._record is not None
            else (await self.client.match(self.match_id)).record
        )
        keys = await self.client.trusted()
        self.proto.accept_record(record, keys)
        body = self.proto.commit_body(client_seed)
        try:
            answer, entry = await self._send(f"/seats/{self.seat}/commit", body)
        except ApiError as exc:
            if self.proto.requests[-1].get("attempts", 1) > 1:
                return None
            self.proto.commit_refused = f"{exc.code}: {exc.message}"
            raise
        self.proto.take_receipt(answer, keys, entry=entry, seq=-1)
        return SeatingOut.model_validate(answer)

    async def check_lock(self, wait: float = 0.0, poll: float = 0.25) -> dict[str, Any]:
        self.proto.may_check_lock()
        deadline = time.monotonic() + wait
        while True:
            try:
                raw = await self.client.request("GET", self._path("/lock"))
                break
            except ApiError as exc:
                if exc.code != "not_locked" or time.monotonic() >= deadline:
                    raise
                await asyncio.sleep(poll)
        lock_out = LockOut.model_validate(raw)
        proof = await self.client.log_proof(lock_out.log_index)
        keys = await self.client.trusted()
        lock = self.proto.check_lock(raw.get("lock"), raw.get("log_index"), proof, keys)
        self.proto.take_receipt(raw, keys, seq=-1)
        return lock

    async def reveal(self, wait: float = 0.0) -> SeatingOut:
        if self.proto.lock is None:
            await self.check_lock(wait)
        answer, entry = await self._send(f"/seats/{self.seat}/reveal", self.proto.reveal_body())
        self.proto.revealed = True
        self.proto.take_receipt(answer, await self.client.trusted(), entry=entry, seq=-1)
        return SeatingOut.model_validate(answer)

    async def state(self) -> StateOut:
        view = STATE.validate_python(await self._call("GET", "/state"))
        self.version = view.version
        self.view = view
        await self._seen(view)
        return view

    def _action_body(
        self, action: Mapping[str, Any], view: StateOut, version: int
    ) -> dict[str, Any]:
        return self.proto.action_body(
            action,
            version=version,
            chain=view.chain,
            view_lock=view.lock,
            turn=view.turn,
            legal=view.legal_actions,
            fresh_roll=getattr(view, "fresh_roll", None),
            values_used=getattr(view, "values_used", None),
        )

    async def act(
        self, action: Mapping[str, Any], *, version: int | None = None, retry_stale: bool = False
    ) -> ActionOut:
        view = (
            self.view
            if self.view is not None
            and self.view.version == (version if version is not None else self.view.version)
            else await self.state()
        )
        body = self._action_body(action, view, view.version if version is None else version)
        try:
            return await self._post_action(body)
        except ApiError as exc:
            if not retry_stale or exc.code not in ("stale_version", "stale_chain"):
                raise
            view = await self.state()
            if dict(action) not in view.legal_actions:
                raise
            return await self._post_action(self._action_body(action, view, view.version))

    async def _post_action(self, body: dict[str, Any]) -> ActionOut:
        try:
            answer, entry = await self._send("/actions", body)
        except ApiError as exc:
            entry = self.proto.requests[-1]
            if exc.status == 409 and entry.get("attempts", 1) > 1 and body.get("sig"):
                found = await self._accepted_earlier(body["sig"])
                if found is not None:
                    return found
            raise
        out = ActionOut.model_validate(answer)
        self.proto.take_receipt(
            answer, await self.client.trusted(), entry=entry, chain=out.state.chain
        )
        self.version = out.state.version
        self.view = out.state
        await self._seen(out.state)
        return out

    async def _accepted_earlier(self, sig: str) -> ActionOut | None:
        for ev in (await self.client.events(self.match_id)).events:
            if ev.get("type") == "action" and ev.get("seat") == self.seat and ev.get("sig") == sig:
                view = await self.state()
                return ActionOut.model_validate(
                    {
                        "match_id": self.match_id,
                        "seat": self.seat,
                        "version": view.version,
                        "status": view.status,
                        "first_seq": ev["seq"],
                        "state": view.model_dump(mode="json"),
                        "chain": view.chain,
                    }
                )
        return None

    async def resign(self) -> ResignOut:
        view = await self.state()
        body = self.proto.resign_body(chain=view.chain, view_lock=view.lock)
        answer, entry = await self._send("/resign", body)
        out = ResignOut.model_validate(answer)
        self.proto.take_receipt(
            answer, await self.client.trusted(), entry=entry, chain=answer.get("chain")
        )
        return out

    def check_transcript(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        got = dict(doc)
        self.proto.check_transcript(got)
        self.proto.check_end(got["events"])
        return got

    async def events(self, after: int = -1, timeout: float = 60) -> AsyncIterator[dict[str, Any]]:
        """As :meth:`qahwa_client.Seat.events`: pushed events' times checked (§3a.8)."""
        live_from = (await self.client.events(self.match_id, after=LATEST)).next_seq
        async for ev in self.client.stream(self.match_id, after, timeout):
            seq = ev.get("seq")
            if isinstance(seq, int) and seq >= live_from:
                self.proto.check_time(ev.get("at"), f"event {seq}", ev)
            yield ev
            if ev.get("type") == "end" and ev.get("reason") == "timeout":
                await self.check_end()


class AsyncRngSession:
    def __init__(self, client: AsyncClient, created: RngCreatedOut) -> None:
        self.client = client
        self.created = created
        self.session_id = created.session_id
        self.token = created.token
        self.proto = SeatProtocol(self.session_id, 0, keyed=False)

    @property
    def client_seed(self) -> str | None:
        return self.proto.client_seed

    @property
    def nonce(self) -> str | None:
        return self.proto.nonce

    @property
    def lock(self) -> dict[str, Any] | None:
        return self.proto.lock

    @property
    def receipts(self) -> list[dict[str, Any]]:
        return self.proto.receipts

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        return await self.client.request(
            method, f"/v1/rng/{self.session_id}{path}", token=self.token, json_body=body
        )

    async def send_seed(self, client_seed: str | None = None) -> RngSeededOut:
        keys = await self.client.trusted()
        self.proto.accept_record(self.created.record, keys)
        self.proto.commit_body(client_seed)
        path = f"/v1/rng/{self.session_id}/seed"
        body = {"client_seed": self.proto.client_seed, "nonce": self.proto.nonce}
        entry = self.proto.sent("POST", path, body)
        answer, _ = await self.client.send("POST", path, body, token=self.token, entry=entry)
        out = RngSeededOut.model_validate(answer)
        self.proto.check_lock(
            answer["lock"], answer["log_index"], await self.client.log_proof(out.log_index), keys
        )
        self.proto.revealed = True
        self.proto.take_receipt(answer, keys, entry=entry, seq=-1)
        return out

    async def dice(self, count: int = 1, sides: int = 6) -> DrawOut:
        return await self.draw({"kind": "dice", "count": count, "sides": sides})

    async def uniform(self, n: int) -> DrawOut:
        return await self.draw({"kind": "uniform", "n": n})

    async def shuffle(self, n: int) -> DrawOut:
        return await self.draw({"kind": "shuffle", "n": n})

    async def draw(self, body: Mapping[str, Any]) -> DrawOut:
        """One draw (not resent on failure: a second copy would be a second draw); its
        receipt is checked and kept."""
        answer = await self._call("POST", "/draws", dict(body))
        self.proto.take_receipt(answer, await self.client.trusted())
        return DrawOut.model_validate(answer)

    async def close(self) -> RngClosedOut:
        answer = await self._call("POST", "/close")
        self.proto.take_receipt(answer, await self.client.trusted())
        return RngClosedOut.model_validate(answer)

    async def transcript(self) -> dict[str, Any]:
        doc: dict[str, Any] = await self._call("GET", "/transcript")
        return doc

    def check_transcript(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        got = dict(doc)
        self.proto.check_transcript(got)
        return got

# Generated from qahwa_client/aio.py by scripts/unasync.py: do not edit.
"""The client, written once: ``qahwa_client/aio.py`` (asynchronous) is the source, and the
synchronous ``qahwa_client/client.py`` is generated from it by ``scripts/unasync.py``
(``make unasync``; ``make lint`` and a test check it is up to date). Edit aio.py only.

Every seat is a conforming client of qahwa-fair/2 (fairness-v2.md §3a):

```python
with Client("http://127.0.0.1:8000", operator_key=KEY) as qc:
    match = qc.create_match("tawla", {"match_length": 1}, names=["Layla", "Omar"])
    match.start()            # every seat: commit, check the lock, reveal
    ...                            # seat.state(), seat.act(action): signed, values added when owed
    match.check_transcript() # the lock and every receipt against the transcript
```
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

import httpx

from fairness.announce import announcements_in, extended_keys_doc
from fairness.protocol import canonical_json
from fairness.seat import MAX_SKEW, Dispute, Terms, terms_for, trusted_keys
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
    TreeHeadOut,
)
from tlog import Policy, parse_policy

from ._shared import (
    LATEST,
    RESEND_STATUS,
    STATE,
    SeatKeeps,
    SessionKeeps,
    Trust,
    Unanswered,
    accepted_out,
    auth,
    create_body,
    logged_events,
    note_retired,
    rate_limit_delay,
    sealed_raw,
    signing_keys_in,
)
from .errors import ApiError, raise_for
from .sse import iter_sse

if TYPE_CHECKING:
    from .sealed import SealedSeat


class Client(Trust):
    """One qahwa server.

    ``keys``: the server's signing keys from a source you trust (``GET /v1/keys``'s answer
    obtained elsewhere, or ``{key_id: base64 public key}``); without them the client takes
    ``/v1/keys`` from the server itself. ``operator_key`` is sent when creating matches and
    sessions. A request that fails or is not answered is resent with identical bytes up to
    ``retries`` times, ``retry_delay`` × attempt seconds apart. A request refused by a rate
    limit (429) is resent, identical, after its ``Retry-After`` with jitter, for at most
    ``rate_limit_wait`` seconds in all (then the 429 is raised as :class:`ApiError`). ``http``
    may be an
    ``httpx.Client`` of your own (its base URL is then ignored in favour of ``base_url``).
    ``clock`` (epoch seconds; the machine's by default) is what seats check the server's
    times against, ``max_skew`` seconds apart at most (fairness-v2.md §3a.8).
    ``log_policy``: a c2sp.org/tlog-policy (its text, as ``verify --policy`` reads it, or a
    ``tlog.Policy``) with the log key and the witnesses you trust; then a seat also checks
    its lock's C2SP tlog-proof (``GET /v1/matches/{id}/log-proof``) against it before it
    reveals, asking again for up to ``proof_wait`` seconds while the cosignatures fall short
    of its quorum (a witness that is down, or slow), then refusing (:class:`NotOurMatch`).
    Without one a seat checks the lock against the log's signed tree head, which needs no
    witness.
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
        keys: Any = None,
        operator_key: str | None = None,
        retries: int = 3,
        retry_delay: float = 0.25,
        clock: Callable[[], float] | None = None,
        max_skew: float = MAX_SKEW,
        rate_limit_wait: float = 60.0,
        log_policy: str | Policy | None = None,
        proof_wait: float = 30.0,
    ) -> None:
        self.log_policy = parse_policy(log_policy) if isinstance(log_policy, str) else log_policy
        self.proof_wait = proof_wait
        self.rate_limit_wait = rate_limit_wait
        self.clock: Callable[[], float] = clock or time.time
        self.max_skew = max_skew
        self.base_url = base_url.rstrip("/")
        self.http = http or httpx.Client(timeout=timeout)
        self._own = http is None
        super().__init__(keys)
        self.operator_key = operator_key
        self.retries = retries
        self.retry_delay = retry_delay

    # -- plumbing ----------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        """One call; the parsed JSON answer, or :class:`ApiError` for any 4xx/5xx."""
        resp = self._exchange(
            self.http.build_request(
                method, self.base_url + path, headers=auth(token), json=json_body, params=params
            )
        )
        raise_for(resp)
        return resp.json()

    def request_text(self, method: str, path: str) -> str:
        """One call whose answer is text (a tlog-proof); :class:`ApiError` for any 4xx/5xx."""
        resp = self._exchange(self.http.build_request(method, self.base_url + path))
        raise_for(resp)
        return resp.text

    def _exchange(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``, and send it again (the same bytes) after each 429's
        ``Retry-After`` (``rate_limit_delay``) while the waits stay within
        ``rate_limit_wait``."""
        waited = 0.0
        while True:
            resp = self.http.send(request)
            delay = rate_limit_delay(resp, waited, self.rate_limit_wait)
            if delay is None:
                return resp
            waited += delay
            time.sleep(delay)

    def send(
        self,
        method: str,
        path: str,
        body: Any,
        *,
        token: str | None = None,
        entry: dict[str, Any] | None = None,
    ) -> tuple[Any, int]:
        """Send ``body`` as canonical JSON; on a transport error or a 5xx answer send the
        identical bytes again (up to ``retries`` times). Returns (answer, attempts - 1);
        ``entry["attempts"]`` counts the copies sent."""
        content = canonical_json(body)
        headers = {"Content-Type": "application/json", **auth(token)}
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt and self.retry_delay:
                time.sleep(self.retry_delay * attempt)
            if entry is not None:
                entry["attempts"] = attempt + 1
            try:
                resp = self._exchange(
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

    def trusted(self) -> dict[str, str]:
        """The server keys records are checked with: pinned, else ``/v1/keys`` (once), and
        the keys announced since by a key among them (:meth:`take_announcements`)."""
        base = self.pinned if self.pinned is not None else self._fetched
        if base is None:
            doc = self.request("GET", "/v1/keys")
            base = self._fetched = trusted_keys(doc)
            self._base_keys = doc
            note_retired(self.retired, doc)
        return {**base, **self.announced} if self.announced else base

    def trusted_for(self, *signed: Any) -> dict[str, str]:
        """:meth:`trusted`, after taking the announcements ``/v1/keys`` lists now when one
        of the ``signed`` records (or answers holding them) is signed by a key not trusted
        yet: how a seat rides through a key rotation. A key nobody trusted announced stays
        untrusted (the record's check then fails)."""
        keys = self.trusted()
        unknown = signing_keys_in(signed) - keys.keys() - self._looked_up
        if unknown:
            doc = self.request("GET", "/v1/keys")
            self._looked_up |= unknown  # once it was read: a failed read is tried again
            self.take_announcements(announcements_in(doc), keys)
            note_retired(self.retired, doc)
            keys = self.trusted()
        return keys

    def keys_document(self) -> dict[str, Any]:
        """The keys this client trusts as a ``/v1/keys`` document: the pinned (or first
        fetched) one, with every key taken since through an announcement listed after its
        own keys, with that announcement. Save it (:meth:`save_keys`) to pin the extended
        set: ``Client(keys=…)``, ``verify --key``."""
        self.trusted()
        return extended_keys_doc(self._base_keys or {}, self.announced, self.accepted_announcements)

    def save_keys(self, path: str | Path) -> Path:
        """Write :meth:`keys_document` to ``path`` (JSON)."""
        out = Path(path)
        out.write_text(json.dumps(self.keys_document(), indent=1) + "\n")
        return out

    def close(self) -> None:
        if self._own:
            self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- matches -----------------------------------------------------------------------------
    def create_match(
        self,
        game: str,
        ruleset: Mapping[str, Any] | None = None,
        names: Sequence[str] | None = None,
        house: Sequence[bool] | None = None,
        *,
        operator_key: str | None = None,
    ) -> Match:
        """Create a match (with ``operator_key``, default the client's); the handle holds the
        signed commit record and one conforming seat per seat, each checking the record
        against what was asked for here before it commits."""
        created = MatchCreatedOut.model_validate(
            self.request(
                "POST",
                "/v1/matches",
                token=operator_key or self.operator_key,
                json_body=create_body(game, ruleset, names, house),
            )
        )
        return Match(self, created, terms_for(game, ruleset, names, house))

    def match(self, match_id: str) -> MatchOut:
        """The public record and view of a match."""
        return MatchOut.model_validate(self.request("GET", f"/v1/matches/{match_id}"))

    def lock(self, match_id: str) -> LockOut:
        """The signed lock and its log index (409 ``not_locked`` before every seat
        committed)."""
        return LockOut.model_validate(self.request("GET", f"/v1/matches/{match_id}/lock"))

    def log_proof(self, index: int, tree_size: int | None = None) -> dict[str, Any]:
        """An inclusion proof of log entry ``index`` under a signed tree head."""
        params: dict[str, Any] = {"index": index}
        if tree_size is not None:
            params["tree_size"] = tree_size
        return cast("dict[str, Any]", self.request("GET", "/v1/log/proof", params=params))

    def transcript(self, match_id: str) -> dict[str, Any]:
        """The signed transcript, exactly as served (409 ``not_finished`` before the end)."""
        doc: dict[str, Any] = self.request("GET", f"/v1/matches/{match_id}/transcript")
        return doc

    def events(
        self, match_id: str, after: int = -1, wait: float = 0, *, token: str | None = None
    ) -> EventsOut:
        """The public event log after ``after`` (long-polling up to ``wait`` seconds); a
        seat reads it with its ``token``, so that its reads count against the seat's own
        rate, not its address's (docs/deploy.md)."""
        return EventsOut.model_validate(
            self.request(
                "GET",
                f"/v1/matches/{match_id}/events",
                token=token,
                params={"after": after, "wait": wait},
            )
        )

    def stream(
        self, match_id: str, after: int = -1, timeout: float = 60
    ) -> Iterator[dict[str, Any]]:
        """The public events as they happen (server-sent events), until the match ends."""
        for kind, doc in self.stream_news(match_id, after, timeout):
            if kind == "event":
                yield doc

    def stream_news(
        self, match_id: str, after: int = -1, timeout: float = 60
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """:meth:`stream` with the signed heads: ``("event", event)`` and ``("head",
        head)`` (qahwa-fair/2: the head the server stands at after each batch, §7 heads)."""
        last = after
        while True:
            with self.http.stream(
                "GET",
                f"{self.base_url}/v1/matches/{match_id}/events/stream",
                params={"after": last, "timeout": timeout},
                timeout=httpx.Timeout(timeout + 30),
            ) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    raise_for(resp)
                for kind, data in iter_sse(resp.iter_lines()):
                    if kind == "finished":
                        return
                    if kind == "key_announcement":  # the next signing key, announced
                        self.take_announcements([json.loads(data)], self.trusted())
                    elif kind == "head":
                        yield "head", json.loads(data)
                    elif kind != "status":  # a status: it changed without an event
                        event = json.loads(data)
                        last = event["seq"]
                        yield "event", event

    # -- keys, log, verify --------------------------------------------------------------------
    def keys(self) -> KeysOut:
        return KeysOut.model_validate(self.request("GET", "/v1/keys"))

    def tree_head(self, tree_size: int | None = None) -> TreeHeadOut:
        params = {"tree_size": tree_size} if tree_size is not None else None
        return TreeHeadOut.model_validate(self.request("GET", "/v1/log", params=params))

    def verify(
        self,
        transcript: Mapping[str, Any] | str,
        *,
        keys: KeysOut | None = None,
        receipts: Sequence[dict[str, Any]] = (),
    ) -> dict[str, Any]:
        """Check a transcript (or a match id) here, with ``verify``'s own core.

        Recomputes the key, every draw, replays every action and checks the signature with
        ``keys`` (default: the server's ``/v1/keys`` — pin them for a server you distrust).
        ``receipts`` (qahwa-fair/2) are checked against the chain, as ``verify --receipt``.
        Returns verify's report: ``report["status"] == "verified"`` when all holds.
        """
        from .verify import verify_transcript

        doc = self.transcript(transcript) if isinstance(transcript, str) else dict(transcript)
        return verify_transcript(doc, keys or self.keys(), source=self.base_url, receipts=receipts)

    # -- plain randomness ---------------------------------------------------------------------
    def rng(self, *, operator_key: str | None = None) -> RngSession:
        """Open a plain dice/shuffle session (with ``operator_key``, default the client's);
        give its seed with ``send_seed`` once the signed commit record is held."""
        created = RngCreatedOut.model_validate(
            self.request("POST", "/v1/rng", token=operator_key or self.operator_key, json_body={})
        )
        return RngSession(self, created)


class Match:
    """A match created by this client: its commit record, and one seat per seat."""

    def __init__(
        self, client: Client, created: MatchCreatedOut, terms: Terms | None = None
    ) -> None:
        self.client = client
        self.created = created
        self.match_id = created.match_id
        self.seats = [
            Seat(client, self.match_id, s.seat, s.token, record=created.record, terms=terms)
            for s in created.seats
        ]

    def seat(self, n: int) -> Seat:
        return self.seats[n]

    def start(self, client_seeds: Sequence[str | None] | None = None) -> None:
        """Every seat commits (with its seed from ``client_seeds``, else a fresh one), then
        each checks the lock and reveals: the last reveal starts the match."""
        seeds = list(client_seeds) if client_seeds is not None else [None] * len(self.seats)
        for seat, seed in zip(self.seats, seeds, strict=True):
            seat.commit(seed)
        for seat in self.seats:
            seat.reveal()

    def public(self) -> MatchOut:
        return self.client.match(self.match_id)

    def transcript(self) -> dict[str, Any]:
        return self.client.transcript(self.match_id)

    def verify(self, *, keys: KeysOut | None = None) -> dict[str, Any]:
        """verify's report, with every receipt this match's seats kept."""
        return self.client.verify(
            self.transcript(), keys=keys, receipts=[r for s in self.seats for r in s.receipts]
        )

    def check_transcript(self, doc: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Every seat that revealed through this client checks the transcript against its
        lock and receipts (the seat's ``check_transcript``); returns the transcript."""
        got = dict(doc) if doc is not None else self.transcript()
        for seat in self.seats:
            if seat.lock is not None:
                seat.check_transcript(got)
        return got

    def events(self, after: int = -1, timeout: float = 60) -> Iterator[dict[str, Any]]:
        return self.client.stream(self.match_id, after, timeout)


class Seat(SeatKeeps):
    """One seat of a match, played as a conforming client (fairness-v2.md §3a).

    It keeps what a player keeps: ``client_seed``, ``nonce``, ``lock`` (and ``log_index``),
    ``receipts`` and ``requests`` (every request it sent, with its receipt); ``save(path)``
    and ``save_receipts(path)`` write them (``receipts_file=`` rewrites that file at every
    receipt). ``record`` is the signed commit record (default: the match's public one) and
    ``terms`` what the player asked for. It remembers its last view, so ``act(action)`` is
    signed over that view's chain head at that view's version.

    At a sealed table (``view.deal == "sealed"``, qahwa-fair/3) the seat is a conforming
    sealed client too (qahwa_client/sealed.py): its view shows its own hand by code and the
    legal actions of that hand; the deal steps it owes are listed as ``{"type": "sealed",
    "step": …}`` and ``act`` makes them (its key, kept in ``sealed_keys``, default this
    process's memory; its shuffle, shares and openings, with their proofs), after checking
    every other seat's steps in the public log.
    """

    client: Client

    def _send(self, path: str, body: Any) -> tuple[Any, dict[str, Any]]:
        """Send a signed request (resent byte for byte when unanswered); the answer and the
        request's entry in ``requests`` (``entry["attempts"]`` counts the copies sent). A
        refusal is recorded in the entry before it is raised."""
        entry = self.proto.sent("POST", self._path(path), body)
        try:
            answer, _ = self.client.send(
                "POST", self._path(path), body, token=self.token, entry=entry
            )
        except ApiError as exc:
            self.proto.refused(entry, exc.status, exc.code, exc.refusal, self._keys(exc.refusal))
            raise
        return answer, entry

    def _keys(self, signed: Any) -> dict[str, str]:
        """The keys to check ``signed`` (a record, or an answer holding records) with:
        :meth:`Client.trusted_for`, as they count for it (:meth:`_counted`: a key
        nobody announced, or one past its retirement, is a dispute)."""
        return self._counted(signed, self.client.trusted_for(signed))

    def _take_head(
        self,
        head: Any,
        chain: Any = None,
        also_after: int | None = None,
        page: tuple[int, list[dict[str, Any]]] | None = None,
    ) -> tuple[int, list[dict[str, Any]]] | None:
        """A signed head the server sent (with a view whose chain head is ``chain``, or on
        the stream): checked; the events since the head held before read and held to it.
        ``also_after``: a seq after which the caller needs the events too (a sealed seat's
        machine): the one read starts there when it is earlier, and the page read, as
        ``(after, events)``, is returned for the caller (``(head's seq, [])`` when this seat
        held every event up to the head already; None without ``also_after``). ``page``: the
        events after a seq up to the head, read with the view (``GET /state?events_after``),
        used instead of a read when they start early enough."""
        checked = self.proto.check_head(
            head,
            self._keys(head),
            chain=chain if isinstance(chain, str) else None,
        )
        since = self.proto.needs_events(checked)
        read = None
        if since is not None:
            after = since if also_after is None else min(since, also_after)
            if page is not None and page[0] <= after:
                read = page
            else:
                got = self.client.events(self.match_id, after=after, token=self.token)
                read = (after, got.events)
            self.proto.take_events(
                [e for e in read[1] if since < e.get("seq", 0) <= checked["seq"]],
                later=checked,
            )
        elif also_after is not None:
            read = (checked["seq"], [])  # the log up to the head: nothing after it to read
        self.proto.take_head(checked)
        return read

    def check_end(self) -> list[Dispute]:
        """The match's events after its end, checked as §3a.8 says (a timeout's time against
        its deadline, this client's clock and this seat's unreceipted requests); the
        disputes found (also kept in :attr:`disputes`)."""
        return self.proto.check_end((self.client.events(self.match_id, token=self.token)).events)

    # -- seating ---------------------------------------------------------------------------------
    def commit(self, client_seed: str | None = None) -> SeatingOut | None:
        """Check the signed commit record against what the player asked for, make this
        seat's seed (unless given), nonce, roll-chain secret and key, and commit (§2).

        Returns the seat's view with its receipt; None when a resent commit met 409 (the first
        may have landed: the lock check settles it).
        """
        record = self._record
        if record is None:
            record = (self.client.match(self.match_id)).record
        self.proto.accept_record(record, self._keys(record))
        body = self.proto.commit_body(client_seed)
        try:
            answer, entry = self._send(f"/seats/{self.seat}/commit", body)
        except ApiError as exc:
            if self.proto.requests[-1].get("attempts", 1) > 1:
                return None
            self.proto.commit_refused = f"{exc.code}: {exc.message}"
            raise
        self.proto.take_receipt(answer, self._keys(answer), entry=entry, seq=-1)
        return SeatingOut.model_validate(answer)

    def check_lock(self, wait: float = 0.0, poll: float = 0.25) -> dict[str, Any]:
        """Fetch the lock (waiting up to ``wait`` seconds for the other seats' commits) and
        its inclusion proof, and check them (§3a.4); :class:`NotOurMatch` if anything fails."""
        self.proto.may_check_lock()
        deadline = time.monotonic() + wait
        while True:
            try:
                raw = self.client.request("GET", self._path("/lock"))
                break
            except ApiError as exc:
                if exc.code != "not_locked" or time.monotonic() >= deadline:
                    raise
                time.sleep(poll)
        lock_out = LockOut.model_validate(raw)
        proof = self.client.log_proof(lock_out.log_index)
        keys = self._keys(raw)
        lock = self.proto.check_lock(raw.get("lock"), raw.get("log_index"), proof, keys)
        if self.client.log_policy is not None:
            self._check_witnessed(lock, lock_out.log_index, self.client.log_policy)
        self.proto.take_receipt(raw, keys, seq=-1)
        return lock

    def _check_witnessed(self, lock: dict[str, Any], index: int, policy: Policy) -> None:
        """The lock is entry ``index`` under a checkpoint ``policy`` accepts (its log key,
        its witnesses' quorum): the server serves the proof at once with the cosignatures it
        has; while they fall short of the quorum this asks again, up to the client's
        ``proof_wait`` seconds. :class:`NotOurMatch` (the lock unchecked) otherwise."""
        self.proto.lock = None  # not checked until the log says so
        deadline = time.monotonic() + self.client.proof_wait
        pause = 0.025
        while True:
            text = self.client.request_text("GET", self._path("/log-proof"))
            if self._witnessed(text, lock, index, policy, deadline):
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    def reveal(self, wait: float = 0.0) -> SeatingOut:
        """Check the lock, then reveal this seat's seed and nonce (§3)."""
        if self.proto.lock is None:
            self.check_lock(wait)
        answer, entry = self._send(f"/seats/{self.seat}/reveal", self.proto.reveal_body())
        self.proto.revealed = True
        self.proto.take_receipt(answer, self._keys(answer), entry=entry, seq=-1)
        return SeatingOut.model_validate(answer)

    # -- playing ---------------------------------------------------------------------------------
    def state(self) -> StateOut:
        """This seat's view (its own hand, whose turn, ``legal_actions``, ``version``,
        ``chain``). Its signed head is checked and held; when the log moved on since the
        head held before, the events between are read and held to it (§7, heads: an event
        stamped before it is a ``backdated`` dispute)."""
        # the log's events a newer head (and this seat's deal machine) needs, read with the view
        after = self.proto.events_from()
        if self.sealed is not None:
            after = self.sealed.seen if after is None else min(after, self.sealed.seen)
        params: dict[str, Any] = {} if after is None else {"events_after": after}
        if self.sealed is not None:  # its machine holds the deck and the shares: not resent
            params["sealed"] = "brief"
        raw = self.client.request(
            "GET", self._path("/state"), token=self.token, params=params or None
        )
        page = None
        if isinstance(raw, dict) and isinstance(raw.get("events"), list) and after is not None:
            page = (after, raw.pop("events"))  # servers before it was listed leave it out
        read = None
        if isinstance(raw, dict) and raw.get("head") is not None:
            # one read of the log serves the head's check and the sealed machine
            also = (self._sealed_seat()).seen if sealed_raw(raw) else None
            read = self._take_head(raw["head"], raw.get("chain"), also, page)
        view = STATE.validate_python(self._sealed_view(raw, read))
        if self._hold(view):
            self.check_end()
        return view

    def act(
        self, action: Mapping[str, Any], *, version: int | None = None, retry_stale: bool = False
    ) -> ActionOut:
        """Send one action chosen from this seat's last view (default: read it now), signed
        over its chain head, with this seat's roll-chain value added when one is owed.

        409 ``stale_version``/``stale_chain`` raises :class:`StaleVersion` / :class:`ApiError`
        unless ``retry_stale``: then the view is read again and, if the action is still legal
        there, sent once more over the new head.
        """
        view = self.view
        if view is None or (version is not None and view.version != version):
            view = self.state()
        body = self._action_body(action, view, version)
        try:
            return self._post_action(body)
        except ApiError as exc:
            if not retry_stale or exc.code not in ("stale_version", "stale_chain"):
                raise
            view = self.state()
            if dict(action) not in view.legal_actions:
                raise
            return self._post_action(self._action_body(action, view))

    def _sealed_view(self, raw: Any, read: tuple[int, list[dict[str, Any]]] | None = None) -> Any:
        """A sealed table's view as the seat shows it (its hand by code, the legal actions in
        player form, both from its own deal machine), after the log's new events are checked
        by that machine and the view against it; any other view as it is. ``read``: a page of
        the log already read for this view, ``(after, events)``: used when it starts at or
        before the machine's last event, else the log is read here."""
        if not sealed_raw(raw):
            return raw  # not a sealed table, or no hand dealt yet (seating)
        machine = self._sealed_seat()
        self._raw = raw
        if read is not None and read[0] <= machine.seen:
            events = read[1]
        else:
            page = self.client.events(self.match_id, after=machine.seen, token=self.token)
            events = page.events
        machine.take_events(events)
        return machine.view(raw)

    def _sealed_seat(self) -> SealedSeat:
        """This seat's sealed side (:attr:`sealed`), made at its first use: its machine built
        from the signed lock of the match; its refusals kept as disputes."""
        if self.sealed is not None:
            return self.sealed
        lock = self.proto.lock
        if lock is None:
            lock = self.check_lock()
        return self._follow(lock)

    def _post_action(self, body: dict[str, Any]) -> ActionOut:
        try:
            # a seat that follows the log with its deal machine: the answer's view brief
            brief = "?sealed=brief" if self.sealed is not None else ""
            answer, entry = self._send("/actions" + brief, body)
        except ApiError as exc:
            entry = self.proto.requests[-1]
            if exc.status == 409 and entry.get("attempts", 1) > 1 and body.get("sig"):
                found = self._accepted_earlier(body["sig"])
                if found is not None:
                    return found
            raise
        if isinstance(answer, dict) and isinstance(answer.get("state"), dict):
            logged = logged_events(body, answer)
            answer = {**answer, "state": self._sealed_view(answer["state"], logged)}
            # the events the action logged, chained on from this seat's own chain: held like
            # a read of the log (the next view then need not read them again)
            if logged is not None and self.proto.chained_to(logged[0], body["prev"]):
                self.proto.take_events(logged[1])
        out = ActionOut.model_validate(answer)
        self.proto.take_receipt(answer, self._keys(answer), entry=entry, chain=out.state.chain)
        if self._hold(out.state):
            self.check_end()
        return out

    def _accepted_earlier(self, sig: str) -> ActionOut | None:
        """After a resend met 409: the first copy may have been accepted (its answer lost).
        The public log tells: an action event of this seat with this signature."""
        for ev in (self.client.events(self.match_id, token=self.token)).events:
            if ev.get("type") == "action" and ev.get("seat") == self.seat and ev.get("sig") == sig:
                view = self.state()
                return ActionOut.model_validate(
                    accepted_out(self.match_id, self.seat, ev["seq"], view)
                )
        return None

    def resign(self) -> ResignOut:
        """Resign, signed over the current chain head (v2)."""
        view = self.state()
        body = self.proto.resign_body(chain=view.chain, view_lock=view.lock)
        answer, entry = self._send("/resign", body)
        out = ResignOut.model_validate(answer)
        self.proto.take_receipt(answer, self._keys(answer), entry=entry, chain=answer.get("chain"))
        return out

    def check_transcript(self, doc: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """After the match: the transcript (default: fetched now) has the lock byte-identical
        to the one this seat revealed against, and every receipt agrees with its chain
        (§3a.5); :class:`TranscriptMismatch` otherwise. Returns the transcript."""
        got = dict(doc) if doc is not None else self.client.transcript(self.match_id)
        self.proto.check_transcript(got)
        self.proto.check_end(got["events"])
        return got

    def events(self, after: int = -1, timeout: float = 60) -> Iterator[dict[str, Any]]:
        """The match's public events as server-sent events, until the match ends. Each one
        pushed as it happened (accepted after the stream began) has its time ``at`` checked
        against this client's clock, each is held to the signed head shown before it (one
        stamped before that head is a ``backdated`` dispute, §7 heads), and an end by timeout
        is checked (§3a.8)."""
        # where the log stands now (no events asked for): later ones are pushed as they happen
        live_from = (self.client.events(self.match_id, after=LATEST, token=self.token)).next_seq
        for kind, ev in self.client.stream_news(self.match_id, after, timeout):
            if kind == "head":  # signed: what the server showed at its time (§7, heads)
                self._take_head(ev)
                continue
            seq = ev.get("seq")
            if isinstance(seq, int) and seq >= live_from:
                self.proto.check_time(ev.get("at"), f"event {seq}", ev)
            self.proto.take_events([ev])
            yield ev
            if ev.get("type") == "end" and ev.get("reason") == "timeout":
                self.check_end()


class RngSession(SessionKeeps):
    """A plain provably fair dice/shuffle session (fairness-v2.md §3: the seed goes only
    after the signed commit record is held; the lock is then checked like a seat's)."""

    client: Client

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        return self.client.request(
            method, f"/v1/rng/{self.session_id}{path}", token=self.token, json_body=body
        )

    def send_seed(self, client_seed: str | None = None) -> RngSeededOut:
        """Check the commit record, then send the seed (default: a fresh one) and a fresh
        nonce; the answer's lock is checked, with its inclusion in the log."""
        keys = self.client.trusted_for(self.created.record)
        self.proto.accept_record(self.created.record, keys)
        self.proto.commit_body(client_seed)
        path = f"/v1/rng/{self.session_id}/seed"
        body = {"client_seed": self.proto.client_seed, "nonce": self.proto.nonce}
        entry = self.proto.sent("POST", path, body)
        answer, _ = self.client.send("POST", path, body, token=self.token, entry=entry)
        out = RngSeededOut.model_validate(answer)
        keys = self.client.trusted_for(answer)
        self.proto.check_lock(
            answer["lock"], answer["log_index"], self.client.log_proof(out.log_index), keys
        )
        self.proto.revealed = True
        self.proto.take_receipt(answer, keys, entry=entry, seq=-1)
        return out

    def dice(self, count: int = 1, sides: int = 6) -> DrawOut:
        return self.draw({"kind": "dice", "count": count, "sides": sides})

    def uniform(self, n: int) -> DrawOut:
        return self.draw({"kind": "uniform", "n": n})

    def shuffle(self, n: int) -> DrawOut:
        return self.draw({"kind": "shuffle", "n": n})

    def draw(self, body: Mapping[str, Any]) -> DrawOut:
        """One draw (not resent on failure: a second copy would be a second draw); its
        receipt is checked and kept."""
        answer = self._call("POST", "/draws", dict(body))
        self.proto.take_receipt(answer, self.client.trusted_for(answer))
        return DrawOut.model_validate(answer)

    def close(self) -> RngClosedOut:
        """Close: the server seed is revealed and the signed transcript returned (with a
        receipt, kept)."""
        answer = self._call("POST", "/close")
        self.proto.take_receipt(answer, self.client.trusted_for(answer))
        return RngClosedOut.model_validate(answer)

    def transcript(self) -> dict[str, Any]:
        return cast("dict[str, Any]", self._call("GET", "/transcript"))

    def check_transcript(self, doc: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The transcript (default: fetched now) against this session's lock and receipts."""
        got = dict(doc) if doc is not None else self.transcript()
        self.proto.check_transcript(got)
        return got

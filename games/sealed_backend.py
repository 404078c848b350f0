"""The cryptography a sealed match's verifier needs (fairness-v3 §3–§10), behind one interface.

The rules (``games``) and the verifier (``verify_cli``) check sealed deals through
:func:`backend`, never through ``sealed`` directly, because the verify page runs the same
Python on Pyodide, where ``rbcl`` (libsodium) does not exist:

- :class:`RbclBackend` (the default, CPython): the package ``sealed``, imported only when it is
  first used, so importing ``games`` never loads ``rbcl``.
- ``verify_cli.sealed_js.JsBackend`` (the page): the same checks done by
  ``qahwa_page/static/sealed-verify.js`` over the vendored @noble/curves, which the page's
  worker loads for qahwa-fair/3 transcripts and installs with :func:`use`.

Every value crosses the interface as bytes (points, scalars, proofs: their canonical
encodings; a deck: ``A_0 || B_0 || A_1 || …``, 64 bytes an item) or ``str``; every check
raises :class:`SealedCheckError` with the failing check's own words (the same words from
both backends: the JavaScript verifier was written to say what ``sealed`` says).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class SealedCheckError(Exception):
    """A sealed proof, share, opening, key or record that does not verify (the message
    names what failed)."""


@dataclass(frozen=True, slots=True)
class HandResult:
    """What a verified hand's ``"sealed"`` entry (§9) yields."""

    hand_key: bytes
    deck: bytes  #: the final deck, after every shuffle (64 bytes an item)
    opened: dict[int, str]  #: item position → code, of every opening
    order: tuple[str, ...] | None  #: every item's code by position, once every key is revealed


class SealedBackend(Protocol):
    """The verification side of qahwa-fair/3: nothing here needs a secret."""

    name: str

    def item_point(self, game: str, code: str) -> bytes:
        """M(game, code) (§2)."""
        ...

    def hand_key(self, keys: Sequence[bytes]) -> bytes:
        """P = Σ P_s (§3); refuses a key that is no point."""
        ...

    def verify_key(self, match_id: str, hand: int, seat: int, key: bytes, proof: bytes) -> None:
        """A seat's key and its Schnorr proof of knowledge (§3; ``proof`` = R || s)."""
        ...

    def check_revealed(self, key: bytes, secret: bytes, seat: int) -> None:
        """A revealed secret x is canonical and x·G = P (§3)."""
        ...

    def verify_shuffle(
        self,
        match_id: str,
        hand: int,
        seat: int,
        hand_key: bytes,
        deck_in: bytes,
        deck_out: bytes,
        proof: bytes,
    ) -> None:
        """A re-masking shuffle's Terelius–Wikström proof (§5.5)."""
        ...

    def verify_share(
        self,
        match_id: str,
        hand: int,
        seat: int,
        key: bytes,
        A: bytes,
        B: bytes,
        share: bytes,
        proof: bytes,
    ) -> None:
        """A decryption share D = x·A with its Chaum–Pedersen proof (§6)."""
        ...

    def check_opening(
        self,
        game: str,
        code: str,
        A: bytes,
        B: bytes,
        match_id: str,
        hand: int,
        keys: Sequence[bytes],
        shares: Sequence[tuple[bytes, bytes]],
    ) -> None:
        """An opening (§7): seat i's share ``shares[i]`` = (D, proof) verified under
        ``keys[i]``, and B − Σ D = M(game, code)."""
        ...

    def open_deck(
        self, game: str, items: Sequence[str], deck: bytes, secrets: Sequence[bytes]
    ) -> tuple[str, ...]:
        """Every item's code by position, with every seat's revealed secret (the item lookup:
        B − (Σ x)·A named through the items' points); refuses a deck that does not hold
        every item once."""
        ...

    def verify_hand(
        self, match_id: str, entry: Mapping[str, Any], seats: int, house: Collection[int] = ()
    ) -> HandResult:
        """One hand's whole ``"sealed"`` entry (§9–§10, the cryptographic part)."""
        ...


def starting_deck(b: SealedBackend, game: str, items: Sequence[str]) -> bytes:
    """The rules' canonical order, each item as (identity, M(code)) (§4), encoded."""
    if len(set(items)) != len(items):
        raise SealedCheckError("starting deck: item codes repeat")
    return b"".join(bytes(32) + b.item_point(game, code) for code in items)


class RbclBackend:
    """The package ``sealed`` (libsodium through ``rbcl``): CPython's backend."""

    name = "rbcl"

    def __init__(self) -> None:
        import sealed  # here, not at the top: importing games must not load rbcl

        self._s = sealed

    def _ctx(self, match_id: str, hand: int, seat: int) -> Any:
        return self._s.Context(match_id, hand, seat)

    def _cipher(self, A: bytes, B: bytes) -> Any:
        return self._s.decode_deck(A + B, 1)[0]

    def item_point(self, game: str, code: str) -> bytes:
        try:
            out: bytes = self._s.item_point(game, code)
        except self._s.SealedError as exc:
            raise SealedCheckError(str(exc)) from None
        return out

    def hand_key(self, keys: Sequence[bytes]) -> bytes:
        from sealed.group import point

        try:
            for k in keys:
                point(k, "key")
            out: bytes = self._s.hand_key(list(keys))
        except self._s.SealedError as exc:
            raise SealedCheckError(str(exc)) from None
        return out

    def verify_key(self, match_id: str, hand: int, seat: int, key: bytes, proof: bytes) -> None:
        try:
            self._s.verify_key(self._ctx(match_id, hand, seat), key, self._s.KeyProof.decode(proof))
        except self._s.SealedError as exc:
            raise SealedCheckError(str(exc)) from None

    def check_revealed(self, key: bytes, secret: bytes, seat: int) -> None:
        try:
            self._s.check_revealed(key, secret, seat)
        except self._s.SealedError as exc:
            raise SealedCheckError(str(exc)) from None

    def verify_shuffle(
        self,
        match_id: str,
        hand: int,
        seat: int,
        hand_key: bytes,
        deck_in: bytes,
        deck_out: bytes,
        proof: bytes,
    ) -> None:
        s = self._s
        try:
            d_in = s.decode_deck(deck_in)
            d_out = s.decode_deck(deck_out, len(d_in))
            s.verify_shuffle(
                self._ctx(match_id, hand, seat),
                hand_key,
                d_in,
                d_out,
                s.ShuffleProof.decode(proof, len(d_in)),
            )
        except s.SealedError as exc:
            raise SealedCheckError(str(exc)) from None

    def verify_share(
        self,
        match_id: str,
        hand: int,
        seat: int,
        key: bytes,
        A: bytes,
        B: bytes,
        share: bytes,
        proof: bytes,
    ) -> None:
        s = self._s
        try:
            s.verify_share(
                self._ctx(match_id, hand, seat),
                key,
                self._cipher(A, B),
                s.Share(share, s.ShareProof.decode(proof)),
            )
        except s.SealedError as exc:
            raise SealedCheckError(str(exc)) from None

    def check_opening(
        self,
        game: str,
        code: str,
        A: bytes,
        B: bytes,
        match_id: str,
        hand: int,
        keys: Sequence[bytes],
        shares: Sequence[tuple[bytes, bytes]],
    ) -> None:
        s = self._s
        try:
            s.check_opening(
                game,
                code,
                self._cipher(A, B),
                self._ctx(match_id, hand, 0),
                list(keys),
                [s.Share(D, s.ShareProof.decode(p)) for D, p in shares],
            )
        except s.SealedError as exc:
            raise SealedCheckError(str(exc)) from None

    def open_deck(
        self, game: str, items: Sequence[str], deck: bytes, secrets: Sequence[bytes]
    ) -> tuple[str, ...]:
        from sealed.group import mul, s_add, scalar, sub

        s = self._s
        if len(set(items)) != len(items):
            raise SealedCheckError("starting deck: item codes repeat")
        try:
            cs = s.decode_deck(deck, len(items))
            if not secrets:
                raise SealedCheckError("open deck: no revealed key")
            x = scalar(secrets[0], "revealed key")
            for y in secrets[1:]:
                x = s_add(x, scalar(y, "revealed key"))
            table = s.item_table(game, list(items))
        except s.SealedError as exc:
            raise SealedCheckError(str(exc)) from None
        found = [table.get(sub(c.B, mul(x, c.A))) for c in cs]
        codes = tuple(c for c in found if c is not None)
        if len(codes) != len(found):
            raise SealedCheckError("sealed hand: the revealed keys do not open every item")
        if sorted(codes) != sorted(items):
            raise SealedCheckError("sealed hand: the final deck does not hold every item once")
        return codes

    def verify_hand(
        self, match_id: str, entry: Mapping[str, Any], seats: int, house: Collection[int] = ()
    ) -> HandResult:
        s = self._s
        try:
            v = s.verify_hand(match_id, entry, seats, house)
        except s.SealedError as exc:
            raise SealedCheckError(str(exc)) from None
        return HandResult(v.hand_key, s.encode_deck(v.deck), dict(v.opened), v.order)


_current: SealedBackend | None = None


def backend() -> SealedBackend:
    """The backend in use: the one :func:`use` installed, else :class:`RbclBackend`."""
    global _current
    if _current is None:
        _current = RbclBackend()
    return _current


def use(b: SealedBackend | None) -> SealedBackend | None:
    """Install ``b`` as the backend (None: back to the default); returns the previous one."""
    global _current
    before, _current = _current, b
    return before

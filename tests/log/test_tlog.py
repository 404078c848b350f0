"""The tlog package against an independent, naive reading of RFC 6962 written here, the
examples of the C2SP specs (tests/vectors/tlog_vectors.json), and its own round trips."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tlog
from tests.support import vector
from tests.support.rfc6962 import leaf_hash as naive_leaf
from tests.support.rfc6962 import mth as naive_mth
from tests.support.rfc6962 import path as naive_path
from tests.support.rfc6962 import proof as naive_proof
from tlog import (
    Checkpoint,
    CompactRange,
    CosignatureSigner,
    ListHashReader,
    NoteSigner,
    ProofError,
    Tile,
    TileError,
    TileHashReader,
)

VECTORS = vector("tlog_vectors.json")


def build(n: int) -> tuple[list[bytes], ListHashReader]:
    data = [f"entry {i}".encode() for i in range(n)]
    reader = ListHashReader()
    for i, e in enumerate(data):
        assert len(reader.hashes) == tlog.stored_hash_index(0, i)
        reader.hashes.extend(tlog.stored_hashes(i, tlog.leaf_hash(e), reader))
    assert len(reader.hashes) == tlog.stored_hash_count(n)
    return data, reader


DATA, READER = build(300)


def test_rfc6962_roots() -> None:
    v = VECTORS["rfc6962"]
    leaves = [bytes.fromhex(x) for x in v["leaves_hex"]]
    reader = ListHashReader()
    for i, e in enumerate(leaves):
        reader.hashes.extend(tlog.stored_hashes(i, tlog.leaf_hash(e), reader))
        assert tlog.tree_hash(i + 1, reader).hex() == v["roots_hex"][i]
        assert naive_mth(leaves[: i + 1]).hex() == v["roots_hex"][i]
    assert tlog.tree_hash(0, reader) == hashlib.sha256(b"").digest()


@given(st.integers(0, 10**12), st.integers(0, 40))
def test_stored_hash_index_round_trip(k: int, level: int) -> None:
    i = tlog.stored_hash_index(level, k)
    assert tlog.split_stored_hash_index(i) == (level, k)


def test_stored_hash_indexes_are_dense() -> None:
    seen = sorted(tlog.stored_hash_index(*tlog.split_stored_hash_index(i)) for i in range(5000))
    assert seen == list(range(5000))
    with pytest.raises(ValueError):
        tlog.split_stored_hash_index(-1)


@settings(max_examples=150)
@given(st.integers(1, 300), st.data())
def test_proofs_match_the_naive_tree(t: int, data: st.DataObject) -> None:
    d = DATA[:t]
    root = tlog.tree_hash(t, READER)
    assert root == naive_mth(d)
    n = data.draw(st.integers(0, t - 1))
    proof = tlog.prove_record(t, n, READER)
    assert proof == naive_path(n, d)
    tlog.check_record(proof, t, root, n, naive_leaf(d[n]))
    with pytest.raises(ProofError):
        tlog.check_record(proof, t, root, n, naive_leaf(b"another entry"))
    if proof:
        bad = list(proof)
        bad[-1] = bytes(32)
        with pytest.raises(ProofError):
            tlog.check_record(bad, t, root, n, naive_leaf(d[n]))
        with pytest.raises(ProofError):
            tlog.check_record(proof[:-1], t, root, n, naive_leaf(d[n]))
    m = data.draw(st.integers(1, t))
    cproof = tlog.prove_tree(t, m, READER)
    assert cproof == naive_proof(m, d)
    old = tlog.tree_hash(m, READER)
    tlog.check_tree(cproof, t, root, m, old)
    if m < t:
        with pytest.raises(ProofError):
            tlog.check_tree(cproof, t, root, m, naive_mth(DATA[1 : m + 1]))
        with pytest.raises(ProofError):
            tlog.check_tree(cproof + [bytes(32)], t, root, m, old)


def test_compact_range_follows_the_tree() -> None:
    cr = CompactRange()
    for i, e in enumerate(DATA[:130]):
        cr.append(naive_leaf(e))
        assert cr.root() == naive_mth(DATA[: i + 1])
        assert len(cr.hashes) == (i + 1).bit_count()
    resumed = CompactRange(cr.size, cr.hashes)
    resumed.append(naive_leaf(DATA[130]))
    assert resumed.root() == naive_mth(DATA[:131])
    with pytest.raises(ValueError):
        CompactRange(3, [bytes(32)])


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        tlog.prove_record(5, 5, READER)
    with pytest.raises(ValueError):
        tlog.prove_tree(5, 0, READER)
    with pytest.raises(ValueError):
        tlog.prove_tree(5, 6, READER)
    with pytest.raises(IndexError):
        tlog.tree_hash(301, READER)
    assert tlog.consistent(0, 5, tlog.EMPTY_ROOT, tlog.tree_hash(5, READER), [])
    assert not tlog.consistent(0, 5, bytes(32), tlog.tree_hash(5, READER), [])


# -- tiles -----------------------------------------------------------------------------------


def test_tile_paths() -> None:
    for n, path in VECTORS["tile_paths"]:
        assert tlog.encode_index(n) == path
        assert tlog.parse_path(f"tile/3/{path}") == Tile(3, n)
        assert tlog.parse_path(f"tile/entries/{path}.p/7") == Tile(0, n, 7, entries=True)
        assert Tile(0, n, 255, entries=True).path == f"tile/entries/{path}.p/255"
    for bad in [
        "tile/0/1",
        "tile/0/x001",
        "tile/00/000",
        "tile/64/000",
        "tile/0/000.p/256",
        "tile/0/000.p/0",
        "tile/0/000.p/07",
        "tile/0/x000/001",
        "tile/entries/000.p/",
        "tile/0/000/",
        "/tile/0/000",
        "tile/-1/000",
        "tile/0/0001",
    ]:
        with pytest.raises(TileError):
            tlog.parse_path(bad)


def test_tiles_for_size_matches_the_spec_examples() -> None:
    for ex in VECTORS["tiles"]:
        tiles = tlog.tiles_for_size(ex["size"])
        for level, (full, partial) in enumerate(zip(ex["full"], ex["partial"], strict=True)):
            at = [t for t in tiles if t.level == level]
            assert sum(t.full for t in at) == full
            assert [t.width for t in at if not t.full] == ([partial] if partial else [])
        assert max(t.level for t in tiles) == len(ex["full"]) - 1


def _tile_bytes(reader: ListHashReader, tile: Tile) -> bytes:
    lv = tlog.TILE_HEIGHT * tile.level  # the nodes (level, k) the tile holds
    idx = [tlog.stored_hash_index(lv, tile.n * tlog.TILE_WIDTH + i) for i in range(tile.width)]
    return b"".join(reader.read_hashes(idx))


@pytest.mark.parametrize("size", [1, 255, 256, 257, 300])
def test_proofs_from_tiles(size: int) -> None:
    data, reader = (DATA[:size], READER) if size <= 300 else build(size)
    root = naive_mth(data)
    fetched: list[Tile] = []

    def fetch(tile: Tile) -> bytes:
        assert tile == tlog.tile_for_size(tile.level, tile.n, size)
        fetched.append(tile)
        return _tile_bytes(reader, tile)

    tr = TileHashReader(size, root, fetch)
    assert tlog.tree_hash(size, tr) == root
    for n in {0, size // 2, size - 1}:
        assert tlog.prove_record(size, n, tr) == naive_path(n, data)
    if size > 1:
        assert tlog.prove_tree(size, 1, tr) == naive_proof(1, data)
    assert len(set(fetched)) == len(fetched)


def test_a_tampered_tile_is_caught() -> None:
    size = 300
    root = naive_mth(DATA[:size])

    def fetch(tile: Tile) -> bytes:
        raw = bytearray(_tile_bytes(READER, tile))
        if tile == Tile(0, 0):
            raw[5] ^= 1
        return bytes(raw)

    with pytest.raises(ProofError, match="tile/0/000"):
        tlog.prove_record(size, 3, TileHashReader(size, root, fetch))
    with pytest.raises(ProofError, match="partial tiles"):
        tlog.tree_hash(size, TileHashReader(size, bytes(32), fetch))
    with pytest.raises(TileError):
        TileHashReader(size, root, lambda t: b"short").read_hashes([0])


def test_entry_bundles() -> None:
    entries = [b"", b"x" * 300, "ü".encode()]
    tile = Tile(0, 0, 3, entries=True)
    raw = tlog.encode_bundle(entries)
    assert raw[:2] == b"\x00\x00" and raw[2:4] == (300).to_bytes(2, "big")
    assert tlog.parse_bundle(raw, tile) == entries
    for bad in [raw[:-1], raw + b"\x00", raw[:3]]:
        with pytest.raises(TileError):
            tlog.parse_bundle(bad, tile)
    with pytest.raises(TileError):
        tlog.encode_bundle([b"x" * 65536])


# -- signed notes, checkpoints, cosignatures -------------------------------------------------


def test_the_signed_note_example() -> None:
    v = VECTORS["signed_note"]
    verifier = tlog.parse_vkey(v["vkey"])
    assert verifier.vkey == v["vkey"]
    note = tlog.open_note(v["note"], [verifier])
    assert note.text == v["text"]
    assert [w for w, _ in note.verified] == [verifier]
    tampered = v["note"].replace("example message", "example massage")
    with pytest.raises(tlog.NoteError, match="does not verify"):
        tlog.open_note(tampered, [verifier])
    other = NoteSigner.from_seed("example.com/foo", bytes(32)).verifier
    with pytest.raises(tlog.UnverifiedNote):
        tlog.open_note(v["note"], [other])


def test_vkeys_are_checked() -> None:
    good = VECTORS["signed_note"]["vkey"]
    name, kid, key = good.split("+")
    for bad in [
        f"{name}+{kid}",
        f"{name}+00000000+{key}",
        f"a b+{kid}+{key}",
        f"{name}+{kid}+{key[:-2]}",
        f"{name}+{kid}+Ag{key[2:]}",
        f"+{kid}+{key}",
        f"{name}+{kid}x+{key}",
    ]:
        with pytest.raises(tlog.NoteError):
            tlog.parse_vkey(bad)


def test_notes_are_parsed_strictly() -> None:
    s = NoteSigner.from_seed("example.com/k", bytes(range(32)))
    note = tlog.sign_note("hello\n", [s])
    assert tlog.open_note(note, [s.verifier]).text == "hello\n"
    for bad in [
        "hello\n\n",
        "hello\n\u2014 example.com/k AAAA\n",
        note[:-1],
        note + "x\n",
        note.replace("\u2014", "-"),
        "hel\tlo" + note[5:],
        note.encode()[:-3] + b"\xff\n",
    ]:
        with pytest.raises(tlog.NoteError):
            tlog.open_note(bad, [s.verifier])
    with pytest.raises(tlog.NoteError):
        tlog.sign_note("no newline", [s])
    # An unknown signature is set aside; one by the known key still opens the note.
    extra = NoteSigner.from_seed("example.com/other", bytes(32))
    both = tlog.open_note(tlog.sign_note("hello\n", [extra, s]), [s.verifier])
    assert [x.name for x in both.unknown] == ["example.com/other"]


def test_checkpoint_and_cosignature_vectors() -> None:
    v = VECTORS["checkpoint"]
    log = NoteSigner.from_seed("example.com/qahwa/log", bytes.fromhex(v["log_seed_hex"]))
    w = CosignatureSigner.from_seed("witness.example/w1", bytes.fromhex(v["witness_seed_hex"]))
    assert log.vkey == v["log_vkey"] and w.vkey == v["witness_vkey"]
    cp, note = tlog.open_checkpoint(v["note"], tlog.parse_vkey(v["log_vkey"]))
    assert cp == Checkpoint(
        "example.com/qahwa/log", 8, bytes.fromhex(VECTORS["rfc6962"]["roots_hex"][7])
    )
    assert tlog.sign_note(cp.text, [log]) == v["note"]  # Ed25519 is deterministic
    line = w.cosign(cp.text, v["cosignature_time"]).line
    assert line == v["cosignature_line"]
    cosigned = v["note"] + line
    wv = tlog.parse_vkey(v["witness_vkey"])
    _, note = tlog.open_checkpoint(cosigned, log.verifier, [wv])
    assert note.signed_by(wv)
    assert tlog.cosignature_time(tlog.parse_signature_line(line[:-1])) == v["cosignature_time"]
    # A cosignature whose time was changed, or over another checkpoint, does not verify.
    other = Checkpoint(cp.origin, 9, cp.root).text
    with pytest.raises(tlog.NoteError, match="does not verify"):
        tlog.open_checkpoint(tlog.sign_note(other, [log]) + line, log.verifier, [wv])
    bad_time = bytearray(tlog.parse_signature_line(line[:-1]).sig)
    bad_time[7] ^= 1
    bad = tlog.Signature(w.name, wv.key_id, bytes(bad_time)).line
    with pytest.raises(tlog.NoteError, match="does not verify"):
        tlog.open_checkpoint(v["note"] + bad, log.verifier, [wv])


def test_checkpoints_are_parsed_strictly() -> None:
    good = Checkpoint("o", 3, bytes(32), ("ext",)).text
    assert tlog.parse_checkpoint(good).extensions == ("ext",)
    for bad in [
        "o\n3\n",
        "o\n03\n" + good.split("\n")[2] + "\n",
        "o\n-1\nAAAA\n",
        "o\n3\n" + good.split("\n")[2] + "\n\n",
        "o\n3\nAAAA\n",
        good[:-1],
    ]:
        with pytest.raises(tlog.CheckpointError):
            tlog.parse_checkpoint(bad)
    other = NoteSigner.from_seed("not-o", bytes(32))
    with pytest.raises(tlog.CheckpointError, match="origin"):
        tlog.open_checkpoint(tlog.sign_note(good, [other]), other.verifier)


# -- policies and proofs ---------------------------------------------------------------------


def _keys() -> tuple[NoteSigner, list[CosignatureSigner]]:
    log = NoteSigner.from_seed("log.example/l", bytes([1]) * 32)
    ws = [CosignatureSigner.from_seed(f"w{i}.example", bytes([10 + i]) * 32) for i in range(5)]
    return log, ws


def test_policy_groups_and_quorum() -> None:
    log, ws = _keys()
    text = "\n".join(
        [
            "# a comment",
            f"  log {log.vkey} https://log.example/",
            *[f"witness X{i}\t{ws[i].vkey}" for i in range(3)],
            "group X 2 X1 X0 X2",
            f"witness Y0 {ws[3].vkey}",
            f"witness Y1 {ws[4].vkey}",
            "group Y any Y0 Y1",
            "group XY all X Y",
            "quorum XY",
            "",
        ]
    )
    p = tlog.parse_policy(text)
    assert p.satisfied({"X0", "X2", "Y1"})
    assert not p.satisfied({"X0", "Y1"})
    assert not p.satisfied({"X0", "X1", "X2"})
    cp = Checkpoint("log.example/l", 8, bytes.fromhex(VECTORS["rfc6962"]["roots_hex"][7]))
    signed = tlog.sign_note(cp.text, [log])
    lines = {i: w.cosign(cp.text, 1700000000 + i).line for i, w in enumerate(ws)}
    got, names = p.verify_checkpoint(signed + lines[0] + lines[1] + lines[4])
    assert got == cp and sorted(names) == ["X0", "X1", "Y1"]
    with pytest.raises(tlog.PolicyError, match="quorum"):
        p.verify_checkpoint(signed + lines[0] + lines[1])
    stranger = NoteSigner.from_seed("log.example/l", bytes([2]) * 32)
    with pytest.raises(tlog.PolicyError):
        p.verify_checkpoint(tlog.sign_note(cp.text, [stranger]) + lines[0] + lines[1] + lines[4])
    assert tlog.parse_policy(f"log {log.vkey}\nquorum none\n").satisfied(set())


@pytest.mark.parametrize(
    "bad",
    [
        "log {lv}\n",  # no quorum
        "log {lv}\nquorum W\n",  # undefined
        "quorum none\nquorum none\n",  # two quorums
        "witness A {wv}\nwitness A {wv2}\nquorum A\n",  # a name twice
        "witness A {wv}\nwitness B {wv}\nquorum A\n",  # a key twice
        "witness A {lv}\nquorum A\n",  # a log key as a witness key
        "log {wv}\nquorum none\n",  # a witness key as a log key
        "witness A {wv}\ngroup G 2 A\nquorum G\n",  # threshold above n
        "witness A {wv}\ngroup G 0 A\nquorum G\n",
        "witness A {wv}\ngroup G any A A\nquorum G\n",
        "witness A {wv}\ngroup G any B\nquorum G\n",
        "witness none {wv}\nquorum none\n",
        "frobnicate\nquorum none\n",
        "log {lv}\x01\nquorum none\n",
    ],
)
def test_bad_policies_are_refused(bad: str) -> None:
    log, ws = _keys()
    with pytest.raises(tlog.PolicyError):
        tlog.parse_policy(bad.format(lv=log.vkey, wv=ws[0].vkey, wv2=ws[1].vkey))


def test_tlog_proof_round_trip_and_verification() -> None:
    log, ws = _keys()
    t, n = 300, 123
    root = tlog.tree_hash(t, READER)
    cp = Checkpoint("log.example/l", t, root)
    note = tlog.sign_note(cp.text, [log]) + ws[0].cosign(cp.text, 1700000000).line
    proof = tlog.TlogProof(n, tuple(tlog.prove_record(t, n, READER)), note, extra=b"x")
    text = proof.text
    assert text.startswith("c2sp.org/tlog-proof@v1\nextra eA==\nindex 123\n")
    again = tlog.parse_proof(text)
    assert again == proof
    policy = tlog.parse_policy(f"log {log.vkey}\nwitness W {ws[0].vkey}\nquorum W\n")
    assert again.verify(naive_leaf(DATA[n]), policy) == (cp, ["W"])
    with pytest.raises(ProofError):
        again.verify(naive_leaf(DATA[n + 1]), policy)
    strict = tlog.parse_policy(f"log {log.vkey}\nwitness W {ws[1].vkey}\nquorum W\n")
    with pytest.raises(tlog.PolicyError, match="quorum"):
        again.verify(naive_leaf(DATA[n]), strict)
    for bad in [
        text.replace("index 123", "index 0123"),
        text.replace("@v1", "@v2"),
        text.replace("\n\n", "\n"),
        text.replace("extra eA==", "extra e"),
    ]:
        with pytest.raises(ProofError):
            tlog.parse_proof(bad)

// fairness-v3.md §11: tests/vectors/fairness_v3.json recomputed by the client's own sealed
// cryptography (src/sealed/): every proof's bytes from the vectors' FixedRandomness, every
// intermediate value of the 52-card shuffle, and each negative vector refused by the check the
// vector names. test/vectors/ holds a copy of the file (held equal to the spec's by
// tests/client/test_clients_ts.py), so that npm test runs in a copy of clients/ts too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { sha256 } from "@noble/hashes/sha2.js";
import {
  FixedRandomness,
  SealedError,
  checkRevealed,
  decodeDeck,
  generator,
  handKey,
  hex,
  itemPoint,
  makeKey,
  makeShare,
  openDeck,
  opensTo,
  ownItem,
  itemTable,
  permutation,
  scalarBytes,
  shuffle,
  startingDeck,
  verifyKey,
  verifyShare,
  verifyShuffle,
  type ShuffleTrace,
} from "../src/sealed/index.js";

/* eslint-disable @typescript-eslint/no-explicit-any */
const V: any = JSON.parse(readFileSync(new URL("../../test/vectors/fairness_v3.json", import.meta.url), "utf-8"));
const H = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, "hex"));

test("item points and generators (§2)", () => {
  for (const v of V.item_points) assert.equal(hex(itemPoint(v.game, v.code).toBytes()), v.point);
  for (const v of V.generators) assert.equal(hex(generator(v.i).toBytes()), v.point);
});

function checkHand(v: any, hand: number): void {
  const m = v.match_id ?? V.match_id;
  const keys: Uint8Array[] = [];
  for (const k of v.keys) {
    const ctx = { matchId: m, hand, seat: k.seat };
    const made = makeKey(ctx, new FixedRandomness(k.randomness));
    assert.equal(hex(scalarBytes(made.x)), k.x);
    assert.equal(hex(made.P), k.P);
    assert.equal(hex(made.proof), k.proof);
    verifyKey(ctx, H(k.P), H(k.proof));
    checkRevealed(H(k.P), H(k.x), k.seat);
    keys.push(H(k.P));
  }
  assert.equal(hex(handKey(keys)), v.hand_key);
  const sh = v.shuffle;
  const deckIn = startingDeck(sh.game, sh.codes);
  assert.equal(hex(deckIn.bytes), sh.deck_in);
  assert.deepEqual(permutation(sh.codes.length, new FixedRandomness(sh.randomness)), sh.psi);
  const ctx = { matchId: m, hand, seat: sh.seat };
  const { deck, proof } = shuffle(ctx, H(v.hand_key), deckIn, new FixedRandomness(sh.randomness));
  assert.equal(hex(deck.bytes), sh.deck_out);
  assert.equal(hex(proof), sh.proof);
  verifyShuffle(ctx, H(v.hand_key), deckIn, H(sh.deck_out), H(sh.proof));
  const out = decodeDeck(H(sh.deck_out), sh.codes.length);
  const item = out.items[v.opening.item]!;
  const Ds: Uint8Array[] = [];
  for (const s of v.shares) {
    const sctx = { matchId: m, hand, seat: s.seat };
    const x = BigInt("0x" + Buffer.from(H(v.keys[s.seat].x)).reverse().toString("hex"));
    const made = makeShare(sctx, x, item, new FixedRandomness(s.randomness));
    assert.equal(hex(made.D), s.D);
    assert.equal(hex(made.proof), s.proof);
    verifyShare(sctx, keys[s.seat]!, item, H(s.D), H(s.proof));
    Ds.push(H(s.D));
  }
  assert.equal(hex(itemPoint(sh.game, v.opening.code).toBytes()), v.opening.point);
  assert.ok(opensTo(sh.game, v.opening.code, item, Ds));
  assert.ok(!opensTo(sh.game, sh.codes.find((c: string) => c !== v.opening.code), item, Ds));
  // the owner (seat 0) learns its item from the other seat's share and its own secret
  const x0 = BigInt("0x" + Buffer.from(H(v.keys[0].x)).reverse().toString("hex"));
  assert.equal(ownItem(item, x0, [Ds[1]!], itemTable(sh.game, sh.codes)), v.opening.code);
  // every key revealed: the whole deck opens, each item once
  const codes = openDeck(sh.game, sh.codes, out, v.keys.map((k: any) => H(k.x)));
  assert.equal(codes[v.opening.item], v.opening.code);
  assert.deepEqual([...codes].sort(), [...sh.codes].sort());
  // a deck short of items opens to distinct codes too, without holding every item: refused
  const short = decodeDeck(out.bytes.slice(0, 64 * (sh.codes.length - 1)));
  assert.throws(() => openDeck(sh.game, sh.codes, short, v.keys.map((k: any) => H(k.x))), /does not hold every item once/);
  assert.throws(() => openDeck(sh.game, [...sh.codes, sh.codes[0]], out, v.keys.map((k: any) => H(k.x))), /item codes repeat/);
}

test("hand 0: keys, shuffle, shares and the opening, byte for byte (§3–§7)", () => {
  checkHand(V, V.hand);
});

test("hand 1 (§11: a hand ≥ 1)", () => {
  checkHand(V.hand1, V.hand1.hand);
});

test("a 52-card shuffle with its intermediate values (§5)", () => {
  const v = V.shuffle52;
  const ctx = { matchId: v.match_id, hand: v.hand, seat: v.seat };
  const deckIn = startingDeck(v.game, v.codes);
  assert.equal(hex(deckIn.bytes), v.deck_in);
  const trace: Partial<ShuffleTrace> = {};
  const { deck, proof } = shuffle(ctx, H(v.P), deckIn, new FixedRandomness(v.randomness), trace);
  assert.deepEqual(trace.psi, v.psi);
  assert.equal(hex(trace.sigma!), v.sigma);
  assert.deepEqual(trace.u!.map((x) => hex(scalarBytes(x))), v.u);
  assert.equal(hex(scalarBytes(trace.c!)), v.c);
  assert.equal(hex(deck.bytes), v.deck_out);
  assert.equal(hex(proof), v.proof);
  assert.equal(hex(sha256(deck.bytes)), v.deck_out_sha256);
  assert.equal(hex(sha256(proof)), v.proof_sha256);
  verifyShuffle(ctx, H(v.P), deckIn, deck.bytes, proof);
});

/** Each negative vector: the hand-0 vectors with the one value changed, checked by the check
 * its path names; it must be refused with the vector's words. */
test("negative vectors: each refused by the check it names (§11)", () => {
  assert.equal(V.negative.length, 16);
  for (const neg of V.negative) {
    const [head, field] = [neg.path.slice(0, neg.path.lastIndexOf(".")), neg.path.slice(neg.path.lastIndexOf(".") + 1)];
    const m = /^(\w+)(?:\[(\d+)\])?$/.exec(head)!;
    const doc = structuredClone(V);
    const obj = m[2] === undefined ? doc[m[1]!] : doc[m[1]!][Number(m[2])];
    assert.notEqual(obj[field], neg.value);
    obj[field] = neg.value;
    const ctx = (seat: number) => ({ matchId: doc.match_id, hand: doc.hand, seat });
    const run = (): void => {
      if (head.startsWith("keys")) {
        const k = obj;
        if (field === "x") checkRevealed(H(k.P), H(k.x), k.seat);
        else verifyKey(ctx(k.seat), H(k.P), H(k.proof));
      } else if (head === "shuffle") {
        const sh = doc.shuffle;
        verifyShuffle(ctx(sh.seat), H(doc.hand_key), startingDeck(sh.game, sh.codes), H(sh.deck_out), H(sh.proof));
      } else {
        const out = decodeDeck(H(doc.shuffle.deck_out));
        verifyShare(ctx(obj.seat), H(doc.keys[obj.seat].P), out.items[obj.item]!, H(obj.D), H(obj.proof));
      }
    };
    assert.throws(run, (e: unknown) => e instanceof SealedError && e.message.includes(neg.error), neg.name);
  }
});

test("a fresh shuffle from the system's randomness verifies; a swapped deck does not", () => {
  const ctx = { matchId: "m-ts", hand: 2, seat: 1 };
  const k0 = makeKey({ ...ctx, seat: 0 });
  const k1 = makeKey(ctx);
  const P = handKey([k0.P, k1.P]);
  const codes = ["AS", "KH", "QD", "JC", "TS"];
  const deckIn = startingDeck("hokm", codes);
  const { deck, proof } = shuffle(ctx, P, deckIn);
  verifyShuffle(ctx, P, deckIn, deck.bytes, proof);
  const swapped = new Uint8Array(deck.bytes);
  swapped.set(deck.bytes.subarray(0, 64), 64);
  swapped.set(deck.bytes.subarray(64, 128), 0);
  assert.throws(() => verifyShuffle(ctx, P, deckIn, swapped, proof), SealedError);
  assert.throws(() => verifyShuffle({ ...ctx, hand: 3 }, P, deckIn, deck.bytes, proof), /equation/);
  const opened = openDeck("hokm", codes, deck, [scalarBytes(k0.x), scalarBytes(k1.x)]);
  assert.deepEqual([...opened].sort(), [...codes].sort());
});

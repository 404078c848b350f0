// The verify page's checks of sealed deals (qahwa-fair/3, docs/spec/fairness-v3.md §3–§10),
// bundled into qahwa_page/static/sealed-verify.js by `make verify-js` (the page's worker loads
// it for qahwa-fair/3 transcripts only). The cryptography is the seat's, src/sealed/ (one
// implementation, over the locked @noble/curves and @noble/hashes, which the bundle carries):
// what is here is the page's byte-level interface to it, a whole hand's §9 entry checked, and
// the JSON bridge the page's Python calls (verify_cli/sealed_js.py).
//
// Every check throws a SealedError naming what failed (the `sealed` package's words); nothing
// here needs a secret.

import { fromBase64, toHex } from "../bytes.js";
import { shuffleOrder } from "../sealed/deal.js";
import { type Context, L, SealedError, generator as generatorPoint, itemPoint as itemPointOf } from "../sealed/group.js";
import * as proofs from "../sealed/proofs.js";

export { L, SealedError };

/** A proof's context as the page's Python passes it (fairness-v3 §1). */
export interface Ctx {
  match_id: string;
  hand: number;
  seat: number;
}
type Obj = { [key: string]: unknown };
export interface HandResult {
  order: string[] | null;
  opened: { [item: number]: string };
  handKey: Uint8Array;
  deck: Uint8Array;
}

export function hexToBytes(hex: unknown): Uint8Array {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-f]/.test(hex)) {
    throw new SealedError("not lowercase hex");
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export const bytesToHex = toHex;

// a code as Python's repr() writes it: the messages are the Python verifier's, word for word
function pyRepr(text: string): string {
  const q = text.includes("'") && !text.includes('"') ? '"' : "'";
  return q + text.replaceAll("\\", "\\\\").replaceAll(q, "\\" + q) + q;
}

function context(ctx: Ctx): Context {
  return { matchId: ctx.match_id, hand: ctx.hand, seat: ctx.seat };
}

// A deck read again and again (the next shuffle's input, every share of its items): the last
// few decoded, by their bytes, as games.sealed_backend keeps them for the CLI.
const decks = new Map<string, proofs.Deck>();
function deckOf(bytes: Uint8Array, n?: number): proofs.Deck {
  if (n !== undefined || !(bytes instanceof Uint8Array) || bytes.length < 64 * 8) return proofs.decodeDeck(bytes, n);
  const key = toHex(bytes);
  let d = decks.get(key);
  if (d === undefined) {
    d = proofs.decodeDeck(bytes.slice());
    if (decks.size >= 8) decks.delete(decks.keys().next().value!);
    decks.set(key, d);
  }
  return d;
}

/** One item's ciphertext (A || B), checked as games.sealed_backend checks it. */
function ciphertext(A: Uint8Array, B: Uint8Array): proofs.Ciphertext {
  const item = new Uint8Array(64);
  if (A.length !== 32 || B.length !== 32) throw new SealedError("deck item 0: 64 bytes expected");
  item.set(A);
  item.set(B, 32);
  return proofs.decodeDeck(item, 1).items[0]!;
}

function verifyKey(ctx: Ctx, Pb: Uint8Array, proof: Uint8Array): void {
  proofs.verifyKey(context(ctx), Pb, proof);
}

function checkRevealed(Pb: Uint8Array, xb: Uint8Array, seat = 0): void {
  proofs.checkRevealed(Pb, xb, seat);
}

function verifyShuffle(ctx: Ctx, Pb: Uint8Array, deckIn: Uint8Array, deckOut: Uint8Array, proof: Uint8Array): void {
  const din = deckOf(deckIn);
  proofs.verifyShuffle(context(ctx), Pb, din, deckOut, proof);
}

function verifyShare(ctx: Ctx, Pb: Uint8Array, A: Uint8Array, B: Uint8Array, D: Uint8Array, proof: Uint8Array): void {
  proofs.verifyShare(context(ctx), Pb, ciphertext(A, B), D, proof);
}

/** §7 without the shares' proofs: B − Σ D = M(game, code). */
function opensTo(game: string, code: string, A: Uint8Array, B: Uint8Array, shares: Uint8Array[]): boolean {
  return proofs.opensTo(game, code, ciphertext(A, B), shares);
}

/** §7: every seat's share verified, and B − Σ D = M(game, code). */
function checkOpening(game: string, code: string, A: Uint8Array, B: Uint8Array, ctx: Ctx, keys: Uint8Array[], shares: { D: Uint8Array; proof: Uint8Array }[]): void {
  if (shares.length !== keys.length) throw new SealedError(`opening: ${keys.length} shares expected, got ${shares.length}`);
  const c = ciphertext(A, B);
  shares.forEach(({ D, proof }, seat) => proofs.verifyShare(context({ ...ctx, seat }), keys[seat]!, c, D, proof));
  if (!proofs.opensTo(game, code, c, shares.map((s) => s.D))) {
    throw new SealedError(`opening: the shares do not open this ciphertext to ${pyRepr(code)}`);
  }
}

/** The item lookup: each item's code with the sum of the secrets (32-byte scalars), null
 * where none opens (the page's Python words the refusal, as the CLI's backend does). */
function lookup(game: string, items: string[], deck: Uint8Array, secrets: Uint8Array[]): (string | null)[] {
  return proofs.lookup(game, items, deckOf(deck), secrets);
}

function b64(text: unknown, what: string): Uint8Array {
  if (typeof text !== "string") throw new SealedError(`${what}: a base64 string expected`);
  try {
    return fromBase64(text);
  } catch (e) {
    throw new SealedError(/canonical/.test(String(e)) ? `${what}: not canonical base64` : `${what}: not base64`);
  }
}

function hexField(v: unknown, size: number, what: string): Uint8Array {
  if (typeof v !== "string" || v.length !== 2 * size || /[^0-9a-f]/.test(v)) {
    throw new SealedError(`${what}: ${size} bytes of lowercase hex expected`);
  }
  return hexToBytes(v);
}

function index(v: unknown, below: number, what: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= below) {
    throw new SealedError(`${what}: an integer in 0..${below - 1} expected`);
  }
  return v;
}

function list(entry: Obj, name: string): Obj[] {
  const v = entry[name];
  if (!Array.isArray(v) || !v.every((x) => x !== null && typeof x === "object" && !Array.isArray(x))) {
    throw new SealedError(`sealed hand: ${JSON.stringify(name)} must be a list of objects`);
  }
  return v as Obj[];
}

const FIELDS = ["hand", "game", "items", "keys", "shuffles", "shares", "openings", "revealed"];

/** §9–§10: one hand's "sealed" entry of a match with `seats` seats (`house`: the house
 * seats). Every item's code by final position once every key is revealed (else null), and
 * the opened items (position → code). */
function verifyHand(matchId: string, entry: unknown, seats: number, house: readonly number[] = []): HandResult {
  if (entry === null || typeof entry !== "object" || Object.keys(entry).sort().join() !== [...FIELDS].sort().join()) {
    throw new SealedError(`sealed hand: exactly the fields ${FIELDS.join(", ")} expected`);
  }
  const e = entry as Obj;
  const hand = index(e["hand"], 2 ** 32, "sealed hand: hand");
  const game = e["game"];
  const items = e["items"];
  if (typeof game !== "string" || !Array.isArray(items) || items.length === 0 || !items.every((c) => typeof c === "string")) {
    throw new SealedError("sealed hand: game must be a string and items a non-empty list of codes");
  }
  const codes = items as string[];
  const n = codes.length;
  const ctx = (seat: number): Context => ({ matchId, hand, seat });
  const keysIn = list(e, "keys");
  if (keysIn.length !== seats || keysIn.some((k, i) => k["seat"] !== i)) {
    throw new SealedError(`sealed hand: one key per seat, seats 0..${seats - 1} in order`);
  }
  const keys = keysIn.map((k, s) => {
    const P = hexField(k["key"], 32, `key of seat ${s}`);
    proofs.verifyKey(ctx(s), P, hexField(k["proof"], 64, `key proof of seat ${s}`));
    return P;
  });
  const Pb = proofs.handKey(keys);
  const order = shuffleOrder(seats, house);
  const shuffles = list(e, "shuffles");
  if (shuffles.length !== order.length || shuffles.some((sh, i) => sh["seat"] !== order[i])) {
    throw new SealedError(`sealed hand: shuffles by seats ${JSON.stringify(order)} in that order expected`);
  }
  let deck = proofs.startingDeck(game, codes);
  for (const sh of shuffles) {
    const seat = sh["seat"] as number;
    const out = b64(sh["deck"], `deck of seat ${seat}`);
    const proof = b64(sh["proof"], `shuffle proof of seat ${seat}`);
    try {
      deck = proofs.verifyShuffle(ctx(seat), Pb, deck, out, proof);
    } catch (err) {
      if (!(err instanceof SealedError)) throw err;
      throw new SealedError(`shuffle of seat ${seat}: ${err.message}`);
    }
  }
  const shares = new Map<string, Uint8Array>();
  for (const sh of list(e, "shares")) {
    const item = index(sh["item"], n, "share item");
    const s = index(sh["seat"], seats, "share seat");
    const key = `${item}/${s}`;
    if (shares.has(key)) throw new SealedError(`sealed hand: a second share of item ${item} by seat ${s}`);
    const D = hexField(sh["share"], 32, `share of seat ${s}`);
    const proof = hexField(sh["proof"], 96, `share proof of seat ${s}`);
    proofs.verifyShare(ctx(s), keys[s]!, deck.items[item]!, D, proof);
    shares.set(key, D);
  }
  const opened: { [item: number]: string } = {};
  for (const op of list(e, "openings")) {
    const item = index(op["item"], n, "opening item");
    index(op["seat"], seats, "opening seat");
    const code = op["code"];
    if (typeof code !== "string" || item in opened) {
      throw new SealedError(`sealed hand: opening of item ${item}: a code, once`);
    }
    const all = Array.from({ length: seats }, (_, s) => shares.get(`${item}/${s}`));
    const missing = [...all.keys()].filter((s) => all[s] === undefined);
    if (missing.length) throw new SealedError(`opening of item ${item}: no share of seats ${JSON.stringify(missing)}`);
    // every share was verified above: what is left of §7 is what they open the item to
    if (!proofs.opensTo(game, code, deck.items[item]!, all as Uint8Array[])) {
      throw new SealedError(`the shares do not open item ${item} to ${pyRepr(code)}`);
    }
    opened[item] = code;
  }
  const revealed = new Map<number, Uint8Array>();
  for (const r of list(e, "revealed")) {
    const s = index(r["seat"], seats, "revealed seat");
    const x = hexField(r["secret"], 32, `revealed key of seat ${s}`);
    if (revealed.has(s)) throw new SealedError(`sealed hand: seat ${s} revealed twice`);
    proofs.checkRevealed(keys[s]!, x, s);
    revealed.set(s, x);
  }
  const result = revealed.size === seats ? proofs.openDeck(game, codes, deck, [...revealed.values()]) : null;
  return { order: result, opened, handKey: Pb, deck: deck.bytes };
}

/** The page's verifier: src/sealed's checks over bytes, by the names the page and its
 * tests call them. */
export function sealedVerifier() {
  return {
    verifyHand,
    openDeck: (game: string, items: string[], deck: Uint8Array, secrets: Uint8Array[]) => proofs.openDeck(game, items, deckOf(deck), secrets),
    opensTo,
    startingDeck: (game: string, items: string[]) => proofs.startingDeck(game, items).bytes,
    lookup,
    itemPoint: (game: string, code: string) => itemPointOf(game, code).toBytes(),
    generator: (i: number) => generatorPoint(i).toBytes(),
    verifyKey,
    checkRevealed,
    handKey: proofs.handKey,
    parseDeck: (bytes: Uint8Array, n?: number) => proofs.decodeDeck(bytes, n).items,
    verifyShuffle,
    verifyShare,
    checkOpening,
  };
}
export type SealedVerifier = ReturnType<typeof sealedVerifier>;

// The verify page's Python calls the verifier through this (verify_cli/sealed_js.py, Pyodide's
// `js` module): run(kind, JSON of the arguments, bytes as lowercase hex) → JSON of
// {ok: true, value} or {ok: false, error: the SealedError's message}. Anything else thrown is
// a bug, and propagates.
export function jsonBackend(v: SealedVerifier = sealedVerifier()): { run(kind: string, argsJson: string): string } {
  const h = hexToBytes;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const kinds: { [kind: string]: (a: any) => unknown } = {
    hand_key: (a) => bytesToHex(v.handKey(a.keys.map(h))),
    verify_key: (a) => v.verifyKey(a.ctx, h(a.key), h(a.proof)),
    check_revealed: (a) => v.checkRevealed(h(a.key), h(a.secret), a.seat),
    verify_shuffle: (a) => v.verifyShuffle(a.ctx, h(a.hand_key), h(a.deck_in), h(a.deck_out), h(a.proof)),
    verify_share: (a) => v.verifyShare(a.ctx, h(a.key), h(a.A), h(a.B), h(a.share), h(a.proof)),
    opens_to: (a) => v.opensTo(a.game, a.code, h(a.A), h(a.B), a.shares.map(h)),
    starting_deck: (a) => bytesToHex(v.startingDeck(a.game, a.items)),
    lookup: (a) => v.lookup(a.game, a.items, h(a.deck), a.secrets.map(h)),
    verify_hand: (a) => {
      const r = v.verifyHand(a.match_id, a.entry, a.seats, a.house);
      return { order: r.order, opened: r.opened, hand_key: bytesToHex(r.handKey), deck: bytesToHex(r.deck) };
    },
  };
  return {
    run(kind: string, argsJson: string): string {
      const f = kinds[kind];
      if (f === undefined) throw new Error(`sealed backend: unknown call ${kind}`);
      try {
        const value = f(JSON.parse(argsJson));
        return JSON.stringify({ ok: true, value: value === undefined ? null : value });
      } catch (e) {
        if (!(e instanceof SealedError)) throw e;
        return JSON.stringify({ ok: false, error: e.message });
      }
    },
  };
}

// The verifier of sealed deals (qahwa-fair/3), written from docs/spec/fairness-v3.md: a
// second implementation beside the Python package `sealed`, for the verify page (bundled into
// qahwa_page/static/sealed-verify.js by `make verify-js`; its worker loads it for qahwa-fair/3
// transcripts only).
//
// It imports nothing at run time itself: `sealedVerifier(lib)` takes the group and the hash
// from the caller (the page's worker passes its vendored copies, qahwa_page/static/sealed-lib.js;
// tests/sealed/test_sealed_js.py passes the locked npm packages @noble/curves and @noble/hashes):
//   lib.ristretto255        — @noble/curves/ed25519.js `ristretto255`
//   lib.ristretto255_hasher — @noble/curves/ed25519.js `ristretto255_hasher` (deriveToCurve:
//                             RFC 9496's one-way map of 64 bytes)
//   lib.sha512              — @noble/hashes/sha2.js `sha512`
//   lib.pippenger           — @noble/curves/abstract/curve.js `pippenger` (Σ k·Q)
//
// Every check throws a SealedError naming what failed; nothing here needs a secret.

import type { pippenger as Pippenger } from "@noble/curves/abstract/curve.js";
import type { ristretto255 as Ristretto, ristretto255_hasher as RistrettoHasher } from "@noble/curves/ed25519.js";
import type { sha512 as Sha512 } from "@noble/hashes/sha2.js";

export interface SealedLib {
  ristretto255: typeof Ristretto;
  ristretto255_hasher: typeof RistrettoHasher;
  sha512: typeof Sha512;
  pippenger: typeof Pippenger;
}
type Point = ReturnType<typeof Ristretto.Point.fromBytes>;
type Pair = [bigint, Point];
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

export class SealedError extends Error {}

// ℓ, the group order (§1)
export const L = 2n ** 252n + 27742317777372353535851937790883648493n;

const enc = new TextEncoder();

export function hexToBytes(hex: unknown): Uint8Array {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-f]/.test(hex)) {
    throw new SealedError("not lowercase hex");
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function bytesToHex(b: Uint8Array): string {
  let out = "";
  for (let i = 0; i < b.length; i++) out += HEX[b[i]!];
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function u32be(n: number): Uint8Array {
  return new Uint8Array([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
}

function lp(b: Uint8Array): Uint8Array {
  return concat(u32be(b.length), b);
}

function leToBigint(b: Uint8Array): bigint {
  let x = 0n;
  for (let i = b.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[i]!);
  return x;
}

// a code as Python's repr() writes it: the messages are the Python verifier's, word for word
function pyRepr(text: string): string {
  const q = text.includes("'") && !text.includes('"') ? '"' : "'";
  return q + text.replaceAll("\\", "\\\\").replaceAll(q, "\\" + q) + q;
}

function mod(x: bigint): bigint {
  const r = x % L;
  return r < 0n ? r + L : r;
}

export function sealedVerifier(lib: SealedLib) {
  const { ristretto255, ristretto255_hasher, sha512, pippenger } = lib;
  const Point = ristretto255.Point;
  const G = Point.BASE;
  const ZERO = Point.ZERO;
  const Gbytes = G.toBytes();

  // Hs(x) = SHA-512(x) mod ℓ, little-endian (§1)
  function Hs(...parts: Uint8Array[]): bigint {
    return mod(leToBigint(sha512(concat(...parts))));
  }

  function fromHash(h: Uint8Array): Point {
    return ristretto255_hasher.deriveToCurve!(h) as Point;
  }

  // Decoded points by encoding (a match passes the same keys and deck items many times, and a
  // decoding costs a square root); null for an encoding that is no point. Bounded.
  const decoded = new Map<string, Point | null>();

  function point(bytes: Uint8Array, what: string): Point {
    if (!(bytes instanceof Uint8Array) || bytes.length !== 32) {
      throw new SealedError(`${what}: not a canonical ristretto255 point`);
    }
    const key = bytesToHex(bytes);
    let p = decoded.get(key);
    if (p === undefined) {
      try {
        p = Point.fromBytes(bytes);
      } catch {
        p = null;
      }
      if (decoded.size >= 16384) decoded.clear();
      decoded.set(key, p);
    }
    if (p === null) throw new SealedError(`${what}: not a canonical ristretto255 point`);
    return p;
  }

  function scalar(bytes: Uint8Array, what: string): bigint {
    const x = bytes.length === 32 ? leToBigint(bytes) : L;
    if (x >= L) throw new SealedError(`${what}: not a canonical scalar (32 bytes little-endian below ℓ)`);
    return x;
  }

  // k·Q for a public k (any integer, taken mod ℓ): G's multiples from noble's precomputed table
  function mulPublic(k: bigint, Q: Point): Point {
    const m = mod(k);
    if (m === 0n || Q.is0()) return ZERO;
    if (m === 1n) return Q;
    if (m === L - 1n) return Q.negate();
    return Q === G ? G.multiplyUnsafe(m) : Q.multiplyUnsafe(m);
  }

  // Σ k·Q == identity for a few pairs: one multiplication each (Pippenger's buckets cost more
  // than they save below a few dozen points)
  function fewAreZero(pairs: Pair[]): boolean {
    let acc = ZERO;
    for (const [k, Q] of pairs) acc = acc.add(mulPublic(k, Q));
    return acc.is0();
  }

  // Σ k·Q == identity, over (k, Q) pairs (k any integer, taken mod ℓ)
  function sumIsZero(pairs: Pair[]): boolean {
    if (pairs.length <= 8) return fewAreZero(pairs);
    const pts: Point[] = [];
    const ks: bigint[] = [];
    for (const [k, Q] of pairs) {
      const m = mod(k);
      if (m === 0n || Q.is0()) continue;
      pts.push(Q);
      ks.push(m);
    }
    if (pts.length === 0) return true;
    return pippenger(Point, pts, ks).is0();
  }

  // ctx = lp(match_id) || u32be(hand) || u32be(seat)  (§1)
  function context(ctx: Ctx): Uint8Array {
    const { match_id, hand, seat } = ctx;
    if (typeof match_id !== "string" || match_id === "") throw new SealedError("context: match_id");
    for (const v of [hand, seat]) {
      if (!Number.isInteger(v) || v < 0 || v >= 2 ** 32) throw new SealedError("context: hand or seat");
    }
    return concat(lp(enc.encode(match_id)), u32be(hand), u32be(seat));
  }

  // §2
  const itemCache = new Map<string, Uint8Array>();
  function itemPoint(game: string, code: string): Uint8Array {
    const key = JSON.stringify([game, code]);
    let out = itemCache.get(key);
    if (out === undefined) {
      const h = sha512(
        concat(enc.encode("qahwa-fair/3 item"), new Uint8Array([0]), lp(enc.encode(game)), lp(enc.encode(code))),
      );
      out = fromHash(h).toBytes();
      if (itemCache.size >= 4096) itemCache.clear();
      itemCache.set(key, out);
    }
    return out.slice();
  }

  const genCache = new Map<number, Point>();
  function generator(i: number): Point {
    let g = genCache.get(i);
    if (g === undefined) {
      g = fromHash(sha512(concat(enc.encode("qahwa-fair/3 generator"), u32be(i))));
      genCache.set(i, g);
    }
    return g;
  }

  // §3: proof = R || s; s·G = R + e·P, e = Hs("qahwa-fair/3 key" || 0x00 || ctx || G || P || R)
  function verifyKey(ctx: Ctx, Pb: Uint8Array, proof: Uint8Array): void {
    const P = point(Pb, `key of seat ${ctx.seat}`);
    if (P.is0()) throw new SealedError(`key of seat ${ctx.seat}: the identity is not a key`);
    if (proof.length !== 64) throw new SealedError("key proof: 64 bytes expected");
    const Rb = proof.subarray(0, 32);
    const R = point(Rb, "key proof R");
    const s = scalar(proof.subarray(32), "key proof s");
    const e = Hs(enc.encode("qahwa-fair/3 key"), new Uint8Array([0]), context(ctx), Gbytes, Pb, Rb);
    if (!sumIsZero([[s, G], [-1n, R], [-e, P]])) {
      throw new SealedError(`key of seat ${ctx.seat}: the proof of knowledge does not verify`);
    }
  }

  function checkRevealed(Pb: Uint8Array, xb: Uint8Array, seat = 0): void {
    const x = scalar(xb, `revealed key of seat ${seat}`);
    const P = point(Pb, `key of seat ${seat}`);
    if (!sumIsZero([[x, G], [-1n, P]])) throw new SealedError(`revealed key of seat ${seat} does not match its public key`);
  }

  function handKey(keys: Uint8Array[]): Uint8Array {
    if (keys.length === 0) throw new SealedError("hand key: no seat keys");
    let acc = ZERO;
    for (const k of keys) acc = acc.add(point(k, "key"));
    return acc.toBytes();
  }

  // §4
  function parseDeck(bytes: Uint8Array, n?: number): { A: Point; B: Point }[] {
    if (!(bytes instanceof Uint8Array) || bytes.length === 0 || bytes.length % 64) {
      throw new SealedError("deck: a non-empty multiple of 64 bytes expected");
    }
    const count = bytes.length / 64;
    if (count > 1024) throw new SealedError("deck: at most 1024 items");
    if (n !== undefined && count !== n) throw new SealedError(`deck: ${n} items expected, got ${count}`);
    const out: { A: Point; B: Point }[] = [];
    for (let i = 0; i < count; i++) {
      out.push({
        A: point(bytes.subarray(64 * i, 64 * i + 32), `deck item ${i} A`),
        B: point(bytes.subarray(64 * i + 32, 64 * i + 64), `deck item ${i} B`),
      });
    }
    return out;
  }

  // §5.5
  function verifyShuffle(ctx: Ctx, Pb: Uint8Array, deckInBytes: Uint8Array, deckOutBytes: Uint8Array, proof: Uint8Array): void {
    const deckIn = parseDeck(deckInBytes);
    const n = deckIn.length;
    const deckOut = parseDeck(deckOutBytes, n);
    const P = point(Pb, "hand key");
    if (proof.length !== 32 * (5 * n + 9)) {
      throw new SealedError(`shuffle proof: ${32 * (5 * n + 9)} bytes expected for ${n} items`);
    }
    const word = (k: number): Uint8Array => proof.subarray(32 * k, 32 * k + 32);
    const ks = Array.from({ length: 5 * n + 9 }, (_, k) => k);
    const pts = ks.slice(0, 3 * n + 5).map((k) => point(word(k), `shuffle proof element ${k}`));
    const scs = ks.slice(3 * n + 5).map((k) => scalar(word(k), `shuffle proof element ${k}`));
    const c = pts.slice(0, n);
    const chat = pts.slice(n, 2 * n);
    const [t1, t2, t3, t4A, t4B] = pts.slice(2 * n, 2 * n + 5) as [Point, Point, Point, Point, Point];
    const that = pts.slice(2 * n + 5, 3 * n + 5);
    const [s1, s2, s3, s4] = scs.slice(0, 4) as [bigint, bigint, bigint, bigint];
    const shat = scs.slice(4, 4 + n);
    const sp = scs.slice(4 + n, 4 + 2 * n);
    const gens = Array.from({ length: n + 1 }, (_, i) => generator(i));
    const h = gens[0]!;
    const hs = gens.slice(1);
    // σ = SHA-512("qahwa-fair/3 shuffle" || 0x00 || ctx || u32be(n) || G || H(0..n) || P
    //             || deck_in || deck_out || c_0..c_{n-1})
    const sigma = sha512(
      concat(
        enc.encode("qahwa-fair/3 shuffle"),
        new Uint8Array([0]),
        context(ctx),
        u32be(n),
        Gbytes,
        ...gens.map((g) => g.toBytes()),
        Pb,
        deckInBytes,
        deckOutBytes,
        proof.subarray(0, 32 * n),
      ),
    );
    const u = Array.from({ length: n }, (_, j) => Hs(sigma, u32be(j)));
    const ch = Hs(
      enc.encode("qahwa-fair/3 shuffle challenge"),
      new Uint8Array([0]),
      sigma,
      proof.subarray(32 * n, 32 * (3 * n + 5)),
    );
    const who = `shuffle proof of seat ${ctx.seat}`;
    let U = 1n;
    for (const x of u) U = (U * x) % L;
    // The five equations at once, as one random linear combination (§5.5 allows it: a false
    // proof passes with probability at most 1/ℓ); when it fails, one by one, to name it.
    const w = () => mod(leToBigint(globalThis.crypto.getRandomValues(new Uint8Array(64))));
    const [d2, d3, d4a, d4b] = [w(), w(), w(), w()];
    const d5 = c.map(() => w());
    let g = -s1 - d2 * s2 - d3 * s3 + d4a * s4;
    for (let i = 0; i < n; i++) g -= d5[i]! * shat[i]!;
    const all: Pair[] = [
      [g, G],
      [1n, t1],
      [d2, t2],
      [d3, t3],
      [d4a, t4A],
      [d4b, t4B],
      [d4b * s4, P],
      [-d2 * ch * U - d5[0]! * sp[0]!, h],
    ];
    for (let j = 0; j < n; j++) {
      all.push([ch + d3 * ch * u[j]!, c[j]!], [d4a * ch * u[j]!, deckIn[j]!.A], [d4b * ch * u[j]!, deckIn[j]!.B]);
    }
    for (let i = 0; i < n; i++) {
      const next = i + 1 < n ? -d5[i + 1]! * sp[i + 1]! : d2 * ch;
      all.push(
        [-ch - d3 * sp[i]!, hs[i]!],
        [-d4a * sp[i]!, deckOut[i]!.A],
        [-d4b * sp[i]!, deckOut[i]!.B],
        [d5[i]!, that[i]!],
        [d5[i]! * ch + next, chat[i]!],
      );
    }
    if (sumIsZero(all)) return;
    // (1) s1·G = t1 + c·(Σ c_j − Σ h_i)
    const e1: Pair[] = [[s1, G], [-1n, t1]];
    for (let j = 0; j < n; j++) e1.push([-ch, c[j]!], [ch, hs[j]!]);
    if (!sumIsZero(e1)) throw new SealedError(`${who}: equation 1 (the permutation commitment) fails`);
    // (2) s2·G = t2 + c·(ĉ_{n−1} − U·h)
    if (!sumIsZero([[s2, G], [-1n, t2], [-ch, chat[n - 1]!], [ch * U, h]])) {
      throw new SealedError(`${who}: equation 2 (the chain's end) fails`);
    }
    // (3) s3·G + Σ s'_i·h_i = t3 + Σ (c·u_j)·c_j
    const e3: Pair[] = [[s3, G], [-1n, t3]];
    for (let i = 0; i < n; i++) e3.push([sp[i]!, hs[i]!], [-ch * u[i]!, c[i]!]);
    if (!sumIsZero(e3)) throw new SealedError(`${who}: equation 3 (the challenges under the permutation) fails`);
    // (4) Σ s'_i·e'_i − s4·(G, P) = t4 + Σ (c·u_j)·e_j
    const e4A: Pair[] = [[-s4, G], [-1n, t4A]];
    const e4B: Pair[] = [[-s4, P], [-1n, t4B]];
    for (let i = 0; i < n; i++) {
      e4A.push([sp[i]!, deckOut[i]!.A], [-ch * u[i]!, deckIn[i]!.A]);
      e4B.push([sp[i]!, deckOut[i]!.B], [-ch * u[i]!, deckIn[i]!.B]);
    }
    if (!sumIsZero(e4A) || !sumIsZero(e4B)) throw new SealedError(`${who}: equation 4 (the re-masking) fails`);
    // (5) ŝ_i·G + s'_i·ĉ_{i−1} = t̂_i + c·ĉ_i
    let prev = h;
    for (let i = 0; i < n; i++) {
      if (!sumIsZero([[shat[i]!, G], [sp[i]!, prev], [-1n, that[i]!], [-ch, chat[i]!]])) {
        throw new SealedError(`${who}: equation 5 (the commitment chain) fails at ${i}`);
      }
      prev = chat[i]!;
    }
    throw new SealedError(`${who}: the equations fail`);
  }

  // §6: proof = R1 || R2 || s; s·G = R1 + e·P, s·A = R2 + e·D,
  // e = Hs("qahwa-fair/3 share" || 0x00 || ctx || G || P || A || B || D || R1 || R2)
  function verifyShare(ctx: Ctx, Pb: Uint8Array, Ab: Uint8Array, Bb: Uint8Array, Db: Uint8Array, proof: Uint8Array): void {
    const P = point(Pb, "share key");
    const A = point(Ab, "ciphertext A");
    point(Bb, "ciphertext B");
    const D = point(Db, "share");
    if (proof.length !== 96) throw new SealedError("share proof: 96 bytes expected");
    const R1 = point(proof.subarray(0, 32), "share proof R1");
    const R2 = point(proof.subarray(32, 64), "share proof R2");
    const s = scalar(proof.subarray(64), "share proof s");
    const e = Hs(
      enc.encode("qahwa-fair/3 share"),
      new Uint8Array([0]),
      context(ctx),
      Gbytes,
      Pb,
      Ab,
      Bb,
      Db,
      proof.subarray(0, 64),
    );
    if (!sumIsZero([[s, G], [-1n, R1], [-e, P]]) || !sumIsZero([[s, A], [-1n, R2], [-e, D]])) {
      throw new SealedError(`share of seat ${ctx.seat}: the proof does not verify`);
    }
  }

  // §7: every seat's share verified, and B − Σ D = M(game, code)
  function checkOpening(game: string, code: string, Ab: Uint8Array, Bb: Uint8Array, ctx: Ctx, keys: Uint8Array[], shares: { D: Uint8Array; proof: Uint8Array }[]): void {
    if (shares.length !== keys.length) {
      throw new SealedError(`opening: ${keys.length} shares expected, got ${shares.length}`);
    }
    point(Bb, "ciphertext B");
    shares.forEach(({ D, proof }, seat) => verifyShare({ ...ctx, seat }, keys[seat]!, Ab, Bb, D, proof));
    if (!opensTo(game, code, Ab, Bb, shares.map((s) => s.D))) {
      throw new SealedError(`opening: the shares do not open this ciphertext to ${pyRepr(code)}`);
    }
  }

  function b64(text: unknown, what: string): Uint8Array {
    if (typeof text !== "string") throw new SealedError(`${what}: a base64 string expected`);
    let bin: string;
    try {
      bin = atob(text);
    } catch {
      throw new SealedError(`${what}: not base64`);
    }
    const out = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
    if (btoa(bin) !== text) throw new SealedError(`${what}: not canonical base64`);
    return out;
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

  // §9–§10: one hand's "sealed" entry of a match with `seats` seats (`house`: the house
  // seats). Returns {order, opened}: every item's code by final position once every key is
  // revealed (else null), and the opened items (position → code).
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
    if (new Set(items).size !== items.length) throw new SealedError("starting deck: item codes repeat");
    const n = items.length;
    const ctx = (seat: number): Ctx => ({ match_id: matchId, hand, seat });
    const keysIn = list(e, "keys");
    if (keysIn.length !== seats || keysIn.some((k, i) => k["seat"] !== i)) {
      throw new SealedError(`sealed hand: one key per seat, seats 0..${seats - 1} in order`);
    }
    const keys = keysIn.map((k) => {
      const P = hexField(k["key"], 32, `key of seat ${String(k["seat"])}`);
      verifyKey(ctx(k["seat"] as number), P, hexField(k["proof"], 64, `key proof of seat ${String(k["seat"])}`));
      return P;
    });
    const Pb = handKey(keys);
    const houseSet = new Set(house);
    const order: number[] = [...[...houseSet].sort((a, b) => a - b)];
    for (let s = 0; s < seats; s++) if (!houseSet.has(s)) order.push(s);
    const shuffles = list(e, "shuffles");
    if (shuffles.length !== order.length || shuffles.some((sh, i) => sh["seat"] !== order[i])) {
      throw new SealedError(`sealed hand: shuffles by seats ${JSON.stringify(order)} in that order expected`);
    }
    let deck = startingDeck(game, items as string[]);
    for (const sh of shuffles) {
      const seat = sh["seat"] as number;
      const out = b64(sh["deck"], `deck of seat ${seat}`);
      const proof = b64(sh["proof"], `shuffle proof of seat ${seat}`);
      try {
        verifyShuffle(ctx(seat), Pb, deck, out, proof);
      } catch (err) {
        if (!(err instanceof SealedError)) throw err;
        throw new SealedError(`shuffle of seat ${seat}: ${err.message}`);
      }
      deck = out;
    }
    const A = (i: number): Uint8Array => deck.subarray(64 * i, 64 * i + 32);
    const B = (i: number): Uint8Array => deck.subarray(64 * i + 32, 64 * i + 64);
    const shares = new Map<string, { D: Uint8Array; proof: Uint8Array }>();
    for (const sh of list(e, "shares")) {
      const item = index(sh["item"], n, "share item");
      const s = index(sh["seat"], seats, "share seat");
      const key = `${item}/${s}`;
      if (shares.has(key)) throw new SealedError(`sealed hand: a second share of item ${item} by seat ${s}`);
      const D = hexField(sh["share"], 32, `share of seat ${s}`);
      const proof = hexField(sh["proof"], 96, `share proof of seat ${s}`);
      verifyShare(ctx(s), keys[s]!, A(item), B(item), D, proof);
      shares.set(key, { D, proof });
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
      if (!opensTo(game, code, A(item), B(item), all.map((x) => x!.D))) {
        throw new SealedError(`the shares do not open item ${item} to ${pyRepr(code)}`);
      }
      opened[item] = code;
    }
    const revealed = new Map<number, bigint>();
    for (const r of list(e, "revealed")) {
      const s = index(r["seat"], seats, "revealed seat");
      const x = hexField(r["secret"], 32, `revealed key of seat ${s}`);
      if (revealed.has(s)) throw new SealedError(`sealed hand: seat ${s} revealed twice`);
      scalar(x, `revealed key of seat ${s}`);
      checkRevealed(keys[s]!, x, s);
      revealed.set(s, leToBigint(x));
    }
    if (revealed.size !== seats) return { order: null, opened, handKey: Pb, deck };
    return { order: openDeck(game, items as string[], deck, [...revealed.values()]), opened, handKey: Pb, deck };
  }

  // The item lookup (§10): with every seat's revealed secret (bigints, or 32-byte scalars),
  // every item's code by position: B − (Σ x)·A named through the items' points.
  function openDeck(game: string, items: string[], deckBytes: Uint8Array, secrets: (bigint | Uint8Array)[]): string[] {
    if (new Set(items).size !== items.length) throw new SealedError("starting deck: item codes repeat");
    parseDeck(deckBytes, items.length);
    if (secrets.length === 0) throw new SealedError("open deck: no revealed key");
    const codes = lookup(game, items, deckBytes, secrets);
    if (codes.includes(null)) throw new SealedError("the revealed keys do not open every item of the deck");
    if (new Set(codes).size !== codes.length) throw new SealedError("the final deck does not hold every item once");
    return codes as string[];
  }

  // §7 without the shares' proofs: B − Σ D = M(game, code)
  function opensTo(game: string, code: string, Ab: Uint8Array, Bb: Uint8Array, shares: Uint8Array[]): boolean {
    point(Ab, "ciphertext A");
    let acc = point(Bb, "ciphertext B");
    for (const D of shares) acc = acc.subtract(point(D, "share"));
    return acc.equals(Point.fromBytes(itemPoint(game, code)));
  }

  // §4: every item as (identity, M(game, code)), in the given order
  function startingDeck(game: string, items: string[]): Uint8Array {
    if (new Set(items).size !== items.length) throw new SealedError("starting deck: item codes repeat");
    const out = new Uint8Array(64 * items.length);
    items.forEach((code, i) => out.set(itemPoint(game, code), 64 * i + 32));
    return out;
  }

  // The item lookup: each item's code with the sum of the secrets (bigints, or 32-byte
  // scalars), null where none opens
  function lookup(game: string, items: string[], deckBytes: Uint8Array, secrets: (bigint | Uint8Array)[]): (string | null)[] {
    const deck = parseDeck(deckBytes);
    let x = 0n;
    for (const s of secrets) x = mod(x + (typeof s === "bigint" ? s : scalar(s, "revealed key")));
    const table = new Map(items.map((code) => [bytesToHex(itemPoint(game, code)), code]));
    return deck.map(({ A, B }) => {
      const m = x === 0n ? B : B.subtract(A.multiplyUnsafe(x));
      const code = table.get(bytesToHex(m.toBytes()));
      return code === undefined ? null : code;
    });
  }

  return {
    verifyHand,
    openDeck,
    opensTo,
    startingDeck,
    lookup,
    itemPoint,
    generator: (i: number) => generator(i).toBytes(),
    verifyKey,
    checkRevealed,
    handKey,
    parseDeck,
    verifyShuffle,
    verifyShare,
    checkOpening,
  };
}

// The verify page's Python calls the verifier through this (verify_cli/sealed_js.py, Pyodide's
// `js` module): run(kind, JSON of the arguments, bytes as lowercase hex) → JSON of
// {ok: true, value} or {ok: false, error: the SealedError's message}. Anything else thrown is
// a bug, and propagates.
export function jsonBackend(v: SealedVerifier): { run(kind: string, argsJson: string): string } {
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

export type SealedVerifier = ReturnType<typeof sealedVerifier>;

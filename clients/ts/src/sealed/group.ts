/** ristretto255 (RFC 9496) over @noble/curves, and what every sealed proof shares
 * (docs/spec/fairness-v3.md §1–§2): Hs, lp, the context, item points and generators, the
 * randomness a prover draws from.
 *
 * Points are noble's ristretto255 points; bytes are their canonical 32-byte encodings.
 * Scalars are bigints below ℓ. A secret scalar multiplies a point through noble's
 * ``multiply`` (its constant-time ladder); public ones through ``multiplyUnsafe``. Limits as
 * for Python (fairness-v3 §10): bigint arithmetic on a secret scalar is not constant time in
 * JavaScript, and a permutation is applied by array indexing; what either could leak is local
 * timing on the seat's own machine. */

import { ristretto255, ristretto255_hasher } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { concat, lp, toHex, u32be, utf8 } from "../bytes.js";

export { concat, lp, u32be, utf8 };

/** A sealed value that does not verify or decode (the message names what and why). */
export class SealedError extends Error {}
Object.defineProperty(SealedError.prototype, "name", { value: "SealedError", writable: true, configurable: true });

/** A ristretto255 point (noble's, as far as this package uses it). */
export interface Point {
  add(other: Point): Point;
  subtract(other: Point): Point;
  negate(): Point;
  multiply(k: bigint): Point;
  multiplyUnsafe(k: bigint): Point;
  double(): Point;
  precompute(windowSize?: number, isLazy?: boolean): Point;
  equals(other: Point): boolean;
  is0(): boolean;
  toBytes(): Uint8Array;
}
const RP = ristretto255.Point;

/** ℓ, the group order. */
export const L = 2n ** 252n + 27742317777372353535851937790883648493n;
export const G: Point = RP.BASE;
export const ZERO: Point = RP.ZERO;
export const G_BYTES = G.toBytes();
export const hex = toHex;

export function mod(x: bigint): bigint {
  const r = x % L;
  return r < 0n ? r + L : r;
}

export function leToBig(b: Uint8Array): bigint {
  let x = 0n;
  for (let i = b.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[i]!);
  return x;
}

/** A scalar's 32-byte little-endian encoding. */
export function scalarBytes(x: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let v = mod(x);
  for (let i = 0; i < 32; i++) {
    out[i] = Number(v & 255n);
    v >>= 8n;
  }
  return out;
}


/** Hs(x) = SHA-512(x) mod ℓ over the concatenation of the parts (§1). */
export function Hs(...parts: Uint8Array[]): bigint {
  return mod(leToBig(sha512(concat(...parts))));
}


// Decoded points by encoding (a hand passes the same keys and deck items many times, and a
// decoding costs a square root); null for an encoding that is no point. Bounded.
const decoded = new Map<string, Point | null>();

/** Forget the points decoded so far (a bench's seat alone, decoding what it reads itself). */
export function forgetPoints(): void {
  decoded.clear();
}

// Each point's encoding, once: a decoded point keeps the bytes it came from, an encoded one
// what ``enc`` made (an encoding costs a square root too).
const encoded = new WeakMap<Point, Uint8Array>();

/** ``p``'s canonical encoding, computed once a point. */
export function enc(p: Point): Uint8Array {
  let b = encoded.get(p);
  if (b === undefined) encoded.set(p, (b = p.toBytes()));
  return b;
}

/** ``b`` checked as a point from outside (a clear error naming ``what`` otherwise). */
export function point(b: Uint8Array, what: string): Point {
  if (!(b instanceof Uint8Array) || b.length !== 32) throw new SealedError(`${what}: not a canonical ristretto255 point`);
  const key = toHex(b);
  let p = decoded.get(key);
  if (p === undefined) {
    try {
      p = RP.fromBytes(b);
      encoded.set(p, b.slice());
    } catch {
      p = null;
    }
    if (decoded.size >= 16384) decoded.clear();
    decoded.set(key, p);
  }
  if (p === null) throw new SealedError(`${what}: not a canonical ristretto255 point`);
  return p;
}

/** ``b`` checked as a canonical scalar (32 bytes little-endian below ℓ). */
export function scalar(b: Uint8Array, what: string): bigint {
  const x = b.length === 32 ? leToBig(b) : L;
  if (x >= L) throw new SealedError(`${what}: not a canonical scalar (32 bytes little-endian below ℓ)`);
  return x;
}

// G with a window-8 table of its own (built on first use, about 4,200 additions): a
// multiplication by G is then 33 table additions (and as many dummy ones for constant time),
// where noble's G (window 6, blinded to 381 bits) takes 128.
let gTable: Point | null = null;
function gt(): Point {
  if (gTable === null) gTable = RP.BASE.multiply(1n).precompute(8, false);
  return gTable;
}

/** s·Q for a secret s (noble's constant-time ladder; G through its own table); the identity
 * for s = 0. */
export function mulSecret(s: bigint, Q: Point): Point {
  const m = mod(s);
  if (m === 0n || Q.is0()) return ZERO;
  return (Q === G ? gt() : Q).multiply(m);
}

/** k·Q for a public k (any integer, taken mod ℓ). */
export function mulPublic(k: bigint, Q: Point): Point {
  const m = mod(k);
  if (m === 0n || Q.is0()) return ZERO;
  if (m === 1n) return Q;
  return (Q === G ? gt() : Q).multiplyUnsafe(m);
}

/** Σ k·Q over (k, Q) pairs of public scalars. */
export function lincomb(pairs: [bigint, Point][]): Point {
  let acc = ZERO;
  for (const [k, Q] of pairs) acc = acc.add(mulPublic(k, Q));
  return acc;
}

/** Σ kᵢ·Qᵢ for secret scalars kᵢ: Straus's interleaving with 4-bit fixed windows, one 16-entry
 * table a point, 252 doublings for the whole sum instead of one chain a point. As noble's
 * ``multiply``, the sequence of point operations does not depend on the scalars: each window
 * adds one table entry a point (the identity for a zero digit), chosen by touching every entry. */
export function msmSecret(ks: readonly bigint[], pts: readonly Point[]): Point {
  if (ks.length !== pts.length) throw new RangeError("msmSecret: as many scalars as points");
  const tables = pts.map((Q) => {
    const t: Point[] = [ZERO];
    for (let i = 1; i < 16; i++) t.push(t[i - 1]!.add(Q));
    return t;
  });
  const digits = ks.map((k) => scalarBytes(k));
  let acc = ZERO;
  for (let w = 63; w >= 0; w--) {
    if (w !== 63) acc = acc.double().double().double().double();
    const byte = w >> 1;
    const shift = (w & 1) * 4;
    for (let j = 0; j < tables.length; j++) {
      const d = (digits[j]![byte]! >> shift) & 15;
      const t = tables[j]!;
      let sel = t[0]!;
      for (let i = 1; i < 16; i++) sel = i === d ? t[i]! : sel;
      acc = acc.add(sel);
    }
  }
  return acc;
}

/** Σ kᵢ·Qᵢ for public scalars kᵢ (taken mod ℓ): Pippenger's buckets with signed c-bit digits
 * (2^(c−1) buckets a window, a digit's sign picks add or subtract), empty buckets and zero
 * digits skipped. Not constant time: public scalars only. */
export function msmPublic(ks: readonly bigint[], pts: readonly Point[]): Point {
  if (ks.length !== pts.length) throw new RangeError("msmPublic: as many scalars as points");
  const m = pts.length;
  if (m === 0) return ZERO;
  if (m < 4) return lincomb(ks.map((k, i) => [k, pts[i]!]));
  const c = m < 16 ? 4 : m < 48 ? 5 : m < 160 ? 6 : m < 640 ? 7 : 8;
  const windows = Math.ceil(253 / c) + 1;
  const half = 1 << (c - 1);
  // signed digits d with Σ d·2^(c·w) = k, each in [−2^(c−1), 2^(c−1))
  const digits = new Int32Array(m * windows);
  for (let j = 0; j < m; j++) {
    const b = scalarBytes(ks[j]!);
    let carry = 0;
    for (let w = 0; w < windows; w++) {
      const bit = w * c;
      let v = 0;
      for (let t = 0; t < c; t++) {
        const at = bit + t;
        if (at < 256) v |= ((b[at >> 3]! >> (at & 7)) & 1) << t;
      }
      v += carry;
      if (v >= half) {
        v -= 1 << c;
        carry = 1;
      } else carry = 0;
      digits[j * windows + w] = v;
    }
  }
  const negs = pts.map((Q) => Q.negate());
  let acc: Point | null = null;
  const buckets = new Array<Point | null>(half + 1);
  for (let w = windows - 1; w >= 0; w--) {
    if (acc !== null) for (let t = 0; t < c; t++) acc = acc.double();
    buckets.fill(null);
    for (let j = 0; j < m; j++) {
      const d = digits[j * windows + w]!;
      if (d === 0) continue;
      const Q = d > 0 ? pts[j]! : negs[j]!;
      const i = d > 0 ? d : -d;
      const b = buckets[i];
      buckets[i] = b == null ? Q : b.add(Q);
    }
    let run: Point | null = null;
    let sum: Point | null = null;
    for (let i = half; i >= 1; i--) {
      const b = buckets[i];
      if (b != null) run = run === null ? b : run.add(b);
      if (run !== null) sum = sum === null ? run : sum.add(run);
    }
    if (sum !== null) acc = acc === null ? sum : acc.add(sum);
  }
  return acc ?? ZERO;
}

/** A 128-bit weight from the platform's CSPRNG, for a verifier's random linear combination:
 * a prover cannot know it, so a false equation survives the sum with probability 2⁻¹²⁸. */
export function weight128(): bigint {
  return leToBig(globalThis.crypto.getRandomValues(new Uint8Array(16)));
}

/** ristretto255 from a 64-byte uniform string (RFC 9496 §4.3.4). */
export function fromHash(h: Uint8Array): Point {
  return ristretto255_hasher.deriveToCurve!(h) as Point;
}

// -- what every proof is bound to (§1) -------------------------------------------------------

/** ctx = lp(match_id) || u32be(hand) || u32be(seat). */
export interface Context {
  readonly matchId: string;
  readonly hand: number;
  readonly seat: number;
}

export function ctxBytes(ctx: Context): Uint8Array {
  if (typeof ctx.matchId !== "string" || ctx.matchId === "") throw new SealedError("context: match_id must be a non-empty string");
  for (const [name, v] of [
    ["hand", ctx.hand],
    ["seat", ctx.seat],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v >= 2 ** 32) throw new SealedError(`context: ${name} must be an integer in 0..2^32-1`);
  }
  return concat(lp(utf8(ctx.matchId)), u32be(ctx.hand), u32be(ctx.seat));
}

// -- nothing-up-my-sleeve points (§2) ---------------------------------------------------------

export const MAX_ITEMS = 1024;
const itemCache = new Map<string, Point>();

/** M(game, code) = from_hash(SHA-512("qahwa-fair/3 item" || 0x00 || lp(game) || lp(code))). */
export function itemPoint(game: string, code: string): Point {
  const key = JSON.stringify([game, code]);
  let p = itemCache.get(key);
  if (p === undefined) {
    p = fromHash(sha512(concat(utf8("qahwa-fair/3 item"), new Uint8Array([0]), lp(utf8(game)), lp(utf8(code)))));
    if (itemCache.size >= 4096) itemCache.clear();
    itemCache.set(key, p);
  }
  return p;
}

const genCache = new Map<number, Point>();

/** H(i) = from_hash(SHA-512("qahwa-fair/3 generator" || u32be(i))). */
export function generator(i: number): Point {
  let p = genCache.get(i);
  if (p === undefined) {
    p = fromHash(sha512(concat(utf8("qahwa-fair/3 generator"), u32be(i))));
    genCache.set(i, p);
  }
  return p;
}

/** Point → code for the items of a game: how a seat names an item it opened. */
export function itemTable(game: string, codes: readonly string[]): Map<string, string> {
  const table = new Map(codes.map((c) => [hex(itemPoint(game, c).toBytes()), c]));
  if (table.size !== codes.length) throw new SealedError("item codes repeat");
  return table;
}

// -- randomness --------------------------------------------------------------------------------

/** Where a prover's scalars and permutations come from. */
export interface Randomness {
  scalar(): bigint;
  below(n: number): number;
}

/** The platform's CSPRNG (``crypto.getRandomValues``): every real deal. */
export class SystemRandomness implements Randomness {
  scalar(): bigint {
    for (;;) {
      const x = mod(leToBig(globalThis.crypto.getRandomValues(new Uint8Array(64))));
      if (x !== 0n) return x;
    }
  }
  below(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > 2 ** 32) throw new RangeError("below: 1..2^32");
    const limit = 2 ** 32 - (2 ** 32 % n);
    const buf = new Uint32Array(1);
    for (;;) {
      globalThis.crypto.getRandomValues(buf);
      if (buf[0]! < limit) return buf[0]! % n;
    }
  }
}

/** The test vectors' randomness (§11): k-th output = SHA-512("qahwa-fair/3 test randomness"
 * || 0x00 || lp(seed) || u32be(k)); a scalar is it mod ℓ, ``below(n)`` its first 8 bytes
 * (big-endian) mod n. Never for a real deal. */
export class FixedRandomness implements Randomness {
  private readonly prefix: Uint8Array;
  private k = 0;
  constructor(seed: Uint8Array | string) {
    const s = typeof seed === "string" ? utf8(seed) : seed;
    this.prefix = concat(utf8("qahwa-fair/3 test randomness"), new Uint8Array([0]), lp(s));
  }
  private next(): Uint8Array {
    return sha512(concat(this.prefix, u32be(this.k++)));
  }
  scalar(): bigint {
    return mod(leToBig(this.next()));
  }
  below(n: number): number {
    let x = 0n;
    const b = this.next();
    for (let i = 0; i < 8; i++) x = (x << 8n) | BigInt(b[i]!);
    return Number(x % BigInt(n));
  }
}

/** A uniform permutation ψ of 0..n-1 (Fisher–Yates from n-1 down to 1, swapping i with
 * below(i+1)); output position i takes input ψ[i]. */
export function permutation(n: number, rng: Randomness): number[] {
  const psi = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    [psi[i], psi[j]] = [psi[j]!, psi[i]!];
  }
  return psi;
}

/** The sealed proofs a seat makes and checks (docs/spec/fairness-v3.md §3–§7, §10): keys with
 * a Schnorr proof of knowledge, Barnett–Smart masking, the re-masking shuffle with its
 * Terelius–Wikström proof, decryption shares with Chaum–Pedersen proofs, openings and the
 * whole deck's opening once every key is revealed. A port of Python's ``sealed`` package,
 * held to tests/vectors/fairness_v3.json (test/sealed-crypto.test.ts). */

import { mulAddUnsafe } from "@noble/curves/abstract/curve.js";
import { ristretto255 } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";
import {
  type Context,
  type Point,
  type Randomness,
  G,
  G_BYTES,
  Hs,
  L,
  MAX_ITEMS,
  SealedError,
  SystemRandomness,
  ZERO,
  concat,
  ctxBytes,
  enc,
  generator,
  hex,
  itemPoint,
  lincomb,
  mod,
  mulPublic,
  msmPublic,
  msmSecret,
  mulSecret,
  permutation,
  point,
  scalar,
  scalarBytes,
  u32be,
  utf8,
  weight128,
} from "./group.js";

const Z = new Uint8Array([0]);
// noble's multi-scalar sums over this package's Point (noble's ristretto255 points, typed
// here by what the package uses of them)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const RP = ristretto255.Point as any;
const msm = (pts: Point[], ks: bigint[]): Point => msmPublic(ks, pts);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const straus = (pts: Point[], ks: bigint[]): Point => mulAddUnsafe(RP, pts as any, ks) as Point;

function challenge(label: string, ctx: Context, ...parts: Uint8Array[]): bigint {
  return Hs(utf8(`qahwa-fair/3 ${label}`), Z, ctxBytes(ctx), G_BYTES, ...parts);
}

// -- §3 keys -----------------------------------------------------------------------------------

export interface SeatKey {
  x: bigint;
  P: Uint8Array;
  /** R || s (64 bytes) */
  proof: Uint8Array;
}

export function makeKey(ctx: Context, rng: Randomness = new SystemRandomness()): SeatKey {
  const x = rng.scalar();
  const P = mulSecret(x, G).toBytes();
  const k = rng.scalar();
  const R = mulSecret(k, G).toBytes();
  const e = challenge("key", ctx, P, R);
  return { x, P, proof: concat(R, scalarBytes(mod(e * x + k))) };
}

export function verifyKey(ctx: Context, Pb: Uint8Array, proof: Uint8Array): void {
  const P = point(Pb, `key of seat ${ctx.seat}`);
  if (P.is0()) throw new SealedError(`key of seat ${ctx.seat}: the identity is not a key`);
  if (proof.length !== 64) throw new SealedError("key proof: 64 bytes expected (R || s)");
  const Rb = proof.subarray(0, 32);
  const R = point(Rb, "key proof R");
  const s = scalar(proof.subarray(32), "key proof s");
  const e = challenge("key", ctx, Pb, Rb);
  if (!mulPublic(s, G).equals(R.add(mulPublic(e, P)))) {
    throw new SealedError(`key of seat ${ctx.seat}: the proof of knowledge does not verify`);
  }
}

/** The hand key: the sum of every seat's key, in seat order. */
export function handKey(keys: Uint8Array[]): Uint8Array {
  if (keys.length === 0) throw new SealedError("hand key: no seat keys");
  let acc = ZERO;
  for (const k of keys) acc = acc.add(point(k, "key"));
  return acc.toBytes();
}

/** A key revealed at the hand's end must be the one committed to. */
export function checkRevealed(Pb: Uint8Array, xb: Uint8Array, seat: number): void {
  const x = scalar(xb, `revealed key of seat ${seat}`);
  if (!mulPublic(x, G).equals(point(Pb, `key of seat ${seat}`))) {
    throw new SealedError(`revealed key of seat ${seat} does not match its public key`);
  }
}

// -- §4 masking --------------------------------------------------------------------------------

export interface Ciphertext {
  A: Point;
  B: Point;
}

/** A deck: its encoding (A_0 || B_0 || A_1 || …, 64 bytes an item) and its items decoded. */
export interface Deck {
  bytes: Uint8Array;
  items: Ciphertext[];
}

export function startingDeck(game: string, codes: readonly string[]): Deck {
  if (new Set(codes).size !== codes.length) throw new SealedError("starting deck: item codes repeat");
  const items = codes.map((c) => ({ A: ZERO, B: itemPoint(game, c) }));
  return { bytes: encodeDeck(items), items };
}

export function encodeDeck(items: Ciphertext[]): Uint8Array {
  const out = new Uint8Array(64 * items.length);
  items.forEach((c, i) => {
    out.set(enc(c.A), 64 * i);
    out.set(enc(c.B), 64 * i + 32);
  });
  return out;
}

export function decodeDeck(raw: Uint8Array, n?: number): Deck {
  if (!(raw instanceof Uint8Array) || raw.length === 0 || raw.length % 64) {
    throw new SealedError("deck: a non-empty multiple of 64 bytes expected");
  }
  const count = raw.length / 64;
  if (count > MAX_ITEMS) throw new SealedError(`deck: at most ${MAX_ITEMS} items`);
  if (n !== undefined && count !== n) throw new SealedError(`deck: ${n} items expected, got ${count}`);
  const items: Ciphertext[] = [];
  for (let i = 0; i < count; i++) {
    items.push({
      A: point(raw.subarray(64 * i, 64 * i + 32), `deck item ${i} A`),
      B: point(raw.subarray(64 * i + 32, 64 * i + 64), `deck item ${i} B`),
    });
  }
  return { bytes: raw, items };
}

// -- §5 the shuffle ----------------------------------------------------------------------------

export function shuffleProofSize(n: number): number {
  return 32 * (5 * n + 9);
}

function statementSeed(ctx: Context, P: Uint8Array, deckIn: Uint8Array, deckOut: Uint8Array, c: Uint8Array, n: number): Uint8Array {
  const gens: Uint8Array[] = [];
  for (let i = 0; i <= n; i++) gens.push(enc(generator(i)));
  return sha512(concat(utf8("qahwa-fair/3 shuffle"), Z, ctxBytes(ctx), u32be(n), G_BYTES, ...gens, P, deckIn, deckOut, c));
}

function mainChallenge(seed: Uint8Array, middle: Uint8Array): bigint {
  return Hs(utf8("qahwa-fair/3 shuffle challenge"), Z, seed, middle);
}

/** The values a shuffle draws, kept for the vectors' intermediate values. */
export interface ShuffleTrace {
  psi: number[];
  sigma: Uint8Array;
  u: bigint[];
  c: bigint;
}

/** Re-mask and permute ``deckIn`` under hand key ``P``; the new deck and its proof (§5).
 * Draws from ``rng`` in the order of the vectors: ψ, r'_0.., r_0.., r̂_0.., ω1..ω4, ω̂_0..,
 * ω'_0... */
export function shuffle(ctx: Context, Pb: Uint8Array, deckIn: Deck, rng: Randomness = new SystemRandomness(), trace?: Partial<ShuffleTrace>): { deck: Deck; proof: Uint8Array } {
  const n = deckIn.items.length;
  if (n < 1 || n > MAX_ITEMS) throw new SealedError(`shuffle: a deck of 1..${MAX_ITEMS} items expected`);
  // a window-5 table for the hand key: its n + 1 multiplications then take 51 additions each
  const P = point(Pb, "hand key").precompute(5, false);
  const h = generator(0);
  const hs = Array.from({ length: n }, (_, i) => generator(i + 1));
  const psi = permutation(n, rng);
  const rp = Array.from({ length: n }, () => rng.scalar());
  const out: Ciphertext[] = [];
  for (let i = 0; i < n; i++) {
    const src = deckIn.items[psi[i]!]!;
    out.push({ A: src.A.add(mulSecret(rp[i]!, G)), B: src.B.add(mulSecret(rp[i]!, P)) });
  }
  const outBytes = encodeDeck(out);
  const r = Array.from({ length: n }, () => rng.scalar());
  const c: Point[] = new Array<Point>(n);
  for (let i = 0; i < n; i++) {
    const j = psi[i]!;
    c[j] = mulSecret(r[j]!, G).add(hs[i]!);
  }
  const cBytes = concat(...c.map(enc));
  const seed = statementSeed(ctx, Pb, deckIn.bytes, outBytes, cBytes, n);
  const u = Array.from({ length: n }, (_, j) => Hs(seed, u32be(j)));
  const up = Array.from({ length: n }, (_, i) => u[psi[i]!]!);
  const rhat = Array.from({ length: n }, () => rng.scalar());
  const chat: Point[] = [];
  let prev = h;
  for (let i = 0; i < n; i++) {
    prev = mulSecret(rhat[i]!, G).add(mulPublic(up[i]!, prev)); // u'_i is public (a challenge)
    chat.push(prev);
  }
  const [w1, w2, w3, w4] = [rng.scalar(), rng.scalar(), rng.scalar(), rng.scalar()];
  const what = Array.from({ length: n }, () => rng.scalar());
  const wp = Array.from({ length: n }, () => rng.scalar());
  const t1 = mulSecret(w1, G);
  const t2 = mulSecret(w2, G);
  const t3 = mulSecret(w3, G).add(msmSecret(wp, hs));
  const t4A = msmSecret(wp, out.map((x) => x.A)).subtract(mulSecret(w4, G));
  const t4B = msmSecret(wp, out.map((x) => x.B)).subtract(mulSecret(w4, P));
  const that: Point[] = [];
  prev = h;
  for (let i = 0; i < n; i++) {
    that.push(mulSecret(what[i]!, G).add(mulSecret(wp[i]!, prev)));
    prev = chat[i]!;
  }
  const middle = concat(...chat.map(enc), enc(t1), enc(t2), enc(t3), enc(t4A), enc(t4B), ...that.map(enc));
  const ch = mainChallenge(seed, middle);
  let rbar = 0n;
  for (const x of r) rbar = mod(rbar + x);
  let rhatSum = rhat[n - 1]!;
  let v = 1n;
  for (let i = n - 2; i >= 0; i--) {
    v = mod(up[i + 1]! * v);
    rhatSum = mod(rhat[i]! * v + rhatSum);
  }
  let rtilde = 0n;
  for (let j = 0; j < n; j++) rtilde = mod(r[j]! * u[j]! + rtilde);
  let rprime = 0n;
  for (let i = 0; i < n; i++) rprime = mod(rp[i]! * up[i]! + rprime);
  const s = [mod(ch * rbar + w1), mod(ch * rhatSum + w2), mod(ch * rtilde + w3), mod(ch * rprime + w4)];
  const shat = Array.from({ length: n }, (_, i) => mod(ch * rhat[i]! + what[i]!));
  const sprime = Array.from({ length: n }, (_, i) => mod(ch * up[i]! + wp[i]!));
  const proof = concat(cBytes, middle, ...s.map(scalarBytes), ...shat.map(scalarBytes), ...sprime.map(scalarBytes));
  if (trace !== undefined) Object.assign(trace, { psi, sigma: seed, u, c: ch });
  return { deck: { bytes: outBytes, items: out }, proof };
}

function weight(): bigint {
  return mod(BigInt("0x" + hex(globalThis.crypto.getRandomValues(new Uint8Array(64)))));
}

/** Refuse (SealedError naming the failed equation) unless ``proof`` shows that ``deckOut``
 * is ``deckIn`` permuted and re-masked under ``Pb`` (§5.5): the five equations at once as
 * one random linear combination, then one by one to name the one that fails. */
export function verifyShuffle(ctx: Context, Pb: Uint8Array, deckIn: Deck, deckOutBytes: Uint8Array, proof: Uint8Array): Deck {
  const n = deckIn.items.length;
  const deckOut = decodeDeck(deckOutBytes, n);
  const P = point(Pb, "hand key");
  if (proof.length !== shuffleProofSize(n)) throw new SealedError(`shuffle proof: ${shuffleProofSize(n)} bytes expected for ${n} items`);
  const word = (k: number) => proof.subarray(32 * k, 32 * k + 32);
  const pts: Point[] = [];
  for (let k = 0; k < 3 * n + 5; k++) pts.push(point(word(k), `shuffle proof element ${k}`));
  const scs: bigint[] = [];
  for (let k = 3 * n + 5; k < 5 * n + 9; k++) scs.push(scalar(word(k), `shuffle proof element ${k}`));
  const c = pts.slice(0, n);
  const chat = pts.slice(n, 2 * n);
  const [t1, t2, t3, t4A, t4B] = pts.slice(2 * n, 2 * n + 5) as [Point, Point, Point, Point, Point];
  const that = pts.slice(2 * n + 5, 3 * n + 5);
  const [s1, s2, s3, s4] = scs.slice(0, 4) as [bigint, bigint, bigint, bigint];
  const shat = scs.slice(4, 4 + n);
  const sp = scs.slice(4 + n, 4 + 2 * n);
  const h = generator(0);
  const hs = Array.from({ length: n }, (_, i) => generator(i + 1));
  const sigma = statementSeed(ctx, Pb, deckIn.bytes, deckOut.bytes, proof.subarray(0, 32 * n), n);
  const u = Array.from({ length: n }, (_, j) => Hs(sigma, u32be(j)));
  const ch = mainChallenge(sigma, proof.subarray(32 * n, 32 * (3 * n + 5)));
  let U = 1n;
  for (const x of u) U = (U * x) % L;
  const who = `shuffle proof of seat ${ctx.seat}`;
  const [d2, d3, d4a, d4b] = [weight(), weight(), weight(), weight()];
  const d5 = c.map(() => weight());
  let g = -s1 - d2 * s2 - d3 * s3 + d4a * s4;
  for (let i = 0; i < n; i++) g -= d5[i]! * shat[i]!;
  const all: [bigint, Point][] = [
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
    all.push([ch + d3 * ch * u[j]!, c[j]!], [d4a * ch * u[j]!, deckIn.items[j]!.A], [d4b * ch * u[j]!, deckIn.items[j]!.B]);
  }
  for (let i = 0; i < n; i++) {
    const next = i + 1 < n ? -d5[i + 1]! * sp[i + 1]! : d2 * ch;
    all.push([-ch - d3 * sp[i]!, hs[i]!], [-d4a * sp[i]!, deckOut.items[i]!.A], [-d4b * sp[i]!, deckOut.items[i]!.B], [d5[i]!, that[i]!], [d5[i]! * ch + next, chat[i]!]);
  }
  if (sumIsZero(all)) return deckOut;
  const e1: [bigint, Point][] = [
    [s1, G],
    [-1n, t1],
  ];
  for (let j = 0; j < n; j++) e1.push([-ch, c[j]!], [ch, hs[j]!]);
  if (!sumIsZero(e1)) throw new SealedError(`${who}: equation 1 (the permutation commitment) fails`);
  if (
    !sumIsZero([
      [s2, G],
      [-1n, t2],
      [-ch, chat[n - 1]!],
      [ch * U, h],
    ])
  ) {
    throw new SealedError(`${who}: equation 2 (the chain's end) fails`);
  }
  const e3: [bigint, Point][] = [
    [s3, G],
    [-1n, t3],
  ];
  for (let i = 0; i < n; i++) e3.push([sp[i]!, hs[i]!], [-ch * u[i]!, c[i]!]);
  if (!sumIsZero(e3)) throw new SealedError(`${who}: equation 3 (the challenges under the permutation) fails`);
  const e4A: [bigint, Point][] = [
    [-s4, G],
    [-1n, t4A],
  ];
  const e4B: [bigint, Point][] = [
    [-s4, P],
    [-1n, t4B],
  ];
  for (let i = 0; i < n; i++) {
    e4A.push([sp[i]!, deckOut.items[i]!.A], [-ch * u[i]!, deckIn.items[i]!.A]);
    e4B.push([sp[i]!, deckOut.items[i]!.B], [-ch * u[i]!, deckIn.items[i]!.B]);
  }
  if (!sumIsZero(e4A) || !sumIsZero(e4B)) throw new SealedError(`${who}: equation 4 (the re-masking) fails`);
  let prev = h;
  for (let i = 0; i < n; i++) {
    if (
      !sumIsZero([
        [shat[i]!, G],
        [sp[i]!, prev],
        [-1n, that[i]!],
        [-ch, chat[i]!],
      ])
    ) {
      throw new SealedError(`${who}: equation 5 (the commitment chain) fails at ${i}`);
    }
    prev = chat[i]!;
  }
  throw new SealedError(`${who}: the equations fail`);
}

/** Σ k·Q == identity over (k, Q) pairs of public scalars: Pippenger's buckets for many
 * points, one multiplication each for a few. */
function sumIsZero(pairs: [bigint, Point][]): boolean {
  if (pairs.length <= 8) return lincomb(pairs).is0();
  const pts: Point[] = [];
  const ks: bigint[] = [];
  for (const [k, Q] of pairs) {
    const m = mod(k);
    if (m === 0n || Q.is0()) continue;
    pts.push(Q);
    ks.push(m);
  }
  if (pts.length === 0) return true;
  return msm(pts, ks).is0();
}

// -- §6 shares, §7 openings ---------------------------------------------------------------------

export interface Share {
  D: Uint8Array;
  /** R1 || R2 || s (96 bytes) */
  proof: Uint8Array;
}

/** Seat ``ctx.seat``'s share D = x·A of ``c`` with its Chaum–Pedersen proof (``Pb``: the
 * seat's key x·G, when the caller has it). */
export function makeShare(ctx: Context, x: bigint, c: Ciphertext, rng: Randomness = new SystemRandomness(), Pb?: Uint8Array): Share {
  const P = Pb ?? enc(mulSecret(x, G));
  const D = enc(mulSecret(x, c.A));
  const k = rng.scalar();
  const R1 = enc(mulSecret(k, G));
  const R2 = enc(mulSecret(k, c.A));
  const e = challenge("share", ctx, P, enc(c.A), enc(c.B), D, R1, R2);
  return { D, proof: concat(R1, R2, scalarBytes(mod(e * x + k))) };
}

/** A share's parts decoded, and its challenge. */
function shareParts(ctx: Context, Pb: Uint8Array, c: Ciphertext, Db: Uint8Array, proof: Uint8Array) {
  const D = point(Db, "share");
  if (proof.length !== 96) throw new SealedError("share proof: 96 bytes expected (R1 || R2 || s)");
  const R1 = point(proof.subarray(0, 32), "share proof R1");
  const R2 = point(proof.subarray(32, 64), "share proof R2");
  const s = scalar(proof.subarray(64), "share proof s");
  const e = challenge("share", ctx, Pb, enc(c.A), enc(c.B), Db, proof.subarray(0, 64));
  return { D, R1, R2, s, e };
}

/** Refuse unless ``proof`` shows D = x·A for the x of P = x·G (§6). The two equations,
 * s·G = R1 + e·P and s·A = R2 + e·D, are checked as w·(first) + (second) with this verifier's
 * own random 128-bit weight w: one fixed-base multiplication and one four-point sum sharing
 * its doublings; a false equation survives with probability 2⁻¹²⁸. */
export function verifyShare(ctx: Context, Pb: Uint8Array, c: Ciphertext, Db: Uint8Array, proof: Uint8Array): void {
  const P = point(Pb, "share key");
  const { D, R1, R2, s, e } = shareParts(ctx, Pb, c, Db, proof);
  const w = weight128();
  // (w·s)·G + s·A − w·R1 − (w·e)·P − e·D − R2 = 0
  const rest = straus([c.A, R1, P, D], [s, mod(-w), mod(-w * e), mod(-e)]);
  if (!mulPublic(w * s, G).add(rest).equals(R2)) {
    throw new SealedError(`share of seat ${ctx.seat}: the proof does not verify`);
  }
}

/** Refuse unless every share of ``shares`` verifies, as :func:`verifyShare` checks it, for the
 * key ``Pb`` of one seat (a share step's shares). Every equation of every proof is checked at
 * once, as one random linear combination with this verifier's own random 128-bit weights
 * (``crypto.getRandomValues``; fairness-v3 §6 lets a verifier choose them): one Pippenger
 * sum over the step. When it fails, the shares are checked one by one, which names the first
 * that fails. */
export function verifyShares(ctx: Context, Pb: Uint8Array, shares: readonly { c: Ciphertext; D: Uint8Array; proof: Uint8Array }[]): void {
  if (shares.length < 2) {
    for (const x of shares) verifyShare(ctx, Pb, x.c, x.D, x.proof);
    return;
  }
  const P = point(Pb, "share key");
  let ok = false;
  try {
    let g = 0n;
    let ep = 0n;
    const pts: Point[] = [];
    const ks: bigint[] = [];
    for (const x of shares) {
      const { D, R1, R2, s, e } = shareParts(ctx, Pb, x.c, x.D, x.proof);
      const w = weight128();
      const v = weight128();
      g += w * s;
      ep += w * e;
      pts.push(R1, x.c.A, R2, D);
      ks.push(mod(-w), mod(v * s), mod(-v), mod(-v * e));
    }
    pts.push(G, P);
    ks.push(mod(g), mod(-ep));
    ok = msm(pts, ks).is0();
  } catch (err) {
    if (!(err instanceof SealedError)) throw err; // named below, in order
  }
  if (ok) return;
  for (const x of shares) verifyShare(ctx, Pb, x.c, x.D, x.proof);
  throw new SealedError(`shares of seat ${ctx.seat}: the step's combination fails while each share verifies`);
}

/** M = B − Σ D over the shares. */
export function unmask(c: Ciphertext, shares: Uint8Array[]): Point {
  let acc = c.B;
  for (const D of shares) acc = acc.subtract(point(D, "share"));
  return acc;
}

/** §7 without the shares' proofs: the shares open ``c`` to M(game, code). */
export function opensTo(game: string, code: string, c: Ciphertext, shares: Uint8Array[]): boolean {
  return unmask(c, shares).equals(itemPoint(game, code));
}

/** What the owner learns of its own item: B − Σ others' shares − x·A, named through the
 * item table (point hex → code). */
export function ownItem(c: Ciphertext, x: bigint, others: Uint8Array[], table: Map<string, string>): string {
  const m = unmask(c, others).subtract(mulSecret(x, c.A));
  const code = table.get(hex(enc(m)));
  if (code === undefined) throw new SealedError("own item: the shares do not open this ciphertext to an item");
  return code;
}

/** §10: with every seat's revealed secret, every item's code by position (B − (Σ x)·A).
 * ``known``: codes the caller already holds by position (the items opened in play), checked
 * at once as one random linear combination instead of one multiplication an item. */
export function openDeck(game: string, codes: readonly string[], deck: Deck, secrets: Uint8Array[], known?: ReadonlyMap<number, string>): string[] {
  if (new Set(codes).size !== codes.length) throw new SealedError("starting deck: item codes repeat");
  if (secrets.length === 0) throw new SealedError("open deck: no revealed key");
  const out = lookup(game, codes, deck, secrets, known);
  if (out.includes(null)) throw new SealedError("the revealed keys do not open every item of the deck");
  // every item once: no repeat, and as many items as codes (a shorter deck opens to distinct
  // codes too, without holding every item)
  if (new Set(out).size !== out.length || out.length !== codes.length) throw new SealedError("the final deck does not hold every item once");
  return out as string[];
}

/** The item lookup: each item's code under the sum of ``secrets`` (32-byte scalars), null
 * where none opens. Positions in ``known`` (position → a code of the game) are checked at
 * once, Σ wᵢ·(Bᵢ − M(codeᵢ)) − Σ (x·wᵢ)·Aᵢ = 0 with this verifier's own random 128-bit weights
 * (a wrong one survives with probability 2⁻¹²⁸); when that fails, or for the others, one
 * item at a time. The answer is the same either way. */
export function lookup(game: string, codes: readonly string[], deck: Deck, secrets: Uint8Array[], known?: ReadonlyMap<number, string>): (string | null)[] {
  let x = 0n;
  for (const s of secrets) x = mod(x + scalar(s, "revealed key"));
  const table = new Map(codes.map((c) => [hex(enc(itemPoint(game, c))), c]));
  const one = ({ A, B }: Ciphertext): string | null => table.get(hex(enc(B.subtract(mulPublic(x, A))))) ?? null;
  const sure = new Map<number, string>();
  const guess = [...(known ?? [])].filter(([i, c]) => i >= 0 && i < deck.items.length && codes.includes(c));
  if (guess.length >= 2) {
    const pts: Point[] = [];
    const ks: bigint[] = [];
    for (const [i, c] of guess) {
      const w = weight128();
      const { A, B } = deck.items[i]!;
      pts.push(B.subtract(itemPoint(game, c)), A);
      ks.push(w, mod(-x * w));
    }
    if (msm(pts, ks).is0()) for (const [i, c] of guess) sure.set(i, c);
  }
  return deck.items.map((c, i) => sure.get(i) ?? one(c));
}

/** qahwa-fair/2 as a client computes it (fairness-v2.md §1, §2, §4, §6, §7) and RFC 9162's
 * proofs — written from the spec, held to the spec's vectors (test/vectors.test.ts) and to
 * the Python implementation byte for byte. */

import { LONE_SURROGATE, ProtocolError, concat, equalBytes, fromBase64, fromHex, lp, toHex, u32be, utf8 } from "./bytes.js";
import { canonical, canonicalBytes } from "./canonical.js";
import { hmac, hmacKey, hmacSha512, sha256, sha256Sync, verifyEd25519 } from "./crypto.js";

export const PROTOCOL_V1 = "qahwa-fair/1";
export const PROTOCOL_V2 = "qahwa-fair/2";
export const NONCE_BYTES = 32;
export const CHAIN_SECRET_BYTES = 32;
export const ROLL_CHAIN_LENGTH = 65536;
export const MAX_SEED_BYTES = 128;
const SEAT_TAG = utf8("qahwa-fair/2 seat\x00");
const ROLL_TAG = utf8("qahwa-fair/2 roll\x00");

/** A JSON object as parsed (records, views, events). */
export type Obj = { [key: string]: unknown };

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// Python's str.isprintable(): no character of the Unicode categories Cc, Cf, Cs, Co, Cn, Zl,
// Zp, Zs other than the ASCII space.
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs}/u;

/** Why a client seed is not allowed, as the verify page names it (its message key, and the
 * seed's length in bytes for ``seed_why_long``), or null: 1–128 UTF-8 bytes, printable, no NUL
 * and no lone surrogate (v1 §2, v2 §2). The page's rule and the seat's, one implementation. */
export function seedProblem(seed: unknown): [string, { n: number }?] | null {
  if (typeof seed !== "string") return ["seed_why_type"];
  if (seed === "") return ["seed_why_empty"];
  if (seed.includes("\u0000")) return ["seed_why_nul"];
  if (LONE_SURROGATE.test(seed) || NOT_PRINTABLE.test(seed)) return ["seed_why_print"];
  const n = utf8(seed).length;
  if (n > MAX_SEED_BYTES) return ["seed_why_long", { n }];
  return null;
}

/** A client seed is 1–128 UTF-8 bytes and printable (v1 §2, v2 §2). */
export function checkClientSeed(seed: unknown): string {
  const why = seedProblem(seed);
  if (why !== null) {
    const n = typeof seed === "string" ? new TextEncoder().encode(seed).length : 0;
    throw new ProtocolError(
      typeof seed !== "string" ? "a client seed must be a string" : `a client seed is 1-${MAX_SEED_BYTES} UTF-8 bytes, printable (got ${n} bytes: ${why[0]})`,
    );
  }
  return seed as string;
}

/** SHA-256("qahwa-fair/2 seat" || 0x00 || lp(match_id) || u32be(seat) || nonce || lp(client_seed)). */
export async function seedCommitment(
  matchId: string,
  seat: number,
  nonce: Uint8Array,
  clientSeed: string,
): Promise<string> {
  if (nonce.length !== NONCE_BYTES) throw new ProtocolError(`a nonce is ${NONCE_BYTES} bytes`);
  const seed = utf8(checkClientSeed(clientSeed));
  return toHex(await sha256(concat(SEAT_TAG, lp(utf8(matchId)), u32be(seat), nonce, lp(seed))));
}

/** The roll-chain value before ``value`` on seat ``seat``'s chain (§6): SHA-256("qahwa-fair/2
 * roll" || 0x00 || lp(match_id) || u32be(seat) || value); a value a seat sends hashes to its
 * last one (its tip in the lock first). The seat's chain and the verify page's check. */
export function rollChainPrev(matchId: string, seat: number, value: Uint8Array): Uint8Array {
  return sha256Sync(concat(ROLL_TAG, lp(utf8(matchId)), u32be(seat), value));
}

/** A seat's roll chain (§6): c[65536] = secret, c[j-1] = SHA-256(tag || lp(match_id) ||
 * u32be(seat) || c[j]); the tip is c[0], value k is c[k+1]. */
export class RollChain {
  readonly tip: string;
  readonly length: number;
  private readonly values: Uint8Array[];

  constructor(matchId: string, seat: number, secret: Uint8Array, length = ROLL_CHAIN_LENGTH) {
    if (secret.length !== CHAIN_SECRET_BYTES) {
      throw new ProtocolError(`a roll-chain secret is ${CHAIN_SECRET_BYTES} bytes`);
    }
    const prefix = concat(ROLL_TAG, lp(utf8(matchId)), u32be(seat));
    const buf = new Uint8Array(prefix.length + 32);
    buf.set(prefix);
    const values: Uint8Array[] = new Array<Uint8Array>(length + 1);
    let v = secret;
    values[length] = v;
    for (let j = length - 1; j >= 0; j--) {
      buf.set(v, prefix.length);
      v = sha256Sync(buf);
      values[j] = v;
    }
    this.values = values;
    this.length = length;
    this.tip = toHex(values[0]!);
  }

  /** The seat's k-th value (k = 0, 1, …), hex. */
  value(k: number): string {
    if (!Number.isInteger(k) || k < 0 || k >= this.length) {
      throw new ProtocolError(`value ${k} is beyond the roll chain's ${this.length} values`);
    }
    return toHex(this.values[k + 1]!);
  }
}

/** chain[-1] = SHA-256(canonical(lock record, signature included)). */
export function chainStart(lock: Obj): Promise<Uint8Array> {
  return sha256(canonicalBytes(lock));
}

/** chain[n] = SHA-256(chain[n-1] || canonical(event[n])). */
export function chainNext(prev: Uint8Array, event: Obj): Promise<Uint8Array> {
  return sha256(concat(prev, canonicalBytes(event)));
}

/** :func:`chainStart` and :func:`chainNext`, computed at once: a seat chaining the events it is
 * shown does so with no await between reading its chain and writing it back. */
export function chainStartSync(lock: Obj): Uint8Array {
  return sha256Sync(canonicalBytes(lock));
}

export function chainNextSync(prev: Uint8Array, event: Obj): Uint8Array {
  return sha256Sync(concat(prev, canonicalBytes(event)));
}

/** [chain[-1], chain[0], …, chain[len(events)-1]]. */
export async function chainHeads(lock: Obj, events: Obj[]): Promise<Uint8Array[]> {
  return chainHeadsOf(canonicalBytes(lock), events.map((ev) => canonicalBytes(ev)));
}

/** The event chain (§7) over the canonical bytes of the lock and of each event: chain[-1] =
 * SHA-256(lock), chain[n] = SHA-256(chain[n-1] || event n); [chain[-1], chain[0], …]. The one
 * walk the seat and the verify page share (the page hands it the transcript's own canonical
 * text, its numbers as written). */
export function chainHeadsOf(lock: Uint8Array, events: readonly Uint8Array[]): Uint8Array[] {
  const heads = [sha256Sync(lock)];
  for (const ev of events) heads.push(sha256Sync(concat(heads[heads.length - 1]!, ev)));
  return heads;
}

/** The event a seat signs: the event without ``seq``, ``sig`` and ``at``. */
export function signedBody(event: Obj): Obj {
  const body: Obj = {};
  for (const [k, v] of Object.entries(event)) if (k !== "seq" && k !== "sig" && k !== "at") body[k] = v;
  return body;
}

/** What a seat signs (§7): canonical({"match_id", "prev", "event": E}), E without seq, sig, at. */
export function sigMessage(matchId: string, prev: string, event: Obj): Uint8Array {
  return sigMessageOf(matchId, prev, canonical(signedBody(event)));
}

/** :func:`sigMessage` with E given as its canonical JSON text (the page's: the transcript's
 * own text of the event, its numbers as written): canonical({"event": E, "match_id", "prev"}). */
export function sigMessageOf(matchId: string, prev: string, body: string): Uint8Array {
  return utf8(`{"event":${body},"match_id":${canonical(matchId)},"prev":${canonical(prev)}}`);
}

/** ``record`` is a JSON object of type ``rtype`` and one of ``protocols``, signed by one of
 * ``keys`` (key_id → base64 public key) over its canonical form without ``signature``. */
export async function checkSignedRecord(
  record: unknown,
  keys: Readonly<Record<string, string>>,
  what: string,
  rtype: string,
  protocols: readonly string[] = [PROTOCOL_V2],
): Promise<Obj> {
  if (!isObj(record)) throw new ProtocolError(`the ${what} is not a JSON object`);
  const sig = record["signature"];
  if (!isObj(sig) || sig["alg"] !== "ed25519") {
    throw new ProtocolError(`the ${what} carries no Ed25519 signature`);
  }
  const keyId = sig["key_id"];
  const value = sig["value"];
  if (typeof keyId !== "string" || !Object.hasOwn(keys, keyId)) {
    throw new ProtocolError(
      `the ${what} is signed by key ${JSON.stringify(keyId)}, which is not one of the server keys this client trusts`,
    );
  }
  if (typeof value !== "string") throw new ProtocolError(`the ${what}'s signature has no value`);
  const body: Obj = {};
  for (const [k, v] of Object.entries(record)) if (k !== "signature") body[k] = v;
  if (!(await verifyEd25519(keys[keyId]!, value, canonicalBytes(body)))) {
    throw new ProtocolError(`the ${what}'s signature does not match it (key ${keyId})`);
  }
  if (record["type"] !== rtype) {
    throw new ProtocolError(`the ${what} has type ${JSON.stringify(record["type"])}, not "${rtype}"`);
  }
  if (typeof record["protocol"] !== "string" || !protocols.includes(record["protocol"])) {
    throw new ProtocolError(
      `the ${what} has protocol ${JSON.stringify(record["protocol"])}, not ${protocols.join(" or ")}`,
    );
  }
  return record;
}

// -- the log: RFC 9162 -------------------------------------------------------------------

// -- key announcements (fairness-v2.md, revision "key announcements") --------------------

/** A ``key_announcement`` signed by one of ``trusted`` that announces a well-formed key
 * other than its signer's, announced no later than it signs: that key's id and base64
 * public key; else ProtocolError. */
export async function checkAnnouncement(
  record: unknown,
  trusted: Readonly<Record<string, string>>,
): Promise<{ keyId: string; publicKey: string }> {
  const rec = await checkSignedRecord(record, trusted, "key announcement", "key_announcement");
  const key = rec["key"];
  if (!isObj(key) || key["alg"] !== "ed25519") throw new ProtocolError("the key announcement names no Ed25519 key");
  const keyId = key["key_id"];
  const publicKey = key["public_key"];
  if (typeof keyId !== "string" || typeof publicKey !== "string") {
    throw new ProtocolError("the announced key has no key_id or public_key");
  }
  const raw = fromBase64(publicKey, "the announced public key");
  if (raw.length !== 32) throw new ProtocolError("the announced public key is not an Ed25519 key");
  const derived = toHex(await sha256(raw)).slice(0, 16);
  if (derived !== keyId) {
    throw new ProtocolError(`the announced key_id ${JSON.stringify(keyId)} is not its public key's (${derived})`);
  }
  if (keyId === (rec["signature"] as Obj)["key_id"]) throw new ProtocolError("a key announcement signed by the key it announces");
  const made = Date.parse(String(rec["created_at"]));
  const from = Date.parse(String(rec["not_before"]));
  if (Number.isNaN(made) || Number.isNaN(from)) throw new ProtocolError("the key announcement's times are not RFC 3339");
  if (made > from) throw new ProtocolError("the key was announced after it signs (created_at > not_before)");
  return { keyId, publicKey };
}

/** What :func:`extendTrusted` made of some announcements. */
export interface Extension {
  added: Record<string, string>;
  accepted: Obj[];
  refused: { announcement: unknown; reason: string }[];
}

/** The keys ``records`` announce, each through an announcement signed by a key of ``trusted``
 * or by a key taken so (a chain of rotations); the others refused, with the reason. */
export async function extendTrusted(trusted: Readonly<Record<string, string>>, records: readonly unknown[]): Promise<Extension> {
  const have: Record<string, string> = { ...trusted };
  const out: Extension = { added: {}, accepted: [], refused: [] };
  let pending: unknown[] = [...records];
  let left: { rec: unknown; reason: string }[] = [];
  for (;;) {
    left = [];
    for (const rec of pending) {
      let got: { keyId: string; publicKey: string };
      try {
        got = await checkAnnouncement(rec, have);
      } catch (exc) {
        if (!(exc instanceof ProtocolError)) throw exc;
        left.push({ rec, reason: exc.message });
        continue;
      }
      if (Object.hasOwn(have, got.keyId)) continue;
      have[got.keyId] = got.publicKey;
      out.added[got.keyId] = got.publicKey;
      out.accepted.push(rec as Obj);
    }
    if (left.length === pending.length) break;
    pending = left.map((l) => l.rec);
  }
  for (const { rec, reason } of left) {
    const named = isObj(rec) && isObj(rec["key"]) ? rec["key"]["key_id"] : undefined;
    if (typeof named === "string" && Object.hasOwn(have, named)) continue; // taken already
    out.refused.push({ announcement: rec, reason });
  }
  return out;
}

/** Every announcement a ``/v1/keys`` document lists (each key's ``announcements``). */
export function announcementsIn(doc: unknown): Obj[] {
  const out: Obj[] = [];
  const keys = isObj(doc) ? doc["keys"] : undefined;
  for (const k of Array.isArray(keys) ? keys : []) {
    const found = isObj(k) ? k["announcements"] : undefined;
    for (const a of Array.isArray(found) ? found : []) if (isObj(a)) out.push(a);
  }
  return out;
}

export function leafHash(leaf: Uint8Array): Promise<Uint8Array> {
  return sha256(concat(new Uint8Array([0]), leaf));
}

/** An interior node's hash (RFC 9162 §2.1.1): SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Promise<Uint8Array> {
  return sha256(concat(new Uint8Array([1]), left, right));
}
const node = nodeHash;

/** RFC 9162's climb up a proof ``path`` from node ``fn`` of a level whose last node is
 * ``sn``: ``step(c, true)`` where the sibling ``c`` is on the left (then up through the levels
 * where the node is a right child), ``step(c, false)`` where it is on the right. ProtocolError
 * when the path is longer than the tree is high; the ``sn`` reached, 0 when the path ends at
 * the root. */
async function climb(fn: number, sn: number, path: readonly Uint8Array[], what: string, step: Step): Promise<number> {
  for (const c of path) {
    if (sn === 0) throw new ProtocolError(`the ${what} proof is too long`);
    const left = fn % 2 === 1 || fn === sn;
    await step(c, left);
    while (left && fn % 2 === 0 && fn !== 0) {
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn;
}
type Step = (c: Uint8Array, left: boolean) => Promise<void>;

/** The root an inclusion proof leads to (RFC 9162 §2.1.3.2), else ProtocolError. */
export async function rootFromInclusion(
  index: number,
  treeSize: number,
  leaf: Uint8Array,
  path: readonly Uint8Array[],
): Promise<Uint8Array> {
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(treeSize) && 0 <= index && index < treeSize)) {
    throw new ProtocolError(`index ${index} is outside a tree of size ${treeSize}`);
  }
  let r = leaf;
  const sn = await climb(index, treeSize - 1, path, "inclusion", async (c, left) => {
    r = left ? await node(c, r) : await node(r, c);
  });
  if (sn !== 0) throw new ProtocolError("the inclusion proof is too short");
  return r;
}

/** RFC 9162 §2.1.4.2: ``proof`` shows the tree of ``second`` (root ``root2``) extends the
 * tree of ``first`` (root ``root1``); ProtocolError otherwise. */
export async function checkConsistency(
  first: number,
  second: number,
  root1: Uint8Array,
  root2: Uint8Array,
  proof: readonly Uint8Array[],
): Promise<void> {
  if (first > second || first < 1) throw new ProtocolError(`no consistency proof from ${first} to ${second}`);
  if (first === second) {
    if (proof.length !== 0 || !equalBytes(root1, root2)) {
      throw new ProtocolError(`two different roots for one tree size ${first}`);
    }
    return;
  }
  if (proof.length === 0) throw new ProtocolError("an empty consistency proof");
  let path = [...proof];
  if ((first & (first - 1)) === 0) path = [root1, ...path];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  const end = await climb(fn, sn, path.slice(1), "consistency", async (c, left) => {
    if (left) fr = await node(c, fr);
    sr = left ? await node(c, sr) : await node(sr, c);
  });
  if (end !== 0 || !equalBytes(fr, root1) || !equalBytes(sr, root2)) {
    throw new ProtocolError(`the log of size ${second} does not extend the log of size ${first}: a fork`);
  }
}

// -- the match key and its draws (§4, v1 §3) ---------------------------------------------

/** qahwa-fair/1's K = HMAC-SHA256(server_seed, "qahwa-fair/1" || 0x00 || lp(match_id) ||
 * lp(game) || lp(ruleset) || u32be(n) || lp(seed_i) …) (v1 §3): the server seed is 32 bytes,
 * every client seed one :func:`checkClientSeed` allows. */
export async function matchKeyV1(
  serverSeed: Uint8Array,
  matchId: string,
  game: string,
  ruleset: string,
  clientSeeds: readonly string[],
): Promise<Uint8Array> {
  if (serverSeed.length !== 32) throw new ProtocolError("a qahwa-fair/1 server seed is 32 bytes");
  for (const [k, v] of Object.entries({ match_id: matchId, game, ruleset })) {
    if (typeof v !== "string") throw new ProtocolError(`${k} must be a string`);
  }
  if (!Array.isArray(clientSeeds)) throw new ProtocolError("client seeds must be a list");
  const parts = [utf8("qahwa-fair/1\x00"), lp(utf8(matchId)), lp(utf8(game)), lp(utf8(ruleset)), u32be(clientSeeds.length)];
  for (const [i, cs] of clientSeeds.entries()) {
    const why = seedProblem(cs);
    if (why !== null) throw new ProtocolError(`client seed ${i} is not allowed (${why[0]})`);
    parts.push(lp(utf8(cs)));
  }
  return hmac(await hmacKey(serverSeed, "SHA-256"), concat(...parts));
}

/** K = HMAC-SHA512(server_seed, "qahwa-fair/2" || 0x00 || lp(match_id) || lp(game) ||
 * lp(ruleset) || u32be(n) || lp(seed_i) || nonce_i …). */
export function matchKey(
  serverSeed: Uint8Array,
  matchId: string,
  game: string,
  ruleset: string,
  seats: readonly { clientSeed: string; nonce: Uint8Array }[],
): Promise<Uint8Array> {
  const parts = [utf8("qahwa-fair/2\x00"), lp(utf8(matchId)), lp(utf8(game)), lp(utf8(ruleset)), u32be(seats.length)];
  for (const s of seats) parts.push(lp(utf8(s.clientSeed)), s.nonce);
  return hmacSha512(serverSeed, concat(...parts));
}

const TWO32 = 2 ** 32;

/** One label's stream of words (§4, v1 §3): block(label, b) = HMAC(K, label || 0x00 ||
 * u32be(b)), HMAC-SHA512 for qahwa-fair/2 and later, HMAC-SHA256 for qahwa-fair/1 (``hash``);
 * the key is K's bytes or an HMAC CryptoKey of it (hmacKey: imported once for many streams).
 * The label is 1 to 256 printable ASCII characters. The verify page's and the seat's. */
export class Stream {
  private block = 0;
  private words: number[] = [];
  private key: Promise<CryptoKey>;
  private readonly prefix: Uint8Array;
  constructor(key: Uint8Array | CryptoKey, label: string, hash: "SHA-256" | "SHA-512" = "SHA-512") {
    if (typeof label !== "string" || label === "" || label.length > 256 || !/^[\x20-\x7e]+$/.test(label)) {
      throw new ProtocolError(`label ${JSON.stringify(label)} must be 1 to 256 printable ASCII characters`);
    }
    this.key = key instanceof Uint8Array ? hmacKey(key, hash) : Promise.resolve(key);
    this.prefix = concat(utf8(label), new Uint8Array([0]));
  }

  async word(): Promise<number> {
    if (this.words.length === 0) {
      const b = await hmac(await this.key, concat(this.prefix, u32be(this.block++)));
      const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
      // 8 words a block for v1's HMAC-SHA256, 16 for HMAC-SHA512
      for (let i = 0; i < b.length; i += 4) this.words.push(view.getUint32(i));
    }
    return this.words.shift()!;
  }

  /** uniform(n), 1 ≤ n ≤ 2^32, by rejection sampling. */
  async uniform(n: number): Promise<number> {
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > TWO32) {
      throw new RangeError(`uniform(n) needs 1 <= n <= 2^32, got ${JSON.stringify(n)}`);
    }
    const limit = TWO32 - (TWO32 % n);
    for (;;) {
      const w = await this.word();
      if (w < limit) return w % n;
    }
  }

  /** ``count`` dice of ``sides`` faces (1 to 1000 dice, 2 to 2^32 faces). */
  async dice(count: number, sides = 6): Promise<number[]> {
    if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > 1000) {
      throw new RangeError(`dice count must be 1 to 1000, got ${JSON.stringify(count)}`);
    }
    if (typeof sides !== "number" || !Number.isInteger(sides) || sides < 2 || sides > TWO32) {
      throw new RangeError(`dice sides must be 2 to 2^32, got ${JSON.stringify(sides)}`);
    }
    const out: number[] = [];
    for (let i = 0; i < count; i++) out.push(1 + (await this.uniform(sides)));
    return out;
  }

  /** Fisher–Yates over a copy of ``items``, from the last position down. */
  async shuffle<T>(items: readonly T[]): Promise<T[]> {
    const a = [...items];
    for (let i = a.length - 1; i >= 1; i--) {
      const j = await this.uniform(i + 1);
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a;
  }
}

export function dice(key: Uint8Array, label: string, count: number, sides = 6): Promise<number[]> {
  return new Stream(key, label).dice(count, sides);
}

export function uniform(key: Uint8Array, label: string, n: number): Promise<number> {
  return new Stream(key, label).uniform(n);
}

export function shuffle<T>(key: Uint8Array, label: string, items: readonly T[]): Promise<T[]> {
  return new Stream(key, label).shuffle(items);
}

/** The label of a fresh roll's dice (§6): L || "|" || hex(SHA-256(v_R || v_O)). */
export async function freshLabel(label: string, first: string, second: string): Promise<string> {
  return `${label}|${toHex(await sha256(concat(fromHex(first, 32), fromHex(second, 32))))}`;
}

export { canonical, canonicalBytes };

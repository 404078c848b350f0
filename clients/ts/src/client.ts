/** The conforming client (fairness-v2.md §3a): ``new Client(baseUrl)`` → matches → seats.
 *
 * ```ts
 * const qc = new Client("https://qahwa.example", { operatorKey, storage: new MemoryStorage() });
 * const match = await qc.createMatch("tawla", { match_length: 1 }, ["Layla", "Omar"]);
 * await match.start();                  // every seat: commit, check the lock and its log proof, reveal
 * const view = await match.seats[0]!.state();
 * await match.seats[0]!.act(view.legal_actions[0]!);   // signed over the chain head, value added when owed
 * await match.checkTranscript();        // the lock and every receipt against the transcript
 * ```
 */

import type { components } from "./api.js";
import { ProtocolError, fromHex, toHex } from "./bytes.js";
import { canonical, canonicalBytes } from "./canonical.js";
import { SeatKey, randomBytes, sha256 } from "./crypto.js";
import { ApiError, ClientError, Disputed, NotOurMatch, SealedUnsupported, TranscriptMismatch, Unanswered } from "./errors.js";
import {
  type Obj,
  PROTOCOL_V2,
  RollChain,
  announcementsIn,
  chainHeads,
  chainNext,
  chainNextSync,
  chainStart,
  chainStartSync,
  checkClientSeed,
  checkConsistency,
  checkSignedRecord,
  extendTrusted,
  isObj,
  leafHash,
  rootFromInclusion,
  seedCommitment,
  sigMessage,
  signedBody,
} from "./fair.js";
import { checkSeatSigs } from "./verify/chain.js";
import { type Checkpoint, type TlogProof, type Verifier, openCheckpoint, parseTlogProof, parseVkey } from "./note.js";
import { MemoryStorage, type SeatStorage } from "./storage.js";
import { SseParser } from "./sse.js";
import { SEALED_GAMES } from "./sealed/machine.js";
import { SealedStepRefused } from "./sealed/seat.js";
import { type SealedSide, type SealedSideFactory, inThread } from "./sealed/side.js";

type S = components["schemas"];
/** A seat's view, per game (typed from the server's OpenAPI document). */
export type View = S["ActionOut"]["state"];
/** Any action a view lists in ``legal_actions``. */
export type Action = View["legal_actions"][number];
export type KeysOut = S["KeysOut"];
export type MatchCreatedOut = S["MatchCreatedOut"];
export type ActionOut = S["ActionOut"];
export type Receipt = S["Receipt"];

/** Answers after which a request is sent again, byte for byte (§3a.6). */
const RESEND_STATUS = new Set([429, 500, 502, 503, 504]);
const FRESH_ROLL_TYPES = new Set(["roll", "roll_value"]);
const FRESH_ROLL_GAMES = new Set(["tawla", "mahbusa"]);

/** What the player asked for, checked against the signed commit record before committing. */
export interface Terms {
  game?: string;
  ruleset?: Obj;
  names?: string[];
  house?: boolean[];
  /** The player asked for rolls without fresh values (§3a.3): otherwise refused. */
  allowPrecomputedRolls?: boolean;
}

export interface ClientOptions {
  /** Sent when creating matches (``Authorization: Bearer``). */
  operatorKey?: string;
  /** The server's record keys from a source you trust: ``GET /v1/keys``'s answer obtained
   * elsewhere, or ``{key_id: base64}``; default: the server's own ``/v1/keys``. */
  keys?: KeysOut | Record<string, string>;
  /** The log's note key (vkey text) from a source you trust; default: ``/v1/keys``'s ``log``. */
  logKey?: string;
  /** Witness cosignature keys (vkeys) you trust, pinned by the player or the operator's app
   * (the client never takes them from the server); when given, a checkpoint needs
   * ``witnessQuorum`` (default 1) of their cosignatures. None given: the log key alone
   * (a down witness then holds up nothing). */
  witnesses?: string[];
  witnessQuorum?: number;
  /** Where seats keep their secrets and receipts (default: memory). */
  storage?: SeatStorage;
  fetch?: typeof fetch;
  /** Identical resends after a transport error, 5xx or 429 (default 3). */
  retries?: number;
  /** Milliseconds × attempt between resends when the server gave no Retry-After (250). */
  retryDelay?: number;
  /** The longest Retry-After honoured, seconds (60); a longer one fails the request. */
  maxRetryAfter?: number;
  /** Seconds the server's clock may differ from this one's (§3a.8, default 30). */
  maxSkew?: number;
  /** Seconds to wait for the lock's checkpoint to meet ``witnessQuorum`` before refusing to
   * reveal (default 30). */
  proofWait?: number;
  /** Play sealed tables (qahwa-fair/3) of the games this client has a deal machine for
   * (default true); false: refuse every sealed table up front (``SealedUnsupported``), before
   * any secret is made or sent. */
  sealed?: boolean;
  /** Where a sealed table's seat runs its deal machine and cryptography (default: in this
   * thread, ``inThread``); the web table passes ``workerSide(…)`` (sealed/side.ts) to run it
   * in a Web Worker, off the page's main thread. */
  sealedSide?: SealedSideFactory;
  /** The local clock, ms since the epoch (tests). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface SentRequest {
  method: string;
  path: string;
  /** The exact bytes sent (canonical JSON), resent identically. */
  body: string;
  /** The local time of every copy sent (ISO 8601). */
  sent_at: string[];
  receipt: Obj | null;
  /** The local time the server's 2xx answer arrived (null: never answered). */
  answered_at: string | null;
  /** The error code of the server's signed refusal of this very request (fairness-v2 §7,
   * refusals): it answers the request. */
  refused: string | null;
  /** That signed refusal. */
  refusal?: Obj | null;
  /** An error that answered nothing (a 5xx, an unsigned refusal, a refusal of another
   * request): the request stays unreceipted, evidence of censorship if a timeout follows. */
  error?: string | null;
}

export interface Dispute {
  /** ``early_timeout``, ``censored``, ``clock``, ``backdated`` (fairness-v2 §3a.8, §7). */
  kind?: string;
  reason: string;
  at: string;
  evidence: Obj;
}

/** What a seat keeps in storage (secrets included). */
interface SeatState {
  format: "qahwa-seat-state/1";
  base_url: string;
  match_id: string;
  seat: number;
  token: string;
  record: Obj | null;
  terms: Terms | null;
  client_seed: string | null;
  nonce: string | null;
  seed_commitment: string | null;
  key_seed: string | null;
  chain_secret: string | null;
  commit_refused: string | null;
  lock: Obj | null;
  log_index: number | null;
  checkpoint: string | null;
  revealed: boolean;
  max_value_sent: number;
  receipts: Obj[];
  requests: SentRequest[];
  disputes: Dispute[];
  deadlines: Obj[];
  /** The newest signed head the server showed (§7, heads), and the newest seq held to it. */
  head?: Obj | null;
  checked_seq?: number;
  /** At a sealed table: each hand's secret key (hand → 32-byte scalar, hex), kept from the
   * moment it is made until the hand's end reveals it (fairness-v3 §3): a reload mid-deal
   * resumes with it. */
  sealed_keys?: Record<string, string>;
}

/** The seat export a player keeps and gives ``verify`` (``--seat N --client-seed S --nonce HEX
 * --receipt FILE``) and the verify page: the Python client's ``Seat.save`` format. No secret
 * key or roll-chain secret is in it. */
export interface SeatExport {
  match_id: string;
  seat: number;
  client_seed: string | null;
  nonce: string | null;
  seed_commitment: string | null;
  key: string | null;
  roll_chain: string | null;
  lock: Obj | null;
  log_index: number | null;
  checkpoint: string | null;
  requests: SentRequest[];
  receipts: Obj[];
  disputes: Dispute[];
}

// A conforming client never uses a client seed twice (§3a.1); nonces and secrets are 32
// fresh CSPRNG bytes each.
const usedSeeds = new Set<string>();

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isoNow(ms: number): string {
  return new Date(ms).toISOString();
}

function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : Math.max(0, (t - nowMs) / 1000);
}

function keyMap(keys: unknown): Record<string, string> {
  if (isObj(keys) && Array.isArray(keys["keys"])) {
    const out: Record<string, string> = {};
    for (const k of keys["keys"]) {
      if (isObj(k) && typeof k["key_id"] === "string" && typeof k["public_key"] === "string") {
        out[k["key_id"]] = k["public_key"];
      }
    }
    return out;
  }
  if (isObj(keys) && Object.values(keys).every((v) => typeof v === "string")) {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(keys)) if (typeof v === "string") out[k] = v;
    return out;
  }
  throw new ClientError("trusted keys are GET /v1/keys's answer or a mapping key_id → base64 public key");
}

/** The ``signature.key_id`` of every signed record in ``item``, however deep. */
function signingKeysIn(item: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(item)) for (const v of item) signingKeysIn(v, out);
  else if (isObj(item)) {
    const sig = item["signature"];
    if (isObj(sig) && typeof sig["key_id"] === "string") out.add(sig["key_id"]);
    for (const v of Object.values(item)) signingKeysIn(v, out);
  }
  return out;
}

const PROTOCOL_V3 = "qahwa-fair/3";

/** Whether a signed record's canonical ruleset (a string) is a sealed table's. */
function sealedRuleset(ruleset: unknown): boolean {
  try {
    const r: unknown = typeof ruleset === "string" ? JSON.parse(ruleset) : null;
    return isObj(r) && r["deal"] === "sealed";
  } catch {
    return false;
  }
}

/** Every signed record (one with a ``signature.key_id``) in ``item``, however deep. */
function signedRecordsIn(item: unknown, out: Obj[] = []): Obj[] {
  if (Array.isArray(item)) for (const v of item) signedRecordsIn(v, out);
  else if (isObj(item)) {
    const sig = item["signature"];
    if (isObj(sig) && typeof sig["key_id"] === "string") out.push(item);
    for (const v of Object.values(item)) signedRecordsIn(v, out);
  }
  return out;
}

/** Epoch milliseconds of an RFC 3339 time with its offset, or null. */
function rfc3339(value: unknown): number | null {
  if (typeof value !== "string" || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(value)) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

/** The field holding the time a signed record of each type names as its own
 * (fairness.announce.OWN_TIME). */
const OWN_TIME: Record<string, string> = {
  receipt: "at",
  head: "at",
  refusal: "at",
  lock: "locked_at",
  reveal: "ended_at",
  tree_head: "timestamp",
  key_announcement: "created_at",
};
const TIME_FIELDS = ["timestamp", "ended_at", "locked_at", "created_at"];

/** ``[field, value]`` of the time a signed record names as its own: by its type
 * (``OWN_TIME``), a qahwa-fair/2 or /3 transcript's ``ended_at``, else the first of
 * ``TIME_FIELDS`` it carries (as fairness.announce.record_time). */
function recordTime(rec: Obj): [string, unknown] {
  const kind = rec["type"];
  let name: string | undefined = typeof kind === "string" ? OWN_TIME[kind] : undefined;
  if (name === undefined && "events" in rec && (rec["protocol"] === "qahwa-fair/2" || rec["protocol"] === "qahwa-fair/3")) name = "ended_at";
  name ??= TIME_FIELDS.find((n) => rec[n] !== undefined && rec[n] !== null) ?? TIME_FIELDS[0]!;
  return [name, rec[name]];
}

/** Why ``rec``, signed by ``kid`` retired at ``retiredAt``, does not count as signed by it, or
 * null: a retired key's signature counts only on a record naming its own time before the
 * key's ``retired_at``, and a transcript's events are stamped before it too
 * (fairness.announce.retired_problem). */
function retiredProblem(kid: string, retiredAt: string, rec: Obj): string | null {
  const retired = rfc3339(retiredAt);
  if (retired === null) return `key ${kid} has a retired_at that is not a time (${JSON.stringify(retiredAt)})`;
  const [name, value] = recordTime(rec);
  const own = rfc3339(value);
  if (own === null) {
    return (
      `it is signed by key ${kid}, which was retired at ${retiredAt}, and names no valid time of its own (${name}): ` +
      "a retired key's signature counts only on a record that names its time, before the key's retired_at"
    );
  }
  if (own >= retired) return `it was signed by key ${kid} at ${String(value)} (${name}), at or after that key was retired (${retiredAt})`;
  const events = rec["events"];
  for (const ev of Array.isArray(events) ? events : []) {
    const when = isObj(ev) ? rfc3339(ev["at"]) : null;
    if (when !== null && when >= retired) {
      return `it is signed by key ${kid}, retired at ${retiredAt}, but its event ${String((ev as Obj)["seq"])} is stamped after that: a retired key signs nothing that happened after its retired_at`;
    }
  }
  return null;
}

/** Add to ``held`` (key_id → retired_at) the retired keys a ``/v1/keys`` document lists and
 * the keys that signed the ``accepted`` announcements (retired at their ``not_before``), the
 * earlier time where two say it. */
function noteRetired(held: Record<string, string>, doc: unknown, accepted: readonly Obj[] = []): void {
  const found: [unknown, unknown][] = [];
  const keys = isObj(doc) ? doc["keys"] : null;
  for (const k of Array.isArray(keys) ? keys : []) if (isObj(k)) found.push([k["key_id"], k["retired_at"]]);
  for (const a of accepted) found.push([isObj(a["signature"]) ? a["signature"]["key_id"] : null, a["not_before"]]);
  for (const [kid, at] of found) {
    const t = rfc3339(at);
    if (typeof kid !== "string" || t === null) continue;
    const old = held[kid];
    if (old === undefined || t < (rfc3339(old) ?? Infinity)) held[kid] = at as string;
  }
}

/** A page of the log as a seat read it: the events after ``after`` (up to some head). */
type Page = readonly [after: number, events: Obj[]];

/** The events an accepted action logged, as its answer shows them (``events``), when they are
 * whole and chain from the head the action was signed over (``prev``) to the answer view's
 * chain head, which the answer's receipt signs: ``[first_seq - 1, events]``, the log as a read
 * after ``first_seq - 1`` would show it. Null otherwise (the log is read instead). */
function loggedEvents(body: Obj, answer: Obj): Page | null {
  const events = answer["events"];
  const prev = body["prev"];
  const state = answer["state"];
  const first = answer["first_seq"];
  const chain = isObj(state) ? state["chain"] : undefined;
  if (!Array.isArray(events) || events.length === 0 || typeof prev !== "string" || typeof chain !== "string") return null;
  if (typeof first !== "number" || !Number.isSafeInteger(first)) return null;
  let head: Uint8Array;
  try {
    head = fromHex(prev, 32, "prev");
    for (const [n, ev] of events.entries()) {
      if (!isObj(ev) || ev["seq"] !== first + n || "hidden" in ev) return null;
      head = chainNextSync(head, ev);
    }
  } catch {
    return null;
  }
  return toHex(head) === chain ? [first - 1, events as Obj[]] : null;
}

/** An ``after`` past every event: the events page then carries only where the log stands. */
const LATEST = 2 ** 31 - 1;

export class Client {
  readonly baseUrl: string;
  readonly storage: SeatStorage;
  readonly opts: ClientOptions;
  private pinned: Record<string, string> | null;
  private fetched: Record<string, string> | null = null;
  /** Keys taken since through announcements signed by a trusted key, and those announcements
   * (fairness-v2.md, revision "key announcements"). */
  readonly announced: Record<string, string> = {};
  readonly acceptedAnnouncements: Obj[] = [];
  /** Announcements this client refused (not signed by a key it trusts, or malformed), with
   * the reason: kept as evidence, never trusted. */
  refusedAnnouncements: { announcement: unknown; reason: string }[] = [];
  /** key_id → when it was retired, as the keys documents read and the announcements taken
   * say: nothing it signs from then on counts. */
  readonly retired: Record<string, string> = {};
  private readonly lookedUp = new Set<string>();
  private keysDoc: Obj | null = null;
  private logV: Verifier | null = null;
  private witnessV: Verifier[] | null = null;
  private readonly doFetch: typeof fetch;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Every request sent (method, path, status): for counting. */
  requestCount = 0;
  /** Locks this client has seen proven in the log (canonical lock + index → the checkpoint
   * note it was proven under): a second seat of the same match played through this client
   * takes the proof its first seat fetched and checked, instead of fetching it again. */
  readonly provenLocks = new Map<string, string>();

  constructor(baseUrl: string, opts: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.opts = opts;
    this.storage = opts.storage ?? new MemoryStorage();
    this.pinned = opts.keys !== undefined ? keyMap(opts.keys) : null;
    noteRetired(this.retired, opts.keys);
    this.doFetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.now = opts.now ?? (() => Date.now());
    this.sleep = opts.sleep ?? defaultSleep;
  }

  // -- plumbing -------------------------------------------------------------------------

  private async raw(method: string, path: string, init: { token?: string | undefined; body?: string }): Promise<Response> {
    const headers: Record<string, string> = {};
    if (init.token !== undefined) headers["Authorization"] = `Bearer ${init.token}`;
    if (init.body !== undefined) headers["Content-Type"] = "application/json";
    this.requestCount++;
    const req: RequestInit = { method, headers };
    if (init.body !== undefined) req.body = init.body;
    return this.doFetch(this.baseUrl + path, req);
  }

  private async fail(resp: Response): Promise<never> {
    let code = `http_${resp.status}`;
    let message = resp.statusText || "error";
    let refusal: Obj | null = null;
    try {
      const doc: unknown = await resp.json();
      if (isObj(doc) && isObj(doc["error"])) {
        const e = doc["error"];
        if (typeof e["code"] === "string") code = e["code"];
        if (typeof e["message"] === "string") message = e["message"];
        if (isObj(doc["refusal"])) refusal = doc["refusal"];
      }
    } catch {
      /* not JSON */
    }
    throw new ApiError(resp.status, code, message, parseRetryAfter(resp.headers.get("Retry-After"), this.now()), refusal);
  }

  /** How long to wait before copy ``attempt`` + 1, honouring Retry-After (§3a.6). */
  private async pause(resp: Response | null, attempt: number): Promise<void> {
    const after = resp === null ? null : parseRetryAfter(resp.headers.get("Retry-After"), this.now());
    if (after !== null) {
      const most = this.opts.maxRetryAfter ?? 60;
      if (after > most) {
        throw new Unanswered(`the server asks to retry after ${after} s, more than the ${most} s this client waits`);
      }
      await this.sleep(after * 1000);
    } else {
      await this.sleep((this.opts.retryDelay ?? 250) * attempt);
    }
  }

  /** ``method path`` sent until an answer other than 5xx/429 (the last copy's answer is
   * taken as it is): after a transport error, 5xx or 429 the identical bytes again, after
   * Retry-After when the server gives one (§3a.6). ``before`` runs before every copy leaves;
   * Unanswered (after ``retries`` + 1 ``copies``) when none got an answer. */
  private async resend(
    method: string,
    path: string,
    init: { token?: string | undefined; body?: string },
    copies: string,
    before: () => Promise<void> = async () => {},
  ): Promise<Response> {
    const retries = this.opts.retries ?? 3;
    let problem = "";
    for (let attempt = 0; attempt <= retries; attempt++) {
      await before();
      let resp: Response;
      try {
        resp = await this.raw(method, path, init);
      } catch (exc) {
        problem = String(exc);
        if (attempt < retries) await this.pause(null, attempt + 1);
        continue;
      }
      if (RESEND_STATUS.has(resp.status) && attempt < retries) {
        problem = `HTTP ${resp.status}`;
        await resp.body?.cancel();
        await this.pause(resp, attempt + 1);
        continue;
      }
      return resp;
    }
    throw new Unanswered(`${method} ${path}: no answer after ${retries + 1} ${copies} (${problem})`);
  }

  /** ``GET path``'s answer, a JSON object. */
  async getObject(path: string, token?: string): Promise<Obj> {
    const doc = await this.request("GET", path, token === undefined ? {} : { token });
    if (!isObj(doc)) throw new ClientError(`GET ${path}: not a JSON object`);
    return doc;
  }

  /** A read (GET) or an idempotent call; resent after a transport error, 5xx or 429. */
  async request(method: string, path: string, opts: { token?: string; body?: unknown; text?: boolean } = {}): Promise<unknown> {
    const body = opts.body === undefined ? undefined : canonical(opts.body);
    const init = body === undefined ? { token: opts.token } : { token: opts.token, body };
    const resp = await this.resend(method, path, init, "attempts");
    if (!resp.ok) return this.fail(resp);
    const type = resp.headers.get("content-type") ?? "";
    return type.includes("json") && opts.text !== true ? resp.json() : resp.text();
  }

  /** Send ``entry.body`` (exact bytes) as ``resend`` does; ``persist`` runs before every copy
   * leaves, so a crash between them loses nothing. */
  async send(entry: SentRequest, token: string | undefined, persist: () => Promise<void>): Promise<Obj> {
    const resp = await this.resend(entry.method, entry.path, { token, body: entry.body }, "identical attempts", async () => {
      entry.sent_at.push(isoNow(this.now()));
      await persist();
    });
    if (!resp.ok) {
      try {
        return await this.fail(resp);
      } catch (exc) {
        // answered with an error: the seat decides whether it is a signed refusal (``refused``)
        if (exc instanceof ApiError) entry.error = `HTTP ${exc.status} ${exc.code}`;
        await persist();
        throw exc;
      }
    }
    const doc: unknown = await resp.json();
    if (!isObj(doc)) throw new ClientError(`${entry.method} ${entry.path}: the answer is not a JSON object`);
    entry.answered_at = isoNow(this.now());
    return doc;
  }

  /** The record keys: pinned, else ``/v1/keys`` (once), and the keys announced since by a
   * key among them (:meth:`takeAnnouncements`). */
  async trusted(): Promise<Record<string, string>> {
    let base: Record<string, string>;
    if (this.pinned !== null) base = this.pinned;
    else {
      if (this.fetched === null) this.fetched = keyMap(await this.keys());
      base = this.fetched;
    }
    return Object.keys(this.announced).length > 0 ? { ...base, ...this.announced } : base;
  }

  /** Take the keys ``records`` announce when a trusted key (or one taken so) signed the
   * announcement; keep the others in ``refusedAnnouncements`` (looked at again with each new
   * announcement). Returns the key ids taken. */
  async takeAnnouncements(records: readonly unknown[]): Promise<string[]> {
    const earlier = this.refusedAnnouncements.map((r) => r.announcement);
    const ext = await extendTrusted(await this.trusted(), [...records, ...earlier]);
    Object.assign(this.announced, ext.added);
    this.acceptedAnnouncements.push(...ext.accepted);
    noteRetired(this.retired, null, ext.accepted);
    const seen = new Set<string>();
    this.refusedAnnouncements = ext.refused.filter((r) => {
      const k = canonical(r.announcement);
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
    return Object.keys(ext.added);
  }

  /** :meth:`trusted`, after taking the announcements ``/v1/keys`` lists now when ``signed``
   * (a record, or an answer holding records) is signed by a key not trusted yet: how a seat
   * rides through a key rotation. A key no trusted key announced stays untrusted. */
  async trustedFor(signed: unknown): Promise<Record<string, string>> {
    let keys = await this.trusted();
    const unknown = [...signingKeysIn(signed)].filter((k) => !Object.hasOwn(keys, k) && !this.lookedUp.has(k));
    if (unknown.length > 0) {
      const doc = await this.getObject("/v1/keys");
      for (const k of unknown) this.lookedUp.add(k); // once it was read: a failed read is tried again
      await this.takeAnnouncements(announcementsIn(doc));
      noteRetired(this.retired, doc);
      keys = await this.trusted();
    }
    return keys;
  }

  /** The keys this client trusts as a ``/v1/keys`` document: the pinned (or first fetched)
   * one with every key taken since through an announcement listed after its own, with that
   * announcement. Save it to pin the extended set (``keys``, ``verify --key``). */
  async keysDocument(): Promise<Obj> {
    const base: unknown = this.opts.keys ?? (await this.keys());
    const doc: Obj =
      isObj(base) && Array.isArray(base["keys"])
        ? (JSON.parse(JSON.stringify(base)) as Obj)
        : { keys: Object.entries(keyMap(base)).map(([key_id, public_key]) => ({ key_id, alg: "ed25519", public_key })) };
    const list = doc["keys"] as Obj[];
    const listed = new Set(list.map((k) => k["key_id"]));
    for (const [kid, pub] of Object.entries(this.announced)) {
      if (listed.has(kid)) continue;
      const mine = this.acceptedAnnouncements.filter((a) => isObj(a["key"]) && a["key"]["key_id"] === kid);
      const first = mine[0];
      list.push({ key_id: kid, alg: "ed25519", public_key: pub, created_at: first?.["created_at"] ?? null, activates_at: first?.["not_before"] ?? null, announcements: mine });
    }
    // an announcing key is retired when the key it announces takes over (its not_before)
    for (const a of this.acceptedAnnouncements) {
      const sig = a["signature"];
      const signer = list.find((k) => isObj(sig) && k["key_id"] === sig["key_id"]);
      const at = a["not_before"];
      if (signer === undefined || typeof at !== "string") continue;
      const held = signer["retired_at"];
      if (typeof held !== "string" || Date.parse(at) < Date.parse(held)) signer["retired_at"] = at;
    }
    return doc;
  }

  async keys(): Promise<KeysOut> {
    if (this.keysDoc === null) {
      this.keysDoc = await this.getObject("/v1/keys");
      noteRetired(this.retired, this.keysDoc);
    }
    return this.keysDoc as KeysOut;
  }

  /** The log's note key (pinned, else ``/v1/keys``'s ``log.vkey``) and trusted witnesses. */
  async logKeys(): Promise<{ log: Verifier; witnesses: Verifier[] }> {
    if (this.logV === null) {
      let vkey = this.opts.logKey;
      if (vkey === undefined) {
        const doc: unknown = await this.keys();
        const log = isObj(doc) ? doc["log"] : null;
        if (!isObj(log) || typeof log["vkey"] !== "string") {
          throw new ClientError("the server publishes no log key (GET /v1/keys has no log.vkey)");
        }
        vkey = log["vkey"];
      }
      this.logV = await parseVkey(vkey);
      this.witnessV = await Promise.all((this.opts.witnesses ?? []).map(parseVkey));
    }
    return { log: this.logV, witnesses: this.witnessV ?? [] };
  }

  /** Check a checkpoint against the newest one this client has seen for its log (kept in
   * storage): same size, same root; a larger one extends it (RFC 9162 consistency proof).
   * Anything else is a fork — the log showed two histories — and is refused. */
  async witnessCheckpoint(cp: Checkpoint): Promise<void> {
    const key = `checkpoint/${cp.origin}`;
    const stored = await this.storage.get(key);
    if (stored !== null) {
      const old: unknown = JSON.parse(stored);
      if (!isObj(old) || typeof old["size"] !== "number" || typeof old["root"] !== "string") {
        throw new ClientError(`storage holds a malformed checkpoint under ${key}`);
      }
      const oldRoot = fromHex(old["root"], 32, "a stored root");
      const [small, big, r1, r2] =
        old["size"] <= cp.size ? [old["size"], cp.size, oldRoot, cp.root] : [cp.size, old["size"], cp.root, oldRoot];
      try {
        if (small === big || small === 0) {
          if (small === big && toHex(r1) !== toHex(r2)) {
            throw new ProtocolError(`two checkpoints of size ${small} with different roots: the log equivocates`);
          }
        } else {
          const doc = await this.request("GET", `/v1/log/consistency?first=${small}&second=${big}`);
          const proof = isObj(doc) && Array.isArray(doc["proof"]) ? doc["proof"] : null;
          if (proof === null) throw new ProtocolError("the log gave no consistency proof");
          await checkConsistency(
            small,
            big,
            r1,
            r2,
            proof.map((h) => fromHex(String(h), 32, "a consistency proof hash")),
          );
        }
      } catch (exc) {
        if (exc instanceof ProtocolError) {
          throw new ProtocolError(`${exc.message} (checkpoint seen before: size ${old["size"]}; now: size ${cp.size})`);
        }
        throw exc;
      }
      if (old["size"] >= cp.size) return;
    }
    await this.storage.set(key, JSON.stringify({ size: cp.size, root: toHex(cp.root), note: cp.note }));
  }

  /** Read the log's newest checkpoint (``GET /log/checkpoint``), check its signatures (log
   * key, trusted witnesses' quorum) and that it is consistent with every one seen before. */
  async observeCheckpoint(): Promise<Checkpoint> {
    const text = await this.request("GET", "/log/checkpoint");
    if (typeof text !== "string") throw new ClientError("GET /log/checkpoint: not a note");
    const { log, witnesses } = await this.logKeys();
    const quorum = witnesses.length > 0 ? (this.opts.witnessQuorum ?? 1) : 0;
    const cp = await openCheckpoint(text, log, witnesses, quorum);
    await this.witnessCheckpoint(cp);
    return cp;
  }

  // -- matches ---------------------------------------------------------------------------

  /** Create a match (with the operator key); one conforming :class:`Seat` per seat. */
  async createMatch(
    game: string,
    ruleset?: Obj,
    names?: string[],
    house?: boolean[],
    opts: { operatorKey?: string; allowPrecomputedRolls?: boolean } = {},
  ): Promise<Match> {
    if (ruleset !== undefined && ruleset["deal"] === "sealed" && (this.opts.sealed === false || !SEALED_GAMES.includes(game))) {
      throw new SealedUnsupported(null, game);
    }
    const body: Obj = { game };
    if (ruleset !== undefined) body["ruleset"] = ruleset;
    if (names !== undefined) {
      const flags = house ?? names.map(() => false);
      if (flags.length !== names.length) throw new ClientError(`${names.length} names but ${flags.length} house flags`);
      body["seats"] = names.map((n, i) => ({ name: n, house: flags[i] }));
    }
    const token = opts.operatorKey ?? this.opts.operatorKey;
    const created = await this.request("POST", "/v1/matches", token === undefined ? { body } : { token, body });
    if (!isObj(created) || typeof created["match_id"] !== "string" || !Array.isArray(created["seats"])) {
      throw new ClientError("POST /v1/matches answered no match");
    }
    const terms: Terms = { game };
    if (ruleset !== undefined) terms.ruleset = ruleset;
    if (names !== undefined) terms.names = names;
    if (house !== undefined) terms.house = house;
    if (opts.allowPrecomputedRolls === true) terms.allowPrecomputedRolls = true;
    const seats: Seat[] = [];
    for (const s of created["seats"]) {
      if (!isObj(s) || typeof s["seat"] !== "number" || typeof s["token"] !== "string") {
        throw new ClientError("POST /v1/matches answered a seat without its token");
      }
      seats.push(
        await this.seat(created["match_id"], s["seat"], s["token"], {
          record: isObj(created["record"]) ? created["record"] : null,
          terms,
        }),
      );
    }
    return new Match(this, created as MatchCreatedOut, seats);
  }

  /** One seat of a match, from its seat token (a seat link): resumed from storage when this
   * storage already holds it, else a new conforming seat. */
  async seat(
    matchId: string,
    seat: number,
    token: string,
    opts: { record?: Obj | null; terms?: Terms | null } = {},
  ): Promise<Seat> {
    const found = await Seat.load(this, matchId, seat);
    if (found !== null) return found;
    const st: SeatState = {
      format: "qahwa-seat-state/1",
      base_url: this.baseUrl,
      match_id: matchId,
      seat,
      token,
      record: opts.record ?? null,
      terms: opts.terms ?? null,
      client_seed: null,
      nonce: null,
      seed_commitment: null,
      key_seed: null,
      chain_secret: null,
      commit_refused: null,
      lock: null,
      log_index: null,
      checkpoint: null,
      revealed: false,
      max_value_sent: -1,
      receipts: [],
      requests: [],
      disputes: [],
      deadlines: [],
    };
    const out = new Seat(this, st);
    await out.persist();
    return out;
  }

  /** The seats this client's storage holds (to resume after a reload). */
  async storedSeats(): Promise<{ matchId: string; seat: number }[]> {
    const out: { matchId: string; seat: number }[] = [];
    for (const k of await this.storage.keys("seat/")) {
      const m = /^seat\/(.+)\/(\d+)$/.exec(k);
      if (m !== null) out.push({ matchId: m[1]!, seat: Number(m[2]) });
    }
    return out;
  }

  async match(matchId: string): Promise<Obj> {
    return this.getObject(`/v1/matches/${matchId}`);
  }

  async transcript(matchId: string): Promise<Obj> {
    return this.getObject(`/v1/matches/${matchId}/transcript`);
  }

  /** The transcript's bytes as the server sent them (to keep, or to hand to ``verify``). */
  async transcriptText(matchId: string): Promise<string> {
    const text = await this.request("GET", `/v1/matches/${matchId}/transcript`, { text: true });
    if (typeof text !== "string") throw new ClientError(`GET /v1/matches/${matchId}/transcript: no text`);
    return text;
  }

  /** The match's public events as they happen (server-sent events), resuming after a dropped
   * connection from the last seq seen, until the match ends. */
  async *stream(matchId: string, after = -1, opts: { timeout?: number; signal?: AbortSignal } = {}): AsyncGenerator<Obj> {
    for await (const { event } of this.pushed(matchId, after, opts)) yield event;
  }

  /** :meth:`stream`, each event marked ``live`` when the server accepted it after the stream
   * was opened (its seq is at or past the log's ``next_seq`` read just before), so it was
   * pushed as it was accepted. */
  async *pushed(
    matchId: string,
    after = -1,
    opts: { timeout?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<{ event: Obj; live: boolean }> {
    for await (const n of this.watch(matchId, after, opts)) if (n.kind === "event") yield { event: n.event, live: n.live };
  }

  /** The match's news as it happens, over server-sent events resumed after a dropped
   * connection from the last seq seen: ``open`` each time the stream is (re)connected (what
   * happened before it is in the seat's view), ``event`` for each public event (``live`` as
   * in :meth:`pushed`), ``status`` when the status changed without an event (a v2 match
   * starts at its last reveal; tawla's start draws nothing). Ends when the match ends;
   * Unanswered when the stream keeps breaking. */
  async *watch(
    matchId: string,
    after = -1,
    opts: { timeout?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<Notice> {
    let last = after;
    const timeout = opts.timeout ?? 60;
    for (let broken = 0; broken <= (this.opts.retries ?? 3); ) {
      const init: RequestInit = { headers: { Accept: "text/event-stream" } };
      if (opts.signal !== undefined) init.signal = opts.signal;
      let resp: Response;
      let boundary = Number.MAX_SAFE_INTEGER;
      try {
        // where the log stands (no events asked for): later ones are pushed as they happen
        const page = await this.request("GET", `/v1/matches/${matchId}/events?after=${LATEST}`);
        if (isObj(page) && typeof page["next_seq"] === "number") boundary = page["next_seq"];
        this.requestCount++;
        resp = await this.doFetch(`${this.baseUrl}/v1/matches/${matchId}/events/stream?after=${last}&timeout=${timeout}`, init);
      } catch {
        if (opts.signal?.aborted === true) return;
        broken++;
        await this.pause(null, broken);
        continue;
      }
      if (!resp.ok) {
        if (RESEND_STATUS.has(resp.status)) {
          broken++;
          await this.pause(resp, broken);
          continue;
        }
        return this.fail(resp);
      }
      if (resp.body === null) return;
      yield { kind: "open" };
      const parser = new SseParser();
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const msg of parser.feed(value)) {
            if (msg.event === "finished") return;
            const doc: unknown = JSON.parse(msg.data);
            if (!isObj(doc)) continue;
            if (msg.event === "status") {
              if (typeof doc["status"] === "string") yield { kind: "status", status: doc["status"] };
              continue;
            }
            if (msg.event === "key_announcement") {
              // the next signing key, announced: taken if a trusted key signed it
              await this.takeAnnouncements([doc]);
              continue;
            }
            if (msg.event === "head") {
              yield { kind: "head", head: doc };
              continue;
            }
            if (typeof doc["seq"] !== "number" || doc["seq"] <= last) continue;
            last = doc["seq"];
            broken = 0;
            yield { kind: "event", event: doc, live: doc["seq"] >= boundary };
          }
        }
      } catch {
        if (opts.signal?.aborted === true) return;
        broken++;
      } finally {
        reader.releaseLock();
      }
    }
    throw new Unanswered(`the event stream of match ${matchId} kept breaking`);
  }
}

/** What :meth:`Client.watch` yields (``head``: the signed head the server stands at after a
 * batch of events, fairness-v2 §7 heads; :meth:`Seat.watch` takes it and does not pass it on). */
export type Notice =
  | { kind: "open" }
  | { kind: "status"; status: string }
  | { kind: "event"; event: Obj; live: boolean }
  | { kind: "head"; head: Obj };

/** How far (ms) an event after a signed head may be stamped before that head's time before
 * it is back-dating (§7, heads): the hosts of one server keep their clocks closer. */
export const BACKDATE_SLACK_MS = 1000;

export class Match {
  readonly matchId: string;
  constructor(
    readonly client: Client,
    readonly created: MatchCreatedOut,
    readonly seats: Seat[],
  ) {
    this.matchId = created.match_id;
  }

  /** Every seat commits, then each checks the lock and reveals: the last reveal starts it. */
  async start(clientSeeds?: (string | undefined)[]): Promise<void> {
    for (const [i, seat] of this.seats.entries()) await seat.commit(clientSeeds?.[i]);
    for (const seat of this.seats) await seat.reveal();
  }

  transcript(): Promise<Obj> {
    return this.client.transcript(this.matchId);
  }

  /** Every seat that revealed through this client checks the transcript. */
  async checkTranscript(doc?: Obj): Promise<Obj> {
    const got = doc ?? (await this.transcript());
    for (const seat of this.seats) if (seat.lock !== null) await seat.checkTranscript(got);
    return got;
  }
}

/** One seat, played as a conforming client (fairness-v2.md §3a). Everything it holds is kept
 * in the client's storage under ``seat/<match id>/<seat>`` before anything that depends on it
 * is sent: after a reload, ``client.seat(matchId, seat, token)`` resumes it. */
export class Seat {
  private key: SeatKey | null = null;
  private chain: RollChain | null = null;
  view: View | null = null;
  /** The chain heads this seat computed itself, by seq, from the lock (or a signed head) and
   * each event it was shown: :meth:`checkTranscript` holds the transcript to them (the history
   * it was shown while playing). A server's own ``chain`` on an event is never read. */
  readonly shown = new Map<number, string>();
  /** The events this seat's :meth:`watch` was shown, in order. */
  readonly streamed: Obj[] = [];
  /** Every event this seat was shown (streamed, or read when a view's head moved on), by seq. */
  readonly seen = new Map<number, Obj>();
  /** chain[seq] as this seat computed it over the events it was shown, from the lock or (after
   * a break: a redacted event, a gap) a signed head, each restart a new epoch (null: broken,
   * until the next signed head); and back-dating disputes waiting for a signed head or receipt
   * that covers their event. */
  private own: { seq: number; chain: Uint8Array } | null = null;
  /** At a sealed table: this seat's sealed side (its deal machine and secrets), made at its
   * first sealed view. */
  private sealedSeat: SealedSide | null = null;
  /** The sealed side's use so far (``sealedTurn``): the next one waits for it. */
  private sealedQueue: Promise<unknown> = Promise.resolve();
  private epoch = 0;
  private uncovered: { d: Dispute; seq: number; chain: string; epoch: number }[] = [];

  constructor(
    readonly client: Client,
    private readonly st: SeatState,
  ) {
    if (st.key_seed !== null) this.key = new SeatKey(fromHex(st.key_seed, 32, "a stored key seed"));
    if (st.chain_secret !== null) {
      this.chain = new RollChain(st.match_id, st.seat, fromHex(st.chain_secret, 32, "a stored chain secret"));
    }
  }

  static storageKey(matchId: string, seat: number): string {
    return `seat/${matchId}/${seat}`;
  }

  static async load(client: Client, matchId: string, seat: number): Promise<Seat | null> {
    const text = await client.storage.get(Seat.storageKey(matchId, seat));
    if (text === null) return null;
    const st: unknown = JSON.parse(text);
    if (!isObj(st) || st["format"] !== "qahwa-seat-state/1" || st["match_id"] !== matchId || st["seat"] !== seat) {
      throw new ClientError(`storage holds no usable seat state for match ${matchId} seat ${seat}`);
    }
    return new Seat(client, st as unknown as SeatState);
  }

  get matchId(): string {
    return this.st.match_id;
  }
  get seat(): number {
    return this.st.seat;
  }
  get token(): string {
    return this.st.token;
  }
  get clientSeed(): string | null {
    return this.st.client_seed;
  }
  get nonce(): string | null {
    return this.st.nonce;
  }
  get lock(): Obj | null {
    return this.st.lock;
  }
  get logIndex(): number | null {
    return this.st.log_index;
  }
  get receipts(): readonly Obj[] {
    return this.st.receipts;
  }
  get requests(): readonly SentRequest[] {
    return this.st.requests;
  }
  get disputes(): readonly Dispute[] {
    return this.st.disputes;
  }
  get revealed(): boolean {
    return this.st.revealed;
  }
  /** The seat's Ed25519 public key (base64), once committed. */
  get publicKey(): string | null {
    return this.key?.publicB64 ?? null;
  }

  async persist(): Promise<void> {
    await this.client.storage.set(Seat.storageKey(this.st.match_id, this.st.seat), JSON.stringify(this.st));
  }

  private notOurs(reason: string): NotOurMatch {
    return new NotOurMatch(this.st.match_id, this.st.seat, reason);
  }

  private path(tail: string): string {
    return `/v1/matches/${this.st.match_id}${tail}`;
  }

  private async post(tail: string, body: Obj): Promise<{ answer: Obj; entry: SentRequest }> {
    const entry: SentRequest = {
      method: "POST",
      path: this.path(tail),
      body: canonical(body),
      sent_at: [],
      receipt: null,
      answered_at: null,
      refused: null,
    };
    this.st.requests.push(entry);
    let answer: Obj;
    try {
      answer = await this.client.send(entry, this.st.token, () => this.persist());
    } catch (exc) {
      if (exc instanceof ApiError) await this.takeRefusal(entry, exc);
      throw exc;
    }
    return { answer, entry };
  }

  /** A 4xx carrying the server's signed refusal of this very request (its bytes' SHA-256,
   * the status and the code: fairness-v2 §7, refusals) answers it: kept as ``refused`` and
   * ``refusal``. Anything else — a 5xx, 429, an unsigned refusal, a refusal of another
   * request — answers nothing: the request stays unreceipted (``error`` says why). */
  private async takeRefusal(entry: SentRequest, exc: ApiError): Promise<void> {
    const r = exc.refusal;
    if (exc.status < 400 || exc.status >= 500 || exc.status === 429 || r === null) return;
    let rec: Obj;
    try {
      rec = await checkSignedRecord(r, await this.keysFor(r), "refusal", "refusal");
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      entry.error = `${entry.error ?? ""} (${e.message})`;
      await this.persist();
      return;
    }
    const want: Obj = {
      match_id: this.st.match_id,
      request: toHex(await sha256(new TextEncoder().encode(entry.body))),
      status: exc.status,
      reason: exc.code,
    };
    const wrong = Object.keys(want).filter((k) => rec[k] !== want[k]);
    if (wrong.length > 0) {
      entry.error = `${entry.error ?? ""} (the signed refusal's ${wrong.join(", ")} differ)`;
    } else {
      entry.refused = exc.code;
      entry.refusal = rec;
      entry.error = null;
    }
    await this.persist();
  }

  /** After a reload: the last request sent and never answered, sent again byte for byte
   * (§3a.6). Returns its answer, or null when there was none pending. */
  async resendPending(): Promise<Obj | null> {
    const entry = this.st.requests.at(-1);
    if (entry === undefined || entry.answered_at !== null || entry.refused !== null) return null;
    let answer: Obj;
    try {
      answer = await this.client.send(entry, this.st.token, () => this.persist());
    } catch (exc) {
      if (exc instanceof ApiError) await this.takeRefusal(entry, exc);
      // 409 after a resend: the first copy may have landed (its answer lost); the public
      // events or the seat's state settle it.
      if (exc instanceof ApiError && exc.status === 409) return null;
      throw exc;
    }
    const chain = isObj(answer["state"]) ? answer["chain"] : undefined;
    await this.takeReceipt(answer, entry, typeof chain === "string" ? { chain } : {});
    if (entry.path.endsWith("/reveal")) {
      this.st.revealed = true;
      await this.persist();
    }
    return answer;
  }

  // -- before committing (§3a.1, §3a.3) ---------------------------------------------------

  private async acceptRecord(record: unknown): Promise<Obj> {
    let rec: Obj;
    try {
      rec = await checkSignedRecord(record, await this.keysFor(record), "commit record", "commit");
    } catch (exc) {
      if (exc instanceof ProtocolError) throw this.notOurs(exc.message);
      throw exc;
    }
    if (rec["match_id"] !== this.st.match_id) {
      throw this.notOurs(`the commit record is for match ${JSON.stringify(rec["match_id"])}`);
    }
    const seats = rec["seats"];
    if (
      !Array.isArray(seats) ||
      this.st.seat >= seats.length ||
      seats.some((s, i) => !isObj(s) || s["seat"] !== i)
    ) {
      throw this.notOurs(`the commit record's seats do not list seat ${this.st.seat}`);
    }
    let rules: unknown = null;
    try {
      rules = typeof rec["ruleset"] === "string" ? JSON.parse(rec["ruleset"]) : null;
    } catch {
      rules = null;
    }
    if (!isObj(rules)) throw this.notOurs("the commit record's ruleset is not a JSON object");
    // a sealed table needs a sealed seat (its own deal machine, key, shuffle, shares): a game
    // this client has no machine for is refused before any secret is made or sent
    if (rules["deal"] === "sealed" && (this.client.opts.sealed === false || !SEALED_GAMES.includes(String(rec["game"])))) {
      throw new SealedUnsupported(this.st.match_id, String(rec["game"]));
    }
    const t = this.st.terms;
    if (t !== null) {
      if (t.game !== undefined && rec["game"] !== t.game) {
        throw this.notOurs(`the commit record is for game ${JSON.stringify(rec["game"])}, not ${JSON.stringify(t.game)}`);
      }
      for (const [k, v] of Object.entries(t.ruleset ?? {})) {
        if (!(k in rules) || canonical(rules[k]) !== canonical(v)) {
          throw this.notOurs(
            `the commit record's ruleset has ${k}=${JSON.stringify(rules[k])}, not the ${JSON.stringify(v)} asked for`,
          );
        }
      }
      const names = seats.map((s) => (isObj(s) ? s["name"] : null));
      if (t.names !== undefined && canonical(names) !== canonical(t.names)) {
        throw this.notOurs(`the commit record's seats are ${JSON.stringify(names)}, not ${JSON.stringify(t.names)}`);
      }
      const house = t.house ?? (t.names !== undefined ? t.names.map(() => false) : undefined);
      const got = seats.map((s) => (isObj(s) ? s["house"] : null));
      if (house !== undefined && canonical(got) !== canonical(house)) {
        throw this.notOurs(`the commit record's house seats are ${JSON.stringify(got)}, not ${JSON.stringify(house)}`);
      }
    }
    if (
      typeof rec["game"] === "string" &&
      FRESH_ROLL_GAMES.has(rec["game"]) &&
      rules["fresh_rolls"] === false &&
      t?.allowPrecomputedRolls !== true
    ) {
      throw this.notOurs(
        'the ruleset has "fresh_rolls": false — rolls the operator could compute in advance — and the player did not ask for it',
      );
    }
    return rec;
  }

  private freshRolls(): boolean {
    const rec = this.st.record;
    if (rec === null || typeof rec["ruleset"] !== "string") return false;
    const rules: unknown = JSON.parse(rec["ruleset"]);
    return isObj(rules) && rules["fresh_rolls"] === true;
  }

  /** Check the signed commit record against what the player asked for, make this seat's
   * secrets (seed unless given, nonce, roll-chain secret, seat key) from the CSPRNG, keep them
   * in storage, then commit (§2). */
  async commit(clientSeed?: string): Promise<Obj | null> {
    if (this.st.revealed || this.st.lock !== null) return null;
    const last = this.st.requests.at(-1);
    if (this.st.seed_commitment !== null && last !== undefined && last.path.endsWith("/commit")) {
      if (clientSeed !== undefined && clientSeed !== this.st.client_seed) {
        throw new ClientError("this seat has already made its commitment with another seed");
      }
      if (last.answered_at !== null) return null; // committed before a reload
      return this.resendPending(); // sent before a reload, never answered
    }
    const record = this.st.record ?? (await this.client.match(this.st.match_id))["record"];
    this.st.record = await this.acceptRecord(record);
    if (this.st.seed_commitment === null) {
      let seed: string;
      if (clientSeed !== undefined) {
        try {
          seed = checkClientSeed(clientSeed);
        } catch (exc) {
          throw new ClientError(exc instanceof Error ? exc.message : String(exc));
        }
        if (usedSeeds.has(seed)) {
          throw new ClientError("this client seed was already used by this client: a conforming client never uses a seed twice");
        }
        usedSeeds.add(seed);
      } else {
        seed = toHex(randomBytes(16));
      }
      const nonce = randomBytes(32);
      this.st.client_seed = seed;
      this.st.nonce = toHex(nonce);
      this.st.seed_commitment = await seedCommitment(this.st.match_id, this.st.seat, nonce, seed);
      const keySeed = randomBytes(32);
      this.key = new SeatKey(keySeed);
      this.st.key_seed = toHex(keySeed);
      if (this.freshRolls()) {
        const secret = randomBytes(32);
        this.chain = new RollChain(this.st.match_id, this.st.seat, secret);
        this.st.chain_secret = toHex(secret);
      }
      await this.persist(); // the secrets are kept before the commitment leaves
    }
    const body = {
      seed_commitment: this.st.seed_commitment,
      key: this.key?.publicB64 ?? null,
      roll_chain: this.chain?.tip ?? null,
    };
    let answer: Obj;
    let entry: SentRequest;
    try {
      ({ answer, entry } = await this.post(`/seats/${this.st.seat}/commit`, body));
    } catch (exc) {
      const sent = this.st.requests.at(-1);
      if (exc instanceof ApiError) {
        if (sent !== undefined && sent.sent_at.length > 1) return null; // the first copy may have landed
        this.st.commit_refused = `${exc.code}: ${exc.message}`;
        await this.persist();
      }
      throw exc;
    }
    await this.takeReceipt(answer, entry, { seq: -1 });
    return answer;
  }

  // -- before revealing (§3a.4) ------------------------------------------------------------

  /** Fetch the lock (waiting up to ``wait`` seconds for the other seats' commits) and its
   * inclusion in the log, and check them all; NotOurMatch names the first that fails. */
  async checkLock(wait = 30): Promise<Obj> {
    if (this.st.lock !== null) return this.st.lock;
    if (this.st.commit_refused !== null) throw this.notOurs(`its own commit was refused (${this.st.commit_refused})`);
    if (this.st.record === null || this.st.seed_commitment === null) {
      throw new ClientError("this seat has not committed through this client");
    }
    const deadline = this.client.now() + wait * 1000;
    let got: Obj;
    for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
      try {
        got = await this.client.getObject(this.path("/lock"));
        break;
      } catch (exc) {
        if (!(exc instanceof ApiError) || exc.code !== "not_locked" || this.client.now() >= deadline) throw exc;
        await this.client.sleep(pause);
      }
    }
    const lock = got["lock"];
    const logIndex = got["log_index"];
    try {
      await this.checkLockRecord(lock);
    } catch (exc) {
      if (exc instanceof ProtocolError) throw this.notOurs(exc.message);
      throw exc;
    }
    if (!isObj(lock)) throw this.notOurs("the lock is not a JSON object");
    const checkpoint = await this.checkInclusion(lock, logIndex);
    this.st.lock = lock;
    this.st.log_index = typeof logIndex === "number" ? logIndex : null;
    this.st.checkpoint = checkpoint;
    await this.persist();
    await this.takeReceipt(got, null, { seq: -1 });
    return lock;
  }

  private async checkLockRecord(lockIn: unknown): Promise<void> {
    const rec = this.st.record!;
    const lock = await checkSignedRecord(lockIn, await this.keysFor(lockIn), "lock", "lock");
    for (const k of ["match_id", "game", "ruleset", "commitment"]) {
      if (lock[k] !== rec[k]) {
        throw new ProtocolError(`the lock's ${k} ${JSON.stringify(lock[k])} is not the commit record's ${JSON.stringify(rec[k])}`);
      }
    }
    const seats = lock["seats"];
    const want = (rec["seats"] as unknown[]).map((s) => (isObj(s) ? [s["seat"], s["name"], s["house"]] : null));
    if (
      !Array.isArray(seats) ||
      !seats.every(isObj) ||
      canonical(seats.map((s) => [s["seat"], s["name"], s["house"]])) !== canonical(want)
    ) {
      throw new ProtocolError("the lock's seats are not the commit record's");
    }
    const mine = seats[this.st.seat]!;
    const own: Obj = {
      seed_commitment: this.st.seed_commitment,
      key: this.key?.publicB64 ?? null,
      roll_chain: this.chain?.tip ?? null,
    };
    for (const [k, v] of Object.entries(own)) {
      if (mine[k] !== v) {
        throw new ProtocolError(
          `the lock's ${k} at seat ${this.st.seat} is ${JSON.stringify(mine[k])}, not this seat's ${JSON.stringify(v)}`,
        );
      }
    }
  }

  /** The lock is entry ``logIndex`` of the log under a checkpoint signed by the log's note
   * key (C2SP signed-note), cosigned by the quorum of the witnesses this client was given
   * (``witnesses``: pinned by the player or the operator's app, never taken from the server),
   * consistent with every checkpoint seen before (RFC 9162 inclusion and consistency proofs).
   * The server serves the proof with the cosignatures it has (a down witness holds up
   * nothing); while they fall short of this client's quorum it asks again, up to
   * ``proofWait`` seconds, then refuses. Returns the note. */
  private async checkInclusion(lock: Obj, logIndex: unknown): Promise<string> {
    if (typeof logIndex !== "number" || !Number.isSafeInteger(logIndex) || logIndex < 0) {
      throw this.notOurs(`the lock has no log index (${JSON.stringify(logIndex)})`);
    }
    const proven = `${logIndex} ${canonical(lock)}`;
    const known = this.client.provenLocks.get(proven);
    if (known !== undefined) return known; // checked by this client for another seat
    const { log, witnesses } = await this.client.logKeys();
    const quorum = witnesses.length > 0 ? (this.client.opts.witnessQuorum ?? 1) : 0;
    const wait = this.client.opts.proofWait ?? 30;
    const deadline = this.client.now() + wait * 1000;
    for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
      let text: string;
      try {
        const got = await this.client.request("GET", this.path("/log-proof"));
        if (typeof got !== "string") throw new ClientError("the log proof is not text");
        text = got;
      } catch (exc) {
        // an older server answers 409 not_cosigned until its witnesses have cosigned
        if (!(exc instanceof ApiError) || exc.code !== "not_cosigned" || this.client.now() >= deadline) {
          if (exc instanceof ApiError) throw this.notOurs(`no proof of the lock in the log (${exc.message})`);
          throw exc;
        }
        await this.client.sleep(exc.retryAfter !== null ? exc.retryAfter * 1000 : pause);
        continue;
      }
      let cp: Checkpoint;
      let proof: TlogProof;
      try {
        proof = parseTlogProof(text);
        if (proof.index !== logIndex) {
          throw new ProtocolError(`the log proof is for index ${proof.index}, not the lock's ${logIndex}`);
        }
        const leaf = canonicalBytes(lock);
        if (proof.extra !== null && canonical(JSON.parse(new TextDecoder().decode(proof.extra))) !== canonical(lock)) {
          throw new ProtocolError(`log entry ${logIndex} is not this lock`);
        }
        cp = await openCheckpoint(proof.checkpoint, log, witnesses, 0);
        const root = await rootFromInclusion(logIndex, cp.size, await leafHash(leaf), proof.hashes);
        if (toHex(root) !== toHex(cp.root)) {
          throw new ProtocolError(
            `the inclusion proof of index ${logIndex} leads to root ${toHex(root).slice(0, 16)}…, the checkpoint says ${toHex(cp.root).slice(0, 16)}…`,
          );
        }
        await this.client.witnessCheckpoint(cp);
      } catch (exc) {
        if (exc instanceof ProtocolError || exc instanceof SyntaxError) {
          throw this.notOurs(`the lock is not shown in the log: ${exc.message}`);
        }
        throw exc;
      }
      if (cp.cosignedBy.length < quorum) {
        // a witness this client trusts has not cosigned (yet): this client's policy waits
        if (this.client.now() < deadline) {
          await this.client.sleep(pause);
          continue;
        }
        throw this.notOurs(
          `the lock is not shown in the log: its checkpoint is cosigned by ${cp.cosignedBy.length} of the witnesses this client trusts, not the ${quorum} it needs (waited ${wait} s)`,
        );
      }
      this.client.provenLocks.set(proven, proof.checkpoint);
      if (this.client.provenLocks.size > 64) this.client.provenLocks.delete(this.client.provenLocks.keys().next().value!);
      return proof.checkpoint;
    }
  }

  /** Check the lock (and its place in the log), then reveal this seat's seed and nonce. */
  async reveal(wait = 30): Promise<Obj | null> {
    if (this.st.revealed) return null;
    if (this.st.lock === null) await this.checkLock(wait);
    const last = this.st.requests.at(-1);
    if (last !== undefined && last.path.endsWith("/reveal") && last.answered_at === null && last.refused === null) {
      return this.resendPending();
    }
    const { answer, entry } = await this.post(`/seats/${this.st.seat}/reveal`, {
      client_seed: this.st.client_seed,
      nonce: this.st.nonce,
    });
    this.st.revealed = true;
    await this.takeReceipt(answer, entry, { seq: -1 });
    return answer;
  }

  // -- playing (§3a.6, §3a.7, §7) -----------------------------------------------------------

  /** This seat's view (its own hand, whose turn, ``legal_actions``, ``version``, ``chain``). */
  async state(): Promise<View> {
    // the log's events a newer head (and this seat's deal machine) needs, read with the view
    let after = this.eventsFrom();
    if (this.sealedSeat !== null) after = after === null ? this.sealedSeat.seen : Math.min(after, this.sealedSeat.seen);
    const query = after === null ? [] : [`events_after=${after}`];
    if (this.sealedSeat !== null) query.push("sealed=brief"); // its machine holds the deck and the shares
    const raw = await this.client.getObject(this.path(query.length === 0 ? "/state" : `/state?${query.join("&")}`), this.st.token);
    let page: Page | null = null;
    if (Array.isArray(raw["events"]) && after !== null) {
      page = [after, raw["events"].filter(isObj)]; // servers before it was listed leave it out
      delete raw["events"];
    }
    const head = raw["head"];
    let read: Page | null = null;
    if (head !== undefined && head !== null) {
      // one read of the log serves the head's check and the sealed machine
      const side = this.sealedRaw(raw) ? await this.sealedSide() : null;
      read = await this.takeHeadOf(head, raw["chain"], side?.seen, page);
    }
    const view = (await this.sealedView(raw, read)) as View;
    await this.noteView(view);
    this.view = view;
    return view;
  }

  /** A sealed table's view as this seat shows it (its hand by code, its legal actions in
   * player form, both from its own deal machine), after the log's new events are verified by
   * that machine and the view is checked against it; any other view as it is. A refusal
   * (SealedStepRefused) is kept as a dispute first. */
  private async sealedView(raw: Obj, read: Page | null = null): Promise<Obj> {
    if (!this.sealedRaw(raw)) return raw;
    const side = await this.sealedSide();
    // the view is checked against the machine at the view's own head: events the log took
    // after it (another seat's step between the two reads) are applied at the next view
    const head = isObj(raw["head"]) && typeof raw["head"]["seq"] === "number" ? raw["head"]["seq"] : null;
    return this.sealedTurn(async () => {
      if (head !== null && side.seen > head) {
        // a view older than what the machine has verified: nothing in it is acted on
        return { ...raw, hand: [], legal_actions: [], suggested_actions: [], stale: true };
      }
      // a page of the log already read for this view serves when it starts early enough
      let events: unknown[];
      if (read !== null && read[0] <= side.seen) events = [...read[1]];
      else {
        const doc = await this.client.request("GET", this.path(`/events?after=${side.seen}`), { token: this.st.token });
        events = isObj(doc) && Array.isArray(doc["events"]) ? doc["events"] : [];
      }
      await side.takeEvents(head === null ? events : events.filter((e) => !isObj(e) || typeof e["seq"] !== "number" || e["seq"] <= head));
      return await side.view(raw);
    });
  }

  /** ``f``'s use of the sealed side, one at a time: the machine's ``seen``, the events it takes
   * and the view checked against it belong together (a side in a Web Worker answers each call
   * later: another view or step must not come in between). A refusal (SealedStepRefused) is
   * kept as a dispute (persisted) first. */
  private sealedTurn<T>(f: () => Promise<T>): Promise<T> {
    const run = this.sealedQueue.then(async () => {
      try {
        return await f();
      } catch (exc) {
        if (exc instanceof SealedStepRefused) await this.persist();
        throw exc;
      }
    });
    this.sealedQueue = run.catch(() => undefined);
    return run;
  }

  /** Whether ``raw`` is a sealed table's view with a hand dealt, which this seat shows through
   * its own deal machine: a seat that never revealed against a lock (or whose client refuses
   * sealed tables) plays no hand, and its view is shown as the server sent it. */
  private sealedRaw(raw: Obj): boolean {
    if (raw["deal"] !== "sealed" || !isObj(raw["sealed"]) || Object.keys(raw["sealed"]).length === 0) return false;
    return this.st.lock !== null && this.client.opts.sealed !== false;
  }

  /** This seat's sealed side: its machine built from the signed lock's game, ruleset and
   * house seats; its secrets kept in this seat's state; its refusals kept as disputes. */
  private async sealedSide(): Promise<SealedSide> {
    if (this.sealedSeat !== null) return this.sealedSeat;
    const lock = this.st.lock!;
    const seats = Array.isArray(lock["seats"]) ? lock["seats"] : [];
    const house = seats.filter((s) => isObj(s) && s["house"] === true).map((s) => Number((s as Obj)["seat"]));
    const keys = (this.st.sealed_keys ??= {});
    this.sealedSeat = (this.client.opts.sealedSide ?? inThread)({
      matchId: this.st.match_id,
      seat: this.st.seat,
      game: String(lock["game"]),
      ruleset: String(lock["ruleset"]),
      house,
      keys: { ...keys },
      keep: (hand, secret) => {
        keys[String(hand)] = secret;
      },
      onDispute: (kind, reason, evidence) => {
        this.st.disputes.push({ kind, reason, at: isoNow(this.client.now()), evidence });
      },
    });
    return this.sealedSeat;
  }

  /** What is sent for ``action``: at a sealed table, what this seat's own machine derives (its
   * deal steps made here, a play with its opening), stored before it is sent. */
  private async wire(action: Obj, view: Obj): Promise<Obj> {
    if (view["deal"] !== "sealed" || this.sealedSeat === null) return action;
    const side = this.sealedSeat;
    return this.sealedTurn(async () => {
      try {
        return await side.wire(action);
      } finally {
        await this.persist(); // a new hand secret (or a dispute) is kept before anything is sent
      }
    });
  }

  private async noteView(view: View): Promise<void> {
    const d = (view as Obj)["deadline"];
    if (isObj(d)) {
      const last = this.st.deadlines.at(-1);
      if (last === undefined || canonical(last) !== canonical(d)) {
        this.st.deadlines.push(d);
        if (this.st.deadlines.length > 8) this.st.deadlines.shift();
      }
    }
  }

  /** The action with this seat's next roll-chain value, only if the view shows it owes one:
   * a ``roll`` when the seat is on turn and may roll (its value goes with its decision), a
   * ``roll_value`` when the pending roll's ``owes`` names this seat first — and, after an
   * opening, only once the event chain (recomputed from this seat's last receipt to the view's
   * head) shows the roller's own ``roll`` as its newest event (§6, §3a.7). */
  private async withValue(action: Obj, view: Obj): Promise<Obj> {
    const chain = this.chain!;
    const kind = action["type"];
    const turn = view["turn"];
    const fresh = view["fresh_roll"];
    const legal = view["legal_actions"];
    const owes = isObj(fresh) ? fresh["owes"] : null;
    const owed =
      kind === "roll"
        ? turn === this.st.seat &&
          (fresh === null || fresh === undefined) &&
          Array.isArray(legal) &&
          legal.some((a) => canonical(a) === canonical({ type: "roll" }))
        : turn === this.st.seat && Array.isArray(owes) && owes[0] === this.st.seat;
    if (!owed) {
      throw new ClientError(
        `seat ${this.st.seat} owes no roll-chain value now (turn ${JSON.stringify(turn)}, fresh_roll ${JSON.stringify(fresh)}): a conforming client sends none`,
      );
    }
    const used = view["values_used"];
    const k = Array.isArray(used) ? used[this.st.seat] : undefined;
    if (typeof k !== "number" || !Number.isInteger(k)) {
      throw new ClientError(`the view's values_used (${JSON.stringify(used)}) does not say which value seat ${this.st.seat} owes`);
    }
    if (k < 0 || k > this.st.max_value_sent + 1) {
      throw new ClientError(
        `the view says seat ${this.st.seat} has used ${k} roll-chain values, but this client sent only ${this.st.max_value_sent + 1}: it does not skip ahead on its chain`,
      );
    }
    const value = chain.value(k);
    if ("value" in action && action["value"] !== value) {
      throw new ClientError(`${JSON.stringify(action["value"])} is not this seat's roll-chain value ${k}: a conforming client never sends another value for a step`);
    }
    if (kind === "roll_value" && !(isObj(fresh) && String(fresh["label"]).includes("/opening/"))) {
      await this.rollerRolled(view);
    }
    this.st.max_value_sent = Math.max(this.st.max_value_sent, k);
    return { ...action, value };
  }

  /** The newest event under the view's chain head is another seat's ``roll`` with its value:
   * the event this seat chained itself up to that head when it holds it (read with the view),
   * else the events since this seat's last receipt, read and chained onto it up to the head. */
  private async rollerRolled(view: Obj): Promise<void> {
    const head = view["chain"];
    // (``shown``: a head this seat computed over the event itself, not one taken from a signed head)
    const at = this.own?.seq;
    if (at !== undefined && typeof head === "string" && toHex(this.own!.chain) === head && this.shown.get(at) === head && this.seen.has(at)) {
      return this.rolledLast(this.seen.get(at)!);
    }
    let from = -1;
    let prev: Uint8Array | null = null;
    for (const r of this.st.receipts) {
      const seq = Number(r["seq"]);
      if (seq >= from && typeof r["chain"] === "string") {
        from = seq;
        prev = fromHex(r["chain"], 32, "a receipt's chain");
      }
    }
    if (prev === null) prev = await chainStart(this.st.lock!);
    const doc = await this.client.request("GET", this.path(`/events?after=${from}`), { token: this.st.token });
    const events = isObj(doc) && Array.isArray(doc["events"]) ? doc["events"].filter(isObj) : [];
    let last: Obj | null = null;
    for (const ev of events) {
      prev = await chainNext(prev, ev);
      last = ev;
      if (toHex(prev) === head) break;
    }
    if (toHex(prev) !== head) {
      throw new ClientError("the public events do not chain to the view's head: this seat sends no roll-chain value");
    }
    this.rolledLast(last);
  }

  /** ``last``, the newest event under a view's head, is another seat's ``roll`` with its value. */
  private rolledLast(last: Obj | null): void {
    const a = last !== null ? last["action"] : null;
    if (last === null || last["type"] !== "action" || last["seat"] === this.st.seat || !isObj(a) || a["type"] !== "roll" || typeof a["value"] !== "string") {
      throw new ClientError(
        "a roll-chain value is asked for before the roller rolled (the newest event is not its roll): a conforming client sends none",
      );
    }
  }

  private async actionBody(action: Obj, view: Obj): Promise<Obj> {
    let act: Obj = { ...action };
    const chain = view["chain"];
    const version = view["version"];
    if (typeof chain !== "string") return { action: act, version };
    if (this.chain !== null && typeof act["type"] === "string" && FRESH_ROLL_TYPES.has(act["type"])) {
      act = await this.withValue(act, view);
    } else if ("value" in act && typeof act["type"] === "string" && FRESH_ROLL_TYPES.has(act["type"])) {
      throw new ClientError("this seat has no roll chain: it sends no roll-chain value");
    }
    if (this.key === null) throw new ClientError(`seat ${this.st.seat} holds no key: act through the seat that committed`);
    const sig = this.key.sign(sigMessage(this.st.match_id, chain, { type: "action", seat: this.st.seat, action: act }));
    return { action: act, version, prev: chain, sig };
  }

  /** Send one action chosen from this seat's last view (default: read now), signed over its
   * chain head, with this seat's roll-chain value added when one is owed. */
  async act(action: Action | Obj, opts: { retryStale?: boolean } = {}): Promise<ActionOut> {
    const view = this.view ?? (await this.state());
    try {
      return await this.postAction(await this.actionBody(await this.wire({ ...action }, view as Obj), view as Obj));
    } catch (exc) {
      if (!(opts.retryStale ?? false) || !(exc instanceof ApiError) || !["stale_version", "stale_chain"].includes(exc.code)) {
        throw exc;
      }
      const again = await this.state();
      if (!again.legal_actions.some((a) => canonical(a) === canonical(action))) throw exc;
      return this.postAction(await this.actionBody(await this.wire({ ...action }, again as Obj), again as Obj));
    }
  }

  private async postAction(body: Obj): Promise<ActionOut> {
    let answer: Obj;
    let entry: SentRequest;
    try {
      // a seat that follows the log with its deal machine: the answer's view brief
      ({ answer, entry } = await this.post(this.sealedSeat !== null ? "/actions?sealed=brief" : "/actions", body));
    } catch (exc) {
      this.view = null;
      const sent = this.st.requests.at(-1);
      if (exc instanceof ApiError && exc.status === 409 && sent !== undefined && sent.sent_at.length > 1 && typeof body["sig"] === "string") {
        const found = await this.acceptedEarlier(body["sig"]);
        if (found !== null) return found;
      }
      throw exc;
    }
    if (isObj(answer["state"])) {
      const logged = loggedEvents(body, answer);
      answer = { ...answer, state: await this.sealedView(answer["state"], logged) };
      // the events the action logged, chained on from this seat's own chain: held like a read
      // of the log (the next view then need not read them again)
      if (logged !== null && this.chainedTo(logged[0], String(body["prev"]))) await this.takeEvents(logged[1]);
    }
    const out = answer as ActionOut;
    const state = answer["state"];
    await this.takeReceipt(answer, entry, isObj(state) && typeof state["chain"] === "string" ? { chain: state["chain"] } : {});
    if (isObj(state)) {
      this.view = state as View;
      await this.noteView(this.view);
    }
    return out;
  }

  /** After a resend met 409, the first copy may have been accepted: the public log tells. */
  private async acceptedEarlier(sig: string): Promise<ActionOut | null> {
    const doc = await this.client.request("GET", this.path("/events?after=-1"), { token: this.st.token });
    const events = isObj(doc) && Array.isArray(doc["events"]) ? doc["events"] : [];
    for (const ev of events) {
      if (isObj(ev) && ev["type"] === "action" && ev["seat"] === this.st.seat && ev["sig"] === sig) {
        const view = await this.state();
        return {
          match_id: this.st.match_id,
          seat: this.st.seat,
          version: view.version,
          status: view.status,
          first_seq: Number(ev["seq"]),
          state: view,
          chain: typeof (view as Obj)["chain"] === "string" ? String((view as Obj)["chain"]) : null,
        };
      }
    }
    return null;
  }

  /** Resign, signed over the current chain head. */
  async resign(): Promise<Obj> {
    const view = (await this.state()) as Obj;
    const chain = view["chain"];
    const body: Obj = {};
    if (typeof chain === "string") {
      if (this.key === null) throw new ClientError(`seat ${this.st.seat} holds no key`);
      body["prev"] = chain;
      body["sig"] = this.key.sign(sigMessage(this.st.match_id, chain, { type: "end", reason: "resigned", seat: this.st.seat }));
    }
    const { answer, entry } = await this.post("/resign", body);
    await this.takeReceipt(answer, entry, typeof answer["chain"] === "string" ? { chain: answer["chain"] } : {});
    return answer;
  }

  // -- receipts, clocks (§3a.5, §3a.8) ------------------------------------------------------

  /** The keys to check ``signed`` with (:meth:`Client.trustedFor`). A record signed by a key
   * no trusted key announced is kept as a dispute (``unannounced_key``), with the
   * announcements of it the client refused as evidence; one a key signed after it was retired
   * (or naming no time of its own) too (``retired_key``); the record's check then fails. */
  private async keysFor(signed: unknown): Promise<Record<string, string>> {
    const keys = await this.client.trustedFor(signed);
    for (const kid of signingKeysIn(signed)) {
      if (Object.hasOwn(keys, kid)) continue;
      const reason = `the server signed with key ${kid}, which no key this client trusts announced`;
      if (this.st.disputes.some((d) => d.reason === reason)) continue;
      const refused = this.client.refusedAnnouncements.filter((r) => {
        const a = r.announcement;
        return isObj(a) && isObj(a["key"]) && a["key"]["key_id"] === kid;
      });
      this.st.disputes.push({ kind: "unannounced_key", reason, at: isoNow(this.client.now()), evidence: { records: [signed], refused_announcements: refused } });
      await this.persist();
    }
    // a key's signature after it was retired does not count: the record's check then fails
    const late = new Set<string>();
    for (const rec of signedRecordsIn(signed)) {
      const kid = (rec["signature"] as Obj)["key_id"] as string;
      const at = this.client.retired[kid];
      if (at === undefined || !Object.hasOwn(keys, kid) || late.has(kid)) continue;
      const why = retiredProblem(kid, at, rec);
      if (why === null) continue;
      late.add(kid);
      this.st.disputes.push({
        kind: "retired_key",
        reason: `match ${this.st.match_id}: a record the server sent does not count: ${why}`,
        at: isoNow(this.client.now()),
        evidence: { records: [rec], key_id: kid, retired_at: at },
      });
      await this.persist();
    }
    return late.size > 0 ? Object.fromEntries(Object.entries(keys).filter(([k]) => !late.has(k))) : keys;
  }

  private async dispute(reason: string, evidence: Obj, kind = "clock"): Promise<Disputed> {
    this.st.disputes.push({ kind, reason, at: isoNow(this.client.now()), evidence });
    await this.persist();
    return new Disputed(`match ${this.st.match_id}, seat ${this.st.seat}: disputed — ${reason}`);
  }

  /** A server time within ``maxSkew`` of this client's clock (§3a.8), else a dispute. */
  private async checkSkew(at: unknown, what: string, evidence: Obj): Promise<void> {
    if (typeof at !== "string") return; // made before the revision: no time to check
    const t = Date.parse(at);
    const skew = this.client.opts.maxSkew ?? 30;
    const now = this.client.now();
    if (Number.isNaN(t) || Math.abs(now - t) > skew * 1000) {
      throw await this.dispute(`the server's time on ${what} (${at}) is more than ${skew} s from this client's (${isoNow(now)})`, evidence);
    }
  }

  private async takeReceipt(answer: Obj, entry: SentRequest | null, want: { seq?: number; chain?: string }): Promise<Obj | null> {
    const receipt = answer["receipt"];
    if (receipt === undefined || receipt === null) return null;
    const mid = this.st.match_id;
    let r: Obj;
    try {
      r = await checkSignedRecord(receipt, await this.keysFor(receipt), "receipt", "receipt");
    } catch (exc) {
      if (exc instanceof ProtocolError) throw new ClientError(`match ${mid}: ${exc.message}`);
      throw exc;
    }
    if (r["match_id"] !== mid) throw new ClientError(`a receipt for match ${JSON.stringify(r["match_id"])} came with a request of match ${mid}`);
    const seq = r["seq"];
    const chain = r["chain"];
    if (typeof seq !== "number" || !Number.isInteger(seq) || seq < -1 || typeof chain !== "string") {
      throw new ClientError(`match ${mid}: a receipt without seq and chain`);
    }
    if (want.seq !== undefined && seq !== want.seq) throw new ClientError(`match ${mid}: the receipt is for seq ${seq}, not ${want.seq}`);
    if (want.chain !== undefined && chain !== want.chain) {
      throw new ClientError(`match ${mid}: the receipt's chain ${chain.slice(0, 16)}… is not the head ${want.chain.slice(0, 16)}… the answer shows`);
    }
    if (seq === -1 && this.st.lock !== null && chain !== toHex(await chainStart(this.st.lock))) {
      throw new ClientError(`match ${mid}: the receipt for seq -1 is not the lock's chain[-1]`);
    }
    this.st.receipts.push(r);
    this.cover(r);
    if (entry !== null) entry.receipt = r;
    await this.persist();
    await this.checkSkew(r["at"], `receipt ${seq}`, { receipt: r });
    return r;
  }

  // -- signed heads: back-dating (§7, heads) -------------------------------------------------

  /** A signed head the server sent with a view (whose chain head is ``chain``) or on its
   * stream: checked; when the log moved on since the head held before, the events between
   * are read and held to it; then it is the head held. */
  private async takeHeadOf(head: unknown, chain: unknown, alsoAfter?: number, page: Page | null = null): Promise<Page | null> {
    const mid = this.st.match_id;
    let h: Obj;
    try {
      h = await checkSignedRecord(head, await this.keysFor(head), "head", "head");
    } catch (exc) {
      if (exc instanceof ProtocolError) throw new ClientError(`match ${mid}: ${exc.message}`);
      throw exc;
    }
    const seq = h["seq"];
    if (h["match_id"] !== mid || typeof seq !== "number" || !Number.isInteger(seq) || seq < -1 || typeof h["chain"] !== "string" || typeof h["at"] !== "string") {
      throw new ClientError(`match ${mid}: a signed head without its match, seq, chain or at`);
    }
    if (typeof chain === "string" && h["chain"] !== chain) {
      throw new ClientError(`match ${mid}: the signed head's chain ${h["chain"].slice(0, 16)}… is not the head ${chain.slice(0, 16)}… the view shows`);
    }
    if (seq === -1 && this.st.lock !== null && h["chain"] !== toHex(await chainStart(this.st.lock))) {
      throw new ClientError(`match ${mid}: the signed head at seq -1 is not the lock's`);
    }
    await this.checkSkew(h["at"], `the signed head at seq ${seq}`, { head: h });
    // the events to read: the new ones to hold to the head held, and those this seat has
    // not chained up to this head (from ``page`` when it starts early enough: read with the view)
    const held = this.st.head ?? null;
    const since = this.eventsFrom();
    let read: Page | null = null;
    if (since !== null && seq > since) {
      const after = alsoAfter === undefined ? since : Math.min(since, alsoAfter);
      if (page !== null && page[0] <= after) read = page;
      else {
        const doc = await this.client.request("GET", this.path(`/events?after=${after}`), { token: this.st.token });
        read = [after, isObj(doc) && Array.isArray(doc["events"]) ? doc["events"].filter(isObj) : []];
      }
      await this.takeEvents(read[1].filter((e) => since < Number(e["seq"]) && Number(e["seq"]) <= seq));
    } else if (alsoAfter !== undefined) {
      read = [seq, []]; // the log up to the head: nothing after it to read
    }
    this.cover(h);
    if (held === null || seq >= Number(held["seq"])) this.st.head = h;
    if (this.own === null) {
      this.own = { seq, chain: fromHex(h["chain"], 32, "a signed head's chain") };
      this.epoch++;
    }
    await this.persist();
    return read;
  }

  /** The seq after which this seat reads the events a newer head brings (to hold them to the
   * head it holds and to chain them itself); null before it holds a head or the lock. */
  private eventsFrom(): number | null {
    const held = this.st.head ?? null;
    const wants: number[] = [];
    if (held !== null) wants.push(Math.max(Number(held["seq"]), this.st.checked_seq ?? -1));
    if (this.own !== null) wants.push(this.own.seq);
    else if (this.epoch === 0 && this.st.lock !== null) wants.push(-1);
    return wants.length > 0 ? Math.min(...wants) : null;
  }

  /** Whether this seat has chained the log itself up to event ``seq`` (-1: the lock's
   * chain[-1]) and got the head ``chain`` there: events from ``seq + 1`` it is shown then
   * continue its own chain. */
  private chainedTo(seq: number, chain: string): boolean {
    return this.own !== null && this.own.seq === seq && toHex(this.own.chain) === chain;
  }

  /** Events this seat was shown, in seq order, each new one kept (``seen``) and taken once:
   * chained by this seat itself from the lock, its head kept in ``shown`` (a redacted event,
   * ``hidden``, cannot be chained: the chain picks up again from the next signed head); and
   * after a held signed head, one stamped more than ``BACKDATE_SLACK_MS`` before that head's
   * time was back-dated: a ``backdated`` dispute (kept, not thrown) with the head, the events
   * from it, and once one comes, the later signed head or receipt that covers the event. */
  private async takeEvents(events: Obj[]): Promise<void> {
    const h = this.st.head ?? null;
    let changed = false;
    for (const ev of events) {
      const seq = ev["seq"];
      if (typeof seq !== "number" || seq < 0 || this.seen.has(seq)) continue;
      // the stream's ``chain`` beside an event is not part of it (and is never read)
      const { chain: _, ...event } = ev;
      this.seen.set(seq, event);
      // no await from here to the end of the loop: the stream and a view's events are taken
      // by two flows of this seat, and each event must be chained onto the chain as it stands
      if (this.own === null && seq === 0 && this.st.lock !== null) {
        this.own = { seq: -1, chain: chainStartSync(this.st.lock) };
        this.epoch++;
      }
      if (this.own !== null && seq === this.own.seq + 1 && ev["hidden"] !== true) {
        this.own = { seq, chain: chainNextSync(this.own.chain, event) };
        this.shown.set(seq, toHex(this.own.chain));
      } else if (this.own !== null && seq > this.own.seq) {
        this.own = null; // redacted, or a gap: picked up again at the next signed head
      }
      if (h === null || seq <= Number(h["seq"]) || seq <= (this.st.checked_seq ?? -1)) continue;
      this.st.checked_seq = seq;
      changed = true;
      if (typeof ev["at"] !== "string") continue;
      const at = Date.parse(ev["at"]);
      const hAt = Date.parse(String(h["at"]));
      if (Number.isNaN(at) || at >= hAt - BACKDATE_SLACK_MS) continue;
      const chain = this.shown.get(seq) ?? null;
      const between: Obj[] = [];
      for (let n = Number(h["seq"]) + 1; n <= seq; n++) if (this.seen.has(n)) between.push(this.seen.get(n)!);
      const d: Dispute = {
        kind: "backdated",
        reason: `event ${seq} is stamped ${ev["at"]}, ${(hAt - at) / 1000} s before the signed head the server showed at ${String(h["at"])}, which ends at seq ${String(h["seq"])}: signed proof it was back-dated`,
        at: isoNow(this.client.now()),
        evidence: { head: h, events: between, chain },
      };
      this.st.disputes.push(d);
      if (chain !== null) this.uncovered.push({ d, seq, chain, epoch: this.epoch });
    }
    if (changed) await this.persist();
  }

  /** A signed head or receipt whose chain covers a back-dated event (its seq and chain as
   * this seat computed them, or a later point it chained on to from it): kept with that
   * dispute, with the events between. */
  private cover(record: Obj): void {
    const rSeq = record["seq"];
    const reached = this.own !== null && this.own.seq === rSeq && toHex(this.own.chain) === record["chain"];
    this.uncovered = this.uncovered.filter(({ d, seq, chain, epoch }) => {
      if (rSeq === seq && record["chain"] === chain) {
        d.evidence["signed_after"] = record;
        return false;
      }
      if (reached && epoch === this.epoch && typeof rSeq === "number" && seq < rSeq) {
        d.evidence["signed_after"] = record;
        const after: Obj[] = [];
        for (let n = seq + 1; n <= rSeq; n++) if (this.seen.has(n)) after.push(this.seen.get(n)!);
        d.evidence["events_after"] = after;
        return false;
      }
      return true;
    });
  }

  /** The match's public events as they happen (SSE, resumed after a dropped connection);
   * every event pushed live is checked against this client's clock, and a timeout that ends
   * the match against its deadline and the requests this seat holds (§3a.8). */
  async *events(after = -1, opts: { timeout?: number; signal?: AbortSignal } = {}): AsyncGenerator<Obj> {
    for await (const n of this.watch(after, opts)) if (n.kind === "event") yield n.event;
  }

  /** :meth:`Client.watch` for this seat's match, each event checked as :meth:`events` says:
   * for a table that redraws on news instead of polling. Each event is kept (``streamed``) and
   * chained by this seat itself (``shown``), and held to the signed head shown before it; the
   * signed heads are taken here, not passed on. */
  async *watch(after = -1, opts: { timeout?: number; signal?: AbortSignal } = {}): AsyncGenerator<Notice> {
    for await (const n of this.client.watch(this.st.match_id, after, opts)) {
      if (n.kind === "head") {
        await this.takeHeadOf(n.head, null);
        continue;
      }
      if (n.kind === "event") {
        const ev = n.event;
        this.streamed.push(ev);
        if (n.live) await this.checkSkew(ev["at"], `event ${String(ev["seq"])}`, { event: ev });
        await this.takeEvents([ev]);
        if (ev["type"] === "end" && ev["reason"] === "timeout") await this.checkTimeout(ev);
      }
      yield n;
    }
  }

  /** A timeout that ends the match obeys §7's rule: its ``at`` is at or after the deadline the
   * server showed, agrees with this client's clock, and this seat holds no request it sent
   * before that deadline without an answer (that would be censorship). */
  async checkTimeout(ev: Obj): Promise<void> {
    const seat = ev["seat"];
    const at = typeof ev["at"] === "string" ? Date.parse(ev["at"]) : NaN;
    const seq = ev["seq"];
    const dl = [...this.st.deadlines].reverse().find((d) => d["seat"] === seat && (typeof seq !== "number" || Number(d["seq"]) <= seq));
    const due = dl !== undefined && typeof dl["due"] === "string" ? Date.parse(dl["due"]) : NaN;
    const skew = (this.client.opts.maxSkew ?? 30) * 1000;
    if (!Number.isNaN(due) && !Number.isNaN(at) && at < due) {
      throw await this.dispute(
        `the server declared seat ${String(seat)} timed out at ${String(ev["at"])}, before its deadline ${String(dl?.["due"])}: signed proof against the server`,
        { event: ev, deadline: dl ?? null },
        "early_timeout",
      );
    }
    if (!Number.isNaN(due) && this.client.now() + skew < due) {
      throw await this.dispute(`the server declared seat ${String(seat)} timed out while this client's clock says its deadline ${String(dl?.["due"])} is still ahead`, { event: ev, deadline: dl ?? null, local: isoNow(this.client.now()) });
    }
    if (seat === this.st.seat && !Number.isNaN(due)) {
      const held = this.st.requests.filter(
        (r) => r.answered_at === null && r.refused === null && r.sent_at.some((t) => Date.parse(t) < due),
      );
      if (held.length > 0) {
        throw await this.dispute(
          `the server timed this seat out while it held ${held.length} signed request(s) sent before the deadline, answered by no receipt and no signed refusal`,
          { event: ev, deadline: dl ?? null, requests: held.map((r) => ({ ...r })) },
          "censored",
        );
      }
    }
  }

  // -- after the match (§3a.5) -------------------------------------------------------------

  async transcript(): Promise<Obj> {
    return this.client.transcript(this.st.match_id);
  }

  transcriptText(): Promise<string> {
    return this.client.transcriptText(this.st.match_id);
  }

  /** The transcript's lock is byte-identical to the one this seat revealed against, its
   * chain recomputes, every receipt agrees with it, this seat's seed and nonce are the ones
   * it sent, and a timeout in it obeys §7 (§3a.8). TranscriptMismatch names what disagrees. */
  async checkTranscript(doc?: Obj): Promise<Obj> {
    const got = doc ?? (await this.transcript());
    const mid = this.st.match_id;
    const lock = this.st.lock;
    if (lock === null) throw new ClientError(`match ${mid}: this seat never revealed against a lock`);
    // a sealed table's transcript is qahwa-fair/3, any other qahwa-fair/2 (the lock's ruleset
    // says which: a transcript of the other protocol is a downgrade, or made up)
    const want = sealedRuleset(lock["ruleset"]) ? PROTOCOL_V3 : PROTOCOL_V2;
    if (got["protocol"] !== want) throw new TranscriptMismatch(`match ${mid}: not a ${want} transcript`);
    if (!isObj(got["lock"]) || canonical(got["lock"]) !== canonical(lock)) {
      throw new TranscriptMismatch(`match ${mid}: the transcript's lock is not the lock seat ${this.st.seat} revealed against`);
    }
    const events = got["events"];
    if (!Array.isArray(events) || !events.every(isObj)) throw new TranscriptMismatch(`match ${mid}: the transcript's events are not a list`);
    const heads = await chainHeads(lock, events);
    if (got["chain"] !== toHex(heads[heads.length - 1]!)) {
      throw new TranscriptMismatch(`match ${mid}: the transcript's chain does not recompute from its lock and events`);
    }
    for (const r of this.st.receipts) {
      const seq = Number(r["seq"]);
      if (seq + 1 >= heads.length) {
        throw new TranscriptMismatch(`match ${mid}: receipt for seq ${seq} is beyond the transcript's ${events.length} events: signed proof the server cut the match short`);
      }
      if (toHex(heads[seq + 1]!) !== r["chain"]) {
        throw new TranscriptMismatch(`match ${mid}: receipt for seq ${seq} disagrees with the transcript's chain there: signed proof the server rewrote the match`);
      }
    }
    for (const [seq, chain] of this.shown) {
      if (seq + 1 >= heads.length || toHex(heads[seq + 1]!) !== chain) {
        throw new TranscriptMismatch(`match ${mid}: the event stream showed chain ${chain.slice(0, 16)}… after seq ${seq}, the transcript another history`);
      }
    }
    // every keyed seat's event signed by it over the head before it, and no other (the verify
    // page's rule: one walk, src/verify/chain.ts); after the receipts and the events shown,
    // which say more (signed proof, and what this seat saw itself)
    const sigs = await checkSeatSigs(mid, lock, events, events.map((e) => canonical(signedBody(e))), heads);
    const p = sigs.problem;
    if (p !== null) {
      const what = { unkeyed: "carries a signature, but its seat has no key", nocauser: "carries a signature, but no seat caused it", missing: "is a keyed seat's, without its signature", bad: "carries a signature its seat's key does not verify over the head before it" }[p.kind];
      throw new TranscriptMismatch(`match ${mid}: the transcript's event ${p.i} (${String(p.type)}, seat ${String(p.seat)}) ${what}`);
    }
    const seats = got["seats"];
    const mine = Array.isArray(seats) ? seats[this.st.seat] : undefined;
    if (this.st.revealed && (!isObj(mine) || mine["client_seed"] !== this.st.client_seed || mine["nonce"] !== this.st.nonce)) {
      throw new TranscriptMismatch(`match ${mid}: seat ${this.st.seat}'s client seed and nonce in the transcript are not the ones it sent`);
    }
    let prevAt = "";
    for (const ev of events) {
      const at = ev["at"];
      if (typeof at === "string") {
        if (at < prevAt) throw new TranscriptMismatch(`match ${mid}: event ${String(ev["seq"])}'s time goes back`);
        prevAt = at;
      }
    }
    const end = events.at(-1);
    if (end !== undefined && end["type"] === "end" && end["reason"] === "timeout") await this.checkTimeout(end);
    return got;
  }

  /** What this seat holds, for the player to keep and give ``verify``: the Python client's
   * ``Seat.save`` format (no secret key, no roll-chain secret). */
  export(): SeatExport {
    return {
      match_id: this.st.match_id,
      seat: this.st.seat,
      client_seed: this.st.client_seed,
      nonce: this.st.nonce,
      seed_commitment: this.st.seed_commitment,
      key: this.key?.publicB64 ?? null,
      roll_chain: this.chain?.tip ?? null,
      lock: this.st.lock,
      log_index: this.st.log_index,
      checkpoint: this.st.checkpoint,
      requests: this.st.requests.map((r) => ({ ...r })),
      receipts: [...this.st.receipts],
      disputes: [...this.st.disputes],
    };
  }

  /** Forget this seat's secrets (after the match is verified and exported). */
  async forget(): Promise<void> {
    await this.client.storage.delete(Seat.storageKey(this.st.match_id, this.st.seat));
  }
}


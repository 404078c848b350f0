/** The verify page's check of a seat's receipts and signed heads against a transcript
 * (fairness-v2.md §7), and of the seat file that holds them (/play's seat.json: clients/ts
 * ``Seat.export``, qahwa_client ``Seat.save``, the file ``verify --seat FILE`` takes), as
 * verify_cli (``load_seat_file``, ``check_receipts``) checks them. Messages are the page's,
 * by key (translated by the page). */

import { type RawNode, getNode, serialize } from "../rawjson.js";
import { rfc3339 } from "./records.js";

export interface Msg {
  key: string;
  params: { [name: string]: unknown };
}
const msg = (key: string, params: { [name: string]: unknown } = {}): Msg => ({ key, params });

/** A seat file's seat, seed and nonce, and the receipts and heads to check (raw, for their
 * signatures): its receipts, then those its disputes keep as evidence, each once. */
export interface SeatFile {
  seat: number;
  seed: string;
  nonce: string;
  nodes: RawNode[];
}

type Obj = { [key: string]: unknown };
const isInt = (x: unknown): x is number => typeof x === "number" && Number.isInteger(x);

/** ``tree`` as a seat file: null when it is not one (no client_seed, or a record's type),
 * ``{bad}`` when it is a broken one. */
export function seatFileOf(tree: RawNode): SeatFile | { bad: Msg } | null {
  if (tree.t !== "o" || tree.m.has("type") || !tree.m.has("client_seed")) return null;
  const doc = JSON.parse(serialize(tree)) as Obj;
  const bad = (why: string) => ({ bad: msg("sf_bad", { why }) });
  if (!isInt(doc["seat"]) || doc["seat"] < 0) return bad('no seat number ("seat")');
  if (typeof doc["client_seed"] !== "string") return bad('no client seed ("client_seed")');
  const nonce = doc["nonce"];
  if (nonce !== undefined && nonce !== null && typeof nonce !== "string") return bad("its nonce is not a string");
  const receipts = getNode(tree, "receipts");
  if (receipts !== undefined && receipts.t !== "a") return bad("its receipts are not a list");
  const nodes = receipts && receipts.t === "a" ? [...receipts.a] : [];
  const seen = new Set<string>();
  const disputes = getNode(tree, "disputes");
  for (const d of disputes && disputes.t === "a" ? disputes.a : []) {
    const ev = getNode(d, "evidence");
    for (const k of ["head", "signed_after"]) {
      const r = getNode(ev, k);
      const type = getNode(r, "type");
      if (!r || !type || type.t !== "s" || (type.v !== "head" && type.v !== "receipt")) continue;
      const text = serialize(r);
      if (!seen.has(text)) {
        seen.add(text);
        nodes.push(r);
      }
    }
  }
  return { seat: doc["seat"], seed: doc["client_seed"], nonce: typeof nonce === "string" ? nonce : "", nodes };
}

/** What a receipt check needs of the transcript: its match id, protocol's record types, event
 * chain (hex, chain[0] = the lock's; null when it could not be computed), events and lock, and
 * the page's signature check of a raw record. */
export interface Transcript {
  match_id: unknown;
  chain: string[] | null;
  events: unknown[];
  lock: unknown;
  checkSignature(node: RawNode, record: Obj): Promise<{ ok: boolean | null; m: unknown }>;
}

/** fairness/protocol.py BACKDATE_SLACK: how much earlier than a signed head an event after it may be
 * stamped. */
export const BACKDATE_SLACK_MS = 1000;
const SIGNED = ["qahwa-fair/2", "qahwa-fair/3"];

/** Each receipt or signed head in ``nodes`` is a signed record of this match whose chain is
 * the transcript's at its seq; a receipt's at is its event's (the lock's locked_at); after a
 * head no event is stamped more than BACKDATE_SLACK_MS before its at. The first failure, or
 * the count. */
export async function checkReceipts(nodes: readonly RawNode[], t: Transcript): Promise<{ ok: boolean; m: Msg }> {
  let n = 0;
  let heads = 0;
  const fail = (m: Msg) => ({ ok: false, m });
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!;
    let r: Obj;
    try {
      r = JSON.parse(serialize(node)) as Obj;
    } catch (e) {
      return fail(msg("rc_parse", { i, msg: e instanceof Error ? e.message : String(e) }));
    }
    const seq = r?.["seq"];
    if (
      r === null ||
      typeof r !== "object" ||
      (r["type"] !== "receipt" && r["type"] !== "head") ||
      !SIGNED.includes(r["protocol"] as string) ||
      !isInt(seq) ||
      seq < -1 ||
      typeof r["chain"] !== "string"
    ) {
      return fail(msg("rc_not", { i }));
    }
    if (r["match_id"] !== t.match_id) return fail(msg("rc_match", { seq, found: JSON.stringify(r["match_id"]) }));
    const sg = await t.checkSignature(node, r);
    if (sg.ok !== true) return fail(msg("rc_sig", { seq, why: sg.m }));
    if (!t.chain) return fail(msg("rc_nochain", { seq }));
    const at = seq + 1 < t.chain.length ? t.chain[seq + 1] : null;
    if (at !== r["chain"]) {
      // signed proof that the server rewrote the match
      return fail(at ? msg("rc_disagree", { seq, c: r["chain"], at }) : msg("rc_noevent", { seq, c: r["chain"] }));
    }
    const evs = t.events;
    const stamp = (j: number): unknown => {
      const e = evs[j];
      return e !== null && typeof e === "object" ? (e as Obj)["at"] : undefined;
    };
    if (r["type"] === "head") {
      const hAt = rfc3339(r["at"]);
      for (let j = seq + 1; j < evs.length && hAt !== null; j++) {
        const eAt = rfc3339(stamp(j));
        if (eAt !== null && eAt < hAt - BACKDATE_SLACK_MS) return fail(msg("rc_backdated", { seq: j, at: stamp(j), h: r["at"], hs: seq }));
      }
      heads++;
    } else {
      const lock = t.lock;
      const own = seq >= 0 ? stamp(seq) : lock !== null && typeof lock === "object" ? (lock as Obj)["locked_at"] : undefined;
      if (r["at"] !== undefined && own !== undefined && r["at"] !== own) return fail(msg("rc_at", { seq, at: r["at"], own }));
      n++;
    }
  }
  return { ok: true, m: heads ? msg("rc_ok_heads", { n, h: heads }) : msg("rc_ok", { n }) };
}

/** A qahwa-fair/2 (and /3) transcript's event chain and its seats' signatures (fairness-v2.md
 * §7): the one walk the seat (``Seat.checkTranscript``) and the verify page share. Each is
 * given the canonical text of the lock, of each event and of each event's signed body (the
 * page: the transcript's own text, its numbers as written; the seat: canonical JSON of what
 * it parsed). */

import { fromBase64, toHex, utf8 } from "../bytes.js";
import { verifyEd25519 } from "../crypto.js";
import { chainHeadsOf, sigMessageOf, type Obj } from "../fair.js";

/** The seat that caused an event (an action, a resignation), or null. */
export function causer(ev: unknown): number | null {
  if (typeof ev !== "object" || ev === null || Array.isArray(ev)) return null;
  const e = ev as Obj;
  const seat = e["seat"];
  if ((e["type"] === "action" || (e["type"] === "end" && e["reason"] === "resigned")) && typeof seat === "number" && Number.isInteger(seat)) {
    return seat;
  }
  return null;
}

/** What is wrong with the seats' signatures: an event of a seat without a key that carries a
 * ``sig`` (``unkeyed``), a ``sig`` on an event no seat caused (``nocauser``), a keyed seat's
 * event without one (``missing``), or one that does not verify over the head before it (``bad``). */
export interface SeatSigProblem {
  kind: "unkeyed" | "nocauser" | "missing" | "bad";
  /** The event's index. */
  i: number;
  seat: number | null;
  type: unknown;
}

export interface SeatSigs {
  /** The seats with a key in the lock (seat → base64 public key). */
  keyed: Map<number, string>;
  /** The events whose signature verified. */
  signed: number;
  /** The first problem, or null. */
  problem: SeatSigProblem | null;
}

/** Every event a keyed seat caused carries its Ed25519 signature over canonical({match_id,
 * prev: the chain head before it, event: its signed body}); no other event carries one.
 * ``heads``: :func:`chainHeadsOf`'s (chain[-1] first); ``bodies``: each event's signed body
 * (without seq, sig, at) as canonical JSON text. Stops at the first problem. */
export async function checkSeatSigs(
  matchId: string,
  lock: unknown,
  events: readonly unknown[],
  bodies: readonly string[],
  heads: readonly Uint8Array[],
): Promise<SeatSigs> {
  const keyed = new Map<number, string>();
  const seats = typeof lock === "object" && lock !== null && Array.isArray((lock as Obj)["seats"]) ? ((lock as Obj)["seats"] as unknown[]) : [];
  seats.forEach((s, i) => {
    const key = typeof s === "object" && s !== null ? (s as Obj)["key"] : null;
    if (typeof key === "string" && key !== "") keyed.set(i, key);
  });
  let signed = 0;
  for (const [i, raw] of events.entries()) {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) continue;
    const ev = raw as Obj;
    const seat = causer(ev);
    const key = seat !== null ? keyed.get(seat) : undefined;
    const at = { i, seat, type: ev["type"] };
    if (key === undefined) {
      if ("sig" in ev) return { keyed, signed, problem: { kind: seat !== null ? "unkeyed" : "nocauser", ...at } };
      continue;
    }
    if (typeof ev["sig"] !== "string") return { keyed, signed, problem: { kind: "missing", ...at } };
    let ok = false;
    try {
      const pub = fromBase64(key, "a seat key");
      const message = sigMessageOf(matchId, toHex(heads[i]!), bodies[i]!);
      ok = pub.length === 32 && (await verifyEd25519(pub, fromBase64(ev["sig"], "a signature"), message));
    } catch {
      ok = false;
    }
    if (!ok) return { keyed, signed, problem: { kind: "bad", ...at } };
    signed++;
  }
  return { keyed, signed, problem: null };
}

/** :func:`chainHeadsOf` over canonical texts (the page's raw serialization, or canonical JSON). */
export function chainHeadsOfText(lock: string, events: readonly string[]): Uint8Array[] {
  return chainHeadsOf(utf8(lock), events.map((e) => utf8(e)));
}

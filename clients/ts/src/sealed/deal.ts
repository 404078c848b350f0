/** One hand's sealed deal (qahwa-fair/3, docs/spec/fairness-v3.md §3–§7, §9a): a port of
 * Python's games/sealed_hand.py ``Deal``, held to it by tests/client/test_sealed_machine_ts.py.
 *
 * An I/O-free state machine for one hand, built from the match's public facts (match id, hand
 * number, game, the hand's items in canonical order, seats, house seats): the queue of steps
 * owed (the seat that owes the first one acts), which final-deck positions are dealt to which
 * seat, and every key, shuffle, share, opening and revealed key, each verified before anything
 * changes. The game says when items are dealt (``deal``) and when the hand's play is over
 * (``over``); every other change is a seat's step (``step``) or the opening a play carries
 * (``checkOpen`` / ``commitOpen``). */

import { fromBase64, toBase64 } from "../bytes.js";
import { type Deck, checkRevealed, decodeDeck, handKey, openDeck, opensTo, startingDeck, verifyKey, verifyShare, verifyShares, verifyShuffle } from "./proofs.js";
import { type Context, SealedError } from "./group.js";

/** The log does not verify under the rules: a step or a play they refuse. */
export class RuleError extends Error {}
Object.defineProperty(RuleError.prototype, "name", { value: "RuleError", writable: true, configurable: true });

export const STEPS = ["key", "shuffle", "share", "open", "reveal_key"] as const;

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Action = { [k: string]: Json };

/** A step a seat owes (``items``: the items of a ``share`` step, or the one of an ``open``). */
export interface Owed {
  seat: number;
  step: string;
  items: number[];
}

export function owedJson(o: Owed): { [k: string]: Json } {
  const out: { [k: string]: Json } = { seat: o.seat, step: o.step };
  if (o.step === "share" || o.step === "open") out["items"] = [...o.items];
  return out;
}

export function parseHex(v: unknown, size: number, what: string): Uint8Array {
  if (typeof v !== "string") throw new RuleError(`${what}: a hex string expected`);
  if (v.length !== 2 * size || !/^[0-9a-f]*$/.test(v)) throw new RuleError(`${what}: ${size} bytes of lowercase hex expected`);
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = parseInt(v.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function parseB64(v: unknown, what: string): Uint8Array {
  if (typeof v !== "string") throw new RuleError(`${what}: a base64 string expected`);
  let b: Uint8Array;
  try {
    b = fromBase64(v);
  } catch {
    throw new RuleError(`${what}: not base64`);
  }
  if (toBase64(b) !== v) throw new RuleError(`${what}: not canonical base64`);
  return b;
}

export function parseItem(v: unknown, n: number, what = "'item'"): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= n) {
    throw new RuleError(`${what} must be an item position 0 to ${n - 1}, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** Reject fields other than ``type`` and ``keys`` in an action. */
export function onlyKeys(action: Action, ...keys: string[]): void {
  const extra = Object.keys(action).filter((k) => k !== "type" && !keys.includes(k));
  if (extra.length) throw new RuleError(`unexpected field(s) ${extra.sort().join(", ")} for action ${JSON.stringify(action["type"])}`);
}

/** House seats first, then the others, each in seat order (fairness-v3 §5). */
export function shuffleOrder(seats: number, house: readonly number[]): number[] {
  const hs = [...new Set(house)].sort((a, b) => a - b);
  for (let s = 0; s < seats; s++) if (!hs.includes(s)) hs.push(s);
  return hs;
}

function sealed<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof SealedError) throw new RuleError(e.message);
    throw e;
  }
}

export class Deal {
  keys: (Uint8Array | null)[];
  deck: Deck;
  handKey: Uint8Array | null = null;
  shuffled: number[] = [];
  /** item → the seat it is dealt to */
  owner = new Map<number, number>();
  /** item → seat → D */
  shares = new Map<number, Map<number, Uint8Array>>();
  opened = new Map<number, string>();
  revealed: (Uint8Array | null)[];
  /** every item's code, once every key is revealed */
  codes: string[] | null = null;
  owed: Owed[] = [];
  /** The step being applied is the reading seat's own, returned by the log byte for byte as
   * it made it, at the position it made it for (``DealMachine.made``): its proofs are not
   * verified again (the seat made them itself); every rule is still checked. */
  ownStep = false;

  constructor(
    readonly matchId: string,
    readonly number: number,
    readonly game: string,
    readonly items: readonly string[],
    readonly n: number,
    readonly house: readonly number[] = [],
  ) {
    this.keys = new Array<Uint8Array | null>(n).fill(null);
    this.revealed = new Array<Uint8Array | null>(n).fill(null);
    this.deck = startingDeck(game, items);
    for (let s = 0; s < n; s++) this.owed.push({ seat: s, step: "key", items: [] });
    for (const s of shuffleOrder(n, house)) this.owed.push({ seat: s, step: "shuffle", items: [] });
  }

  ctx(seat: number): Context {
    return { matchId: this.matchId, hand: this.number, seat };
  }

  /** Every item dealt to ``seat`` this hand (opened or not), in order. */
  heldBy(seat: number): number[] {
    return [...this.owner].filter(([, o]) => o === seat).map(([i]) => i).sort((a, b) => a - b);
  }

  allKeys(): Uint8Array[] {
    return this.keys.map((k) => {
      if (k === null) throw new RuleError("a key is missing");
      return k;
    });
  }

  // -- the game's calls ---------------------------------------------------------------------
  /** Items dealt face down, [seat, items] in the game's order: every other seat owes its
   * shares of them, one share step a seat, in seat order. */
  deal(dealt: [number, number[]][]): void {
    const batch = new Map<number, number>();
    for (const [seat, items] of dealt) {
      for (const i of items) {
        if (this.owner.has(i)) throw new RuleError(`item ${i} dealt twice`);
        this.owner.set(i, seat);
        batch.set(i, seat);
      }
    }
    for (let t = 0; t < this.n; t++) {
      const need = [...batch].filter(([, o]) => o !== t).map(([i]) => i).sort((a, b) => a - b);
      if (need.length) this.owed.push({ seat: t, step: "share", items: need });
    }
  }

  /** The hand's play is over: every seat owes its key, in seat order. */
  over(): void {
    for (let s = 0; s < this.n; s++) this.owed.push({ seat: s, step: "reveal_key", items: [] });
  }

  // -- openings ---------------------------------------------------------------------------
  /** The opening an action carries (item, share, proof), checked without changing anything:
   * the item is the seat's and unopened, its share verifies and the shares open it to
   * ``code``. Returns [item, the seat's share]. */
  checkOpen(seat: number, action: Action, code: string): [number, Uint8Array] {
    const item = parseItem(action["item"], this.items.length);
    const share = parseHex(action["share"], 32, "'share'");
    const proof = parseHex(action["proof"], 96, "'proof'");
    if (this.owner.get(item) !== seat) throw new RuleError(`item ${item} is not dealt to seat ${seat}`);
    if (this.opened.has(item)) throw new RuleError(`item ${item} is already open (${this.opened.get(item)!})`);
    this.checkShare(seat, item, share, proof);
    const others = this.shares.get(item) ?? new Map<number, Uint8Array>();
    const all = new Map(others).set(seat, share);
    for (let s = 0; s < this.n; s++) if (!all.has(s)) throw new RuleError(`item ${item} lacks the other seats' shares`);
    const D = Array.from({ length: this.n }, (_, s) => all.get(s)!);
    if (!sealed(() => opensTo(this.game, code, this.deck.items[item]!, D))) {
      throw new RuleError(`the shares do not open item ${item} to ${JSON.stringify(code)}`);
    }
    return [item, share];
  }

  commitOpen(seat: number, item: number, code: string, share: Uint8Array): void {
    this.addShare(item, seat, share);
    this.opened.set(item, code);
  }

  // -- the checks -----------------------------------------------------------------------------
  addKey(seat: number, key: Uint8Array, proof: Uint8Array): void {
    if (!this.ownStep) sealed(() => verifyKey(this.ctx(seat), key, proof));
    this.keys[seat] = key;
    if (this.keys.every((k) => k !== null)) this.handKey = sealed(() => handKey(this.allKeys()));
  }

  addShuffle(seat: number, deck: Uint8Array, proof: Uint8Array): void {
    if (this.handKey === null) throw new RuleError("a shuffle before every key is in");
    const hk = this.handKey;
    const n = this.deck.items.length;
    this.deck = sealed(() => (this.ownStep ? decodeDeck(deck, n) : verifyShuffle(this.ctx(seat), hk, this.deck, deck, proof)));
    this.shuffled.push(seat);
  }

  checkShare(seat: number, item: number, share: Uint8Array, proof: Uint8Array): void {
    if (this.ownStep) return;
    const key = this.allKeys()[seat]!;
    sealed(() => verifyShare(this.ctx(seat), key, this.deck.items[item]!, share, proof));
  }

  /** A share step's shares [item, D, proof], checked at once (``verifyShares``; the same
   * refusal for the first that fails). */
  checkShares(seat: number, shares: [number, Uint8Array, Uint8Array][]): void {
    if (this.ownStep) return;
    const key = this.allKeys()[seat]!;
    const got = shares.map(([i, D, proof]) => ({ c: this.deck.items[i]!, D, proof }));
    sealed(() => verifyShares(this.ctx(seat), key, got));
  }

  /** The seat's revealed key, checked; with every key in, the whole deck opened. True when
   * this was the last key. */
  reveal(seat: number, secret: Uint8Array): boolean {
    sealed(() => checkRevealed(this.allKeys()[seat]!, secret, seat));
    const revealed = [...this.revealed];
    revealed[seat] = secret;
    let codes: string[] | null = null;
    if (revealed.every((r) => r !== null)) codes = sealed(() => openDeck(this.game, this.items, this.deck, revealed as Uint8Array[], this.opened));
    this.revealed = revealed;
    if (codes === null) return false;
    this.codes = codes;
    return true;
  }

  addShare(item: number, seat: number, share: Uint8Array): void {
    let by = this.shares.get(item);
    if (by === undefined) this.shares.set(item, (by = new Map()));
    by.set(seat, share);
  }

  // -- a seat's step ---------------------------------------------------------------------------
  /** Check and apply ``seat``'s step (the first one owed). Returns the opening [item, code] of
   * an ``open`` step (checked, not applied), true when the last key of the hand is revealed,
   * else false. */
  step(seat: number, action: Action): [number, string] | boolean {
    const step = action["step"];
    if (typeof step !== "string" || !(STEPS as readonly string[]).includes(step)) {
      throw new RuleError(`a sealed step must be one of ${JSON.stringify(STEPS)}, got ${JSON.stringify(step)}`);
    }
    const owed = this.owed[0];
    if (owed === undefined) throw new RuleError("no sealed step is owed now");
    if (owed.step !== step) throw new RuleError(`seat ${seat} owes its sealed '${owed.step}' step, not '${step}'`);
    if (step === "key") {
      onlyKeys(action, "step", "key", "proof");
      this.addKey(seat, parseHex(action["key"], 32, "'key'"), parseHex(action["proof"], 64, "'proof'"));
    } else if (step === "shuffle") {
      onlyKeys(action, "step", "deck", "proof");
      const deck = parseB64(action["deck"], "'deck'");
      const proof = parseB64(action["proof"], "'proof'");
      if (deck.length !== this.deck.bytes.length) throw new RuleError(`'deck': ${this.items.length} items expected`);
      this.addShuffle(seat, deck, proof);
    } else if (step === "share") {
      onlyKeys(action, "step", "shares");
      const got = action["shares"];
      if (!Array.isArray(got) || !got.every((x) => x !== null && typeof x === "object" && !Array.isArray(x))) {
        throw new RuleError("'shares' must be a list of objects");
      }
      const list = got as { [k: string]: Json }[];
      if (JSON.stringify(list.map((x) => x["item"])) !== JSON.stringify(owed.items)) {
        throw new RuleError(`seat ${seat} owes shares of items ${JSON.stringify(owed.items)}, in that order`);
      }
      const parsed: [number, Uint8Array, Uint8Array][] = [];
      try {
        for (const x of list) {
          const extra = Object.keys(x).filter((k) => !["item", "share", "proof"].includes(k));
          if (extra.length) throw new RuleError(`unexpected field(s) ${extra.sort().join(", ")} in a share`);
          const i = x["item"] as number;
          const d = parseHex(x["share"], 32, `share of item ${i}`);
          const p = parseHex(x["proof"], 96, `share proof of item ${i}`);
          parsed.push([i, d, p]);
        }
      } catch (e) {
        this.checkShares(seat, parsed); // a bad proof before it is refused first
        throw e;
      }
      this.checkShares(seat, parsed);
      for (const [i, d] of parsed) this.addShare(i, seat, d);
    } else if (step === "open") {
      onlyKeys(action, "step", "item", "code", "share", "proof");
      const code = action["code"];
      if (typeof code !== "string" || !this.items.includes(code)) throw new RuleError(`'code' must be an item of this hand, got ${JSON.stringify(code)}`);
      if (!owed.items.includes(action["item"] as number)) throw new RuleError(`seat ${seat} owes the opening of items ${JSON.stringify(owed.items)}`);
      const [item] = this.checkOpen(seat, action, code);
      return [item, code];
    } else {
      onlyKeys(action, "step", "secret");
      const last = this.reveal(seat, parseHex(action["secret"], 32, "'secret'"));
      this.owed.shift();
      return last;
    }
    this.owed.shift();
    return false;
  }

  /** Apply an ``open`` step ``step`` checked. */
  commitOpenStep(seat: number, action: Action, item: number, code: string): void {
    this.commitOpen(seat, item, code, parseHex(action["share"], 32, "'share'"));
    this.owed.shift();
  }
}

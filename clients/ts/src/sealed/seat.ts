/** The conforming sealed seat (qahwa-fair/3, docs/spec/fairness-v3.md "The conforming sealed
 * seat"): a port of Python's games/sealed_seat.py with sealed/seat.py's ``SeatSecrets``, no I/O.
 *
 * The seat derives everything it sends from its own deal machine (``DealMachine``) over events
 * it has verified, never from a view's ``owed``, ``dealt``, ``hand`` or ``legal_actions``:
 *
 * - which step it owes, and whether it owes one at all, is its machine's ``owed``;
 * - the items it shares are the machine's owed items, each dealt to another seat;
 * - its hand is the machine's ``held`` items, named by what it learnt from the others' shares;
 * - its legal plays are the game's rules over its hidden hand (the machine's ``choices``);
 * - its key goes only when its machine says the hand's play is over (``reveal_key`` owed);
 * - no rule asks a seat for an ``open`` step: it never makes one.
 *
 * A view of the seat's turn is compared with its machine; a view that disagrees, a step its
 * machine does not owe and a log whose steps do not verify are refused (``SealedStepRefused``) and
 * reported to ``onDispute(kind, message, evidence)``. The code that makes a share refuses the
 * seat's own items, and the hand secret leaves only at the hand's end, whatever it is asked
 * (defence in depth). Each hand's secret is handed to ``keep`` as soon as it is made: the
 * client stores it before it sends anything that depends on it. */

import { toBase64 } from "../bytes.js";
import { canonical } from "../canonical.js";
import { ClientError } from "../errors.js";
import { RuleError } from "./deal.js";
import { type Context, type Randomness, G, SystemRandomness, enc, hex, itemTable, leToBig, mulSecret, scalarBytes } from "./group.js";
import { DealMachine } from "./machine.js";
import { type Ciphertext, makeKey, makeShare, ownItem, shuffle } from "./proofs.js";

/** What a sealed view leaves out when its seat asks for it brief (``sealed=brief``,
 * docs/api.md): the deck and the table of shares, which this seat's machine holds
 * (games.sealed_hand.LOG_HELD). */
export const LOG_HELD: readonly string[] = ["deck", "shares"];

type Obj = { [k: string]: unknown };

/** The seat refuses: the log or a view is not what its own machine says, or what it is asked
 * would give away one of its items or its key. Evidence against the server (a dispute). */
export class SealedStepRefused extends ClientError {
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}
Object.defineProperty(SealedStepRefused.prototype, "name", { value: "SealedStepRefused", writable: true, configurable: true });

export type OnDispute = (kind: string, message: string, evidence: Obj) => void;

export interface SealedSeatOptions {
  /** each hand's secret key already made (hand → 32-byte scalar hex), from storage */
  keys?: Record<string, string>;
  /** called with a hand's secret as soon as it is made (store it before sending) */
  keep?: (hand: number, secretHex: string) => void;
  onDispute?: OnDispute;
  rng?: Randomness;
}

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function short(v: unknown, size = 160): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length <= size ? text : text.slice(0, size - 1) + "…";
}

export class SealedSeat {
  private readonly secrets = new Map<number, bigint>();
  private readonly pubs = new Map<number, [bigint, Uint8Array]>();
  /** per hand, this seat's items learnt: item → code */
  private readonly own = new Map<number, Map<number, string>>();
  private table: [number, Map<string, string>] | null = null;
  private readonly rng: Randomness;

  constructor(
    readonly machine: DealMachine,
    readonly matchId: string,
    readonly seat: number,
    private readonly opts: SealedSeatOptions = {},
  ) {
    for (const [h, x] of Object.entries(opts.keys ?? {})) this.secrets.set(Number(h), leToBig(Uint8Array.from(x.match(/../g) ?? [], (b) => parseInt(b, 16))));
    this.rng = opts.rng ?? new SystemRandomness();
  }

  /** A seat over the network: its machine built from the match's signed public facts. */
  static follow(matchId: string, seat: number, game: string, ruleset: string | Obj, house: readonly number[], opts: SealedSeatOptions = {}): SealedSeat {
    let machine: DealMachine;
    try {
      machine = DealMachine.follow(matchId, game, typeof ruleset === "string" ? ruleset : JSON.stringify(ruleset), house);
    } catch (e) {
      if (e instanceof RuleError) throw new SealedStepRefused("sealed_log", `match ${matchId}: not a sealed match this seat can follow: ${e.message}`);
      throw e;
    }
    return new SealedSeat(machine, matchId, seat, opts);
  }

  /** The seq of the last event the machine applied. */
  get seen(): number {
    return this.machine.nextSeq - 1;
  }

  private refuse(kind: string, message: string, evidence: Obj): SealedStepRefused {
    const text = `match ${this.matchId}, seat ${this.seat}: ${message}`;
    this.opts.onDispute?.(kind, text, evidence);
    return new SealedStepRefused(kind, text);
  }

  private ctx(hand: number): Context {
    return { matchId: this.matchId, hand, seat: this.seat };
  }

  // -- the log ------------------------------------------------------------------------------
  /** The log's events (those after ``seen`` are applied): every step verified by the
   * machine; one that does not verify is refused (a ``sealed_log`` dispute). */
  takeEvents(events: readonly unknown[]): void {
    try {
      this.machine.feed(events);
    } catch (e) {
      if (e instanceof RuleError) throw this.refuse("sealed_log", `the log does not verify under the rules: ${e.message}`, { events: [...events] });
      throw e;
    }
  }

  // -- this seat's hand ----------------------------------------------------------------------
  private secret(hand: number): bigint {
    const x = this.secrets.get(hand);
    if (x === undefined) throw new ClientError(`seat ${this.seat} holds no key for hand ${hand}: act through the seat (or the storage) that made its key step`);
    return x;
  }

  /** This seat's items of the hand it has learnt (item → code): every item its machine says
   * is dealt to it, once every other seat's share of it is in the log. */
  ownItems(): Map<number, string> {
    const m = this.machine;
    const deal = m.started ? m.deal : null;
    if (deal === null) return new Map();
    let own = this.own.get(deal.number);
    if (own === undefined) this.own.set(deal.number, (own = new Map()));
    const mine = m.dealt(this.seat);
    if (own.size === mine.length || deal.shuffled.length !== deal.n || !this.secrets.has(deal.number)) return own;
    if (this.table === null || this.table[0] !== deal.number) this.table = [deal.number, itemTable(deal.game, deal.items)];
    for (const i of mine) {
      const got = deal.shares.get(i);
      if (own.has(i) || got === undefined) continue;
      const others: Uint8Array[] = [];
      for (let s = 0; s < deal.n; s++) if (s !== this.seat && got.has(s)) others.push(got.get(s)!);
      if (others.length === deal.n - 1) own.set(i, ownItem(deal.deck.items[i]!, this.secret(deal.number), others, this.table[1]));
    }
    return own;
  }

  // -- the view --------------------------------------------------------------------------------
  /** A view of this seat's turn (as the server sent it) against the machine: the hand, the
   * step owed, who holds what, this seat's hand, the turn and the legal actions an honest
   * server shows then (a ``sealed_view`` dispute when one disagrees). */
  checkView(raw: Obj): void {
    const m = this.machine;
    if (!m.started || raw["turn"] !== this.seat || raw["status"] !== "playing" || m.outcome !== null) return;
    const sv = isObj(raw["sealed"]) ? raw["sealed"] : {};
    const want: [string, unknown, unknown][] = [["turn", raw["turn"], m.turn]];
    // the whole sealed block (its limits aside: words computed from the public facts), the
    // deck and the shares only when sent (a brief view, sealed=brief, leaves out LOG_HELD)
    for (const [k, v] of Object.entries(m.sealedView() ?? {})) {
      if (!(LOG_HELD.includes(k) && !(k in sv))) want.push([`sealed.${k}`, sv[k], v]);
    }
    want.push(["hand", raw["hand"], [...m.held(this.seat)].sort((a, b) => a - b)], ["legal_actions", raw["legal_actions"], m.legal(this.seat)]);
    for (const [field, got, expected] of want) {
      if (canonical(got ?? null) !== canonical(expected)) {
        throw this.refuse("sealed_view", `the view disagrees with the log: ${field} is ${short(got)}, the log says ${short(expected)}`, { view: raw, log_seq: this.seen });
      }
    }
  }

  /** The seat's view: its hand by code and its legal actions in player form, both from its
   * machine (the view's ``hand`` and ``legal_actions`` are not believed). */
  view(raw: Obj): Obj {
    const m = this.machine;
    if (!m.started) return { ...raw, legal_actions: [], suggested_actions: [] };
    this.checkView(raw);
    const own = this.ownItems();
    const held = m.held(this.seat);
    const out: Obj = { ...raw, hand_items: held, hand: held.filter((i) => own.has(i)).map((i) => own.get(i)!) };
    // what each item of its hand is (a put-away names items: the page shows them as cards)
    out["item_codes"] = Object.fromEntries(held.filter((i) => own.has(i)).map((i) => [String(i), own.get(i)!]));
    const drawn = raw["drawn"];
    if (typeof drawn === "number" && own.has(drawn) && m.owner(drawn) === this.seat) out["drawn_card"] = own.get(drawn);
    const mine = raw["turn"] === this.seat && m.turn === this.seat;
    out["legal_actions"] = mine ? m.choices(this.seat, own) : [];
    // the bot's choices, from the machine as the legal ones (qahve: the lowest bids)
    if ("suggested_actions" in raw) out["suggested_actions"] = mine ? m.choices(this.seat, own, true) : [];
    return out;
  }

  // -- what is sent --------------------------------------------------------------------------------
  /** What is sent for a player-form ``action``: the deal step its machine says this seat owes
   * (``{"type": "sealed", "step": …}``, made here with its proofs), or a play with its
   * opening; anything its machine does not allow now is refused. */
  wire(action: Obj): Obj {
    const out = this.make(action);
    this.machine.made(this.seat, out);
    return out;
  }

  private make(action: Obj): Obj {
    const m = this.machine;
    if (!m.started || m.turn !== this.seat || m.outcome !== null) throw new ClientError(`seat ${this.seat} is not on turn (by the log)`);
    const owed = m.owedStep;
    const deal = m.deal!;
    if (action["type"] === "sealed") {
      const step = action["step"];
      if (owed === null || owed.step !== step || step === "open") {
        throw this.refuse("sealed_step", `asked for a sealed ${JSON.stringify(step)} step its machine does not owe (owed: ${JSON.stringify(m.owed)})`, {
          asked: action,
          owed: m.owed,
          log_seq: this.seen,
        });
      }
      if (Object.keys(action).some((k) => k !== "type" && k !== "step")) {
        throw new ClientError("a sealed step is made by the seat itself: send {\"type\": \"sealed\", \"step\": …} alone");
      }
      return this.step(owed.step, owed.items);
    }
    if (owed !== null) throw new ClientError(`the deal is under way: seat ${this.seat} owes its '${owed.step}'`);
    if ("share" in action || "secret" in action || "item" in action || "proof" in action) {
      throw this.refuse("sealed_step", `asked to send ${short(action)} (an opening or a secret its machine does not call for)`, { asked: action, log_seq: this.seen });
    }
    if (action["type"] === "play") {
      const own = this.ownItems();
      const code = action[m.itemField];
      const item = m.held(this.seat).find((i) => own.get(i) === code);
      if (item === undefined || deal.opened.has(item)) throw new ClientError(`${JSON.stringify(code)} is not in seat ${this.seat}'s hand`);
      return { ...action, ...this.opening(deal.number, item, deal.deck.items[item]!, m.dealt(this.seat)) };
    }
    return { ...action };
  }

  private step(step: string, items: readonly number[]): Obj {
    const m = this.machine;
    const deal = m.deal!;
    const hand = deal.number;
    if (step === "key") {
      // a key made before (its step lost on the way, or the page reloaded) is sent again,
      // with a fresh proof: the hand has one key for this seat
      let x = this.secrets.get(hand);
      if (x === undefined) {
        x = this.rng.scalar();
        this.secrets.set(hand, x);
        this.opts.keep?.(hand, hex(scalarBytes(x)));
      }
      const fresh = makeKeyWith(this.ctx(hand), x, this.rng);
      return { type: "sealed", step: "key", key: hex(fresh.P), proof: hex(fresh.proof) };
    }
    if (step === "shuffle") {
      const { deck, proof } = shuffle(this.ctx(hand), deal.handKey!, deal.deck, this.rng);
      return { type: "sealed", step: "shuffle", deck: toBase64(deck.bytes), proof: toBase64(proof) };
    }
    if (step === "share") {
      const mine = m.dealt(this.seat);
      return { type: "sealed", step: "share", shares: items.map((i) => this.share(hand, i, deal.deck.items[i]!, mine)) };
    }
    if (step === "reveal_key") return this.reveal(hand, m.playOver);
    throw this.refuse("sealed_step", `no rule asks a seat for a sealed ${JSON.stringify(step)} step`, { step, items: [...items], log_seq: this.seen });
  }

  // -- the secrets (sealed/seat.py SeatSecrets): each refuses what would give an item away ------
  /** This seat's share of another seat's ``item``; a share of one of its own is refused. */
  private share(hand: number, item: number, c: Ciphertext, mine: readonly number[]): Obj {
    if (mine.includes(item)) {
      throw this.refuse("sealed_step", `hand ${hand}: item ${item} is dealt to seat ${this.seat}: its share goes only in the item's opening, when the seat plays it`, {
        item,
        log_seq: this.seen,
      });
    }
    const sh = makeShare(this.ctx(hand), this.secret(hand), c, this.rng, this.publicKey(hand));
    return { item, share: hex(sh.D), proof: hex(sh.proof) };
  }

  /** The opening of this seat's own ``item`` as it plays it: its share and proof. */
  private opening(hand: number, item: number, c: Ciphertext, mine: readonly number[]): Obj {
    if (!mine.includes(item)) throw this.refuse("sealed_step", `hand ${hand}: item ${item} is not dealt to seat ${this.seat}`, { item, log_seq: this.seen });
    const sh = makeShare(this.ctx(hand), this.secret(hand), c, this.rng, this.publicKey(hand));
    return { item, share: hex(sh.D), proof: hex(sh.proof) };
  }

  /** The hand's public key x·G, computed once a hand. */
  private publicKey(hand: number): Uint8Array {
    const x = this.secret(hand);
    const known = this.pubs.get(hand);
    if (known !== undefined && known[0] === x) return known[1];
    const P = enc(mulSecret(x, G));
    this.pubs.set(hand, [x, P]);
    return P;
  }

  /** The hand's secret key: only once the hand's play is over. */
  private reveal(hand: number, playOver: boolean): Obj {
    if (!playOver) {
      throw this.refuse("sealed_step", `hand ${hand}: its play is not over: seat ${this.seat}'s key stays with it`, { hand, log_seq: this.seen });
    }
    return { type: "sealed", step: "reveal_key", secret: hex(scalarBytes(this.secret(hand))) };
  }
}

/** A key step for the secret ``x`` (made before): P = x·G and a fresh proof of knowledge
 * (makeKey draws the secret first, then the proof's nonce). */
function makeKeyWith(ctx: Context, x: bigint, rng: Randomness): { P: Uint8Array; proof: Uint8Array } {
  let first = true;
  const k = makeKey(ctx, {
    scalar: () => {
      if (!first) return rng.scalar();
      first = false;
      return x;
    },
    below: (n) => rng.below(n),
  });
  return { P: k.P, proof: k.proof };
}

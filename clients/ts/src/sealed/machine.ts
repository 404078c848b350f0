/** The deal machine of a sealed match, as a seat reads it (qahwa-fair/3, fairness-v3 §9a and
 * "The conforming sealed seat"): a port of Python's games/sealed_deal.py ``DealMachine`` over
 * the sealed engines of hokm (games/sealed_hokm.py), qahve (games/sealed_qahve.py) and Iraqi
 * dominoes (games/sealed_iraqi_domino.py), held to them by
 * tests/client/test_sealed_machine_ts.py.
 *
 * ``DealMachine.follow(matchId, game, ruleset, house)`` builds the machine from the match's
 * signed public facts; ``feed(events)`` applies the public event log, event by event (those
 * already applied are skipped by ``seq``), each step's proof verified before the machine
 * relies on it (a ``RuleError`` at the first event the rules or a proof refuse). What it
 * answers is derived from the verified log alone, never from a view: ``hand``, ``phase``,
 * ``owed``, ``owner(item)``, ``dealt(seat)``, ``held(seat)``, ``playOver``, ``turn`` and
 * ``choices(seat, own)`` (the seat's legal actions over its hidden hand, its items named by
 * ``own``: the games' rules over a hidden hand, as ``hidden_legal``). */

import { toBase64 } from "../bytes.js";
import { canonical } from "../canonical.js";
import { type Action, Deal, type Json, type Owed, RuleError, onlyKeys, owedJson, parseItem } from "./deal.js";
import { hex } from "./group.js";

export const PHASES = ["keys", "shuffles", "shares", "play", "reveal", "over"] as const;
const PHASE_OF_STEP: Record<string, string> = { key: "keys", shuffle: "shuffles", share: "shares", open: "play", reveal_key: "reveal" };

// -- cards -------------------------------------------------------------------------------------
const RANKS = "23456789TJQKA";
const SUITS = "CDHS";
export const DECK52: readonly string[] = [...SUITS].flatMap((s) => [...RANKS].map((r) => r + s));
const CARDS = new Set(DECK52);

const JOKERS = ["JB", "JR"];

/** A card's suit letter (null for a joker). */
function suitOf(card: string): string | null {
  return JOKERS.includes(card) ? null : card[1]!;
}

/** Why ``card`` from ``hand`` breaks follow suit when ``led`` was led (null: it does not); a
 * joker may be played whatever was led. */
export function followReason(hand: readonly string[], card: string, led: string | null): string | null {
  if (led === null || JOKERS.includes(card) || suitOf(card) === led) return null;
  if (hand.some((c) => suitOf(c) === led)) return `you must follow suit: ${led} was led and you still hold ${led}`;
  return null;
}

/** The seat that wins a trick (games/cards.py ``trick_winner``): by each card's strength — a
 * joker (in ``jokerOrder``) above a trump above the led suit (a led joker leads no suit: the
 * first suited card's suit is led). */
function trickWinner(plays: [number, string][], trump: string | null, reverse: boolean, jokerOrder: readonly string[] = []): number {
  let led = suitOf(plays[0]![1]);
  if (led === null) led = plays.map(([, c]) => suitOf(c)).find((x) => x !== null) ?? null;
  const strength = (card: string): [number, number] => {
    if (JOKERS.includes(card)) return [3, jokerOrder.indexOf(card)];
    let r = RANKS.indexOf(card[0]!);
    if (reverse) r = 12 - r;
    const s = suitOf(card);
    if (trump !== null && s === trump) return [2, r];
    if (s === led) return [1, r];
    return [0, 0];
  };
  let [bestSeat, bestCard] = plays[0]!;
  let best = strength(bestCard);
  for (const [seat, card] of plays.slice(1)) {
    const st = strength(card);
    if (st[0] > best[0] || (st[0] === best[0] && st[1] > best[1])) [bestSeat, bestCard, best] = [seat, card, st];
  }
  return bestSeat;
}

function combinations<T>(xs: readonly T[], k: number): T[][] {
  const out: T[][] = [];
  const pick = (start: number, acc: T[]): void => {
    if (acc.length === k) {
      out.push([...acc]);
      return;
    }
    for (let i = start; i < xs.length; i++) pick(i + 1, [...acc, xs[i]!]);
  };
  pick(0, []);
  return out;
}

// -- tiles -------------------------------------------------------------------------------------
export function tiles(m: number): string[] {
  const out: string[] = [];
  for (let a = 0; a <= m; a++) for (let b = a; b <= m; b++) out.push(`${a}-${b}`);
  return out;
}

function parseTile(code: string): [number, number] {
  const m = /^(\d+)-(\d+)$/.exec(code);
  const [a, b] = m === null ? [-1, -1] : [Number(m[1]), Number(m[2])];
  if (m === null || a > b || `${a}-${b}` !== code) throw new RuleError(`not a canonical tile code: ${JSON.stringify(code)}`);
  return [a, b];
}

function hasNumber(tile: string, n: number): boolean {
  return parseTile(tile).includes(n);
}

function pipsOf(tile: string): number {
  const [a, b] = parseTile(tile);
  return a + b;
}

function orient(tile: string, n: number): [number, number] {
  const [a, b] = parseTile(tile);
  if (a === n) return [n, b];
  if (b === n) return [n, a];
  throw new RuleError(`tile ${tile} does not match ${n}`);
}

function openingRank(tile: string): [number, number, number] {
  const [a, b] = parseTile(tile);
  return [a === b ? 1 : 0, a + b, Math.max(a, b)];
}

function cmp3(x: [number, number, number], y: [number, number, number]): number {
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/** The tiles the opening call names, in order: the doubles from 6-6 down, then the others
 * heaviest first (equal pips: the higher end first). */
export const CALL_ORDER: readonly string[] = tiles(6).sort((x, y) => cmp3(openingRank(y), openingRank(x)));

function roundToNearest(points: number, step: number): number {
  if (step <= 1) return points;
  const low = points - (points % step);
  return 2 * (points % step) >= step ? low + step : low;
}

function targetWinner(scores: number[], target: number): number | null {
  const reached = scores.map((s, i) => [s, i] as const).filter(([s]) => s >= target);
  if (!reached.length) return null;
  const best = Math.max(...reached.map(([s]) => s));
  const top = reached.filter(([s]) => s === best);
  return top.length === 1 ? top[0]![1] : null;
}

// -- rulesets ----------------------------------------------------------------------------------
type Ruleset = { [k: string]: Json };

function intRule(r: Ruleset, name: string, dflt: number, lo: number, hi: number): number {
  const v = r[name] ?? dflt;
  if (typeof v !== "number" || !Number.isInteger(v) || v < lo || v > hi) throw new RuleError(`ruleset: '${name}' must be an integer ${lo} to ${hi}`);
  return v;
}

// -- the sealed engines --------------------------------------------------------------------------
export interface Outcome {
  reason: string;
  seats: number[];
}

/** What both sealed engines share (games/sealed_base.py ``SealedGame``). */
abstract class SealedEngine {
  abstract readonly game: string;
  abstract readonly itemField: string;
  abstract readonly actionTypes: readonly string[];
  sealed: Deal | null = null;
  hands = 0;
  /** the items in each seat's hand (positions; codes once a domino round is scored) */
  handsOf: (number | string)[][] = [];
  outcome: Outcome | null = null;
  /** events the rules write next (a breach's end) */
  pending: { [k: string]: Json }[] = [];
  scores: number[] = [];

  constructor(
    readonly matchId: string,
    readonly n: number,
    readonly house: readonly number[],
    readonly partners: boolean,
  ) {}

  sideOf(seat: number): number {
    return this.partners && this.n === 4 ? seat % 2 : seat;
  }

  get nSides(): number {
    return this.partners && this.n === 4 ? 2 : this.n;
  }

  seatsOf(side: number): number[] {
    return Array.from({ length: this.n }, (_, s) => s).filter((s) => this.sideOf(s) === side);
  }

  get owed(): Owed[] {
    return this.sealed?.owed ?? [];
  }

  hand(): Deal {
    if (this.sealed === null) throw new RuleError("no sealed hand");
    return this.sealed;
  }

  beginHand(items: readonly string[]): number[] {
    this.sealed = new Deal(this.matchId, this.hands++, this.game, items, this.n, this.house);
    return items.map((_, i) => i);
  }

  held(seat: number): number[] {
    return this.handsOf[seat]!.filter((p): p is number => typeof p === "number").sort((a, b) => a - b);
  }

  unopened(seat: number): number[] {
    const opened = this.hand().opened;
    return this.held(seat).filter((i) => !opened.has(i));
  }

  get turn(): number | null {
    if (this.outcome !== null) return null;
    const o = this.owed[0];
    return o !== undefined ? o.seat : this.gameTurn();
  }

  legalActions(seat: number): Action[] {
    if (this.outcome !== null || seat !== this.turn) return [];
    const o = this.owed[0];
    if (o !== undefined) return [{ type: "sealed", step: o.step }];
    return this.playLegal(seat);
  }

  apply(seat: unknown, action: unknown): void {
    if (this.outcome !== null) throw new RuleError("the match has ended");
    if (typeof seat !== "number" || !Number.isInteger(seat) || seat < 0 || seat >= this.n) throw new RuleError(`no seat ${JSON.stringify(seat)}`);
    if (action === null || typeof action !== "object" || Array.isArray(action)) throw new RuleError("an action must be an object");
    const act = action as Action;
    const t = act["type"];
    if (typeof t !== "string" || !this.actionTypes.includes(t)) throw new RuleError(`unknown action type ${JSON.stringify(t)}`);
    if (this.turn !== seat) throw new RuleError(`it is seat ${this.turn}'s turn, not seat ${seat}'s`);
    if (t === "sealed") {
      this.applyStep(seat, act);
      return;
    }
    const o = this.owed[0];
    if (o !== undefined) throw new RuleError(`the deal is under way: seat ${o.seat} owes its sealed '${o.step}' step`);
    this.gameApply(seat, act);
  }

  private applyStep(seat: number, action: Action): void {
    const hand = this.hand();
    const done = hand.step(seat, action);
    if (Array.isArray(done)) {
      throw new RuleError("this game opens items only by playing them");
    } else if (done) {
      const breach = this.breach(hand.codes!);
      if (breach !== null) {
        this.outcome = { reason: "rule", seats: [breach] };
        this.pending.push({ type: "end", reason: "rule", seat: breach });
      } else {
        this.afterReveal();
      }
    }
  }

  /** A play of the item the action opens to ``code``: checked, committed, out of the hand.
   * Returns [the item, the items the seat held before]. */
  playItem(seat: number, action: Action, code: string): [number, number[]] {
    const deal = this.hand();
    const [item, share] = deal.checkOpen(seat, action, code);
    const at = this.handsOf[seat]!.indexOf(item);
    if (at < 0) throw new RuleError(`item ${item} is not in seat ${seat}'s hand`);
    const held = this.held(seat);
    deal.commitOpen(seat, item, code, share);
    this.handsOf[seat]!.splice(at, 1);
    return [item, held];
  }

  finishAtTarget(target: number): boolean {
    const side = targetWinner(this.scores, target);
    if (side !== null) this.outcome = { reason: "played", seats: this.seatsOf(side) };
    return side !== null;
  }

  /** What a random bot picks from (Python's ``bot_actions``): a non-empty subset of the
   * legal actions, every one unless a game narrows it (qahve's lowest bids). */
  botActions(seat: number): Action[] {
    return this.legalActions(seat);
  }

  /** The seat's legal actions in player form, its items named by ``own`` (item → code): the
   * game's rules over its hidden hand (Python's ``hidden_legal``). With ``bot``, the same
   * over ``botActions`` (what a seat's view suggests), or all of them when that leaves none. */
  hiddenLegal(seat: number, own: ReadonlyMap<number, string>, bot = false): Action[] {
    const picks = bot ? this.hidden(seat, own, this.botActions(seat)) : [];
    return picks.length ? picks : this.hidden(seat, own, this.legalActions(seat));
  }

  private hidden(seat: number, own: ReadonlyMap<number, string>, legal: Action[]): Action[] {
    if (this.owed.length || !legal.length) return legal;
    const hand = new Map<number, string>();
    for (const i of this.held(seat)) if (own.has(i)) hand.set(i, own.get(i)!);
    const out: Action[] = [];
    for (const a of legal) {
      if (a["type"] === "play" && "item" in a) {
        const code = hand.get(a["item"] as number);
        if (code === undefined) continue;
        const named: Action = { type: "play", [this.itemField]: code };
        for (const [k, v] of Object.entries(a)) if (k !== "type" && k !== "item") named[k] = v;
        if (this.mayPlay(seat, named, code, hand)) out.push(named);
      } else if (this.mayDo(seat, a, hand)) {
        out.push({ ...a });
      }
    }
    return out;
  }

  protected mayPlay(_seat: number, _action: Action, _code: string, _hand: ReadonlyMap<number, string>): boolean {
    return true;
  }

  protected mayDo(_seat: number, _action: Action, _hand: ReadonlyMap<number, string>): boolean {
    return true;
  }

  abstract gameTurn(): number | null;
  abstract playLegal(seat: number): Action[];
  abstract gameApply(seat: number, action: Action): void;
  abstract breach(codes: string[]): number | null;
  abstract afterReveal(): void;
}

const PLAY = "play";

/** Sealed hokm for 4, 3 or 2 players (games/sealed_hokm.py over games/hokm.py). */
class SealedHokm extends SealedEngine {
  readonly game = "hokm";
  readonly itemField = "card";
  readonly actionTypes = ["sealed", "trump", "draw", "discard", "play"];
  readonly target: number;
  readonly narsRule: boolean;
  hakem: number;
  handNumber = -1;
  deckLen = 0;
  rest: number[][] = [];
  stock: number[] = [];
  thrown: number[][] = [];
  trump: string | null = null;
  nars = false;
  phase = "trump";
  trick: { leader: number; plays: [number, string][] } = { leader: 0, plays: [] };
  tricks: number[] = [];
  /** (seat, item, led suit, the items held then) of every play of the hand */
  plays: [number, number, string | null, number[]][] = [];
  scored: [number[], number | null] | null = null;

  constructor(matchId: string, ruleset: Ruleset, house: readonly number[], hakemDraw: unknown) {
    const players = intRule(ruleset, "players", 4, 2, 4);
    super(matchId, players, house, true);
    this.target = intRule(ruleset, "target", 7, 1, 99);
    const nars = ruleset["nars"] ?? false;
    if (typeof nars !== "boolean") throw new RuleError("ruleset: 'nars' must be true or false");
    this.narsRule = nars;
    this.scores = new Array<number>(this.nSides).fill(0);
    const deck = hokmDeck(players);
    if (!Array.isArray(hakemDraw) || JSON.stringify([...hakemDraw].map(String).sort()) !== JSON.stringify([...deck].sort()) || hakemDraw.length !== deck.length) {
      throw new RuleError("the log's shuffle at 'hakem' is not of its items");
    }
    const ace = (hakemDraw as string[]).findIndex((c) => c[0] === "A");
    this.hakem = ace % players;
    this.startHand();
  }

  get led(): string | null {
    const first = this.trick.plays[0];
    return first === undefined ? null : suitOf(first[1]);
  }

  startHand(): void {
    this.plays = [];
    this.scored = null;
    this.handNumber += 1;
    const items = hokmDeck(this.n);
    const deck = this.beginHand(items);
    this.deckLen = deck.length;
    this.thrown = Array.from({ length: this.n }, () => []);
    this.trump = null;
    this.nars = false;
    this.trick = { leader: this.hakem, plays: [] };
    this.tricks = new Array<number>(this.n).fill(0);
    // hokm_deal: packets from the hakem (two players: 5 each, the rest a stock)
    const rounds = this.n === 4 ? [5, 4, 4] : this.n === 3 ? [5, 4, 4, 4] : [5];
    const got: number[][] = Array.from({ length: this.n }, () => []);
    let pos = 0;
    for (const size of rounds) {
      for (let i = 0; i < this.n; i++) {
        got[(this.hakem + i) % this.n]!.push(...deck.slice(pos, pos + size));
        pos += size;
      }
    }
    this.handsOf = got.map((h) => h.slice(0, 5));
    this.rest = got.map((h) => h.slice(5));
    this.stock = deck.slice(pos);
    this.phase = "trump";
    this.hand().deal(this.handsOf.map((h, s) => [s, h as number[]]));
  }

  get other(): number {
    return (this.hakem + 1) % this.n;
  }

  drawSeat(): number {
    const done = Math.floor((this.deckLen - 10 - this.stock.length) / 2);
    return done % 2 === 0 ? this.hakem : this.other;
  }

  discardSize(seat: number): number {
    return this.handsOf[seat]!.length - (this.n === 3 ? 17 : 13);
  }

  gameTurn(): number | null {
    if (this.phase === "trump") return this.hakem;
    if (this.phase === "draw") return this.drawSeat();
    if (this.phase === "discard") return this.handsOf[this.hakem]!.length > 13 ? this.hakem : this.other;
    return (this.trick.leader + this.trick.plays.length) % this.n;
  }

  playLegal(seat: number): Action[] {
    if (this.phase === PLAY) return this.unopened(seat).map((i) => ({ type: "play", item: i }));
    if (this.phase === "discard") return combinations(this.held(seat), this.discardSize(seat)).map((c) => ({ type: "discard", items: c }));
    if (this.phase === "trump") {
      const out: Action[] = [...SUITS].map((s) => ({ type: "trump", suit: s }));
      if (this.narsRule) out.push(...[...SUITS].map((s) => ({ type: "trump", suit: s, nars: true })));
      return out;
    }
    return [
      { type: "draw", keep: true },
      { type: "draw", keep: false },
    ];
  }

  protected override mayPlay(_seat: number, _action: Action, code: string, hand: ReadonlyMap<number, string>): boolean {
    return followReason([...hand.values()], code, this.led) === null;
  }

  private need(phase: string, what: string): void {
    if (this.phase !== phase) throw new RuleError(`no ${what} now`);
  }

  gameApply(seat: number, action: Action): void {
    const kind = action["type"];
    if (kind === "trump") {
      onlyKeys(action, "suit", "nars");
      const s = action["suit"];
      if (typeof s !== "string" || s.length !== 1 || !SUITS.includes(s)) throw new RuleError(`'suit' must be one of C, D, H, S, got ${JSON.stringify(s)}`);
      const nars = action["nars"] ?? false;
      if (typeof nars !== "boolean") throw new RuleError("'nars' must be true or false");
      this.need("trump", "trump call");
      if (nars && !this.narsRule) throw new RuleError("this ruleset does not allow nars");
      const rest = this.rest.map((r) => [...r]);
      this.trump = s;
      this.nars = nars;
      this.handsOf.forEach((h, i) => h.push(...this.rest[i]!));
      this.rest = this.rest.map(() => []);
      this.phase = this.n === 2 ? "draw" : PLAY;
      if (rest.some((r) => r.length)) this.hand().deal(rest.map((r, i) => [i, r]));
      if (this.phase === "draw") this.hand().deal([[this.drawSeat(), [this.stock[0]!]]]);
    } else if (kind === "draw") {
      onlyKeys(action, "keep");
      const keep = action["keep"];
      if (typeof keep !== "boolean") throw new RuleError("a draw needs 'keep': true or false");
      this.need("draw", "draw");
      const [first, second] = [this.stock[0]!, this.stock[1]!];
      const [taken, thrown] = keep ? [first, second] : [second, first];
      this.stock.splice(0, 2);
      this.handsOf[seat]!.push(taken);
      this.thrown[seat]!.push(thrown);
      if (!this.stock.length) this.phase = "discard";
      if (!keep) this.hand().deal([[seat, [taken]]]);
      if (this.stock.length) this.hand().deal([[this.drawSeat(), [this.stock[0]!]]]);
    } else if (kind === "discard") {
      onlyKeys(action, "items");
      const raw = action["items"];
      if (!Array.isArray(raw)) throw new RuleError("'items' must be a list of item positions");
      const items = raw.map((i) => parseItem(i, this.hand().items.length, "an item of 'items'"));
      if (new Set(items).size !== items.length) throw new RuleError("'items' names the same item twice");
      this.need("discard", "discard");
      const size = this.discardSize(seat);
      if (items.length !== size) throw new RuleError(`lay away exactly ${size} items, got ${items.length}`);
      const missing = items.filter((i) => !this.handsOf[seat]!.includes(i));
      if (missing.length) throw new RuleError(`not in your hand: items ${JSON.stringify(missing)}`);
      this.handsOf[seat] = this.handsOf[seat]!.filter((c) => !items.includes(c as number));
      this.thrown[seat]!.push(...items);
      if (this.handsOf.every((h) => h.length === 13)) {
        this.phase = PLAY;
        this.trick = { leader: this.hakem, plays: [] };
      }
    } else {
      onlyKeys(action, "item", "card", "share", "proof");
      const card = action["card"];
      if (typeof card !== "string" || !CARDS.has(card)) throw new RuleError(`'card' must be a card code such as 'AS', got ${JSON.stringify(card)}`);
      if (!this.hand().items.includes(card)) throw new RuleError(`${card} is not in this deck`);
      this.need(PLAY, "card play");
      const led = this.led;
      const [item, held] = this.playItem(seat, action, card);
      this.plays.push([seat, item, led, held]);
      this.trick.plays.push([seat, card]);
      if (this.trick.plays.length === this.n) this.finishTrick();
    }
  }

  private finishTrick(): void {
    const winner = trickWinner(this.trick.plays, this.trump, this.nars);
    this.tricks[winner]! += 1;
    this.trick = { leader: winner, plays: [] };
    const side = new Array<number>(this.nSides).fill(0);
    this.tricks.forEach((t, s) => (side[this.sideOf(s)]! += t));
    const best = Math.max(...side);
    if (best >= 7) this.finishHand(side, side.indexOf(best));
    else if (!this.handsOf[winner]!.length) this.finishHand(side, null);
  }

  private finishHand(tricks: number[], winner: number | null): void {
    this.scored = [tricks, winner];
    this.phase = PLAY;
    this.hand().over();
  }

  breach(codes: string[]): number | null {
    for (const [seat, item, led, held] of this.plays) {
      if (followReason(held.map((i) => codes[i]!), codes[item]!, led) !== null) return seat;
    }
    return null;
  }

  afterReveal(): void {
    const [tricks, winner] = this.scored!;
    this.scored = null;
    const hakemSide = this.sideOf(this.hakem);
    const kot = winner !== null && tricks.every((t, i) => i === winner || t === 0);
    const hakemKot = kot && winner !== hakemSide;
    const points = winner === null ? 0 : kot ? (hakemKot ? 3 : 2) : 1;
    if (winner !== null) this.scores[winner]! += points;
    if (winner !== hakemSide) this.hakem = (this.hakem + 1) % this.n;
    if (!this.finishAtTarget(this.target)) this.startHand();
  }
}

/** Sealed qahve (games/sealed_qahve.py over games/qahve.py): four seats, partners 0 & 2 and
 * 1 & 3; the deck without 2D and 2H, with the jokers JB and JR; spades always trump. */
class SealedQahve extends SealedEngine {
  readonly game = "qahve";
  readonly itemField = "card";
  readonly actionTypes = ["sealed", "bid", "play"];
  readonly target: number;
  readonly minBid: number;
  dealer: number;
  phase = "bid";
  bids: (number | null)[] = [];
  trick: { leader: number; plays: [number, string][] } = { leader: 0, plays: [] };
  tricks: number[] = [];
  jbPlayed = false;
  plays: [number, number, string | null, number[], number][] = [];

  constructor(matchId: string, ruleset: Ruleset, house: readonly number[], dealerDraw: unknown) {
    super(matchId, 4, house, true);
    this.target = intRule(ruleset, "target", 501, 1, 100000);
    this.minBid = intRule(ruleset, "min_bid", 2, 1, 6);
    this.scores = [0, 0];
    if (typeof dealerDraw !== "number" || !Number.isInteger(dealerDraw) || dealerDraw < 0 || dealerDraw >= 4) {
      throw new RuleError("the log's draw at 'dealer' is out of range");
    }
    this.dealer = dealerDraw;
    this.startHand();
  }

  get firstSeat(): number {
    return (this.dealer + 1) % 4;
  }

  get led(): string | null {
    const first = this.trick.plays[0];
    return first === undefined ? null : suitOf(first[1]);
  }

  get done(): number {
    return this.tricks.reduce((a, b) => a + b, 0);
  }

  startHand(): void {
    this.plays = [];
    const deck = this.beginHand(QAHVE_DECK);
    const got: number[][] = [[], [], [], []];
    let pos = 0;
    for (const size of [5, 4, 4]) {
      for (let i = 0; i < 4; i++) {
        got[(this.firstSeat + i) % 4]!.push(...deck.slice(pos, pos + size));
        pos += size;
      }
    }
    this.handsOf = got;
    this.bids = [null, null, null, null];
    this.trick = { leader: this.firstSeat, plays: [] };
    this.tricks = [0, 0, 0, 0];
    this.jbPlayed = false;
    this.phase = "bid";
    this.hand().deal(got.map((h, s) => [s, h]));
  }

  gameTurn(): number {
    if (this.phase === "bid") return (this.firstSeat + this.bids.filter((b) => b !== null).length) % 4;
    return (this.trick.leader + this.trick.plays.length) % 4;
  }

  playLegal(seat: number): Action[] {
    if (this.phase === PLAY) return this.unopened(seat).map((i) => ({ type: "play", item: i }));
    const out: Action[] = [];
    for (let n = this.minBid; n <= 13; n++) out.push({ type: "bid", tricks: n });
    return out;
  }

  /** Every play, but of the bids only the two lowest, and of those only bids of at most 3
   * tricks when there is one (games/qahve.py ``bot_actions``: random bids up to 13 make
   * contracts no side can make, and a match wanders below zero). */
  override botActions(seat: number): Action[] {
    const legal = this.legalActions(seat);
    if (this.phase !== "bid" || this.owed.length) return legal;
    const low = legal.slice(0, 2).filter((a) => ((a["tricks"] as number | undefined) ?? 0) <= 3);
    return low.length ? low : legal.slice(0, 1);
  }

  private broke(hand: readonly string[], card: string, done: number): boolean {
    return hand.includes("JB") && done === 9 && card !== "JB";
  }

  protected override mayPlay(_seat: number, _action: Action, code: string, hand: ReadonlyMap<number, string>): boolean {
    if (code === "JR" && !this.jbPlayed) return false;
    const held = [...hand.values()];
    return !this.broke(held, code, Math.floor(this.plays.length / 4)) && followReason(held, code, this.led) === null;
  }

  gameApply(seat: number, action: Action): void {
    if (action["type"] === "bid") {
      onlyKeys(action, "tricks");
      const n = action["tricks"];
      if (typeof n !== "number" || !Number.isInteger(n)) throw new RuleError("a bid needs an integer 'tricks'");
      if (this.phase !== "bid") throw new RuleError("bidding is over for this hand");
      if (n < this.minBid || n > 13) throw new RuleError(`a bid must be ${this.minBid} to 13 tricks, got ${n}`);
      this.bids[seat] = n;
      if (this.bids.every((b) => b !== null)) {
        this.phase = PLAY;
        this.trick = { leader: this.firstSeat, plays: [] };
      }
      return;
    }
    onlyKeys(action, "item", "card", "share", "proof");
    const card = action["card"];
    if (typeof card !== "string" || !(CARDS.has(card) || JOKERS.includes(card)) || card === "2D" || card === "2H") {
      throw new RuleError(`'card' must be a card code of the qahve deck such as 'AS' or 'JB', got ${JSON.stringify(card)}`);
    }
    if (this.phase === "bid") throw new RuleError("every seat must bid before the first trick");
    if (card === "JR" && !this.jbPlayed) throw new RuleError("JR may not be played until JB has been played");
    const done = Math.floor(this.plays.length / 4);
    const led = this.led;
    const [item, held] = this.playItem(seat, action, card);
    this.plays.push([seat, item, led, held, done]);
    this.trick.plays.push([seat, card]);
    if (card === "JB") this.jbPlayed = true;
    if (this.trick.plays.length === 4) {
      const winner = trickWinner(this.trick.plays, "S", false, ["JB", "JR"]);
      this.tricks[winner]! += 1;
      this.trick = { leader: winner, plays: [] };
      if (this.done === 13) this.hand().over();
    }
  }

  breach(codes: string[]): number | null {
    for (const [seat, item, led, held, done] of this.plays) {
      const hand = held.map((i) => codes[i]!);
      if (this.broke(hand, codes[item]!, done) || followReason(hand, codes[item]!, led) !== null) return seat;
    }
    return null;
  }

  afterReveal(): void {
    const bids = this.bids.map((b) => b ?? 0);
    const contracts = [bids[0]! + bids[2]!, bids[1]! + bids[3]!];
    const side = [this.tricks[0]! + this.tricks[2]!, this.tricks[1]! + this.tricks[3]!];
    for (let i = 0; i < 2; i++) {
      const c = contracts[i]!;
      this.scores[i]! += side[i]! >= c ? 10 * c + (side[i]! - c) : -10 * c;
    }
    const d = this.sideOf(this.dealer);
    if (this.scores[d]! > this.scores[1 - d]!) this.dealer = (this.dealer + 1) % 4;
    if (!this.finishAtTarget(this.target)) this.startHand();
  }
}

/** qahve's deck: deck52 without 2D and 2H, then JB and JR. */
const QAHVE_DECK: readonly string[] = [...DECK52.filter((c) => c !== "2D" && c !== "2H"), "JB", "JR"];

function hokmDeck(n: number): string[] {
  return n === 3 ? DECK52.filter((c) => c !== "2C") : [...DECK52];
}

/** Sealed Iraqi dominoes for 2, 3 or 4 players (games/sealed_iraqi_domino.py over
 * games/iraqi_domino.py). */
class SealedIraqiDomino extends SealedEngine {
  readonly game = "iraqi_domino";
  readonly itemField = "tile";
  readonly actionTypes = ["sealed", "play", "draw", "pass"];
  readonly target: number;
  readonly roundTo: number;
  round = -1;
  pile: number[] = [];
  line: [number, number][] = [];
  left = -1;
  right = -1;
  playsCount = 0;
  lastPlay: number[] = [];
  opener = 0;
  current = 0;
  call: number | null = null;
  passes = 0;
  checks: [string, number, number[], [number, number] | string][] = [];
  ended: [string, number | null] | null = null;

  constructor(matchId: string, ruleset: Ruleset, house: readonly number[]) {
    const players = intRule(ruleset, "players", 4, 2, 4);
    super(matchId, players, house, true);
    this.target = intRule(ruleset, "target", 151, 1, 10000);
    this.roundTo = intRule(ruleset, "round_to", 5, 1, 50);
    this.scores = new Array<number>(this.nSides).fill(0);
    this.startRound(null);
  }

  startRound(opener: number | null): void {
    this.round += 1;
    const deck = this.beginHand(tiles(6));
    this.handsOf = Array.from({ length: this.n }, (_, s) => deck.slice(7 * s, 7 * s + 7));
    this.pile = deck.slice(7 * this.n);
    this.hand().deal(this.handsOf.map((h, s) => [s, h as number[]]));
    this.checks = [];
    this.ended = null;
    this.line = [];
    this.left = this.right = -1;
    this.playsCount = 0;
    this.lastPlay = new Array<number>(this.n).fill(-1);
    this.passes = 0;
    this.call = opener === null ? 0 : null;
    this.opener = this.current = opener ?? 0;
  }

  endNumber(end: string): number {
    return end === "left" ? this.left : this.right;
  }

  gameTurn(): number {
    return this.current;
  }

  playLegal(seat: number): Action[] {
    const mine = this.unopened(seat);
    if (this.call !== null) return [...mine.map((i) => ({ type: "play", item: i })), { type: "pass" }];
    if (!this.line.length) return mine.map((i) => ({ type: "play", item: i }));
    const plays: Action[] = mine.flatMap((i) => ["left", "right"].map((e) => ({ type: "play", item: i, end: e })));
    return [...plays, { type: this.pile.length ? "draw" : "pass" }];
  }

  protected override mayPlay(_seat: number, action: Action, code: string): boolean {
    if (this.call !== null) return code === CALL_ORDER[this.call];
    const end = action["end"];
    return typeof end !== "string" || hasNumber(code, this.endNumber(end));
  }

  protected override mayDo(_seat: number, action: Action, hand: ReadonlyMap<number, string>): boolean {
    if (this.call !== null) return ![...hand.values()].includes(CALL_ORDER[this.call]!);
    if ((action["type"] === "draw" || action["type"] === "pass") && this.line.length) {
      return ![...hand.values()].some((t) => hasNumber(t, this.left) || hasNumber(t, this.right));
    }
    return true;
  }

  gameApply(seat: number, action: Action): void {
    if (action["type"] === "play") {
      this.sealedPlay(seat, action);
      return;
    }
    onlyKeys(action);
    if (action["type"] === "draw") {
      if (this.call !== null || !this.line.length) throw new RuleError("no draw now: the round is being opened");
      if (!this.pile.length) throw new RuleError("the draw pile is empty: pass instead");
      this.checks.push(["draw", seat, this.held(seat), [this.left, this.right]]);
      const taken = this.pile.shift()!;
      this.handsOf[seat]!.push(taken);
      this.hand().deal([[seat, [taken]]]);
      this.passes = 0;
      return;
    }
    if (this.call !== null) {
      const nxt = (seat + 1) % this.n;
      if (nxt === 0 && this.call + 1 >= CALL_ORDER.length) throw new RuleError("every tile was called: someone holds one");
      this.checks.push(["call", seat, this.held(seat), CALL_ORDER[this.call]!]);
      if (nxt === 0) this.call += 1;
      this.current = nxt;
      return;
    }
    if (!this.line.length) throw new RuleError("the opener must lay a tile");
    if (this.pile.length) throw new RuleError("you cannot play: draw from the pile first");
    this.checks.push(["pass", seat, this.held(seat), [this.left, this.right]]);
    this.passes += 1;
    this.current = (seat + 1) % this.n;
    if (this.passes === this.n) this.endRound("blocked", null);
  }

  private sealedPlay(seat: number, action: Action): void {
    onlyKeys(action, "item", "tile", "end", "share", "proof");
    const tile = action["tile"];
    if (typeof tile !== "string") throw new RuleError(`a tile must be a string like '3-5', got ${JSON.stringify(tile)}`);
    const [, b] = parseTile(tile);
    if (b > 6) throw new RuleError(`no tile ${tile} in a double-6 set`);
    let end: string | null = null;
    if (!this.line.length) {
      if ("end" in action) throw new RuleError("the first tile of a round takes no 'end'");
    } else {
      const e = action["end"];
      if (e !== "left" && e !== "right") throw new RuleError("'end' must be \"left\" or \"right\"");
      end = e;
    }
    if (this.call !== null && tile !== CALL_ORDER[this.call]) throw new RuleError(`the call is for ${CALL_ORDER[this.call]!}, not ${tile}`);
    if (end !== null && !hasNumber(tile, this.endNumber(end))) throw new RuleError(`${tile} does not match the ${end} end (${this.endNumber(end)})`);
    this.playItem(seat, action, tile);
    if (this.call !== null) {
      this.opener = seat;
      this.call = null;
    }
    this.passes = 0;
    if (end === null) {
      const [x, y] = parseTile(tile);
      this.line = [[x, y]];
      [this.left, this.right] = [x, y];
    } else {
      const [inner, outer] = orient(tile, this.endNumber(end));
      if (end === "left") {
        this.line.unshift([outer, inner]);
        this.left = outer;
      } else {
        this.line.push([inner, outer]);
        this.right = outer;
      }
    }
    this.lastPlay[seat] = this.playsCount++;
    if (!this.handsOf[seat]!.length) this.endRound("domino", seat);
    else this.current = (seat + 1) % this.n;
  }

  private endRound(how: string, seat: number | null): void {
    this.ended = [how, seat];
    this.hand().over();
  }

  breach(codes: string[]): number | null {
    for (const [what, seat, held, data] of this.checks) {
      const hand = held.map((i) => codes[i]!);
      if (what === "call") {
        if (hand.includes(data as string)) return seat;
      } else {
        const [l, r] = data as [number, number];
        if (hand.some((t) => hasNumber(t, l) || hasNumber(t, r))) return seat;
      }
    }
    return null;
  }

  afterReveal(): void {
    const codes = this.hand().codes!;
    const [how, winnerSeat] = this.ended!;
    this.ended = null;
    this.handsOf = this.handsOf.map((h) => h.map((p) => codes[p as number]!));
    const pips = this.handsOf.map((h) => h.reduce<number>((a, t) => a + pipsOf(t as string), 0));
    const sidePips = new Array<number>(this.nSides).fill(0);
    pips.forEach((p, s) => (sidePips[this.sideOf(s)]! += p));
    let winSide: number | null;
    let next: number | null;
    if (how === "domino") {
      winSide = this.sideOf(winnerSeat!);
      next = winnerSeat;
    } else {
      const low = Math.min(...sidePips);
      const lowest = sidePips.map((p, i) => [p, i] as const).filter(([p]) => p === low);
      winSide = lowest.length === 1 ? lowest[0]![1] : null;
      if (winSide === null) next = null;
      else {
        const mine = this.seatsOf(winSide);
        mine.sort((a, b) => pips[a]! - pips[b]! || this.lastPlay[b]! - this.lastPlay[a]! || a - b);
        next = mine[0]!;
      }
    }
    if (winSide !== null) {
      const raw = sidePips.reduce((a, p, side) => (side === winSide ? a : a + p), 0);
      this.scores[winSide]! += roundToNearest(raw, this.roundTo);
    }
    if (!this.finishAtTarget(this.target)) this.startRound(next);
  }
}

function canonicalOrNull(v: unknown): string | null {
  try {
    return canonical(v);
  } catch {
    return null;
  }
}

function canonicalArgs(v: unknown): string {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? JSON.stringify(Object.fromEntries(Object.entries(v).sort())) : "";
}

/** The end reasons a server may write besides a breach's (fairness-v2 §7). */
const END_REASONS = ["resigned", "timeout", "expired", "chain_exhausted"];

/** The games whose sealed deal this machine follows. */
export const SEALED_GAMES: readonly string[] = ["hokm", "iraqi_domino", "qahve"];

/** A sealed match's deal as a seat reads it: its public facts, then the log. */
export class DealMachine {
  private engine: SealedEngine | null = null;
  /** the seq of the next event the machine expects */
  nextSeq = 0;
  /** the reading seat's own actions (``made``): the seq each was made for → its canonical JSON */
  private readonly mine = new Map<number, string>();
  private mineSeat: number | null = null;

  private constructor(
    readonly matchId: string,
    readonly game: string,
    readonly ruleset: Ruleset,
    readonly house: readonly number[],
  ) {}

  /** The machine of a sealed match of ``game`` (one of ``SEALED_GAMES``), built from its signed
   * public facts: the canonical ruleset (``"deal": "sealed"``) and its house seats. */
  static follow(matchId: string, game: string, ruleset: Ruleset | string, house: readonly number[] = []): DealMachine {
    const r = typeof ruleset === "string" ? (JSON.parse(ruleset) as unknown) : ruleset;
    if (r === null || typeof r !== "object" || Array.isArray(r)) throw new RuleError("the ruleset is not a JSON object");
    const rules = r as Ruleset;
    if (rules["deal"] !== "sealed") throw new RuleError(`the ${game} ruleset deals no sealed hands`);
    if (!SEALED_GAMES.includes(game)) throw new RuleError(`no sealed deal machine for ${game} in this client (${SEALED_GAMES.join(", ")})`);
    const m = new DealMachine(matchId, game, rules, [...new Set(house)].sort((a, b) => a - b));
    if (game === "iraqi_domino") m.engine = new SealedIraqiDomino(matchId, rules, m.house);
    return m;
  }

  /** ``seat``, the seat reading this machine, made ``action`` for the log's next event (the
   * one at ``nextSeq``). When the log returns it there byte for byte (canonical JSON), from
   * that seat, its proofs are not verified again: the seat made them over the very state its
   * machine holds then. Anything else at that position is verified as every other step. */
  made(seat: number, action: unknown): void {
    if (this.mineSeat !== seat) this.mine.clear();
    this.mineSeat = seat;
    this.mine.set(this.nextSeq, canonical(action));
  }

  get started(): boolean {
    return this.engine !== null;
  }

  private get e(): SealedEngine {
    if (this.engine === null) throw new RuleError("the machine has read no event of the match yet");
    return this.engine;
  }

  /** Apply the log's next events (in order, from the match's first; those already applied
   * are skipped by ``seq``): a RuleError at the first one the rules or a proof refuse. */
  feed(events: readonly unknown[]): void {
    for (const raw of events) {
      if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new RuleError(`event ${this.nextSeq} is not an object`);
      const ev = raw as { [k: string]: Json };
      const seq = ev["seq"];
      if (typeof seq === "number" && seq < this.nextSeq) continue;
      if (seq !== this.nextSeq) throw new RuleError(`event ${this.nextSeq}: seq is ${JSON.stringify(seq)}`);
      try {
        this.one(ev);
      } finally {
        this.mine.delete(this.nextSeq);
      }
      this.nextSeq += 1;
    }
  }

  private one(ev: { [k: string]: Json }): void {
    const type = ev["type"];
    if (this.engine === null && this.game === "qahve") {
      // qahve: the first dealer is the log's draw at "dealer" (verify recomputes it)
      const args = ev["args"];
      if (type !== "chance" || ev["label"] !== "dealer" || ev["kind"] !== "uniform" || canonicalArgs(args) !== '{"n":4}') {
        throw new RuleError(`event ${this.nextSeq}: the match starts with the chance event 'dealer'`);
      }
      this.engine = new SealedQahve(this.matchId, this.ruleset, this.house, ev["result"]);
      return;
    }
    if (this.engine === null) {
      // hokm: the first hakem is the log's face-up draw at "hakem" (verify recomputes it)
      if (type !== "chance" || ev["label"] !== "hakem" || ev["kind"] !== "shuffle" || "args" in ev) {
        throw new RuleError(`event ${this.nextSeq}: the match starts with the chance event 'hakem'`);
      }
      this.engine = new SealedHokm(this.matchId, this.ruleset, this.house, ev["result"]);
      return;
    }
    const e = this.engine;
    const want = e.pending[0];
    if (want !== undefined) {
      if (type !== "end" || ev["reason"] !== want["reason"] || ev["seat"] !== want["seat"]) {
        throw new RuleError(`event ${this.nextSeq}: the rules end the match here (${JSON.stringify(want)})`);
      }
      e.pending.shift();
      return;
    }
    if (type === "action") {
      const made = this.mine.get(this.nextSeq);
      const deal = e.sealed;
      if (deal !== null) deal.ownStep = made !== undefined && ev["seat"] === this.mineSeat && made === canonicalOrNull(ev["action"]);
      try {
        e.apply(ev["seat"], ev["action"]);
      } catch (err) {
        if (err instanceof RuleError) throw new RuleError(`event ${this.nextSeq} (seat ${JSON.stringify(ev["seat"])}): ${err.message}`);
        throw err;
      } finally {
        if (deal !== null) deal.ownStep = false;
      }
    } else if (type === "end") {
      const reason = ev["reason"];
      if (e.outcome !== null) throw new RuleError(`event ${this.nextSeq}: an end after the match's end`);
      if (typeof reason !== "string" || !END_REASONS.includes(reason)) throw new RuleError(`event ${this.nextSeq}: end reason ${JSON.stringify(reason)}`);
      const seat = ev["seat"];
      e.outcome = { reason, seats: typeof seat === "number" ? [seat] : [] };
    } else {
      throw new RuleError(`event ${this.nextSeq}: a ${JSON.stringify(type)} event the rules did not make`);
    }
  }

  // -- what the machine says ------------------------------------------------------------------
  get outcome(): Outcome | null {
    return this.engine?.outcome ?? null;
  }

  /** The hand being dealt (0 for the match's first). */
  get hand(): number {
    return this.e.hands - 1;
  }

  get phase(): string {
    const e = this.e;
    if (e.outcome !== null || e.sealed === null) return "over";
    const o = e.owed[0];
    return o === undefined ? "play" : PHASE_OF_STEP[o.step]!;
  }

  get owed(): { [k: string]: Json } | null {
    const e = this.e;
    const o = e.owed[0];
    return o !== undefined && e.outcome === null ? owedJson(o) : null;
  }

  /** The first step owed, as the machine holds it (null: none). */
  get owedStep(): Owed | null {
    const e = this.e;
    return e.outcome === null ? (e.owed[0] ?? null) : null;
  }

  /** The hand's play is over: its keys are owed (the one time a secret may go). */
  get playOver(): boolean {
    const e = this.e;
    return e.outcome === null && e.owed[0]?.step === "reveal_key";
  }

  get turn(): number | null {
    return this.e.turn;
  }

  /** The hand's deal (keys, deck, shares, openings), as verified. */
  get deal(): Deal | null {
    return this.e.sealed;
  }

  owner(item: number): number | null {
    return this.e.sealed?.owner.get(item) ?? null;
  }

  dealt(seat: number): number[] {
    return this.e.sealed?.heldBy(seat) ?? [];
  }

  /** The items in the seat's hand now, in the order the rules keep them. */
  held(seat: number): number[] {
    const e = this.e;
    if (e.sealed === null) return [];
    return e.handsOf[seat]!.filter((p): p is number => typeof p === "number");
  }

  /** The public state of the hand's deal as an honest server's view shows it (its
   * ``sealed`` block but ``limits``: Python's ``Deal.view``); null before the first hand. */
  sealedView(): { [k: string]: Json } | null {
    const e = this.e;
    const d = e.sealed;
    if (d === null) return null;
    const byNumber = <T>(m: Map<number, T>): [number, T][] => [...m].sort(([a], [b]) => a - b);
    const o = d.owed[0];
    return {
      protocol: "qahwa-fair/3",
      match_id: d.matchId,
      hand: d.number,
      game: d.game,
      items: [...d.items],
      house: [...d.house],
      keys: d.keys.map((k) => (k === null ? null : hex(k))),
      hand_key: d.handKey === null ? null : hex(d.handKey),
      deck: toBase64(d.deck.bytes),
      shuffled: [...d.shuffled],
      dealt: Array.from({ length: d.n }, (_, s) => d.heldBy(s)),
      shares: Object.fromEntries(byNumber(d.shares).map(([i, by]) => [String(i), Object.fromEntries(byNumber(by).map(([s, D]) => [String(s), hex(D)]))])),
      opened: Object.fromEntries(byNumber(d.opened).map(([i, c]) => [String(i), c])),
      revealed: d.revealed.map((r) => r !== null),
      owed: o !== undefined && e.outcome === null ? owedJson(o) : null,
    };
  }

  /** The seat's legal actions as the server lists them (its items by position): what an
   * honest server's view shows. */
  legal(seat: number): Action[] {
    return this.e.legalActions(seat);
  }

  /** The seat's legal actions in player form (its items by code, from ``own``); with ``bot``,
   * those a random bot picks from (qahve's lowest bids): what a seat's view suggests. */
  choices(seat: number, own: ReadonlyMap<number, string>, bot = false): Action[] {
    const e = this.e;
    if (e.turn !== seat || e.outcome !== null) return [];
    return e.hiddenLegal(seat, own, bot);
  }

  /** The items of the seat's hand that are its to play, with the field that names them. */
  get itemField(): string {
    return this.e.itemField;
  }
}

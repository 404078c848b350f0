// A small qahwa client typed only by the types openapi-typescript generates from the app's
// /openapi.json (./api.d.ts, written by tests/client/test_openapi_ts.py): it seats every seat of a
// match of each of the seven games (qahwa-fair/2: commit, check the lock, reveal), plays
// random legal actions (adding roll-chain values to tawla's and mahbusa's fresh rolls), reads
// the public log and the transcript, and runs a plain rng session. Every action, event and
// record is narrowed on its `type` / `kind` / `game`: the program has no type assertion and
// no untyped value, and `tsc --strict --noEmit` checks it (the test refuses either in its text).

import type { components, paths } from "./api";

type S = components["schemas"];

// -- the OpenAPI operations' bodies and answers -------------------------------------------------
type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : never;
type Answer<Op> = Op extends { responses: { 200: infer R } }
  ? JsonOf<R>
  : Op extends { responses: { 201: infer R } }
    ? JsonOf<R>
    : never;
type BodyOf<Op> = Op extends { requestBody?: { content: { "application/json": infer B } } }
  ? B
  : undefined;

type CreateMatch = paths["/v1/matches"]["post"];
type GetMatch = paths["/v1/matches/{match_id}"]["get"];
type Commit = paths["/v1/matches/{match_id}/seats/{seat}/commit"]["post"];
type GetLock = paths["/v1/matches/{match_id}/lock"]["get"];
type Reveal = paths["/v1/matches/{match_id}/seats/{seat}/reveal"]["post"];
type GetState = paths["/v1/matches/{match_id}/state"]["get"];
type Act = paths["/v1/matches/{match_id}/actions"]["post"];
type Resign = paths["/v1/matches/{match_id}/resign"]["post"];
type GetEvents = paths["/v1/matches/{match_id}/events"]["get"];
type GetTranscript = paths["/v1/matches/{match_id}/transcript"]["get"];
type RngCreate = paths["/v1/rng"]["post"];
type RngSeed = paths["/v1/rng/{session_id}/seed"]["post"];
type RngDraw = paths["/v1/rng/{session_id}/draws"]["post"];
type RngEvents = paths["/v1/rng/{session_id}/events"]["get"];
type RngClose = paths["/v1/rng/{session_id}/close"]["post"];

type View = Answer<GetState>;
type GameView = Exclude<View, S["SeatingView"]>;
type Action = S["ActionIn"]["action"];
type ChanceEvent = S["DiceEvent"] | S["UniformEvent"] | S["ShuffleEvent"];

class ApiError extends Error {}

class Api {
  constructor(readonly base: string, readonly operatorKey: string) {}

  async call<Op>(method: "GET" | "POST", url: string, body: BodyOf<Op>,
                 token?: string): Promise<Answer<Op>> {
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (token !== undefined) headers["Authorization"] = `Bearer ${token}`;
    const r = await fetch(this.base + url, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!r.ok) throw new ApiError(`${method} ${url}: ${r.status} ${await r.text()}`);
    const out: Answer<Op> = await r.json();
    return out;
  }
}

// -- qahwa-fair/2 byte strings (fairness-v2 §2, §6) -------------------------------------------
type Bytes = Uint8Array<ArrayBuffer>;
const enc = new TextEncoder();

function u32be(x: number): Bytes {
  return new Uint8Array([(x >>> 24) & 255, (x >>> 16) & 255, (x >>> 8) & 255, x & 255]);
}

function lp(data: Bytes): Bytes {
  return concat(u32be(data.length), data);
}

function concat(...parts: Bytes[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function hex(b: Bytes): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

async function sha256(data: Bytes): Promise<Bytes> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", data));
}

function random32(): Bytes {
  return crypto.getRandomValues(new Uint8Array(32));
}

const CHAIN_LENGTH = 65536;

class SeatClient {
  readonly clientSeed: string;
  readonly nonce = random32();
  private chain: Bytes[] = [];
  private used = 0;

  constructor(readonly api: Api, readonly matchId: string, readonly seat: number,
              readonly token: string) {
    this.clientSeed = `ts-${seat}-${hex(random32()).slice(0, 12)}`;
  }

  url(tail: string): string {
    return `/v1/matches/${this.matchId}${tail}`;
  }

  async seedCommitment(): Promise<string> {
    return hex(await sha256(concat(enc.encode("qahwa-fair/2 seat\u0000"),
      lp(enc.encode(this.matchId)), u32be(this.seat), this.nonce,
      lp(enc.encode(this.clientSeed)))));
  }

  async rollChainTip(): Promise<string> {
    const prefix = concat(enc.encode("qahwa-fair/2 roll\u0000"), lp(enc.encode(this.matchId)),
      u32be(this.seat));
    let v = random32();
    const out = [v];
    for (let i = 0; i < CHAIN_LENGTH; i++) {
      v = await sha256(concat(prefix, v));
      out.push(v);
    }
    this.chain = out.reverse();
    return hex(this.value(0));
  }

  nextRollValue(): string {
    this.used += 1;
    return hex(this.value(this.used));
  }

  private value(k: number): Bytes {
    const v = this.chain[k];
    if (v === undefined) throw new ApiError(`seat ${this.seat}'s roll chain is used up`);
    return v;
  }

  async commit(freshRolls: boolean): Promise<S["SeatingOut"]> {
    const body: S["CommitIn"] = {
      seed_commitment: await this.seedCommitment(),
      key: null,
      roll_chain: freshRolls ? await this.rollChainTip() : null,
    };
    return this.api.call<Commit>("POST", this.url(`/seats/${this.seat}/commit`), body,
      this.token);
  }

  async checkLock(): Promise<S["LockRecord"]> {
    const got = await this.api.call<GetLock>("GET", this.url("/lock"), undefined);
    const mine = got.lock.seats.find((s) => s.seat === this.seat);
    if (mine === undefined || mine.seed_commitment !== await this.seedCommitment()) {
      throw new ApiError(`the lock does not hold seat ${this.seat}'s commitment`);
    }
    if (got.receipt.seq !== -1) throw new ApiError("a lock's receipt is for chain[-1]");
    return got.lock;
  }

  async reveal(): Promise<S["SeatingOut"]> {
    const body: S["RevealIn"] = { client_seed: this.clientSeed, nonce: hex(this.nonce) };
    return this.api.call<Reveal>("POST", this.url(`/seats/${this.seat}/reveal`), body,
      this.token);
  }

  async state(): Promise<View> {
    return this.api.call<GetState>("GET", this.url("/state"), undefined, this.token);
  }

  async act(view: GameView, action: Action): Promise<S["ActionOut"]> {
    const body: S["ActionIn"] = { action, version: view.version, prev: view.chain ?? null };
    return this.api.call<Act>("POST", this.url("/actions"), body, this.token);
  }

  async resign(view: GameView): Promise<S["ResignOut"]> {
    const body: S["ResignIn"] = { prev: view.chain ?? null };
    return this.api.call<Resign>("POST", this.url("/resign"), body, this.token);
  }
}

// -- choosing an action: each game's own action types -------------------------------------------
let state = 20261203;

function pick<T>(items: readonly T[]): T {
  state = (state * 1103515245 + 12345) % 2147483648;
  const item = items[state % items.length];
  if (item === undefined) throw new ApiError("nothing to choose from");
  return item;
}

function choices<T>(legal: T[], suggested: T[] | undefined): T[] {
  return suggested !== undefined && suggested.length > 0 ? suggested : legal;
}

function describeAction(a: Action): string {
  switch (a.type) {
    case "roll":
    case "roll_value":
      return a.value === undefined || a.value === null ? a.type : `${a.type} ${a.value.slice(0, 8)}`;
    case "move":
      return `move ${a.steps.map(([from, to]) => `${from}/${to}`).join(" ")}`;
    case "resign":
      return `resign for ${a.points}`;
    case "play":
      if ("card" in a) return `play ${a.card}`;
      if ("train" in a) return `play ${a.tile} on ${a.train}`;
      return `play ${a.tile}${a.end ? " " + a.end : ""}`;
    case "bid":
      return "tricks" in a ? `bid ${a.tricks} tricks` : `bid ${a.amount}`;
    case "trump":
      return `trump ${a.suit}${a.nars ? " nars" : ""}`;
    case "cut":
      return a.k === undefined || a.k === null ? "cut" : `cut at ${a.k}`;
    case "draw":
      return "keep" in a ? `draw (keep ${a.keep})` : "draw";
    case "discard":
      return `discard ${a.cards.join(",")}`;
    default:
      return a.type;
  }
}

function chooseAction(view: GameView, me: SeatClient): Action {
  switch (view.game) {
    case "tawla":
    case "mahbusa": {
      const a = pick(choices(view.legal_actions, view.suggested_actions));
      // with fresh rolls (values_used listed) the seat adds its next roll-chain value
      if ((a.type === "roll" || a.type === "roll_value") && view.values_used) {
        return { ...a, value: me.nextRollValue() };
      }
      return a;
    }
    case "iraqi_domino":
      return pick(choices(view.legal_actions, view.suggested_actions));
    case "mexican_train":
      return pick(choices(view.legal_actions, view.suggested_actions));
    case "qahve":
      return pick(choices(view.legal_actions, view.suggested_actions));
    case "hokm":
      return pick(choices(view.legal_actions, view.suggested_actions));
    case "shelem":
      return pick(choices(view.legal_actions, view.suggested_actions));
  }
}

function tableOf(view: GameView): string {
  switch (view.game) {
    case "tawla":
    case "mahbusa":
      return `points ${view.points.join(",")} bar ${view.bar.join("/")} cube ${view.cube.value}`;
    case "iraqi_domino":
      return `hand ${view.hand.join(" ")}, ${view.line.length} on the line, pile ${view.pile}`;
    case "mexican_train":
      return `hand ${view.hand.join(" ")}, engine ${view.engine}, pile ${view.pile}`;
    case "qahve":
    case "hokm":
    case "shelem":
      return `hand ${view.hand.join(" ")}, trump ${view.trump ?? "-"}, scores ${view.scores.join("/")}`;
  }
}

// -- reading the public log and the transcript: events by kind ----------------------------------
function describeChance(e: ChanceEvent): string {
  switch (e.kind) {
    case "dice":
      return `${e.label}: ${e.args.count}d${e.args.sides} = ${e.result.join("+")}`;
    case "uniform":
      return `${e.label}: ${e.result} of ${e.args.n}`;
    case "shuffle":
      return e.hidden ? `${e.label}: hidden` : `${e.label}: ${(e.result ?? []).length} items`;
  }
}

function describeEnd(e: S["EndEvent"]): string {
  return `end: ${e.reason}${e.seat !== undefined && e.seat !== null ? ` by seat ${e.seat}` : ""}`;
}

type GameEvent = (S["TawlaActionEvent"] | S["IraqiDominoActionEvent"]
  | S["MexicanTrainActionEvent"] | S["QahveActionEvent"] | S["HokmActionEvent"]
  | S["ShelemActionEvent"] | ChanceEvent | S["EndEvent"]);

function describeEvent(e: GameEvent): string {
  switch (e.type) {
    case "action":
      return `#${e.seq} seat ${e.seat}: ${describeAction(e.action)}${e.sig ? " (signed)" : ""}`;
    case "chance":
      return `#${e.seq} ${describeChance(e)}`;
    case "end":
      return `#${e.seq} ${describeEnd(e)}`;
  }
}

function eventsOf(page: Answer<GetEvents> | Answer<GetTranscript>): GameEvent[] {
  switch (page.game) {
    case "tawla":
    case "mahbusa":
    case "iraqi_domino":
    case "mexican_train":
    case "qahve":
    case "hokm":
    case "shelem":
      return page.events;
    case "rng":
      return [];
  }
}

function checkTranscript(t: Answer<GetTranscript>, lock: S["LockRecord"]): string[] {
  const out: string[] = [];
  if (t.lock === null || t.lock === undefined) throw new ApiError("a v2 transcript has its lock");
  if (t.lock.signature.value !== lock.signature.value) throw new ApiError("another lock");
  for (const seat of t.seats) {
    const locked = t.lock.seats.find((s) => s.seat === seat.seat);
    if (locked === undefined) throw new ApiError(`seat ${seat.seat} is not in the lock`);
    out.push(`seat ${seat.seat} ${seat.name}: seed ${seat.client_seed ?? "(never revealed)"}`
      + `, chain ${locked.roll_chain ?? "none"}`);
  }
  const result = t.result;
  if (result !== null && result !== undefined) {
    out.push(`${result.reason}: winners ${result.winners.join(",")} scores ${(result.scores ?? []).join("/")}`);
  }
  for (const e of eventsOf(t)) out.push(describeEvent(e));
  return out;
}

// -- a whole match -----------------------------------------------------------------------------
type Game = "tawla" | "mahbusa" | "iraqi_domino" | "mexican_train" | "qahve" | "hokm" | "shelem";

async function playMatch(api: Api, game: Game, ruleset: Record<string, unknown>,
                         resignAfter: number | null): Promise<string[]> {
  const create: S["CreateMatchIn"] = { game, ruleset };
  const created = await api.call<CreateMatch>("POST", "/v1/matches", create, api.operatorKey);
  const record = created.record;
  if (record.type !== "commit") throw new ApiError("a new match is qahwa-fair/2");
  const fresh = game === "tawla" || game === "mahbusa";
  const seats = created.seats.map((s) => new SeatClient(api, created.match_id, s.seat, s.token));
  for (const seat of seats) await seat.commit(fresh);
  let lock: S["LockRecord"] | null = null;
  for (const seat of seats) lock = await seat.checkLock();
  if (lock === null) throw new ApiError("no seats");
  for (const seat of seats) await seat.reveal();

  const log: string[] = [`${game} ${created.match_id} (${record.ruleset})`];
  let played = 0;
  for (;;) {
    const first = seats[0];
    if (first === undefined) throw new ApiError("no seats");
    const view = await first.state();
    if (view.status !== "playing") break;
    if (view.turn === null || view.turn === undefined) throw new ApiError("no seat on turn");
    const me = seats[view.turn];
    if (me === undefined) throw new ApiError(`no seat ${view.turn}`);
    const mine = await me.state();
    if (mine.status !== "playing") break;
    if (resignAfter !== null && played >= resignAfter) {
      const out = await me.resign(mine);
      log.push(`seat ${me.seat} resigned: ${out.result.reason}`);
      break;
    }
    const action = chooseAction(mine, me);
    const answer = await me.act(mine, action);
    if (answer.receipt === null || answer.receipt === undefined) {
      throw new ApiError("a v2 action is receipted");
    }
    played += 1;
    if (answer.state.status === "playing" && answer.state.seat === me.seat) {
      log.push(`${describeAction(action)} -> ${tableOf(answer.state)}`);
    }
  }
  const pub = await api.call<GetMatch>("GET", `/v1/matches/${created.match_id}`, undefined);
  const table = pub.public_state;
  if (table !== null && table !== undefined) log.push(`public: ${table.game} ${table.status}`);
  const events = await api.call<GetEvents>("GET", `/v1/matches/${created.match_id}/events`,
    undefined);
  log.push(`${eventsOf(events).length} events`);
  const transcript = await api.call<GetTranscript>(
    "GET", `/v1/matches/${created.match_id}/transcript`, undefined);
  return log.concat(checkTranscript(transcript, lock));
}

async function rngSession(api: Api): Promise<string[]> {
  const created = await api.call<RngCreate>("POST", "/v1/rng", {}, api.operatorKey);
  const id = created.session_id;
  const seed: S["RngSeedIn"] = { client_seed: "ts-rng", nonce: hex(random32()) };
  const seeded = await api.call<RngSeed>("POST", `/v1/rng/${id}/seed`, seed, created.token);
  if (!("lock" in seeded)) throw new ApiError("a new session is qahwa-fair/2");
  const draws: S["DrawIn"][] = [
    { kind: "dice", count: 2, sides: 6 }, { kind: "uniform", n: 37 }, { kind: "shuffle", n: 5 },
  ];
  const log: string[] = [];
  for (const d of draws) {
    const out = await api.call<RngDraw>("POST", `/v1/rng/${id}/draws`, d, created.token);
    log.push(`${out.label} ${out.kind}: ${JSON.stringify(out.result)}`);
  }
  const page = await api.call<RngEvents>("GET", `/v1/rng/${id}/events`, undefined);
  for (const e of page.events) {
    if (e.type === "action" && e.action.type === "draw") log.push(`draw ${e.action.kind}`);
    else if (e.type === "chance") log.push(describeChance(e));
  }
  const closed = await api.call<RngClose>("POST", `/v1/rng/${id}/close`, undefined,
    created.token);
  log.push(`closed: seed ${closed.server_seed.slice(0, 8)}…, ${closed.transcript.events.length} events`);
  return log;
}

const GAMES: Game[] = [
  "tawla", "mahbusa", "iraqi_domino", "mexican_train", "qahve", "hokm", "shelem",
];

const SHORT: Record<Game, Record<string, unknown>> = {
  tawla: { match_length: 1 }, mahbusa: { match_length: 1 },
  iraqi_domino: { target: 1, players: 2 }, mexican_train: { rounds: 1, players: 2 },
  qahve: { target: 1 }, hokm: { target: 1 }, shelem: { target: 5 },
};

export async function main(base: string, operatorKey: string): Promise<string[]> {
  const api = new Api(base, operatorKey);
  const out: string[] = [];
  for (const game of GAMES) {
    out.push(...await playMatch(api, game, SHORT[game], game === "hokm" ? 3 : null));
  }
  out.push(...await rngSession(api));
  return out;
}

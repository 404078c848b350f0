// The conforming sealed seat (src/sealed/seat.ts) without a server: TypeScript seats deal and
// play sealed Iraqi dominoes among themselves over a shared log that each one's own deal
// machine verifies, event by event; and what a lying server could ask of a seat (a share of its
// own item, its key mid-hand, an opening no rule asks for, a view that disagrees with the log,
// a log whose step does not verify) is refused, with a dispute, whatever the asking.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DealMachine, LOG_HELD, SealedStepRefused, SealedSeat } from "../src/sealed/index.js";

type Obj = { [k: string]: unknown };

function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

/** A table of ``n`` seats sharing one log (the events an honest server would keep). */
function table(game: string, ruleset: Obj, n: number) {
  const disputes: [number, string, string][] = [];
  const seats = Array.from({ length: n }, (_, s) =>
    SealedSeat.follow("m-ts-seat", s, game, ruleset, [], { onDispute: (kind, message) => disputes.push([s, kind, message]) }),
  );
  const events: Obj[] = [];
  const sync = (): void => {
    for (const s of seats) s.takeEvents(events);
  };
  const act = (seat: number, action: Obj): void => {
    events.push({ seq: events.length, type: "action", seat, action });
    sync();
  };
  return { seats, events, disputes, sync, act };
}

/** Play from ``t`` until ``until`` says stop (or the match ends); each seat on turn picks one
 * of its legal actions over its own hidden hand and sends what its machine derives. */
function playUntil(t: ReturnType<typeof table>, rand: () => number, until: (m: DealMachine) => boolean, max = 4000): void {
  for (let i = 0; i < max; i++) {
    const m = t.seats[0]!.machine;
    if (m.outcome !== null || until(m)) return;
    const turn = m.turn!;
    const seat = t.seats[turn]!;
    const legal = seat.machine.choices(turn, seat.ownItems());
    assert.ok(legal.length > 0, `seat ${turn} has no legal action`);
    t.act(turn, seat.wire(legal[Math.floor(rand() * legal.length)]!));
  }
  throw new Error("the match did not end");
}

const IRAQI = { players: 2, target: 1, round_to: 5, deal: "sealed" };

test("two seats deal and play sealed Iraqi dominoes to the match's end, each learning only its own tiles", () => {
  const t = table("iraqi_domino", IRAQI, 2);
  t.sync();
  let checked = false;
  playUntil(
    t,
    prng(5),
    (m) => {
      if (!checked && m.phase === "play") {
        // each seat named its 7 tiles; together they are 14 different tiles of the set
        const own = t.seats.map((s) => [...s.ownItems().values()]);
        assert.deepEqual(
          own.map((o) => o.length),
          [7, 7],
        );
        assert.equal(new Set([...own[0]!, ...own[1]!]).size, 14);
        checked = true;
      }
      return false;
    },
  );
  assert.ok(checked);
  const m = t.seats[1]!.machine;
  assert.equal(m.phase, "over");
  assert.equal(m.outcome?.reason, "played");
  assert.deepEqual(t.disputes, []);
});

test("a seat refuses what would give its hand away, whatever it is asked, and keeps a dispute", () => {
  const t = table("iraqi_domino", IRAQI, 2);
  t.sync();
  // to the first share step seat 0 owes: it refuses to share its own items
  playUntil(t, prng(6), (m) => m.owedStep?.step === "share" && m.owedStep.seat === 0);
  const s0 = t.seats[0]!;
  const m = s0.machine;
  const mine = m.dealt(0);
  assert.ok(mine.length === 7 && m.owedStep!.items.every((i) => !mine.includes(i)));
  const refused = (f: () => unknown, kind: string): void => {
    const before = t.disputes.length;
    assert.throws(f, (e: unknown) => e instanceof SealedStepRefused && e.kind === kind);
    assert.equal(t.disputes.length, before + 1);
    assert.equal(t.disputes.at(-1)![1], kind);
  };
  refused(() => s0.wire({ type: "sealed", step: "reveal_key" }), "sealed_step"); // its key mid-deal
  refused(() => s0.wire({ type: "sealed", step: "open" }), "sealed_step"); // no rule asks for it
  // a view of its turn whose ``owed`` names its own items: the machine says otherwise
  const honest = {
    status: "playing",
    turn: 0,
    hand: [...m.held(0)].sort((a, b) => a - b),
    legal_actions: m.legal(0),
    sealed: { ...m.sealedView()!, limits: ["what the table does not hide"] } as Obj,
  };
  const sealed = honest.sealed;
  s0.checkView(honest); // the honest view passes
  refused(() => s0.view({ ...honest, sealed: { ...sealed, owed: { seat: 0, step: "share", items: mine } } }), "sealed_view");
  refused(() => s0.view({ ...honest, sealed: { ...sealed, dealt: [m.dealt(1), m.dealt(0)] } }), "sealed_view");
  // a deck or a key other than the log's: the view is not the log's either
  const deck = Buffer.from(String(sealed["deck"]), "base64");
  deck[40]! ^= 1;
  refused(() => s0.view({ ...honest, sealed: { ...sealed, deck: deck.toString("base64") } }), "sealed_view");
  refused(() => s0.view({ ...honest, sealed: { ...sealed, keys: [null, null] } }), "sealed_view");
  refused(() => s0.view({ ...honest, legal_actions: [{ type: "sealed", step: "reveal_key" }] }), "sealed_view");
  // a brief view (sealed=brief) leaves out the deck and the shares, which the machine holds:
  // it passes; what it does send is compared as in a full view
  const brief = Object.fromEntries(Object.entries(sealed).filter(([k]) => !LOG_HELD.includes(k)));
  assert.ok(!("deck" in brief) && !("shares" in brief) && "dealt" in brief);
  s0.checkView({ ...honest, sealed: brief });
  refused(() => s0.view({ ...honest, sealed: { ...brief, dealt: [m.dealt(1), m.dealt(0)] } }), "sealed_view");
  // what it owes, it makes: shares of exactly the owed items, none of its own
  const step = s0.wire({ type: "sealed", step: "share" });
  const items = (step["shares"] as Obj[]).map((x) => x["item"]);
  assert.deepEqual(items, m.owedStep!.items);
  // on to play: a play carries its opening; a play naming an item, share or secret is refused
  t.act(0, step);
  playUntil(t, prng(7), (mm) => mm.phase === "play" && mm.turn === 0 && mm.owedStep === null);
  refused(() => s0.wire({ type: "play", tile: "6-6", item: mine[0]!, share: "00".repeat(32) }), "sealed_step");
  refused(() => s0.wire({ type: "sealed", step: "reveal_key" }), "sealed_step");
  const legal = m.choices(0, s0.ownItems());
  const play = legal.find((a) => a["type"] === "play");
  if (play !== undefined) {
    const wired = s0.wire(play);
    assert.ok(mine.includes(wired["item"] as number) && typeof wired["share"] === "string");
  }
});

test("a log with a step that does not verify is refused with a sealed_log dispute", () => {
  const t = table("iraqi_domino", IRAQI, 2);
  t.sync();
  playUntil(t, prng(8), (m) => m.owedStep?.step === "shuffle" && m.owedStep.seat === 1);
  const s1 = t.seats[1]!;
  const step = s1.wire({ type: "sealed", step: "shuffle" });
  // a deck whose first two items are swapped after the proof was made
  const deck = Buffer.from(String(step["deck"]), "base64");
  const swapped = Buffer.concat([deck.subarray(64, 128), deck.subarray(0, 64), deck.subarray(128)]);
  const bad = { ...step, deck: swapped.toString("base64") };
  const events = [...t.events, { seq: t.events.length, type: "action", seat: 1, action: bad }];
  assert.throws(
    () => t.seats[0]!.takeEvents(events),
    (e: unknown) => e instanceof SealedStepRefused && e.kind === "sealed_log" && /equation/.test(e.message),
  );
  assert.deepEqual(
    t.disputes.map(([s, k]) => [s, k]),
    [[0, "sealed_log"]],
  );
});

test("a sealed table of a game without a machine here is refused before anything is made", () => {
  assert.throws(
    () => SealedSeat.follow("m", 0, "shelem", { deal: "sealed" }, []),
    (e: unknown) => e instanceof SealedStepRefused && /hokm, iraqi_domino, qahve/.test(e.message),
  );
});

test("a seat's own step, returned by the log as it made it and where it made it for, is not verified again; any other copy is", () => {
  const t = table("iraqi_domino", IRAQI, 2);
  t.sync();
  // which steps each machine applied as its own (Deal.ownStep while the step is applied)
  const own: [number, string, boolean][] = [];
  const spy = (s: number): void => {
    const deal = t.seats[s]!.machine.deal!;
    for (const name of ["addKey", "addShuffle", "checkShares"] as const) {
      const orig = deal[name].bind(deal) as (...a: unknown[]) => void;
      (deal as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => {
        own.push([s, name, deal.ownStep]);
        orig(...a);
      };
    }
  };
  // keys: seat 0's key step, byte for byte, at the seq it was made for
  const key0 = t.seats[0]!.wire({ type: "sealed", step: "key" });
  spy(0);
  spy(1);
  t.act(0, key0);
  assert.deepEqual(own, [
    [0, "addKey", true],
    [1, "addKey", false],
  ]);
  own.length = 0;
  // seat 1's key: made, then changed (its proof's last byte) before the log holds it: verified,
  // and refused by both machines (seat 1's own included)
  const key1 = t.seats[1]!.wire({ type: "sealed", step: "key" });
  const proof = String(key1["proof"]);
  const bad = { ...key1, proof: proof.slice(0, -2) + (proof.endsWith("00") ? "01" : "00") };
  t.events.push({ seq: t.events.length, type: "action", seat: 1, action: bad });
  for (const s of [0, 1]) assert.throws(() => t.seats[s]!.takeEvents(t.events), SealedStepRefused);
  assert.deepEqual(
    own.map(([s, name, o]) => [s, name, o]),
    [
      [0, "addKey", false],
      [1, "addKey", false],
    ],
  );
});

test("a seat's step made twice for one position (a retry): the copy the log holds, the first, is verified", () => {
  const u = table("iraqi_domino", IRAQI, 2);
  u.sync();
  const d0 = u.seats[0]!.machine.deal!;
  const flags: boolean[] = [];
  const o0 = d0.addKey.bind(d0);
  d0.addKey = (s, k, p) => {
    flags.push(d0.ownStep);
    o0(s, k, p);
  };
  // made for seq 1, then made again (a retry) for the same seq: the later copy is the one
  // trusted; the first, logged in its place, is verified
  const first = u.seats[0]!.wire({ type: "sealed", step: "key" });
  u.seats[0]!.wire({ type: "sealed", step: "key" });
  u.act(0, first);
  assert.deepEqual(flags, [false]);
});

test("a sealed qahve seat suggests the two lowest bids and every legal play, from its machine, whatever the server suggests", () => {
  // random bids up to 13 make contracts no side can make, and a match wanders below zero (a
  // harness once read 6,000 views without an end): a seat's view suggests the game's bot
  // choices (games/qahve.py bot_actions), as the Python seat does
  const t = table("qahve", { deal: "sealed", target: 30 }, 4);
  t.events.push({ seq: 0, type: "chance", label: "dealer", kind: "uniform", args: { n: 4 }, result: 1 });
  t.sync();
  const rand = prng(11);
  const viewOf = (s: number): Obj => {
    const m = t.seats[s]!.machine;
    return {
      status: "playing",
      turn: s,
      hand: [...m.held(s)].sort((a, b) => a - b),
      legal_actions: m.legal(s),
      suggested_actions: m.legal(s).slice(-1), // the server's suggestion, not believed
      sealed: { ...m.sealedView()!, limits: ["what the table does not hide"] } as Obj,
    };
  };
  playUntil(t, rand, (m) => m.owedStep === null);
  const bidder = t.seats[0]!.machine.turn!;
  const seen = t.seats[bidder]!.view(viewOf(bidder));
  const bids = Array.from({ length: 12 }, (_, i) => ({ type: "bid", tricks: i + 2 }));
  assert.deepEqual(seen["legal_actions"], bids);
  assert.deepEqual(seen["suggested_actions"], bids.slice(0, 2));
  // the bids (each the lowest suggested), then any deal step, to the first play
  for (let i = 0; i < 200; i++) {
    const m = t.seats[0]!.machine;
    if (m.owedStep === null && m.legal(m.turn!)[0]?.["type"] === "play") break;
    const turn = m.turn!;
    const seat = t.seats[turn]!;
    const pick = m.owedStep === null ? seat.view(viewOf(turn))["suggested_actions"] : seat.machine.choices(turn, seat.ownItems());
    t.act(turn, seat.wire((pick as Obj[])[0]!));
  }
  const player = t.seats[0]!.machine.turn!;
  const play = t.seats[player]!.view(viewOf(player));
  assert.ok((play["legal_actions"] as Obj[]).length > 0);
  assert.deepEqual(play["suggested_actions"], play["legal_actions"]);
  assert.ok((play["suggested_actions"] as Obj[]).every((a) => a["type"] === "play" && typeof a["card"] === "string"));
  assert.deepEqual(t.disputes, []);
});

// The sealed seat across a message channel (src/sealed/side.ts), as the web table runs it in a
// Web Worker: seat 0's SealedSeat answers through serveSealedSide on the far end of a
// MessageChannel, seat 1's runs in this thread, and they deal and play sealed Iraqi dominoes
// over one shared log to the match's end. The page's end learns each hand secret (keep) before
// the step that uses it is handed back, gets each refusal as a dispute and as a
// SealedStepRefused, and sees the same machine the worker holds (seen).
import { test } from "node:test";
import assert from "node:assert/strict";
import { MessageChannel } from "node:worker_threads";
import { ClientError } from "../src/errors.js";
import { type Port, SealedSeat, SealedStepRefused, serveSealedSide, workerSide } from "../src/sealed/index.js";

type Obj = { [k: string]: unknown };

const IRAQI = { players: 2, target: 1, round_to: 5, deal: "sealed" };

function channel(): { page: Port; worker: Port; close: () => void } {
  const { port1, port2 } = new MessageChannel();
  return { page: port1 as unknown as Port, worker: port2 as unknown as Port, close: () => (port1.close(), port2.close()) };
}

test("a seat served across a channel deals and plays to the end, its secrets kept before each step returns", async () => {
  const ch = channel();
  serveSealedSide(ch.worker);
  const kept: Record<string, string> = {};
  const log: string[] = []; // what happened on the page's end, in order
  const disputes: [string, string][] = [];
  const remote = workerSide(() => ch.page)({
    matchId: "m-ts-side",
    seat: 0,
    game: "iraqi_domino",
    ruleset: JSON.stringify(IRAQI),
    house: [],
    keys: {},
    keep: (hand, secret) => {
      kept[String(hand)] = secret;
      log.push(`keep ${hand}`);
    },
    onDispute: (kind, message) => disputes.push([kind, message]),
  });
  const other = SealedSeat.follow("m-ts-side", 1, "iraqi_domino", IRAQI, []);
  const events: Obj[] = [];
  try {
    assert.equal(remote.seen, -1);
    for (let i = 0; i < 4000; i++) {
      await remote.takeEvents(events);
      other.takeEvents(events);
      assert.equal(remote.seen, events.length - 1);
      const m = other.machine; // the public facts: the same log's
      if (m.outcome !== null) break;
      const turn = m.turn!;
      let action: Obj;
      if (turn === 0) {
        const raw = { status: "playing", turn: 0, hand: [...m.held(0)].sort((a, b) => a - b), legal_actions: m.legal(0), sealed: m.sealedView() };
        const view = await remote.view(raw);
        const legal = view["legal_actions"] as Obj[];
        assert.ok(legal.length > 0);
        const pick = legal[0]!;
        const before = log.length;
        action = await remote.wire(pick);
        log.push(`wire ${String(action["step"] ?? action["type"])}`);
        if (pick["step"] === "key") assert.deepEqual(log.slice(before), [`keep ${m.deal!.number}`, "wire key"]); // kept first
      } else {
        action = other.wire(other.machine.choices(1, other.ownItems())[0]!);
      }
      events.push({ seq: events.length, type: "action", seat: turn, action });
    }
    assert.equal(other.machine.phase, "over");
    // one key a hand, each kept, and the keys revealed at the hands' ends are those kept
    assert.ok(Object.keys(kept).length >= 1);
    const revealed = events.filter((e) => e["seat"] === 0 && (e["action"] as Obj)["step"] === "reveal_key").map((e) => (e["action"] as Obj)["secret"]);
    assert.deepEqual(revealed, Object.values(kept));
    // the worker's ClientError is the page's: nothing to send once the match is over
    await assert.rejects(async () => await remote.wire({ type: "sealed", step: "open" }), (e: unknown) => e instanceof ClientError && !(e instanceof SealedStepRefused) && /not on turn/.test(e.message));
    assert.deepEqual(disputes, []);
  } finally {
    ch.close();
  }
});

test("a refusal in the worker reaches the page as a dispute and a SealedStepRefused", async () => {
  const ch = channel();
  serveSealedSide(ch.worker);
  const disputes: [string, string][] = [];
  const remote = workerSide(() => ch.page)({
    matchId: "m-ts-side-2",
    seat: 0,
    game: "iraqi_domino",
    ruleset: JSON.stringify(IRAQI),
    house: [],
    keys: {},
    keep: () => undefined,
    onDispute: (kind, message) => disputes.push([kind, message]),
  });
  const other = SealedSeat.follow("m-ts-side-2", 1, "iraqi_domino", IRAQI, []);
  try {
    // seat 0 owes the first key step; asked for its key's reveal instead, it refuses
    await remote.takeEvents([]);
    other.takeEvents([]);
    assert.equal(other.machine.owedStep?.seat, 0);
    await assert.rejects(async () => await remote.wire({ type: "sealed", step: "reveal_key" }), (e: unknown) => e instanceof SealedStepRefused && e.kind === "sealed_step");
    assert.equal(disputes.length, 1);
    assert.equal(disputes[0]![0], "sealed_step");
    // a log whose first event is not the seq it should be: a sealed_log refusal
    await assert.rejects(async () => await remote.takeEvents([{ seq: 0, type: "action", seat: 1, action: { type: "sealed", step: "key", key: "00", proof: "00" } }]), (e: unknown) => e instanceof SealedStepRefused && e.kind === "sealed_log");
    assert.deepEqual(
      disputes.map(([k]) => k),
      ["sealed_step", "sealed_log"],
    );
  } finally {
    ch.close();
  }
});

test("a sealed side of a game without a machine is refused at its first call", async () => {
  const ch = channel();
  serveSealedSide(ch.worker);
  const remote = workerSide(() => ch.page)({ matchId: "m", seat: 0, game: "shelem", ruleset: JSON.stringify({ deal: "sealed" }), house: [], keys: {}, keep: () => undefined, onDispute: () => undefined });
  try {
    await assert.rejects(async () => await remote.takeEvents([]), (e: unknown) => e instanceof SealedStepRefused && /hokm, iraqi_domino, qahve/.test(e.message));
  } finally {
    ch.close();
  }
});

test("a worker that fails (its script did not load) fails the calls waiting on it, and those after", async () => {
  const listeners: Record<string, ((e: never) => void)[]> = {};
  const sent: unknown[] = [];
  const port: Port = {
    postMessage: (m) => sent.push(m),
    addEventListener: (type: string, f: (e: never) => void) => (listeners[type] ??= []).push(f),
  };
  const remote = workerSide(() => port)({ matchId: "m", seat: 0, game: "hokm", ruleset: JSON.stringify({ deal: "sealed" }), house: [], keys: {}, keep: () => undefined, onDispute: () => undefined });
  const pending = Promise.resolve(remote.takeEvents([]));
  assert.equal(sent.length, 1); // the init call, unanswered
  for (const f of listeners["error"] ?? []) f({ message: "404" } as never);
  const failed = (e: unknown): boolean => e instanceof ClientError && /worker failed: 404/.test(e.message);
  await assert.rejects(pending, failed);
  await assert.rejects(async () => await remote.wire({ type: "sealed", step: "key" }), failed);
  assert.equal(sent.length, 1);
});

// Sealed tables (qahwa-fair/3) against a real server (tests/client/test_sealed_seat_ts.py starts
// it and verifies what this writes): honest sealed hokm, qahve and Iraqi dominoes matches played to the
// end by conforming TypeScript seats, their transcripts and seat exports written for
// `verify --server --seat`; the four lies of issue 46 served to seat 0 by a lying way to the
// server, each refused with a dispute and nothing given away; a seat reloaded mid-deal resumes
// with the hand secret it stored before sending.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client, MemoryStorage, type Seat, type View } from "../src/index.js";
import { SealedStepRefused, hex, mulSecret, G, scalar } from "../src/sealed/index.js";
import { pick, prng } from "./play.js";

const URL = process.env["QAHWA_TEST_URL"];
const KEY = process.env["QAHWA_TEST_OPERATOR_KEY"];
const OUT = process.env["QAHWA_TEST_OUT"];
if (URL === undefined || KEY === undefined || OUT === undefined) {
  throw new Error("run by tests/client/test_sealed_seat_ts.py: QAHWA_TEST_URL, QAHWA_TEST_OPERATOR_KEY and QAHWA_TEST_OUT");
}

type Obj = { [k: string]: unknown };

async function keep(name: string, transcript: unknown, seats: Seat[]): Promise<void> {
  const dir = join(OUT!, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "transcript.json"), JSON.stringify(transcript));
  for (const s of seats) await writeFile(join(dir, `seat-${s.seat}.json`), JSON.stringify(s.export(), null, 1));
}

/** Play on until the match ends; a view a seat refuses (SealedStepRefused) is read again. */
async function play(seats: Seat[], rand: () => number): Promise<{ view: View; refused: string[]; actions: number }> {
  const refused: string[] = [];
  let turn = 0;
  let actions = 0;
  for (let i = 0; i < 6000; i++) {
    const seat = seats[turn]!;
    let view: View;
    try {
      view = await seat.state();
    } catch (e) {
      if (!(e instanceof SealedStepRefused)) throw e;
      refused.push(e.message);
      continue;
    }
    if (view.status !== "playing") return { view, refused, actions };
    if (view.turn !== view.seat) {
      turn = view.turn ?? 0;
      continue;
    }
    await seat.act(pick(view, rand));
    actions++;
  }
  throw new Error("the match did not end");
}

const HONEST: [string, Obj][] = [
  ["hokm", { players: 4, target: 1, deal: "sealed" }],
  ["hokm", { players: 2, target: 1, deal: "sealed" }],
  ["iraqi_domino", { players: 2, target: 1, deal: "sealed" }],
  ["qahve", { target: 1, deal: "sealed" }],
];

for (const [i, [game, ruleset]] of HONEST.entries()) {
  test(`sealed ${game} ${JSON.stringify(ruleset)}: played to the end by conforming TypeScript seats`, async () => {
    const qc = new Client(URL, { operatorKey: KEY, storage: new MemoryStorage() });
    const n = Number(ruleset["players"] ?? 4);
    const match = await qc.createMatch(game, ruleset, Array.from({ length: n }, (_, s) => `ts-${s}`));
    await match.start();
    const t0 = performance.now();
    const { view, refused, actions } = await play(match.seats, prng(4700 + i));
    assert.equal(view.status, "finished");
    assert.deepEqual(refused, []);
    for (const s of match.seats) assert.deepEqual(s.disputes, []);
    const doc = await match.checkTranscript();
    assert.equal(doc["protocol"], "qahwa-fair/3");
    console.log(`# ${game} ${n} seats: ${actions} actions in ${Math.round(performance.now() - t0)} ms`);
    await keep(`${i}-sealed-${game}-${n}`, doc, match.seats);
  });
}

/** Seat 0's way to the server (tests/sealed/test_sealed_lying_server.py's proxy): the answers
 * as the server gives them, but the first view ``lie`` applies to is changed once; POSTs of
 * actions are kept (with the honest ``owed`` of the last view), and one sent after the lie
 * before the next view is answered 409 and kept as stolen. */
class Liar {
  lied: Obj | null = null;
  afterLie = false;
  posts: [Obj, Obj | null, number][] = [];
  stolen: Obj[] = [];
  honestOwed: Obj | null = null;
  hand = -1;
  dealt0 = new Map<number, Set<number>>();
  constructor(readonly lie: string) {}

  fetch: typeof fetch = async (input, init) => {
    const url = String(input);
    const method = init?.method ?? "GET";
    const path = new globalThis.URL(url).pathname;
    if (method === "POST" && path.endsWith("/actions")) {
      const body = JSON.parse(String(init?.body)) as Obj;
      if (this.afterLie) {
        this.stolen.push(body["action"] as Obj);
        this.afterLie = false;
        return new Response(JSON.stringify({ error: { code: "stale_version", message: "the match moved on" } }), {
          status: 409,
          headers: { "Content-Type": "application/json" },
        });
      }
      this.posts.push([body["action"] as Obj, this.honestOwed, this.hand]);
    }
    const resp = await fetch(input, init);
    if (method !== "GET" || !path.endsWith("/state")) return resp;
    const view = (await resp.json()) as Obj;
    const sv = (view["sealed"] ?? {}) as Obj;
    this.honestOwed = (sv["owed"] as Obj | null | undefined) ?? null;
    if (Array.isArray(sv["dealt"])) {
      this.hand = Number(sv["hand"]);
      const got = this.dealt0.get(this.hand) ?? new Set<number>();
      for (const i of sv["dealt"][0] as number[]) got.add(i);
      this.dealt0.set(this.hand, got);
    }
    this.afterLie = false;
    let out = view;
    if (this.lied === null && view["turn"] === 0 && Object.keys(sv).length) {
      const changed = this.change(view);
      if (changed !== null) {
        this.lied = changed;
        this.afterLie = true;
        out = changed;
      }
    }
    return new Response(JSON.stringify(out), { status: resp.status, headers: { "Content-Type": "application/json" } });
  };

  private change(view: Obj): Obj | null {
    const v = JSON.parse(JSON.stringify(view)) as Obj;
    const sv = v["sealed"] as Obj;
    const owed = sv["owed"] as Obj | null;
    const dealt = sv["dealt"] as number[][];
    const mine = [...dealt[0]!];
    const plays = (v["legal_actions"] as Obj[]).some((a) => a["type"] === "play");
    if (this.lie === "owed_own_items" && owed !== null && owed["step"] === "share" && mine.length) {
      sv["owed"] = { ...owed, items: mine };
    } else if (this.lie === "dealt_swapped" && owed !== null && owed["step"] === "share" && mine.length) {
      [dealt[0], dealt[1]] = [dealt[1]!, dealt[0]!];
      v["hand"] = [...dealt[0]!].sort((a, b) => a - b);
      sv["owed"] = { ...owed, items: mine };
    } else if (this.lie === "reveal_mid_hand" && plays) {
      sv["owed"] = { seat: 0, step: "reveal_key" };
      v["legal_actions"] = v["suggested_actions"] = [{ type: "sealed", step: "reveal_key" }];
    } else if (this.lie === "open_made_up" && plays) {
      sv["owed"] = { seat: 0, step: "open", items: [(v["hand"] as number[])[0]!] };
      v["legal_actions"] = v["suggested_actions"] = [{ type: "sealed", step: "open" }];
    } else {
      return null;
    }
    return v;
  }
}

const LIES: [string, string, Obj][] = [
  ...["owed_own_items", "reveal_mid_hand", "open_made_up", "dealt_swapped"].map((lie): [string, string, Obj] => ["hokm", lie, { players: 4, target: 1, deal: "sealed" }]),
  ...["owed_own_items", "dealt_swapped"].map((lie): [string, string, Obj] => ["iraqi_domino", lie, { players: 2, target: 1, deal: "sealed" }]),
];

for (const [game, lie, ruleset] of LIES) {
  test(`sealed ${game}: a server that lies (${lie}) to a TypeScript seat is refused and gets nothing`, async () => {
    const storage = new MemoryStorage();
    const qc = new Client(URL, { operatorKey: KEY, storage });
    const n = Number(ruleset["players"]);
    const match = await qc.createMatch(game, ruleset, Array.from({ length: n }, (_, s) => `ts-${s}`));
    await match.start();
    // seat 0 goes on through the lying way, from the same storage (its secrets with it)
    const liar = new Liar(lie);
    const lying = new Client(URL, { storage, fetch: liar.fetch });
    const seat0 = await lying.seat(match.matchId, 0, match.seats[0]!.token);
    const seats = [seat0, ...match.seats.slice(1)];
    const { view, refused } = await play(seats, prng(lie.length * 31 + n));
    assert.ok(liar.lied !== null, "the lie was never served");
    assert.equal(view.status, "finished");
    // the seat refused the lying view, kept a dispute with it, and sent nothing after it
    assert.equal(refused.length, 1, JSON.stringify(refused));
    assert.match(refused[0]!, /the view disagrees with the log/);
    assert.deepEqual(
      seat0.disputes.map((d) => d.kind),
      ["sealed_view"],
    );
    assert.deepEqual((seat0.disputes[0]!.evidence["view"] as Obj)["sealed"], liar.lied["sealed"]);
    assert.deepEqual(liar.stolen, []);
    // over the whole match: no share of its own items but each one's opening, no key before
    // the hand's play was over, no open step
    assert.ok(liar.dealt0.size > 0 && [...liar.dealt0.values()].every((s) => s.size > 0));
    for (const [action, honest, hand] of liar.posts) {
      const own = liar.dealt0.get(hand) ?? new Set<number>();
      if (action["type"] === "sealed") {
        assert.notEqual(action["step"], "open");
        assert.ok(honest !== null && action["step"] === honest["step"], JSON.stringify([action["step"], honest]));
        if (action["step"] === "share") for (const x of action["shares"] as Obj[]) assert.ok(!own.has(x["item"] as number));
      } else if ("share" in action) {
        assert.equal(action["type"], "play");
        assert.ok(own.has(action["item"] as number));
      }
    }
    const opened = liar.posts.filter(([a]) => a["type"] === "play").map(([a, , h]) => `${h}/${String(a["item"])}`);
    assert.ok(opened.length > 0 && new Set(opened).size === opened.length);
    const doc = await match.transcript();
    for (const s of seats) await s.checkTranscript(doc);
  });
}

test("a seat reloaded mid-deal resumes with the hand secret it stored before sending", async () => {
  const storage = new MemoryStorage();
  const qc = new Client(URL, { operatorKey: KEY, storage });
  const match = await qc.createMatch("iraqi_domino", { players: 2, target: 1, deal: "sealed" }, ["Layla", "Omar"]);
  await match.start();
  // seat 0's page dies as its key step is about to leave: the secret is stored, nothing sent
  let died = false;
  const dying = new Client(URL, {
    storage,
    fetch: async (input, init) => {
      if ((init?.method ?? "GET") === "POST" && new globalThis.URL(String(input)).pathname.endsWith("/actions") && String(init?.body).includes('"step":"key"') && !died) {
        died = true;
        throw new Error("the page was closed here");
      }
      return fetch(input, init);
    },
    retries: 0,
  });
  const first = await dying.seat(match.matchId, 0, match.seats[0]!.token);
  const v = await first.state();
  assert.deepEqual(v.legal_actions, [{ type: "sealed", step: "key" }]);
  await assert.rejects(first.act(v.legal_actions[0]!), /closed/);
  const stored = JSON.parse((await storage.get(`seat/${match.matchId}/0`))!) as Obj;
  const secret = (stored["sealed_keys"] as Record<string, string>)["0"]!;
  assert.match(secret, /^[0-9a-f]{64}$/);
  // the reload: a new client over the same storage; the key it sends is the stored secret's
  const again = new Client(URL, { storage });
  const seat0 = await again.seat(match.matchId, 0, match.seats[0]!.token);
  const seats = [seat0, match.seats[1]!];
  const w = await seat0.state();
  await seat0.act(w.legal_actions[0]!);
  const log = (await qc.request("GET", `/v1/matches/${match.matchId}/events?after=-1`)) as Obj;
  const events = log["events"] as Obj[];
  const keyEv = events.find((e) => e["seat"] === 0 && (e["action"] as Obj)["step"] === "key")!;
  const x = scalar(Uint8Array.from(Buffer.from(secret, "hex")), "stored secret");
  assert.equal((keyEv["action"] as Obj)["key"], hex(mulSecret(x, G).toBytes()));
  const { view, refused } = await play(seats, prng(99));
  assert.equal(view.status, "finished");
  assert.deepEqual(refused, []);
  const doc = await match.checkTranscript();
  await keep("resumed-sealed-iraqi_domino", doc, seats);
});

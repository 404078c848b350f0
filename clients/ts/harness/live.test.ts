// The client against a real server (tests/client/test_clients_ts.py starts it and verifies what this
// writes): every game and form played to the end by conforming seats, the transcripts checked
// against each seat's lock and receipts, the seat exports written for `verify --seat`; and a
// seat that crashes in the middle of a match resumed from its file storage.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { Client, Disputed, MemoryStorage, type Seat } from "../src/index.js";
import { FileStorage } from "../src/node.js";
import { playOut, prng } from "./play.js";

const URL = process.env["QAHWA_TEST_URL"];
const KEY = process.env["QAHWA_TEST_OPERATOR_KEY"];
const OUT = process.env["QAHWA_TEST_OUT"];
if (URL === undefined || KEY === undefined || OUT === undefined) {
  throw new Error("run by tests/client/test_clients_ts.py: QAHWA_TEST_URL, QAHWA_TEST_OPERATOR_KEY and QAHWA_TEST_OUT");
}

export const FORMS: [string, Record<string, unknown>][] = [
  ["tawla", { match_length: 1 }],
  ["mahbusa", { match_length: 1 }],
  ["iraqi_domino", { players: 2, target: 1 }],
  ["iraqi_domino", { players: 4, target: 1 }],
  ["mexican_train", { players: 2, rounds: 1 }],
  ["mexican_train", { players: 4, rounds: 1 }],
  ["qahve", { target: 1 }],
  ["hokm", { players: 4, target: 1 }],
  ["hokm", { players: 3, target: 1 }],
  ["hokm", { players: 2, target: 1 }],
  ["shelem", { players: 4, target: 5 }],
  ["shelem", { players: 2, target: 5 }],
];

async function keep(name: string, transcript: unknown, seats: Seat[]): Promise<void> {
  const dir = join(OUT!, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "transcript.json"), JSON.stringify(transcript));
  for (const s of seats) await writeFile(join(dir, `seat-${s.seat}.json`), JSON.stringify(s.export(), null, 1));
}

for (const [i, [game, ruleset]] of FORMS.entries()) {
  test(`${game} ${JSON.stringify(ruleset)}: played to the end by conforming seats`, async () => {
    const qc = new Client(URL, { operatorKey: KEY, storage: new MemoryStorage() });
    const n = Number(ruleset["players"] ?? (game === "qahve" ? 4 : 2));
    const names = Array.from({ length: n }, (_, s) => `ts-${s}`);
    const match = await qc.createMatch(game, ruleset, names);
    await match.start();
    for (const s of match.seats) {
      assert.ok(s.lock !== null && s.revealed, "every seat checked the lock and revealed");
      assert.ok(s.receipts.filter((r) => r["seq"] === -1).length >= 2, "the lock and the reveal receipted");
    }
    const { status } = await playOut(match.seats, prng(1000 + i), game === "hokm" && n === 4 ? { resignAfter: 6 } : {});
    assert.equal(status, "finished");
    const doc = await match.checkTranscript();
    assert.ok(match.seats.some((s) => s.receipts.some((r) => Number(r["seq"]) >= 0)), "actions receipted");
    await keep(`${i}-${game}`, doc, match.seats);
  });
}

test("a seat that crashes in the middle of a tawla match resumes from its storage", async () => {
  const dir = await mkdtemp(join(tmpdir(), "qahwa-seat-"));
  // The first process: plays a few moves, then dies while an action is on the wire (the
  // server acts on it, the answer is lost).
  let crashAt = -1;
  let posts = 0;
  const dying: typeof fetch = async (input, init) => {
    const resp = await fetch(input, init);
    if (init?.method === "POST" && new globalThis.URL(String(input)).pathname.endsWith("/actions") && ++posts === crashAt) {
      throw new Error("the process died here");
    }
    return resp;
  };
  const first = new Client(URL, { operatorKey: KEY, storage: new FileStorage(dir), fetch: dying, retries: 0 });
  const match = await first.createMatch("tawla", { match_length: 1 }, ["Layla", "Omar"]);
  await match.start();
  await playOut(match.seats, prng(7), { stopAfter: 6 });
  crashAt = posts + 1;
  await assert.rejects(playOut(match.seats, prng(8)), /died/);
  const lost = match.seats.flatMap((s) => s.requests).filter((r) => r.answered_at === null && r.refused === null);
  assert.equal(lost.length, 1, "one signed action went out unanswered");

  // The reload: a new client, the same files; the seats come back with their secrets.
  const again = new Client(URL, { operatorKey: KEY, storage: new FileStorage(dir) });
  assert.deepEqual((await again.storedSeats()).map((s) => s.seat), [0, 1]);
  const seats: Seat[] = [];
  for (const s of match.seats) seats.push(await again.seat(match.matchId, s.seat, s.token));
  for (const [k, s] of seats.entries()) {
    assert.equal(s.clientSeed, match.seats[k]!.clientSeed);
    assert.equal(s.publicKey, match.seats[k]!.publicKey);
    assert.deepEqual(s.receipts, match.seats[k]!.receipts);
  }
  const pending = seats.find((s) => s.requests.at(-1)?.answered_at === null)!;
  const before = pending.requests.at(-1)!.body;
  await pending.resendPending(); // identical bytes: the server already has it (409) or takes it now
  assert.equal(pending.requests.at(-1)!.body, before);
  const { status } = await playOut(seats, prng(9));
  assert.equal(status, "finished");
  for (const s of seats) await s.checkTranscript();
  await keep("resumed-tawla", await seats[0]!.transcript(), seats);
});

test("events pushed live over SSE are checked against the local clock", async () => {
  const qc = new Client(URL, { operatorKey: KEY });
  const match = await qc.createMatch("tawla", { match_length: 1 }, ["Layla", "Omar"]);
  await match.start();
  const seat = match.seats[0]!;
  let seen = 0;
  const honest = (async () => {
    for await (const ev of seat.events()) {
      assert.equal(ev["seq"], seen++);
    }
  })();
  // a watcher whose clock is two hours ahead of the server's
  const ahead = new Client(URL, { now: () => Date.now() + 2 * 3600 * 1000 });
  const watcher = await ahead.seat(match.matchId, 1, match.seats[1]!.token);
  const skewed: Promise<unknown> = (async () => {
    for await (const ev of watcher.events()) void ev;
  })().then(
    () => null,
    (e: unknown) => e,
  );
  await new Promise((r) => setTimeout(r, 500));
  const { status } = await playOut(match.seats, prng(21));
  assert.equal(status, "finished");
  await honest;
  assert.equal(seat.disputes.length, 0);
  assert.equal(seen, ((await match.transcript())["events"] as unknown[]).length);
  const events = (await match.transcript())["events"] as { at?: string }[];
  if (events.some((e) => typeof e.at === "string")) {
    const e = await skewed;
    assert.ok(e instanceof Disputed && /more than 30 s/.test(e.message), String(e));
    assert.equal(watcher.disputes.length, 1);
  } else {
    assert.equal(await skewed, null); // a server before the 2026-12-03 revision: no times
    assert.equal(watcher.disputes.length, 0);
  }
});

test("watch() tells the start of a tawla match, which draws no event, and what it showed holds the transcript", async () => {
  const qc = new Client(URL, { operatorKey: KEY });
  const match = await qc.createMatch("tawla", { match_length: 1 }, ["Layla", "Omar"]);
  for (const s of match.seats) await s.commit();
  const [first, last] = [match.seats[0]!, match.seats[1]!];
  await first.reveal();
  const notices: string[] = [];
  let opened!: () => void;
  const open = new Promise<void>((r) => (opened = r));
  const watching = (async () => {
    for await (const n of first.watch()) {
      notices.push(n.kind === "status" ? `status ${n.status}` : n.kind);
      if (n.kind === "open") opened();
    }
  })();
  await open;
  await last.reveal(); // the match starts: no event, a status notice
  const { status } = await playOut(match.seats, prng(5));
  assert.equal(status, "finished");
  await watching;
  assert.equal(notices[0], "open");
  assert.equal(notices[1], "status playing");
  const events = ((await match.transcript())["events"] as unknown[]).length;
  assert.equal(notices.filter((n) => n === "event").length, events);
  assert.equal(first.shown.size, events);
  await first.checkTranscript();
});

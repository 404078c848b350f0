// A cheating server (tests/support/fake_http.py, run by tests/client/test_clients_ts.py) is refused before
// it learns what it lies for: no seed or nonce after a bad lock or log proof, no roll-chain
// value asked for early, a receipt or transcript that disagrees caught, an early timeout
// disputed; and an honest fake's whole match passes every check, with resends of identical
// bytes after a lost answer, a dropped connection, a 503 and a 429's Retry-After.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, Disputed, MemoryStorage, NotOurMatch, TranscriptMismatch, ClientError, type Seat, type Match } from "../src/index.js";
import { step } from "./play.js";

const HUB = process.env["QAHWA_FAKE_HUB"];
if (HUB === undefined) throw new Error("run by tests/client/test_clients_ts.py: QAHWA_FAKE_HUB");

interface Sent {
  method: string;
  path: string;
  body: string;
}

async function fake(tamper: string[] = [], faults: string[] = []): Promise<{ base: string; sent: () => Promise<Sent[]> }> {
  const r = await fetch(`${HUB}/new?tamper=${tamper.join(",")}&faults=${faults.join(",")}`, { method: "POST" });
  assert.equal(r.status, 200, await r.clone().text());
  const { base } = (await r.json()) as { base: string };
  return { base, sent: async () => (await (await fetch(`${base}/_sent`)).json()) as Sent[] };
}

function client(base: string, extra: Record<string, unknown> = {}): Client {
  return new Client(base, { storage: new MemoryStorage(), retryDelay: 1, ...extra });
}

async function seated(base: string, opts: Record<string, unknown> = {}): Promise<{ qc: Client; match: Match }> {
  const qc = client(base, opts);
  const match = await qc.createMatch("tawla", undefined, ["Layla", "Omar"]);
  return { qc, match };
}


const reveals = (sent: Sent[]) => sent.filter((s) => s.path.endsWith("/reveal"));
const secrets = (sent: Sent[]) => sent.filter((s) => /client_seed|nonce/.test(s.body));

for (const [tamper, why] of [
  ["lock_signer", /lock's signature does not match/],
  ["lock_ruleset", /lock's ruleset/],
  ["lock_commitment", /lock's seed_commitment at seat 0/],
  ["lock_not_logged", /not shown in the log: log entry \d+ is not this lock/],
  ["checkpoint_forged", /not shown in the log: the checkpoint is not signed by the log key fake.example\/log/],
] as const) {
  test(`a lock refused: ${tamper}`, async () => {
    const f = await fake([tamper]);
    const { match } = await seated(f.base);
    for (const s of match.seats) await s.commit();
    await assert.rejects(match.seats[0]!.reveal(), (e: unknown) => e instanceof NotOurMatch && why.test(e.message));
    assert.equal(match.seats[0]!.revealed, false);
    assert.deepEqual(secrets(await f.sent()), [], "no seed or nonce reached the server");
  });
}

for (const [tamper, why] of [
  ["equivocate", /two checkpoints of size \d+ with different roots/],
  ["fork", /does not extend the log of size 3: a fork/],
] as const) {
  test(`a lock under a checkpoint that contradicts one seen before is refused: ${tamper}`, async () => {
    const f = await fake([tamper]);
    const { qc, match } = await seated(f.base);
    for (const s of match.seats) await s.commit();
    await qc.observeCheckpoint(); // what the log showed this client (or its witness) before
    await assert.rejects(match.seats[1]!.reveal(), (e: unknown) => e instanceof NotOurMatch && why.test(e.message));
    assert.deepEqual(reveals(await f.sent()), []);
    assert.deepEqual(secrets(await f.sent()), []);
  });
}

test("a ruleset without fresh rolls is refused unless the player asked for it", async () => {
  const f = await fake(["precomputed"]);
  const { match } = await seated(f.base);
  await assert.rejects(match.seats[0]!.commit(), (e: unknown) => e instanceof NotOurMatch && /fresh_rolls/.test(e.message));
  assert.deepEqual((await f.sent()).filter((s) => s.method === "POST" && s.path.includes("/seats/")), []);
  const g = await fake(["precomputed"]);
  const qc = client(g.base);
  const ok = await qc.createMatch("tawla", undefined, ["Layla", "Omar"], undefined, { allowPrecomputedRolls: true });
  await ok.seats[0]!.commit();
});

test("a server clock an hour off is a dispute, before any reveal", async () => {
  const f = await fake(["skew"]);
  const { match } = await seated(f.base);
  await match.seats[0]!.commit();
  await assert.rejects(match.seats[1]!.commit(), (e: unknown) => e instanceof Disputed && /more than 30 s/.test(e.message));
  assert.equal(match.seats[1]!.disputes.length, 1);
  await assert.rejects(match.seats[0]!.reveal(), Disputed);
  assert.deepEqual(secrets(await f.sent()), []);
});

test("a roll value asked for before the roller rolled is not sent", async () => {
  const f = await fake(["value_early"]);
  const { match } = await seated(f.base);
  await match.start();
  for (let i = 0; i < 8; i++) await step(match.seats); // opening (2), move, roll (2), move, roll (2)
  const lying = await match.seats[1]!.state();
  assert.deepEqual(lying.legal_actions, [{ type: "roll_value" }]);
  const before = (await f.sent()).length;
  await assert.rejects(match.seats[1]!.act({ type: "roll_value" }), /before the roller rolled/);
  const after = (await f.sent()).slice(before);
  assert.deepEqual(after.filter((s) => s.method === "POST"), [], "nothing was posted");
});

test("a view claiming values the seat never sent gets none", async () => {
  const f = await fake(["values_used_ahead"]);
  const { match } = await seated(f.base);
  await match.start();
  await assert.rejects(match.seats[0]!.act({ type: "roll_value" }), /does not skip ahead/);
  assert.deepEqual((await f.sent()).filter((s) => s.path.endsWith("/actions")), []);
});

test("a receipt that disagrees with the answer is refused", async () => {
  const f = await fake(["receipt_lies"]);
  const { match } = await seated(f.base);
  await match.start();
  await assert.rejects(step(match.seats), /receipt's chain .* is not the head/);
});

test("a transcript that disagrees with a receipt is signed proof of a rewrite", async () => {
  const f = await fake(["rewrite"]);
  const { match } = await seated(f.base);
  await match.start();
  while (await step(match.seats));
  await assert.rejects(match.seats[0]!.checkTranscript(), (e: unknown) => e instanceof TranscriptMismatch && /rewrote the match/.test(e.message));
});

test("a timeout before the deadline is disputed, from the transcript and from the pushed events", async () => {
  const f = await fake(["early_timeout"]);
  const { match } = await seated(f.base);
  await match.start();
  for (let i = 0; i < 8; i++) await step(match.seats);
  await assert.rejects(step(match.seats), /match_over/);
  await assert.rejects(match.seats[0]!.checkTranscript(), (e: unknown) => e instanceof Disputed && /before its deadline/.test(e.message));
  const seat = match.seats[0]!;
  await assert.rejects(
    (async () => {
      for await (const ev of seat.events()) void ev;
    })(),
    (e: unknown) => e instanceof Disputed && /before its deadline/.test(e.message),
  );
  assert.ok(seat.disputes.length >= 2 && seat.disputes.every((d) => d.evidence["event"] !== undefined));
});

test("an honest server's match passes every check; resends are identical bytes", async () => {
  const f = await fake([], ["lose", "drop", "503", "429"]);
  const { match } = await seated(f.base, { retries: 5 });
  await match.start();
  const t0 = Date.now();
  while (await step(match.seats));
  assert.ok(Date.now() - t0 >= 1000, "the 429's Retry-After: 1 was honoured");
  const doc = await match.checkTranscript();
  assert.equal(doc["protocol"], "qahwa-fair/2");
  const posts = (await f.sent()).filter((s) => s.path.endsWith("/actions"));
  // the first action went out five times (lost answer, dropped, 503, 429, accepted... or 409)
  const first = posts[0]!.body;
  assert.ok(posts.filter((p) => p.body === first).length >= 4, "every copy is the same bytes");
  for (const s of match.seats) {
    assert.ok(s.receipts.length > 2);
    assert.equal(s.disputes.length, 0);
    const ex = s.export();
    assert.equal(ex.client_seed, s.clientSeed);
    assert.ok(!("key_seed" in ex) && !JSON.stringify(ex).includes("chain_secret"));
  }
  const events: number[] = [];
  for await (const ev of match.seats[0]!.events()) events.push(Number(ev["seq"]));
  assert.deepEqual(events, [...Array(events.length).keys()]);
});

test("a client seed given twice is refused", async () => {
  const f = await fake();
  const { match } = await seated(f.base);
  await match.seats[0]!.commit("my lucky seed");
  await assert.rejects(match.seats[1]!.commit("my lucky seed"), (e: unknown) => e instanceof ClientError && /never uses a seed twice/.test(e.message));
});

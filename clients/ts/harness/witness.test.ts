// A witness that fails alone (issue 49; tests/client/test_clients_ts.py runs this against a server
// whose only witness it stops through QAHWA_TEST_WITNESS_STOP, and verifies what it writes): a
// seat that pins no witness plays on, the match under way and a new one; a seat whose player
// pinned that witness refuses to reveal (its own policy), having sent no secret.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client, MemoryStorage, NotOurMatch, type Seat } from "../src/index.js";
import { playOut, prng } from "./play.js";

const URL = process.env["QAHWA_TEST_URL"];
const KEY = process.env["QAHWA_TEST_OPERATOR_KEY"];
const OUT = process.env["QAHWA_TEST_OUT"];
const WITNESS = process.env["QAHWA_TEST_WITNESS"];
const STOP = process.env["QAHWA_TEST_WITNESS_STOP"];
if (URL === undefined || KEY === undefined || OUT === undefined || WITNESS === undefined || STOP === undefined) {
  throw new Error(
    "run by tests/client/test_clients_ts.py: QAHWA_TEST_URL, QAHWA_TEST_OPERATOR_KEY, QAHWA_TEST_OUT, QAHWA_TEST_WITNESS and QAHWA_TEST_WITNESS_STOP",
  );
}

async function keep(name: string, transcript: unknown, seats: Seat[]): Promise<void> {
  const dir = join(OUT!, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "transcript.json"), JSON.stringify(transcript));
  for (const s of seats) await writeFile(join(dir, `seat-${s.seat}.json`), JSON.stringify(s.export(), null, 1));
}

test("the witness stops mid-play: seats that pin no witness play on, seats that pin it refuse", async () => {
  const qc = new Client(URL, { operatorKey: KEY, storage: new MemoryStorage() });
  // the player pinned the witness: waits up to 30 s for its cosignature while it is up...
  const pinned = new Client(URL, { operatorKey: KEY, witnesses: [WITNESS], storage: new MemoryStorage() });
  // ...and, to see the refusal without waiting that long, 2 s
  const impatient = new Client(URL, { operatorKey: KEY, witnesses: [WITNESS], proofWait: 2, storage: new MemoryStorage() });
  // while the witness is up, a seat that pins it plays as well
  const first = await pinned.createMatch("tawla", { match_length: 1 }, ["a", "b"]);
  await first.start();
  const under = await qc.createMatch("tawla", { match_length: 1 }, ["c", "d"]);
  await under.start();
  assert.equal((await playOut(under.seats, prng(7), { stopAfter: 4 })).status, "stopped");

  const stopped = await fetch(`${STOP}/stop`, { method: "POST" });
  assert.equal(stopped.status, 200);
  await new Promise((r) => setTimeout(r, 300));

  // the match under way goes on, and so does one locked after the witness went down
  assert.equal((await playOut(under.seats, prng(8))).status, "finished");
  await keep("under-way", await under.checkTranscript(), under.seats);
  const after = await qc.createMatch("tawla", { match_length: 1 }, ["e", "f"]);
  await after.start();
  for (const s of after.seats) assert.ok(s.revealed && s.lock !== null);
  assert.equal((await playOut(after.seats, prng(9))).status, "finished");
  await keep("after", await after.checkTranscript(), after.seats);
  assert.equal((await playOut(first.seats, prng(10))).status, "finished");
  await keep("first", await first.checkTranscript(), first.seats);

  // a seat whose player pinned the down witness: its policy refuses to reveal
  const refused = await impatient.createMatch("tawla", { match_length: 1 }, ["g", "h"]);
  for (const s of refused.seats) await s.commit();
  await assert.rejects(refused.seats[0]!.reveal(30), (exc: unknown) => {
    assert.ok(exc instanceof NotOurMatch, String(exc));
    assert.match(exc.message, /cosigned by 0 of the witnesses this client trusts, not the 1 it needs/);
    return true;
  });
  assert.equal(refused.seats[0]!.revealed, false);
  assert.ok(!refused.seats[0]!.requests.some((r) => r.path.endsWith("/reveal")), "no reveal was sent");
});

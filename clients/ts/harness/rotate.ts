// A tawla match through two key rotations (tests/client/test_rotation.py runs this script and
// drives it): the script plays, stops at each step and prints ``PAUSE <step>``, and goes on
// when a line comes on stdin — the test has staged a key ("rotate") or moved the server's
// clock past its activation ("switch") meanwhile. The client starts with the keys pinned in
// QAHWA_TEST_KEYS (``/v1/keys`` saved before the match) and takes each new key through its
// announcement. It writes the transcript, the seat exports and the extended keys document to
// QAHWA_TEST_OUT, and prints one JSON line of what it saw.
import { createInterface } from "node:readline";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { Client, type KeysOut, MemoryStorage } from "../src/index.js";
import { playOut, prng } from "./play.js";

const URL = process.env["QAHWA_TEST_URL"];
const KEY = process.env["QAHWA_TEST_OPERATOR_KEY"];
const OUT = process.env["QAHWA_TEST_OUT"];
const KEYS = process.env["QAHWA_TEST_KEYS"];
if (URL === undefined || KEY === undefined || OUT === undefined || KEYS === undefined) {
  throw new Error("run by tests/client/test_rotation.py: QAHWA_TEST_URL, _OPERATOR_KEY, _OUT and _KEYS");
}
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

async function pause(step: string): Promise<void> {
  console.log(`PAUSE ${step}`);
  const got = await lines.next();
  if (got.done === true) throw new Error("stdin closed");
}

const pinned = JSON.parse(await readFile(KEYS, "utf8")) as KeysOut;
const qc = new Client(URL, { operatorKey: KEY, storage: new MemoryStorage(), keys: pinned });
const match = await qc.createMatch("tawla", { match_length: 1 }, ["Layla", "Omar"]);
await match.start();
const rand = prng(49);
let actions = 0;
let status = "playing";
for (const [n, step] of [
  [6, "rotate"],
  [6, "switch"],
  [10, "rotate"],
  [6, "switch"],
] as const) {
  const out = await playOut(match.seats, rand, { stopAfter: n });
  actions += out.actions;
  status = out.status;
  if (status !== "stopped") break;
  await pause(step);
}
if (status === "stopped") {
  const out = await playOut(match.seats, rand);
  actions += out.actions;
  status = out.status;
}
const doc = await match.checkTranscript();
await mkdir(OUT, { recursive: true });
await writeFile(join(OUT, "transcript.json"), JSON.stringify(doc));
for (const s of match.seats) await writeFile(join(OUT, `seat-${s.seat}.json`), JSON.stringify(s.export(), null, 1));
await writeFile(join(OUT, "keys.json"), JSON.stringify(await qc.keysDocument(), null, 1));
const signers = match.seats.flatMap((s) => s.receipts.map((r) => (r["signature"] as { key_id: string }).key_id));
console.log(
  JSON.stringify({
    actions,
    status,
    announced: Object.keys(qc.announced),
    refused: qc.refusedAnnouncements.length,
    disputes: match.seats.reduce((k, s) => k + s.disputes.length, 0),
    signers: [...new Set(signers)],
  }),
);
process.exit(0);

// fairness-v2.md §10, computed in TypeScript by the client's own code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkSeatSigs } from "../src/verify/chain.js";
import {
  Client,
  MemoryStorage,
  type Obj,
  RollChain,
  canonicalBytes,
  chainHeads,
  chainHeadsOf,
  signedBody,
  SeatKey,
  chainNext,
  chainStart,
  dice,
  freshLabel,
  fromBase64,
  matchKey,
  seedCommitment,
  shuffle,
  sigMessage,
  toBase64,
  toHex,
  uniform,
  canonical,
  verifyEd25519,
  sha256,
  utf8,
} from "../src/index.js";

const bytes = (f: (i: number) => number, n: number) => Uint8Array.from({ length: n }, (_, i) => f(i));
const serverSeed = bytes((i) => i, 64);
const nonce0 = bytes((i) => 0xa0 + (i % 16), 32);
const nonce1 = bytes((i) => 0xb0 + (i % 16), 32);
const RULESET = canonical({ match_length: 5, cube: true });

function deck52(): string[] {
  const out: string[] = [];
  for (const s of "CDHS") for (const r of "23456789TJQKA") out.push(r + s);
  return out;
}
function tiles(m: number): string[] {
  const out: string[] = [];
  for (let a = 0; a <= m; a++) for (let b = a; b <= m; b++) out.push(`${a}-${b}`);
  return out;
}

async function key(): Promise<Uint8Array> {
  return matchKey(serverSeed, "m-0002", "tawla", RULESET, [
    { clientSeed: "alice-seed", nonce: nonce0 },
    { clientSeed: "bob-seed", nonce: nonce1 },
  ]);
}

test("the server's commitment and the seats' seed commitments", async () => {
  assert.equal(toHex(await sha256(serverSeed)), "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108");
  assert.equal(await seedCommitment("m-0002", 0, nonce0, "alice-seed"), "ed862e4e2373b5ad61bb038f4799631b9d122b49a9ccf6b842a4df3ae698eec4");
  assert.equal(await seedCommitment("m-0002", 1, nonce1, "bob-seed"), "14c3bf3c07c4d92c9404b4f4f19f98aba7ec9798895411f7064279c66f2ca597");
});

test("the match key K and its draws", async () => {
  const K = await key();
  assert.equal(
    toHex(K),
    "3999c615a24c97f0baf7c1091cfa88d7ca8d6ba6c838b6b63e3fd8f27824f934" +
      "8e74dc7223feb2453861e2c13a214a262550553e27c281730e7c3af33639d260",
  );
  assert.deepEqual(await dice(K, "g0/opening/0", 2), [1, 2]);
  assert.deepEqual(await dice(K, "g0/roll/1", 2), [4, 5]);
  assert.equal(await uniform(K, "dealer", 4), 1);
  assert.equal(await uniform(K, "h0/cut", 51), 7);
  assert.deepEqual((await shuffle(K, "h0/shuffle", deck52())).slice(0, 13).join(" "), "7C AC 3S 8S 5H 2D 9H 8D QH AS JC AH 6H");
  const qahve = [...deck52().filter((c) => c !== "2D" && c !== "2H"), "JB", "JR"];
  assert.equal((await shuffle(K, "h0/shuffle", qahve)).slice(0, 13).join(" "), "7C AC 5S TS 7H 3D JH 9D AH JR JC 3S 8H");
  assert.equal((await shuffle(K, "r0/shuffle", tiles(6))).slice(0, 7).join(" "), "1-3 0-3 5-5 4-6 2-5 3-3 2-6");
  const t12 = tiles(12).filter((t) => t !== "12-12");
  assert.equal(
    (await shuffle(K, "r0/shuffle", t12)).slice(0, 15).join(" "),
    "1-2 4-10 3-8 6-10 8-10 10-10 7-8 7-10 1-1 7-7 3-12 2-10 6-12 0-1 3-9",
  );
});

test("roll chains, their first values and a fresh roll's label and dice", async () => {
  const c0 = new RollChain("m-0002", 0, bytes((i) => 0xc0 + (i % 16), 32));
  const c1 = new RollChain("m-0002", 1, bytes((i) => 0xd0 + (i % 16), 32));
  assert.equal(c0.tip, "b7e641e487a7845194cb36ba29946eb6ad08888763bcb3e29fa500e52c34227f");
  assert.equal(c1.tip, "b241b65fd7c34d14f42ab3d02e55958eaa291adccbccb5ea3e2d6ad41ecd978e");
  assert.equal(c0.value(0), "45bba2e9c7bd9d91eff3ed896a901f8a9dd5ca8f01e005da2c26c24a73d8c267");
  assert.equal(c1.value(0), "bcaa14f3bf49355c0cc34e802c86851e87e753cd62f28efbcf777f8cfed78fb2");
  const label = await freshLabel("g0/roll/1", c0.value(0), c1.value(0));
  assert.equal(label, "g0/roll/1|4406efb7f3fffc0db04b39d6542d1b187a75c7536d4d19896ef8c7348e7f8537");
  assert.deepEqual(await dice(await key(), label, 2), [1, 5]);
  assert.throws(() => c0.value(65536));
});

test("the event chain and a seat's signature", async () => {
  const start = await chainStart({ match_id: "m-0002", type: "lock" });
  assert.equal(toHex(start), "47a90014f0a305e5322606bc8d90723a5bdd3d194af6bb49be4a61c9c52b1030");
  const c0 = await chainNext(start, { kind: "dice", label: "g0/opening/0", result: [1, 2], seq: 0, type: "chance" });
  assert.equal(toHex(c0), "ee898cbcc5ea2fb4c30524677adc3be75759367c55c495d26b5393bd52999350");
  const ev = { action: { steps: [[13, 10], [24, 23]], type: "move" }, seat: 1, seq: 1, type: "action" };
  assert.equal(toHex(await chainNext(c0, ev)), "73beb466eb11a39fbfa834f85ca5fb87648ae79ddecc666036be4597c9f5abbf");
  const k = new SeatKey(new Uint8Array(32).fill(0x42));
  assert.equal(k.publicB64, "IVL40Zt5HSRFMkLhXy6rbLfP+ntqXtMAl5YOBpiB2xI=");
  const msg = sigMessage("m-0002", toHex(c0), ev);
  assert.equal(
    new TextDecoder().decode(msg),
    '{"event":{"action":{"steps":[[13,10],[24,23]],"type":"move"},"seat":1,"type":"action"},"match_id":"m-0002","prev":"ee898cbcc5ea2fb4c30524677adc3be75759367c55c495d26b5393bd52999350"}',
  );
  const sig = k.sign(msg);
  assert.equal(sig, "k5OmszCOBzVOgTxvGsLBDecDFGCn2X6+4hCZw8h8Cqm3VxR+JDaFVJmIKy93jzCkN6xPbkJyvlY3VIwC8z8TCw==");
  assert.equal(await verifyEd25519(k.publicB64, sig, msg), true);
  assert.equal(await verifyEd25519(k.publicB64, sig, utf8("another message")), false);
  const bad = fromBase64(sig);
  bad[0] = bad[0]! ^ 1;
  assert.equal(await verifyEd25519(k.publicB64, toBase64(bad), msg), false);
});

test("one walk of the event chain and the seats' signatures: the seat's transcript check and the page's", async () => {
  const k = new SeatKey(new Uint8Array(32).fill(0x42));
  const chanceEv: Obj = { kind: "dice", label: "g0/opening/0", result: [1, 2], seq: 0, type: "chance" };
  const move: Obj = { action: { steps: [[13, 10], [24, 23]], type: "move" }, seat: 1, seq: 1, type: "action" };
  const heads = chainHeadsOf(canonicalBytes({ match_id: "m-0002", type: "lock" }), [chanceEv, move].map((e) => canonicalBytes(e)));
  assert.deepEqual(heads.map(toHex), [
    "47a90014f0a305e5322606bc8d90723a5bdd3d194af6bb49be4a61c9c52b1030",
    "ee898cbcc5ea2fb4c30524677adc3be75759367c55c495d26b5393bd52999350",
    "73beb466eb11a39fbfa834f85ca5fb87648ae79ddecc666036be4597c9f5abbf",
  ]);
  const lock = { seats: [{ key: null }, { key: k.publicB64 }] };
  const signedMove = { ...move, sig: k.sign(sigMessage("m-0002", toHex(heads[1]!), move)) };
  const check = (events: Obj[], l: unknown = lock) =>
    checkSeatSigs("m-0002", l, events, events.map((e) => canonical(signedBody(e))), heads);
  const ok = await check([chanceEv, signedMove]);
  assert.equal(ok.problem, null);
  assert.equal(ok.signed, 1);
  assert.deepEqual([...ok.keyed.keys()], [1]);
  const bad = fromBase64(signedMove.sig);
  bad[0] = bad[0]! ^ 1;
  assert.equal((await check([chanceEv, { ...signedMove, sig: toBase64(bad) }])).problem?.kind, "bad");
  assert.equal((await check([chanceEv, move])).problem?.kind, "missing");
  assert.equal((await check([{ ...chanceEv, sig: signedMove.sig }, signedMove])).problem?.kind, "nocauser");
  assert.equal((await check([chanceEv, signedMove], { seats: [{ key: null }, { key: null }] })).problem?.kind, "unkeyed");
  // signed over another head (the move's bytes as the transcript shows them, the chain before it)
  assert.equal((await check([chanceEv, { ...signedMove, sig: k.sign(sigMessage("m-0002", toHex(heads[0]!), move)) }])).problem?.kind, "bad");
});

test("a seat refuses a transcript whose keyed move its seat's key did not sign", async () => {
  const k = new SeatKey(new Uint8Array(32).fill(0x42));
  const lock: Obj = {
    type: "lock",
    match_id: "m-sig",
    game: "tawla",
    ruleset: "{}",
    seats: [
      { seat: 0, key: null },
      { seat: 1, key: k.publicB64 },
    ],
  };
  const storage = new MemoryStorage();
  const st = { format: "qahwa-seat-state/1", base_url: "http://x", match_id: "m-sig", seat: 0, token: "t", record: null, terms: null, client_seed: null, nonce: null, seed_commitment: null, key_seed: null, chain_secret: null, commit_refused: null, lock, log_index: 0, checkpoint: null, revealed: false, max_value_sent: -1, receipts: [], requests: [], disputes: [], deadlines: [] };
  await storage.set("seat/m-sig/0", JSON.stringify(st));
  const seat = await new Client("http://x", { storage, keys: {} }).seat("m-sig", 0, "t");
  const move: Obj = { action: { steps: [[13, 10]], type: "move" }, seat: 1, seq: 0, type: "action" };
  const transcript = async (ev: Obj): Promise<Obj> => {
    const heads = await chainHeads(lock, [ev]);
    return { protocol: "qahwa-fair/2", lock, events: [ev], chain: toHex(heads[1]!), seats: [] };
  };
  const start = toHex(await chainStart(lock));
  await seat.checkTranscript(await transcript({ ...move, sig: k.sign(sigMessage("m-sig", start, move)) }));
  const other = new SeatKey(new Uint8Array(32).fill(0x43));
  await assert.rejects(seat.checkTranscript(await transcript({ ...move, sig: other.sign(sigMessage("m-sig", start, move)) })), (e: Error) => {
    assert.equal(e.name, "TranscriptMismatch");
    assert.match(e.message, /event 0 \(action, seat 1\) carries a signature its seat's key does not verify/);
    return true;
  });
  await assert.rejects(seat.checkTranscript(await transcript(move)), /event 0 \(action, seat 1\) is a keyed seat's, without its signature/);
});

test("canonical JSON refuses what the spec excludes", () => {
  assert.equal(canonical({ b: 1, a: [true, null, "é\n\u0001"] }), '{"a":[true,null,"é\\n\\u0001"],"b":1}');
  assert.throws(() => canonical({ x: 1.5 }));
  assert.throws(() => canonical({ x: 2 ** 53 }));
  assert.throws(() => canonical({ x: "\ud800" }));
  assert.throws(() => canonical({ "é": 1 }));
});

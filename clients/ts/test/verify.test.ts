// The verify page's bundles (qahwa_page/static/verify.js, merkle.js, sealed-verify.js; built
// from clients/ts by `make verify-js`) and the modules they are built from, held to the
// spec's vectors in tests/vectors/*.json (issue 47): the derivation of qahwa-fair/1 and /2,
// canonical JSON and the event chain, RFC 6962 proofs, and the sealed verifier of
// qahwa-fair/3.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { runInThisContext } from "node:vm";
import { canonicalJson, parseRaw } from "../src/rawjson.js";
import { checkReceipts, seatFileOf } from "../src/verify/receipts.js";
import * as sealedModule from "../src/verify/sealed.js";

// compiled to clients/ts/build/test/: the repository is four levels up. A copy of clients/ts
// on its own has neither the bundles nor the vectors: there these tests are skipped (the
// repository's suite runs them: tests/page/test_verify_page_bundles.py).
const ROOT = new URL("../../../../", import.meta.url);
const STATIC = new URL("qahwa_page/static/", ROOT);
const IN_REPO = existsSync(new URL("tests/vectors/fairness_v3.json", ROOT)) && existsSync(new URL("verify.js", STATIC));
const skip = IN_REPO ? false : "not in the qahwa repository (no qahwa_page/static, no tests/vectors)";
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const vector = (name: string): Any => JSON.parse(readFileSync(new URL(`tests/vectors/${name}`, ROOT), "utf8"));
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, "hex"));
const sha256hex = (b: Uint8Array | string): string => createHash("sha256").update(b).digest("hex");

// The page's bundles, loaded as the page loads them (classic scripts: no document here, so
// only their checks load, published on globalThis)
if (IN_REPO) {
  for (const f of ["verify.js", "merkle.js"]) runInThisContext(readFileSync(new URL(f, STATIC), "utf8"), { filename: f });
}
const fair: Any = (globalThis as Any).qahwaFair;
const log: Any = (globalThis as Any).qahwaLog;

async function draws(K: string, list: Any[]): Promise<void> {
  // the vectors' item lists: deck52, deck_qahve, range:N, tiles:M, tiles:M-without:T
  const items = (s: string): unknown[] => {
    if (s === "deck52") return fair.deck52();
    if (s === "deck_qahve") return fair.deckQahve();
    const r = /^range:(\d+)$/.exec(s);
    if (r) return Array.from({ length: Number(r[1]) }, (_, i) => i);
    const t = /^tiles:(\d+)(?:-without:(\d+-\d+))?$/.exec(s);
    if (!t) throw new Error(`no item list ${s}`);
    return fair.tiles(Number(t[1])).filter((x: string) => x !== t[2]);
  };
  for (const d of list) {
    const got =
      d.kind === "dice"
        ? await fair.dice(K, d.label, d.count, d.sides)
        : d.kind === "uniform"
          ? await fair.uniform(K, d.label, d.n)
          : await fair.shuffle(K, d.label, items(d.items));
    if ("result" in d) assert.deepEqual(got, d.result, d.label);
    else assert.deepEqual(got.slice(0, d.result_prefix.length), d.result_prefix, d.label);
  }
}

test("verify.js: qahwa-fair/1 commitment, K and draws (fairness_v1.json)", { skip }, async () => {
  const v1 = vector("fairness_v1.json");
  for (const c of [v1.spec, ...v1.derived]) {
    assert.equal(await fair.commitment(c.server_seed), c.commitment, c.name);
    assert.equal(await fair.matchKey(c.server_seed, c.match_id, c.game, c.ruleset, c.client_seeds), c.K, c.name);
    await draws(c.K, c.draws);
  }
  // a changed client seed gives another K
  const s = v1.spec;
  assert.notEqual(await fair.matchKey(s.server_seed, s.match_id, s.game, s.ruleset, [...s.client_seeds.slice(1), "x"]), s.K);
});

test("verify.js: qahwa-fair/2 seat commitments, K and draws (fairness_v2.json)", { skip }, async () => {
  const v = vector("fairness_v2.json");
  for (const s of v.seats) {
    assert.equal(await fair.seedCommitmentV2(v.match_id, s.seat, s.nonce, s.client_seed), s.seed_commitment);
  }
  const pairs = v.seats.map((s: Any) => [s.client_seed, s.nonce]);
  assert.equal(await fair.matchKeyV2(v.server_seed, v.match_id, v.game, v.ruleset, pairs), v.K);
  await draws(v.K, v.draws);
  pairs.reverse();
  assert.notEqual(await fair.matchKeyV2(v.server_seed, v.match_id, v.game, v.ruleset, pairs), v.K);
});

test("verify.js and src/rawjson: canonical JSON gives the spec's event chain (fairness_v2.json)", { skip }, () => {
  const { chain } = vector("fairness_v2.json");
  const text = JSON.stringify(chain.lock, null, 2);
  assert.equal(fair.canonicalJson(text), canonicalJson(text));
  assert.equal(sha256hex(fair.canonicalJson(text)), chain.start);
  let prev = unhex(chain.start);
  for (const e of chain.events) {
    const h = createHash("sha256").update(prev).update(fair.canonicalJson(JSON.stringify(e.event))).digest();
    assert.equal(h.toString("hex"), e.chain);
    prev = new Uint8Array(h);
  }
  // Python's text: floats by repr, integers beyond 2^53 exact, keys by code point
  assert.equal(canonicalJson('{"b": 1.0, "a": 12345678901234567890, "\u00e9": 1e-7, "z": [true, null]}'),
    '{"a":12345678901234567890,"b":1.0,"z":[true,null],"\u00e9":1e-07}');
});

// RFC 6962's MTH, PATH and SUBPROOF (§2.1), written here from the RFC to check the bundle's
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

test("merkle.js: RFC 6962 roots, inclusion and consistency proofs (tlog_vectors.json)", { skip }, async () => {
  const { rfc6962 } = vector("tlog_vectors.json");
  const leaves: Uint8Array[] = rfc6962.leaves_hex.map(unhex);
  const leafH: Uint8Array[] = [];
  for (const l of leaves) leafH.push(await log.leafHash(l));
  const nodes = new Map<string, Uint8Array>();
  const root = async (lo: number, hi: number): Promise<Uint8Array> => {
    const key = `${lo}/${hi}`;
    if (!nodes.has(key)) {
      const k = split(hi - lo);
      nodes.set(key, hi - lo === 1 ? leafH[lo]! : await log.nodeHash(await root(lo, lo + k), await root(lo + k, hi)));
    }
    return nodes.get(key)!;
  };
  const path = async (m: number, lo: number, hi: number): Promise<Uint8Array[]> => {
    if (hi - lo === 1) return [];
    const k = split(hi - lo);
    return m < lo + k ? [...(await path(m, lo, lo + k)), await root(lo + k, hi)] : [...(await path(m, lo + k, hi)), await root(lo, lo + k)];
  };
  const subproof = async (m: number, lo: number, hi: number, whole: boolean): Promise<Uint8Array[]> => {
    const n = hi - lo;
    if (m === n) return whole ? [] : [await root(lo, hi)];
    const k = split(n);
    return m <= k
      ? [...(await subproof(m, lo, lo + k, whole)), await root(lo + k, hi)]
      : [...(await subproof(m - k, lo + k, hi, false)), await root(lo, lo + k)];
  };
  for (let n = 1; n <= leaves.length; n++) {
    assert.equal(hex(await root(0, n)), rfc6962.roots_hex[n - 1], `root of ${n}`);
    for (let m = 0; m < n; m++) {
      const got = await log.rootFromInclusion(m, n, leafH[m], await path(m, 0, n));
      assert.equal(hex(got), rfc6962.roots_hex[n - 1], `inclusion of ${m} in ${n}`);
      const proof = await subproof(m + 1, 0, n, true);
      assert.equal(await log.consistent(m + 1, n, await root(0, m + 1), await root(0, n), proof), true, `${m + 1} → ${n}`);
      if (m + 1 < n) {
        assert.equal(await log.consistent(m + 1, n, await root(0, m + 1), new Uint8Array(32), proof), false);
      }
    }
  }
  await assert.rejects(log.rootFromInclusion(0, 2, leafH[0], []));
});

for (const [name, load] of [
  ["src/verify/sealed.ts", async () => sealedModule],
  ["sealed-verify.js", async () => (await import(new URL("sealed-verify.js", STATIC).href)) as Any],
] as const) {
  test(`${name}: the sealed verifier follows fairness_v3.json`, { skip }, async () => {
    const mod: Any = await load();
    const sv = mod.sealedVerifier();
    const v = vector("fairness_v3.json");
    for (const p of v.item_points) assert.equal(hex(sv.itemPoint(p.game, p.code)), p.point);
    for (const g of v.generators) assert.equal(hex(sv.generator(g.i)), g.point);
    for (const hand of [v, v.hand1]) {
      const ctx = (seat: number) => ({ match_id: hand.match_id, hand: hand.hand, seat });
      for (const k of hand.keys) {
        sv.verifyKey(ctx(k.seat), unhex(k.P), unhex(k.proof));
        sv.checkRevealed(unhex(k.P), unhex(k.x), k.seat);
      }
      assert.equal(hex(sv.handKey(hand.keys.map((k: Any) => unhex(k.P)))), hand.hand_key);
      const sh = hand.shuffle;
      sv.verifyShuffle(ctx(sh.seat), unhex(hand.hand_key), unhex(sh.deck_in), unhex(sh.deck_out), unhex(sh.proof));
      const item = unhex(sh.deck_out.slice(0, 128));
      const [A, B] = [item.subarray(0, 32), item.subarray(32)];
      for (const s of hand.shares) sv.verifyShare(ctx(s.seat), unhex(hand.keys[s.seat].P), A, B, unhex(s.D), unhex(s.proof));
      const D = hand.shares.map((s: Any) => unhex(s.D));
      assert.equal(sv.opensTo(sh.game, hand.opening.code, A, B, D), true);
      assert.equal(sv.opensTo(sh.game, sh.codes.find((c: string) => c !== hand.opening.code), A, B, D), false);
      // a proof of another hand, or one changed byte, is refused with a SealedError
      const bad = unhex(sh.proof);
      bad[40] = bad[40]! ^ 1;
      assert.throws(() => sv.verifyShuffle(ctx(sh.seat), unhex(hand.hand_key), unhex(sh.deck_in), unhex(sh.deck_out), bad), mod.SealedError);
      const k0 = hand.keys[0];
      assert.throws(() => sv.verifyKey({ ...ctx(k0.seat), hand: hand.hand + 7 }, unhex(k0.P), unhex(k0.proof)), mod.SealedError);
    }
  });
}

test("src/verify/receipts: a seat file's receipts and heads against a transcript", async () => {
  const chain = ["aa", "bb", "cc"].map((c) => c.repeat(32));
  const events = [
    { seq: 0, at: "2026-12-01T10:00:01Z" },
    { seq: 1, at: "2026-12-01T10:00:05Z" },
  ];
  const lock = { locked_at: "2026-12-01T10:00:00Z" };
  const rec = (type: string, seq: number, at: string, c = chain[seq + 1]) =>
    ({ type, protocol: "qahwa-fair/2", match_id: "m1", seq, chain: c, at, signature: { alg: "ed25519", key_id: "k", value: "x" } });
  const seat = {
    match_id: "m1", seat: 1, client_seed: "seed", nonce: "ab".repeat(32),
    receipts: [rec("receipt", -1, lock.locked_at), rec("receipt", 0, events[0]!.at)],
    disputes: [{ kind: "backdated", evidence: { head: rec("head", 0, "2026-12-01T10:00:02Z") } }],
  };
  const t = {
    match_id: "m1", chain, events, lock,
    checkSignature: async (_node: unknown, r: Any) => (r.signature.value === "x" ? { ok: true, m: "ok" } : { ok: false, m: "forged" }),
  };
  const sf: Any = seatFileOf(parseRaw(JSON.stringify(seat)));
  assert.equal(sf.seat, 1);
  assert.equal(sf.nodes.length, 3);
  assert.deepEqual(await checkReceipts(sf.nodes, t), { ok: true, m: { key: "rc_ok_heads", params: { n: 2, h: 1 } } });
  // a rewritten event after the receipts, a receipt's other time, a back-dated event
  const other = await checkReceipts(sf.nodes, { ...t, chain: [chain[0]!, "dd".repeat(32), chain[2]!] });
  assert.equal(other.m.key, "rc_disagree");
  const late = await checkReceipts([parseRaw(JSON.stringify(rec("receipt", 1, "2026-12-01T10:00:09Z")))], t);
  assert.deepEqual(late.m, { key: "rc_at", params: { seq: 1, at: "2026-12-01T10:00:09Z", own: events[1]!.at } });
  const back = await checkReceipts([parseRaw(JSON.stringify(rec("head", 0, "2026-12-01T10:00:07Z")))], t);
  assert.equal(back.m.key, "rc_backdated");
  const cut = await checkReceipts([parseRaw(JSON.stringify(rec("receipt", 2, "2026-12-01T10:00:09Z", "ee".repeat(32))))], t);
  assert.equal(cut.m.key, "rc_noevent");
  // not seat files, or broken ones
  assert.equal(seatFileOf(parseRaw(JSON.stringify(rec("receipt", 0, "x")))), null);
  assert.deepEqual(seatFileOf(parseRaw(JSON.stringify({ ...seat, seat: "1" }))), { bad: { key: "sf_bad", params: { why: 'no seat number ("seat")' } } });
  assert.equal((await checkReceipts([parseRaw(JSON.stringify({ ...rec("receipt", 0, "x"), protocol: "qahwa-fair/1" }))], t)).m.key, "rc_not");
  const forged = { ...rec("receipt", 0, events[0]!.at), signature: { alg: "ed25519", key_id: "k", value: "y" } };
  assert.equal((await checkReceipts([parseRaw(JSON.stringify(forged))], t)).m.key, "rc_sig");
});

test("src/bytes utf8 refuses a lone surrogate (Python cannot encode one; the platform's encoder would hash U+FFFD)", async () => {
  const { utf8 } = await import("../src/bytes.js");
  const { seedCommitment } = await import("../src/fair.js");
  assert.throws(() => utf8("a\uD800b"), /lone surrogate/);
  assert.throws(() => utf8("\uDC00"), /lone surrogate/);
  assert.deepEqual([...utf8("\uD83D\uDE00")], [0xf0, 0x9f, 0x98, 0x80]);
  await assert.rejects(seedCommitment("m\uD800", 0, new Uint8Array(32), "seed"), /lone surrogate/);
});

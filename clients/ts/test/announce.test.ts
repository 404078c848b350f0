// Key announcements (fairness-v2.md §11) in the TS client, without a server: a chain of
// announcements is taken in any order; a forged one (signed by a key nobody trusts), a key
// announcing itself, a wrong key id and a changed field are refused; a client with pinned keys
// takes a key only through a trusted announcement, keeps the refused ones, and saves the
// extended set with the announcing key retired. Run by tests/client/test_rotation.py.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, MemoryStorage, SeatKey, canonicalBytes, checkAnnouncement, extendTrusted, sha256, toHex, type KeysOut, type Obj } from "../src/index.js";

async function kid(k: SeatKey): Promise<string> {
  return toHex(await sha256(k.publicKey)).slice(0, 16);
}

const T = "2026-12-06T05:00:00Z";

async function ann(by: SeatKey, key: SeatKey, fields: Obj = {}): Promise<Obj> {
  const body: Obj = {
    type: "key_announcement",
    protocol: "qahwa-fair/2",
    key: { key_id: await kid(key), alg: "ed25519", public_key: key.publicB64 },
    not_before: T,
    created_at: T,
    ...fields,
  };
  return { ...body, signature: { alg: "ed25519", key_id: await kid(by), value: by.sign(canonicalBytes(body)) } };
}

test("announcements chain, forgeries and malformed ones are refused", async () => {
  const [k0, k1, k2, evil] = [new SeatKey(), new SeatKey(), new SeatKey(), new SeatKey()];
  const trusted = { [await kid(k0)]: k0.publicB64 };
  const ext = await extendTrusted(trusted, [await ann(k1, k2), await ann(k0, k1)]);
  assert.deepEqual(new Set(Object.keys(ext.added)), new Set([await kid(k1), await kid(k2)]));
  assert.equal(ext.refused.length, 0);
  const forged = await ann(evil, k1);
  const bad = await extendTrusted(trusted, [forged]);
  assert.deepEqual(bad.added, {});
  assert.equal(bad.refused.length, 1);
  assert.match(bad.refused[0]!.reason, /not one of the server keys this client trusts/);
  await assert.rejects(checkAnnouncement(await ann(k0, k0), trusted), /signed by the key it announces/);
  const wrongId = await ann(k0, k1, { key: { key_id: "0".repeat(16), alg: "ed25519", public_key: k1.publicB64 } });
  await assert.rejects(checkAnnouncement(wrongId, trusted), /not its public key's/);
  await assert.rejects(checkAnnouncement({ ...(await ann(k0, k1)), not_before: "2027-01-01T00:00:00Z" }, trusted), /does not match/);
  await assert.rejects(checkAnnouncement(await ann(k0, k1, { created_at: "2026-12-06T05:00:01Z" }), trusted), /after it signs/);
});

function serving(doc: Obj): typeof fetch {
  return async (input) => {
    assert.ok(String(input).endsWith("/v1/keys"), String(input));
    return new Response(JSON.stringify(doc), { status: 200, headers: { "Content-Type": "application/json" } });
  };
}

test("a pinned client takes a key only through a trusted announcement", async () => {
  const [k0, k1, evil] = [new SeatKey(), new SeatKey(), new SeatKey()];
  const entry = { key_id: await kid(k0), alg: "ed25519", public_key: k0.publicB64, created_at: T, current: true, next: false };
  const pinned = { keys: [entry] } as unknown as KeysOut;
  const k1id = await kid(k1);
  const record = { type: "receipt", signature: { alg: "ed25519", key_id: k1id, value: "" } };
  const listing = (a: Obj): Obj => ({ keys: [entry, { key_id: k1id, alg: "ed25519", public_key: k1.publicB64, announcements: [a] }] });
  // forged: refused and kept, the key not trusted
  const forged = await ann(evil, k1);
  const liar = new Client("http://fake", { storage: new MemoryStorage(), keys: pinned, fetch: serving(listing(forged)) });
  const keys = await liar.trustedFor(record);
  assert.ok(!Object.hasOwn(keys, await kid(k1)));
  assert.equal(liar.refusedAnnouncements.length, 1);
  assert.deepEqual(liar.refusedAnnouncements[0]!.announcement, forged);
  // announced by the pinned key: taken, and saved with the pinned key retired at not_before
  const honest = new Client("http://fake", { storage: new MemoryStorage(), keys: pinned, fetch: serving(listing(await ann(k0, k1))) });
  assert.equal((await honest.trustedFor(record))[await kid(k1)], k1.publicB64);
  assert.equal(honest.refusedAnnouncements.length, 0);
  const doc = await honest.keysDocument();
  const listed = doc["keys"] as Obj[];
  assert.deepEqual(listed.map((k) => k["key_id"]), [await kid(k0), await kid(k1)]);
  assert.equal(listed[0]!["retired_at"], T);
  assert.equal(listed[1]!["activates_at"], T);
});

// A sealed table (qahwa-fair/3, "deal": "sealed") of a game this client has no deal machine for
// (it plays sealed hokm and sealed Iraqi dominoes) is refused up front, before it makes, commits
// or reveals any secret — creating such a table sends nothing, and a seat of one, given its
// signed commit record, sends nothing either; a sealed hokm table is committed to.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, MemoryStorage, SealedUnsupported, SeatKey, canonical, canonicalBytes, NotOurMatch } from "../src/index.js";

interface Call {
  method: string;
  url: string;
}

/** A server that answers GET /v1/matches/ID with ``record`` and records every request. */
function server(record: Record<string, unknown>): { fetch: typeof fetch; calls: Call[] } {
  const calls: Call[] = [];
  const f = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    calls.push({ method: init?.method ?? "GET", url });
    if ((init?.method ?? "GET") === "GET" && url.endsWith(`/v1/matches/${String(record["match_id"])}`)) {
      return new Response(JSON.stringify({ match_id: record["match_id"], record }), { status: 200, headers: { "Content-Type": "application/json" } });
    }
    return new Response(JSON.stringify({ error: { code: "not_found", message: "no" } }), { status: 404, headers: { "Content-Type": "application/json" } });
  }) as typeof fetch;
  return { fetch: f, calls };
}

function signed(server: SeatKey, body: Record<string, unknown>): Record<string, unknown> {
  return { ...body, signature: { alg: "ed25519", key_id: "k1", value: server.sign(canonicalBytes(body)) } };
}

function commitRecord(ruleset: Record<string, unknown>, game = "hokm"): Record<string, unknown> {
  return {
    type: "commit",
    protocol: "qahwa-fair/2",
    match_id: "m_sealed",
    game,
    ruleset: canonical(ruleset),
    commitment: "ab".repeat(32),
    seats: [
      { seat: 0, name: "Layla", house: false },
      { seat: 1, name: "Omar", house: true },
    ],
  };
}

test("creating a sealed table of a game without a deal machine here is refused before any request", async () => {
  const { fetch, calls } = server(commitRecord({}));
  const qc = new Client("http://qahwa.test", { storage: new MemoryStorage(), fetch, operatorKey: "op" });
  await assert.rejects(qc.createMatch("mexican_train", { deal: "sealed", players: 2 }, ["Layla", "Omar"]), (e: unknown) => {
    return e instanceof SealedUnsupported && /sealed table of mexican_train/.test(e.message) && /nothing was committed or revealed/.test(e.message);
  });
  assert.deepEqual(calls, []);
});

test("a seat of a sealed table refuses to commit: no secret made, nothing sent", async () => {
  const key = new SeatKey();
  const { fetch, calls } = server(signed(key, commitRecord({ deal: "sealed", target: 5 }, "shelem")));
  const storage = new MemoryStorage();
  const qc = new Client("http://qahwa.test", { storage, fetch, keys: { k1: key.publicB64 } });
  const seat = await qc.seat("m_sealed", 0, "token");
  await assert.rejects(seat.commit(), (e: unknown) => e instanceof SealedUnsupported && e.matchId === "m_sealed" && String(e).startsWith("SealedUnsupported"));
  assert.deepEqual(
    calls.map((c) => c.method),
    ["GET"],
  );
  assert.equal(seat.clientSeed, null);
  assert.equal(seat.nonce, null);
});

for (const [what, rules] of [
  ["seeded", { players: 2, target: 7 }],
  ["sealed", { deal: "sealed", players: 2, target: 7 }],
] as const) {
  test(`a ${what} hokm table is committed to (the refusal is for sealed games without a machine only)`, async () => {
    const key = new SeatKey();
    const { fetch, calls } = server(signed(key, commitRecord(rules)));
    const qc = new Client("http://qahwa.test", { storage: new MemoryStorage(), fetch, keys: { k1: key.publicB64 }, retries: 0 });
    const seat = await qc.seat("m_sealed", 0, "token");
    // the fake answers the commit 404: what matters is that this seat made its secrets and sent
    await assert.rejects(seat.commit(), (e: unknown) => !(e instanceof SealedUnsupported) && !(e instanceof NotOurMatch));
    assert.ok(calls.some((c) => c.method === "POST" && c.url.endsWith("/seats/0/commit")), JSON.stringify(calls));
    assert.notEqual(seat.clientSeed, null);
  });
}

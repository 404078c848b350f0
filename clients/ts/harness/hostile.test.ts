// The conformance suite (tests/support/hostile.py) against the TypeScript client: each lie's fake
// (tests/support/fake_http.py, made through the hub), the scenario of tests/support/hostile.py played with this
// client, and the outcome held to what the lie's entry says a conforming client must do. Run by
// tests/client/test_clients_ts.py, which passes the list as JSON (QAHWA_HOSTILE_LIES).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, MemoryStorage, type Seat } from "../src/index.js";
import { step } from "./play.js";

const HUB = process.env["QAHWA_FAKE_HUB"];
const LIES = process.env["QAHWA_HOSTILE_LIES"];
if (HUB === undefined || LIES === undefined) throw new Error("run by tests/client/test_clients_ts.py: QAHWA_FAKE_HUB, QAHWA_HOSTILE_LIES");

interface Lie {
  name: string;
  tampers: string[];
  lie: string;
  must: string;
  dispute: string | null;
  refuse: string | null;
  watch: boolean;
  checkers: number[];
  clean: boolean;
  game: string;
  ruleset: Record<string, unknown> | null;
  names: string[] | null;
  play_on: boolean;
  unsupported: string | null;
}

interface Outcome {
  errors: string[];
  disputes: string[];
  committed: number;
  leaked: string[];
}

async function fake(tampers: string[]): Promise<string> {
  const r = await fetch(`${HUB}/new?tamper=${tampers.join(",")}`, { method: "POST" });
  assert.equal(r.status, 200, await r.clone().text());
  return ((await r.json()) as { base: string }).base;
}


const kept = (errors: string[], exc: unknown) => errors.push(exc instanceof Error ? `${exc.name}: ${exc.message}` : String(exc));

async function waitForTheEnd(seat: Seat, errors: string[]): Promise<void> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    try {
      if ((await seat.state()).status === "finished") return;
    } catch (again) {
      kept(errors, again);
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function outcome(base: string, errors: string[], seats: Seat[]): Promise<Outcome> {
  const sent = (await (await fetch(`${base}/_sent`)).json()) as { method: string; path: string }[];
  const leaked = (await (await fetch(`${base}/_leaks`)).json()) as string[];
  return {
    errors,
    disputes: seats.flatMap((s) => s.disputes.map((d) => d.kind ?? "")),
    committed: sent.filter((s) => s.method === "POST" && s.path.endsWith("/commit")).length,
    leaked,
  };
}

/** the scenario's steps at most (a sealed hokm match takes some hundreds) */
const MAX_STEPS = 5000;

/** tests/support/hostile.py's SCENARIO with this client. */
async function run(lie: Lie): Promise<Outcome> {
  const base = await fake(lie.tampers);
  const qc = new Client(base, { storage: new MemoryStorage(), retryDelay: 1 });
  const errors: string[] = [];
  let seats: Seat[] = [];
  try {
    const match = await qc.createMatch(lie.game, lie.ruleset ?? undefined, lie.names ?? undefined);
    seats = match.seats;
    await match.start();
  } catch (exc) {
    kept(errors, exc); // a table the client refuses: the run ends here
    return outcome(base, errors, seats);
  }
  let steps = 0;
  for (; steps < MAX_STEPS; steps++) {
    try {
      if (!(await step(seats))) break;
    } catch (exc) {
      kept(errors, exc);
      if (lie.play_on && errors.length < 3) continue;
      await waitForTheEnd(seats[0]!, errors);
      break;
    }
  }
  assert.ok(steps < MAX_STEPS, `the match did not end in ${MAX_STEPS} steps`);
  for (const n of lie.checkers) {
    try {
      if (lie.watch) for await (const ev of seats[n]!.events()) void ev;
      await seats[n]!.checkTranscript();
    } catch (exc) {
      kept(errors, exc);
    }
  }
  return outcome(base, errors, seats);
}

const lies = JSON.parse(LIES) as Lie[];
assert.ok(lies.length > 0);

for (const lie of lies) {
  test(`a hostile server: ${lie.name}`, async () => {
    const out = await run(lie);
    const bad: string[] = [];
    if (out.leaked.length > 0) bad.push(`the client gave away what it keeps: ${JSON.stringify(out.leaked)}`);
    if (lie.unsupported !== null && out.errors.some((e) => new RegExp(lie.unsupported!).test(e))) {
      if (out.committed > 0) bad.push(`it refused the table after ${out.committed} commit(s)`);
      assert.deepEqual(bad, [], `${lie.must}\n${JSON.stringify(out)}`);
      return;
    }
    if (lie.clean && (out.errors.length > 0 || out.disputes.length > 0)) bad.push("not played through");
    if (lie.dispute !== null && !out.disputes.includes(lie.dispute)) bad.push(`no ${lie.dispute} dispute kept`);
    if (lie.refuse !== null && !out.errors.some((e) => new RegExp(lie.refuse!).test(e))) bad.push(`no error matches ${lie.refuse}`);
    assert.deepEqual(bad, [], `${lie.must}\n${JSON.stringify(out)}`);
  });
}

// The TypeScript deal machine (src/sealed/machine.ts) over the cases
// tests/client/test_sealed_machine_ts.py makes with Python's (games/sealed_deal.py): each case's
// log is fed event by event, and after each event the machine's state (hand, phase, owed, turn,
// whether the play is over, every seat's dealt and held items) and the legal sets of the seat
// on turn for each hand the case gives it are written out, for Python to compare with its own.
// A log the machine refuses stops the case: the refusal's event is written out too.
// Usage: node build/harness/machine-diff.js cases.json out.json
import { readFileSync, writeFileSync } from "node:fs";
import { DealMachine, RuleError } from "../src/sealed/index.js";

interface Probe {
  after: number;
  owns: { seat: number; own: Record<string, string> }[];
}

interface Case {
  match_id: string;
  game: string;
  ruleset: Record<string, unknown>;
  house: number[];
  events: unknown[];
  probes: Probe[];
}

const [input, output] = process.argv.slice(2);
if (input === undefined || output === undefined) throw new Error("run by tests/client/test_sealed_machine_ts.py: cases.json out.json");
const cases = (JSON.parse(readFileSync(input, "utf-8")) as { cases: Case[] }).cases;
const results = cases.map((c) => {
  const m = DealMachine.follow(c.match_id, c.game, JSON.stringify(c.ruleset), c.house);
  const probes = new Map(c.probes.map((p) => [p.after, p]));
  const states: unknown[] = [];
  let refused: { at: number; message: string } | null = null;
  const t0 = performance.now();
  for (let k = 0; k < c.events.length; k++) {
    try {
      m.feed([c.events[k]]);
    } catch (e) {
      if (!(e instanceof RuleError)) throw e;
      refused = { at: k, message: e.message };
      break;
    }
    const seats = Array.from({ length: Number(c.ruleset["players"] ?? 4) }, (_, s) => s);
    const probe = probes.get(k + 1);
    states.push({
      after: k + 1,
      hand: m.hand,
      phase: m.phase,
      owed: m.owed,
      turn: m.turn,
      play_over: m.playOver,
      dealt: seats.map((s) => m.dealt(s)),
      held: seats.map((s) => m.held(s)),
      legal: m.turn === null ? [] : m.legal(m.turn),
      sealed: m.sealedView(),
      choices: (probe?.owns ?? []).map((o) => m.choices(o.seat, new Map(Object.entries(o.own).map(([i, code]) => [Number(i), code])))),
    });
  }
  return { states, refused, ms: performance.now() - t0 };
});
writeFileSync(output, JSON.stringify({ results }));

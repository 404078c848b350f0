// The TypeScript sealed seat's CPU per sealed hand against the Python seat's, in one run (issue
// 47's target: at most 3×). Four seats deal and play one sealed hokm hand (or two Iraqi dominoes
// seats a round) among themselves over a shared log, in one process; each seat's CPU time is
// what it spends on its own: reading the log (every proof verified by its machine), learning
// its items and making its steps. One warm hand first (tables, item points), then HANDS hands;
// for hokm, `python -m bench sealed_seat` (the conforming Python seat, rbcl) runs next, from
// the repository root, as the anchor. Run by hand, from clients/ts after `npm run build`:
//   node build/harness/sealed-bench.js [hokm|iraqi_domino] [--no-python]
// (QAHWA_PYTHON names the Python with the repository's packages; default python3.)
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { SealedSeat } from "../src/sealed/index.js";

type Obj = { [k: string]: unknown };
const args = process.argv.slice(2);
const game = args.find((a) => !a.startsWith("--")) ?? "hokm";
const withPython = game === "hokm" && !args.includes("--no-python");
const HANDS = 3;
const n = game === "hokm" ? 4 : 2;
const ruleset = { players: n, target: 1, deal: "sealed" };

/** One hand of match ``mid``: each seat's CPU milliseconds. */
function hand(mid: string, seed: number): number[] {
  const seats = Array.from({ length: n }, (_, s) => SealedSeat.follow(mid, s, game, ruleset, []));
  const spent = new Array<number>(n).fill(0);
  const events: Obj[] = [];
  if (game === "hokm") {
    const deck = [..."CDHS"].flatMap((s) => [..."23456789TJQKA"].map((r) => r + s));
    events.push({ seq: 0, type: "chance", label: "hakem", kind: "shuffle", result: deck });
  }
  const timed = <T>(s: number, f: () => T): T => {
    const t = process.cpuUsage();
    try {
      return f();
    } finally {
      const d = process.cpuUsage(t);
      spent[s]! += (d.user + d.system) / 1000;
    }
  };
  let rand = seed;
  const next = (k: number): number => {
    rand = (rand * 1103515245 + 12345) % 2 ** 31;
    return rand % k;
  };
  for (const [s, seat] of seats.entries()) timed(s, () => seat.takeEvents(events));
  for (let i = 0; i < 5000; i++) {
    const m = seats[0]!.machine;
    if (m.outcome !== null || m.hand > 0) break;
    const turn = m.turn!;
    const seat = seats[turn]!;
    const action = timed(turn, () => {
      const legal = seat.machine.choices(turn, seat.ownItems());
      return seat.wire(legal[next(legal.length)]!);
    });
    events.push({ seq: events.length, type: "action", seat: turn, action });
    for (const [s, st] of seats.entries()) timed(s, () => st.takeEvents(events));
  }
  return spent;
}

hand("m-bench-warm", 3);
const rows = Array.from({ length: HANDS }, (_, k) => hand(`m-bench-${k}`, 7 + k));
const four = rows.reduce((a, r) => a + r.reduce((x, y) => x + y, 0), 0) / HANDS;
console.log(`sealed ${game}, ${n} seats, ${HANDS} hands (after a warm one)`);
console.log(`TypeScript (Node ${process.version}): the ${n} seats' CPU per hand: ${four.toFixed(0)} ms; one seat's: ${(four / n).toFixed(0)} ms`);
if (withPython) {
  const root = fileURLToPath(new URL("../../../../", import.meta.url));
  const out = execFileSync(process.env["QAHWA_PYTHON"] ?? "python3", ["-m", "bench", "sealed_seat"], { cwd: root, encoding: "utf8" });
  const m = /the four seats' CPU per hand: (\d+) ms/.exec(out);
  if (m === null) throw new Error(`python -m bench sealed_seat printed no figure:\n${out}`);
  const py = Number(m[1]);
  console.log(`Python (python -m bench sealed_seat): the 4 seats' CPU per hand: ${py} ms; one seat's: ${(py / 4).toFixed(0)} ms`);
  console.log(`TypeScript / Python: ${(four / py).toFixed(2)}× (target ≤ 3×)`);
}

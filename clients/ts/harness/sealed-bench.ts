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
import { sealedHand } from "./sealed-hands.js";

const args = process.argv.slice(2);
const game = args.find((a) => !a.startsWith("--")) ?? "hokm";
const withPython = game === "hokm" && !args.includes("--no-python");
const HANDS = 3;
const n = game === "hokm" ? 4 : 2;
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const hand = (mid: string, seed: number, alone: boolean): number[] => sealedHand(game, mid, seed, cpu, alone);
const perHand = (alone: boolean): number => {
  const rows = Array.from({ length: HANDS }, (_, k) => hand(`m-bench-${k}`, 7 + k, alone));
  return rows.reduce((a, r) => a + r.reduce((x, y) => x + y, 0), 0) / HANDS;
};

hand("m-bench-warm", 3, false);
const four = perHand(false);
const alone = perHand(true);
console.log(`sealed ${game}, ${n} seats, ${HANDS} hands (after a warm one)`);
console.log(`TypeScript (Node ${process.version}): the ${n} seats' CPU per hand: ${four.toFixed(0)} ms; one seat's: ${(four / n).toFixed(0)} ms`);
console.log(`  each seat decoding what it reads itself (as alone in its browser): ${alone.toFixed(0)} ms; one seat's: ${(alone / n).toFixed(0)} ms`);
if (withPython) {
  const root = fileURLToPath(new URL("../../../../", import.meta.url));
  const out = execFileSync(process.env["QAHWA_PYTHON"] ?? "python3", ["-m", "bench", "sealed_seat"], { cwd: root, encoding: "utf8" });
  const m = /the four seats' CPU per hand: (\d+) ms/.exec(out);
  if (m === null) throw new Error(`python -m bench sealed_seat printed no figure:\n${out}`);
  const py = Number(m[1]);
  console.log(`Python (python -m bench sealed_seat): the 4 seats' CPU per hand: ${py} ms; one seat's: ${(py / 4).toFixed(0)} ms`);
  console.log(`TypeScript / Python: ${(four / py).toFixed(2)}×; each seat alone: ${(alone / py).toFixed(2)}× (target ≤ 3×)`);
}

// The TypeScript sealed seat's CPU per sealed hand (issue 47's target): four seats deal and play
// one sealed hokm hand (or two Iraqi dominoes seats a round) among themselves over a shared log,
// in one process; each seat's CPU time is what it spends on its own: reading the log (every proof
// verified by its machine), learning its items and making its steps. Run by hand:
//   node build/harness/sealed-bench.js [hokm|iraqi_domino]
import { SealedSeat } from "../src/sealed/index.js";

type Obj = { [k: string]: unknown };
const game = process.argv[2] ?? "hokm";
const n = game === "hokm" ? 4 : 2;
const ruleset = { players: n, target: 1, deal: "sealed" };
const seats = Array.from({ length: n }, (_, s) => SealedSeat.follow("m-bench", s, game, ruleset, []));
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
let rand = 7;
const next = (k: number): number => {
  rand = (rand * 1103515245 + 12345) % 2 ** 31;
  return rand % k;
};
for (const [s, seat] of seats.entries()) timed(s, () => seat.takeEvents(events));
const hand0 = () => seats[0]!.machine.hand;
for (let i = 0; i < 5000; i++) {
  const m = seats[0]!.machine;
  if (m.outcome !== null || hand0() > 0) break;
  const turn = m.turn!;
  const seat = seats[turn]!;
  const action = timed(turn, () => {
    const legal = seat.machine.choices(turn, seat.ownItems());
    return seat.wire(legal[next(legal.length)]!);
  });
  events.push({ seq: events.length, type: "action", seat: turn, action });
  for (const [s, st] of seats.entries()) timed(s, () => st.takeEvents(events));
}
console.log(JSON.stringify({ game, seats: n, events: events.length, cpu_ms_per_seat: spent.map((x) => Math.round(x)) }));

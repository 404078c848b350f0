// One sealed hand played by its seats among themselves over a shared log, in one process, each
// seat's time spent on its own (reading the log, every other seat's proofs verified by its
// machine; learning its items; making its steps) measured by ``clock`` (milliseconds): the
// body of sealed-bench.js (Node, CPU time) and of sealed-bench-page.js (Chromium, for
// bench/bench_seat_chromium.py). No Node API here.
import { SealedSeat, forgetPoints } from "../src/sealed/index.js";

type Obj = { [k: string]: unknown };

/** One hand of match ``mid`` of ``game`` (hokm: four seats; iraqi_domino: two), its random
 * choices from ``seed``: each seat's milliseconds by ``clock``. ``alone``: the decoded-point
 * cache the seats of one page share is emptied before each seat's call, so that each decodes
 * what it reads itself, as a seat alone in its browser does. */
export function sealedHand(game: string, mid: string, seed: number, clock: () => number, alone = false): number[] {
  const n = game === "hokm" ? 4 : 2;
  const ruleset = { players: n, target: 1, deal: "sealed" };
  const seats = Array.from({ length: n }, (_, s) => SealedSeat.follow(mid, s, game, ruleset, []));
  const spent = new Array<number>(n).fill(0);
  const events: Obj[] = [];
  if (game === "hokm") {
    const deck = [..."CDHS"].flatMap((s) => [..."23456789TJQKA"].map((r) => r + s));
    events.push({ seq: 0, type: "chance", label: "hakem", kind: "shuffle", result: deck });
  }
  const timed = <T>(s: number, f: () => T): T => {
    if (alone) forgetPoints();
    const t = clock();
    try {
      return f();
    } finally {
      spent[s]! += clock() - t;
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

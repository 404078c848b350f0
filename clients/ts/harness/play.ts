// Shared by the tests and the bench: seats of one match played to the end by random bots.
import type { Action, Seat, View } from "../src/index.js";

/** A small deterministic PRNG (the bots' choices only; never the protocol's secrets). */
export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

export function pick(view: View, rand: () => number): Action {
  const suggested = (view as { suggested_actions?: Action[] }).suggested_actions;
  const from = suggested !== undefined && suggested.length > 0 ? suggested : view.legal_actions;
  const a = from[Math.floor(rand() * from.length)];
  if (a === undefined) throw new Error(`seat ${view.seat} is on turn with no legal action`);
  return a;
}

/** Play until the match ends (or ``stopAfter`` actions); returns the number of actions. */
export async function playOut(
  seats: Seat[],
  rand: () => number,
  opts: { stopAfter?: number; resignAfter?: number } = {},
): Promise<{ actions: number; status: string }> {
  let view = await seats[0]!.state();
  let actions = 0;
  while (view.status === "playing") {
    if (opts.stopAfter !== undefined && actions >= opts.stopAfter) return { actions, status: "stopped" };
    const turn = view.turn;
    if (turn === null || turn === undefined) throw new Error("nobody is on turn in a match being played");
    const me = seats[turn]!;
    const mine = me.view !== null && me.view.version === view.version && me.view.seat === turn ? me.view : await me.state();
    if (mine.status !== "playing") break;
    if (opts.resignAfter !== undefined && actions >= opts.resignAfter) {
      await me.resign();
      view = await me.state();
      break;
    }
    const out = await me.act(pick(mine, rand));
    actions++;
    view = out.state;
  }
  return { actions, status: view.status };
}

/** One step of a fake's script: the seat on turn (as seat 0's view says) reads its own view
 * and sends its first legal action; false once the match is not being played. */
export async function step(seats: Seat[]): Promise<boolean> {
  const view = await seats[0]!.state();
  if (view.status !== "playing" || view.turn === null || view.turn === undefined) return false;
  const me = seats[view.turn]!;
  const mine = await me.state();
  await me.act(mine.legal_actions[0]!);
  return true;
}

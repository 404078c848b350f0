// The sealed-hand bench in a browser page (bench/bench_seat_chromium.py bundles it with esbuild
// and runs it in Chromium headless): ``qahwaSealedHands(game, first, count)`` plays ``count``
// hands (matches m-bench-<first>.. of one hand each) and returns each hand's seats' total
// milliseconds (performance.now()); ``alone``: each seat decodes what it reads itself
// (sealedHand's ``alone``).
import { sealedHand } from "./sealed-hands.js";

async function qahwaSealedHands(game: string, first: number, count: number, alone = false): Promise<number[]> {
  const out: number[] = [];
  for (let k = first; k < first + count; k++) {
    out.push(sealedHand(game, `m-bench-${k}`, 7 + k, () => performance.now(), alone).reduce((a, b) => a + b, 0));
  }
  return out;
}

(globalThis as { qahwaSealedHands?: unknown }).qahwaSealedHands = qahwaSealedHands;

// Runs qahwa_page/static/sealed-verify.js on cases from tests/sealed/test_sealed_js.py:
//   node run.mjs <path of sealed-verify.js> <cases.json>  → one JSON result per case on stdout
// (the bundle carries its own @noble/curves and @noble/hashes, the versions clients/ts locks)
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [, , modulePath, casesPath] = process.argv;
const mod = await import(pathToFileURL(modulePath).href);
const v = mod.sealedVerifier();
const hex = mod.hexToBytes;
const cases = JSON.parse(readFileSync(casesPath, "utf8"));

function run(c) {
  switch (c.kind) {
    case "item":
      return mod.bytesToHex(v.itemPoint(c.game, c.code));
    case "generator":
      return mod.bytesToHex(v.generator(c.i));
    case "hand_key":
      return mod.bytesToHex(v.handKey(c.keys.map(hex)));
    case "key":
      return v.verifyKey(c.ctx, hex(c.P), hex(c.proof));
    case "revealed":
      return v.checkRevealed(hex(c.P), hex(c.x));
    case "shuffle":
      return v.verifyShuffle(c.ctx, hex(c.P), hex(c.deck_in), hex(c.deck_out), hex(c.proof));
    case "share":
      return v.verifyShare(c.ctx, hex(c.P), hex(c.A), hex(c.B), hex(c.D), hex(c.proof));
    case "opening":
      return v.checkOpening(
        c.game,
        c.code,
        hex(c.A),
        hex(c.B),
        c.ctx,
        c.keys.map(hex),
        c.shares.map((s) => ({ D: hex(s.D), proof: hex(s.proof) })),
      );
    case "hand":
      return v.verifyHand(c.match_id, c.entry, c.seats, c.house);
    default:
      throw new Error(`unknown case ${c.kind}`);
  }
}

const out = [];
for (const c of cases) {
  try {
    const value = run(c);
    out.push({ ok: true, value: value === undefined ? null : value });
  } catch (e) {
    if (!(e instanceof mod.SealedError)) throw e;
    out.push({ ok: false, error: e.message });
  }
}
process.stdout.write(JSON.stringify(out));

// `make bench` (bench/bench_clients_ts.py): whole tawla matches played by this client's
// seats against a server, requests counted; prints {"requests", "seconds", "matches", "actions"}.
import { Client, MemoryStorage } from "../src/index.js";
import { playOut, prng } from "./play.js";

const [url, key, n] = process.argv.slice(2);
if (url === undefined || key === undefined || n === undefined) throw new Error("bench.js URL OPERATOR_KEY MATCHES");
const qc = new Client(url, { operatorKey: key, storage: new MemoryStorage() });
const rand = prng(11);
let actions = 0;
const t0 = performance.now();
for (let i = 0; i < Number(n); i++) {
  const match = await qc.createMatch("tawla", { match_length: 1 }, ["a", "b"]);
  await match.start();
  actions += (await playOut(match.seats, rand)).actions;
  await match.checkTranscript();
}
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(JSON.stringify({ requests: qc.requestCount, seconds, matches: Number(n), actions }) + "\n");

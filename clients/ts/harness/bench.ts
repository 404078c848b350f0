// `make bench` (bench/bench_clients_ts.py): whole matches (tawla unless a game is given: tawla,
// hokm, or sealed-hokm) played by this client's seats against a server, requests counted (in
// all, and by route); prints {"requests", "seconds", "matches", "actions", "game", "routes"}.
import { Client, MemoryStorage } from "../src/index.js";
import { playOut, prng } from "./play.js";

const [url, key, n, which] = process.argv.slice(2);
if (url === undefined || key === undefined || n === undefined) throw new Error("bench.js URL OPERATOR_KEY MATCHES [tawla|hokm|sealed-hokm]");
const TABLES: Record<string, [string, Record<string, unknown>, string[]]> = {
  tawla: ["tawla", { match_length: 1 }, ["a", "b"]],
  hokm: ["hokm", { players: 4, target: 1 }, ["a", "b", "c", "d"]],
  "sealed-hokm": ["hokm", { players: 4, target: 1, deal: "sealed" }, ["a", "b", "c", "d"]],
};
const table = TABLES[which ?? "tawla"];
if (table === undefined) throw new Error(`no bench table ${which}: one of ${Object.keys(TABLES).join(", ")}`);
const [game, ruleset, names] = table;
const routes: Record<string, number> = {};
const counted: typeof fetch = (input, init) => {
  const u = new URL(String(input));
  const route = `${init?.method ?? "GET"} ${u.pathname.replace(/\/v1\/matches\/[^/]+/, "/v1/matches/{id}").replace(/\/seats\/\d+/, "/seats/{n}")}`;
  routes[route] = (routes[route] ?? 0) + 1;
  return globalThis.fetch(input, init);
};
const qc = new Client(url, { operatorKey: key, storage: new MemoryStorage(), fetch: counted });
const rand = prng(11);
let actions = 0;
const t0 = performance.now();
for (let i = 0; i < Number(n); i++) {
  const match = await qc.createMatch(game, ruleset, names);
  await match.start();
  actions += (await playOut(match.seats, rand)).actions;
  await match.checkTranscript();
}
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(JSON.stringify({ requests: qc.requestCount, seconds, matches: Number(n), actions, game: which ?? "tawla", routes }) + "\n");

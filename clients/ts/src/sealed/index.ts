/** The sealed cryptography (qahwa-fair/3, docs/spec/fairness-v3.md): what a sealed seat makes
 * and checks, and what the verify page checks. */
export * from "./group.js";
export * from "./proofs.js";
export * from "./deal.js";
export * from "./machine.js";
export * from "./seat.js";
export * from "./side.js";

/** @qahwa/client — a conforming qahwa-fair/2 client (fairness-v2.md §3a) for browsers and Node. */
export * from "./bytes.js";
export * from "./canonical.js";
export * from "./crypto.js";
export * from "./errors.js";
export * from "./fair.js";
export * from "./note.js";
export * from "./sse.js";
export * from "./storage.js";
export { Client, Match, Seat } from "./client.js";
export { SealedStepRefused } from "./sealed/seat.js";
export type {
  Action,
  ActionOut,
  ClientOptions,
  Dispute,
  KeysOut,
  MatchCreatedOut,
  Notice,
  Receipt,
  SeatExport,
  SentRequest,
  Terms,
  View,
} from "./client.js";
export type { components, paths } from "./api.js";

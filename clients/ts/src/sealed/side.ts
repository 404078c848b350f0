/** A seat's sealed side as its client uses it (``Seat`` in ../client.ts): the deal machine with
 * the seat's secrets (``SealedSeat``), either in this thread or in a Web Worker.
 *
 * In a browser the sealed cryptography (the key, the shuffle with its proof, the shares, and
 * the check of every other seat's step) takes far longer than a frame: the web table (/play)
 * runs the same ``SealedSeat`` in a dedicated worker (``serveSealedSide`` there, ``workerSide``
 * on the page), so the page's main thread stays free. Node (the harness, the tests) keeps it
 * in-thread (``inThread``). Either way the seat's duties are the same: each hand's secret is
 * handed to ``keep`` before the step that depends on it is returned (the client stores it
 * before it sends anything), and each refusal is reported to ``onDispute`` before its error. */

import { ClientError } from "../errors.js";
import { type OnDispute, SealedSeat, SealedStepRefused } from "./seat.js";

type Obj = { [k: string]: unknown };

/** What a seat's sealed side is made from: the match's signed public facts and the secrets
 * kept so far. */
export interface SealedSideInit {
  matchId: string;
  seat: number;
  game: string;
  /** the lock's canonical ruleset (a JSON text) */
  ruleset: string;
  house: number[];
  /** each hand's secret key already made (hand → 32-byte scalar hex), from storage */
  keys: Record<string, string>;
  /** called with a hand's secret as soon as it is made (before the step using it returns) */
  keep: (hand: number, secretHex: string) => void;
  onDispute: OnDispute;
}

/** The calls a client makes on its sealed side (``SealedSeat``'s, each possibly async). */
export interface SealedSide {
  /** the seq of the last event its machine applied */
  readonly seen: number;
  takeEvents(events: readonly unknown[]): void | Promise<void>;
  view(raw: Obj): Obj | Promise<Obj>;
  wire(action: Obj): Obj | Promise<Obj>;
}

export type SealedSideFactory = (init: SealedSideInit) => SealedSide;

/** The sealed side in this thread (the default). */
export const inThread: SealedSideFactory = (init) =>
  SealedSeat.follow(init.matchId, init.seat, init.game, init.ruleset, init.house, {
    keys: init.keys,
    keep: init.keep,
    onDispute: init.onDispute,
  });

// -- the worker's protocol ----------------------------------------------------------------
type Call = { id: number; op: "init"; init: Omit<SealedSideInit, "keep" | "onDispute"> } | { id: number; op: "takeEvents"; events: unknown[] } | { id: number; op: "view"; raw: Obj } | { id: number; op: "wire"; action: Obj };

interface Answer {
  id: number;
  seen: number;
  /** hand secrets made during the call, in order: kept before the answer is used */
  kept: [number, string][];
  /** refusals reported during the call: [kind, message, evidence] */
  disputes: [string, string, Obj][];
  value?: unknown;
  error?: { name: string; kind?: string; message: string };
}

/** The two ends of a message channel (a Worker, or a worker's global scope). A Worker's
 * ``error`` (its script failed to load or threw) fails every call waiting on it. */
export interface Port {
  postMessage(message: unknown): void;
  addEventListener(type: "message", listener: (e: { data: unknown }) => void): void;
  addEventListener(type: "error", listener: (e: { message?: string }) => void): void;
}

/** The worker's side: one ``SealedSeat`` made by the first call (``init``), then each call
 * answered in the order it came, with the secrets kept and the refusals reported during it. */
export function serveSealedSide(port: Port): void {
  let seat: SealedSeat | null = null;
  let kept: [number, string][] = [];
  let disputes: [string, string, Obj][] = [];
  port.addEventListener("message", (e) => {
    const call = e.data as Call;
    let answer: Answer;
    try {
      let value: unknown = null;
      if (call.op === "init") {
        const i = call.init;
        seat = SealedSeat.follow(i.matchId, i.seat, i.game, i.ruleset, i.house, {
          keys: i.keys,
          keep: (hand, secret) => kept.push([hand, secret]),
          onDispute: (kind, message, evidence) => disputes.push([kind, message, evidence]),
        });
      } else {
        if (seat === null) throw new ClientError("the sealed side was not made (no init call)");
        if (call.op === "takeEvents") seat.takeEvents(call.events);
        else if (call.op === "view") value = seat.view(call.raw);
        else if (call.op === "wire") value = seat.wire(call.action);
        else throw new ClientError(`no sealed side call ${JSON.stringify((call as { op: unknown }).op)}`);
      }
      answer = { id: call.id, seen: seat?.seen ?? -1, kept, disputes, value };
    } catch (exc) {
      const err = exc instanceof Error ? exc : new Error(String(exc));
      const error: Answer["error"] = { name: err instanceof SealedStepRefused ? "SealedStepRefused" : err instanceof ClientError ? "ClientError" : "Error", message: err.message };
      if (err instanceof SealedStepRefused) error.kind = err.kind;
      answer = { id: call.id, seen: seat?.seen ?? -1, kept, disputes, error };
    }
    kept = [];
    disputes = [];
    port.postMessage(answer);
  });
}

/** The page's side of a worker serving ``serveSealedSide``: a ``SealedSideFactory`` whose
 * sides each start a worker of their own (``start``). Every hand secret the worker made is
 * handed to ``keep``, and every refusal to ``onDispute``, before the call's answer (or its
 * error: ``SealedStepRefused``, ``ClientError``) is returned. */
export function workerSide(start: () => Port): SealedSideFactory {
  return (init) => {
    const port = start();
    let next = 0;
    let seen = -1;
    const waiting = new Map<number, [(a: Answer) => void, (e: Error) => void]>();
    let failed: Error | null = null;
    port.addEventListener("message", (e) => {
      const a = e.data as Answer;
      const done = waiting.get(a.id);
      waiting.delete(a.id);
      done?.[0](a);
    });
    port.addEventListener("error", (e) => {
      failed = new ClientError(`the sealed seat's worker failed: ${e.message ?? "it did not load"}`);
      for (const [, no] of waiting.values()) no(failed);
      waiting.clear();
    });
    const call = (msg: { op: Call["op"] } & Obj): Promise<unknown> => {
      if (failed !== null) return Promise.reject(failed);
      const id = next++;
      const answered = new Promise<Answer>((ok, no) => waiting.set(id, [ok, no]));
      port.postMessage({ ...msg, id });
      return answered.then((a) => {
        seen = a.seen;
        for (const [hand, secret] of a.kept) init.keep(hand, secret);
        for (const [kind, message, evidence] of a.disputes) init.onDispute(kind, message, evidence);
        if (a.error !== undefined) {
          if (a.error.name === "SealedStepRefused") throw new SealedStepRefused(a.error.kind ?? "sealed_step", a.error.message);
          if (a.error.name === "ClientError") throw new ClientError(a.error.message);
          throw new Error(a.error.message);
        }
        return a.value;
      });
    };
    const { keep: _keep, onDispute: _onDispute, ...facts } = init;
    // the first call makes the worker's seat; those after it wait in the worker's queue
    const made = call({ op: "init", init: facts });
    made.catch(() => undefined); // (its error is the next call's)
    return {
      get seen() {
        return seen;
      },
      takeEvents: async (events) => {
        await made;
        await call({ op: "takeEvents", events: [...events] });
      },
      view: async (raw) => {
        await made;
        return (await call({ op: "view", raw })) as Obj;
      },
      wire: async (action) => {
        await made;
        return (await call({ op: "wire", action })) as Obj;
      },
    };
  };
}

// The web table at /play (issue 32): one person's seat, played through the conforming client
// (../src), with house bots or a friend in the other seats. Built by `npm run build:play` into
// qahwa_page/static/play.js (committed; tests/test_play_page.py checks it is a fresh build).
import { ApiError, Client, Disputed, IndexedDBStorage, MemoryStorage, SealedUnsupported } from "../src/index.js";
import { SEALED_GAMES } from "../src/sealed/machine.js";
import { workerSide } from "../src/sealed/side.js";
import type { Seat } from "../src/index.js";
import { lang, rtl, t } from "./i18n.js";
import { el } from "./pieces.js";
import { gameName, renderTable, sealedLimits } from "./table.js";

type Obj = Record<string, unknown>;

const GAMES = ["tawla", "mahbusa", "hokm", "shelem", "qahve", "iraqi_domino", "mexican_train"];

const params = new URLSearchParams(location.search);
document.documentElement.lang = lang;
document.documentElement.dir = rtl ? "rtl" : "ltr";

const main = document.getElementById("table")!;
const status = document.getElementById("status")!;
function say(text: string): void {
  status.textContent = text;
}
/** An action the server or the seat's own client refused, said until the next one is sent:
 * the table drawn again after it (its buttons live again) does not say it away. */
const refused = el("p", { id: "refused", role: "alert", "data-testid": "refused", hidden: "" });
status.after(refused);
function sayRefused(e: unknown): void {
  refused.textContent = `${t("error")}: ${e instanceof Error ? e.message : String(e)}`;
  refused.hidden = false;
}
function clearRefused(): void {
  refused.textContent = "";
  refused.hidden = true;
}

// -- the lobby ---------------------------------------------------------------------------
function lobby(): void {
  const sel = el("select", { id: "game" });
  for (const g of GAMES) sel.append(el("option", { value: g }, gameName(g)));
  const rules = el("textarea", { id: "ruleset", dir: "ltr", placeholder: '{"match_length": 1}' });
  const friend = el("input", { type: "checkbox", id: "friend" });
  // a sealed table (qahwa-fair/3), offered for the games this page deals (SEALED_GAMES); the
  // server seats one only where it protects (two people, or a deal that leaves stock undealt)
  const sealed = el("input", { type: "checkbox", id: "sealed" }) as HTMLInputElement;
  const sealedRow = el("label", { id: "sealed-row" }, sealed, " ", t("sealed_opt"));
  const sync = (): void => {
    const ok = SEALED_GAMES.includes((sel as HTMLSelectElement).value);
    sealed.disabled = !ok;
    if (!ok) sealed.checked = false;
  };
  sel.addEventListener("change", sync);
  sync();
  const go = el("button", { id: "start" }, t("start"));
  go.addEventListener("click", () => {
    const r = (rules as HTMLTextAreaElement).value.trim();
    const q = new URLSearchParams({ game: (sel as HTMLSelectElement).value, lang });
    if (r) q.set("ruleset", r);
    if ((friend as HTMLInputElement).checked) q.set("friend", "1");
    if (sealed.checked) q.set("sealed", "1");
    location.search = q.toString();
  });
  main.append(
    el("label", {}, t("game"), " ", sel),
    el("label", {}, t("rules"), rules),
    el("label", {}, friend, " ", t("friend")),
    sealedRow,
    el("p", { class: "hint" }, t("sealed_hint")),
    go,
  );
}

// -- drawing (table.ts) --------------------------------------------------------------------
function render(view: Obj, mine: number, act: (a: Obj) => void, leave?: () => void): void {
  renderTable(main, view, mine, act, leave);
  const legal = Array.isArray(view["legal_actions"]) ? view["legal_actions"] : [];
  say(view["status"] === "finished" ? t("finished") : view["status"] !== "playing" ? t("waiting") : legal.length ? t("yourmove") : t("theirs"));
}

// -- the end --------------------------------------------------------------------------------
function download(name: string, text: string): HTMLElement {
  const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
  return el("a", { href: url, download: name, "data-testid": `download-${name.split(".")[0]!}` }, name);
}

function setField(doc: Document, id: string, value: string): void {
  const f = doc.getElementById(id) as HTMLInputElement | HTMLTextAreaElement | null;
  if (f === null) throw new Error(`the verify page has no #${id}`);
  f.value = value;
}

/** The verify page (in a frame, computed in this browser) on this browser's own copy: the
 * transcript bytes the seat's client checked against its lock, receipts and the history the
 * stream showed, with the seat's receipts and its own seed and nonce. */
function verifyHere(end: HTMLElement, verdict: HTMLElement, text: string, seat: Seat): void {
  const frame = el("iframe", { id: "verify", src: `/verify?lang=${lang}`, title: "verify" }) as HTMLIFrameElement;
  frame.addEventListener("load", () => {
    const doc = frame.contentDocument;
    if (doc === null) return;
    setField(doc, "in-paste", text);
    (doc.querySelector("input[name=src][value=paste]") as HTMLInputElement).checked = true;
    setField(doc, "in-receipts", JSON.stringify(seat.receipts));
    setField(doc, "in-own-seat", String(seat.seat));
    setField(doc, "in-own-seed", seat.clientSeed ?? "");
    setField(doc, "in-own-nonce", seat.nonce ?? "");
    (doc.getElementById("form") as HTMLFormElement).requestSubmit();
    const timer = setInterval(() => {
      const v = doc.getElementById("verdict");
      const got = v?.getAttribute("data-verdict");
      if (!v || v.hidden || !got || got === "pending" || v.getAttribute("data-replay") === "pending") return;
      clearInterval(timer);
      const mapped = got === "pass" ? "pass" : got === "fail" ? "fail" : "incomplete";
      verdict.setAttribute("data-verdict", mapped);
      // the verdict in a sentence (the verify page's own report is in the frame below)
      verdict.textContent = t(`${mapped}_text`);
    }, 500);
  });
  // the verify page's own report, for whoever wants to see the checks: folded away
  end.append(el("details", { id: "checks" }, el("summary", {}, t("checks")), frame));
}

async function finish(seat: Seat): Promise<void> {
  say(t("finished"));
  const verdict = el("div", { id: "verdict", "data-verdict": "pending", role: "status" }, t("verdict"));
  const end = el("section", { id: "end" }, verdict);
  main.append(end);
  // the transcript's bytes, kept as they came: the download and the verify page get these
  const text = await seat.transcriptText();
  let ok = true;
  try {
    await seat.checkTranscript(JSON.parse(text) as Obj);
  } catch (e) {
    ok = false;
    verdict.setAttribute("data-verdict", "fail");
    verdict.replaceChildren(t("fail_text"), el("br"), String(e));
  }
  end.append(el("p", {}, download("transcript.json", text), " · ", download("seat.json", JSON.stringify(seat.export(), null, 1))));
  if (ok) verifyHere(end, verdict, text, seat);
}

/** The seat resigns the match (signed over the chain head it reads): an event that moved
 * the head on in between is answered ``stale_chain``, and the seat signs over the new head. */
async function resignMatch(seat: Seat): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await seat.resign();
      return;
    } catch (e) {
      if (i >= 4 || !(e instanceof ApiError) || e.code !== "stale_chain") throw e;
    }
  }
}

// -- a seat ---------------------------------------------------------------------------------
/** The seat's view, drawn again whenever the match's event stream brings news (an event whose
 * chain head is not the one drawn, the start, a reconnection); while the stream is down, a
 * poll stands in for it until it is back. */
async function play(matchId: string, mine: number, token: string, game: string, ruleset?: Obj): Promise<void> {
  let storage;
  try {
    storage = new IndexedDBStorage();
  } catch {
    storage = new MemoryStorage();
  }
  // a sealed table of a game the client deals (SEALED_GAMES) is played here: the seat makes
  // its own key, shuffle, shares and openings, and decrypts its hand in this browser; one of
  // another game (sealed shelem, Mexican Train) is refused up front, before anything is sent
  // its cryptography (the deal machine with the seat's secrets) runs in a Web Worker
  // (play-worker.js), off this page's main thread; its secrets are stored here, by the client,
  // before anything depending on them is sent
  const sealedSide = workerSide(() => new Worker(new URL("./play-worker.js", import.meta.url), { type: "module", name: "sealed seat" }));
  const qc = new Client(location.origin, { storage, sealedSide });
  const terms: { game?: string; ruleset?: Obj } = {};
  if (game) terms.game = game;
  if (ruleset) terms.ruleset = ruleset;
  const seat = await qc.seat(matchId, mine, token, { terms });
  say(t("waiting"));
  await seat.resendPending();
  try {
    await seat.commit();
  } catch (e) {
    if (!(e instanceof SealedUnsupported)) throw e;
    // a sealed table of a game this page does not deal: it says so (nothing was sent)
    say("");
    document.getElementById("status")!.setAttribute("data-sealed", "1");
    main.replaceChildren(el("p", { class: "notice", role: "alert", "data-testid": "sealed-unsupported" }, t("sealed_seat")));
    // what the table would not hide, in the server's words (sealed.limits), said here too
    try {
      const limits = sealedLimits(await seat.state());
      if (limits) main.append(limits);
    } catch {
      // the notice stands alone
    }
    return;
  }
  await seat.reveal(120);

  let force = true; // read the view again whatever the events say
  let maxSeq = -1; // the newest event streamed
  let drawnNext: number | null = null; // the seq the drawn view's next step takes
  let drawnMax = -1; // maxSeq when the view was drawn
  let acting = false;
  let over = false;
  let wake: (() => void) | null = null;
  const news = (): boolean => force || (drawnNext !== null ? maxSeq >= drawnNext : maxSeq > drawnMax);
  const poke = (): void => {
    const w = wake;
    wake = null;
    w?.();
  };
  const draw = (view: Obj): void => {
    const dl = view["deadline"];
    drawnNext = dl !== null && typeof dl === "object" && typeof (dl as Obj)["seq"] === "number" ? ((dl as Obj)["seq"] as number) : null;
    drawnMax = maxSeq;
    const send = (a: Obj): void => {
      acting = true;
      clearRefused();
      seat
        .act(a, { retryStale: true })
        .then((out) => {
          const v = out.state as unknown as Obj;
          if (v["status"] === "finished" || v["stale"] === true) force = true;
          else draw(v);
        })
        .catch((e: unknown) => {
          sayRefused(e); // said until the next action, whatever is drawn in between
          force = true; // drawn again: a refused move leaves the buttons live
        })
        .finally(() => {
          acting = false;
          poke();
        });
    };
    // resigning the match, where the game has no resignation of its own (asked first)
    const leave = (): void => {
      acting = true;
      clearRefused();
      resignMatch(seat)
        .catch((e: unknown) => sayRefused(e))
        .finally(() => {
          force = true;
          acting = false;
          poke();
        });
    };
    render(view, mine, send, leave);
    // a sealed deal step this seat owes (by its own machine: the view's legal actions at a
    // sealed table are the seat's): made and sent at once, nobody has a choice to make
    const legal = Array.isArray(view["legal_actions"]) ? (view["legal_actions"] as Obj[]) : [];
    const step = legal.find((a) => a["type"] === "sealed");
    if (step !== undefined) {
      say(t("dealing"));
      send(step);
    }
  };
  const status = document.getElementById("status")!;
  void (async () => {
    for (let after = -1; !over; ) {
      try {
        for await (const n of seat.watch(after)) {
          if (n.kind === "event") {
            after = Number(n.event["seq"]);
            maxSeq = Math.max(maxSeq, after);
          } else {
            if (n.kind === "open") status.setAttribute("data-stream", "open");
            force = true; // (re)connected, or the match started without an event
          }
          poke();
        }
        return; // the match ended
      } catch (e) {
        if (over) return;
        if (e instanceof Disputed) {
          // a pushed event failed the clock checks: the evidence is in the seat (its export)
          status.setAttribute("data-dispute", "1");
          document.getElementById("links")!.append(el("p", { class: "dispute" }, `${t("error")}: ${e.message}`));
        }
        // the stream keeps dropping: poll the view for a while, then try the stream again
        status.setAttribute("data-stream", "poll");
        for (let i = 0; i < 10 && !over; i++) {
          await new Promise((r) => setTimeout(r, 1000));
          force = true;
          poke();
        }
      }
    }
  })();

  for (;;) {
    while (!news() || acting) await new Promise<void>((r) => (wake = r));
    await new Promise((r) => setTimeout(r, 0)); // the rest of a burst of events first
    if (!news() || acting) continue;
    force = false;
    const view = (await seat.state()) as unknown as Obj;
    if (acting) {
      // a move was sent while this view was read: drawn, it would offer the move again beside
      // the one in flight; the action's own answer draws the table, then it is read again
      force = true;
      continue;
    }
    if (view["stale"] === true) {
      force = true; // older than the log the seat's machine has verified: read it again
      continue;
    }
    if (view["status"] === "finished") {
      over = true;
      render(view, mine, () => undefined);
      await finish(seat);
      return;
    }
    draw(view);
  }
}

async function newTable(game: string, ruleset: string | null, friend: boolean, sealed: boolean): Promise<void> {
  let rules: unknown = undefined;
  if (ruleset) rules = JSON.parse(ruleset);
  if (rules !== undefined && (typeof rules !== "object" || rules === null || Array.isArray(rules))) {
    throw new Error("the ruleset is not a JSON object");
  }
  if (sealed) rules = { ...((rules as Obj | undefined) ?? {}), deal: "sealed" };
  const r = await fetch("/play/tables", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ game, ruleset: rules ?? null, friend }),
  });
  const doc = (await r.json()) as Obj;
  if (!r.ok) throw new Error(String((doc["error"] as Obj | undefined)?.["message"] ?? r.status));
  const seats = doc["people"] as { seat: number; token: string }[];
  const me = seats[0]!;
  const q = new URLSearchParams({ match: String(doc["match_id"]), seat: String(me.seat), token: me.token, game, lang });
  history.replaceState(null, "", `/play?${q.toString()}`);
  for (const other of seats.slice(1)) {
    const fq = new URLSearchParams({ match: String(doc["match_id"]), seat: String(other.seat), token: other.token, game, lang });
    const url = `${location.origin}/play?${fq.toString()}`;
    document.getElementById("links")!.append(el("p", {}, `${t("link")}: `, el("a", { href: url, "data-testid": "seat-link" }, url)));
  }
  await play(String(doc["match_id"]), me.seat, me.token, game, rules as Obj | undefined);
}

async function boot(): Promise<void> {
  document.title = `qahwa — ${t("title")}`;
  const game = params.get("game");
  const match = params.get("match");
  if (match && params.get("token")) {
    await play(match, Number(params.get("seat") ?? "0"), params.get("token")!, game ?? "");
  } else if (game) {
    await newTable(game, params.get("ruleset"), params.get("friend") === "1", params.get("sealed") === "1");
  } else {
    lobby();
  }
}

boot().catch((e: unknown) => {
  say(`${t("error")}: ${e instanceof Error ? e.message : String(e)}`);
  status.setAttribute("data-error", "1");
});

// The table a seat plays at (issue 47): who sits where, the board or the cards or the tiles as
// they lie, the seat's own hand, and its legal moves as the things themselves — a card to
// play, a checker to move, a tile's end — or, where there is no thing to touch, in words.
// Resigning asks first. A finished match shows who won and the score. No JSON on the table.
import { board } from "./board.js";
import { has, lang, num, resignCost, t, words } from "./i18n.js";
import { card, el, suitIcon, svg, tile, tileEnds } from "./pieces.js";

type Obj = Record<string, unknown>;
type Act = (a: Obj) => void;

const isObj = (x: unknown): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);

/** The seats' names from the lock (or "Seat n"); the person's own is "You", and the built-in
 * lobby's names (service/play.py: "Friend", "House 2") are said in the page's language. */
export function seatNames(view: Obj, mine: number): string[] {
  const lock = view["lock"];
  const seats = isObj(lock) && Array.isArray(lock["seats"]) ? (lock["seats"] as Obj[]) : [];
  const n = seatCount(view);
  return Array.from({ length: n }, (_, i) => {
    if (i === mine) return t("you");
    const name = seats[i]?.["name"];
    if (typeof name !== "string" || name === "") return `${t("seat")} ${num(i)}`;
    if (name === "Friend") return t("friend_seat");
    const house = /^House ([0-9]+)$/.exec(name);
    return house ? `${t("house_seat")} ${num(Number(house[1]))}` : name;
  });
}

function seatCount(view: Obj): number {
  const lock = view["lock"];
  if (isObj(lock) && Array.isArray(lock["seats"])) return lock["seats"].length;
  for (const k of ["hand_sizes", "hand_counts", "tricks_by_seat"]) if (Array.isArray(view[k])) return (view[k] as unknown[]).length;
  return 2;
}

/** The scores as the view keeps them (per seat, or per side of partners). */
function scores(view: Obj): number[] | null {
  const s = view["score"] ?? view["scores"];
  return Array.isArray(s) && s.every((x) => typeof x === "number") ? (s as number[]) : null;
}

/** The seats of each scoring side: one seat a side, or partners (0 & 2, 1 & 3). */
export function sides(view: Obj, count: number): number[][] {
  const n = seatCount(view);
  const sd = view["sides"];
  if (Array.isArray(sd) && sd.every(Array.isArray)) return sd as number[][];
  if (Array.isArray(sd) && sd.every((x) => typeof x === "number")) {
    const out: number[][] = Array.from({ length: count }, () => []);
    (sd as number[]).forEach((s, seat) => out[s]?.push(seat));
    return out;
  }
  if (count === n) return Array.from({ length: n }, (_, i) => [i]);
  return Array.from({ length: count }, (_, s) => Array.from({ length: n }, (_, i) => i).filter((i) => i % count === s));
}

function sideName(seats: number[], names: string[]): string {
  return seats.map((s) => names[s] ?? String(s)).join(` ${t("and")} `);
}

function scoreLine(view: Obj, names: string[]): HTMLElement | null {
  const sc = scores(view);
  if (sc === null) return null;
  const sd = sides(view, sc.length);
  const out = el("span", { id: "score" }, `${t("scores")}: `);
  sc.forEach((v, i) => {
    out.append(el("b", {}, el("bdi", {}, sideName(sd[i] ?? [i], names)), `: ${num(v)}`));
    if (i < sc.length - 1) out.append(t("sep"));
  });
  const target = view["match_length"] ?? view["target"];
  if (typeof target === "number") out.append(` (${t("to")} ${num(target)})`);
  return out;
}

// -- seats around the table ---------------------------------------------------------------------
function seatsRow(view: Obj, mine: number, names: string[]): HTMLElement {
  const row = el("div", { class: "seats" });
  const counts = (view["hand_sizes"] ?? view["hand_counts"]) as number[] | undefined;
  const tricks = view["tricks_by_seat"] as number[] | undefined;
  const bids = view["bids"];
  const pips = view["pips"] as number[] | undefined;
  const domino = Array.isArray(view["line"]) || Array.isArray(view["trains"]);
  names.forEach((name, i) => {
    const d = el("div", { class: `who${i === view["turn"] ? " on-turn" : ""}${i === mine ? " me" : ""}`, "data-seat": String(i) });
    d.append(el("strong", {}, el("bdi", {}, name)));
    if (i === view["hakem"]) d.append(" ", el("span", { class: "badge" }, t("hakem")));
    const bits: string[] = [];
    if (counts && typeof counts[i] === "number" && i !== mine) bits.push(`${num(counts[i]!)} ${t(counts[i] === 1 ? (domino ? "one_tile" : "one_card") : domino ? "tiles" : "cards")}`);
    if (tricks && typeof tricks[i] === "number") bits.push(`${num(tricks[i]!)} ${t(tricks[i] === 1 ? "one_trick" : "tricks")}`);
    if (Array.isArray(bids)) {
      const b = (bids as unknown[])[i];
      if (typeof b === "number") bits.push(`${t("bid")} ${num(b)}`);
      const sh = (bids as unknown[]).filter(isObj).filter((x) => x["seat"] === i).at(-1);
      if (sh) bits.push(sh["bid"] === "pass" ? t("a_pass") : `${t("bid")} ${num(Number(sh["bid"]))}`);
    }
    if (pips && typeof pips[i] === "number") bits.push(`${t("pips")} ${num(pips[i]!)}`);
    if (bits.length) d.append(el("small", {}, bits.join(t("sep"))));
    row.append(d);
  });
  return row;
}

// -- cards ------------------------------------------------------------------------------------
function trickArea(view: Obj, names: string[]): HTMLElement | null {
  const trick = Array.isArray(view["trick"]) ? (view["trick"] as Obj[]) : null;
  if (trick === null) return null;
  const last = view["last_trick"];
  const area = el("section", { class: "trick", "data-testid": "trick" });
  if (trick.length === 0 && isObj(last) && Array.isArray(last["plays"])) {
    area.append(el("h3", {}, t("lasttrick")));
    const row = el("div", { class: "cards small" });
    for (const p of last["plays"] as Obj[]) {
      row.append(el("figure", { class: p["seat"] === last["winner"] ? "won" : "" }, card(String(p["card"])), el("figcaption", {}, names[Number(p["seat"])] ?? "")));
    }
    area.append(row);
    return area;
  }
  if (trick.length === 0) return null; // nothing on the table yet
  area.append(el("h3", {}, t("trick")));
  const row = el("div", { class: "cards" });
  for (const p of trick) row.append(el("figure", {}, card(String(p["card"] ?? "")), el("figcaption", {}, names[Number(p["seat"])] ?? "")));
  area.append(row);
  return area;
}

/** A hand as a person holds it: by suit (black and red taking turns), high to low; jokers
 * last. (A sealed seat's hand comes from its deal machine in the deal's order.) */
const SUIT_ORDER = "SHCD";
const RANK_ORDER = "AKQJT98765432";
function sortHand(cards: string[]): string[] {
  const key = (c: string): number => {
    const s = SUIT_ORDER.indexOf(c.slice(-1));
    const r = RANK_ORDER.indexOf(c.slice(0, -1));
    return c === "JB" || c === "JR" || s < 0 || r < 0 ? 1000 + c.charCodeAt(1) : s * 20 + r;
  };
  return cards.slice().sort((a, b) => key(a) - key(b));
}

function cardHand(view: Obj, legal: Obj[], act: Act, tools: HTMLElement): HTMLElement {
  const hand = sortHand(view["hand"] as string[]);
  const plays = new Map(legal.filter((a) => a["type"] === "play" && typeof a["card"] === "string").map((a) => [a["card"] as string, a]));
  // a put-away names its cards, or at a sealed table the items of the seat's hand, which its
  // own machine has opened (item_codes): shown and chosen as cards, sent as it is
  const codes = (view["item_codes"] ?? {}) as Record<string, unknown>;
  const discards: { cards: string[]; action: Obj }[] = [];
  for (const a of legal) {
    if (a["type"] !== "discard") continue;
    const named = Array.isArray(a["cards"]) ? a["cards"] : Array.isArray(a["items"]) ? a["items"].map((i) => codes[String(i)]) : [];
    if (named.length && named.every((c) => typeof c === "string")) discards.push({ cards: named as string[], action: a });
  }
  const row = el("div", { class: "cards hand", "data-testid": "hand" });
  const chosen = new Set<string>();
  const put = el("button", { type: "button", "data-testid": "legal-action", class: "primary" }, t("a_discard")) as HTMLButtonElement;
  const fits = (set: Set<string>): Obj | undefined =>
    discards.find(({ cards: cs }) => cs.length === set.size && cs.every((c) => set.has(c)))?.action;
  const canAdd = (c: string): boolean => discards.some(({ cards: cs }) => cs.includes(c) && [...chosen].every((x) => cs.includes(x)));
  const drawHand = (): void => {
    row.replaceChildren();
    for (const c of hand) {
      const b = el("button", { type: "button", class: "card-btn", "data-card": c }) as HTMLButtonElement;
      b.append(card(c));
      const play = plays.get(c);
      if (play) {
        b.setAttribute("data-testid", "legal-action");
        b.classList.add("playable");
        b.addEventListener("click", () => act(play));
      } else if (discards.length) {
        if (chosen.has(c)) {
          b.classList.add("chosen");
          b.setAttribute("data-testid", "chosen");
          b.setAttribute("aria-pressed", "true");
        } else if (canAdd(c)) {
          b.classList.add("playable");
          b.setAttribute("data-testid", "choose");
        } else b.disabled = true;
        b.addEventListener("click", () => {
          if (chosen.has(c)) chosen.delete(c);
          else chosen.add(c);
          drawHand();
        });
      } else b.disabled = true;
      row.append(b);
    }
    const ok = fits(chosen);
    put.disabled = ok === undefined;
  };
  if (discards.length) {
    const n = discards[0]!.cards.length;
    put.addEventListener("click", () => {
      const ok = fits(chosen);
      if (ok) act(ok);
    });
    tools.append(el("p", { class: "hint" }, `${t("discardhint")} (${num(n)})`), put);
  }
  drawHand();
  return row;
}

// -- dominoes -----------------------------------------------------------------------------------
function endButton(label: string, a: Obj, act: Act): HTMLElement {
  const b = el("button", { type: "button", class: "end-target", "data-testid": "legal-action", "aria-label": label }, "+");
  b.addEventListener("click", () => act(a));
  return b;
}

function tileRow(tiles: unknown[], cls: string): HTMLElement {
  const row = el("div", { class: cls, dir: "ltr" });
  for (const tl of tiles) {
    const [a, b] = tileEnds(tl);
    row.append(tile(a, b, a === b));
  }
  return row;
}

function dominoes(view: Obj, mine: number, names: string[], legal: Obj[], act: Act, selected: string | null, pick: (code: string) => void): HTMLElement[] {
  const out: HTMLElement[] = [];
  const plays = legal.filter((a) => a["type"] === "play" && typeof a["tile"] === "string");
  const forSel = plays.filter((a) => a["tile"] === selected);
  if (Array.isArray(view["line"])) {
    const area = el("section", { class: "line-area", "data-testid": "line" });
    const row = tileRow(view["line"] as unknown[], "line");
    const at = (end: string): Obj | undefined => forSel.find((a) => a["end"] === end);
    const l = at("left"), r = at("right");
    if (l) row.prepend(endButton(t("left"), l, act));
    if (r) row.append(endButton(t("right"), r, act));
    area.append(el("h3", {}, `${t("line")}${typeof view["pile"] === "number" && view["pile"] > 0 ? ` · ${t("pile")}: ${num(view["pile"])}` : ""}`), row);
    out.push(area);
  }
  if (Array.isArray(view["trains"])) {
    const area = el("section", { class: "trains", "data-testid": "trains" });
    const head = [`${t("engine")}: `];
    area.append(el("h3", {}, ...head, ...(typeof view["engine"] === "string" ? [tile(...tileEnds(view["engine"]), true)] : []), typeof view["pile"] === "number" ? ` · ${t("pile")}: ${num(view["pile"])}` : ""));
    for (const tr of view["trains"] as Obj[]) {
      const who = tr["train"] === "mexican" ? t("mexican") : `${t("train")}: ${names[Number(tr["train"])] ?? String(tr["train"])}`;
      const row = el("div", { class: `train${tr["train"] === mine ? " me" : ""}`, "data-train": String(tr["train"]) });
      row.append(el("span", { class: "train-name" }, who, tr["marker"] ? ` (${t("open")})` : ""));
      const tiles = tileRow(Array.isArray(tr["tiles"]) ? (tr["tiles"] as unknown[]) : [], "line");
      const a = forSel.find((x) => x["train"] === tr["train"]);
      if (a) tiles.append(endButton(who, a, act));
      row.append(tiles);
      area.append(row);
    }
    out.push(area);
  }
  if (Array.isArray(view["hand"])) {
    const row = el("div", { class: "tiles hand", "data-testid": "hand" });
    for (const code of view["hand"] as string[]) {
      const mineActs = plays.filter((a) => a["tile"] === code);
      const [a, b] = tileEnds(code);
      const btn = el("button", { type: "button", class: "tile-btn", "data-tile": code }) as HTMLButtonElement;
      btn.append(tile(a, b, true));
      if (mineActs.length === 1) {
        btn.setAttribute("data-testid", "legal-action");
        btn.classList.add("playable");
        btn.addEventListener("click", () => act(mineActs[0]!));
      } else if (mineActs.length > 1) {
        btn.classList.add("playable");
        if (code === selected) {
          btn.classList.add("chosen");
          btn.setAttribute("aria-pressed", "true");
        } else btn.setAttribute("data-testid", "choose");
        btn.addEventListener("click", () => pick(code));
      } else btn.disabled = true;
      row.append(btn);
    }
    out.push(el("section", { class: "hand-area" }, el("h3", {}, t("hand")), row));
    if (forSel.length) out.push(el("p", { class: "hint" }, t("tilehint")));
  }
  return out;
}

// -- worded moves, and resigning ----------------------------------------------------------------
/** The games with resignations of their own (legal actions, at a cost): the others resign
 * the match. */
const OWN_RESIGN = new Set(["tawla", "mahbusa"]);
/** Whether the person has opened the resign question and not answered it yet. */
let resignAsked = false;

const THINGS = new Set(["play", "discard"]);

/** The moves said in words, and resigning: the game's own resignations (tawla's, at a cost),
 * or, in a game without them, ``leave`` (the match resigned, ``POST …/resign``); either asks
 * first. */
function wordedActions(view: Obj, legal: Obj[], act: Act, leave?: () => void): HTMLElement {
  const box = el("div", { id: "moves" });
  const resigns: (Obj | null)[] = legal.filter((a) => a["type"] === "resign");
  if (!OWN_RESIGN.has(String(view["game"])) && leave !== undefined && view["status"] === "playing") resigns.push(null);
  for (const a of legal) {
    if (THINGS.has(String(a["type"])) || a["type"] === "resign") continue;
    if (a["type"] === "move" && Array.isArray(a["steps"]) && a["steps"].length > 0) continue;
    if (a["type"] === "sealed") continue;
    const b = el("button", { type: "button", "data-testid": "legal-action", "data-type": String(a["type"]) });
    if (a["type"] === "trump" && typeof a["suit"] === "string") b.append(suitIcon(a["suit"]), " ");
    b.append(a["type"] === "trump" ? words(a, view).replace(/^\S+ /, "") : words(a, view));
    b.addEventListener("click", () => act(a));
    box.append(b);
  }
  if (resigns.length) {
    const open = el("button", { type: "button", class: "resign", "data-testid": "resign" }, t("a_resign"));
    const ask = el("div", { class: "confirm", role: "alertdialog", "data-testid": "resign-confirm", hidden: "" });
    for (const a of resigns) {
      const yes =
        a === null
          ? el("button", { type: "button", class: "danger", "data-testid": "resign-yes", "data-match": "1" }, t("resign_match"))
          : el("button", { type: "button", class: "danger", "data-testid": "resign-yes", "data-points": String(a["points"]) }, `${t("resign_q")} ${resignCost(Number(a["points"]), view)}`);
      yes.addEventListener("click", () => {
        resignAsked = false;
        if (a === null) leave!();
        else act(a);
      });
      ask.append(yes);
    }
    const no = el("button", { type: "button", "data-testid": "resign-no" }, t("resign_no"));
    const show = (asking: boolean): void => {
      resignAsked = asking;
      ask.hidden = !asking;
      open.hidden = asking;
    };
    no.addEventListener("click", () => show(false));
    ask.append(no);
    open.addEventListener("click", () => show(true));
    show(resignAsked); // the question stays open while the table is drawn again
    box.append(open, ask);
  }
  return box;
}

// -- the end ----------------------------------------------------------------------------------------
/** Who won and the final score, in a sentence and a line. */
export function outcome(view: Obj, mine: number): HTMLElement {
  const names = seatNames(view, mine);
  const res = isObj(view["result"]) ? view["result"] : {};
  const winners = Array.isArray(res["winners"]) ? (res["winners"] as number[]) : [];
  const box = el("section", { id: "result", "data-testid": "result", "data-winners": winners.join(",") });
  let head: string;
  if (winners.length === 0) head = t("nobody");
  else if (winners.includes(mine)) head = winners.length > 1 ? t("yourside") : t("youwon");
  else head = `${sideName(winners, names)} ${t("won")}. ${t("youlost")}`;
  box.append(el("h2", {}, head));
  const sc = Array.isArray(res["scores"]) ? (res["scores"] as number[]) : scores(view);
  if (sc && sc.length) {
    const sd = sides(view, sc.length);
    const final = el("p", { class: "final" }, `${t("final")}: `);
    sc.forEach((v, i) => final.append(...(i ? [t("sep")] : []), el("bdi", {}, sideName(sd[i] ?? [i], names)), `: ${num(v)}`));
    box.append(final);
  }
  const why = typeof res["reason"] === "string" ? res["reason"] : "finished";
  if (why !== "finished" && t(`why_${why}`) !== `why_${why}`) box.append(el("p", { class: "why" }, t(`why_${why}`)));
  return box;
}

// -- the whole table --------------------------------------------------------------------------------
/** Draw ``view`` for seat ``mine`` into ``main``; a legal move chosen goes to ``act``. */
export function renderTable(main: HTMLElement, view: Obj, mine: number, act: Act, leave?: () => void): void {
  let selected: string | null = null;
  let sent = false;
  const once: Act = (a) => {
    if (sent) return;
    sent = true;
    main.querySelectorAll("button").forEach((x) => ((x as HTMLButtonElement).disabled = true));
    main.querySelectorAll('[data-testid="legal-action"],[data-testid="choose"]').forEach((x) => x.removeAttribute("data-testid"));
    act(a);
  };
  const leaveOnce = (): void => {
    if (sent || leave === undefined) return;
    sent = true;
    main.querySelectorAll("button").forEach((x) => ((x as HTMLButtonElement).disabled = true));
    leave();
  };
  const draw = (): void => {
    main.replaceChildren();
    main.dataset["version"] = String(view["version"] ?? "");
    main.dataset["game"] = String(view["game"] ?? "");
    const names = seatNames(view, mine);
    const legal = (Array.isArray(view["legal_actions"]) ? view["legal_actions"] : []).filter(isObj);
    const turn = view["turn"];
    const info = el("div", { class: "info" });
    info.append(el("span", { id: "turn", "data-turn": String(turn ?? "") }, `${t("turn")}: ${typeof turn === "number" ? names[turn] ?? num(turn) : "–"}`));
    const dl = view["deadline"];
    if (isObj(dl) && typeof dl["due"] === "string") {
      const due = new Date(dl["due"]);
      const who = typeof dl["seat"] === "number" ? names[dl["seat"]] ?? "" : "";
      info.append(el("span", { id: "deadline", "data-due": dl["due"] }, `${t("deadline")}: ${who} ${t("until")} ${due.toLocaleTimeString(lang, { hour: "2-digit", minute: "2-digit" })}`));
    }
    if (typeof view["trump"] === "string") info.append(el("span", { id: "trump" }, `${t("trump")}: `, suitIcon(view["trump"]), ` ${t(`s_${view["trump"]}`)}`));
    const cu = view["cube"];
    if (isObj(cu) && typeof cu["value"] === "number" && cu["value"] > 1) info.append(el("span", { id: "cube" }, `${t("cube")}: ${num(cu["value"])}`));
    const sl = scoreLine(view, names);
    if (sl) info.append(sl);
    const deal = view["deal"];
    if ((deal === "seeded" || deal === "sealed") && view["hand"] !== undefined) {
      info.append(el("span", { id: "deal", "data-deal": deal, class: "deal" }, t(`deal_${deal}`)));
    }
    main.append(info, seatsRow(view, mine, names));
    const limits = sealedLimits(view);
    if (limits) main.append(limits);
    if (view["status"] === "finished") main.append(outcome(view, mine));
    const tools = el("div", { class: "tools" });
    if (Array.isArray(view["points"])) main.append(board(view, mine, legal, once));
    const trick = trickArea(view, names);
    if (trick) main.append(trick);
    if (Array.isArray(view["line"]) || Array.isArray(view["trains"])) {
      for (const part of dominoes(view, mine, names, legal, once, selected, (code) => {
        selected = code;
        draw();
      })) main.append(part);
    } else if (Array.isArray(view["hand"])) {
      main.append(el("section", { class: "hand-area" }, el("h3", {}, t("hand")), cardHand(view, legal, once, tools)));
    }
    // two-player hokm: the stock's top card, shown to the seat that keeps it or the next
    if (typeof view["drawn"] === "string" && legal.some((a) => a["type"] === "draw")) {
      main.append(el("section", { class: "drawn", "data-testid": "drawn" }, el("h3", {}, t("topcard")), el("div", { class: "cards" }, card(view["drawn"]))));
    }
    // a sealed deal step this seat owes: play.ts makes and sends it at once (no button)
    const step = legal.find((a) => a["type"] === "sealed");
    if (step !== undefined) {
      main.append(el("p", { class: "sealed-note", "data-testid": "sealed-step", "data-step": String(step["step"]), role: "status" }, t("dealing")));
    }
    main.append(tools, wordedActions(view, legal, once, leave && leaveOnce));
  };
  draw();
}

// the lobby's game names
export function gameName(g: string): string {
  return t(`g_${g}`);
}

export { svg };

/** A sealed table's limits (``sealed.limits``), computed by the server from its public facts,
 * under their heading; a code this page does not know is shown in the server's own words. */
export function sealedLimits(view: Obj): HTMLElement | null {
  const sealed = view["sealed"];
  const limits = view["deal"] === "sealed" && isObj(sealed) && Array.isArray(sealed["limits"]) ? (sealed["limits"] as Obj[]) : [];
  if (!limits.length) return null;
  const list = el("ul", { id: "limits" });
  for (const x of limits) {
    const key = `limit_${String(x["code"])}`;
    list.append(el("li", { "data-limit": String(x["code"]) }, has(key) ? t(key) : String(x["text"] ?? "")));
  }
  return el("section", { class: "limits" }, el("h3", {}, t("limits")), list);
}

// The web table's pieces, drawn by code as SVG (issue 47): playing cards with their ranks and
// suits, domino tiles with their pips (up to double-12), dice and the doubling cube. No image
// file is bundled.
import { SUIT_SIGN, t } from "./i18n.js";

const NS = "http://www.w3.org/2000/svg";

export function svg(tag: string, attrs: Record<string, string | number> = {}, ...kids: (Node | string)[]): SVGElement {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const k of kids) e.append(k);
  return e;
}

export function el(tag: string, attrs: Record<string, string> = {}, ...kids: (Node | string)[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}

// -- cards -----------------------------------------------------------------------------------
/** The suits as paths in a 20×20 box. */
const SUIT_PATH: Record<string, string> = {
  H: "M10 18.5 L2.6 10.6 A4.3 4.3 0 0 1 10 4.6 A4.3 4.3 0 0 1 17.4 10.6 Z",
  D: "M10 1.5 L17 10 L10 18.5 L3 10 Z",
  S: "M10 1.5 L17.4 9.4 A4.3 4.3 0 0 1 10.6 14 L12.8 18.5 L7.2 18.5 L9.4 14 A4.3 4.3 0 0 1 2.6 9.4 Z",
  C: "M10 1.8 A4 4 0 0 1 13.4 8 A4 4 0 1 1 10.8 14 L12.8 18.5 L7.2 18.5 L9.2 14 A4 4 0 1 1 6.6 8 A4 4 0 0 1 10 1.8 Z",
};
const RED = "#c0262d";
const BLACK = "#1d1d1f";
const RANK: Record<string, string> = { T: "10", J: "J", Q: "Q", K: "K", A: "A" };
const RANK_NAME: Record<string, string> = { T: "10", J: "Jack", Q: "Queen", K: "King", A: "Ace" };

function suit(s: string, x: number, y: number, size: number, fill: string): SVGElement {
  const g = svg("path", { d: SUIT_PATH[s] ?? "", fill, transform: `translate(${x} ${y}) scale(${size / 20})` });
  return g;
}

/** The name of a card for a screen reader and a tooltip ("Q ♥ Hearts"). */
export function cardName(code: string): string {
  if (code === "JB" || code === "JR") return `Joker ${code === "JR" ? "♥" : "♠"}`;
  const r = code.slice(0, -1);
  const s = code.slice(-1);
  return `${RANK_NAME[r] ?? r} ${SUIT_SIGN[s] ?? s} ${t(`s_${s}`)}`;
}

/** A playing card (its code: rank then suit, "TC" the ten of clubs, "JB"/"JR" the jokers). */
export function card(code: string): SVGElement {
  // direction ltr: in a right-to-left page a start-anchored rank would run out of the card
  const s = svg("svg", { viewBox: "0 0 60 84", class: "card", role: "img", "aria-label": cardName(code), "data-card": code, direction: "ltr" });
  s.append(svg("rect", { x: 1, y: 1, width: 58, height: 82, rx: 6, fill: "#fff", stroke: "#8a8a8a", "stroke-width": 1.2 }));
  if (code === "JB" || code === "JR") {
    const fill = code === "JR" ? RED : BLACK;
    s.append(svg("polygon", { points: "30,22 35,36 50,36 38,45 42,60 30,51 18,60 22,45 10,36 25,36", fill }));
    s.append(svg("text", { x: 30, y: 76, "text-anchor": "middle", "font-size": 10, "font-weight": 700, fill, "font-family": "sans-serif" }, "JOKER"));
    return s;
  }
  const r = code.slice(0, -1);
  const su = code.slice(-1);
  const fill = su === "H" || su === "D" ? RED : BLACK;
  const rank = RANK[r] ?? r;
  const fs = rank.length > 1 ? 15 : 17;
  s.append(svg("text", { x: 5, y: 19, "font-size": fs, "font-weight": 700, fill, "font-family": "sans-serif", "letter-spacing": -1 }, rank));
  s.append(suit(su, 5, 22, 12, fill));
  s.append(suit(su, 17, 32, 30, fill));
  const br = svg("g", { transform: "rotate(180 30 42)" });
  br.append(svg("text", { x: 5, y: 19, "font-size": fs, "font-weight": 700, fill, "font-family": "sans-serif", "letter-spacing": -1 }, rank));
  br.append(suit(su, 5, 22, 12, fill));
  s.append(br);
  return s;
}

/** The back of a card (another seat's hand). */
export function cardBack(): SVGElement {
  const s = svg("svg", { viewBox: "0 0 60 84", class: "card back", "aria-hidden": "true" });
  s.append(svg("rect", { x: 1, y: 1, width: 58, height: 82, rx: 6, fill: "#7b2d26", stroke: "#4a1a16", "stroke-width": 1.2 }));
  s.append(svg("rect", { x: 7, y: 7, width: 46, height: 70, rx: 3, fill: "none", stroke: "#e9c46a", "stroke-width": 1.5 }));
  return s;
}

/** A suit sign drawn as a path (a trump). */
export function suitIcon(s: string): SVGElement {
  const out = svg("svg", { viewBox: "0 0 20 20", class: "suit", role: "img", "aria-label": t(`s_${s}`) });
  out.append(suit(s, 0, 0, 20, s === "H" || s === "D" ? RED : BLACK));
  return out;
}

// -- pips: dice and domino halves -------------------------------------------------------------
const L = 0.25, M = 0.5, R = 0.75;
const Q1 = 0.2, Q2 = 0.4, Q3 = 0.6, Q4 = 0.8;
/** Where the pips of 0–12 sit in a unit square. */
const PIPS: [number, number][][] = [
  [],
  [[M, M]],
  [[L, L], [R, R]],
  [[L, L], [M, M], [R, R]],
  [[L, L], [R, L], [L, R], [R, R]],
  [[L, L], [R, L], [M, M], [L, R], [R, R]],
  [[L, L], [R, L], [L, M], [R, M], [L, R], [R, R]],
  [[L, L], [R, L], [L, M], [M, M], [R, M], [L, R], [R, R]],
  [[L, Q1], [R, Q1], [L, Q2], [R, Q2], [L, Q3], [R, Q3], [L, Q4], [R, Q4]],
  [[L, L], [M, L], [R, L], [L, M], [M, M], [R, M], [L, R], [M, R], [R, R]],
  [[L, Q1], [R, Q1], [L, Q2], [M, Q2], [R, Q2], [L, Q3], [M, Q3], [R, Q3], [L, Q4], [R, Q4]],
  [[L, Q1], [M, Q1], [R, Q1], [L, Q2], [R, Q2], [L, Q3], [M, M], [R, Q3], [L, Q4], [M, Q4], [R, Q4]],
  [[L, Q1], [M, Q1], [R, Q1], [L, Q2], [M, Q2], [R, Q2], [L, Q3], [M, Q3], [R, Q3], [L, Q4], [M, Q4], [R, Q4]],
];

function pips(n: number, x: number, y: number, size: number, fill: string): SVGElement[] {
  const r = size * (n > 6 ? 0.075 : 0.095);
  return (PIPS[n] ?? []).map(([px, py]) => svg("circle", { cx: x + px * size, cy: y + py * size, r, fill }));
}

/** One die showing ``n``. */
export function die(n: number, used = false): SVGElement {
  const s = svg("svg", { viewBox: "0 0 40 40", class: `die${used ? " used" : ""}`, role: "img", "aria-label": `${t("dice")} ${n}`, "data-die": n });
  s.append(svg("rect", { x: 2, y: 2, width: 36, height: 36, rx: 7, fill: "#fffdf6", stroke: "#333", "stroke-width": 1.5 }));
  for (const p of pips(n, 4, 4, 32, "#222")) s.append(p);
  return s;
}

/** A domino tile "a-b" (or [a, b] as laid in a line), across (default) or upright. */
export function tile(a: number, b: number, upright = false): SVGElement {
  const w = upright ? 40 : 80, h = upright ? 80 : 40;
  const s = svg("svg", { viewBox: `0 0 ${w} ${h}`, class: `tile${upright ? " upright" : ""}`, role: "img", "aria-label": `${a}–${b}`, "data-tile": `${a}-${b}` });
  s.append(svg("rect", { x: 1, y: 1, width: w - 2, height: h - 2, rx: 6, fill: "#fbf8ef", stroke: "#3b3b3b", "stroke-width": 1.5 }));
  if (upright) {
    s.append(svg("line", { x1: 6, y1: 40, x2: 34, y2: 40, stroke: "#3b3b3b", "stroke-width": 1.5 }));
    for (const p of pips(a, 2, 2, 36, "#1d1d1f")) s.append(p);
    for (const p of pips(b, 2, 42, 36, "#1d1d1f")) s.append(p);
  } else {
    s.append(svg("line", { x1: 40, y1: 6, x2: 40, y2: 34, stroke: "#3b3b3b", "stroke-width": 1.5 }));
    for (const p of pips(a, 2, 2, 36, "#1d1d1f")) s.append(p);
    for (const p of pips(b, 42, 2, 36, "#1d1d1f")) s.append(p);
  }
  return s;
}

/** A tile's code "a-b" as its two numbers. */
export function tileEnds(code: unknown): [number, number] {
  if (Array.isArray(code)) return [Number(code[0]), Number(code[1])];
  const [a, b] = String(code).split("-");
  return [Number(a), Number(b)];
}

/** The doubling cube showing ``value`` (64 while nobody has doubled). */
export function cube(value: number): SVGElement {
  const s = svg("svg", { viewBox: "0 0 40 40", class: "cube", role: "img", "aria-label": `${t("cube")} ${value}` });
  s.append(svg("rect", { x: 2, y: 2, width: 36, height: 36, rx: 5, fill: "#f4f1e8", stroke: "#333", "stroke-width": 1.5 }));
  s.append(svg("text", { x: 20, y: 27, "text-anchor": "middle", "font-size": 18, "font-weight": 700, "font-family": "sans-serif", fill: "#222" }, String(value <= 1 ? 64 : value)));
  return s;
}

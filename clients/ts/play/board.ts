// The tawla (and mahbusa) board, drawn whole from the seat's own side (issue 47): its 24
// points, the bar, the borne-off checkers, the dice and the cube. A move is made on the board:
// tap a lit checker, then the point it goes to (or the tray to bear it off); the steps add up
// to one of the view's legal moves, which is then sent.
import { num, t } from "./i18n.js";
import { cube as cubeIcon, die, el, svg } from "./pieces.js";

type Obj = Record<string, unknown>;
type Step = [number, number];

const PW = 40; // a point's width
const BARW = 40;
const TRAY = 48;
const M = 6; // margin
const W = M + 12 * PW + BARW + 4 + TRAY + M;
const H = 440;
const PH = 176; // a point's height
const R = 18; // a checker's radius
const BAR = 25;
const OFF = 0;
const BAR_X = M + 6 * PW;
const TRAY_X = M + 12 * PW + BARW + 4;

function colX(col: number): number {
  return col < 6 ? M + col * PW : BAR_X + BARW + (col - 6) * PW;
}

/** Where the seat's own point ``p`` (1–24) is drawn: its column and whether it is on top. */
function place(p: number): { x: number; top: boolean } {
  if (p <= 12) return { x: colX(12 - p), top: false };
  return { x: colX(p - 13), top: true };
}

interface Pos {
  mine: number[]; // [0] off, 1..24 points, [25] bar: the seat's own checkers by its numbering
  theirs: number[]; // the same points (in the seat's numbering): the other seat's checkers
  theirBar: number;
  theirOff: number;
  prisoners: number[]; // mahbusa: +n the other seat's pinned under mine, -n mine under theirs
}

function position(view: Obj, me: number): Pos {
  const pts = (view["points"] as number[] | undefined) ?? [];
  const bar = (view["bar"] as number[] | undefined) ?? [0, 0];
  const off = (view["off"] as number[] | undefined) ?? [0, 0];
  const pri = (view["prisoners"] as number[] | undefined) ?? [];
  const sign = me === 0 ? 1 : -1;
  const mine = new Array<number>(26).fill(0);
  const theirs = new Array<number>(26).fill(0);
  const prisoners = new Array<number>(26).fill(0);
  for (let p = 1; p <= 24; p++) {
    const idx = me === 0 ? p - 1 : 24 - p;
    const n = (pts[idx] ?? 0) * sign;
    if (n > 0) mine[p] = n;
    else theirs[p] = -n;
    prisoners[p] = -(pri[idx] ?? 0) * sign;
  }
  mine[BAR] = bar[me] ?? 0;
  mine[OFF] = off[me] ?? 0;
  return { mine, theirs, theirBar: bar[1 - me] ?? 0, theirOff: off[1 - me] ?? 0, prisoners };
}

/** The multiset difference ``a − p`` of steps, or null when ``p`` is not inside ``a``. */
function minus(a: Step[], p: Step[]): Step[] | null {
  const rest = a.slice();
  for (const s of p) {
    const i = rest.findIndex((x) => x[0] === s[0] && x[1] === s[1]);
    if (i < 0) return null;
    rest.splice(i, 1);
  }
  return rest;
}

const MINE = "#f6efe0";
const THEIRS = "#2a2522";

function checker(x: number, y: number, mine: boolean, r = R): SVGElement {
  return svg("circle", { cx: x, cy: y, r, fill: mine ? MINE : THEIRS, stroke: mine ? "#7a6a50" : "#000", "stroke-width": 1.5 });
}

function stack(g: SVGElement, x: number, top: boolean, n: number, mine: boolean, baseY?: number): void {
  const shown = Math.min(n, 5);
  const y0 = baseY ?? (top ? M + R : H - M - R);
  for (let k = 0; k < shown; k++) g.append(checker(x, top ? y0 + k * (2 * R) : y0 - k * (2 * R), mine));
  if (n > 5) {
    const y = top ? y0 + 4 * 2 * R : y0 - 4 * 2 * R;
    g.append(svg("text", { x, y: y + 5, "text-anchor": "middle", "font-size": 15, "font-weight": 700, fill: mine ? "#222" : "#fff", "font-family": "sans-serif" }, String(n)));
  }
}

/** The board of a tawla or mahbusa view for seat ``me``: its legal moves made on it, each
 * complete move handed to ``send``. */
export function board(view: Obj, me: number, legal: Obj[], send: (a: Obj) => void): HTMLElement {
  const moves = legal.filter((a) => a["type"] === "move" && Array.isArray(a["steps"]) && (a["steps"] as unknown[]).length > 0);
  const wrap = el("div", { class: "board-wrap" });
  const hint = el("p", { class: "hint" });
  const undo = el("button", { type: "button", class: "undo", "data-testid": "undo" }, t("undo")) as HTMLButtonElement;
  const holder = el("div", { class: "board-holder" });
  wrap.append(holder);
  if (moves.length) wrap.append(el("div", { class: "board-tools" }, hint, undo));
  let partial: Step[] = [];
  let sel: number | null = null;
  let sent = false; // the move is complete and sent: nothing more to tap
  const base = position(view, me);
  const isMahbusa = view["game"] === "mahbusa";

  const apply = (pos: Pos, s: Step): void => {
    pos.mine[s[0]]! -= 1;
    pos.mine[s[1]]! += 1;
    if (s[1] !== OFF && pos.theirs[s[1]] === 1) {
      if (isMahbusa) pos.prisoners[s[1]]! += 1;
      else pos.theirBar += 1;
      pos.theirs[s[1]] = 0;
    }
  };

  const draw = (): void => {
    const pos: Pos = { ...base, mine: base.mine.slice(), theirs: base.theirs.slice(), prisoners: base.prisoners.slice() };
    for (const s of partial) apply(pos, s);
    const rests = moves.map((a) => minus(a["steps"] as Step[], partial)).filter((r): r is Step[] => r !== null);
    const sources = new Set(rests.flatMap((r) => r.map((s) => s[0])));
    const targets = new Set(rests.flatMap((r) => r.filter((s) => s[0] === sel).map((s) => s[1])));

    const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "board", role: "img", "data-testid": "board", "aria-label": t("g_" + String(view["game"])) });
    s.append(svg("rect", { x: 0, y: 0, width: W, height: H, rx: 10, fill: "#5b3a1e" }));
    s.append(svg("rect", { x: M, y: M, width: 6 * PW, height: H - 2 * M, fill: "#d9b98a" }));
    s.append(svg("rect", { x: BAR_X + BARW, y: M, width: 6 * PW, height: H - 2 * M, fill: "#d9b98a" }));
    s.append(svg("rect", { x: TRAY_X, y: M, width: TRAY, height: H - 2 * M, rx: 4, fill: "#3d2612" }));
    const g = svg("g");
    s.append(g);
    for (let p = 1; p <= 24; p++) {
      const { x, top } = place(p);
      const y0 = top ? M : H - M;
      const y1 = top ? M + PH : H - M - PH;
      g.append(svg("polygon", { points: `${x},${y0} ${x + PW},${y0} ${x + PW / 2},${y1}`, fill: p % 2 ? "#9c4a23" : "#efe3c8", stroke: "#6b4b2a", "stroke-width": 0.5 }));
      const lab = svg("text", { x: x + PW / 2, y: top ? y1 + 14 : y1 - 6, "text-anchor": "middle", "font-size": 10, fill: "#4a3520", "font-family": "sans-serif" }, String(p));
      g.append(lab);
      const cx = x + PW / 2;
      if (pos.mine[p]! > 0) stack(g, cx, top, pos.mine[p]!, true);
      if (pos.theirs[p]! > 0) stack(g, cx, top, pos.theirs[p]!, false);
      // mahbusa: a pinned checker shows at the foot of the point, under its captor
      const pr = pos.prisoners[p]!;
      if (pr !== 0) {
        const y = top ? M + 7 : H - M - 7;
        g.append(checker(cx, y, pr > 0 ? false : true, 7));
      }
    }
    // the bar: the other seat's checkers on top, this seat's below
    stack(g, BAR_X + BARW / 2, true, pos.theirBar, false, M + R + 4);
    stack(g, BAR_X + BARW / 2, false, pos.mine[BAR]!, true, H - M - R - 4);
    // borne off: a slab per checker, the other seat's from the top, this seat's from the bottom
    for (let k = 0; k < pos.theirOff; k++) g.append(svg("rect", { x: TRAY_X + 6, y: M + 4 + k * 11, width: TRAY - 12, height: 9, rx: 2, fill: THEIRS, stroke: "#000" }));
    for (let k = 0; k < pos.mine[OFF]!; k++) g.append(svg("rect", { x: TRAY_X + 6, y: H - M - 13 - k * 11, width: TRAY - 12, height: 9, rx: 2, fill: MINE, stroke: "#7a6a50" }));
    // the dice, on the seat's own half; the cube by its owner (in the middle while nobody owns it)
    const dice = view["dice"];
    if (Array.isArray(dice)) {
      dice.forEach((d, i) => {
        const one = die(Number(d));
        one.setAttribute("x", String(BAR_X + BARW + 60 + i * 48));
        one.setAttribute("y", String(H / 2 - 20));
        one.setAttribute("width", "40");
        one.setAttribute("height", "40");
        s.append(one);
      });
    }
    const cu = view["cube"] as Obj | null | undefined;
    if (cu && typeof cu["value"] === "number") {
      const c = cubeIcon(cu["value"]);
      const y = cu["owner"] === null || cu["owner"] === undefined ? H / 2 - 18 : cu["owner"] === me ? H - M - 60 - 40 : M + 60;
      c.setAttribute("x", String(TRAY_X + 6));
      c.setAttribute("y", String(y));
      c.setAttribute("width", "36");
      c.setAttribute("height", "36");
      s.append(c);
    }
    // what can be tapped: a lit checker (a source), then a lit point (a destination)
    const hit = (pt: number, kind: "choose" | "picked" | "legal-action", onTap: () => void): void => {
      let x: number, y: number, w: number, h: number;
      if (pt === BAR) [x, y, w, h] = [BAR_X, H / 2, BARW, H / 2 - M];
      else if (pt === OFF && kind === "legal-action") [x, y, w, h] = [TRAY_X, H / 2, TRAY, H / 2 - M];
      else {
        const { x: px, top } = place(pt);
        [x, y, w, h] = [px, top ? M : H - M - PH - 14, PW, PH + 14];
      }
      const r = svg("rect", {
        x, y, width: w, height: h, rx: 4,
        class: kind === "choose" ? "src" : kind === "picked" ? "src sel" : "dst",
        "data-testid": kind, "data-point": pt, role: "button", tabindex: 0,
        "aria-label": pt === BAR ? t("bar") : pt === OFF ? t("off") : `${num(pt)}`,
      });
      r.addEventListener("click", onTap);
      r.addEventListener("keydown", (e) => {
        if ((e as KeyboardEvent).key === "Enter" || (e as KeyboardEvent).key === " ") onTap();
      });
      s.append(r);
    };
    for (const src of sent ? [] : sources) {
      if (src === sel) hit(src, "picked", () => {
        sel = null; // tapped again: put it back
        draw();
      });
      else hit(src, "choose", () => {
        sel = src;
        const to = [...new Set(rests.flatMap((r) => r.filter((x) => x[0] === src).map((x) => x[1])))];
        if (to.length === 1) step([src, to[0]!]);
        else draw();
      });
    }
    for (const dst of sent ? [] : targets) hit(dst, "legal-action", () => step([sel!, dst]));
    holder.replaceChildren(s);
    hint.textContent = t("movehint");
    undo.disabled = sent || partial.length === 0;
  };

  const step = (st: Step): void => {
    partial = [...partial, st];
    sel = null;
    const done = moves.find((a) => {
      const rest = minus(a["steps"] as Step[], partial);
      return rest !== null && rest.length === 0;
    });
    if (done) sent = true;
    draw();
    if (done) send(done);
  };
  undo.addEventListener("click", () => {
    partial = [];
    sel = null;
    draw();
  });
  draw();
  return wrap;
}

// The web table at /play (issue 32): one person's seat, played through the conforming client
// (../src), with house bots or a friend in the other seats. Built by `npm run build:play` into
// qahwa_page/static/play.js (committed; tests/test_play_page.py checks it is a fresh build).
import { Client, Disputed, IndexedDBStorage, MemoryStorage } from "../src/index.js";
import type { Seat } from "../src/index.js";

type Obj = Record<string, unknown>;

// key: [English, Arabic, Persian]
const T: Record<string, string[]> = {
  title: ["Play", "العب", "بازی"],
  game: ["Game", "اللعبة", "بازی"],
  rules: ["Rules (JSON, optional)", "القواعد (JSON، اختياري)", "قوانین (JSON، اختیاری)"],
  friend: ["Leave a seat for a friend", "اترك مقعدًا لصديق", "یک صندلی برای دوست"],
  start: ["Sit down", "اجلس", "بنشین"],
  turn: ["Turn", "الدور", "نوبت"],
  you: ["you", "أنت", "شما"],
  seat: ["Seat", "المقعد", "صندلی"],
  deadline: ["Deadline", "المهلة", "مهلت"],
  dice: ["Dice", "النرد", "تاس"],
  waiting: ["Waiting for the other seats…", "بانتظار المقاعد الأخرى…", "در انتظار صندلی‌های دیگر…"],
  yourmove: ["Your move", "دورك", "نوبت شما"],
  theirs: ["Their move", "دورهم", "نوبت آنها"],
  finished: ["The match is over", "انتهت المباراة", "بازی تمام شد"],
  verdict: ["Checking the match in your browser…", "جارٍ التحقق من المباراة في متصفحك…", "بررسی بازی در مرورگر شما…"],
  transcript: ["Download the transcript", "نزّل السجل", "دریافت رونوشت"],
  export: ["Download the seat file", "نزّل ملف المقعد", "دریافت فایل صندلی"],
  link: ["Seat link for your friend", "رابط المقعد لصديقك", "پیوند صندلی برای دوست"],
  hand: ["Your hand", "يدك", "دست شما"],
  trick: ["Trick", "الأكلة", "دست"],
  line: ["Line", "الخط", "ردیف"],
  trump: ["Trump", "الحكم", "حکم"],
  error: ["Error", "خطأ", "خطا"],
  scores: ["Scores", "النقاط", "امتیاز"],
  pass: ["Verified", "تم التحقق", "تأیید شد"],
  fail: ["Verification FAILED", "فشل التحقق", "تأیید نشد"],
  incomplete: ["Incomplete", "غير مكتمل", "ناقص"],
  deal_seeded: [
    "Seeded deal: the operator can work out every hand once the seeds are revealed",
    "توزيع من البذور: يستطيع المشغّل معرفة كل يد بعد كشف البذور",
    "پخش از بذرها: گرداننده پس از آشکار شدن بذرها همهٔ دست‌ها را می‌تواند بداند",
  ],
  deal_sealed: [
    "Sealed deal: nobody is shown a card or tile before it is played",
    "توزيع مختوم: لا تُكشف ورقة أو حجر لأحد قبل أن تُلعب",
    "پخش مهروموم‌شده: هیچ کارت یا مهره‌ای پیش از بازی شدن به کسی نشان داده نمی‌شود",
  ],
  limits: ["What this table does not hide", "ما لا تخفيه هذه الطاولة", "آنچه این میز پنهان نمی‌کند"],
  // sealed.limits (docs/api.md, "Sealed tables"): the same English words as the server's
  limit_house_hands: [
    "The operator plays the house seats: it makes their keys, so it knows their cards or tiles.",
    "يلعب المشغّل مقاعد البيت: هو من يصنع مفاتيحها، فيعرف أوراقها أو أحجارها.",
    "گرداننده صندلی‌های خانه را بازی می‌کند: کلیدهایشان را خودش می‌سازد، پس کارت‌ها یا مهره‌هایشان را می‌داند.",
  ],
  limit_one_person_full_deal: [
    "One person among house seats, and the whole deck is dealt: every card or tile not dealt to a house seat is dealt to that person, so the operator can work out their hand.",
    "شخص واحد بين مقاعد البيت، والمجموعة كلها موزّعة: كل ورقة أو حجر لم يوزَّع على مقعد للبيت موزَّع على ذلك الشخص، فيستطيع المشغّل معرفة يده.",
    "یک نفر میان صندلی‌های خانه، و همهٔ دسته پخش می‌شود: هر کارت یا مهره‌ای که به صندلی خانه نرسیده به آن نفر رسیده، پس گرداننده می‌تواند دست او را بداند.",
  ],
  limit_one_person_partial_deal: [
    "One person among house seats, and part of the deck is not dealt: every card or tile not dealt to a house seat is either that person's or dealt to nobody, so the operator knows their hand is among those.",
    "شخص واحد بين مقاعد البيت، وجزء من المجموعة لا يوزَّع: كل ورقة أو حجر لم يوزَّع على مقعد للبيت إما لذلك الشخص وإما لم يوزَّع على أحد، فيعرف المشغّل أن يده من بينها.",
    "یک نفر میان صندلی‌های خانه، و بخشی از دسته پخش نمی‌شود: هر کارت یا مهره‌ای که به صندلی خانه نرسیده یا از آنِ آن نفر است یا به کسی نرسیده، پس گرداننده می‌داند دست او از میان آنهاست.",
  ],
};
const GAMES = ["tawla", "mahbusa", "hokm", "shelem", "qahve", "iraqi_domino", "mexican_train"];

const params = new URLSearchParams(location.search);
const LANGS = ["en", "ar", "fa"];
const lang = LANGS.find((l) => l === params.get("lang")) ?? "en";
const t = (k: string): string => T[k]?.[LANGS.indexOf(lang)] ?? k;
document.documentElement.lang = lang;
document.documentElement.dir = lang === "ar" || lang === "fa" ? "rtl" : "ltr";

function el(tag: string, attrs: Record<string, string> = {}, ...kids: (Node | string)[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}
const SVG = "http://www.w3.org/2000/svg";
function svg(tag: string, attrs: Record<string, string | number>): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}
const main = document.getElementById("table")!;
const status = document.getElementById("status")!;
function say(text: string): void {
  status.textContent = text;
}

// -- the lobby ---------------------------------------------------------------------------
function lobby(): void {
  const sel = el("select", { id: "game" });
  for (const g of GAMES) sel.append(el("option", { value: g }, g));
  const rules = el("textarea", { id: "ruleset", dir: "ltr", placeholder: '{"match_length": 1}' });
  const friend = el("input", { type: "checkbox", id: "friend" });
  const go = el("button", { id: "start" }, t("start"));
  go.addEventListener("click", () => {
    const r = (rules as HTMLTextAreaElement).value.trim();
    const q = new URLSearchParams({ game: (sel as HTMLSelectElement).value, lang });
    if (r) q.set("ruleset", r);
    if ((friend as HTMLInputElement).checked) q.set("friend", "1");
    location.search = q.toString();
  });
  main.append(
    el("label", {}, t("game"), " ", sel),
    el("label", {}, t("rules"), rules),
    el("label", {}, friend, " ", t("friend")),
    go,
  );
}

// -- drawing -------------------------------------------------------------------------------
function board(view: Obj): Node {
  const pts = (view["points"] as number[] | undefined) ?? [];
  const W = 26 * 24, H = 300;
  const s = svg("svg", { viewBox: `0 0 ${W + 40} ${H}`, width: "100%", role: "img", "data-testid": "board" });
  s.append(svg("rect", { x: 0, y: 0, width: W + 40, height: H, fill: "#d9b98a" }));
  for (let i = 0; i < 24; i++) {
    const top = i >= 12;
    const col = top ? i - 12 : 11 - i;
    const x = col * 26 + (col >= 6 ? 40 : 0);
    const y0 = top ? 0 : H, y1 = top ? 120 : H - 120;
    s.append(svg("polygon", { points: `${x},${y0} ${x + 26},${y0} ${x + 13},${y1}`, fill: i % 2 ? "#7a3e1d" : "#efe3c8" }));
    const n = pts[i] ?? 0;
    for (let k = 0; k < Math.min(Math.abs(n), 5); k++) {
      const cy = top ? 13 + k * 24 : H - 13 - k * 24;
      s.append(svg("circle", { cx: x + 13, cy, r: 11, fill: n > 0 ? "#fff" : "#222", stroke: "#555" }));
    }
    if (Math.abs(n) > 5) {
      const lab = svg("text", { x: x + 13, y: top ? 140 : H - 130, "text-anchor": "middle", "font-size": 12 });
      lab.textContent = String(Math.abs(n));
      s.append(lab);
    }
    const num = svg("text", { x: x + 13, y: top ? 150 + 10 : H - 150, "text-anchor": "middle", "font-size": 9, fill: "#333" });
    num.textContent = String(i + 1);
    s.append(num);
  }
  s.append(svg("rect", { x: 6 * 26, y: 0, width: 40, height: H, fill: "#5a3210" }));
  return s;
}

function chips(items: unknown[], cls: string): HTMLElement {
  const d = el("div", { class: cls });
  for (const c of items) d.append(el("span", { class: "chip" }, typeof c === "string" ? c : JSON.stringify(c)));
  return d;
}

function label(a: Obj): string {
  if (typeof a["card"] === "string") return a["card"];
  if (typeof a["tile"] === "string") return `${a["tile"]}${a["end"] !== undefined ? " → " + String(a["end"]) : ""}`;
  if (Array.isArray(a["steps"])) return (a["steps"] as number[][]).map((st) => `${st[0]}→${st[1]}`).join("  ");
  const rest = Object.entries(a).filter(([k]) => k !== "type");
  return rest.length ? `${String(a["type"])} ${rest.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ")}` : String(a["type"]);
}

const SHOWN = new Set(["points", "hand", "trick", "line", "trains", "legal_actions", "suggested_actions", "dice", "deadline", "turn", "status", "seat", "trump"]);

function render(view: Obj, mine: number, act: (a: Obj) => void): void {
  main.replaceChildren();
  const turn = view["turn"];
  const info = el("div", { class: "info" });
  info.append(el("span", { id: "turn", "data-turn": String(turn ?? "") }, `${t("turn")}: ${turn === mine ? t("you") : `${t("seat")} ${String(turn ?? "–")}`}`));
  const dl = view["deadline"] as Obj | undefined;
  if (dl && typeof dl === "object" && typeof dl["due"] === "string") {
    const due = new Date(dl["due"]);
    const who = dl["seat"] === mine ? t("you") : `${t("seat")} ${String(dl["seat"])}`;
    info.append(el("span", { id: "deadline", "data-due": dl["due"] }, `${t("deadline")}: ${who} ${due.toLocaleTimeString(lang)}`));
  }
  if (view["dice"] !== undefined && view["dice"] !== null) info.append(el("span", { id: "dice" }, `${t("dice")}: ${JSON.stringify(view["dice"])}`));
  if (typeof view["trump"] === "string") info.append(el("span", { id: "trump" }, `${t("trump")}: ${view["trump"]}`));
  // the kind of table (docs/fairness.md): shown where there are hands to hide
  const deal = view["deal"];
  if ((deal === "seeded" || deal === "sealed") && view["hand"] !== undefined) {
    info.append(el("span", { id: "deal", "data-deal": deal }, t(`deal_${deal}`)));
  }
  main.append(info);
  // a sealed table's limits, computed by the server from its public facts: a code this page
  // does not know is shown in the server's own words
  const sealed = view["sealed"] as Obj | null | undefined;
  const limits = sealed && Array.isArray(sealed["limits"]) ? (sealed["limits"] as Obj[]) : [];
  if (deal === "sealed" && limits.length) {
    const list = el("ul", { id: "limits" });
    for (const x of limits) {
      const key = `limit_${String(x["code"])}`;
      list.append(el("li", { "data-limit": String(x["code"]) }, T[key] ? t(key) : String(x["text"] ?? "")));
    }
    main.append(el("h3", {}, t("limits")), list);
  }
  if (Array.isArray(view["points"])) main.append(board(view));
  if (Array.isArray(view["trick"])) {
    main.append(el("h3", {}, t("trick")), chips((view["trick"] as Obj[]).map((x) => `${String(x["seat"])}: ${String(x["card"] ?? x["tile"] ?? "")}`), "trick"));
  }
  const tile = (p: unknown): string => (Array.isArray(p) ? `[${p.join("|")}]` : String(p));
  if (Array.isArray(view["line"])) main.append(el("h3", {}, t("line")), chips((view["line"] as unknown[]).map(tile), "line"));
  if (Array.isArray(view["trains"])) {
    for (const tr of view["trains"] as Obj[]) {
      const tiles = Array.isArray(tr["tiles"]) ? (tr["tiles"] as unknown[]).map(tile) : [];
      main.append(el("h3", {}, `${t("line")} ${String(tr["train"])}${tr["marker"] ? " ●" : ""}`), chips(tiles, "line"));
    }
  }
  if (Array.isArray(view["hand"])) main.append(el("h3", {}, t("hand")), chips(view["hand"] as unknown[], "hand"));
  const rest = Object.fromEntries(Object.entries(view).filter(([k]) => !SHOWN.has(k)));
  main.append(el("pre", { class: "rest", dir: "ltr" }, JSON.stringify(rest)));
  const legal = (Array.isArray(view["legal_actions"]) ? view["legal_actions"] : []) as Obj[];
  const moves = el("div", { id: "moves" });
  for (const a of legal) {
    const b = el("button", { "data-testid": "legal-action", "data-action": JSON.stringify(a), dir: "ltr" }, label(a));
    b.addEventListener("click", () => {
      moves.querySelectorAll("button").forEach((x) => ((x as HTMLButtonElement).disabled = true));
      act(a);
    });
    moves.append(b);
  }
  main.append(moves);
  say(view["status"] !== "playing" ? t("waiting") : legal.length ? t("yourmove") : t("theirs"));
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
      verdict.textContent = `${t(mapped)} — ${v.textContent ?? ""}`;
    }, 500);
  });
  end.append(frame);
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
    verdict.textContent = `${t("fail")}: ${String(e)}`;
  }
  end.append(el("p", {}, download("transcript.json", text), " · ", download("seat.json", JSON.stringify(seat.export(), null, 1))));
  if (ok) verifyHere(end, verdict, text, seat);
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
  const qc = new Client(location.origin, { storage });
  const terms: { game?: string; ruleset?: Obj } = {};
  if (game) terms.game = game;
  if (ruleset) terms.ruleset = ruleset;
  const seat = await qc.seat(matchId, mine, token, { terms });
  say(t("waiting"));
  await seat.resendPending();
  await seat.commit();
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
    render(view, mine, (a) => {
      acting = true;
      seat
        .act(a, { retryStale: true })
        .then((out) => {
          const v = out.state as unknown as Obj;
          if (v["status"] === "finished") force = true;
          else draw(v);
        })
        .catch((e: unknown) => {
          say(`${t("error")}: ${String(e)}`);
          force = true; // drawn again: a refused move leaves the buttons live
        })
        .finally(() => {
          acting = false;
          poke();
        });
    });
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
    if (view["status"] === "finished") {
      over = true;
      render(view, mine, () => undefined);
      await finish(seat);
      return;
    }
    draw(view);
  }
}

async function newTable(game: string, ruleset: string | null, friend: boolean): Promise<void> {
  let rules: unknown = undefined;
  if (ruleset) rules = JSON.parse(ruleset);
  if (rules !== undefined && (typeof rules !== "object" || rules === null || Array.isArray(rules))) {
    throw new Error("the ruleset is not a JSON object");
  }
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
    await newTable(game, params.get("ruleset"), params.get("friend") === "1");
  } else {
    lobby();
  }
}

boot().catch((e: unknown) => {
  say(`${t("error")}: ${e instanceof Error ? e.message : String(e)}`);
  status.setAttribute("data-error", "1");
});

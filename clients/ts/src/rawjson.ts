/** JSON read as written, and its canonical text (fairness-v1 §2, fairness-v2 §1): Python's
 * ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` byte for
 * byte, computed from the text, never from a JavaScript number (so a float keeps Python's
 * repr and an integer beyond 2^53 its digits). The verify page's, its log row's and (its
 * strings and key order) clients/ts canonical's: one implementation. */

/** A parsed JSON value: object (keys in order, a repeated key keeps the last value, as
 * Python's json does), array, string, number (its text) or literal. */
export type RawNode =
  | { t: "o"; m: Map<string, RawNode> }
  | { t: "a"; a: RawNode[] }
  | { t: "s"; v: string }
  | { t: "n"; v: string }
  | { t: "l"; v: "true" | "false" | "null" };

import { LONE_SURROGATE } from "./bytes.js";

export { LONE_SURROGATE };

/** ``text`` parsed as JSON into a tree (SyntaxError naming the character where it fails). */
export function parseRaw(text: string): RawNode {
  let i = 0;
  const n = text.length;
  const fail = (msg: string): never => {
    throw new SyntaxError(msg + " at character " + i);
  };
  const ws = (): void => {
    while (i < n && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  const NUM = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  const str = (): string => {
    const start = i;
    i++;
    while (i < n && text[i] !== '"') {
      if (text[i] === "\\") i++;
      i++;
    }
    if (i >= n) fail("unterminated string");
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  // an object's or array's items, each read by one(), up to its closing bracket
  const items = (close: string, one: () => void): void => {
    i++;
    ws();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      one();
      ws();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === close) {
        i++;
        return;
      }
      fail("expected , or " + close);
    }
  };
  const value = (depth: number): RawNode => {
    if (depth > 500) fail("nested too deeply");
    ws();
    const c = text[i];
    if (c === "{") {
      const m = new Map<string, RawNode>();
      items("}", () => {
        ws();
        if (text[i] !== '"') fail("expected a key");
        const k = str();
        ws();
        if (text[i] !== ":") fail("expected :");
        i++;
        m.set(k, value(depth + 1)); // a repeated key keeps the last value, as Python does
      });
      return { t: "o", m };
    }
    if (c === "[") {
      const a: RawNode[] = [];
      items("]", () => {
        a.push(value(depth + 1));
      });
      return { t: "a", a };
    }
    if (c === '"') return { t: "s", v: str() };
    for (const lit of ["true", "false", "null"] as const) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return { t: "l", v: lit };
      }
    }
    NUM.lastIndex = i;
    const mm = NUM.exec(text);
    if (mm) {
      i += mm[0].length;
      return { t: "n", v: mm[0] };
    }
    return fail("unexpected " + (i < n ? JSON.stringify(text[i]) : "end of text"));
  };
  const v = value(0);
  ws();
  if (i !== n) fail("extra text after the JSON value");
  return v;
}

/** Python's order of str keys: by code point (not JavaScript's UTF-16 units). */
export function cmpCodePoints(x: string, y: string): number {
  const a = Array.from(x);
  const b = Array.from(y);
  const l = Math.min(a.length, b.length);
  for (let k = 0; k < l; k++) {
    const p = a[k]!.codePointAt(0)!;
    const q = b[k]!.codePointAt(0)!;
    if (p !== q) return p - q;
  }
  return a.length - b.length;
}

const ESC: { [c: string]: string } = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };

/** A string as Python's json writes it with ensure_ascii=False; a lone surrogate is refused. */
export function pyStr(s: string): string {
  if (LONE_SURROGATE.test(s)) throw new Error("a string holds a lone surrogate, which UTF-8 cannot encode");
  return '"' + s.replace(/[\x00-\x1f"\\]/g, (c) => ESC[c] ?? "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4)) + '"';
}

/** Python's repr of a float. */
export function pyFloatRepr(x: number): string {
  if (!isFinite(x)) throw new Error("a number is out of range (Python would refuse to write it)");
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const e = Math.abs(x).toExponential(); // shortest round-trip digits, as Python's repr
  const [mant, exp] = e.split("e") as [string, string];
  const digits = mant.replace(".", "");
  const decpt = parseInt(exp, 10) + 1;
  if (decpt <= -4 || decpt > 16) {
    const ex = decpt - 1;
    return (
      sign + digits[0] + (digits.length > 1 ? "." + digits.slice(1) : "") + "e" + (ex < 0 ? "-" : "+") + String(Math.abs(ex)).padStart(2, "0")
    );
  }
  if (decpt <= 0) return sign + "0." + "0".repeat(-decpt) + digits;
  if (decpt >= digits.length) return sign + digits + "0".repeat(decpt - digits.length) + ".0";
  return sign + digits.slice(0, decpt) + "." + digits.slice(decpt);
}

function pyNum(raw: string): string {
  if (/^-?[0-9]+$/.test(raw)) return BigInt(raw).toString();
  return pyFloatRepr(Number(raw));
}

/** The canonical text of a tree (``skipTopKey``: a key of the top object left out, e.g. the
 * signature of a signed record). */
export function serialize(node: RawNode, skipTopKey?: string): string {
  switch (node.t) {
    case "o": {
      const keys = Array.from(node.m.keys()).filter((k) => k !== skipTopKey);
      keys.sort(cmpCodePoints);
      return "{" + keys.map((k) => pyStr(k) + ":" + serialize(node.m.get(k)!)).join(",") + "}";
    }
    case "a":
      return "[" + node.a.map((x) => serialize(x)).join(",") + "]";
    case "s":
      return pyStr(node.v);
    case "n":
      return pyNum(node.v);
    default:
      return node.v;
  }
}

/** The canonical text of JSON ``text``. */
export function canonicalJson(text: string): string {
  return serialize(parseRaw(text));
}

/** Member ``k`` of an object node (undefined for anything else). */
export function getNode(n: RawNode | undefined, k: string): RawNode | undefined {
  return n && n.t === "o" ? n.m.get(k) : undefined;
}

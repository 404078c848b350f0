/** Bytes, hex, base64 and UTF-8 helpers (the same in browsers and Node). */

import { concatBytes } from "@noble/hashes/utils.js";

export { bytesToHex as toHex, concatBytes as concat } from "@noble/hashes/utils.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

// a UTF-16 surrogate without its pair: no Unicode text (Python refuses to encode it; the
// platform's encoder would write U+FFFD instead, and hash other bytes than the text's)
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** ``text`` as UTF-8; a lone surrogate is refused. */
export function utf8(text: string): Uint8Array {
  if (LONE_SURROGATE.test(text)) throw new ProtocolError("string is not valid Unicode (lone surrogate)");
  return encoder.encode(text);
}

export function fromUtf8(data: Uint8Array): string {
  return decoder.decode(data);
}

/** ``nbytes`` bytes written as lowercase hex (any length when ``nbytes`` is undefined). */
export function fromHex(text: string, nbytes?: number, what = "a value"): Uint8Array {
  if (
    typeof text !== "string" ||
    text.length % 2 !== 0 ||
    (nbytes !== undefined && text.length !== 2 * nbytes) ||
    !/^[0-9a-f]*$/.test(text)
  ) {
    const n = nbytes === undefined ? "" : `${2 * nbytes} `;
    throw new ProtocolError(`${what} must be ${n}lowercase hex characters`);
  }
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

export function toBase64(data: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < data.length; i += 3) {
    const n = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!;
  }
  const rest = data.length - i;
  if (rest === 1) {
    const n = data[i]! << 16;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + "==";
  } else if (rest === 2) {
    const n = (data[i]! << 16) | (data[i + 1]! << 8);
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + "=";
  }
  return out;
}

/** Strict standard base64 with padding (canonical: re-encoding gives the same text). */
export function fromBase64(text: string, what = "a value"): Uint8Array {
  if (typeof text !== "string" || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw new ProtocolError(`${what} is not base64`);
  }
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const c = text[i + j]!;
      n = (n << 6) | (c === "=" ? 0 : B64.indexOf(c));
    }
    if (o < out.length) out[o++] = (n >> 16) & 255;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  if (toBase64(out) !== text) throw new ProtocolError(`${what} is not canonical base64`);
  return out;
}

export function u32be(n: number): Uint8Array {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new ProtocolError(`${n} is not a u32`);
  return new Uint8Array([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
}

/** u32be(len(data)) || data. */
export function lp(data: Uint8Array): Uint8Array {
  return concatBytes(u32be(data.length), data);
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}

/** Something the client computed or checked does not hold (a one-line reason). */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

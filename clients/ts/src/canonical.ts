/** Canonical JSON (fairness-v2.md §1): RFC 8785 restricted to ASCII keys, integers within
 * ±(2^53−1) and no lone surrogates — under which it is byte for byte Python's
 * ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``. */

import { ProtocolError, utf8 } from "./bytes.js";
import { cmpCodePoints, pyStr } from "./rawjson.js";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function str(s: string): string {
  // the verify page's writer of Python's strings (src/rawjson.ts); lone surrogates refused
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s)) {
    throw new ProtocolError("canonical JSON holds no lone surrogate");
  }
  return pyStr(s);
}

function enc(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isSafeInteger(value)) {
        throw new ProtocolError(`canonical JSON numbers are integers within ±(2^53−1), not ${value}`);
      }
      return String(value);
    case "string":
      return str(value);
    case "object": {
      if (Array.isArray(value)) return "[" + value.map(enc).join(",") + "]";
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined);
      for (const k of keys) {
        if (!/^[\x00-\x7f]*$/.test(k)) throw new ProtocolError(`canonical JSON keys are ASCII, not ${k}`);
      }
      keys.sort(cmpCodePoints);
      return "{" + keys.map((k) => str(k) + ":" + enc(obj[k])).join(",") + "}";
    }
    default:
      throw new ProtocolError(`canonical JSON has no ${typeof value}`);
  }
}

/** The canonical text of a JSON value (keys sorted, no spaces). */
export function canonical(value: unknown): string {
  return enc(value);
}

/** canonical(value) as UTF-8 bytes. */
export function canonicalBytes(value: unknown): Uint8Array {
  return utf8(enc(value));
}

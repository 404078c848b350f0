/** Signed records' times (verify_cli.keys.record_time) and the rule for a record signed by a
 * retired key (issue 49): the verify page's and its log row's, one implementation. */

type Rec = { [key: string]: unknown };

const TIME_OF: { [type: string]: string } = {
  receipt: "at",
  lock: "locked_at",
  reveal: "ended_at",
  tree_head: "timestamp",
};

/** The time a signed record names as its own, as ``[field, value]``: a receipt's or a signed
 * head's at, a lock's locked_at, a reveal record's and a qahwa-fair/2 or /3 transcript's
 * ended_at, else the first of timestamp, ended_at, locked_at, created_at. */
export function recordTime(doc: Rec): [string, unknown] {
  let name = typeof doc["type"] === "string" ? TIME_OF[doc["type"]] : undefined;
  if (!name && Array.isArray(doc["events"]) && (doc["protocol"] === "qahwa-fair/2" || doc["protocol"] === "qahwa-fair/3")) {
    name = "ended_at";
  }
  if (!name) {
    name = ["timestamp", "ended_at", "locked_at", "created_at"].find((n) => doc[n] !== undefined && doc[n] !== null) ?? "timestamp";
  }
  return [name, doc[name]];
}

/** Milliseconds since the epoch of an RFC 3339 time, or null when ``v`` is not one. */
export function rfc3339(v: unknown): number | null {
  if (typeof v !== "string" || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v)) return null;
  const t = Date.parse(v);
  return isNaN(t) ? null : t;
}

/** Why a record signed by a key retired at ``retiredAt`` does not count (null: it does): it
 * must name its own time before retiredAt, and no event of it be stamped at or after it. */
export function retiredProblem(doc: Rec, retiredAt: unknown): string | null {
  if (typeof retiredAt !== "string") return null;
  const limit = rfc3339(retiredAt);
  if (limit === null) return "its retired_at is not a time";
  const [field, value] = recordTime(doc);
  const t = rfc3339(value);
  if (t === null) return "the record names no time of its own (" + field + ")";
  if (t >= limit) return "the record was signed at " + String(value) + " (" + field + "), at or after that";
  const evs = Array.isArray(doc["events"]) ? (doc["events"] as unknown[]) : [];
  for (let i = 0; i < evs.length; i++) {
    const ev = evs[i];
    const at = ev !== null && typeof ev === "object" ? rfc3339((ev as Rec)["at"]) : null;
    if (at !== null && at >= limit) return "its event " + i + " is stamped " + String((ev as Rec)["at"]) + ", at or after that";
  }
  return null;
}

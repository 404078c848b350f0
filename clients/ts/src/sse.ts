/** A small server-sent events parser (the subset qahwa sends: ``id``, ``event``, ``data``). */

export interface SseMessage {
  event: string;
  data: string;
  id: string | null;
}

export class SseParser {
  private buf = "";
  private event: string | null = null;
  private data: string[] = [];
  private id: string | null = null;

  /** Feed decoded text; returns the complete messages it finished. */
  feed(text: string): SseMessage[] {
    this.buf += text;
    const out: SseMessage[] = [];
    for (;;) {
      const nl = this.buf.search(/\r\n|\n|\r/);
      if (nl < 0) break;
      const len = this.buf.startsWith("\r\n", nl) ? 2 : 1;
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + len);
      const msg = this.line(line);
      if (msg !== null) out.push(msg);
    }
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === "") {
      if (this.data.length === 0) {
        this.event = null;
        return null;
      }
      const msg = { event: this.event ?? "message", data: this.data.join("\n"), id: this.id };
      this.event = null;
      this.data = [];
      return msg;
    }
    if (line.startsWith(":")) return null;
    const c = line.indexOf(":");
    const name = c < 0 ? line : line.slice(0, c);
    let value = c < 0 ? "" : line.slice(c + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "event") this.event = value;
    else if (name === "data") this.data.push(value);
    else if (name === "id") this.id = value;
    return null;
  }
}

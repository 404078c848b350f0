/** Node only: a seat storage in files (one JSON file per key, written atomically). */
import { mkdir, open, readFile, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { SeatStorage } from "./storage.js";

function fileName(key: string): string {
  return encodeURIComponent(key) + ".json";
}

export class FileStorage implements SeatStorage {
  constructor(readonly dir: string) {}

  async get(key: string): Promise<string | null> {
    try {
      return await readFile(join(this.dir, fileName(key)), "utf8");
    } catch (exc) {
      if (exc instanceof Error && "code" in exc && exc.code === "ENOENT") return null;
      throw exc;
    }
  }

  /** Written to a temporary file, flushed to disk, then renamed over the old one. */
  async set(key: string, value: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, fileName(key));
    const tmp = `${path}.${process.pid}.${Math.random().toString(16).slice(2)}.tmp`;
    const fh = await open(tmp, "w", 0o600);
    try {
      await fh.writeFile(value, "utf8");
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  }

  async delete(key: string): Promise<void> {
    await rm(join(this.dir, fileName(key)), { force: true });
  }

  async keys(prefix: string): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    return names
      .filter((n) => n.endsWith(".json"))
      .map((n) => decodeURIComponent(n.slice(0, -5)))
      .filter((k) => k.startsWith(prefix))
      .sort();
  }
}

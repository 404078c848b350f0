/** Where a seat keeps its secrets and what it holds (fairness-v2.md §3a.1, §3a.5), so that a
 * reload or a crash in the middle of a match resumes the seat. Pluggable: memory, IndexedDB
 * in a browser, a file in Node (``@qahwa/client/node``'s ``FileStorage``), or your own. */

export interface SeatStorage {
  get(key: string): Promise<string | null>;
  /** Must be durable when it resolves: the seat sends nothing that depends on it before. */
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  keys(prefix: string): Promise<string[]>;
}

export class MemoryStorage implements SeatStorage {
  readonly map = new Map<string, string>();
  async get(key: string): Promise<string | null> {
    return this.map.get(key) ?? null;
  }
  async set(key: string, value: string): Promise<void> {
    this.map.set(key, value);
  }
  async delete(key: string): Promise<void> {
    this.map.delete(key);
  }
  async keys(prefix: string): Promise<string[]> {
    return [...this.map.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
}

function done<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error("IndexedDB request failed"));
  });
}

/** A browser's IndexedDB (one object store ``seats`` in database ``name``). */
export class IndexedDBStorage implements SeatStorage {
  private db: Promise<IDBDatabase> | null = null;
  constructor(readonly name = "qahwa-seats") {}

  private open(): Promise<IDBDatabase> {
    if (this.db === null) {
      const req = indexedDB.open(this.name, 1);
      req.onupgradeneeded = () => {
        req.result.createObjectStore("seats");
      };
      this.db = done(req);
    }
    return this.db;
  }

  private async store(mode: IDBTransactionMode): Promise<{ st: IDBObjectStore; tx: IDBTransaction }> {
    const tx = (await this.open()).transaction("seats", mode, { durability: "strict" });
    return { st: tx.objectStore("seats"), tx };
  }

  async get(key: string): Promise<string | null> {
    const { st } = await this.store("readonly");
    const v: unknown = await done(st.get(key));
    return typeof v === "string" ? v : null;
  }

  async set(key: string, value: string): Promise<void> {
    const { st, tx } = await this.store("readwrite");
    st.put(value, key);
    await new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error ?? new Error("IndexedDB write failed"));
    });
  }

  async delete(key: string): Promise<void> {
    const { st } = await this.store("readwrite");
    await done(st.delete(key));
  }

  async keys(prefix: string): Promise<string[]> {
    const { st } = await this.store("readonly");
    const all = await done(st.getAllKeys());
    return all.filter((k): k is string => typeof k === "string" && k.startsWith(prefix)).sort();
  }
}

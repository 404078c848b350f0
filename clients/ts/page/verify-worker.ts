// The verify page's rules replay (qahwa_page/static/verify.html), bundled into
// qahwa_page/static/verify-worker.js by `make verify-js`: a module Web Worker that runs
// this checkout's own verify_cli.replay_core on Pyodide, so the page never freezes.
// Everything comes from the serving origin: the runtime at /static/pyodide/<version>/ and the
// sources zip named in /static/qahwa-py.json (its SHA-256 is checked before use). Served with
// the CSP "script-src 'self' 'wasm-unsafe-eval'" (service/pyodide.py): no eval of any kind.
//
// Sealed deals (qahwa-fair/3): for such a transcript only, the worker first loads the page's
// verifier (/static/sealed-verify.js: clients/ts's src/sealed cryptography over the locked
// @noble/curves + @noble/hashes, one bundle), publishes its jsonBackend() as qahwaSealed and
// makes it the Python's sealed backend (verify_cli/sealed_js.py): rbcl does not exist here.
//
// Messages in:  {type: 'init', manifest}  then  {type: 'verify', id, text}
//               {type: 'stats', id, text, seat?}: verify_cli.stats.browser_stats (verify stats)
// Messages out: {type: 'progress', id?, stage: 'runtime'|'sources'|'replay', done, total}
//               {type: 'ready', python, pyodide, cryptography, ms: {runtime, sources}}
//               {type: 'failed', error}
//               {type: 'result', id, report, ms, sealed?: {backend, ms}}  {type: 'stats', id, stats}
//               {type: 'error', id, error}
// the worker's global scope (this file is type-checked with the DOM's types)
const scope: any = self;
let ready: Promise<void> | null = null;
let report: any = null;
let py: any = null;
let stats: any = null;

function post(m: any): void { scope.postMessage(m); }

function hex(buf: ArrayBuffer): string {
  return Array.from(new Uint8Array(buf), (b: number) => b.toString(16).padStart(2, '0')).join('');
}

// Starting Python is most of the time a cold page takes. After the first start the worker
// keeps a memory snapshot of the fresh interpreter (Pyodide's own, taken before any of this
// project's code is loaded) in the browser's CacheStorage, under the runtime's version; later
// loads restore it instead of booting again. The project's sources are always loaded anew.
const SNAPSHOT_CACHE = 'qahwa-pyodide-snapshot';
const PRELOAD = 'import json, re, hashlib, hmac, struct, dataclasses, typing, itertools, collections, abc, ' +
  'importlib, os, pathlib, random, secrets, shutil, zipfile';

async function startPython(mod: any, rt: any): Promise<any> {
  const indexURL = new URL(rt.url, self.location.href).href;
  const key = new URL(rt.url + 'interpreter-snapshot-1', self.location.href).href;
  const quiet = { indexURL: indexURL, stdout: () => {}, stderr: () => {} };
  let cache: Cache | null = null;
  try { cache = await caches.open(SNAPSHOT_CACHE); } catch (e) { cache = null; }
  if (cache) {
    try {
      const hit = await cache.match(key);
      if (hit) {
        const snap = new Uint8Array(await hit.arrayBuffer());
        const py = await mod.loadPyodide(Object.assign({ _loadSnapshot: snap }, quiet));
        snapshotUsed = true;
        return py;
      }
    } catch (e) {
      try { await cache.delete(key); } catch (e2) { /* ignore */ }
    }
  }
  const py = await mod.loadPyodide(Object.assign({ _makeSnapshot: !!cache }, quiet));
  py.runPython(PRELOAD);
  if (cache) {
    try {
      await cache.put(key, new Response(py.makeMemorySnapshot()));
    } catch (e) { /* no room: the next load boots again */ }
  }
  return py;
}

let snapshotUsed = false;

async function init(manifest: any): Promise<void> {
  const t0 = performance.now(), ms: any = {};
  const rt = manifest.runtime;
  post({ type: 'progress', stage: 'runtime', done: 0, total: 3 });
  const mod = await import(new URL(rt.url + 'pyodide.mjs', self.location.href).href);
  const srcP = fetch(new URL(manifest.sources.url, self.location.href).href,
    { credentials: 'omit' }).then(async (r) => {
    if (!r.ok) throw new Error('the sources answered HTTP ' + r.status);
    return r.arrayBuffer();
  });
  const pyodide = await startPython(mod, rt);
  py = pyodide;
  ms.runtime = performance.now() - t0;
  post({ type: 'progress', stage: 'sources', done: 1, total: 3 });
  const buf = await srcP;
  const digest = hex(await crypto.subtle.digest('SHA-256', buf));
  if (digest !== manifest.sources.sha256) {
    throw new Error('the sources zip does not have the announced SHA-256');
  }
  pyodide.unpackArchive(buf, 'zip', { extractDir: '/home/pyodide/qahwa' });
  post({ type: 'progress', stage: 'sources', done: 2, total: 3 });
  pyodide.runPython("import sys\nsys.path.insert(0, '/home/pyodide/qahwa')");
  const core = pyodide.pyimport(manifest.module || 'verify_cli.replay_core');
  report = core.browser_report;
  ms.sources = performance.now() - t0 - ms.runtime;
  const info = JSON.parse(pyodide.runPython(
    "import json, sys\njson.dumps({'python': sys.version.split()[0], " +
    "'cryptography': any(m.split('.')[0] == 'cryptography' for m in sys.modules)})"));
  post({ type: 'ready', python: info.python, pyodide: pyodide.version, cryptography: info.cryptography,
    ms: ms, snapshot: snapshotUsed });
}

// qahwa-fair/3's verifier, loaded once, the first time a sealed transcript comes (a
// transcript that only mentions the protocol somewhere loads it too: harmless).
const SEALED = /"protocol"\s*:\s*"qahwa-fair\/3"/;
let sealedReady: Promise<void> | null = null;
let sealedMs = 0;

function loadSealed(): Promise<void> {
  if (!sealedReady) {
    sealedReady = (async () => {
      const t0 = performance.now();
      const at = (name: string) => new URL('/static/' + name, self.location.href).href;
      const sv = await import(at('sealed-verify.js'));
      scope.qahwaSealed = sv.jsonBackend();
      py.pyimport('verify_cli.sealed_js').install();
      sealedMs = performance.now() - t0;
    })();
    sealedReady.catch(() => { sealedReady = null; });
  }
  return sealedReady as Promise<void>;
}

// Once Python is ready: post what work() returns, or {type: 'error'} for message m.
async function answer(m: any, work: () => any): Promise<void> {
  try {
    if (!ready) throw new Error('not initialised');
    await ready;
    if (typeof m.text === 'string' && SEALED.test(m.text)) await loadSealed();
    post(work());
  } catch (err) {
    post({ type: 'error', id: m.id, error: String((err && err.message) || err) });
  }
}

scope.onmessage = async (e: MessageEvent) => {
  const m = e.data || {};
  if (m.type === 'init') {
    if (!ready) {
      ready = init(m.manifest);
      ready.catch((err: any) => post({ type: 'failed', error: String((err && err.message) || err) }));
    }
    return;
  }
  if (m.type === 'verify') {
    answer(m, () => {
      const t0 = performance.now();
      const out = report(m.text, (done: number, total: number) => {
        post({ type: 'progress', id: m.id, stage: 'replay', done: done, total: total });
      });
      const res: any = { type: 'result', id: m.id, report: JSON.parse(out), ms: performance.now() - t0 };
      if (sealedReady) res.sealed = { backend: 'sealed-verify.js', ms: sealedMs };
      return res;
    });
  }
  if (m.type === 'stats') {
    answer(m, () => {
      if (!stats) stats = py.pyimport('verify_cli.stats').browser_stats;
      const out = Number.isInteger(m.seat) ? stats(m.text, m.seat) : stats(m.text);
      return { type: 'stats', id: m.id, stats: JSON.parse(out) };
    });
  }
};

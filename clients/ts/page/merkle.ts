/* The transparency-log check of the verify page (bundled into qahwa_page/static/merkle.js by
 * `make verify-js`), computed in the browser: the Merkle proofs, checkpoints, tlog-proofs,
 * canonical JSON and Ed25519 of clients/ts/src, one implementation of each.
 *
 * RFC 6962 / RFC 9162 Merkle hashes: leaf = SHA-256(0x00 || leaf), node = SHA-256(0x01 ||
 * left || right). For a transcript with a log_index, fetch /v1/log/proof?index=i from the
 * transcript's server, check that the leaf is this match's commitment record signed by the
 * server's key, that the audit path leads to the signed head's root (RFC 9162 §2.1.3.2),
 * and that the head is consistent (RFC 9162 §2.1.4.2, /v1/log/consistency) with the newest
 * head this browser saw before from that key (kept in localStorage). A head that is not an
 * extension of it is a fork: the row fails and both heads are kept in localStorage
 * ("qahwa.log.evidence").
 *
 * The page calls window.qahwaLog.attach(tbody, transcript, base, keys) after drawing its
 * table of checks; this adds the row <tr data-check="log">. No eval: the page loads this file
 * with <script src> (inlined when served, qahwa_page.page_html).
 */
import { fromHex as hexBytes, toHex, equalBytes as same } from "../src/bytes.js";
import { sha256, verifyEd25519 } from "../src/crypto.js";
import { checkConsistency, leafHash, nodeHash, rootFromInclusion } from "../src/fair.js";
import { openCheckpoint, parseTlogProof, parseVkey, splitNote } from "../src/note.js";
import { canonicalJson as canonicalText } from "../src/rawjson.js";
import { retiredProblem } from "../src/verify/records.js";

  var T = {
    en: {
      label: 'Transparency log',
      checking: 'checking the log\u2026',
      ok: 'included at index {i} of tree size {n} (head signed by key {kid}); {rel}',
      first: 'first head seen from this key (remembered in this browser)',
      same: 'the same head as seen before',
      consistent: 'consistent with the head of size {m} seen before',
      older: 'the head of size {m} seen before is consistent with it',
      no_index: 'not checked: the transcript has no log_index',
      ok_reveal: 'included at index {i} of tree size {n} (head signed by key {kid}); {rel}; the match\u2019s reveal record (index {j}) signs this transcript: its chain head (so its {e} events), result, ended_at and SHA-256',
      reveal_pending: 'NOT CHECKED YET: the lock is included at index {i}, but the server\u2019s log gives no reveal record of match {id} ({why}): nothing shows yet that this transcript runs to the match\u2019s real end (fairness-v2 \u00a78)',
      reveal_bad: 'REVEAL: {why} (fairness-v2 \u00a78)',
      downgrade: 'DOWNGRADE: the server\u2019s log holds match {id} as a {found} {type} (index {i}), but the transcript is {given} (fairness-v2 \u00a79)',
      absent: 'DOWNGRADE: match {id} is not in the server\u2019s log (fairness-v2 \u00a79)',
      no_server: 'not checked: the page does not know the transcript\u2019s server (give the operator\u2019s URL under \u201cOperator\u2019s server\u201d)',
      no_key: 'not checked: no public key to check the log\u2019s signatures',
      unsupported: 'not checked: this browser cannot check Ed25519 signatures',
      fetch: 'the server gives no inclusion proof of log index {i}: {why}',
      tlog_ok: 'included at index {i} under the checkpoint of size {n} of {origin}, signed by the log key {kid} (from the saved tlog-proof; {w} other signature(s) on it, witnesses not checked here: verify --policy checks a quorum)',
      tlog_no_key: 'not checked: the saved tlog-proof needs the log\u2019s key: give the operator\u2019s server, or paste the log key (vkey)',
      bad: '{why}',
      fork: 'LOG FORK: {why} (both heads kept in this browser as evidence)'
    },
    ar: {
      label: 'سجل الشفافية',
      checking: 'جارٍ فحص السجل\u2026',
      ok: 'مُدرَج عند الموضع {i} من شجرة حجمها {n} (رأس الشجرة موقَّع بالمفتاح {kid})؛ {rel}',
      first: 'أول رأس يُرى من هذا المفتاح (حُفظ في هذا المتصفح)',
      same: 'الرأس نفسه الذي رُئي من قبل',
      consistent: 'متّسق مع الرأس ذي الحجم {m} الذي رُئي من قبل',
      older: 'الرأس ذو الحجم {m} الذي رُئي من قبل متّسق معه',
      no_index: 'لم يُفحص: ليس في السجل المنشور log_index',
      ok_reveal: 'مُدرج في الموضع {i} من شجرة حجمها {n} (رأس موقَّع بالمفتاح {kid})؛ {rel}؛ سجل الكشف للمباراة (الموضع {j}) يوقّع هذا السجل: رأس السلسلة ({e} حدثًا) والنتيجة وended_at وSHA-256',
      reveal_pending: 'لم يُفحص بعد: القفل مُدرج في الموضع {i}، لكن سجل الخادم لا يعطي سجل كشف للمباراة {id} ({why}) (fairness-v2 \u00a78)',
      reveal_bad: 'سجل الكشف: {why} (fairness-v2 \u00a78)',
      downgrade: 'خفض البروتوكول: سجل الخادم يحمل المباراة {id} بصفتها {type} من {found} (الموضع {i})، أما السجل المقدَّم فهو {given} (fairness-v2 \u00a79)',
      absent: 'خفض البروتوكول: المباراة {id} ليست في سجل الخادم (fairness-v2 \u00a79)',
      no_server: 'لم يُفحص: الصفحة لا تعرف خادم السجل (أدخل عنوان المشغّل في «خادم المشغّل»)',
      no_key: 'لم يُفحص: لا يوجد مفتاح عام لفحص توقيعات السجل',
      unsupported: 'لم يُفحص: هذا المتصفح لا يستطيع فحص توقيعات Ed25519',
      fetch: 'الخادم لا يعطي إثبات إدراج للموضع {i}: {why}',
      tlog_ok: 'مُدرَج عند الموضع {i} تحت نقطة التحقق ذات الحجم {n} من {origin}، موقَّعة بمفتاح السجل {kid} (من ملف tlog-proof المحفوظ؛ {w} توقيع آخر عليها، الشهود لا يُفحصون هنا: verify --policy يفحص النصاب)',
      tlog_no_key: 'لم يُفحص: ملف tlog-proof المحفوظ يحتاج مفتاح السجل: أدخل خادم المشغّل، أو ألصق مفتاح السجل (vkey)',
      bad: '{why}',
      fork: 'تفرّع في السجل: {why} (حُفظ الرأسان في هذا المتصفح دليلًا)'
    },
    fa: {
      label: 'دفتر شفافیت',
      checking: 'در حال بررسی دفتر\u2026',
      ok: 'در جایگاه {i} از درختی به اندازهٔ {n} ثبت شده است (سرِ درخت با کلید {kid} امضا شده)؛ {rel}',
      first: 'نخستین سرِ درختی که از این کلید دیده شد (در این مرورگر نگه داشته شد)',
      same: 'همان سرِ درختی که پیش‌تر دیده شد',
      consistent: 'با سرِ درخت به اندازهٔ {m} که پیش‌تر دیده شد سازگار است',
      older: 'سرِ درخت به اندازهٔ {m} که پیش‌تر دیده شد با آن سازگار است',
      no_index: 'بررسی نشد: رونوشت log_index ندارد',
      ok_reveal: 'در جایگاه {i} از درختی به اندازهٔ {n} ثبت شده (سرِ درخت با کلید {kid} امضا شده)؛ {rel}؛ رکورد آشکارسازی بازی (جایگاه {j}) این رونوشت را امضا می‌کند: سرِ زنجیره ({e} رویداد)، نتیجه، ended_at و SHA-256',
      reveal_pending: 'هنوز بررسی نشد: قفل در جایگاه {i} ثبت شده، اما دفتر سرور رکورد آشکارسازی بازی {id} را نمی‌دهد ({why}) (fairness-v2 \u00a78)',
      reveal_bad: 'رکورد آشکارسازی: {why} (fairness-v2 \u00a78)',
      downgrade: 'تنزل پروتکل: دفتر سرور بازی {id} را به صورت {type} از {found} نگه می‌دارد (جایگاه {i})، اما رونوشت {given} است (fairness-v2 \u00a79)',
      absent: 'تنزل پروتکل: بازی {id} در دفتر سرور نیست (fairness-v2 \u00a79)',
      no_server: 'بررسی نشد: صفحه سرورِ رونوشت را نمی‌شناسد (نشانی گرداننده را در «سرور گرداننده» بدهید)',
      no_key: 'بررسی نشد: کلید عمومی‌ای برای بررسی امضاهای دفتر نیست',
      unsupported: 'بررسی نشد: این مرورگر نمی‌تواند امضای Ed25519 را بررسی کند',
      fetch: 'سرور اثبات ثبتِ جایگاه {i} را نمی‌دهد: {why}',
      tlog_ok: 'در جایگاه {i} زیر checkpoint به اندازهٔ {n} از {origin} ثبت شده، با کلید دفتر {kid} امضا شده (از tlog-proof ذخیره‌شده؛ {w} امضای دیگر روی آن، گواه‌ها اینجا بررسی نمی‌شوند: verify --policy حد نصاب را بررسی می‌کند)',
      tlog_no_key: 'بررسی نشد: tlog-proof ذخیره‌شده به کلید دفتر نیاز دارد: سرور گرداننده را بدهید، یا کلید دفتر (vkey) را بچسبانید',
      bad: '{why}',
      fork: 'انشعاب در دفتر: {why} (هر دو سرِ درخت در این مرورگر به عنوان مدرک نگه داشته شد)'
    }
  };

  function lang() {
    var l = (document.documentElement.lang || 'en').toLowerCase().split('-')[0];
    return T[l] ? l : 'en';
  }
  function t(key, params?) {
    var s = T[lang()][key] || T.en[key] || key;
    return s.replace(/\{(\w+)\}/g, function (m, name) {
      var v = params && params[name];
      if (v && typeof v === 'object' && v.key) return t(v.key, v.params);
      return v === undefined ? m : String(v);
    });
  }
  var enc = new TextEncoder();
  function fromHex(h, what) {
    if (typeof h !== 'string' || !/^[0-9a-f]{64}$/.test(h)) throw new Error(what + ' is not a 32-byte hex hash');
    return hexBytes(h);
  }
  var subtle = globalThis.crypto && globalThis.crypto.subtle;
  // RFC 9162 §2.1.4.2 (clients/ts checkConsistency): does proof show that the tree of size
  // second extends that of first?
  async function consistent(first, second, firstRoot, secondRoot, proof) {
    try { await checkConsistency(first, second, firstRoot, secondRoot, proof); return true; } catch (e) { return false; }
  }
  // Canonical JSON of a parsed log record: the page's (clients/ts/src/rawjson.ts), on
  // JSON.stringify's text (exact for the strings, safe integers, booleans and nulls of log
  // records; any other number is refused)
  function canonicalJson(v) {
    (function check(x) {
      if (typeof x === 'number' && !Number.isSafeInteger(x)) throw new Error('a log record holds a number that is not a safe integer');
      if (x && typeof x === 'object') Object.keys(x).forEach(function (k) { check(x[k]); });
    })(v);
    return canonicalText(JSON.stringify(v));
  }

  // keys: the page's {pasted: b64, fetched: [{key_id, public_key}]}. 'valid', 'invalid',
  // 'nokey' or 'retired'.
  async function checkSigned(doc, keys) {
    var sig = doc && doc.signature;
    if (!sig || typeof sig !== 'object' || typeof sig.value !== 'string') return 'invalid';
    var pub = null, retired = null;
    if (keys && keys.pasted) pub = keys.pasted;
    else if (keys && Array.isArray(keys.fetched)) {
      keys.fetched.forEach(function (k) { if (k && k.key_id === sig.key_id) { pub = k.public_key; retired = k.retired_at; } });
    }
    if (!pub) return 'nokey';
    var body: any = {};
    Object.keys(doc).forEach(function (k) { if (k !== 'signature') body[k] = doc[k]; });
    var ok;
    try {
      ok = await verifyEd25519(pub, sig.value, enc.encode(canonicalJson(body)));
    } catch (e) {
      return 'invalid';
    }
    if (ok && retired && retiredProblem(doc, retired)) return 'retired';
    return ok ? 'valid' : 'invalid';
  }

  class Skip { key: string; constructor(key) { this.key = key; } }
  function retiredAtOf(doc, keys) {
    var kid = doc && doc.signature && doc.signature.key_id, at = null;
    (keys && Array.isArray(keys.fetched) ? keys.fetched : []).forEach(function (k) { if (k && k.key_id === kid) at = k.retired_at; });
    return at;
  }
  async function signedOrThrow(doc, keys, what) {
    var r = await checkSigned(doc, keys);
    if (r === 'valid') return;
    if (r === 'unsupported') throw new Skip('unsupported');
    if (r === 'nokey') throw new Skip('no_key');
    if (r === 'retired') throw new Error(what + ' is signed by a retired key, and ' + retiredProblem(doc, retiredAtOf(doc, keys)));
    throw new Error(what + ': the signature does not check out');
  }
  function parseHead(doc, what) {
    if (!doc || doc.type !== 'tree_head' || !Number.isSafeInteger(doc.tree_size) || doc.tree_size < 0) throw new Error(what + ' is not a tree head');
    return { size: doc.tree_size, root: fromHex(doc.root_hash, what + '\u2019s root'), kid: doc.signature && doc.signature.key_id, doc: doc };
  }

  async function getJson(url) {
    var r = await fetch(url, { credentials: 'omit', cache: 'no-store' });
    var body = null;
    try { body = await r.json(); } catch (e) { body = null; }
    return { status: r.status, body: body };
  }
  function why(res) {
    var m = res.body && res.body.error && res.body.error.message;
    return 'HTTP ' + res.status + (m ? ': ' + m : '');
  }

  // -- remembered heads -----------------------------------------------------------------------
  var HEADS = 'qahwa.log.heads', EVIDENCE = 'qahwa.log.evidence';
  function load(name) { try { return JSON.parse(localStorage.getItem(name) || 'null'); } catch (e) { return null; } }
  function store(name, v) { try { localStorage.setItem(name, JSON.stringify(v)); } catch (e) { /* storage may be off */ } }
  function remember(head) { var all = load(HEADS) || {}; all[head.kid] = head.doc; store(HEADS, all); }
  class Fork { why: string; constructor(why) { this.why = why; } }
  function fork(reason, old, now, extra?) {
    var ev = load(EVIDENCE) || [];
    ev.push({ kind: 'fork', detected_at: new Date().toISOString(), reason: reason, remembered_head: old.doc, new_head: now.doc, consistency: extra || null });
    store(EVIDENCE, ev);
    return new Fork(reason);
  }

  async function reconcile(head, base, keys) {
    var all = load(HEADS) || {}, oldDoc = all[head.kid];
    var old = null;
    try { old = oldDoc ? parseHead(oldDoc, 'the remembered head') : null; } catch (e) { old = null; }
    if (!old) { remember(head); return { key: 'first' }; }
    if (old.size === head.size) {
      if (!same(old.root, head.root)) throw fork('two signed heads of size ' + head.size + ' with different roots', old, head);
      return { key: 'same' };
    }
    var small = old.size < head.size ? old : head, big = old.size < head.size ? head : old;
    if (small.size === 0) { if (head.size > old.size) remember(head); return { key: 'consistent', params: { m: old.size } }; }
    var res = await getJson(new URL('/v1/log/consistency?first=' + small.size + '&second=' + big.size, base).href);
    if (res.status === 400 || res.status === 404) throw fork('the server cannot prove that its head of size ' + big.size + ' extends the one of size ' + small.size + ' (' + why(res) + ')', old, head, res.body);
    if (res.status !== 200 || !res.body) throw new Error('no consistency proof: ' + why(res));
    var first = parseHead(res.body.first_head, 'the first head'), second = parseHead(res.body.second_head, 'the second head');
    await signedOrThrow(first.doc, keys, 'the first head');
    await signedOrThrow(second.doc, keys, 'the second head');
    if (first.size !== small.size || second.size !== big.size) throw new Error('the consistency proof is for other sizes');
    if (!same(first.root, small.root) || !same(second.root, big.root)) throw fork('two signed heads of one size with different roots', old, head, res.body);
    var proof = (Array.isArray(res.body.proof) ? res.body.proof : [null]).map(function (h) { return fromHex(h, 'a consistency proof hash'); });
    if (!(await consistent(small.size, big.size, small.root, big.root, proof))) throw fork('the head of size ' + big.size + ' is not an extension of the head of size ' + small.size, old, head, res.body);
    if (head.size > old.size) { remember(head); return { key: 'consistent', params: { m: old.size } }; }
    return { key: 'older', params: { m: old.size } };
  }

  // The protocol of a signed match's transcript (qahwa-fair/2, and /3 of sealed deals):
  // its entry in the log is its lock, at lock_index.
  function signedProtocol(p) { return p === 'qahwa-fair/2' || p === 'qahwa-fair/3'; }
  function entryIndex(doc) { return doc && (signedProtocol(doc.protocol) ? doc.lock_index : doc.log_index); }
  // Whether a lock commits to a sealed deal: its signed ruleset (canonical JSON) parsed is an
  // object whose deal is "sealed" (fairness-v3 §9a; a member, not a substring).
  function sealedLock(leaf) {
    if (!leaf || leaf.type !== 'lock' || typeof leaf.ruleset !== 'string') return false;
    var r;
    try { r = JSON.parse(leaf.ruleset); } catch (e) { return false; }
    return !!r && typeof r === 'object' && !Array.isArray(r) && r.deal === 'sealed';
  }
  // The protocol a match's log entry asks of its transcript (fairness-v3 §9c): a
  // qahwa-fair/2 lock of a sealed deal asks for qahwa-fair/3, every other entry its own.
  function wantedProtocol(leaf) {
    return leaf.protocol === 'qahwa-fair/2' && sealedLock(leaf) ? 'qahwa-fair/3' : leaf.protocol;
  }
  class Downgrade { params: any; constructor(params) { this.params = params; } }
  function downgradeOf(doc, leaf, i) {
    if (wantedProtocol(leaf) === doc.protocol) return null;
    return { id: doc.match_id, found: String(leaf.protocol), i: i, given: String(doc.protocol),
      type: String(leaf.type) + (sealedLock(leaf) ? ' (a sealed deal: its transcript is qahwa-fair/3)' : '') };
  }

  // Log entry i is the transcript's own record, signed by the server's key: its lock
  // (qahwa-fair/2 and /3), else its commitment record; of the protocol its transcript has.
  async function checkRecord(doc, leaf, keys, i) {
    var down = leaf && typeof leaf === 'object' && leaf.match_id === doc.match_id ? downgradeOf(doc, leaf, i) : null;
    if (down) throw new Downgrade(down);
    if (signedProtocol(doc.protocol)) {
      if (!leaf || leaf.type !== 'lock') throw new Error('log entry ' + i + ' is not a lock record');
      if (!doc.lock || typeof doc.lock !== 'object' || canonicalJson(leaf) !== canonicalJson(doc.lock)) {
        throw new Error('log entry ' + i + ' is not this transcript\u2019s lock');
      }
      return signedOrThrow(leaf, keys, 'the lock at index ' + i);
    }
    if (!leaf || leaf.type !== 'commitment') throw new Error('log entry ' + i + ' is not a commitment record');
    ['protocol', 'match_id', 'game', 'ruleset', 'commitment', 'log_index'].forEach(function (k) {
      if (leaf[k] !== doc[k]) throw new Error('log entry ' + i + ' is the commitment record of another match (its ' + k + ' differs)');
    });
    return signedOrThrow(leaf, keys, 'the commitment record at index ' + i);
  }

  // -- a saved c2sp.org/tlog-proof@v1 (GET /v1/matches/{id}/log-proof), checked offline -----
  // The proof's index is the transcript's entry, its extra line is this match's record (the
  // v2 lock, or the v1 commitment record) signed by the server's key, the checkpoint is
  // signed by the log's note key (a vkey: <origin>+<key id>+base64(0x01 || key), from the
  // operator's /v1/keys or pasted), and the inclusion proof leads to the checkpoint's root
  // (as tlog/proof.py, tlog/note.py and verify --log-proof do). Witness cosignatures are
  // counted, not checked: a witness policy is `verify --log-proof FILE --policy FILE`'s.
  async function checkTlog(doc, tlogText, keys) {
    var i = entryIndex(doc);
    if (!Number.isSafeInteger(i) || i < 0) return { ok: false, key: 'bad', params: { why: 'the transcript\u2019s log entry is not an index' } };
    if (!keys || !keys.logVkey) return { ok: null, key: 'tlog_no_key' };
    try {
      var pf = parseTlogProof(tlogText), vk = await parseVkey(keys.logVkey);
      if (pf.index !== i) throw new Error('the tlog-proof is for index ' + pf.index + ', the transcript\u2019s entry is ' + i);
      if (!pf.extra) throw new Error('the tlog-proof carries no record (no extra line)');
      var leaf;
      try { leaf = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(pf.extra)); } catch (e) { throw new Error('the tlog-proof\u2019s record is not JSON'); }
      await checkRecord(doc, leaf, keys, i);
      // the checkpoint note, signed by the log key (clients/ts openCheckpoint); witness
      // cosignatures are counted here, not checked
      var cp = await openCheckpoint(pf.checkpoint, vk), origin = cp.origin, size = cp.size, root = cp.root;
      var others = splitNote(pf.checkpoint).sigs.filter(function (s) { return !(s.name === vk.name && s.keyId === vk.keyId); }).length;
      var got = await rootFromInclusion(i, size, await leafHash(pf.extra), pf.hashes);
      if (!same(got, root)) throw new Error('the inclusion proof of index ' + i + ' does not lead to the checkpoint\u2019s root');
      return { ok: true, key: 'tlog_ok', params: { i: i, n: size, origin: origin, kid: vk.keyId.toString(16).padStart(8, '0'), w: others } };
    } catch (e) {
      if (e instanceof Skip) return { ok: null, key: e.key };
      if (e instanceof Downgrade) return { ok: false, key: 'downgrade', params: e.params };
      return { ok: false, key: 'bad', params: { why: 'the saved tlog-proof: ' + String(e && e.message || e) } };
    }
  }

  // The downgrade rule (fairness-v2 §9) for a transcript that names no log entry: the
  // server's log is asked for the match's entry by match id. A match the log does not hold,
  // or holds under another protocol (a qahwa-fair/1 transcript made up for a qahwa-fair/2
  // match), fails; the same protocol without an index stays "not checked".
  async function entryOfMatch(doc, base) {
    if (!doc || typeof doc.match_id !== 'string' || !doc.match_id) return { ok: null, key: 'no_index' };
    try {
      var r = await fetch(new URL('/v1/matches/' + encodeURIComponent(doc.match_id) + '/log-proof', base).href,
        { credentials: 'omit', cache: 'no-store' });
      var text = await r.text(), body = null;
      if (r.status === 404) {
        try { body = JSON.parse(text); } catch (e) { body = null; }
        var code = body && body.error && body.error.code;
        if (code === 'not_a_qahwa_server') return { ok: null, key: 'no_server' };
        if (code === 'not_found') return { ok: false, key: 'absent', params: { id: doc.match_id } };
        return { ok: null, key: 'no_index' };
      }
      if (r.status !== 200) return { ok: null, key: 'no_index' };
      var pf = parseTlogProof(text), leaf = null;
      if (pf.extra) {
        try { leaf = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(pf.extra)); } catch (e) { leaf = null; }
      }
      var down = leaf && typeof leaf === 'object' && leaf.match_id === doc.match_id ? downgradeOf(doc, leaf, pf.index) : null;
      if (down) return { ok: false, key: 'downgrade', params: down };
      return { ok: null, key: 'no_index' };
    } catch (e) {
      return { ok: null, key: 'no_index' };
    }
  }

  // The match's reveal record (fairness-v2 §8), found in the log by its match id (GET
  // /v1/matches/{id}/reveal-proof names its index), its inclusion checked like the lock's
  // (/v1/log/proof, a signed head): signed by the server's key, naming the match's lock, and
  // signing this transcript's chain head (and so its events and their number), result,
  // ended_at and SHA-256. {ok: null, why} while the log gives none: "not checked yet".
  class RevealBad { why: string; constructor(why) { this.why = why; } }
  async function checkReveal(doc, base, keys, lockIdx) {
    var url = new URL('/v1/matches/' + encodeURIComponent(doc.match_id) + '/reveal-proof', base).href, r, text = '';
    for (var attempt = 0; attempt < 6; attempt++) {  // a checkpoint that includes it comes within seconds
      r = await fetch(url, { credentials: 'omit', cache: 'no-store' });
      text = await r.text();
      if (r.status !== 409 || text.indexOf('not_cosigned') < 0) break;
      await new Promise(function (ok) { setTimeout(ok, 1000); });
    }
    if (r.status !== 200) {
      var m = null;
      try { m = JSON.parse(text).error.message; } catch (e) { m = null; }
      return { ok: null, why: 'HTTP ' + r.status + (m ? ': ' + m : '') };
    }
    var j = parseTlogProof(text).index;
    var res = await getJson(new URL('/v1/log/proof?index=' + j, base).href);
    if (res.status !== 200 || !res.body) return { ok: null, why: why(res) };
    var p = res.body, leaf = p.leaf, where = 'the reveal record at log index ' + j;
    if (p.index !== j) throw new RevealBad('the proof is for index ' + p.index + ', not ' + j);
    if (!leaf || leaf.type !== 'reveal' || leaf.match_id !== doc.match_id) throw new RevealBad('log entry ' + j + ' is not this match\u2019s reveal record');
    if (leaf.lock_index !== lockIdx || j <= lockIdx) throw new RevealBad(where + ' names lock_index ' + leaf.lock_index + ', the match\u2019s lock is entry ' + lockIdx);
    await signedOrThrow(leaf, keys, where);
    var head = parseHead(p.tree_head, 'the tree head');
    await signedOrThrow(head.doc, keys, 'the tree head');
    if (p.tree_size !== head.size) throw new Error('the proof\u2019s tree_size is not its head\u2019s');
    var path = (Array.isArray(p.audit_path) ? p.audit_path : [null]).map(function (h) { return fromHex(h, 'an audit path hash'); });
    var root = await rootFromInclusion(j, head.size, await leafHash(enc.encode(canonicalJson(leaf))), path);
    if (!same(root, head.root)) throw new RevealBad('the inclusion proof of ' + where + ' does not lead to the signed head\u2019s root');
    [['chain', 'chain head'], ['result', 'result'], ['ended_at', 'ended_at']].forEach(function (f) {
      var a = leaf[f[0]], b = doc[f[0]];
      if ((a === undefined ? 'null' : canonicalJson(a)) !== (b === undefined ? 'null' : canonicalJson(b))) {
        throw new RevealBad(where + ' signs another ' + f[1] + ' than this transcript\u2019s: the transcript does not run to the match\u2019s real end');
      }
    });
    var digest = toHex(await sha256(enc.encode(canonicalJson(doc))));
    if (leaf.transcript_sha256 !== digest) throw new RevealBad(where + ' signs another transcript_sha256 than this transcript\u2019s SHA-256: it is not the transcript the server signed when the match ended');
    return { ok: true, j: j };
  }

  // {ok: true | false | null, key, params}: the message to show, by key (translated late).
  // tlogText: a saved tlog-proof the player gave, checked instead of asking the server.
  async function checkLog(doc, base, keys, tlogText) {
    if (doc && tlogText) return checkTlog(doc, tlogText, keys);
    var i = entryIndex(doc);  // qahwa-fair/2 and /3: the lock's entry (§8)
    if (i === undefined || i === null) return base ? entryOfMatch(doc, base) : { ok: null, key: 'no_index' };
    if (!Number.isSafeInteger(i) || i < 0) return { ok: false, key: 'bad', params: { why: 'the transcript\u2019s log_index is not an index' } };
    if (!base) return { ok: null, key: 'no_server' };
    if (!subtle) return { ok: null, key: 'unsupported' };
    try {
      var res = await getJson(new URL('/v1/log/proof?index=' + i, base).href);
      // `verify page` (the player's own install) is no log: say what to give, do not fail
      if (res.status === 404 && res.body && res.body.error && res.body.error.code === 'not_a_qahwa_server') return { ok: null, key: 'no_server' };
      if (res.status !== 200 || !res.body) return { ok: false, key: 'fetch', params: { i: i, why: why(res) } };
      var p = res.body, leaf = p.leaf;
      if (p.index !== i) throw new Error('the proof is for index ' + p.index + ', not ' + i);
      await checkRecord(doc, leaf, keys, i);
      var head = parseHead(p.tree_head, 'the tree head');
      await signedOrThrow(head.doc, keys, 'the tree head');
      if (p.tree_size !== head.size) throw new Error('the proof\u2019s tree_size is not its head\u2019s');
      var path = (Array.isArray(p.audit_path) ? p.audit_path : [null]).map(function (h) { return fromHex(h, 'an audit path hash'); });
      var root = await rootFromInclusion(i, head.size, await leafHash(enc.encode(canonicalJson(leaf))), path);
      if (!same(root, head.root)) throw new Error('the inclusion proof leads to root ' + toHex(root).slice(0, 16) + '\u2026, the signed head says ' + toHex(head.root).slice(0, 16) + '\u2026');
      var rel = await reconcile(head, base, keys);
      if (signedProtocol(doc.protocol)) {
        var rv = await checkReveal(doc, base, keys, i);
        if (rv.ok === null) return { ok: null, pending: true, key: 'reveal_pending', params: { i: i, id: doc.match_id, why: rv.why } };
        var n = Array.isArray(doc.events) ? doc.events.length : 0;
        return { ok: true, key: 'ok_reveal', params: { i: i, n: head.size, kid: head.kid, rel: rel, j: rv.j, e: n } };
      }
      return { ok: true, key: 'ok', params: { i: i, n: head.size, kid: head.kid, rel: rel } };
    } catch (e) {
      if (e instanceof Skip) return { ok: null, key: e.key };
      if (e instanceof Downgrade) return { ok: false, key: 'downgrade', params: e.params };
      if (e instanceof RevealBad) return { ok: false, key: 'reveal_bad', params: { why: e.why } };
      if (e instanceof Fork) return { ok: false, key: 'fork', params: { why: e.why } };
      return { ok: false, key: 'bad', params: { why: String(e && e.message || e) } };
    }
  }

  var cache: any = {};
  function show(tr, res) {
    var st = res.ok === true ? 'ok' : res.ok === false ? 'bad' : 'warn';
    tr.className = st;
    tr.setAttribute('data-status', st);
    tr.setAttribute('data-ok', res.ok === true ? 'true' : res.ok === false ? 'false' : 'unknown'); // as every row of the page
    tr.children[0].textContent = res.ok === true ? '\u2714' : res.ok === false ? '\u2718' : '?';
    tr.children[2].textContent = t(res.key, res.params);
  }
  function attach(tbody, doc, base, keys, tlogText) {
    if (!tbody || !doc || tbody.querySelector('tr[data-check="log"]')) return null;
    var tr = document.createElement('tr');
    tr.setAttribute('data-check', 'log');
    ['st', '', 'msg'].forEach(function (cls) {
      var td = document.createElement('td');
      if (cls) td.className = cls;
      if (cls === 'msg') td.setAttribute('dir', 'auto');
      tr.appendChild(td);
    });
    tr.children[1].textContent = t('label');
    show(tr, { ok: null, key: 'checking' });
    tr.setAttribute('data-status', 'pending');
    tbody.appendChild(tr);
    var id = String(base) + '|' + String(doc.match_id) + '|' + String(doc.log_index) + '|' + String(doc.lock_index) +
      '|' + String(tlogText || '') + '|' + String(keys && keys.logVkey);
    var p = cache[id] || (cache[id] = checkLog(doc, base, keys, tlogText));
    return p.then(function (res) { if (tr.isConnected) show(tr, res); return res; });
  }

  (globalThis as any).qahwaLog = {
    leafHash: leafHash, nodeHash: nodeHash, rootFromInclusion: rootFromInclusion,
    consistent: consistent, canonicalJson: canonicalJson, checkLog: checkLog, attach: attach,
    parseTlogProof: parseTlogProof,
    // the record checks it shares with the page
    retiredProblem: retiredProblem,
    toHex: toHex
  };

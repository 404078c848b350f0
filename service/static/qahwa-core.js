/* The verify page's shared core: one canonical JSON and one Ed25519 check, used by the
 * page (verify.html) and its log row (merkle.js). Web Crypto only; no eval.
 *
 * Canonical JSON is byte-identical to Python's json.dumps(obj, sort_keys=True,
 * separators=(",", ":"), ensure_ascii=False) (fairness.canonical_json): keys sorted by
 * code point, numbers in their written form (1 and 1.0 differ, big integers stay exact),
 * strings escaped as Python does. canonicalJson(text) works on a JSON text;
 * canonicalValue(v) on a parsed value of strings, safe integers, booleans, null, arrays
 * and objects (a log record).
 */
(function () {
'use strict';
var LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;
var subtle = (typeof crypto !== 'undefined' && crypto.subtle) || null;
function needSubtle() {
  if (!subtle) throw new Error('this browser has no Web Crypto (crypto.subtle); open the page over https or from a file');
}

// ---------------------------------------------------------------------------------------
// Canonical JSON, byte-identical to Python's
// json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).
// The transcript's own text is parsed here (not with JSON.parse) so that numbers keep
// their written form: 1 and 1.0 differ in Python, and big integers stay exact.
// ---------------------------------------------------------------------------------------
function parseRaw(text) {
  var i = 0, n = text.length;
  function fail(msg) { throw new SyntaxError(msg + ' at character ' + i); }
  function ws() { while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++; }
  var NUM = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  function str() {
    var start = i;
    i++;
    while (i < n && text[i] !== '"') { if (text[i] === '\\') i++; i++; }
    if (i >= n) fail('unterminated string');
    i++;
    return JSON.parse(text.slice(start, i));
  }
  function value(depth) {
    if (depth > 500) fail('nested too deeply');
    ws();
    var c = text[i];
    if (c === '{') {
      i++;
      var m = new Map();
      ws();
      if (text[i] === '}') { i++; return { t: 'o', m: m }; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        var k = str();
        ws();
        if (text[i] !== ':') fail('expected :');
        i++;
        m.set(k, value(depth + 1)); // a repeated key keeps the last value, as Python does
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return { t: 'o', m: m }; }
        fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      var a = [];
      ws();
      if (text[i] === ']') { i++; return { t: 'a', a: a }; }
      for (;;) {
        a.push(value(depth + 1));
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return { t: 'a', a: a }; }
        fail('expected , or ]');
      }
    }
    if (c === '"') return { t: 's', v: str() };
    if (text.startsWith('true', i)) { i += 4; return { t: 'l', v: 'true' }; }
    if (text.startsWith('false', i)) { i += 5; return { t: 'l', v: 'false' }; }
    if (text.startsWith('null', i)) { i += 4; return { t: 'l', v: 'null' }; }
    NUM.lastIndex = i;
    var mm = NUM.exec(text);
    if (mm) { i += mm[0].length; return { t: 'n', v: mm[0] }; }
    fail('unexpected ' + (i < n ? JSON.stringify(text[i]) : 'end of text'));
  }
  var v = value(0);
  ws();
  if (i !== n) fail('extra text after the JSON value');
  return v;
}

function cmpCodePoints(x, y) {
  var a = Array.from(x), b = Array.from(y), l = Math.min(a.length, b.length);
  for (var k = 0; k < l; k++) {
    var p = a[k].codePointAt(0), q = b[k].codePointAt(0);
    if (p !== q) return p - q;
  }
  return a.length - b.length;
}
var ESC = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };
function pyStr(s) {
  if (LONE_SURROGATE.test(s)) throw new Error('a string holds a lone surrogate, which UTF-8 cannot encode');
  return '"' + s.replace(/[\x00-\x1f"\\]/g, function (c) {
    return ESC[c] || '\\u' + ('000' + c.charCodeAt(0).toString(16)).slice(-4);
  }) + '"';
}
function pyFloatRepr(x) {
  if (!isFinite(x)) throw new Error('a number is out of range (Python would refuse to write it)');
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  var sign = x < 0 ? '-' : '';
  var e = Math.abs(x).toExponential(); // shortest round-trip digits, as Python's repr
  var parts = e.split('e'), digits = parts[0].replace('.', ''), decpt = parseInt(parts[1], 10) + 1;
  if (decpt <= -4 || decpt > 16) {
    var ex = decpt - 1;
    return sign + digits[0] + (digits.length > 1 ? '.' + digits.slice(1) : '') + 'e' +
      (ex < 0 ? '-' : '+') + String(Math.abs(ex)).padStart(2, '0');
  }
  if (decpt <= 0) return sign + '0.' + '0'.repeat(-decpt) + digits;
  if (decpt >= digits.length) return sign + digits + '0'.repeat(decpt - digits.length) + '.0';
  return sign + digits.slice(0, decpt) + '.' + digits.slice(decpt);
}
function pyNum(raw) {
  if (/^-?[0-9]+$/.test(raw)) return BigInt(raw).toString();
  return pyFloatRepr(Number(raw));
}
function serialize(node, skipTopKey) {
  switch (node.t) {
    case 'o':
      var keys = Array.from(node.m.keys()).filter(function (k) { return k !== skipTopKey; });
      keys.sort(cmpCodePoints);
      return '{' + keys.map(function (k) { return pyStr(k) + ':' + serialize(node.m.get(k)); }).join(',') + '}';
    case 'a': return '[' + node.a.map(function (x) { return serialize(x); }).join(',') + ']';
    case 's': return pyStr(node.v);
    case 'n': return pyNum(node.v);
    default: return node.v;
  }
}
function canonicalJson(text) { return serialize(parseRaw(text)); }

async function verifyEd25519(pub, sig, msg) {
  needSubtle();
  var key;
  try {
    key = await subtle.importKey('raw', pub, { name: 'Ed25519' }, false, ['verify']);
  } catch (e) {
    if (e && e.name === 'NotSupportedError') return 'unsupported';
    return 'badkey';
  }
  try {
    return (await subtle.verify({ name: 'Ed25519' }, key, sig, msg)) ? 'valid' : 'invalid';
  } catch (e) {
    if (e && e.name === 'NotSupportedError') return 'unsupported';
    return 'invalid';
  }
}

// A parsed value (a log record): the same canonical form, through the same serializer.
function canonicalValue(v) {
  (function check(x) {
    if (typeof x === 'number' && !Number.isSafeInteger(x)) throw new Error('a record holds a number that is not a safe integer');
    if (x && typeof x === 'object') Object.keys(x).forEach(function (k) { check(x[k]); });
  })(v);
  return canonicalJson(JSON.stringify(v));
}

window.qahwaCore = {
  parseRaw: parseRaw, serialize: serialize, canonicalJson: canonicalJson,
  canonicalValue: canonicalValue, verifyEd25519: verifyEd25519
};
})();

// The verify page (qahwa_page/static/verify.html): moved from its inline script (issue 47).
import { LONE_SURROGATE, canonicalJson } from "../src/rawjson.js";
import * as raw from "../src/rawjson.js";
import { retiredProblem, rfc3339 } from "../src/verify/records.js";
import { concat as concatBytes, lp, u32be, utf8 } from "../src/bytes.js";
import { hmac, hmacKey, verifyEd25519 as verifyEd } from "../src/crypto.js";
import { Stream, matchKey, matchKeyV1, rollChainPrev, seedCommitment, seedProblem } from "../src/fair.js";
import { chainHeadsOfText, checkSeatSigs } from "../src/verify/chain.js";
import { checkReceipts, seatFileOf } from "../src/verify/receipts.js";

// the page walks JSON trees loosely typed
const parseRaw: (text: string) => any = raw.parseRaw;
const getNode: (n: any, k: string) => any = raw.getNode;
const serialize: (n: any, skipTopKey?: string) => string = raw.serialize;

/** an element of the page by its id (its fields read as they are: value, files, checked) */
function byId(id: string): any { return document.getElementById(id); }

// ---------------------------------------------------------------------------------------
// Translations. {name} is replaced by a parameter.
// ---------------------------------------------------------------------------------------
var LANGS = ['en', 'ar', 'fa'];
// key: [English, Arabic, Persian]
var STRINGS = {
  title: [
    'Verify a qahwa match',
    'التحقق من مباراة قهوة',
    'بررسی یک بازی قهوه'],
  intro: [
    'This page checks a finished match\u2019s transcript in your browser, qahwa-fair/1 and qahwa-fair/2 alike: the server\u2019s signature, the seed commitments, the match key and every dice roll, shuffle and draw, and for qahwa-fair/2 also the lock, the event chain, the seats\u2019 signatures and the fresh rolls. It computes everything itself and trusts no answer from the server. The note at the bottom says whether this page also replays the game rules; without that replay it never says \u201cverified\u201d.',
    'تتحقق هذه الصفحة من سجلّ مباراة منتهية داخل متصفحك، في qahwa-fair/1 وqahwa-fair/2 على السواء: توقيع الخادم، والتزامات البذور، ومفتاح المباراة، وكل رمية نرد وخلط وسحب، وفي qahwa-fair/2 أيضًا القفل وسلسلة الأحداث وتواقيع المقاعد والرميات الطازجة. تحسب كل شيء بنفسها ولا تثق بأي جواب من الخادم. تقول الملاحظة في أسفل الصفحة هل تعيد هذه الصفحة أيضًا لعب قواعد اللعبة؛ ومن دون ذلك لا تقول أبدًا «تم التحقق».',
    'این صفحه رونوشت یک بازی تمام‌شده را در مرورگر شما بررسی می‌کند، برای qahwa-fair/1 و qahwa-fair/2 هر دو: امضای سرور، تعهدهای بذر، کلید بازی و هر پرتاب تاس و بُر زدن و قرعه، و در qahwa-fair/2 همچنین قفل، زنجیرهٔ رویدادها، امضای صندلی‌ها و پرتاب‌های تازه. همه چیز را خودش حساب می‌کند و به هیچ پاسخی از سرور اعتماد نمی‌کند. یادداشت پایین صفحه می‌گوید که آیا این صفحه قواعد بازی را هم دوباره اجرا می‌کند؛ بدون آن هرگز نمی‌گوید «تأیید شد».'],
  src_id: [
    'Match id',
    'معرّف المباراة',
    'شناسهٔ بازی'],
  server_label: [
    'Operator\u2019s server',
    'خادم المشغّل',
    'سرور گرداننده'],
  server_hint: [
    'The address of the qahwa server the match was played on, or a match URL from it: the page fetches the keys, the transcript (by match id) and the log proof from there. Leave it empty when this page is served by that server.',
    'عنوان خادم قهوة الذي لُعبت عليه المباراة، أو رابط مباراة منه: تجلب الصفحة منه المفاتيح والسجلّ (بمعرّف المباراة) وإثبات السجل. اتركه فارغًا إذا كان هذا الخادم هو من يقدّم هذه الصفحة.',
    'نشانی سرور قهوه‌ای که بازی روی آن انجام شد، یا نشانی یک بازی از آن: صفحه کلیدها، رونوشت (با شناسهٔ بازی) و اثبات دفتر را از آنجا می‌گیرد. اگر همین سرور این صفحه را داده، خالی بگذارید.'],
  logproof_label: [
    'Saved log proof (optional)',
    'إثبات السجل المحفوظ (اختياري)',
    'اثبات دفتر ذخیره‌شده (اختیاری)'],
  logproof_hint: [
    'A c2sp.org/tlog-proof file you saved from GET /v1/matches/{id}/log-proof: the log row checks it instead of asking a server. It needs the log\u2019s key (vkey), from the operator\u2019s /v1/keys or pasted here.',
    'ملف c2sp.org/tlog-proof حفظته من GET /v1/matches/{id}/log-proof: يفحصه بند السجل بدل سؤال الخادم. يحتاج مفتاح السجل (vkey)، من \u200e/v1/keys\u200e لدى المشغّل أو ملصقًا هنا.',
    'پرونده‌ای c2sp.org/tlog-proof که از GET /v1/matches/{id}/log-proof ذخیره کرده‌اید: ردیف دفتر به جای پرسیدن از سرور آن را بررسی می‌کند. به کلید دفتر (vkey) نیاز دارد، از \u200e/v1/keys\u200e گرداننده یا چسبانده در اینجا.'],
  src_url: [
    'Transcript URL',
    'رابط السجلّ',
    'نشانی رونوشت'],
  src_paste: [
    'Paste a transcript (JSON)',
    'ألصق السجلّ (JSON)',
    'رونوشت را بچسبانید (JSON)'],
  src_file: [
    'Transcript file',
    'ملف السجلّ',
    'پروندهٔ رونوشت'],
  key_label: [
    'Server public key (optional)',
    'المفتاح العام للخادم (اختياري)',
    'کلید عمومی سرور (اختیاری)'],
  receipts_label: [
    'Your receipts or seat.json (optional, qahwa-fair/2): paste them or open their file',
    'إيصالاتك أو seat.json (اختياري، qahwa-fair/2): ألصقها أو افتح ملفها',
    'رسیدهای شما یا seat.json (اختیاری، qahwa-fair/2): بچسبانید یا فایلشان را باز کنید'],
  own_label: [
    'Your own seed (optional, qahwa-fair/2): seat, client seed, nonce',
    'بذرتك (اختياري، qahwa-fair/2): المقعد، بذرة اللاعب، nonce',
    'بذر خودتان (اختیاری، qahwa-fair/2): صندلی، بذر بازیکن، nonce'],
  key_hint: [
    'Base64 of the 32-byte Ed25519 key. Leave empty to use the keys the server publishes at /v1/keys; paste a key you got independently to pin it.',
    'ترميز base64 لمفتاح Ed25519 ذي 32 بايت. اتركه فارغًا لاستخدام المفاتيح التي ينشرها الخادم في \u200e/v1/keys\u200e، أو ألصق مفتاحًا حصلت عليه بنفسك لتثبيته.',
    'base64 کلید ۳۲ بایتی Ed25519. خالی بگذارید تا کلیدهایی که سرور در \u200e/v1/keys\u200e منتشر می‌کند به کار رود؛ یا کلیدی را که خودتان جداگانه گرفته‌اید بچسبانید.'],
  verify_btn: [
    'Verify',
    'تحقّق',
    'بررسی'],
  working: [
    'Checking\u2026',
    'جارٍ التحقق\u2026',
    'در حال بررسی\u2026'],
  footer: [
    'qahwa-fair/1 and qahwa-fair/2 \u00b7 everything on this page is computed in your browser; nothing is sent anywhere',
    'qahwa-fair/1 وqahwa-fair/2 \u00b7 كل ما في هذه الصفحة يُحسب في متصفحك ولا يُرسَل شيء إلى أي مكان',
    'qahwa-fair/1 و qahwa-fair/2 \u00b7 همه چیز در این صفحه در مرورگر شما حساب می‌شود و چیزی به جایی فرستاده نمی‌شود'],
  verdict_fail: [
    'NOT verified: {n} check(s) failed \u2014 see the red items below.',
    'لم يتم التحقق: فشل {n} من الفحوص \u2014 انظر البنود الحمراء أدناه.',
    'تأیید نشد: {n} بررسی ناموفق بود \u2014 موارد قرمز زیر را ببینید.'],
  verdict_incomplete: [
    'Not fully verified: the chance events check out, but {why}',
    'تحقق غير كامل: الأحداث العشوائية صحيحة، لكن {why}',
    'تأیید ناقص: رویدادهای تصادفی درست‌اند، اما {why}'],
  verdict_error: [
    'Could not check: {msg}',
    'تعذّر الفحص: {msg}',
    'بررسی ممکن نشد: {msg}'],
  inc_sig: [
    'the signature could not be checked (see below).',
    'تعذّر فحص التوقيع (انظر أدناه).',
    'امضا را نشد بررسی کرد (پایین را ببینید).'],
  inc_rules: [
    'the rules could not be replayed (see below).',
    'تعذّرت إعادة لعب القواعد (انظر أدناه).',
    'قواعد را نشد دوباره اجرا کرد (پایین را ببینید).'],
  chk_protocol: [
    'Protocol',
    'البروتوكول',
    'پروتکل'],
  chk_seed: [
    'Server seed',
    'بذرة الخادم',
    'بذر سرور'],
  chk_commitment: [
    'Commitment = SHA-256(seed)',
    'الالتزام = SHA-256(البذرة)',
    'تعهد = SHA-256(بذر)'],
  chk_seats: [
    'Client seeds',
    'بذور اللاعبين',
    'بذرهای بازیکنان'],
  chk_key: [
    'Match key K',
    'مفتاح المباراة K',
    'کلید بازی K'],
  chk_seq: [
    'Event order (seq)',
    'ترتيب الأحداث (seq)',
    'ترتیب رویدادها (seq)'],
  chk_labels: [
    'Each label used once',
    'كل وسم مستخدم مرة واحدة',
    'هر برچسب فقط یک بار'],
  chk_chance: [
    'Chance events recomputed',
    'إعادة حساب الأحداث العشوائية',
    'بازمحاسبهٔ رویدادهای تصادفی'],
  chk_signature: [
    'Signature (Ed25519)',
    'التوقيع (Ed25519)',
    'امضا (Ed25519)'],
  chk_match: [
    'Match id',
    'معرّف المباراة',
    'شناسهٔ بازی'],
  chk_replay: [
    'Every move legal (rules replayed)',
    'كل حركة مسموحة (إعادة لعب القواعد)',
    'هر حرکت مجاز (اجرای دوبارهٔ قواعد)'],
  chk_result: [
    'Result as recorded',
    'النتيجة كما سُجّلت',
    'نتیجه همان‌طور که ثبت شده'],
  chk_agree: [
    'JavaScript and Python agree',
    'JavaScript وPython متفقان',
    'هم‌خوانی JavaScript و Python'],
  ev_unchecked: [
    'not checked here (the rules replay checks it)',
    'لم يُفحص هنا (تفحصه إعادة لعب القواعد)',
    'اینجا بررسی نشد (اجرای دوبارهٔ قواعد آن را بررسی می‌کند)'],
  chk_fresh: [
    'Fresh rolls (roll chains)',
    'الرميات الطازجة (سلاسل الرمي)',
    'پرتاب‌های تازه (زنجیره‌های پرتاب)'],
  chk_lock_sig: [
    'Lock signature (Ed25519)',
    'توقيع القفل (Ed25519)',
    'امضای قفل (Ed25519)'],
  chk_chain: [
    'Event chain',
    'سلسلة الأحداث',
    'زنجیرهٔ رویدادها'],
  chk_seat_sigs: [
    'Seat signatures (keys from the lock)',
    'تواقيع المقاعد (المفاتيح من القفل)',
    'امضای صندلی‌ها (کلیدها از قفل)'],
  inc_norules: [
    'the game rules were not replayed here, so the moves, the result and the winners are NOT verified (see below). Run the verify CLI, or open this page where the Python runtime loads.',
    'لم يُعَد لعب قواعد اللعبة هنا، لذلك الحركات والنتيجة والفائزون غير متحقَّق منها (انظر أدناه). شغّل أداة verify، أو افتح هذه الصفحة حيث يُحمَّل Python.',
    'قواعد بازی اینجا دوباره اجرا نشد، پس حرکت‌ها، نتیجه و برندگان تأیید نشده‌اند (پایین را ببینید). ابزار verify را اجرا کنید یا این صفحه را جایی باز کنید که Python بارگذاری شود.'],
  replay_pending: [
    'replaying the rules with the verify CLI\u2019s Python\u2026',
    'جارٍ إعادة لعب القواعد بشيفرة Python الخاصة بأداة verify\u2026',
    'در حال اجرای دوبارهٔ قواعد با کد Python ابزار verify\u2026'],
  stage_runtime: [
    'starting Python (Pyodide)\u2026',
    'تشغيل Python (Pyodide)\u2026',
    'راه‌اندازی Python (Pyodide)\u2026'],
  stage_sources: [
    'loading the rules\u2026',
    'تحميل القواعد\u2026',
    'بارگذاری قواعد\u2026'],
  stage_replay: [
    'replaying: {done} of {total} events',
    'إعادة اللعب: {done} من {total} حدثًا',
    'اجرای دوباره: {done} از {total} رویداد'],
  replay_ok: [
    '{n} events replayed through the {game} rules: every move legal, {c} chance results recomputed in Python',
    'أعيد لعب {n} حدثًا بقواعد {game}: كل حركة مسموحة، وأعيد حساب {c} حدثًا عشوائيًا في Python',
    '{n} رویداد با قواعد {game} دوباره اجرا شد: هر حرکت مجاز بود و {c} رویداد تصادفی در Python بازمحاسبه شد'],
  replay_bad: [
    'the rules reject this transcript: {msg}',
    'القواعد ترفض هذا السجلّ: {msg}',
    'قواعد این رونوشت را رد می‌کنند: {msg}'],
  replay_skip: [
    'not replayed: {msg}',
    'لم تُعَد: {msg}',
    'اجرا نشد: {msg}'],
  replay_off_failed: [
    'not replayed: Python could not be started ({msg})',
    'لم تُعَد القواعد: تعذّر تشغيل Python ({msg})',
    'قواعد دوباره اجرا نشد: Python راه نیفتاد ({msg})'],
  replay_off_error: [
    'not replayed: {msg}',
    'لم تُعَد القواعد: {msg}',
    'قواعد دوباره اجرا نشد: {msg}'],
  result_ok: [
    'the replay ends as the transcript says: {reason}, won by {who}',
    'تنتهي إعادة اللعب كما يقول السجلّ: {reason}، فاز {who}',
    'اجرای دوباره همان‌طور که رونوشت می‌گوید تمام می‌شود: {reason}، برنده {who}'],
  result_bad: [
    'the replayed result differs from the transcript\u2019s',
    'النتيجة بعد إعادة اللعب تختلف عن نتيجة السجلّ',
    'نتیجهٔ اجرای دوباره با نتیجهٔ رونوشت فرق دارد'],
  result_skip: [
    'not checked: the events did not replay',
    'لم تُفحص: لم يُعَد لعب الأحداث',
    'بررسی نشد: رویدادها دوباره اجرا نشدند'],
  agree_ok: [
    'both recomputed the same {n} chance result(s) from the seeds',
    'حسب كلاهما النتائج العشوائية نفسها ({n}) من البذور',
    'هر دو همان {n} نتیجهٔ تصادفی را از بذرها به دست آوردند'],
  agree_bad: [
    'they differ at event {seq}',
    'يختلفان عند الحدث {seq}',
    'در رویداد {seq} فرق دارند'],
  agree_none: [
    'no chance result to compare',
    'لا نتيجة عشوائية للمقارنة',
    'نتیجهٔ تصادفی‌ای برای مقایسه نیست'],
  verdict_pass_rules: [
    'Verified: the commitment, all {n} chance events, every move, the result and the signature check out.',
    'تمّ التحقق: الالتزام وجميع الأحداث العشوائية ({n}) وكل حركة والنتيجة والتوقيع كلها صحيحة.',
    'تأیید شد: تعهد، همهٔ {n} رویداد تصادفی، هر حرکت، نتیجه و امضا درست‌اند.'],
  verdict_pending: [
    'Checking the rules\u2026 (the checks above are done; the replay adds its rows)',
    'جارٍ فحص القواعد\u2026 (الفحوص أعلاه انتهت، وإعادة اللعب تضيف صفوفها)',
    'در حال بررسی قواعد\u2026 (بررسی‌های بالا انجام شده؛ اجرای دوباره ردیف‌های خود را می‌افزاید)'],
  rules_done: [
    'Every move was replayed through the game rules in your browser by the verify CLI\u2019s own Python code (Python {py} on Pyodide {pyodide}), and every chance event was recomputed twice: in JavaScript and in Python. The same check on the command line: {cmd}',
    'أُعيد لعب كل حركة بقواعد اللعبة في متصفحك بشيفرة Python نفسها التي تستخدمها أداة verify (Python {py} على Pyodide {pyodide})، وحُسب كل حدث عشوائي مرتين: في JavaScript وفي Python. الفحص نفسه في سطر الأوامر: {cmd}',
    'هر حرکت در مرورگر شما با همان کد Python ابزار verify و با قواعد بازی دوباره اجرا شد (Python {py} روی Pyodide {pyodide}) و هر رویداد تصادفی دو بار حساب شد: در JavaScript و در Python. همین بررسی در خط فرمان: {cmd}'],
  cli_text: [
    'as the verify CLI shows it',
    'كما تعرضه أداة verify',
    'همان‌طور که ابزار verify نشان می‌دهد'],
  diff_line: [
    '{path}: expected {e}, found {f}',
    '{path}: المتوقَّع {e}، الموجود {f}',
    '{path}: انتظار می‌رفت {e}، یافت شد {f}'],
  absent: [
    '(absent)',
    '(غير موجود)',
    '(ناموجود)'],
  expected_py: [
    'replay',
    'إعادة اللعب',
    'اجرای دوباره'],
  match_bad: [
    'you asked for {want}, but this transcript is of match {found}',
    'طلبت {want}، لكن هذا السجلّ للمباراة {found}',
    'شما {want} را خواستید، اما این رونوشت مال بازی {found} است'],
  protocol_bad: [
    'expected qahwa-fair/1, qahwa-fair/2 or qahwa-fair/3, found {found}',
    'المتوقع qahwa-fair/1 أو qahwa-fair/2 أو qahwa-fair/3، والموجود {found}',
    'انتظار qahwa-fair/1 یا qahwa-fair/2 یا qahwa-fair/3 بود، {found} آمده'],
  seed_bad: [
    'the server seed must be {n} hexadecimal characters, found {found}',
    'يجب أن تكون بذرة الخادم {n} محرفًا ست عشريًا، والموجود {found}',
    'بذر سرور باید {n} نویسهٔ شانزده‌شانزدهی باشد، آمده: {found}'],
  commit_ok: [
    'SHA-256(seed) = {c}',
    'SHA-256(البذرة) = {c}',
    'SHA-256(بذر) = {c}'],
  commit_bad: [
    'SHA-256(seed) = {expected}, but the transcript says {found}',
    'SHA-256(البذرة) = {expected}، لكن السجلّ يقول {found}',
    'SHA-256(بذر) = {expected}، اما رونوشت می‌گوید {found}'],
  seats_ok: [
    '{n} seat(s), seeds in seat order',
    'عدد المقاعد {n}، والبذور بترتيب المقاعد',
    '{n} جایگاه، بذرها به ترتیب جایگاه'],
  seat_order: [
    'seat entry {i} is for seat {found}; seats must be listed 0, 1, 2, \u2026',
    'المدخل {i} يخص المقعد {found}؛ يجب سرد المقاعد 0، 1، 2، \u2026',
    'مدخل {i} مال جایگاه {found} است؛ جایگاه‌ها باید به ترتیب ۰، ۱، ۲، \u2026 بیایند'],
  seed_invalid: [
    'client seed of seat {i} is not allowed: {why}',
    'بذرة المقعد {i} غير مقبولة: {why}',
    'بذر جایگاه {i} پذیرفتنی نیست: {why}'],
  seed_why_type: [
    'not a string',
    'ليست نصًا',
    'رشته نیست'],
  seed_why_empty: [
    'empty',
    'فارغة',
    'خالی است'],
  seed_why_nul: [
    'contains NUL',
    'تحتوي على NUL',
    'NUL دارد'],
  seed_why_print: [
    'contains unprintable characters',
    'تحتوي على محارف غير قابلة للطباعة',
    'نویسهٔ چاپ‌نشدنی دارد'],
  seed_why_long: [
    '{n} bytes, more than 128',
    '{n} بايت، أكثر من 128',
    '{n} بایت، بیش از ۱۲۸'],
  no_seats: [
    'the transcript has no seats',
    'لا مقاعد في السجلّ',
    'رونوشت جایگاهی ندارد'],
  key_ok: [
    'K = {k}',
    'K = {k}',
    'K = {k}'],
  key_bad: [
    'cannot be computed: {msg}',
    'تعذّر حسابه: {msg}',
    'حساب نشد: {msg}'],
  seq_ok: [
    '0 \u2026 {last}, no gaps',
    '0 \u2026 {last} بلا فجوات',
    '0 \u2026 {last}، بی‌فاصله'],
  seq_bad: [
    'event {i} has seq {found}, expected {i}',
    'الحدث {i} رقمه {found} والمتوقع {i}',
    'رویداد {i} شمارهٔ {found} دارد، انتظار {i} بود'],
  seq_none: [
    'no events',
    'لا أحداث',
    'رویدادی نیست'],
  labels_ok: [
    '{n} label(s), none repeated',
    '{n} وسمًا، بلا تكرار',
    '{n} برچسب، بی‌تکرار'],
  labels_bad: [
    'label {label} is used again at seq {seq}',
    'الوسم {label} مستخدم مرة أخرى عند {seq}',
    'برچسب {label} دوباره در {seq} به کار رفته'],
  events_ok: [
    '{n} of {n} match',
    '{n} من {n} متطابقة',
    '{n} از {n} درست'],
  events_bad: [
    '{bad} of {n} do not match',
    '{bad} من {n} غير متطابقة',
    '{bad} از {n} نادرست'],
  sig_ok: [
    'valid, key {kid} ({source})',
    'صحيح، المفتاح {kid} ({source})',
    'معتبر، کلید {kid} ({source})'],
  sig_bad: [
    'INVALID for key {kid} ({source}): the transcript was changed after it was signed, or another key signed it',
    'غير صحيح للمفتاح {kid} ({source}): غُيّر السجلّ بعد توقيعه، أو وقّعه مفتاح آخر',
    'نامعتبر برای کلید {kid} ({source}): رونوشت پس از امضا تغییر کرده یا کلید دیگری آن را امضا کرده'],
  sig_retired: [
    'NOT COUNTED: key {kid} ({source}) was retired at {retired}, and {why}: a retired key\u2019s signature counts only on a record that names its own time, before the key\u2019s retired_at',
    'لا يُعتدّ به: المفتاح {kid} ({source}) أُحيل إلى التقاعد في {retired}، و{why}: توقيع مفتاح متقاعد لا يُعتدّ به إلا على سجل يذكر وقته قبل retired_at',
    'پذیرفته نیست: کلید {kid} ({source}) در {retired} بازنشسته شد، و {why}: امضای کلید بازنشسته فقط روی رکوردی پذیرفته است که زمان خودش را، پیش از retired_at، بگوید'],
  sig_unsupported: [
    'this browser cannot check Ed25519 signatures, so the signature was NOT checked. Use a current browser or the verify CLI.',
    'هذا المتصفح لا يستطيع فحص توقيعات Ed25519، لذلك لم يُفحص التوقيع. استخدم متصفحًا حديثًا أو أداة verify.',
    'این مرورگر نمی‌تواند امضای Ed25519 را بررسی کند، پس امضا بررسی نشد. از مرورگری تازه یا ابزار verify استفاده کنید.'],
  sig_nokey: [
    'no public key to check against: {why}',
    'لا يوجد مفتاح عام للفحص: {why}',
    'کلید عمومی برای بررسی نیست: {why}'],
  sig_missing: [
    'the transcript has no signature',
    'السجلّ بلا توقيع',
    'رونوشت امضا ندارد'],
  sig_format: [
    'malformed signature: {why}',
    'توقيع مشوّه: {why}',
    'امضای بدشکل: {why}'],
  sig_canon: [
    'the transcript cannot be written as canonical JSON: {why}',
    'لا يمكن كتابة السجلّ بصيغة JSON القانونية: {why}',
    'رونوشت را نمی‌توان به JSON متعارف نوشت: {why}'],
  sig_kid_mismatch: [
    'the signature names key {kid}, the pasted key is {pk}',
    'التوقيع يذكر المفتاح {kid}، والمفتاح الملصق هو {pk}',
    'امضا کلید {kid} را نام می‌برد، کلید چسبانده‌شده {pk} است'],
  nokey_file: [
    'the page is not served by a qahwa server; give the operator\u2019s server or paste the server public key',
    'الصفحة ليست مقدَّمة من خادم قهوة؛ أدخل خادم المشغّل أو ألصق المفتاح العام للخادم',
    'این صفحه از سرور قهوه نیامده؛ سرور گرداننده را بدهید یا کلید عمومی سرور را بچسبانید'],
  nokey_fetch: [
    'could not load {url} ({msg}); paste the server public key',
    'تعذّر تحميل {url} ({msg})؛ ألصق المفتاح العام للخادم',
    '{url} بار نشد ({msg})؛ کلید عمومی سرور را بچسبانید'],
  nokey_none: [
    'none of the keys at {url} has key id {kid}',
    'لا يوجد في {url} مفتاح معرّفه {kid}',
    'هیچ کلیدی در {url} شناسهٔ {kid} ندارد'],
  key_pasted_bad: [
    'the pasted public key is not base64 of 32 bytes',
    'المفتاح العام الملصق ليس base64 لـ 32 بايت',
    'کلید چسبانده‌شده base64 یک کلید ۳۲ بایتی نیست'],
  src_pasted: [
    'pasted key',
    'مفتاح ملصق',
    'کلید چسبانده‌شده'],
  src_server: [
    'published at {url}',
    'منشور في {url}',
    'منتشرشده در {url}'],
  err_empty: [
    'Give a match id, a transcript URL, a transcript or a file.',
    'أدخل معرّف مباراة أو رابط سجلّ أو سجلًّا أو ملفًا.',
    'شناسهٔ بازی، نشانی رونوشت، خود رونوشت یا پرونده‌ای بدهید.'],
  err_fetch: [
    'Could not load {url}: {msg}',
    'تعذّر تحميل {url}: {msg}',
    '{url} بار نشد: {msg}'],
  err_http: [
    '{url} answered HTTP {status}: {msg}',
    'أجاب {url} بالرمز HTTP {status}: {msg}',
    '{url} با HTTP {status} پاسخ داد: {msg}'],
  err_409: [
    'this match has not ended yet; its transcript and seed are published when it ends.',
    'لم تنتهِ هذه المباراة بعد؛ يُنشر سجلّها وبذرتها عند انتهائها.',
    'این بازی هنوز تمام نشده؛ رونوشت و بذر آن پس از پایان منتشر می‌شود.'],
  err_404: [
    'no such match on this server.',
    'لا توجد مباراة بهذا المعرّف على هذا الخادم.',
    'چنین بازی‌ای روی این سرور نیست.'],
  err_json: [
    'the transcript is not valid JSON: {msg}',
    'السجلّ ليس JSON صالحًا: {msg}',
    'رونوشت JSON معتبر نیست: {msg}'],
  err_notobj: [
    'the transcript must be a JSON object.',
    'يجب أن يكون السجلّ كائن JSON.',
    'رونوشت باید یک شیء JSON باشد.'],
  err_file_origin: [
    'a match id needs the server the match was played on, and this page is not served by a qahwa server: give the operator\u2019s URL under \u201cOperator\u2019s server\u201d (e.g. https://operator.example), or a transcript URL, or paste the transcript or choose the file.',
    'يحتاج معرّف المباراة إلى الخادم الذي لُعبت عليه المباراة، وهذه الصفحة ليست مقدَّمة من خادم قهوة: أدخل عنوان المشغّل في «خادم المشغّل» (مثل https://operator.example)، أو رابط السجلّ، أو ألصق السجلّ أو اختر الملف.',
    'شناسهٔ بازی به سروری نیاز دارد که بازی روی آن انجام شد، و این صفحه از سرور قهوه نیامده: نشانی گرداننده را در «سرور گرداننده» بدهید (مثلاً https://operator.example)، یا نشانی رونوشت را بدهید، رونوشت را بچسبانید یا پرونده را انتخاب کنید.'],
  err_not_server: [
    '{url} is not a qahwa server ({msg}): give the operator\u2019s URL under \u201cOperator\u2019s server\u201d.',
    '{url} ليس خادم قهوة ({msg}): أدخل عنوان المشغّل في «خادم المشغّل».',
    '{url} سرور قهوه نیست ({msg}): نشانی گرداننده را در «سرور گرداننده» بدهید.'],
  err_badurl: [
    'not an http(s) URL: {url}',
    'ليس رابط http(s): {url}',
    'نشانی http(s) نیست: {url}'],
  err_nofile: [
    'choose a file first.',
    'اختر ملفًا أولًا.',
    'اول پرونده‌ای انتخاب کنید.'],
  bad_expected: [
    'recomputed',
    'المحسوب',
    'محاسبه‌شده'],
  bad_found: [
    'transcript',
    'في السجلّ',
    'در رونوشت'],
  ev_ok: [
    'recomputed \u2713',
    'أعيد حسابه \u2713',
    'بازمحاسبه شد \u2713'],
  ev_bad: [
    'MISMATCH',
    'غير متطابق',
    'ناهمخوان'],
  why_mismatch: [
    'the transcript\u2019s result differs from the recomputation',
    'نتيجة السجلّ تختلف عن إعادة الحساب',
    'نتیجهٔ رونوشت با بازمحاسبه فرق دارد'],
  why_first_diff: [
    'first difference at position {i}',
    'أول اختلاف عند الموضع {i}',
    'نخستین تفاوت در جای {i}'],
  why_dup: [
    'the same item appears twice: {item}',
    'العنصر نفسه يظهر مرتين: {item}',
    'یک مورد دو بار آمده: {item}'],
  why_kind: [
    'unknown event kind {kind}',
    'نوع حدث غير معروف {kind}',
    'نوع رویداد ناشناخته {kind}'],
  why_args: [
    'bad or missing args: {msg}',
    'معاملات خاطئة أو ناقصة: {msg}',
    'آرگومان نادرست یا ناموجود: {msg}'],
  why_items: [
    'cannot order the items: {msg}',
    'تعذّر ترتيب العناصر: {msg}',
    'مرتب کردن موارد ممکن نشد: {msg}'],
  why_label: [
    'bad label: {msg}',
    'وسم خاطئ: {msg}',
    'برچسب نادرست: {msg}'],
  why_nokey: [
    'no match key',
    'لا مفتاح للمباراة',
    'کلید بازی نیست'],
  why_dup_label: [
    'this label was already used at seq {seq}',
    'هذا الوسم استُخدم من قبل عند {seq}',
    'این برچسب پیش‌تر در {seq} به کار رفته'],
  args_assumed: [
    'args missing: assumed {count} dice of {sides} sides',
    'المعاملات ناقصة: افتُرض {count} من النرد بـ {sides} أوجه',
    'آرگومان‌ها نیست: {count} تاس {sides} وجهی فرض شد'],
  group_start: [
    'Start of the match',
    'بداية المباراة',
    'آغاز بازی'],
  group_game: [
    'Game {n}',
    'الجولة {n}',
    'دست بازی {n}'],
  group_round: [
    'Round {n}',
    'الدور {n}',
    'دور {n}'],
  group_hand: [
    'Hand {n}',
    'اليد {n}',
    'دست {n}'],
  group_draws: [
    'Draws',
    'السحوبات',
    'قرعه‌ها'],
  moves: [
    '{n} move(s)',
    '{n} حركة',
    '{n} حرکت'],
  end_resigned: [
    '{who} resigned',
    'انسحب {who}',
    '{who} کناره گرفت'],
  end_abandoned: [
    'The match was abandoned',
    'تُركت المباراة',
    'بازی رها شد'],
  end_other: [
    'End: {reason}',
    'النهاية: {reason}',
    'پایان: {reason}'],
  opening: [
    'Opening roll, attempt {n}',
    'رمية الافتتاح، المحاولة {n}',
    'پرتاب آغازین، تلاش {n}'],
  roll: [
    'Roll {n}',
    'الرمية {n}',
    'پرتاب {n}'],
  dice: [
    'Dice: {count} \u00d7 d{sides}',
    'نرد: {count} \u00d7 d{sides}',
    'تاس: {count} \u00d7 d{sides}'],
  uniform: [
    'Number from 0 to {max}',
    'عدد من 0 إلى {max}',
    'عددی از ۰ تا {max}'],
  dealer_draw: [
    'First dealer',
    'أول موزِّع',
    'نخستین پخش‌کننده'],
  dealer_is: [
    'dealer: {who}',
    'الموزِّع: {who}',
    'پخش‌کننده: {who}'],
  hakem_draw: [
    'Cards dealt face up, one each in turn, until the first ace',
    'أوراق موزعة مكشوفة، واحدة لكل لاعب بالدور، حتى أول آص',
    'کارت‌ها رو به بالا، یکی‌یکی به نوبت، تا نخستین آس'],
  first_hakem: [
    'first hakem: {who}',
    'أول حاكم: {who}',
    'نخستین حاکم: {who}'],
  shuffle: [
    'Shuffle of {n}',
    'خلط {n}',
    'بُر زدن {n}'],
  deal: [
    'Deal',
    'التوزيع',
    'پخش'],
  draw_n: [
    'Draw {n}',
    'السحب {n}',
    'قرعهٔ {n}'],
  engine: [
    'engine double {t}',
    'الحجر المزدوج الأول {t}',
    'جفت آغازین {t}'],
  cut: [
    'cut at {k}',
    'القطع عند {k}',
    'برش در {k}'],
  tapped: [
    'tapped: dealt as shuffled',
    'نُقر على الورق: وُزّع كما خُلط',
    'ضربه زد: همان‌گونه که بُر خورده بود پخش شد'],
  stock: [
    'stock (top first)',
    'ورق السحب (الأعلى أولاً)',
    'دستهٔ برداشت (رویی نخست)'],
  not_dealt: [
    'no cut or tap follows this shuffle, so it was not dealt: shown as shuffled',
    'لا قطع ولا نقر بعد هذا الخلط، فلم يوزَّع: عُرض كما خُلط',
    'پس از این بُر نه برشی آمد نه ضربه‌ای، پس پخش نشد: همان‌گونه که بُر خورده نشان داده شد'],
  deal_unknown: [
    'not a deal this page knows for this game and ruleset: shown as shuffled',
    'ليس توزيعًا تعرفه هذه الصفحة لهذه اللعبة وقواعدها: عُرض كما خُلط',
    'این پخش برای این بازی و این قواعد برای این صفحه شناخته نیست: همان‌گونه که بُر خورده نشان داده شد'],
  piles_note: [
    'piles bottom first: the last card of each is its top',
    'الأكوام من الأسفل: آخر ورقة في كل كومة هي أعلاها',
    'دسته‌ها از زیر: آخرین کارت هر دسته روی آن است'],
  opening_starts: [
    '{who} starts',
    'يبدأ {who}',
    '{who} آغاز می‌کند'],
  opening_again: [
    'equal: roll again',
    'متساويان: تُعاد الرمية',
    'برابر: دوباره ریخته می‌شود'],
  seat: [
    'seat {n}',
    'المقعد {n}',
    'جایگاه {n}'],
  pile: [
    'draw pile',
    'كومة السحب',
    'تودهٔ برداشت'],
  boneyard: [
    'boneyard',
    'الكومة',
    'توده'],
  kitty: [
    'kitty',
    'الكيتي',
    'کیتی'],
  role_hakem: [
    'hakem',
    'الحاكم',
    'حاکم'],
  role_dealer: [
    'dealer',
    'الموزِّع',
    'پخش‌کننده'],
  role_plus: [
    '{role} + {k}',
    '{role} + {k}',
    '{role} + {k}'],
  role_nondealer: [
    'non-dealer',
    'غير الموزِّع',
    'غیرپخش‌کننده'],
  role_pile: [
    '{who}, pile {n}',
    '{who}، الكومة {n}',
    '{who}، تودهٔ {n}'],
  result: [
    'Result',
    'النتيجة',
    'نتیجه'],
  reason: [
    'how it ended',
    'كيف انتهت',
    'چگونه تمام شد'],
  winners: [
    'winners',
    'الفائزون',
    'برندگان'],
  scores: [
    'scores',
    'النقاط',
    'امتیازها'],
  match: [
    'Match',
    'المباراة',
    'بازی'],
  game: [
    'Game',
    'اللعبة',
    'نوع بازی'],
  ruleset: [
    'Ruleset',
    'القواعد',
    'قواعد'],
  seats: [
    'Seats',
    'المقاعد',
    'جایگاه‌ها'],
  created: [
    'Created',
    'أُنشئت',
    'ساخته شد'],
  ended: [
    'Ended',
    'انتهت',
    'تمام شد'],
  nobody: [
    'nobody',
    'لا أحد',
    'هیچ‌کس'],
  seed_src_server: [
    'seed from the server',
    'بذرة من الخادم',
    'بذر از سرور'],
  seed_src_player: [
    'own seed',
    'بذرته الخاصة',
    'بذر خودش'],
  note_probe: [
    'This page checks the signatures and recomputes the chance events in your browser; it is finding out whether it can also replay the game rules here\u2026 The same check from a terminal: {cmd}',
    'تتحقق هذه الصفحة من التواقيع وتعيد حساب الأحداث العشوائية في متصفحك؛ وهي تتبيّن الآن هل تستطيع أيضًا إعادة لعب قواعد اللعبة هنا\u2026 الفحص نفسه من الطرفية: {cmd}',
    'این صفحه امضاها را بررسی و رویدادهای تصادفی را در مرورگر شما دوباره حساب می‌کند؛ اکنون در حال فهمیدن این است که آیا می‌تواند قواعد بازی را هم اینجا دوباره اجرا کند\u2026 همین بررسی از خط فرمان: {cmd}'],
  note_replay: [
    'This page will check the signatures, recompute the chance events and replay the game rules in your browser with the verify CLI\u2019s own Python code (on Pyodide, served with this page); only a match that passes all three is \u201cverified\u201d. The same check from a terminal: {cmd}',
    'ستتحقق هذه الصفحة من التواقيع، وتعيد حساب الأحداث العشوائية، وتعيد لعب قواعد اللعبة في متصفحك بشيفرة Python نفسها التي تستخدمها أداة verify (على Pyodide المقدَّم مع هذه الصفحة)؛ ولا تُعدّ المباراة «متحقَّقًا منها» إلا إذا اجتازت الثلاثة. الفحص نفسه من الطرفية: {cmd}',
    'این صفحه امضاها را بررسی، رویدادهای تصادفی را دوباره حساب و قواعد بازی را در مرورگر شما با همان کد Python ابزار verify (روی Pyodide که همراه این صفحه آمده) دوباره اجرا خواهد کرد؛ فقط بازی‌ای که از هر سه بگذرد «تأیید شده» است. همین بررسی از خط فرمان: {cmd}'],
  note_noreplay: [
    'This page will check the signatures and recompute the chance events in your browser, but it will NOT replay the game rules here ({why}): the moves, the result and the winners stay unverified, so its verdict is at best \u201cincomplete\u201d, never \u201cverified\u201d. The full check from a terminal: {cmd}',
    'ستتحقق هذه الصفحة من التواقيع وتعيد حساب الأحداث العشوائية في متصفحك، لكنها لن تعيد لعب قواعد اللعبة هنا ({why}): تبقى الحركات والنتيجة والفائزون غير متحقَّق منها، فحكمها في أحسن الأحوال «غير كامل» ولا يكون أبدًا «تم التحقق». الفحص الكامل من الطرفية: {cmd}',
    'این صفحه امضاها را بررسی و رویدادهای تصادفی را در مرورگر شما دوباره حساب خواهد کرد، اما قواعد بازی را اینجا دوباره اجرا نخواهد کرد ({why}): حرکت‌ها، نتیجه و برندگان تأییدنشده می‌مانند، پس حکم آن در بهترین حالت «ناقص» است و هرگز «تأیید شد» نیست. بررسی کامل از خط فرمان: {cmd}'],
  off_file: [
    'the page was opened from a file',
    'فُتحت الصفحة من ملف',
    'صفحه از یک پرونده باز شده'],
  off_server: [
    'this server has no Python runtime for the page',
    'لا يوفّر هذا الخادم بيئة Python للصفحة',
    'این سرور محیط Python صفحه را ندارد'],
  off_failed: [
    'Python could not be started: {msg}',
    'تعذّر تشغيل Python: {msg}',
    'Python راه‌اندازی نشد: {msg}'],
  off_error: [
    '{msg}',
    '{msg}',
    '{msg}'],
  no_workers: [
    'this browser has no Web Workers',
    'هذا المتصفح لا يدعم Web Workers',
    'این مرورگر Web Worker ندارد'],
  v2_no_lock: [
    'the transcript has no lock record',
    'لا يحتوي السجلّ على سجلّ القفل',
    'رونوشت رکورد قفل ندارد'],
  v2_lock_sig_bad: [
    'the lock\u2019s signature: {why}',
    'توقيع القفل: {why}',
    'امضای قفل: {why}'],
  v2_chain_canon: [
    'no canonical JSON: {msg}',
    'لا يمكن كتابته JSON قانونيًا: {msg}',
    'JSON متعارف ساخته نمی‌شود: {msg}'],
  v2_chain_ok: [
    'head {h}',
    'رأس السلسلة {h}',
    'سرِ زنجیره {h}'],
  v2_chain_bad: [
    'the events chain to {h}, the transcript says {found}',
    'تتسلسل الأحداث إلى {h}، والسجلّ يقول {found}',
    'رویدادها به {h} زنجیر می‌شوند، رونوشت می‌گوید {found}'],
  v2_sig_unkeyed: [
    'event {i} carries a sig, but seat {seat} registered no key in the lock',
    'الحدث {i} يحمل توقيعًا، لكن المقعد {seat} لم يسجّل مفتاحًا في القفل',
    'رویداد {i} امضا دارد، اما صندلی {seat} کلیدی در قفل ثبت نکرده'],
  v2_sig_nocauser: [
    'event {i} carries a sig, but no seat caused it',
    'الحدث {i} يحمل توقيعًا، لكن لم يُحدثه أي مقعد',
    'رویداد {i} امضا دارد، اما هیچ صندلی‌ای آن را پدید نیاورده'],
  v2_sig_missing: [
    'event {i} ({type} by keyed seat {seat}) carries no signature',
    'الحدث {i} ({type} من المقعد {seat} ذي المفتاح) لا يحمل توقيعًا',
    'رویداد {i} ({type} از صندلی کلیددار {seat}) امضا ندارد'],
  v2_sig_bad: [
    'event {i} ({type} by seat {seat}): its signature is not seat {seat}\u2019s over this event after chain[{p}]',
    'الحدث {i} ({type} من المقعد {seat}): توقيعه ليس توقيع المقعد {seat} على هذا الحدث بعد chain[{p}]',
    'رویداد {i} ({type} از صندلی {seat}): امضای آن امضای صندلی {seat} بر این رویداد پس از chain[{p}] نیست'],
  v2_sig_nochain: [
    'not checked: the event chain could not be computed',
    'لم يُفحص: تعذّر حساب سلسلة الأحداث',
    'بررسی نشد: زنجیرهٔ رویدادها حساب نشد'],
  v2_sigs_ok: [
    '{n} event(s) of keyed seat(s) [{seats}] signed by their keys from the lock',
    '{n} حدث من المقاعد ذات المفاتيح [{seats}] موقَّعة بمفاتيحها من القفل',
    '{n} رویداد از صندلی‌های کلیددار [{seats}] با کلیدهایشان از قفل امضا شده'],
  v2_sigs_none: [
    'no seat registered a key: no event is signed',
    'لم يسجّل أي مقعد مفتاحًا: لا حدث موقَّع',
    'هیچ صندلی‌ای کلید ثبت نکرده: هیچ رویدادی امضا نشده'],
  v2_seats_count: [
    'the transcript has {n} seat(s), the lock {m}',
    'في السجلّ {n} مقعد، وفي القفل {m}',
    'رونوشت {n} صندلی دارد، قفل {m}'],
  v2_nonce_bad: [
    'seat {i}\u2019s nonce is not 64 lowercase hex',
    'الـ nonce للمقعد {i} ليس 64 رمزًا ست عشريًا صغيرًا',
    'nonce صندلی {i} ۶۴ رقم هگز کوچک نیست'],
  v2_seed_commit_bad: [
    'seat {i}\u2019s seed and nonce give commitment {c}, the lock holds {lock}',
    'بذرة المقعد {i} والـ nonce يعطيان الالتزام {c}، والقفل يحمل {lock}',
    'بذر و nonce صندلی {i} تعهد {c} را می‌دهند، قفل {lock} را دارد'],
  v2_seats_ok: [
    '{n} seat seed(s) match their commitments in the lock',
    '{n} بذرة مقعد تطابق التزاماتها في القفل',
    '{n} بذر صندلی با تعهدهایشان در قفل می‌خوانند'],
  v2_roll_bad: [
    'event {i}: a roll value of seat {seat} that is not 64 hex on a committed chain',
    'الحدث {i}: قيمة رمي للمقعد {seat} ليست 64 رمزًا ست عشريًا على سلسلة ملتزَم بها',
    'رویداد {i}: مقدار پرتابی از صندلی {seat} که ۶۴ رقم هگز روی زنجیره‌ای متعهد نیست'],
  v2_roll_chain: [
    'event {i}: roll value {v} is not seat {seat}\u2019s next value on its chain',
    'الحدث {i}: قيمة الرمي {v} ليست القيمة التالية للمقعد {seat} على سلسلته',
    'رویداد {i}: مقدار پرتاب {v} مقدار بعدی صندلی {seat} روی زنجیره‌اش نیست'],
  v2_fresh_count: [
    'event {i} ({label}): {k} roll value(s) before it, not the roller\u2019s and the opponent\u2019s',
    'الحدث {i} ({label}): قبله {k} قيمة رمي، لا قيمة الرامي وقيمة الخصم',
    'رویداد {i} ({label}): پیش از آن {k} مقدار پرتاب آمده، نه مقدار پرتاب‌کننده و حریف'],
  v2_fresh_label: [
    'event {i}: the label ends {found}, the roll values give {want}',
    'الحدث {i}: ينتهي الوسم بـ {found}، وقيم الرمي تعطي {want}',
    'رویداد {i}: برچسب به {found} ختم می‌شود، مقدارهای پرتاب {want} را می‌دهند'],
  v2_fresh_ok: [
    '{n} fresh roll(s): every value on its seat\u2019s chain, every label from the roller\u2019s and the opponent\u2019s values',
    '{n} رمية طازجة: كل قيمة على سلسلة مقعدها، وكل وسم من قيمتي الرامي والخصم',
    '{n} پرتاب تازه: هر مقدار روی زنجیرهٔ صندلی خودش، هر برچسب از مقدارهای پرتاب‌کننده و حریف'],
  v2_chance_later: [
    'not recomputed here (a seat never revealed, or a bad seed): the rules replay checks the {n} chance event(s)',
    'لم يُعَد حسابها هنا (مقعد لم يكشف بذرته، أو بذرة سيئة): إعادة لعب القواعد تفحص {n} حدثًا عشوائيًا',
    'اینجا دوباره حساب نشد (صندلی‌ای بذرش را آشکار نکرد، یا بذر نادرست است): بازاجرای قواعد {n} رویداد تصادفی را بررسی می‌کند'],
  chk_receipts: [
    'Receipts',
    'الإيصالات',
    'رسیدها'],
  chk_own_seed: [
    'Your own seed',
    'بذرتك',
    'بذر خودتان'],
  rc_json: [
    'the receipts are not JSON: {msg}',
    'الإيصالات ليست JSON: {msg}',
    'رسیدها JSON نیستند: {msg}'],
  rc_parse: [
    'receipt {i}: {msg}',
    'الإيصال {i}: {msg}',
    'رسید {i}: {msg}'],
  rc_not: [
    'receipt {i} is not a qahwa-fair/2 receipt',
    'الإيصال {i} ليس إيصال qahwa-fair/2',
    'رسید {i} رسید qahwa-fair/2 نیست'],
  rc_match: [
    'the receipt for seq {seq} is of match {found}',
    'الإيصال للحدث {seq} يخص المباراة {found}',
    'رسیدِ seq {seq} مال بازی {found} است'],
  rc_sig: [
    'the receipt for seq {seq}: its signature: {why}',
    'الإيصال للحدث {seq}: توقيعه: {why}',
    'رسیدِ seq {seq}: امضای آن: {why}'],
  rc_nochain: [
    'the receipt for seq {seq}: the transcript\u2019s chain could not be computed',
    'الإيصال للحدث {seq}: تعذّر حساب سلسلة السجلّ',
    'رسیدِ seq {seq}: زنجیرهٔ رونوشت حساب نشد'],
  rc_disagree: [
    'receipt for seq {seq} disagrees with the transcript: the server signed chain {c} there, the transcript chains to {at} (signed proof that the server rewrote the match)',
    'الإيصال للحدث {seq} يخالف السجلّ: وقّع الخادم هناك السلسلة {c}، والسجلّ يتسلسل إلى {at} (دليل موقَّع على أن الخادم أعاد كتابة المباراة)',
    'رسیدِ seq {seq} با رونوشت نمی‌خواند: سرور آنجا زنجیرهٔ {c} را امضا کرده، رونوشت به {at} زنجیر می‌شود (مدرک امضاشده‌ای که سرور بازی را بازنویسی کرده)'],
  rc_noevent: [
    'receipt for seq {seq} disagrees with the transcript: the server signed chain {c} there, the transcript has no event {seq} (signed proof that the server rewrote the match)',
    'الإيصال للحدث {seq} يخالف السجلّ: وقّع الخادم هناك السلسلة {c}، وليس في السجلّ حدث {seq} (دليل موقَّع على أن الخادم أعاد كتابة المباراة)',
    'رسیدِ seq {seq} با رونوشت نمی‌خواند: سرور آنجا زنجیرهٔ {c} را امضا کرده، رونوشت رویداد {seq} ندارد (مدرک امضاشده‌ای که سرور بازی را بازنویسی کرده)'],
  rc_ok: [
    '{n} receipt(s) signed by the server agree with the transcript\u2019s chain',
    '{n} إيصال موقَّع من الخادم يوافق سلسلة السجلّ',
    '{n} رسید امضاشده از سرور با زنجیرهٔ رونوشت می‌خواند'],
  rc_ok_heads: [
    '{n} receipt(s) and {h} signed head(s) signed by the server agree with the transcript\u2019s chain, no event after a head stamped before it',
    '{n} إيصال و{h} رأس موقَّع من الخادم توافق سلسلة السجلّ، ولا حدث بعد رأسٍ مختوم قبله',
    '{n} رسید و {h} سرِ امضاشده از سرور با زنجیرهٔ رونوشت می‌خوانند و هیچ رویدادی پس از یک سر، پیش از آن مُهر نخورده'],
  rc_at: [
    'the receipt for seq {seq} says at {at}, the transcript stamps it {own}: the server signed two times for one head',
    'الإيصال للحدث {seq} يقول at {at}، والسجلّ يختمه {own}: وقّع الخادم وقتين لرأس واحد',
    'رسیدِ seq {seq} می‌گوید at {at}، رونوشت آن را {own} مُهر زده: سرور برای یک سر دو زمان امضا کرده'],
  rc_backdated: [
    'event {seq} is stamped {at}, before the signed head the server showed at {h}, which ends at seq {hs}: signed proof the server back-dated it',
    'الحدث {seq} مختوم {at}، قبل الرأس الموقَّع الذي أظهره الخادم في {h} وينتهي عند {hs}: دليل موقَّع على أن الخادم قدّم تاريخه',
    'رویداد {seq} با {at} مُهر خورده، پیش از سرِ امضاشده‌ای که سرور در {h} نشان داد و به seq {hs} ختم می‌شود: مدرک امضاشده‌ای که سرور تاریخش را عقب برده'],
  sf_bad: [
    'the seat file: {why}',
    'ملف المقعد: {why}',
    'فایل صندلی: {why}'],
  own_seat: [
    'seat {seat} is not a seat of the lock',
    'المقعد {seat} ليس من مقاعد القفل',
    'صندلی {seat} از صندلی‌های قفل نیست'],
  own_nonce: [
    'the nonce is not 64 lowercase hexadecimal characters',
    'الـ nonce ليس 64 رمزًا ست عشريًا صغيرًا',
    'nonce ۶۴ نویسهٔ هگز کوچک نیست'],
  own_seed_bad: [
    'the client seed: {why}',
    'بذرة اللاعب: {why}',
    'بذر بازیکن: {why}'],
  own_commit: [
    'seat {seat}\u2019s seed commitment in the lock is {want}, your seed and nonce give {c}',
    'التزام بذرة المقعد {seat} في القفل هو {want}، وبذرتك والـ nonce يعطيان {c}',
    'تعهد بذر صندلی {seat} در قفل {want} است، بذر و nonce شما {c} را می‌دهند'],
  own_shown: [
    'the transcript reveals {found} at seat {seat}, not your seed',
    'يكشف السجلّ {found} في المقعد {seat}، لا بذرتك',
    'رونوشت در صندلی {seat} مقدار {found} را آشکار می‌کند، نه بذر شما را'],
  own_ok: [
    'seat {seat} holds exactly your seed (its commitment in the lock and the revealed seed)',
    'المقعد {seat} يحمل بذرتك بالضبط (التزامها في القفل والبذرة المكشوفة)',
    'صندلی {seat} دقیقاً بذر شما را دارد (تعهدش در قفل و بذر آشکارشده)'],
  py_t_lock: [
    'Lock (this match\u2019s)',
    'القفل (لهذه المباراة)',
    'قفل (مال همین بازی)'],
  py_t_seats: [
    'Seats as in the lock',
    'المقاعد كما في القفل',
    'صندلی‌ها مطابق قفل'],
  py_t_commitment: [
    'Server seed commitment',
    'التزام بذرة الخادم',
    'تعهد بذر سرور'],
  py_t_reveals: [
    'Seed reveals',
    'كشف البذور',
    'آشکارسازی بذرها'],
  py_t_fresh_rolls: [
    'Fresh rolls (rules replay)',
    'الرميات الطازجة (إعادة لعب القواعد)',
    'پرتاب‌های تازه (بازاجرای قواعد)'],
  py_t_cut: [
    'Drawn cut',
    'القطع بالسحب',
    'بُرش با قرعه'],
  py_t_chain: [
    'Event chain (rules replay)',
    'سلسلة الأحداث (إعادة لعب القواعد)',
    'زنجیرهٔ رویدادها (بازاجرای قواعد)'],
  py_t_sealed: [
    'Sealed deal (qahwa-fair/3)',
    'التوزيع المختوم (qahwa-fair/3)',
    'پخش مهروموم‌شده (qahwa-fair/3)'],
  py_t_match_key: [
    'Match key K (rules replay)',
    'مفتاح المباراة K (إعادة لعب القواعد)',
    'کلید بازی K (بازاجرای قواعد)'],
  py_t_times: [
    'Event times and timeouts (rules replay)',
    'أوقات الأحداث وانتهاء المهل (إعادة لعب القواعد)',
    'زمان رویدادها و اتمام وقت‌ها (بازاجرای قواعد)'],
  py_ok_lock: [
    'the lock is this match\u2019s: match id, game, ruleset and commitment',
    'القفل يخص هذه المباراة: معرّف المباراة واللعبة والقواعد والالتزام',
    'قفل مال همین بازی است: شناسهٔ بازی، بازی، قواعد و تعهد'],
  py_ok_seats: [
    'the transcript\u2019s seats are the lock\u2019s: names, house, keys and roll chains',
    'مقاعد السجلّ هي مقاعد القفل: الأسماء والمنزل والمفاتيح وسلاسل الرمي',
    'صندلی‌های رونوشت همان صندلی‌های قفل‌اند: نام‌ها، خانه، کلیدها و زنجیره‌های پرتاب'],
  py_ok_commitment: [
    'SHA-256(server seed) is the committed value',
    'SHA-256(بذرة الخادم) هو القيمة الملتزَم بها',
    'SHA-256(بذر سرور) همان مقدار متعهدشده است'],
  py_ok_reveals: [
    'every revealed client seed and nonce matches its commitment in the lock',
    'كل بذرة لاعب وnonce مكشوفين يطابقان التزامهما في القفل',
    'هر بذر بازیکن و nonce آشکارشده با تعهدش در قفل می‌خواند'],
  py_ok_fresh_rolls: [
    'every fresh roll is on its seat\u2019s chain and drawn at the label of both values',
    'كل رمية طازجة على سلسلة مقعدها ومسحوبة عند وسم القيمتين',
    'هر پرتاب تازه روی زنجیرهٔ صندلی خودش است و با برچسب هر دو مقدار کشیده شده'],
  py_ok_cut: [
    'every cut was drawn, none chosen',
    'كل قطع كان بالسحب، ولم يُختر أي منها',
    'هر بُرش با قرعه بود، هیچ‌کدام انتخابی نبود'],
  py_ok_chain: [
    'the event chain recomputed from the lock and the events is the transcript\u2019s',
    'سلسلة الأحداث المعاد حسابها من القفل والأحداث هي سلسلة السجلّ',
    'زنجیرهٔ رویدادها که از قفل و رویدادها دوباره حساب شد همان زنجیرهٔ رونوشت است'],
  py_ok_sealed: [
    'every key, shuffle proof, share and opening verified; each hand opened whole with the revealed keys, its deal and its rules rechecked',
    'كل مفتاح وإثبات خلط وحصة وفتح تم التحقق منه؛ فُتحت كل يد كاملةً بالمفاتيح المكشوفة وأعيد فحص توزيعها وقواعدها',
    'هر کلید، اثبات بُر زدن، سهم و گشودن وارسی شد؛ هر دست با کلیدهای آشکارشده کامل گشوده و پخش و قواعدش دوباره وارسی شد'],
  py_ok_match_key: [
    'K = HMAC-SHA512 of the server seed over every seat\u2019s seed and nonce',
    'K = HMAC-SHA512 لبذرة الخادم على بذرة كل مقعد والـ nonce',
    'K = HMAC-SHA512 بذر سرور روی بذر و nonce هر صندلی'],
  py_ok_times: [
    'the event times never go back, and every timeout came at or after its deadline',
    'أوقات الأحداث لا تعود إلى الوراء، وكل انتهاء مهلة جاء عند موعده النهائي أو بعده',
    'زمان رویدادها هرگز به عقب برنمی‌گردد و هر اتمام وقت در مهلتش یا پس از آن آمد'],
  chk_sealed: [
    'Sealed deal: who checked the proofs',
    'التوزيع المختوم: من فحص البراهين',
    'پخش مهرشده: چه کسی اثبات‌ها را بررسی کرد'],
  sealed_js: [
    'every key, shuffle proof, share, opening and revealed key above was checked in this browser by the page\u2019s own verifier (sealed-verify.js over @noble/curves), not by code of the server\u2019s',
    'كل مفتاح وبرهان خلط وحصة وكشف ومفتاح مكشوف أعلاه فُحص في هذا المتصفح بمدقّق الصفحة نفسها (sealed-verify.js فوق @noble/curves)، لا بشيفرة من الخادم',
    'هر کلید، اثبات بُر زدن، سهم، گشودن و کلید آشکارشدهٔ بالا در همین مرورگر با بررسی‌کنندهٔ خود صفحه (sealed-verify.js روی @noble/curves) بررسی شد، نه با کدی از سرور'],
  sealed_js_missing: [
    'the page\u2019s sealed-deal verifier (sealed-verify.js) did not run: the proofs were not checked here',
    'لم يعمل مدقّق التوزيع المختوم في الصفحة (sealed-verify.js): لم تُفحص البراهين هنا',
    'بررسی‌کنندهٔ پخش مهرشدهٔ صفحه (sealed-verify.js) اجرا نشد: اثبات‌ها اینجا بررسی نشدند'],
  py_ok_other: [
    'checked by the verify CLI\u2019s Python (its words below)',
    'فحصته شيفرة Python لأداة verify (نصّها أدناه)',
    'کد Python ابزار verify آن را بررسی کرد (متن آن در پایین)'],
  py_bad: [
    'the verify CLI\u2019s Python rejects this (its words below)',
    'ترفض شيفرة Python لأداة verify هذا (نصّها أدناه)',
    'کد Python ابزار verify این را رد می‌کند (متن آن در پایین)'],
  py_skip: [
    'not checked (the verify CLI\u2019s words below)',
    'لم يُفحص (نصّ أداة verify أدناه)',
    'بررسی نشد (متن ابزار verify در پایین)'],
  stats_title: [
    'Were the dice unusual? The statistics of verify stats, for this match',
    'هل كان النرد غير عادي؟ إحصاءات verify stats لهذه المباراة',
    'آیا تاس‌ها غیرعادی بودند؟ آمار verify stats برای این بازی'],
  stats_all: [
    'every seat',
    'كل المقاعد',
    'همهٔ صندلی‌ها'],
  stats_test: [
    'test',
    'الاختبار',
    'آزمون'],
  stats_n: [
    'n',
    'n',
    'n'],
  stats_observed: [
    'observed',
    'المرصود',
    'مشاهده‌شده'],
  stats_expected: [
    'expected',
    'المتوقَّع',
    'مورد انتظار'],
  stats_p: [
    'p (corrected)',
    'p (بعد التصحيح)',
    'p (اصلاح‌شده)'],
  st_dice_faces: [
    'dice faces (chi-square)',
    'أوجه النرد (مربع كاي)',
    'وجه‌های تاس (خی‌دو)'],
  st_doubles: [
    'doubles (exact binomial test)',
    'الأزواج (اختبار ذو الحدين الدقيق)',
    'جفت‌ها (آزمون دوجمله‌ای دقیق)'],
  st_pips: [
    'pips per roll (z-test)',
    'النقاط في كل رمية (اختبار z)',
    'خال‌ها در هر پرتاب (آزمون z)'],
  st_hand_cards: [
    'first-hand strength: high-card points (A 4, K 3, Q 2, J 1, jokers 4)',
    'قوة اليد الأولى: نقاط الأوراق العالية (A 4، K 3، Q 2، J 1، الجوكر 4)',
    'قدرت دست نخست: امتیاز برگ‌های بالا (A 4، K 3، Q 2، J 1، ژوکر 4)'],
  st_hand_dominoes: [
    'first-hand strength: doubles in the hand',
    'قوة اليد الأولى: الأحجار المزدوجة في اليد',
    'قدرت دست نخست: جفت‌ها در دست'],
  stats_too_few: [
    'too few dice for a test ({n}; 30 needed)',
    'نرد أقل من أن يُختبر ({n}؛ يلزم 30)',
    'تاس‌ها برای آزمون کم‌اند ({n}؛ ۳۰ لازم است)'],
  stats_nothing: [
    'nothing unusual',
    'لا شيء غير عادي',
    'چیز غیرعادی‌ای نیست'],
  stats_unusual: [
    'unusual at p = {p}, which happens by chance to about one player in {n}',
    'غير عادي عند p = {p}، وهذا يحدث بالصدفة لنحو لاعب واحد من كل {n}',
    'غیرعادی در p = {p}؛ چنین چیزی به تصادف برای حدود یک بازیکن از هر {n} بازیکن پیش می‌آید'],
  stats_none: [
    'nothing to test: no dice or dealt hands of this player in this match',
    'لا شيء لاختباره: لا نرد ولا أيدٍ موزَّعة لهذا اللاعب في هذه المباراة',
    'چیزی برای آزمون نیست: در این بازی تاس یا دست پخش‌شده‌ای از این بازیکن نیست'],
  stats_by_py: [
    'Computed for {who} by the verify CLI\u2019s own Python (verify_cli.stats on Pyodide), only because the transcript checked out; the p-values are corrected for the {k} test(s) shown (Holm). Over many matches: verify stats FILES\u2026',
    'حُسبت لـ {who} بشيفرة Python نفسها التي تستخدمها أداة verify (verify_cli.stats على Pyodide)، لأن السجلّ اجتاز الفحص فقط؛ قيم p مصحَّحة لعدد الاختبارات المعروضة {k} (Holm). على مباريات كثيرة: verify stats FILES\u2026',
    'برای {who} با همان کد Python ابزار verify (verify_cli.stats روی Pyodide) حساب شد، فقط چون رونوشت از بررسی گذشت؛ مقدارهای p برای {k} آزمون نمایش‌داده‌شده اصلاح شده‌اند (Holm). برای بازی‌های بسیار: verify stats FILES\u2026'],
  stats_by_js: [
    'Computed for {who} in JavaScript with the same tests as the verify CLI\u2019s verify stats, only because the transcript checked out; the p-values are corrected for the {k} test(s) shown (Holm). Over many matches: verify stats FILES\u2026',
    'حُسبت لـ {who} في JavaScript بالاختبارات نفسها التي يجريها verify stats في أداة verify، لأن السجلّ اجتاز الفحص فقط؛ قيم p مصحَّحة لعدد الاختبارات المعروضة {k} (Holm). على مباريات كثيرة: verify stats FILES\u2026',
    'برای {who} در JavaScript با همان آزمون‌های verify stats ابزار verify حساب شد، فقط چون رونوشت از بررسی گذشت؛ مقدارهای p برای {k} آزمون نمایش‌داده‌شده اصلاح شده‌اند (Holm). برای بازی‌های بسیار: verify stats FILES\u2026']
};
var I18N: any = {};
LANGS.forEach(function (l, i) {
  I18N[l] = {};
  Object.keys(STRINGS).forEach(function (k) {
    if (typeof STRINGS[k][i] === 'string') I18N[l][k] = STRINGS[k][i];
  });
});
var RTL = { ar: true, fa: true };
var lang = 'en';

function t(key, params?) {
  var s = (I18N[lang] && I18N[lang][key]) || I18N.en[key] || key;
  return s.replace(/\{(\w+)\}/g, function (m, name) {
    return params && params[name] !== undefined ? String(params[name]) : m;
  });
}

// ---------------------------------------------------------------------------------------
// Bytes.
// ---------------------------------------------------------------------------------------
var encoder = new TextEncoder();


// utf8 (a lone surrogate refused), u32be, lp: clients/ts's (src/bytes.ts)
function concat(parts) { return concatBytes(...parts); }
function toHex(bytes) {
  var s = '', b = new Uint8Array(bytes);
  for (var i = 0; i < b.length; i++) s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
  return s;
}
function fromHex(h) {
  if (typeof h !== 'string' || h.length % 2 || !/^[0-9a-fA-F]*$/.test(h)) throw new Error('not hexadecimal');
  var out = new Uint8Array(h.length / 2);
  for (var i = 0; i < out.length; i++) out[i] = parseInt(h.substr(2 * i, 2), 16);
  return out;
}
function fromB64(s) {
  s = String(s).trim();
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4) throw new Error('not base64');
  var bin = atob(s), out = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
function ascii(s) {
  if (typeof s !== 'string' || s === '' || s.length > 256 || !/^[\x20-\x7e]+$/.test(s)) {
    throw new Error('label ' + JSON.stringify(s) + ' must be 1 to 256 printable ASCII characters');
  }
  return encoder.encode(s);
}

var subtle = (typeof crypto !== 'undefined' && crypto.subtle) || null;
function needSubtle() {
  if (!subtle) throw new Error('this browser has no Web Crypto (crypto.subtle); open the page over https or from a file');
}
async function sha256(bytes) { needSubtle(); return new Uint8Array(await subtle.digest('SHA-256', bytes)); }

// ---------------------------------------------------------------------------------------
// fairness-v1.md §1–4.
// ---------------------------------------------------------------------------------------
var PROTOCOL = 'qahwa-fair/1';

// seedProblem (fairness-v1.md §2: 1 to 128 UTF-8 bytes, printable, no NUL): clients/ts's (src/fair.ts)

function parseSeed(seedHex) {
  if (typeof seedHex !== 'string' || !/^[0-9a-fA-F]{64}$/.test(seedHex)) {
    throw new Error('server seed must be 64 hexadecimal characters');
  }
  return fromHex(seedHex);
}

async function commitment(seedHex) { return toHex(await sha256(parseSeed(seedHex))); }

// K of qahwa-fair/1 (v1 §3): clients/ts's matchKeyV1 (src/fair.ts); a client seed it refuses
// is named here in the page's words
async function matchKeyBytes(seedHex, matchId, game, ruleset, clientSeeds) {
  var seed = parseSeed(seedHex);
  (Array.isArray(clientSeeds) ? clientSeeds : []).forEach(function (cs, i) {
    var p = seedProblem(cs);
    if (p) throw new Error('client seed ' + i + ' is not allowed: ' + I18N.en[p[0] as string].replace('{n}', p[1] ? (p[1] as any).n : ''));
  });
  return matchKeyV1(seed, matchId, game, ruleset, clientSeeds);
}


var RANKS = '23456789TJQKA', SUITS = 'CDHS';
function deck52() {
  var out = [];
  for (var s = 0; s < 4; s++) for (var r = 0; r < 13; r++) out.push(RANKS[r] + SUITS[s]);
  return out;
}
function deckQahve() {
  return deck52().filter(function (c) { return c !== '2D' && c !== '2H'; }).concat(['JB', 'JR']);
}
function tiles(m) {
  var out = [];
  for (var a = 0; a <= m; a++) for (var b = a; b <= m; b++) out.push(a + '-' + b);
  return out;
}
var CARD_ORDER: any = {};
deck52().concat(['JB', 'JR']).forEach(function (c, i) { CARD_ORDER[c] = i; });

function parseTile(code) {
  var m = /^([0-9]+)-([0-9]+)$/.exec(code);
  if (!m) throw new Error('not a tile code: ' + JSON.stringify(code));
  var a = parseInt(m[1], 10), b = parseInt(m[2], 10);
  if (a > b || (a + '-' + b) !== code) throw new Error('not a canonical tile code: ' + JSON.stringify(code));
  return [a, b];
}
function isInt(x) { return typeof x === 'number' && Number.isInteger(x); }

// A recorded shuffle's input: the canonical §4 order restricted to the result's codes
// (cards: deck52 then JB, JR; tiles by (a, b); integers ascending) — as fairness.canonical_sort.
function canonicalSort(codes) {
  var items = codes.slice();
  if (items.length === 0) return [];
  if (items.every(isInt)) return items.sort(function (x, y) { return x - y; });
  if (items.every(function (c) { return typeof c === 'string' && Object.prototype.hasOwnProperty.call(CARD_ORDER, c); })) {
    return items.sort(function (x, y) { return CARD_ORDER[x] - CARD_ORDER[y]; });
  }
  if (items.every(function (c) { return typeof c === 'string'; })) {
    var keyed = items.map(function (c) { return [parseTile(c), c]; });
    keyed.sort(function (x, y) { return x[0][0] - y[0][0] || x[0][1] - y[0][1]; });
    return keyed.map(function (k) { return k[1]; });
  }
  throw new Error('shuffle result mixes item kinds');
}

// ---------------------------------------------------------------------------------------
// Canonical JSON, byte-identical to Python's
// json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).
// The transcript's own text is parsed here (not with JSON.parse) so that numbers keep
// their written form: 1 and 1.0 differ in Python, and big integers stay exact.
// ---------------------------------------------------------------------------------------

// 'valid' or 'invalid': clients/ts verifyEd25519 (Web Crypto's Ed25519 where the browser has
// it, else the audited @noble/ed25519), so no browser leaves a signature unchecked
async function verifyEd25519(pub, sig, msg) {
  return (await verifyEd(pub, sig, msg)) ? 'valid' : 'invalid';
}

// ---------------------------------------------------------------------------------------
// Checking one transcript.
// ---------------------------------------------------------------------------------------
function sameJson(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
function msg(key, params?) { return { key: key, params: params || {} }; }

async function keyIdOf(pub) { return toHex(await sha256(pub)).slice(0, 16); }

// The time a signed record names as its own (as verify_cli.keys.record_time): a receipt's
// at, a lock's locked_at, a reveal record's and a qahwa-fair/2 or /3 transcript's ended_at,
// else the first of timestamp, ended_at, locked_at, created_at. [field, value].

// keys: {pasted: b64 or '', fetched: [{key_id, public_key, retired_at}] | null, fetchError, keysUrl}
async function checkSignature(rawTree, doc, keys) {
  var sig = doc.signature;
  if (sig === undefined || sig === null) return { ok: false, m: msg('sig_missing') };
  if (typeof sig !== 'object' || sig.alg !== 'ed25519' || typeof sig.value !== 'string') {
    return { ok: false, m: msg('sig_format', { why: 'expected {"alg": "ed25519", "key_id", "value"}' }) };
  }
  var sigBytes;
  try { sigBytes = fromB64(sig.value); } catch (e) { return { ok: false, m: msg('sig_format', { why: 'value is not base64' }) }; }
  var body;
  try { body = utf8(serialize(rawTree, 'signature')); } catch (e) { return { ok: false, m: msg('sig_canon', { why: e.message }) }; }
  var pub, source, found = null, kid = typeof sig.key_id === 'string' ? sig.key_id : '?';
  if (keys.pasted) {
    try { pub = fromB64(keys.pasted); } catch (e) { pub = null; }
    if (!pub || pub.length !== 32) return { ok: false, m: msg('sig_nokey', { why: t('key_pasted_bad') }) };
    source = msg('src_pasted');
    var pk = await keyIdOf(pub);
    if (typeof sig.key_id === 'string' && sig.key_id !== pk) {
      return { ok: false, m: msg('sig_kid_mismatch', { kid: kid, pk: pk }) };
    }
    kid = pk;
  } else if (keys.fetched) {
    found = keys.fetched.filter(function (k) { return k && k.key_id === sig.key_id; })[0];
    if (!found) return { ok: null, m: msg('sig_nokey', { why: msg('nokey_none', { url: keys.keysUrl, kid: kid }) }) };
    try { pub = fromB64(found.public_key); } catch (e) { pub = null; }
    if (!pub || pub.length !== 32) return { ok: false, m: msg('sig_format', { why: 'the published key is not base64 of 32 bytes' }) };
    if ((await keyIdOf(pub)) !== sig.key_id) {
      return { ok: false, m: msg('sig_format', { why: 'the published key does not match its key id' }) };
    }
    source = msg('src_server', { url: keys.keysUrl });
  } else {
    return { ok: null, m: msg('sig_nokey', { why: keys.fetchError || msg('nokey_file') }) };
  }
  var r = await verifyEd25519(pub, sigBytes, body);
  if (r === 'unsupported') return { ok: null, m: msg('sig_unsupported'), unsupported: true };
  var late = r === 'valid' && found ? retiredProblem(doc, found.retired_at) : null;
  if (late) return { ok: false, m: msg('sig_retired', { kid: kid, source: source, retired: found.retired_at, why: late }) };
  if (r === 'valid') return { ok: true, m: msg('sig_ok', { kid: kid, source: source }) };
  return { ok: false, m: msg('sig_bad', { kid: kid, source: source }) };
}

function firstDiff(a, b) {
  var l = Math.max(a.length, b.length);
  for (var i = 0; i < l; i++) if (!sameJson(a[i], b[i])) return i;
  return -1;
}

async function checkChance(ev, stream) {
  // Returns {ok, expected, why: msg|null, note: msg|null}.
  var kind = ev.kind, res = ev.result, args = ev.args || {};
  if (kind === 'dice' || kind === 'uniform') {
    var count = args.count, sides = args.sides, note = null, exp;
    if (kind === 'dice' && ev.args === undefined && Array.isArray(res)) {
      count = res.length; sides = 6; note = msg('args_assumed', { count: count, sides: sides });
    }
    try { exp = kind === 'dice' ? await stream.dice(count, sides) : await stream.uniform(args.n); } catch (e) {
      return { ok: false, why: msg('why_args', { msg: e.message }) };
    }
    return { ok: sameJson(exp, res), expected: exp, note: note, why: sameJson(exp, res) ? null : msg('why_mismatch') };
  }
  if (kind === 'shuffle') {
    if (!Array.isArray(res)) return { ok: false, why: msg('why_items', { msg: 'result is not a list' }) };
    var seen = new Set();
    for (var i = 0; i < res.length; i++) {
      var key = JSON.stringify(res[i]);
      if (seen.has(key)) return { ok: false, why: msg('why_dup', { item: key }) };
      seen.add(key);
    }
    var input;
    try { input = canonicalSort(res); } catch (e) { return { ok: false, why: msg('why_items', { msg: e.message }) }; }
    var sh = await stream.shuffle(input);
    var d = firstDiff(sh, res);
    return { ok: d < 0, expected: sh, why: d < 0 ? null : msg('why_first_diff', { i: d }) };
  }
  return { ok: false, why: msg('why_kind', { kind: JSON.stringify(kind) }) };
}

// A chance event's row (row.ev) recomputed from K's stream under label; whether it checks out.
async function drawRow(row, kKey, label) {
  var stream;
  try { stream = new Stream(kKey, label); } catch (e) { row.ok = false; row.why = msg('why_label', { msg: e.message }); return false; }
  var r = await checkChance(row.ev, stream);
  row.ok = r.ok; row.expected = r.expected; row.why = r.why; row.note = r.note;
  return r.ok;
}

// The server seed's row and, for a well-formed seed, SHA-256(seed) = commitment (v1: 64 hex
// digits, v2: 128 lowercase); whether the seed is well formed. v1 also fails the commitment
// row of a malformed seed.
async function checkSeed(doc, add, pattern, n, v1?) {
  var seedOk = typeof doc.server_seed === 'string' && pattern.test(doc.server_seed);
  var bad = msg('seed_bad', { n: n, found: JSON.stringify(doc.server_seed === undefined ? null : doc.server_seed) });
  add('seed', seedOk, seedOk ? msg('raw', { s: doc.server_seed, mono: true }) : bad);
  if (!seedOk && v1) add('commitment', false, bad);
  if (seedOk) {
    var c = toHex(await sha256(fromHex(doc.server_seed)));
    add('commitment', c === doc.commitment, c === doc.commitment ? msg('commit_ok', { c: c }) :
      msg('commit_bad', { expected: c, found: JSON.stringify(doc.commitment === undefined ? null : doc.commitment) }));
  }
  return seedOk;
}

// Seat i's place and client seed (fairness-v1.md §2): null, or what is wrong.
function seatProblem(st, i) {
  if (st.seat !== i) return msg('seat_order', { i: i, found: JSON.stringify(st.seat) });
  var p = seedProblem(st.client_seed);
  return p ? msg('seed_invalid', { i: i, why: msg(p[0], p[1]) }) : null;
}

// K's row: derive() gives K; the HMAC key of K's streams (v1: SHA-256, v2: SHA-512), or null.
async function keyRow(rep, add, hash, derive) {
  try {
    var K = await derive();
    rep.K = toHex(K);
    var kKey = await hmacKey(K, hash);
    add('key', true, msg('key_ok', { k: rep.K }));
    return kKey;
  } catch (e) {
    add('key', false, msg('key_bad', { msg: e.message }));
    return null;
  }
}

// The events' seq: 0, 1, 2, … without gaps.
function checkSeq(doc, events, add) {
  var seqBad = null;
  events.forEach(function (ev, i) {
    if (!seqBad && (!ev || ev.seq !== i)) seqBad = msg('seq_bad', { i: i, found: JSON.stringify(ev && ev.seq) });
  });
  add('seq', !seqBad && Array.isArray(doc.events), seqBad || (events.length ? msg('seq_ok', { last: events.length - 1 }) : msg('seq_none')));
}

// Every event's row (rep.events); each chance event's label used once (v2: as a string) and its
// draw recomputed from K's stream. Without K (kKey null) v1 fails the draws and v2 leaves them
// to the rules replay. The rows of the labels (v1) and of the chance events.
async function chanceRows(rep, add, events, kKey, v2) {
  var seen = new Map(), labelBad = null, nChance = 0, nBad = 0;
  for (var i = 0; i < events.length; i++) {
    var ev = events[i] || {}, row: any = { i: i, ev: ev }, label = v2 ? String(ev.label) : ev.label;
    rep.events.push(row);
    if (ev.type !== 'chance') continue;
    nChance++;
    if (seen.has(label)) {
      row.ok = false; row.why = msg('why_dup_label', { seq: seen.get(label) }); nBad++;
      if (!labelBad) labelBad = msg('labels_bad', { label: JSON.stringify(ev.label), seq: ev.seq });
      continue;
    }
    seen.set(label, ev.seq);
    if (kKey) { if (!(await drawRow(row, kKey, label))) nBad++; }
    else if (!v2) { row.ok = false; row.why = msg('why_nokey'); nBad++; }
  }
  if (!v2) add('labels', !labelBad, labelBad || msg('labels_ok', { n: seen.size }));
  rep.nChance = nChance;
  if (kKey || !v2) {
    add('chance', nBad === 0, nBad === 0 ? msg('events_ok', { n: nChance }) : msg('events_bad', { bad: nBad, n: nChance }));
  } else {
    add('chance', nBad ? false : null, msg('v2_chance_later', { n: nChance }));
    rep.checks[rep.checks.length - 1].optional = !nBad;
  }
}

// The whole check. text: the transcript's JSON text. keys: see checkSignature.
async function verifyTranscript(text, keys, expectId?) {
  var rawTree = parseRaw(text);
  var doc = JSON.parse(text);
  if (doc && typeof doc === 'object' && !Array.isArray(doc) && doc.protocol === undefined &&
      doc.transcript && typeof doc.transcript === 'object') {
    // Tolerate a wrapper {"transcript": {...}}: check the inner document.
    doc = doc.transcript;
    rawTree = rawTree.m.get('transcript');
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(t('err_notobj'));
  var checks = [], rep: any = { doc: doc, checks: checks, events: [], rules: { state: 'unavailable' } };
  function add(id, ok, m) { checks.push({ id: id, ok: ok, m: m }); }

  if (typeof expectId === 'string') {
    add('match', doc.match_id === expectId, doc.match_id === expectId ? msg('raw', { s: expectId }) :
      msg('match_bad', { want: JSON.stringify(expectId), found: JSON.stringify(doc.match_id) }));
  }
  // qahwa-fair/3 (sealed deals): qahwa-fair/2's records, lock, chain and signatures, checked
  // alike here; the sealed deal is the Python replay's, its cryptography sealed-verify.js's
  var isV2 = doc.protocol === PROTOCOL_V2 || doc.protocol === PROTOCOL_V3;
  rep.v3 = doc.protocol === PROTOCOL_V3;
  add('protocol', doc.protocol === PROTOCOL || isV2, doc.protocol === PROTOCOL || isV2 ? msg('raw', { s: doc.protocol }) :
    msg('protocol_bad', { found: JSON.stringify(doc.protocol) }));
  if (isV2) return verifyV2(rawTree, doc, keys || {}, rep, add);

  var seedOk = await checkSeed(doc, add, /^[0-9a-fA-F]{64}$/, 64, true);

  var seats = Array.isArray(doc.seats) ? doc.seats : [];
  var seatBad = seats.length ? null : msg('no_seats');
  for (var s = 0; s < seats.length && !seatBad; s++) seatBad = seatProblem(seats[s] || {}, s);
  add('seats', !seatBad, seatBad || msg('seats_ok', { n: seats.length }));

  var kKey = null;
  if (seedOk && !seatBad) {
    kKey = await keyRow(rep, add, 'SHA-256', function () {
      return matchKeyBytes(doc.server_seed, doc.match_id, doc.game, doc.ruleset, seats.map(function (x) { return x.client_seed; }));
    });
  } else {
    add('key', false, msg('key_bad', { msg: seedOk ? 'bad client seeds' : 'bad server seed' }));
  }

  var events = Array.isArray(doc.events) ? doc.events : [];
  checkSeq(doc, events, add);

  await chanceRows(rep, add, events, kKey, false);

  var sg = await checkSignature(rawTree, doc, keys || {});
  add('signature', sg.ok, sg.m);
  rep.sigUnsupported = !!sg.unsupported;
  return rep; // the verdict is verdictOf(rep), once the rules replay has its rows
}

// qahwa-fair/2 (fairness-v2.md §7, §9): the lock's and the transcript's signatures, the
// event chain and every keyed seat's signature are checked here with Web Crypto; the
// commitments, the match key, every draw, the fresh rolls and the rules are the Python
// replay's (verify_cli.v2_rules), whose rows this page shows. Without that replay the
// verdict stays "incomplete".
var PROTOCOL_V2 = 'qahwa-fair/2';
var PROTOCOL_V3 = 'qahwa-fair/3';
// an event's signed body (without seq, sig, at), as the transcript wrote it
function eventBody(evNode) {
  var m = new Map();
  evNode.m.forEach(function (v, k) { if (k !== 'seq' && k !== 'sig' && k !== 'at') m.set(k, v); });
  return { t: 'o', m: m };
}
// The v2 derivation (§2-§6): the server seed's commitment, each seat's seed commitment from
// the lock, K = HMAC-SHA512(seed, T) with the nonces, every chance event recomputed (16-word
// blocks), and each fresh roll's label from the roller's and the opponent's values, each
// hashing back to the seat's last value or its tip in the lock (clients/ts's rollChainPrev).
// (the seed commitments and K are clients/ts's own: src/fair.ts seedCommitment, matchKey)
async function deriveV2(doc, rep, add, events) {
  var seedOk = await checkSeed(doc, add, /^[0-9a-f]{128}$/, 128);
  var lockSeats = doc.lock && Array.isArray(doc.lock.seats) ? doc.lock.seats : [];
  var seats = Array.isArray(doc.seats) ? doc.seats : [], bad = null, revealed = 0;
  if (!seats.length || seats.length !== lockSeats.length) bad = msg('v2_seats_count', { n: seats.length, m: lockSeats.length });
  for (var i = 0; i < seats.length && !bad; i++) {
    var st = seats[i] || {};
    if (st.seat === i && st.client_seed === null && st.nonce === null) continue; // never revealed (a no_reveal end)
    if ((bad = seatProblem(st, i))) break;
    if (typeof st.nonce !== 'string' || !/^[0-9a-f]{64}$/.test(st.nonce)) { bad = msg('v2_nonce_bad', { i: i }); break; }
    var sc = await seedCommitment(String(doc.match_id), i, fromHex(st.nonce), st.client_seed);
    if (!lockSeats[i] || sc !== lockSeats[i].seed_commitment) {
      bad = msg('v2_seed_commit_bad', { i: i, c: sc, lock: JSON.stringify(lockSeats[i] && lockSeats[i].seed_commitment) });
      break;
    }
    revealed++;
  }
  add('seats', !bad, bad || msg('v2_seats_ok', { n: revealed }));
  var kKey = seedOk && !bad && revealed === seats.length ? await keyRow(rep, add, 'SHA-512', async function () {
    return matchKey(fromHex(doc.server_seed), String(doc.match_id), String(doc.game), String(doc.ruleset),
      seats.map(function (x) { return { clientSeed: x.client_seed, nonce: fromHex(x.nonce) }; }));
  }) : null;
  // fresh rolls: roll_value actions, checked against each seat's chain, give the labels
  var prev: any = {}, pending = [], freshBad = null, nFresh = 0;
  lockSeats.forEach(function (x, k) { if (x && typeof x.roll_chain === 'string') prev[k] = x.roll_chain; });
  for (var j = 0; j < events.length && !freshBad; j++) {
    var ev = events[j] || {}, label = String(ev.label), bar = label.indexOf('|');
    if (ev.type === 'action' && ev.action && (ev.action.type === 'roll_value' || (ev.action.type === 'roll' && 'value' in ev.action))) {
      var v = ev.action.value, who = ev.seat;
      if (typeof v !== 'string' || !/^[0-9a-f]{64}$/.test(v) || !(who in prev)) {
        freshBad = msg('v2_roll_bad', { i: j, seat: who });
      } else {
        var h = toHex(rollChainPrev(String(doc.match_id), who, fromHex(v)));
        if (h !== prev[who]) freshBad = msg('v2_roll_chain', { i: j, v: v, seat: who });
        else { prev[who] = v; pending.push(v); }
      }
    } else if (ev.type === 'chance' && bar >= 0) {
      nFresh++;
      var want = pending.length === 2 ? toHex(await sha256(concat([fromHex(pending[0]), fromHex(pending[1])]))) : null;
      if (want === null) freshBad = msg('v2_fresh_count', { i: j, label: label, k: pending.length });
      else if (label.slice(bar + 1) !== want) freshBad = msg('v2_fresh_label', { i: j, found: label.slice(bar + 1), want: want });
      pending = [];
    }
  }
  if (nFresh || freshBad) add('fresh', !freshBad, freshBad || msg('v2_fresh_ok', { n: nFresh }));
  await chanceRows(rep, add, events, kKey, true);
}

async function verifyV2(rawTree, doc, keys, rep, add) {
  var lock = doc.lock, lockNode = getNode(rawTree, 'lock');
  var events = Array.isArray(doc.events) ? doc.events : [];
  var evNodes = (getNode(rawTree, 'events') || { a: [] }).a || [];
  if (!lock || typeof lock !== 'object' || Array.isArray(lock) || !lockNode) {
    add('lock_sig', false, msg('v2_no_lock'));
  } else {
    var lsg = await checkSignature(lockNode, lock, keys);
    add('lock_sig', lsg.ok, lsg.ok === true || lsg.ok === null ? lsg.m : msg('v2_lock_sig_bad', { why: lsg.m }));
  }
  checkSeq(doc, events, add);
  // the event chain: chain[-1] = SHA-256(canonical(lock)), chain[n] = SHA-256(chain[n-1] || canonical(event n)),
  // over the transcript's own text (clients/ts's walk: src/verify/chain.ts)
  var chain = null, bodies = null;
  if (lockNode && evNodes.length === events.length) {
    try {
      chain = chainHeadsOfText(serialize(lockNode), evNodes.map(function (n) { return serialize(n); }));
      bodies = evNodes.map(function (n) { return n && n.t === 'o' ? serialize(eventBody(n)) : 'null'; });
    } catch (e) { chain = null; add('chain', false, msg('v2_chain_canon', { msg: e.message })); }
  }
  if (chain) {
    var head = toHex(chain[chain.length - 1]);
    add('chain', doc.chain === head, doc.chain === head ? msg('v2_chain_ok', { h: head }) :
      msg('v2_chain_bad', { h: head, found: JSON.stringify(doc.chain) }));
  }
  rep.chain = chain ? chain.map(toHex) : null; // chain[k + 1] is the head after event k
  // every event a keyed seat caused carries its signature over canonical({match_id, prev, event})
  // (clients/ts's walk: src/verify/chain.ts, the seat's transcript check too)
  var sigBad = null, sigUnknown = null, sigs = null;
  if (!chain) sigUnknown = msg('v2_sig_nochain');
  else {
    sigs = await checkSeatSigs(String(doc.match_id), lock, events, bodies, chain);
    var pr = sigs.problem;
    if (pr && pr.kind === 'unkeyed') sigBad = msg('v2_sig_unkeyed', { i: pr.i, seat: pr.seat });
    else if (pr && pr.kind === 'nocauser') sigBad = msg('v2_sig_nocauser', { i: pr.i });
    else if (pr && pr.kind === 'missing') sigBad = msg('v2_sig_missing', { i: pr.i, type: pr.type, seat: pr.seat });
    else if (pr) sigBad = msg('v2_sig_bad', { i: pr.i, type: pr.type, seat: pr.seat, p: pr.i - 1 });
  }
  var signed = sigs ? sigs.signed : 0;
  var nk = sigs ? Array.from(sigs.keyed.keys()) : [];
  add('seat_sigs', sigBad ? false : sigUnknown ? null : true, sigBad || sigUnknown ||
    (nk.length ? msg('v2_sigs_ok', { n: signed, seats: nk.join(', ') }) : msg('v2_sigs_none')));
  await deriveV2(doc, rep, add, events);
  var sg = await checkSignature(rawTree, doc, keys);
  add('signature', sg.ok, sg.m);
  rep.sigUnsupported = !!sg.unsupported;
  rep.v2 = true;
  return rep;
}

// Receipts (fairness-v2.md §7): each signed by a listed key, and the transcript's chain at
// its seq must be the receipt's. Own seed: seat N's seed commitment in the lock is exactly
// SHA-256("qahwa-fair/2 seat" 0x00 || lp(match_id) || u32be(N) || nonce || lp(seed)), and
// the transcript reveals that seed at seat N.
async function receiptsText() {
  var pasted = byId('in-receipts').value.trim();
  if (pasted) return pasted;
  var f = byId('in-receipts-file');
  if (f && f.files && f.files[0]) return await f.files[0].text();
  return '';
}
async function checkV2Extras(rep, keys) {
  var doc = rep.doc;
  function add(id, ok, m) { rep.checks.push({ id: id, ok: ok, m: m }); }
  var text = await receiptsText(), seatFile = null;
  if (text) {
    var bad = null, tree;
    try { tree = parseRaw(text); } catch (e) { bad = msg('rc_json', { msg: e.message }); }
    if (!bad) {
      try { seatFile = seatFileOf(tree); } catch (e) { bad = msg('rc_json', { msg: e.message }); }
      if (seatFile && seatFile.bad) { bad = seatFile.bad; seatFile = null; }
    }
    if (bad) add('receipts', false, bad);
    else {
      // clients/ts/src/verify/receipts.ts, as verify --receipt and --seat FILE check them
      var nodes = seatFile ? seatFile.nodes : tree.t === 'a' ? tree.a : [tree];
      var res = await checkReceipts(nodes, { match_id: doc.match_id, chain: rep.chain, events: Array.isArray(doc.events) ? doc.events : [],
        lock: doc.lock, checkSignature: function (node, r) { return checkSignature(node, r, keys); } });
      add('receipts', res.ok, res.m);
    }
  }
  var seatTxt = byId('in-own-seat').value.trim();
  var seed = byId('in-own-seed').value, nonce = byId('in-own-nonce').value.trim();
  if (seatFile && !seatTxt && !seed && !nonce) {
    seatTxt = String(seatFile.seat); seed = seatFile.seed; nonce = seatFile.nonce;
  }
  if (seatTxt || seed || nonce) {
    var seat = Number(seatTxt), why = null;
    var lockSeats = doc.lock && Array.isArray(doc.lock.seats) ? doc.lock.seats : [];
    if (!/^[0-9]+$/.test(seatTxt) || seat >= lockSeats.length) why = msg('own_seat', { seat: JSON.stringify(seatTxt) });
    else if (!/^[0-9a-f]{64}$/.test(nonce)) why = msg('own_nonce');
    else if (seedProblem(seed)) why = msg('own_seed_bad', { why: msg(seedProblem(seed)[0], seedProblem(seed)[1]) });
    if (!why) {
      var c = await seedCommitment(String(doc.match_id), seat, fromHex(nonce), seed);
      var want = lockSeats[seat] && lockSeats[seat].seed_commitment;
      var shown = Array.isArray(doc.seats) && doc.seats[seat] ? doc.seats[seat].client_seed : undefined;
      if (c !== want) why = msg('own_commit', { seat: seat, want: JSON.stringify(want), c: c });
      else if (shown !== seed) why = msg('own_shown', { found: JSON.stringify(shown), seat: seat });
    }
    add('own_seed', !why, why || msg('own_ok', { seat: seat }));
  }
}

// ---------------------------------------------------------------------------------------
// Were the dice unusual? verify_cli/stats.py (``verify stats``) for the match at hand, in
// JavaScript: the same tally, the same tests (chi-square on the faces, an exact binomial test
// on doubles, z-tests on pips and first-hand strength), Holm-corrected, and the same
// sentence. Where the runtime loads, the page shows Python's own answer (verify_cli.stats on
// Pyodide) instead; tests/test_verify_page_stats.py holds the two to each other.
// ---------------------------------------------------------------------------------------
var STATS_ALPHA = 0.01;
var LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
function lgamma(x) {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lgamma(1 - x);
  x -= 1;
  var a = LANCZOS[0], tt = x + 7.5;
  for (var i = 1; i < 9; i++) a += LANCZOS[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(tt) - tt + Math.log(a);
}
// Q(a, x), the regularized upper incomplete gamma function (verify_cli/certify/statistics.py)
function gammaincc(a, x) {
  if (x <= 0) return 1;
  var logFront = -x + a * Math.log(x) - lgamma(a), i;
  if (x < a + 1) {
    var term = 1 / a, total = term, ap = a;
    for (i = 0; i < 100000; i++) {
      ap += 1; term *= x / ap; total += term;
      if (Math.abs(term) < Math.abs(total) * 1e-15) break;
    }
    return Math.max(0, 1 - Math.exp(logFront) * total);
  }
  var b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
  for (i = 1; i < 100000; i++) {
    var an = -i * (i - a);
    b += 2;
    d = an * d + b; if (Math.abs(d) < 1e-300) d = 1e-300;
    c = b + an / c; if (Math.abs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    var delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return Math.min(1, Math.exp(logFront) * h);
}
function chi2Sf(x, df) { return x <= 0 ? 1 : gammaincc(df / 2, x / 2); }
// P(|Z| >= |z|) = erfc(|z| / sqrt 2) = Q(1/2, z^2 / 2)
function normalTwoSided(z) { return gammaincc(0.5, z * z / 2); }
function binomialTwoSided(k, n, p) {
  var lp = Math.log(p), lq = Math.log1p(-p), total = 0;
  function logpmf(i) { return lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) + i * lp + (n - i) * lq; }
  var cut = logpmf(k) + 1e-9;
  for (var i = 0; i <= n; i++) { var v = logpmf(i); if (v <= cut) total += Math.exp(v); }
  return Math.min(1, total);
}
function holm(ps) {
  var order = ps.map(function (_, i) { return i; }).sort(function (a, b) { return ps[a] - ps[b]; });
  var out = ps.map(function () { return 1; }), running = 0;
  order.forEach(function (i, rank) { running = Math.max(running, Math.min(1, (ps.length - rank) * ps[i])); out[i] = running; });
  return out;
}

var ROLL_PIPS = [];
for (var da = 1; da <= 6; da++) for (var db = 1; db <= 6; db++) ROLL_PIPS.push(da === db ? 4 * da : da + db);
var PIPS_MEAN = ROLL_PIPS.reduce(function (s, x) { return s + x; }, 0) / 36;
var PIPS_VAR = ROLL_PIPS.reduce(function (s, x) { return s + (x - PIPS_MEAN) * (x - PIPS_MEAN); }, 0) / 36;
var CARD_POINTS = { A: 4, K: 3, Q: 2, J: 1 };
function cardPoints(c) { return c === 'JB' || c === 'JR' ? 4 : CARD_POINTS[String(c)[0]] || 0; }
function tileDoubles(x) { var p = String(x).split('-'); return p[0] === p[1] ? 1 : 0; }
function handMoments(deck, size, value) {
  var vals = deck.map(value), n = vals.length;
  var mu = vals.reduce(function (s, v) { return s + v; }, 0) / n;
  var vr = vals.reduce(function (s, v) { return s + (v - mu) * (v - mu); }, 0) / n;
  return [size * mu, size * vr * (n - size) / (n - 1)];
}
function baseLabel(ev) { return String(ev.label === undefined ? '' : ev.label).split('|')[0]; }
function chanceAt(events, label) {
  for (var i = 0; i < events.length; i++) if (events[i].type === 'chance' && baseLabel(events[i]) === label) return events[i];
  return null;
}
function firstAce(cards) { return cards.findIndex(function (c) { return c[0] === 'A'; }); }
// [the seat's hand of the first deal, the deck it came from] (verify_cli.stats.first_hand),
// as the page deals it (dealtHands), or null
function firstHand(doc, seat) {
  var events = (Array.isArray(doc.events) ? doc.events : []).filter(function (e) { return e && typeof e === 'object' && !Array.isArray(e); });
  var form = tableForm(doc), ev = chanceAt(events, 'h0/shuffle') || chanceAt(events, 'r0/shuffle'), anchor = 0;
  if (!form || !ev) return null;
  if (doc.game === 'hokm') {
    var hakem = chanceAt(events, 'hakem'), ace = hakem ? firstAce(hakem.result) : -1;
    anchor = ace < 0 ? null : ace % form.n;
  } else if (doc.game === 'qahve' || doc.game === 'shelem') {
    var dealer = chanceAt(events, 'dealer');
    anchor = dealer ? Number(dealer.result) : null;
  }
  var d = dealtHands({ game: doc.game, events: events }, ev, events.indexOf(ev), form, anchor);
  var hand = d.hands && d.hands.get('seat' + seat);
  return hand ? [hand.cards, d.layout.deck] : null;
}
// The player's dice and first hands in one transcript (verify_cli.stats.tally); seat null:
// every seat.
function statsTally(doc, seat) {
  var seats = Array.isArray(doc.seats) ? doc.seats : [], out = { faces: {}, rolls: [], hands: [] };
  var mine = seat === null ? seats.map(function (_, i) { return i; }) : seat < seats.length ? [seat] : [];
  if (!mine.length) return out;
  if (doc.game === 'tawla' || doc.game === 'mahbusa') {
    var roller = null;
    (Array.isArray(doc.events) ? doc.events : []).forEach(function (ev) {
      if (!ev || typeof ev !== 'object' || Array.isArray(ev)) return;
      if (ev.type === 'action' && (ev.action || {}).type === 'roll') roller = ev.seat;
      else if (ev.type === 'chance' && ev.kind === 'dice') {
        var dice = (ev.result || []).map(Number);
        if (baseLabel(ev).indexOf('/opening/') >= 0) {
          dice.forEach(function (x, s) { if (mine.indexOf(s) >= 0) out.faces[x] = (out.faces[x] || 0) + 1; });
        } else if (mine.indexOf(roller) >= 0 && dice.length === 2) {
          dice.forEach(function (x) { out.faces[x] = (out.faces[x] || 0) + 1; });
          out.rolls.push(dice);
        }
        roller = null;
      }
    });
    return out;
  }
  mine.forEach(function (s) {
    var got = firstHand(doc, s);
    if (!got) return;
    var value = doc.game === 'iraqi_domino' || doc.game === 'mexican_train' ? tileDoubles : cardPoints;
    var mv = handMoments(got[1], got[0].length, value);
    out.hands.push({ game: doc.game, score: got[0].reduce(function (x, c) { return x + value(c); }, 0), mean: mv[0], 'var': mv[1] });
  });
  return out;
}
// The tests and their Holm-corrected p-values (verify_cli.stats.analyse), and whether the
// worst of them is unusual.
function statsAnalyse(tl) {
  var tests = [], nDice = 0, f;
  Object.keys(tl.faces).forEach(function (x) { nDice += tl.faces[x]; });
  if (nDice) {
    var observed = [], expected = [];
    for (f = 1; f <= 6; f++) { observed.push(tl.faces[f] || 0); expected.push(nDice / 6); }
    var dt: any = { name: 'dice faces', n: nDice, observed: observed, expected: expected, p_value: null };
    if (nDice >= 30) {
      dt.statistic = observed.reduce(function (s, o) { return s + (o - nDice / 6) * (o - nDice / 6) / (nDice / 6); }, 0);
      dt.df = 5;
      dt.p_value = chi2Sf(dt.statistic, 5);
    }
    tests.push(dt);
  }
  if (tl.rolls.length) {
    var n = tl.rolls.length, doubles = 0, pips = 0;
    tl.rolls.forEach(function (r) { if (r[0] === r[1]) doubles++; pips += r[0] === r[1] ? 4 * r[0] : r[0] + r[1]; });
    tests.push({ name: 'doubles', n: n, observed: doubles, expected: n / 6, p_value: binomialTwoSided(doubles, n, 1 / 6) });
    var z = (pips - n * PIPS_MEAN) / Math.sqrt(n * PIPS_VAR);
    tests.push({ name: 'pips', n: n, observed: pips / n, expected: PIPS_MEAN, statistic: z, p_value: normalTwoSided(z) });
  }
  [['cards', ['hokm', 'qahve', 'shelem']], ['dominoes', ['iraqi_domino', 'mexican_train']]].forEach(function (kg) {
    var hands = tl.hands.filter(function (h) { return kg[1].indexOf(h.game) >= 0; });
    if (!hands.length) return;
    var score = 0, mean = 0, vr = 0;
    hands.forEach(function (h) { score += h.score; mean += h.mean; vr += h['var']; });
    var zz = vr > 0 ? (score - mean) / Math.sqrt(vr) : 0;
    tests.push({ name: 'first-hand strength (' + kg[0] + ')', n: hands.length, observed: score / hands.length,
      expected: mean / hands.length, statistic: zz, p_value: normalTwoSided(zz) });
  });
  var withP = tests.filter(function (x) { return x.p_value !== null; });
  var adj = holm(withP.map(function (x) { return x.p_value; }));
  withP.forEach(function (x, i) { x.p_adjusted = adj[i]; });
  var worst = withP.length ? Math.min.apply(null, adj) : null;
  return { tests: tests, p_min_adjusted: worst, unusual: worst !== null && worst < STATS_ALPHA };
}
function oneIn(p) {
  var n = p > 0 ? 1 / p : Infinity;
  if (!isFinite(n)) return '10^300+';
  if (n < 1e9) return Math.round(n).toLocaleString('en-US');
  return '10^' + Math.round(Math.log10(n));
}
function fmtP(p) { return p >= 1e-4 ? String(Number(p.toPrecision(2))) : p.toExponential(1); }
function statsSentence(st) {
  if (st.p_min_adjusted === null) return t('stats_none');
  if (!st.unusual) return t('stats_nothing');
  return t('stats_unusual', { p: fmtP(st.p_min_adjusted), n: oneIn(st.p_min_adjusted) });
}

// ---------------------------------------------------------------------------------------
// Loading a transcript and the keys.
// ---------------------------------------------------------------------------------------
class LoadError { m: any; constructor(m) { this.m = m; } }

// `verify page` (a player's own install) answers every API path with this code: it is not
// the operator's server, and the page says to give that one.
var NOT_A_SERVER = 'not_a_qahwa_server';

async function fetchText(url) {
  var resp;
  try { resp = await fetch(url, { cache: 'no-store', credentials: 'omit' }); } catch (e) {
    throw new LoadError(msg('err_fetch', { url: url, msg: e.message }));
  }
  var body = await resp.text();
  if (!resp.ok) {
    var detail = body.slice(0, 300), code = null;
    try { var j = JSON.parse(body); if (j && j.error && j.error.message) { detail = j.error.message; code = j.error.code; } } catch (e) { /* not JSON */ }
    if (code === NOT_A_SERVER) throw new LoadError(msg('err_not_server', { url: new URL(url).origin, msg: detail }));
    if (resp.status === 409) detail = t('err_409') + ' (' + detail + ')';
    if (resp.status === 404) detail = t('err_404') + ' (' + detail + ')';
    throw new LoadError(msg('err_http', { url: url, status: resp.status, msg: detail }));
  }
  return body;
}

function shq(s) {
  // A shell word for the command shown in the note.
  return /^[A-Za-z0-9_.,:\/@%+=-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
}
function servedOverHttp() { return location.protocol === 'http:' || location.protocol === 'https:'; }

// The operator's server: the "Operator's server" field — its base URL, or a match URL from it
// (…/v1/matches/<id>[/…] or …/verify?match=<id>, whose id then stands for an empty match id) —
// else the page's own origin when it is served over HTTP (a qahwa server's /verify; `verify
// page` answers its API paths with NOT_A_SERVER). {base, id, given}; base null: none known.
function operatorServer() {
  var raw = byId('in-server').value.trim();
  if (!raw) return { base: servedOverHttp() ? location.href : null, id: null, given: false };
  var u;
  try { u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : 'https://' + raw); } catch (e) { u = null; }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) throw new LoadError(msg('err_badurl', { url: raw }));
  var id = null, m = /\/v1\/matches\/([^/]+)/.exec(u.pathname);
  try { id = m ? decodeURIComponent(m[1]) : u.searchParams.get('match'); } catch (e) { id = null; }
  return { base: u.origin + '/', id: id || null, given: true };
}

async function loadKeys(base, needLogKey) {
  var out: any = { pasted: byId('in-key').value.trim(),
    logVkey: byId('in-logkey').value.trim() || null };
  if (out.pasted && (out.logVkey || !needLogKey)) return out;
  if (!base) { if (!out.pasted) out.fetchError = msg('nokey_file'); return out; }
  var url = new URL('/v1/keys', base).href;
  out.keysUrl = url;
  try {
    var j = JSON.parse(await fetchText(url));
    if (!j || !Array.isArray(j.keys)) throw new Error('no "keys" list');
    if (!out.logVkey && j.log && typeof j.log.vkey === 'string') out.logVkey = j.log.vkey;
    if (out.pasted) return out; // a pasted key pins the signer: the server's list is not used
    out.fetched = j.keys;
  } catch (e) {
    if (e instanceof LoadError && e.m.key === 'err_not_server') out.notServer = true;
    out.fetchError = msg('nokey_fetch', { url: url, msg: e instanceof LoadError ? t(e.m.key, e.m.params) : e.message });
  }
  return out;
}

async function loadSource() {
  var src = (document.querySelector('input[name=src]:checked') as HTMLInputElement).value;
  var op = operatorServer();
  var origin = op.base ? new URL(op.base).origin : null;
  if (src === 'id') {
    var id = byId('in-id').value.trim() || op.id || '';
    if (!id) throw new LoadError(msg('err_empty'));
    if (!op.base) throw new LoadError(msg('err_file_origin'));
    var url = new URL('/v1/matches/' + encodeURIComponent(id) + '/transcript', op.base).href;
    return { text: await fetchText(url), base: op.base, expectId: id,
      cmd: 'verify --server ' + shq(origin) + ' --match ' + shq(id) };
  }
  if (src === 'url') {
    var u = byId('in-url').value.trim();
    if (!u) throw new LoadError(msg('err_empty'));
    var parsed;
    try { parsed = new URL(u, servedOverHttp() ? location.href : undefined); } catch (e) { parsed = null; }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw new LoadError(msg('err_badurl', { url: u }));
    var pm = /^\/v1\/matches\/([^/]+)\/transcript$/.exec(parsed.pathname);
    var want;
    try { want = pm ? decodeURIComponent(pm[1]) : undefined; } catch (e) { want = undefined; }
    var ubase = op.given ? op.base : parsed.href;
    return { text: await fetchText(parsed.href), base: ubase, expectId: want,
      cmd: 'verify ' + (op.given ? '--server ' + shq(origin) + ' ' : '') + shq(parsed.href) };
  }
  var cmd = op.given ? 'verify --server ' + shq(origin) + ' transcript.json' : undefined;
  if (src === 'paste') {
    var text = byId('in-paste').value;
    if (!text.trim()) throw new LoadError(msg('err_empty'));
    return { text: text, base: op.base, cmd: cmd };
  }
  var f = byId('in-file').files[0];
  if (!f) throw new LoadError(msg('err_nofile'));
  return { text: await f.text(), base: op.base, cmd: cmd };
}

// ---------------------------------------------------------------------------------------
// Rendering.
// ---------------------------------------------------------------------------------------
function el(tag, attrs?, kids?) {
  var e = document.createElement(tag);
  if (attrs) Object.keys(attrs).forEach(function (k) {
    if (k === 'text') e.textContent = attrs[k];
    else if (k === 'cls') e.className = attrs[k];
    else e.setAttribute(k, attrs[k]);
  });
  (kids || []).forEach(function (kid) { if (kid !== null && kid !== undefined) e.appendChild(typeof kid === 'string' ? document.createTextNode(kid) : kid); });
  return e;
}
function tm(m) {
  // A message {key, params} to text; params may themselves be messages.
  if (!m) return '';
  if (m.key === 'raw') return m.params.s;
  var p: any = {};
  Object.keys(m.params || {}).forEach(function (k) {
    var v = m.params[k];
    p[k] = v && typeof v === 'object' && v.key ? tm(v) : v;
  });
  return t(m.key, p);
}

var SUIT_SYM = { C: '\u2663', D: '\u2666', H: '\u2665', S: '\u2660' };
var DIE = ['\u2680', '\u2681', '\u2682', '\u2683', '\u2684', '\u2685'];

function cardEl(code) {
  if (code === 'JB' || code === 'JR') {
    return el('span', { cls: 'card joker' + (code === 'JR' ? ' red' : ''), 'data-code': code, title: code === 'JB' ? 'black joker' : 'red joker' },
      [el('span', { cls: 's', text: '\u2605' }), el('span', { text: 'JOKER' })]);
  }
  var r = code[0] === 'T' ? '10' : code[0], s = code[1];
  return el('span', { cls: 'card' + (s === 'H' || s === 'D' ? ' red' : ''), 'data-code': code, title: code },
    [el('span', { text: r }), el('span', { cls: 's', text: SUIT_SYM[s] || '?' })]);
}
var PIP_A = 0.22, PIP_M = 0.5, PIP_B = 0.78;
var PIPS = (function () {
  var a = PIP_A, m = PIP_M, b = PIP_B, six = [[a, a], [a, m], [a, b], [b, a], [b, m], [b, b]];
  var r4 = [0.16, 0.39, 0.61, 0.84];
  function cols(xs, ys) { var o = []; xs.forEach(function (x) { ys.forEach(function (y) { o.push([x, y]); }); }); return o; }
  return [[], [[m, m]], [[a, a], [b, b]], [[a, a], [m, m], [b, b]], [[a, a], [b, a], [a, b], [b, b]],
    [[a, a], [b, a], [m, m], [a, b], [b, b]], six, six.concat([[m, m]]), six.concat([[m, a], [m, b]]),
    cols([a, m, b], [a, m, b]), cols([a, b], r4).concat([[m, 0.3], [m, 0.7]]),
    cols([a, b], r4).concat([[m, 0.25], [m, 0.5], [m, 0.75]]), cols([a, m, b], r4)];
})();
function svgEl(tag, attrs) {
  var e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
  return e;
}
function halfEl(n) {
  var size = 26, svg = svgEl('svg', { width: size, height: size, 'class': 'half', viewBox: '0 0 ' + size + ' ' + size });
  if (!PIPS[n]) {
    svg.appendChild(svgEl('text', { x: size / 2, y: size / 2 + 4, 'text-anchor': 'middle', 'font-size': '11' })).textContent = String(n);
    return svg;
  }
  PIPS[n].forEach(function (pt) {
    svg.appendChild(svgEl('circle', { cx: (pt[0] * size).toFixed(1), cy: (pt[1] * size).toFixed(1), r: n > 9 ? 2.1 : 2.6, fill: '#222' }));
  });
  return svg;
}
function tileEl(code) {
  var ab;
  try { ab = parseTile(code); } catch (e) { return el('span', { cls: 'num', text: String(code) }); }
  return el('span', { cls: 'tile', 'data-code': code, title: code, 'aria-label': code }, [halfEl(ab[0]), halfEl(ab[1])]);
}
function isCard(x) { return typeof x === 'string' && Object.prototype.hasOwnProperty.call(CARD_ORDER, x); }
function isTile(x) { return typeof x === 'string' && /^[0-9]+-[0-9]+$/.test(x); }
function itemEl(x) {
  if (isCard(x)) return cardEl(x);
  if (isTile(x)) return tileEl(x);
  return el('span', { cls: 'num', text: JSON.stringify(x) });
}
function dieEl(v, sides) {
  if (sides === 6 && isInt(v) && v >= 1 && v <= 6) return el('span', { cls: 'die', 'data-value': v, title: String(v) }, [DIE[v - 1]]);
  return el('span', { cls: 'die n', 'data-value': String(v), text: JSON.stringify(v) });
}
function row(items) { return el('div', { cls: 'row' }, items.map(itemEl)); }
function numRow(v) { return el('div', { cls: 'row' }, [el('span', { cls: 'num', text: JSON.stringify(v) })]); }

function seatName(doc, s) {
  var seat = (doc.seats || [])[s];
  var nm = seat && typeof seat.name === 'string' && seat.name ? ' \u00b7 ' + seat.name : '';
  return t('seat', { n: s }) + nm;
}
// The table a transcript's ruleset sets up, read as the game's engine reads it
// (games/*.py parse_ruleset: a missing key takes the engine's default): {n: players,
// cut: hokm's cut}, or null when the page does not know the form (another game, a value the
// engine would refuse, or seats that are not the ruleset's players). Without a form the
// page shows the shuffles as shuffled and names nobody.
var FORMS = {
  hokm: { players: [2, 3, 4] }, shelem: { players: [2, 4] }, qahve: { players: [4], fixed: true },
  iraqi_domino: { players: [2, 3, 4] }, mexican_train: { players: [2, 3, 4, 5, 6, 7, 8] },
  tawla: { players: [2], fixed: true }, mahbusa: { players: [2], fixed: true }
};
function knownGame(game) { return Object.prototype.hasOwnProperty.call(FORMS, game); }
function tableForm(doc) {
  var f = knownGame(doc.game) ? FORMS[doc.game] : null, rs;
  if (!f) return null;
  try { rs = JSON.parse(doc.ruleset); } catch (e) { return null; }
  if (!rs || typeof rs !== 'object' || Array.isArray(rs)) return null;
  if (f.fixed && rs.players !== undefined) return null;  // the engine refuses unknown keys
  var n = f.fixed ? f.players[0] : rs.players === undefined ? 4 : rs.players;
  var cut = doc.game === 'hokm' ? (rs.cut === undefined ? true : rs.cut) : false;
  if (!isInt(n) || f.players.indexOf(n) < 0 || (doc.seats || []).length !== n || typeof cut !== 'boolean') return null;
  return { n: n, cut: cut };
}

// The deals of games/deals.py (fairness-v1.md §5): {deck, parts, engine?}, deck = the
// items the engine shuffles (canonical order), parts = [from, to, recipient] over the
// dealt order, engine = Mexican Train's engine double of the round.
// recipient: {seat}, {role: 'hakem'|'dealer', k} (seat = that seat + k once it is known),
// {key: 'stock'|'kitty'|'pile'|'boneyard'} or {pile: recipient, n}.
var HOKM_ROUNDS = { 4: [5, 4, 4], 3: [5, 4, 4, 4], 2: [5] };
function hokmDeck(n) { return deck52().filter(function (c) { return n !== 3 || c !== '2C'; }); }
function packets(n, rounds, who) {
  var out = [], pos = 0;
  rounds.forEach(function (size) {
    for (var i = 0; i < n; i++) { out.push([pos, pos + size, who(i)]); pos += size; }
  });
  return out;
}
function role(r, k) { return { role: r, k: k }; }
function dealLayout(game, form, label) {
  var n = form.n, m, parts;
  if (/^h\d+\/shuffle$/.test(label)) {
    if (game === 'hokm') {
      // from the hakem, in packets; two players: 5 each, the rest the stock (top first)
      var deck = hokmDeck(n);
      parts = packets(n, HOKM_ROUNDS[n], function (i) { return role('hakem', i); });
      var dealt = parts[parts.length - 1][1];
      if (dealt < deck.length) parts.push([dealt, deck.length, { key: 'stock' }]);
      return { deck: deck, parts: parts };
    }
    if (game === 'qahve') return { deck: deckQahve(), parts: packets(4, HOKM_ROUNDS[4], function (i) { return role('dealer', (i + 1) % 4); }) };
    if (game === 'shelem' && n === 2) {
      var O = role('dealer', 1), D = role('dealer', 0);
      return { deck: deck52(), parts: [[0, 12, O], [12, 24, D], [24, 28, { pile: O, n: 1 }], [28, 32, { pile: D, n: 1 }],
        [32, 36, { pile: O, n: 2 }], [36, 40, { pile: D, n: 2 }], [40, 44, { pile: O, n: 3 }],
        [44, 48, { key: 'kitty' }], [48, 52, { pile: D, n: 3 }]] };
    }
    if (game === 'shelem') {
      return { deck: deck52(), parts: [[0, 12, role('dealer', 1)], [12, 24, role('dealer', 2)],
        [24, 36, role('dealer', 3)], [36, 40, { key: 'kitty' }], [40, 52, role('dealer', 0)]] };
    }
  }
  if ((m = /^r(\d+)\/shuffle$/.exec(label))) {
    var all, hand, rest, engine = null;
    if (game === 'iraqi_domino') { all = tiles(6); hand = 7; rest = 'pile'; }
    else if (game === 'mexican_train') {
      var e = 12 - (+m[1]) % 13;  // the round's engine double is not shuffled
      engine = e + '-' + e;
      all = tiles(12).filter(function (x) { return x !== engine; });
      hand = n <= 4 ? 15 : n <= 6 ? 12 : 10; rest = 'boneyard';
    } else return null;
    parts = [];
    for (var s = 0; s < n; s++) parts.push([hand * s, hand * s + hand, { seat: s }]);
    parts.push([hand * n, all.length, { key: rest }]);
    return { deck: all, parts: parts, engine: engine };
  }
  return null;
}
// Whether a shuffle's result is exactly the deck the layout deals (else it is not shown as
// that deal: the replay says what is wrong).
function isDeck(res, deck) {
  var got;
  try { got = canonicalSort(res); } catch (e) { return false; }
  return got.length === deck.length && got.every(function (c, i) { return c === deck[i]; });
}
// hokm with the cut deals when the cutter answers (games/hokm.py, its CUTS). The answer to
// the shuffle at event idx, as verify_cli/render.py reads it: {k: 0} for the first tap, {k}
// for a chosen cut (qahwa-fair/1: {"type": "cut", "k"}) or a drawn one (qahwa-fair/2: uniform(len
// - 1) at h<n>/cut, k = 1 + u) before the next hand's shuffle; null: none (nothing dealt).
function cutAnswer(doc, idx, len) {
  var events = doc.events || [];
  for (var i = idx + 1; i < events.length; i++) {
    var e = events[i];
    if (!e || typeof e !== 'object') continue;
    var lbl = String(e.label === undefined ? '' : e.label);
    if (e.type === 'chance' && /^h\d+\/shuffle$/.test(lbl)) return null;
    if (e.type === 'chance' && /^h\d+\/cut$/.test(lbl)) {
      return isInt(e.result) && e.result >= 0 && e.result + 1 < len ? { k: e.result + 1 } : null;
    }
    var a = e.type === 'action' && e.action && typeof e.action === 'object' ? e.action : null;
    if (a && a.type === 'tap') return { k: 0 };
    if (a && a.type === 'cut' && isInt(a.k)) return a.k > 0 && a.k < len ? { k: a.k } : null;
  }
  return null;
}
function recipientKey(rc, anchor, nSeats) {
  if (rc.seat !== undefined) return 'seat' + rc.seat;
  if (rc.key) return rc.key;
  if (rc.pile) return recipientKey(rc.pile, anchor, nSeats) + '/pile' + rc.n;
  return anchor === null ? rc.role + '+' + rc.k : 'seat' + ((anchor + rc.k) % nSeats);
}
function recipientText(doc, rc, anchor, nSeats) {
  if (rc.seat !== undefined) return seatName(doc, rc.seat);
  if (rc.key) return t(rc.key);
  if (rc.pile) return t('role_pile', { who: recipientText(doc, rc.pile, anchor, nSeats), n: rc.n });
  var name = t('role_' + rc.role);
  var role = rc.role === 'dealer' && nSeats === 2 && rc.k === 1 ? t('role_nondealer') :
    rc.k === 0 ? name : t('role_plus', { role: name, k: rc.k });
  return anchor === null ? role : seatName(doc, (anchor + rc.k) % nSeats) + ' (' + role + ')';
}
function cardSortKey(c) {
  if (c === 'JB' || c === 'JR') return -1 - CARD_ORDER[c];
  return 'SHCD'.indexOf(c[1]) * 100 - RANKS.indexOf(c[0]);
}
function sortHand(items) {
  var cp = items.slice();
  if (cp.every(isCard)) cp.sort(function (a, b) { return cardSortKey(a) - cardSortKey(b); });
  return cp;
}
function drawTitle(base, what) {
  return (/^d\d+$/.test(base) ? t('draw_n', { n: base.slice(1) }) + ' \u2014 ' : '') + what;
}

// The hands of a deal event (a hand's or round's shuffle) as its table form deals it: every
// dealt card under the seat (or, when the hakem / dealer's seat anchor is not known, the
// role) that received it, the rest under stock, kitty or pile: {layout, hands: Map(key →
// {key, rc, cards}), notes}, or {plain: note} where the page does not know the form or deck.
function dealtHands(doc, ev, idx, form, anchor) {
  var base = baseLabel(ev), res = ev.result, notes = [];
  var layout = form ? dealLayout(doc.game, form, base) : null;
  if (!layout) return { plain: knownGame(doc.game) && /^[hr]\d+\/shuffle$/.test(base) ? t('deal_unknown') : null };
  if (!isDeck(res, layout.deck)) return { plain: t('deal_unknown') };
  var deck = res.slice();
  if (doc.game === 'hokm' && form.cut) {
    var cut = cutAnswer(doc, idx, deck.length);
    if (!cut) return { plain: t('not_dealt') };
    if (cut.k) deck = deck.slice(cut.k).concat(deck.slice(0, cut.k));
    notes.push(cut.k ? t('cut', { k: cut.k }) : t('tapped'));
  }
  if (layout.engine) notes.push(t('engine', { t: layout.engine }));
  if (doc.game === 'shelem' && form.n === 2) notes.push(t('piles_note'));
  var hands = new Map();
  layout.parts.forEach(function (pk) {
    var key = recipientKey(pk[2], anchor, form.n);
    if (!hands.has(key)) hands.set(key, { key: key, rc: pk[2], cards: [] });
    hands.get(key).cards = hands.get(key).cards.concat(deck.slice(pk[0], pk[1]));
  });
  return { layout: layout, hands: hands, notes: notes };
}
function plainBody(res, note) { return el('div', {}, [note ? el('p', { cls: 'lbl', text: note }) : null, row(res)]); }

// A deal event, shown as its hands; a form or deck the page does not know is shown as
// shuffled, naming nobody.
function describeDeal(doc, ev, ctx, idx, form) {
  var base = baseLabel(ev), n = form ? form.n : 0;
  // Who is hakem / dealer for this hand, as the replayed rules say (every hand); without
  // the replay only the first hand's is known (from the hakem deal or the dealer draw).
  var anchorRole = doc.game === 'hokm' ? 'hakem' : 'dealer', anchor = null;
  var pyc = ctx.py ? ctx.py[ev.seq] : undefined, m = /^h(\d+)\//.exec(base);
  if (pyc && isInt(pyc[anchorRole]) && pyc[anchorRole] >= 0 && pyc[anchorRole] < n) anchor = pyc[anchorRole];
  else if (m && +m[1] === 0 && ctx[anchorRole] !== undefined) anchor = ctx[anchorRole];
  var d = dealtHands(doc, ev, idx, form, anchor);
  if (!d.hands) {
    return { title: drawTitle(base, t('shuffle', { n: ev.result.length })), deal: 'plain', body: plainBody(ev.result, d.plain) };
  }
  return { title: t('deal'), deal: 'hands', body: el('div', {}, [
    d.notes.length ? el('p', { cls: 'lbl', text: d.notes.join(' \u00b7 ') }) : null,
    el('div', { cls: 'hands' }, Array.from(d.hands.values()).filter(function (h) { return h.cards.length; }).map(function (h) {
      // hands sorted for reading; stock, kitty and piles in dealt order
      var inOrder = h.rc.key || h.rc.pile;
      return el('div', { cls: 'hand', 'data-who': h.key }, [el('span', { cls: 'who', text: recipientText(doc, h.rc, anchor, n) }),
        row(inOrder ? h.cards : sortHand(h.cards))]);
    }))]) };
}

// The first hakem: the hakem shuffle dealt face up, one card at a time from seat 0, until
// the first ace (games/hokm.py).
function describeHakemDraw(doc, ev, ctx, form) {
  var res = ev.result, out: any = { title: t('hakem_draw'), deal: 'hakem' };
  if (!form || !isDeck(res, hokmDeck(form.n))) return Object.assign(out, { deal: 'plain', body: plainBody(res, t('deal_unknown')) });
  var n = form.n, ace = firstAce(res), perSeat = [];
  for (var s = 0; s < n; s++) perSeat.push([]);
  res.slice(0, ace + 1).forEach(function (c, j) { perSeat[j % n].push(c); });
  ctx.hakem = ace % n;
  out.body = el('div', {}, [
    el('div', { cls: 'hands' }, perSeat.map(function (cards, s3) {
      return el('div', { cls: 'hand', 'data-who': 'seat' + s3 }, [el('span', { cls: 'who', text: seatName(doc, s3) }),
        el('div', { cls: 'row' }, cards.map(function (c) { var ce = cardEl(c); if (c === res[ace]) ce.classList.add('hl'); return ce; }))]);
    })),
    el('p', { text: t('first_hakem', { who: seatName(doc, ace % n) }) })]);
  return out;
}

// One chance event's title and body. ctx: what the walk through the events knows (the
// table form, the replay's draws, the first hakem / dealer once drawn) to name seats.
function describeChance(doc, ev, ctx, idx) {
  var label = String(ev.label), res = ev.result, nSeats = (doc.seats || []).length, m, out: any = {};
  var base = label.split('|')[0], form = ctx.form;
  var board = form && (doc.game === 'tawla' || doc.game === 'mahbusa');
  if (ev.kind === 'dice') {
    var sides = ev.args && ev.args.sides !== undefined ? ev.args.sides : 6;
    var dice = Array.isArray(res) ? res : [res];
    if ((m = /^g(\d+)\/opening\/(\d+)$/.exec(base))) {
      // tawla and mahbusa: die 0 is seat 0's, die 1 seat 1's; the higher die starts
      out.title = t('opening', { n: +m[2] + 1 });
      var decided = board && dice.length === 2 && isInt(dice[0]) && isInt(dice[1]);
      out.body = el('div', { cls: 'seats' }, dice.map(function (v, s) {
        return el('span', { cls: 'seatdie', 'data-who': 'seat' + s }, [el('span', { text: seatName(doc, s) }), dieEl(v, sides)]);
      }).concat(decided ? [el('span', { cls: 'lbl', 'data-starts': dice[0] === dice[1] ? '' : 'seat' + (dice[0] > dice[1] ? 0 : 1),
        text: dice[0] === dice[1] ? t('opening_again') : t('opening_starts', { who: seatName(doc, dice[0] > dice[1] ? 0 : 1) }) })] : []));
      return out;
    }
    var attrs = { cls: 'row' };
    if ((m = /^g(\d+)\/roll\/(\d+)$/.exec(base))) {
      // a roll is drawn by the roll action of the seat on turn, the event before it
      var prev = (doc.events || [])[idx - 1];
      var roller = board && prev && prev.type === 'action' && prev.action && prev.action.type === 'roll' &&
        isInt(prev.seat) && prev.seat >= 0 && prev.seat < nSeats ? prev.seat : null;
      out.title = t('roll', { n: m[2] }) + (roller === null ? '' : ' \u2014 ' + seatName(doc, roller));
      if (roller !== null) attrs['data-who'] = 'seat' + roller;
    } else out.title = drawTitle(base, t('dice', { count: dice.length, sides: sides }));
    out.body = el('div', attrs, dice.map(function (v) { return dieEl(v, sides); }));
    return out;
  }
  if (ev.kind === 'uniform') {
    var n = ev.args ? ev.args.n : undefined;
    if (base === 'dealer' && form && (doc.game === 'qahve' || doc.game === 'shelem') && isInt(res) && res >= 0 && res < form.n) {
      ctx.dealer = res;
      return { title: t('dealer_draw'), body: el('div', {}, [t('dealer_is', { who: seatName(doc, res) })]) };
    }
    return { title: drawTitle(base, t('uniform', { max: isInt(n) ? n - 1 : '?' })), body: numRow(res) };
  }
  if (ev.kind === 'shuffle' && Array.isArray(res)) {
    if (doc.game === 'hokm' && base === 'hakem') return describeHakemDraw(doc, ev, ctx, form);
    return describeDeal(doc, ev, ctx, idx, form);
  }
  return { title: String(ev.kind), body: numRow(res) };
}

function groupOf(label) {
  var m = /^([grh])(\d+)\//.exec(String(label));
  if (m) return { id: m[1] + m[2], key: m[1] === 'g' ? 'group_game' : m[1] === 'r' ? 'group_round' : 'group_hand', n: +m[2] + 1 };
  if (/^d\d+$/.test(String(label))) return { id: 'draws', key: 'group_draws' };
  return null;
}

function actionText(doc, ev) {
  var a = ev.action || {}, rest = {};
  Object.keys(a).forEach(function (k) { if (k !== 'type') rest[k] = a[k]; });
  var extra = Object.keys(rest).length ? ' ' + JSON.stringify(rest) : '';
  return seatName(doc, ev.seat) + ': ' + String(a.type) + extra;
}

function renderEvent(doc, rowData, ctx) {
  var ev = rowData.ev;
  var d = describeChance(doc, ev, ctx, rowData.i);
  var st = rowData.ok === true ? 'ok' : rowData.ok === false ? 'bad' : 'unchecked';
  var attrs = { cls: 'ev ' + (st === 'unchecked' ? '' : st), 'data-seq': String(ev.seq), 'data-label': String(ev.label), 'data-status': st };
  if (d.deal) attrs['data-deal'] = d.deal;  // hands | hakem | plain (shown as shuffled)
  var li = el('li', attrs, [
    el('div', { cls: 'head' }, [
      el('span', { cls: 'st', text: st === 'ok' ? '\u2714' : st === 'bad' ? '\u2718' : '?' }),
      el('strong', { text: d.title }),
      el('span', { cls: 'lbl', dir: 'ltr', text: '#' + ev.seq + ' \u00b7 ' + ev.label }),
      el('span', { cls: 'lbl', text: st === 'ok' ? t('ev_ok') : st === 'bad' ? t('ev_bad') : t('ev_unchecked') })]),
    ev.kind === 'shuffle' ? d.body : null]);
  if (ev.kind !== 'shuffle') li.firstChild.insertBefore(d.body, li.firstChild.children[2]);
  if (rowData.note) li.appendChild(el('p', { cls: 'lbl', text: tm(rowData.note) }));
  var pyc = ctx.py ? ctx.py[ev.seq] : undefined;
  if (pyc && pyc.text) {
    li.appendChild(el('details', { cls: 'cli' }, [el('summary', { text: t('cli_text') }),
      el('pre', { dir: 'ltr', text: pyc.text })]));
  }
  if (!rowData.ok) {
    li.appendChild(el('p', { cls: 'why', text: tm(rowData.why) }));
    if (rowData.expected !== undefined) {
      var exp = rowData.expected, fnd = ev.result;
      var show = function (v) {
        if (ev.kind === 'dice') return el('div', { cls: 'row' }, (Array.isArray(v) ? v : [v]).map(function (x) { return dieEl(x, ev.args && ev.args.sides); }));
        return Array.isArray(v) ? row(v) : numRow(v);
      };
      li.appendChild(el('div', { cls: 'cmp' }, [
        el('span', { text: t('bad_expected') }), el('div', { cls: 'expected' }, [show(exp)]),
        el('span', { text: t('bad_found') }), el('div', { cls: 'found' }, [show(fnd)])]));
    }
  }
  return li;
}

function renderReport(rep) {
  var doc = rep.doc, root = byId('report');
  root.textContent = '';
  var tb = el('tbody');
  allChecks(rep).forEach(function (c) {
    var st = c.ok === true ? 'ok' : c.ok === false ? 'bad' : 'warn';
    var cell = el('td', { cls: 'msg', dir: 'auto', text: tm(c.m) });
    if (c.progress) cell.appendChild(el('progress', { max: '1', value: String(c.progress) }));
    if (c.detail) cell.appendChild(el('pre', { dir: 'ltr', text: c.detail }));
    tb.appendChild(el('tr', { cls: st, 'data-check': c.id, 'data-status': st,
      'data-ok': c.ok === true ? 'true' : c.ok === false ? 'false' : 'unknown' }, [
      el('td', { cls: 'st', text: c.ok === true ? '\u2714' : c.ok === false ? '\u2718' : '?' }),
      el('td', { text: c.title || t('chk_' + c.id) }),
      cell]));
  });
  root.appendChild(el('table', { cls: 'checks' }, [tb]));
  var sv = verdictOf(rep);
  if (rep.stats && (sv === 'pass' || sv === 'incomplete')) root.appendChild(statsEl(rep.stats));

  var meta = el('dl', { cls: 'meta' });
  function mrow(k, v) { meta.appendChild(el('dt', { text: t(k) })); meta.appendChild(el('dd', {}, [v])); }
  mrow('match', el('span', { cls: 'mono', dir: 'ltr', text: String(doc.match_id) }));
  mrow('game', el('span', { text: String(doc.game) }));
  mrow('ruleset', el('span', { cls: 'mono', dir: 'ltr', text: String(doc.ruleset) }));
  mrow('seats', el('span', {}, [(doc.seats || []).map(function (s, i) {
    return seatName(doc, i) + ' (' + t(s && s.seed_source === 'server' ? 'seed_src_server' : 'seed_src_player') + ')';
  }).join(' \u2014 ')]));
  if (doc.created_at) mrow('created', el('span', { dir: 'ltr', text: String(doc.created_at) }));
  if (doc.ended_at) mrow('ended', el('span', { dir: 'ltr', text: String(doc.ended_at) }));
  if (doc.result && typeof doc.result === 'object') {
    var w = Array.isArray(doc.result.winners) ? doc.result.winners : [];
    mrow('result', el('span', {}, [t('reason') + ': ' + String(doc.result.reason) + ' \u00b7 ' + t('winners') + ': ' +
      (w.length ? w.map(function (s) { return seatName(doc, s); }).join(', ') : t('nobody')) +
      (Array.isArray(doc.result.scores) ? ' \u00b7 ' + t('scores') + ': ' + doc.result.scores.join(' \u2013 ') : '')]));
  }
  root.appendChild(meta);

  // Groups: by the label prefix (g/r/h/d); actions join the group of the chance event before them.
  var ctx = { py: pyDraws(rep), form: tableForm(doc) }, cur = null, pendingActs = null;
  function newGroup(g) {
    cur = { id: g ? g.id : 'start', ol: el('ol', { cls: 'events' }) };
    root.appendChild(el('section', { cls: 'group', 'data-group': cur.id }, [
      el('h3', { text: g ? t(g.key, { n: g.n }) : t('group_start') }), cur.ol]));
    pendingActs = null;
  }
  rep.events.forEach(function (rd) {
    var ev = rd.ev;
    if (ev.type === 'chance') {
      var g = groupOf(ev.label);
      if (!cur || (g && g.id !== cur.id)) newGroup(g);
      pendingActs = null;
      cur.ol.appendChild(renderEvent(doc, rd, ctx));
      return;
    }
    if (!cur) newGroup(null);
    if (ev.type === 'end') {
      var who = isInt(ev.seat) ? seatName(doc, ev.seat) : '';
      cur.ol.appendChild(el('li', { cls: 'act', 'data-seq': String(ev.seq) }, [
        el('strong', { text: ev.reason === 'resigned' ? t('end_resigned', { who: who }) : ev.reason === 'abandoned' ? t('end_abandoned') : t('end_other', { reason: String(ev.reason) }) })]));
      pendingActs = null;
      return;
    }
    if (!pendingActs) {
      pendingActs = { list: el('ol'), sum: el('summary'), n: 0, first: ev.seq };
      cur.ol.appendChild(el('li', { cls: 'act' }, [el('details', {}, [pendingActs.sum, pendingActs.list])]));
    }
    pendingActs.n++;
    pendingActs.list.appendChild(el('li', { 'data-seq': String(ev.seq), dir: 'auto', text: '#' + ev.seq + ' ' + actionText(doc, ev) }));
    pendingActs.sum.textContent = t('moves', { n: pendingActs.n }) + ' (#' + pendingActs.first + '\u2013' + ev.seq + ')';
  });
}

// The statistics of the match at hand (only once it checked out: see computeStats).
function statsEl(st) {
  function num(v) { return typeof v === 'number' ? String(Number(v.toPrecision(3))) : String(v); }
  var names = { 'dice faces': 'st_dice_faces', doubles: 'st_doubles', pips: 'st_pips',
    'first-hand strength (cards)': 'st_hand_cards', 'first-hand strength (dominoes)': 'st_hand_dominoes' };
  var head = el('tr', {}, ['stats_test', 'stats_n', 'stats_observed', 'stats_expected', 'stats_p'].map(function (k) { return el('th', { text: t(k) }); }));
  var rows = st.tests.map(function (x) {
    var obs, exp;
    if (x.name === 'dice faces') {
      obs = x.observed.map(function (o, i) { return (i + 1) + ': ' + o; }).join('  ');
      exp = num(x.expected[0]) + ' × 6';
    } else { obs = num(x.observed); exp = num(x.expected); }
    return el('tr', { 'data-test': x.name }, [el('td', { text: names[x.name] ? t(names[x.name]) : x.name }),
      el('td', { text: String(x.n) }), el('td', { dir: 'ltr', text: obs }), el('td', { dir: 'ltr', text: exp }),
      el('td', { dir: 'ltr', text: x.p_value === null ? t('stats_too_few', { n: x.n }) : fmtP(x.p_adjusted) })]);
  });
  var who = st.seat === null || st.seat === undefined ? t('stats_all') : t('seat', { n: st.seat });
  var k = st.tests.filter(function (x) { return x.p_value !== null; }).length;
  return el('section', { id: 'stats', 'data-by': st.by, 'data-unusual': String(!!st.unusual) }, [
    el('h2', { text: t('stats_title') }),
    el('p', { cls: 'sentence', text: statsSentence(st) }),
    st.tests.length ? el('table', { cls: 'stats' }, [el('thead', {}, [head]), el('tbody', {}, rows)]) : null,
    el('p', { cls: 'hint', text: t(st.by === 'python' ? 'stats_by_py' : 'stats_by_js', { who: who, k: k }) })]);
}

// Once the transcript checked out (verdict pass, or incomplete without the rules replay):
// the statistics of verify stats for the match at hand, by the verify CLI's Python when the
// rules replay ran, else by the JavaScript above. Seat: the own-seed field's, else every seat.
async function computeStats(rep, text, seat) {
  var v = verdictOf(rep);
  if (v !== 'pass' && v !== 'incomplete') return;
  if (rep.rules.state === 'done' && pyUsable()) {
    var m = await pyAsk(seat === null ? { type: 'stats', text: text } : { type: 'stats', text: text, seat: seat });
    if (m.type === 'stats' && m.stats && m.stats.status === 'ok') { rep.stats = Object.assign({ by: 'python' }, m.stats); return; }
  }
  var st;
  try { st = statsAnalyse(statsTally(rep.doc, seat)); } catch (e) { return; }
  st.by = 'js';
  st.seat = seat;
  rep.stats = st;
}
function ownSeat(doc) {
  var s = byId('in-own-seat').value.trim();
  return /^[0-9]+$/.test(s) && Number(s) < (doc.seats || []).length ? Number(s) : null;
}

function renderVerdict(state) {
  var v = byId('verdict');
  v.hidden = !state;
  if (!state) return;
  v.setAttribute('data-verdict', state.verdict);
  v.setAttribute('data-replay', state.rep ? state.rep.rules.state : 'none');
  v.setAttribute('data-run', String(runs));
  if (state.rep && state.rep.rules.state === 'done') v.setAttribute('data-replay-ms', String(Math.round(state.rep.rules.ms)));
  else v.removeAttribute('data-replay-ms');
  if (state.verdict === 'error') v.textContent = t('verdict_error', { msg: tm(state.m) });
  else if (state.verdict === 'pending') v.textContent = t('verdict_pending');
  // "pass" is only ever the verdict with the rules replayed (verdictOf)
  else if (state.verdict === 'pass') v.textContent = t('verdict_pass_rules', { n: state.rep.nChance });
  else if (state.verdict === 'fail') v.textContent = t('verdict_fail', { n: state.rep.failed });
  else {
    var rs = state.rep && state.rep.rules.state;
    v.textContent = t('verdict_incomplete', { why: t(rs === 'error' ? 'inc_rules' : rs !== 'done' ? 'inc_norules' : 'inc_sig') });
  }
}

// The first note: what this page does (will do) with a transcript, as it stands.
function noteText(cmd) {
  if (last && last.rep && last.rep.rules.state === 'done') {
    return t('rules_done', { cmd: cmd, py: PY.info.python, pyodide: PY.info.pyodide });
  }
  if (pyUsable()) return t('note_replay', { cmd: cmd });
  if (PY.why) return t('note_noreplay', { cmd: cmd, why: tm(PY.why) });
  return t('note_probe', { cmd: cmd });
}
// A reason the rules were not replayed (PY.why, rules.why: as the note says it) as its row says it
function offRow(m) { return m.key === 'off_failed' ? msg('replay_off_failed', m.params) : msg('replay_off_error', { msg: m }); }

var last = null;
function render() {
  document.querySelectorAll('[data-i18n]').forEach(function (e) { e.textContent = t(e.getAttribute('data-i18n')); });
  var note = byId('rules-note'), parts = noteText('\u0000').split('\u0000');
  note.textContent = '';
  note.append(parts[0], el('code', { dir: 'ltr', text: (last && last.cmd) || 'verify transcript.json' }), parts[1] || '');
  document.querySelectorAll('[data-lang]').forEach(function (b) { b.setAttribute('aria-pressed', String(b.getAttribute('data-lang') === lang)); });
  renderVerdict(last);
  if (last && last.rep) renderReport(last.rep);
  else byId('report').textContent = '';
  if (last && last.rep && (window as any).qahwaLog) {
    var logDone = (window as any).qahwaLog.attach(document.querySelector('#report table.checks tbody'), last.rep.doc, last.base, last.keys, last.tlog);
    if (logDone) {
      var logRep = last.rep;
      logDone.then(function (res) {
        logRep.logFailed = !!(res && res.ok === false); // counts in the verdict (verdictOf)
        logRep.logPending = !!(res && res.pending); // the log's reveal not checked yet: never "pass"
        // the log's answer may come after the replay's: the verdict is computed again with it
        if (last && last.rep === logRep) { last.verdict = verdictOf(logRep); renderVerdict(last); }
      });
    }
  }
}

function setLang(l) {
  lang = I18N[l] ? l : 'en';
  document.documentElement.lang = lang;
  document.documentElement.dir = RTL[lang] ? 'rtl' : 'ltr';
  try { localStorage.setItem('qahwa.lang', lang); } catch (e) { /* storage may be off */ }
  render();
}

function pickLang() {
  var stored = null;
  try { stored = localStorage.getItem('qahwa.lang'); } catch (e) { /* ignore */ }
  var prefs = (navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || 'en']);
  // the URL's ?lang=, the one chosen before, then the browser's languages
  return [new URLSearchParams(location.search).get('lang'), stored].concat(prefs.map(function (p) {
    return String(p).toLowerCase().split('-')[0];
  })).filter(function (l) { return l && I18N[l]; })[0] || 'en';
}

// ---------------------------------------------------------------------------------------
// The rules replay: this checkout's own verify_cli.replay_core (the code the verify CLI runs)
// on Pyodide, in a Web Worker (/static/verify-worker.js), so the page never freezes. Both
// come from the serving origin (/static/qahwa-py.json names them). Without them (no runtime
// on the server, or the page opened from a file) everything above is still checked and the
// rows say that the rules were not replayed.
// ---------------------------------------------------------------------------------------
var PY = { state: 'off', why: null, worker: null, info: null, stage: null, boot: null, next: 1, waiting: {} };

function bootPython() {
  if (!servedOverHttp()) { PY.why = msg('off_file'); return Promise.resolve(); }
  if (typeof Worker === 'undefined') { PY.why = msg('no_workers'); return Promise.resolve(); }
  return fetch(new URL('/static/qahwa-py.json', location.href).href, { cache: 'no-store', credentials: 'omit' })
    .then(function (r) { return r.ok ? r.json() : null; })
    .then(function (man) {
      if (!man || !man.runtime || !man.sources) { PY.why = msg('off_server'); return; }
      var w = new Worker(new URL('/static/verify-worker.js', location.href).href, { type: 'module' });
      PY.worker = w;
      PY.state = 'loading';
      PY.stage = { stage: 'runtime', done: 0, total: 3 };
      w.onmessage = onWorkerMessage;
      w.onerror = function (e) { if (e.preventDefault) e.preventDefault(); pyFailed(e.message || 'the worker did not start'); };
      w.postMessage({ type: 'init', manifest: man });
    })
    .catch(function () { PY.why = msg('off_server'); });
}

function pyFailed(err) {
  PY.state = 'failed';
  PY.why = msg('off_failed', { msg: String(err) });
  if (PY.worker) { PY.worker.terminate(); PY.worker = null; }
  var waiting = PY.waiting;
  PY.waiting = {};
  Object.keys(waiting).forEach(function (id) { waiting[id]({ type: 'failed', id: Number(id) }); });
}

function onWorkerMessage(e) {
  var m = e.data || {};
  if (m.type === 'ready') { PY.state = 'ready'; PY.info = m; return; }
  if (m.type === 'failed') { pyFailed(m.error); return; }
  var rep = last && last.rep;
  if (m.type === 'progress') {
    if (m.id === undefined) PY.stage = m;
    if (rep && rep.rules.state === 'pending' && (m.id === undefined || m.id === rep.rules.id)) {
      rep.rules.stage = m;
      updateProgress(rep);
    }
    return;
  }
  var wait = PY.waiting[m.id];
  if (wait) { delete PY.waiting[m.id]; wait(m); }
}

// Ask the worker (a 'verify' or 'stats' message); resolves with its answer for that id, or
// {type: 'error'} when Python cannot be started.
function pyAsk(message): Promise<any> {
  var id = PY.next++;
  return new Promise(function (resolve) {
    PY.waiting[id] = resolve;
    PY.worker.postMessage(Object.assign({ id: id }, message));
  });
}
function pyUsable() { return !!PY.worker && (PY.state === 'loading' || PY.state === 'ready'); }

// The replay's answer m ({type: 'result'|'error'}) into rep.rules.
function applyReplay(rep, m) {
  if (m.type === 'result') {
    rep.rules = { state: 'done', id: m.id, py: m.report, ms: m.ms, sealed: m.sealed || null };
    if (rep.v2 && m.report && Array.isArray(m.report.computed)) {
      // qahwa-fair/2: each chance event's status is the replay's recomputation of it
      var same: any = {};
      m.report.computed.forEach(function (c) { same[c[0]] = c[2]; });
      rep.events.forEach(function (r) {
        if (r.ev && r.ev.type === 'chance' && (r.ok === undefined || r.ok === null) &&
            Object.prototype.hasOwnProperty.call(same, r.ev.seq)) r.ok = same[r.ev.seq] === true;
      });
    }
  } else rep.rules = { state: 'error', id: m.id, why: msg('off_error', { msg: String(m.error) }) };
}

// Starts the rules replay of rep (when the runtime is there); the promise settles once
// rep.rules is final ('done', 'error' or 'unavailable').
function startReplay(rep, text) {
  if (!pyUsable()) {
    rep.rules = { state: 'unavailable', why: PY.why || msg('off_server') };
    return Promise.resolve(rep);
  }
  var asked = pyAsk({ type: 'verify', text: text });
  rep.rules = { state: 'pending', id: PY.next - 1, stage: PY.state === 'ready' ? { stage: 'replay', done: 0, total: 1 } : PY.stage };
  return asked.then(function (m) {
    if (m.type === 'failed') rep.rules = { state: 'unavailable', why: PY.why };
    else applyReplay(rep, m);
    return rep;
  });
}

function updateProgress(rep) {
  var cell = document.querySelector('tr[data-check=replay] td.msg');
  if (!cell) return;
  var c = rulesRows(rep)[0];
  cell.textContent = tm(c.m);
  cell.appendChild(el('progress', { max: '1', value: String(c.progress) }));
}

function wholeJson(v) {
  if (v && typeof v === 'object' && !Array.isArray(v) && v.absent === true && Object.keys(v).length === 1) return t('absent');
  return (function py(x) { // as Python's json.dumps(separators=(', ', ': ')) writes it
    if (Array.isArray(x)) return '[' + x.map(py).join(', ') + ']';
    if (x && typeof x === 'object') return '{' + Object.keys(x).map(function (k) { return JSON.stringify(k) + ': ' + py(x[k]); }).join(', ') + '}';
    return JSON.stringify(x);
  })(v);
}
function shortJson(v) {
  var s = JSON.stringify(v);
  return s && s.length > 400 ? s.slice(0, 399) + '\u2026' : s;
}

function agreeRow(rep, computed) {
  // Every chance result both implementations computed from the seeds must be the same:
  // JavaScript's (rows below) and Python's (the replay, through the rules).
  var js: any = {};
  rep.events.forEach(function (r) {
    if (r.ev && r.ev.type === 'chance' && r.expected !== undefined) js[r.ev.seq] = r;
  });
  var n = 0, bad = null;
  (computed || []).forEach(function (c) {
    var seq = c[0], value = c[1], matched = c[2], r = js[seq];
    if (!r) return;
    if (!matched && r.ev.kind === 'shuffle') {
      // where the replay stopped, a shuffle of other items cannot be compared
      try { if (!sameJson(canonicalSort(value), canonicalSort(r.ev.result))) return; } catch (e) { return; }
    }
    n++;
    if (bad === null && !sameJson(r.expected, value)) bad = seq;
  });
  if (bad !== null) return { id: 'agree', ok: false, m: msg('agree_bad', { seq: bad }) };
  if (!n) return { id: 'agree', ok: null, m: msg('agree_none'), optional: true };
  return { id: 'agree', ok: true, m: msg('agree_ok', { n: n }) };
}

// qahwa-fair/3: which code checked the sealed deal's cryptography: the page's own verifier,
// which the worker loads for such transcripts (verify-worker.js); without it, none was checked.
function sealedRow(rep, rows) {
  if (!rep.v3) return;
  rows.push(rep.rules.sealed ? { id: 'sealed', ok: true, m: msg('sealed_js') }
    : { id: 'sealed', ok: false, m: msg('sealed_js_missing') });
}

function rulesRows(rep) {
  var r = rep.rules || { state: 'unavailable' }, rows = [];
  if (r.state === 'pending') {
    var st = r.stage || { stage: 'runtime', done: 0, total: 3 };
    var frac = st.stage === 'replay' ? 0.6 + 0.4 * st.done / Math.max(1, st.total)
      : st.stage === 'sources' ? 0.3 + 0.15 * st.done : 0.05;
    rows.push({ id: 'replay', ok: null, optional: true, progress: frac,
      m: st.stage === 'replay' ? msg('stage_replay', { done: st.done, total: st.total }) : msg('stage_' + st.stage) });
    rows.push({ id: 'result', ok: null, optional: true, m: msg('replay_pending') });
    rows.push({ id: 'agree', ok: null, optional: true, m: msg('replay_pending') });
    return rows;
  }
  if (r.state !== 'done') {
    // No runtime: the rows say so, and the verdict covers the rest. A runtime that failed
    // on this transcript (state 'error'): not fully verified.
    // Never optional: without a rules replay the verdict is "incomplete", never "pass".
    return ['replay', 'result', 'agree'].map(function (id) { return { id: id, ok: null, m: offRow(r.why || msg('off_server')) }; });
  }
  var py = r.py, doc = rep.doc;
  if (py.status !== 'checked') {
    rows.push({ id: 'replay', ok: false, m: msg('replay_bad', { msg: String(py.reason) }) });
    rows.push({ id: 'result', ok: null, m: msg('result_skip') });
    rows.push(agreeRow(rep, []));
    sealedRow(rep, rows);
    return rows;
  }
  var check: any = {}, fail: any = {};
  py.checks.forEach(function (c) { if (!(c.name in check) || c.ok === false) check[c.name] = c; });
  py.failures.forEach(function (f) { if (!(f.check in fail)) fail[f.check] = f; });
  if (rep.v2) {
    // qahwa-fair/2: every check of verify_cli.v2_rules gets its row, named after it
    // (the titles and the verdicts translated; the CLI's own words, in English, below them)
    Object.keys(check).forEach(function (name) {
      if (name === 'replay' || name === 'result') return;
      var c = check[name], fx = fail[name], id = name.replace(/[^A-Za-z0-9]+/g, '_');
      var words = String(fx ? fx.message : c.detail), more = fx ? detail(fx) : '';
      var known = Object.prototype.hasOwnProperty.call(I18N.en, 'py_ok_' + id);
      rows.push({ id: 'py_' + id, ok: c.ok === true ? true : c.ok === false ? false : null,
        optional: c.ok !== false && c.ok !== true,
        title: Object.prototype.hasOwnProperty.call(I18N.en, 'py_t_' + id) ? t('py_t_' + id) : name,
        m: msg(c.ok === false ? 'py_bad' : c.ok !== true ? 'py_skip' : known ? 'py_ok_' + id : 'py_ok_other'),
        detail: c.ok === true && known ? '' : words + (more ? '\n' + more : '') });
    });
  }
  var rp = check.replay || { ok: null, detail: '' }, f = fail.replay || (rep.v2 ? null : fail.seats);
  function detail(x) {
    if (!x || (x.expected === null && x.found === null)) return '';
    if (Array.isArray(x.differences) && x.differences.length) {
      // each path that differs, both values whole (verify_cli/render.py, as the CLI prints)
      return x.differences.map(function (d) {
        return t('diff_line', { path: d.path, e: wholeJson(d.expected), f: wholeJson(d.found) });
      }).join('\n');
    }
    var e = x.expected, f = x.found;
    if (e && f && typeof e === 'object' && typeof f === 'object' && !Array.isArray(e) && !Array.isArray(f)) {
      // two objects: only the fields that differ
      var keys = Object.keys(e).concat(Object.keys(f).filter(function (k) { return !(k in e); }));
      return keys.filter(function (k) { return !sameJson(e[k], f[k]); }).map(function (k) {
        return k + ': ' + t('expected_py') + ' ' + shortJson(e[k]) + ' \u00b7 ' + t('bad_found') + ' ' + shortJson(f[k]);
      }).join('\n');
    }
    return t('expected_py') + ': ' + shortJson(e) + '\n' + t('bad_found') + ': ' + shortJson(f);
  }
  if (rp.ok === true && !f) {
    rows.push({ id: 'replay', ok: true, m: msg('replay_ok', { n: py.counts.events, c: py.counts.chance, game: String(doc.game) }) });
  } else if (f) {
    rows.push({ id: 'replay', ok: false, m: msg('replay_bad', { msg: f.message }), detail: detail(f) });
  } else {
    rows.push({ id: 'replay', ok: null, m: msg('replay_skip', { msg: rp.detail }) });
  }
  var rs = check.result || { ok: null };
  if (rs.ok === true) {
    var res = doc.result || {}, w = Array.isArray(res.winners) ? res.winners : [];
    rows.push({ id: 'result', ok: true, m: msg('result_ok', { reason: String(res.reason),
      who: w.length ? w.map(function (s) { return seatName(doc, s); }).join(', ') : t('nobody') }) });
  } else if (rs.ok === false) {
    rows.push({ id: 'result', ok: false, m: msg('result_bad'), detail: detail(fail.result) || rs.detail });
  } else {
    rows.push({ id: 'result', ok: null, m: msg('result_skip') });
  }
  rows.push(agreeRow(rep, py.computed));
  sealedRow(rep, rows);
  return rows;
}

function pyDraws(rep) {
  var out: any = {};
  if (rep.rules && rep.rules.state === 'done' && rep.rules.py.draws) {
    rep.rules.py.draws.forEach(function (d) { out[d.seq] = d; });
  }
  return out;
}

// More checks from other scripts of the page (e.g. the transparency log): each
// {id, title: {en, ar, fa}, run: async (doc, text) => ({ok: true|false|null, text})}.
var EXTRA_CHECKS = [];
async function runExtraChecks(rep, text) {
  rep.extra = [];
  for (var i = 0; i < EXTRA_CHECKS.length; i++) {
    var x = EXTRA_CHECKS[i], r;
    try { r = await x.run(rep.doc, text); } catch (e) { r = { ok: null, text: String(e && e.message || e) }; }
    rep.extra.push({ id: x.id, ok: r.ok === true ? true : r.ok === false ? false : null,
      m: msg('raw', { s: String(r.text) }), title: x.title });
  }
}

function allChecks(rep) {
  return rep.checks.concat(rulesRows(rep), (rep.extra || []).map(function (c) {
    return { id: c.id, ok: c.ok, m: c.m, title: c.title && (c.title[lang] || c.title.en) };
  }));
}

function verdictOf(rep) {
  var rows = allChecks(rep);
  rep.failed = rows.filter(function (c) { return c.ok === false; }).length + (rep.logFailed ? 1 : 0);
  if (rep.failed) return 'fail';
  if (rep.rules && rep.rules.state === 'pending') return 'pending';
  if (rep.logPending) return 'incomplete';
  if (rows.some(function (c) { return c.ok === null && !c.optional; })) return 'incomplete';
  return 'pass';
}

var busy = false, runs = 0;
async function run() {
  if (busy) return;
  busy = true;
  runs++;
  var go = byId('go'), status = byId('status');
  go.disabled = true;
  status.textContent = t('working');
  try {
    var src = await loadSource();
    var text = src.text;
    try { JSON.parse(text); parseRaw(text); } catch (e) { throw new LoadError(msg('err_json', { msg: e.message })); }
    var proofFile = byId('in-logproof').files[0];
    var tlogText = proofFile ? await proofFile.text() : null;
    var keys = await loadKeys(src.base, !!tlogText);
    if (keys.notServer) src.base = null; // `verify page` itself: no server to ask for the log
    var rep = await verifyTranscript(text, keys, src.expectId);
    if (rep.v2) await checkV2Extras(rep, keys);
    await runExtraChecks(rep, text);
    await PY.boot;
    var replayed = startReplay(rep, text);
    last = { verdict: verdictOf(rep), rep: rep, cmd: src.cmd, base: src.base, keys: keys, tlog: tlogText };
    var seat = ownSeat(rep.doc);
    replayed.then(function () {
      if (!last || last.rep !== rep) return null; // the answer for an earlier check
      last.verdict = verdictOf(rep);
      render();
      return computeStats(rep, text, seat).then(function () {
        if (last && last.rep === rep && rep.stats) render();
      });
    });
  } catch (e) {
    last = { verdict: 'error', m: e instanceof LoadError ? e.m : msg('raw', { s: String(e && e.message || e) }) };
  } finally {
    busy = false;
    go.disabled = false;
    status.textContent = '';
    render();
    byId('verdict').scrollIntoView({ block: 'nearest' });
  }
}

// ---------------------------------------------------------------------------------------
// Wiring, and the derivation functions for tests and curious users (window.qahwaFair).
// ---------------------------------------------------------------------------------------
async function apiVerify(text, publicKeyB64) {
  var rep = await verifyTranscript(text, publicKeyB64 ? { pasted: publicKeyB64 } : {});
  await PY.boot;
  await startReplay(rep, text);
  var verdict = verdictOf(rep);
  await computeStats(rep, text, null);
  return { verdict: verdict, replay: rep.rules.state, K: rep.K, stats: rep.stats || null,
    checks: allChecks(rep).map(function (c) { return { id: c.id, ok: c.ok, text: tm(c.m) }; }),
    events: rep.events.filter(function (r) { return r.ev.type === 'chance'; }).map(function (r) { return { seq: r.ev.seq, ok: r.ok, expected: r.expected }; }) };
}
async function keyFromHex(kHex) { var k = fromHex(kHex); return hmacKey(k, k.length === 64 ? 'SHA-512' : 'SHA-256'); }
(globalThis as any).qahwaFair = {
  PROTOCOL: PROTOCOL,
  // a record signed by a retired key counts only with its own time before retired_at
  retiredProblem: retiredProblem,
  // qahwa-fair/2 (§2, §4): a seat's seed commitment and K from (client_seed, nonce) pairs
  seedCommitmentV2: function (matchId, seat, nonceHex, clientSeed) {
    return seedCommitment(matchId, seat, fromHex(nonceHex), clientSeed);
  },
  matchKeyV2: async function (seedHex, matchId, game, rulesetStr, pairs) {
    return toHex(await matchKey(fromHex(seedHex), matchId, game, rulesetStr,
      pairs.map(function (p) { return { clientSeed: p[0], nonce: fromHex(p[1]) }; })));
  },
  commitment: commitment,
  matchKey: async function (seedHex, matchId, game, rulesetStr, clientSeeds) {
    return toHex(await matchKeyBytes(seedHex, matchId, game, rulesetStr, clientSeeds));
  },
  words: async function (kHex, label, count) {
    var s = new Stream(await keyFromHex(kHex), label), o = [];
    for (var i = 0; i < count; i++) o.push(await s.word());
    return o;
  },
  uniform: async function (kHex, label, n) { return new Stream(await keyFromHex(kHex), label).uniform(n); },
  dice: async function (kHex, label, count, sides) {
    return new Stream(await keyFromHex(kHex), label).dice(count, sides === undefined ? 6 : sides);
  },
  shuffle: async function (kHex, label, items) { return new Stream(await keyFromHex(kHex), label).shuffle(items); },
  deck52: deck52, deckQahve: deckQahve, tiles: tiles, canonicalSort: canonicalSort,
  canonicalJson: canonicalJson, verifyEd25519: verifyEd25519, // also merkle.js's core
  addCheck: function (check) { EXTRA_CHECKS.push(check); },
  python: function () { return { state: PY.state, info: PY.info }; },
  // The page's whole check of a transcript, its verdict exactly the page's: "pass" only
  // when the rules were replayed too; without the replay (no runtime, opened from a file)
  // "incomplete", never "pass".
  verify: apiVerify,
  verifyTranscript: apiVerify,
  // verify stats in JavaScript: the tally of one transcript (seat null: every seat), the
  // tests over a tally ({faces: {face: count}, rolls: [[a, b]], hands: [{game, score, mean,
  // var}]}), and its sentence
  statsTally: statsTally, statsAnalyse: statsAnalyse,
  statsSentence: function (st) { return statsSentence(st); },
  bytes: { concat: concat, toHex: toHex, fromHex: fromHex, fromB64: fromB64 },
  // the page's languages and its texts by key: [English, Arabic, Persian]
  i18n: { LANGS: LANGS, I18N: I18N }
};

// The page itself: its form, its languages, the Python replay's boot and the URL's match.
// Elsewhere (node --test of this bundle, clients/ts/test/verify.test.ts) only the checks above
// load, with window.qahwaFair.
function boot() {
  byId('form').addEventListener('submit', function (e) { e.preventDefault(); run(); });
  // each source: its field, its radio button's value, the query parameter that fills it
  var SOURCES = [['in-id', 'id', 'match'], ['in-url', 'url', 'url'], ['in-paste', 'paste'], ['in-file', 'file']];
  SOURCES.forEach(function (p) {
    var f = byId(p[0]);
    var pick = function () { (document.querySelector('input[name=src][value=' + p[1] + ']') as HTMLInputElement).checked = true; };
    ['input', 'change', 'focus'].forEach(function (type) { f.addEventListener(type, pick); });
  });
  document.querySelectorAll('[data-lang]').forEach(function (b) {
    b.addEventListener('click', function () { setLang(b.getAttribute('data-lang')); });
  });

  setLang(pickLang());
  PY.boot = bootPython().then(render); // the note says what this page will do
  var params = new URLSearchParams(location.search);
  if (params.get('key')) byId('in-key').value = params.get('key');
  if (params.get('server')) byId('in-server').value = params.get('server');
  var asked = SOURCES.filter(function (p) { return p[2] && params.get(p[2]); })[0];
  if (asked) {
    byId(asked[0]).value = params.get(asked[2]);
    (document.querySelector('input[name=src][value=' + asked[1] + ']') as HTMLInputElement).checked = true;
    run();
  }
}
if (typeof document !== 'undefined') boot();

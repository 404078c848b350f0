// The web table's words in English, Arabic and Persian (issue 47): every label, every action
// said in words, the end of a match in a sentence. `?lang=ar` or `?lang=fa` lays the page out
// right to left.

type Obj = Record<string, unknown>;

export const LANGS = ["en", "ar", "fa"] as const;
export type Lang = (typeof LANGS)[number];

// key: [English, Arabic, Persian]
const T: Record<string, [string, string, string]> = {
  title: ["Play", "العب", "بازی"],
  game: ["Game", "اللعبة", "بازی"],
  rules: ["Rules (JSON, optional)", "القواعد (JSON، اختياري)", "قوانین (JSON، اختیاری)"],
  friend: ["Leave a seat for a friend", "اترك مقعدًا لصديق", "یک صندلی برای دوست"],
  start: ["Sit down", "اجلس", "بنشین"],
  turn: ["Turn", "الدور", "نوبت"],
  you: ["You", "أنت", "شما"],
  seat: ["Seat", "المقعد", "صندلی"],
  deadline: ["Time to move", "المهلة", "مهلت"],
  until: ["until", "حتى", "تا"],
  dice: ["Dice", "النرد", "تاس"],
  waiting: ["Waiting for the other seats…", "بانتظار المقاعد الأخرى…", "در انتظار صندلی‌های دیگر…"],
  yourmove: ["Your move", "دورك", "نوبت شما"],
  theirs: ["Their move", "دورهم", "نوبت آنها"],
  finished: ["The match is over", "انتهت المباراة", "بازی تمام شد"],
  verdict: ["Checking the match in your browser…", "جارٍ التحقق من المباراة في متصفحك…", "بررسی بازی در مرورگر شما…"],
  transcript: ["Download the transcript", "نزّل السجل", "دریافت رونوشت"],
  export: ["Download the seat file", "نزّل ملف المقعد", "دریافت فایل صندلی"],
  link: ["Seat link for your friend", "رابط المقعد لصديقك", "پیوند صندلی برای دوست"],
  hand: ["Your hand", "يدك", "دست شما"],
  trick: ["On the table", "على الطاولة", "روی میز"],
  topcard: ["The stock's top card", "الورقة العليا", "کارت رویی"],
  lasttrick: ["Last trick", "الأكلة السابقة", "دست قبلی"],
  line: ["The line", "الخط", "ردیف"],
  train: ["Train", "قطار", "قطار"],
  mexican: ["Mexican train", "القطار المكسيكي", "قطار مکزیکی"],
  open: ["open to all", "مفتوح للجميع", "باز برای همه"],
  engine: ["Engine", "المحرّك", "موتور"],
  pile: ["Boneyard", "الكومة", "توده"],
  trump: ["Trump", "الحكم", "حکم"],
  hakem: ["Hakem", "الحاكم", "حاکم"],
  bid: ["Bid", "المزايدة", "پیشنهاد"],
  error: ["Error", "خطأ", "خطا"],
  scores: ["Score", "النقاط", "امتیاز"],
  tricks: ["tricks", "أكلات", "دست"],
  cards: ["cards", "أوراق", "کارت"],
  tiles: ["tiles", "أحجار", "مهره"],
  // between the parts of a line ("10 cards · 2 tricks"): a middle dot would read as the
  // Persian and Arabic zero (۰ ٠) next to their digits
  sep: [" · ", "، ", "، "],
  friend_seat: ["Friend", "الصديق", "دوست"],
  house_seat: ["House", "البيت", "خانه"],
  one_trick: ["trick", "أكلة", "دست"],
  one_card: ["card", "ورقة", "کارت"],
  one_tile: ["tile", "حجر", "مهره"],
  points: ["points", "نقاط", "امتیاز"],
  point: ["point", "نقطة", "امتیاز"],
  to: ["to", "إلى", "تا"],
  match_to: ["Match to", "المباراة إلى", "بازی تا"],
  cube: ["Cube", "المكعّب", "مکعب"],
  pips: ["Pips", "النقاط", "خال"],
  bar: ["Bar", "البار", "بار"],
  off: ["Off", "خارج", "بیرون"],
  undo: ["Undo", "تراجع", "برگرد"],
  movehint: ["Move a checker: tap a lit checker, then where it goes.", "حرّك قطعة: انقر قطعة مضيئة ثم مكانها الجديد.", "یک مهره را حرکت دهید: مهرهٔ روشن را بزنید، سپس مقصد را."],
  tilehint: ["Now tap the end to play it on.", "انقر الآن الطرف الذي تلعب عليه.", "حالا سری را که می‌خواهید بازی کنید بزنید."],
  discardhint: ["Choose the cards to put away.", "اختر الأوراق التي ترميها.", "کارت‌هایی را که کنار می‌گذارید انتخاب کنید."],
  left: ["left end", "الطرف الأيسر", "سر چپ"],
  right: ["right end", "الطرف الأيمن", "سر راست"],
  pass_text: [
    "Verified in your browser: every roll and deal of this match came from the seeds committed before it began, and every move was legal.",
    "تم التحقق في متصفحك: كل رمية وتوزيع في هذه المباراة جاء من البذور الملتزم بها قبل بدئها، وكل نقلة كانت قانونية.",
    "در مرورگر شما تأیید شد: همهٔ تاس‌ها و پخش‌های این بازی از بذرهایی آمد که پیش از شروع تعهد شده بودند، و همهٔ حرکت‌ها مجاز بودند.",
  ],
  fail_text: [
    "Verification failed: this match's record does not add up. Keep the two files below: they are your evidence.",
    "فشل التحقق: سجل هذه المباراة لا يستقيم. احتفظ بالملفين أدناه: إنهما دليلك.",
    "تأیید نشد: رونوشت این بازی درست درنمی‌آید. دو فایل زیر را نگه دارید: مدرک شما هستند.",
  ],
  incomplete_text: [
    "Not fully verified: some checks could not be made in this browser. The files below can be checked with the verify command.",
    "تحقق غير مكتمل: تعذّر إجراء بعض الفحوص في هذا المتصفح. يمكن فحص الملفين أدناه بأمر verify.",
    "تأیید ناقص: برخی بررسی‌ها در این مرورگر انجام نشد. فایل‌های زیر را می‌توان با فرمان verify بررسی کرد.",
  ],
  checks: ["How it was checked", "كيف تم التحقق", "چگونه بررسی شد"],
  won: ["won", "فاز", "برد"],
  youwon: ["You won!", "لقد فزت!", "شما بردید!"],
  yourside: ["Your side won!", "فاز فريقك!", "تیم شما برد!"],
  youlost: ["You lost.", "لقد خسرت.", "شما باختید."],
  nobody: ["Nobody won.", "لم يفز أحد.", "کسی نبرد."],
  and: ["and", "و", "و"],
  final: ["Final score", "النتيجة النهائية", "امتیاز نهایی"],
  why_resigned: ["by resignation", "بالاستسلام", "با کناره‌گیری"],
  why_timeout: ["on time: a seat did not move in time", "بالوقت: مقعد لم يلعب في الوقت", "با وقت: یک صندلی به‌موقع بازی نکرد"],
  why_expired: ["the match ran out of time", "انتهى وقت المباراة", "وقت بازی تمام شد"],
  why_no_reveal: ["a seat never revealed its seed", "مقعد لم يكشف بذرته", "یک صندلی بذرش را آشکار نکرد"],
  why_chain_exhausted: ["a seat used up its rolls", "مقعد استنفد رمياته", "یک صندلی تاس‌هایش را تمام کرد"],
  resign_q: ["Resign and lose", "تستسلم وتخسر", "کناره می‌گیرید و می‌بازید"],
  resign_yes: ["Yes, resign", "نعم، أستسلم", "بله، کناره می‌گیرم"],
  resign_match: ["Resign and lose the match", "تستسلم وتخسر المباراة", "کناره می‌گیرید و مسابقه را می‌بازید"],
  resign_no: ["Keep playing", "تابع اللعب", "ادامه می‌دهم"],
  sealed_seat: [
    "This is a sealed table of a game this web table does not deal yet (sealed shelem and Mexican Train): nothing was sent for your seat. Play it with qahwa's Python client (qahwa_client) or ask the operator for another table.",
    "هذه طاولة مختومة للعبة لا توزّعها هذه الطاولة على الويب بعد (الشلم والقطار المكسيكي المختومان): لم يُرسل شيء عن مقعدك. العب بعميل qahwa بلغة Python ‏(qahwa_client) أو اطلب من المشغّل طاولة أخرى.",
    "این میز مهروموم‌شدهٔ بازی‌ای است که این میز وب هنوز پخش نمی‌کند (شلم و قطار مکزیکی مهروموم‌شده): چیزی برای صندلی شما فرستاده نشد. با کلاینت پایتون qahwa ‏(qahwa_client) بازی کنید یا از گرداننده میز دیگری بخواهید.",
  ],
  sealed_opt: ["Sealed deal (your cards or tiles are opened only in this browser)", "توزيع مختوم (لا تُفتح أوراقك أو أحجارك إلا في هذا المتصفح)", "پخش مهروموم‌شده (کارت‌ها یا مهره‌هایتان فقط در همین مرورگر باز می‌شوند)"],
  sealed_hint: [
    "Sealed tables: hokm, qahve and Iraqi dominoes. With house seats only, a sealed table protects you when part of the deck stays undealt (hokm for two, Iraqi dominoes for two); otherwise leave a seat for a friend.",
    "الطاولات المختومة: الحكم والقهوة والدومينو العراقي. مع مقاعد البيت وحدها تحميك الطاولة المختومة حين يبقى جزء من المجموعة غير موزّع (الحكم لاثنين، الدومينو العراقي لاثنين)؛ وإلا فاترك مقعدًا لصديق.",
    "میزهای مهروموم‌شده: حکم، قهوه و دومینوی عراقی. تنها با صندلی‌های خانه، میز مهروموم‌شده وقتی از شما محافظت می‌کند که بخشی از دسته پخش نشود (حکم دونفره، دومینوی عراقی دونفره)؛ وگرنه یک صندلی برای دوست بگذارید.",
  ],
  dealing: ["Dealing: your browser makes its part of the sealed deal", "التوزيع: متصفحك يصنع نصيبه من التوزيع المختوم", "پخش: مرورگر شما سهم خود را از پخش مهروموم‌شده می‌سازد"],
  deal_seeded: [
    "Seeded deal: the operator can work out every hand once the seeds are revealed",
    "توزيع من البذور: يستطيع المشغّل معرفة كل يد بعد كشف البذور",
    "پخش از بذرها: گرداننده پس از آشکار شدن بذرها همهٔ دست‌ها را می‌تواند بداند",
  ],
  deal_sealed: [
    "Sealed deal: nobody is shown a card or tile before it is played",
    "توزيع مختوم: لا تُكشف ورقة أو حجر لأحد قبل أن تُلعب",
    "پخش مهروموم‌شده: هیچ کارت یا مهره‌ای پیش از بازی شدن به کسی نشان داده نمی‌شود",
  ],
  limits: ["What this table does not hide", "ما لا تخفيه هذه الطاولة", "آنچه این میز پنهان نمی‌کند"],
  // sealed.limits (docs/api.md, "Sealed tables"): the same English words as the server's
  limit_house_hands: [
    "The operator plays the house seats: it makes their keys, so it knows their cards or tiles.",
    "يلعب المشغّل مقاعد البيت: هو من يصنع مفاتيحها، فيعرف أوراقها أو أحجارها.",
    "گرداننده صندلی‌های خانه را بازی می‌کند: کلیدهایشان را خودش می‌سازد، پس کارت‌ها یا مهره‌هایشان را می‌داند.",
  ],
  limit_one_person_full_deal: [
    "One person among house seats, and the whole deck is dealt: every card or tile not dealt to a house seat is dealt to that person, so the operator can work out their hand.",
    "شخص واحد بين مقاعد البيت، والمجموعة كلها موزّعة: كل ورقة أو حجر لم يوزَّع على مقعد للبيت موزَّع على ذلك الشخص، فيستطيع المشغّل معرفة يده.",
    "یک نفر میان صندلی‌های خانه، و همهٔ دسته پخش می‌شود: هر کارت یا مهره‌ای که به صندلی خانه نرسیده به آن نفر رسیده، پس گرداننده می‌تواند دست او را بداند.",
  ],
  limit_one_person_partial_deal: [
    "One person among house seats, and part of the deck is not dealt: every card or tile not dealt to a house seat is either that person's or dealt to nobody, so the operator knows their hand is among those.",
    "شخص واحد بين مقاعد البيت، وجزء من المجموعة لا يوزَّع: كل ورقة أو حجر لم يوزَّع على مقعد للبيت إما لذلك الشخص وإما لم يوزَّع على أحد، فيعرف المشغّل أن يده من بينها.",
    "یک نفر میان صندلی‌های خانه، و بخشی از دسته پخش نمی‌شود: هر کارت یا مهره‌ای که به صندلی خانه نرسیده یا از آنِ آن نفر است یا به کسی نرسیده، پس گرداننده می‌داند دست او از میان آنهاست.",
  ],
  // the games
  g_tawla: ["Tawla (backgammon)", "طاولة", "تخته‌نرد"],
  g_mahbusa: ["Mahbusa", "محبوسة", "محبوسه"],
  g_hokm: ["Hokm", "حكم", "حکم"],
  g_shelem: ["Shelem", "شلم", "شلم"],
  g_qahve: ["Qahve", "قهوة", "قهوه"],
  g_iraqi_domino: ["Iraqi dominoes", "الدومينو العراقي", "دومینوی عراقی"],
  g_mexican_train: ["Mexican Train", "القطار المكسيكي", "قطار مکزیکی"],
  // the actions, in words
  a_roll: ["Roll the dice", "ارمِ النرد", "تاس بریز"],
  a_roll_opening: ["Roll for who starts", "ارمِ لتحديد من يبدأ", "تاس بریز: چه کسی شروع کند"],
  a_roll_value: ["Add your share to the roll", "أضف حصتك إلى الرمية", "سهم خود را به تاس بیفزا"],
  a_double: ["Double the stakes to", "ضاعف الرهان إلى", "دو برابر کن به"],
  a_take: ["Take the double", "اقبل المضاعفة", "دوبل را بپذیر"],
  a_drop: ["Drop and lose", "ارفض وتخسر", "رد کن و ببازی"],
  a_accept: ["Accept their resignation", "اقبل استسلامه", "کناره‌گیری را بپذیر"],
  a_reject: ["Refuse their resignation", "ارفض استسلامه", "کناره‌گیری را نپذیر"],
  a_resign: ["Resign…", "استسلم…", "کناره بگیر…"],
  a_resign_1: ["a single game", "لعبة واحدة", "یک بازی"],
  a_resign_2: ["a gammon", "مارس", "مارس"],
  a_resign_3: ["a backgammon", "مارس مضاعف", "مارس دوبل"],
  a_cut: ["Cut the deck", "اقطع الورق", "کارت‌ها را ببر"],
  a_tap: ["Tap the deck (play it uncut)", "انقر الورق (بلا قطع)", "به دسته بزن (بدون بریدن)"],
  a_keep_top: ["Keep the top card", "احتفظ بالورقة العليا", "کارت رویی را نگه دار"],
  a_keep_next: ["Throw it away, keep the next", "ارمها وخذ التالية", "دورش بینداز، بعدی را نگه دار"],
  a_draw: ["Draw a tile", "اسحب حجرًا", "مهره بردار"],
  a_pass: ["Pass", "بس", "پاس"],
  a_bid: ["Bid", "زايد", "پیشنهاد"],
  a_discard: ["Put these away", "ارمِ هذه", "این‌ها را کنار بگذار"],
  a_nars: ["nars", "نرس", "نرس"],
  a_nomove: ["No move is possible: go on", "لا نقلة ممكنة: تابع", "حرکتی ممکن نیست: ادامه"],
  a_play: ["Play", "العب", "بازی کن"],
  s_C: ["Clubs", "سباتي", "خاج"],
  s_D: ["Diamonds", "ديناري", "خشت"],
  s_H: ["Hearts", "كبة", "دل"],
  s_S: ["Spades", "بستوني", "پیک"],
};

const params = new URLSearchParams(typeof location === "undefined" ? "" : location.search);
export const lang: Lang = LANGS.find((l) => l === params.get("lang")) ?? "en";
export const rtl = lang === "ar" || lang === "fa";

/** Whether the page has words of its own for ``key``. */
export function has(key: string): boolean {
  return key in T;
}

/** The word for ``key`` in the page's language (the key itself when there is none). */
export function t(key: string): string {
  return T[key]?.[LANGS.indexOf(lang)] ?? key;
}

/** A number in the page's language (Arabic-Indic digits in ar, Persian in fa). */
// one formatter for the page (toLocaleString makes one at every call: a table drawn again
// writes hundreds of numbers)
const NUMBERS = new Intl.NumberFormat(lang === "en" ? "en" : lang === "ar" ? "ar-IQ" : "fa-IR");
export function num(n: number): string {
  return NUMBERS.format(n);
}

export const SUIT_SIGN: Record<string, string> = { C: "♣", D: "♦", H: "♥", S: "♠" };

/** A legal action in words, for a button that sends it (the game's view for context). */
export function words(a: Obj, view: Obj): string {
  const type = String(a["type"]);
  switch (type) {
    case "roll":
      return t("a_roll");
    case "roll_value":
      return view["phase"] === "opening" ? t("a_roll_opening") : t("a_roll_value");
    case "double": {
      const cube = view["cube"] as Obj | undefined;
      const v = typeof cube?.["value"] === "number" ? cube["value"] : 1;
      return `${t("a_double")} ${num(v * 2)}`;
    }
    case "drop": {
      const cube = view["cube"] as Obj | undefined;
      const v = typeof cube?.["value"] === "number" ? cube["value"] : 1;
      return `${t("a_drop")} ${num(v)}`;
    }
    case "take":
    case "accept":
    case "reject":
    case "cut":
    case "tap":
    case "pass":
      return t(`a_${type}`);
    case "resign":
      return t("a_resign");
    case "trump": {
      const s = String(a["suit"]);
      return `${SUIT_SIGN[s] ?? s} ${t(`s_${s}`)}${a["nars"] === true ? ` (${t("a_nars")})` : ""}`;
    }
    case "draw":
      if (a["keep"] === true) return t("a_keep_top");
      if (a["keep"] === false) return t("a_keep_next");
      return t("a_draw");
    case "bid":
      return `${t("a_bid")} ${num(Number(a["tricks"] ?? a["amount"]))}`;
    case "move":
      return t("a_nomove");
    default:
      return t("a_play");
  }
}

/** What resigning at ``points`` costs, in words ("a gammon"). */
export function resignCost(points: number, view: Obj): string {
  const cube = view["cube"] as Obj | undefined;
  const v = typeof cube?.["value"] === "number" ? cube["value"] : 1;
  const n = points * v;
  return `${t(`a_resign_${points}`)} (${num(n)} ${t(n === 1 ? "point" : "points")})`;
}

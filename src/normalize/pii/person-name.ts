import nlp from "compromise/two";

/**
 * Person names. Observations carry most names in structure — a JSON key (`"full_name"`,
 * `"displayName"`, `"first_name"`), a labelled line (`Author:`, `Signed-off-by:`), a display name
 * before an address (`Sarah Kim <sarah@…>`), a title (`Dr.`), a greeting (`Hi Laura,`), git
 * blame/shortlog columns, a passwd GECOS field — and the rest in free text and tree nodes
 * (`[listitem] "Dana Whitfield"`). Structure is read with regexes; elsewhere a run of capitalised
 * words is a name when compromise's lexicon (its given-name, surname and English word lists) says
 * its first word is a given name and the words after it are surnames or words that are not
 * English. compromise's tagger itself (`nlp(text).people()`) is not run: at well under 1 MB/s it
 * is far too slow for the PII stage, and on trees, JSON and logs far less precise than these
 * rules (see test/pii-names-addresses.test.ts).
 *
 * A name found once is then found everywhere else in the same text (shortlog and blame repeat the
 * author of a git log), and so are its surname and its words that the lexicon knows as names
 * (`Morales told reporters` after `Ana Morales`).
 *
 * Unicode property classes are slow in V8, so each rule first finds its candidates with a plain
 * character-class regex and only then looks closer.
 */
export interface PersonNameSpan {
  kind: "person_name";
  start: number;
  end: number;
  /** The name lower-cased, whitespace collapsed. */
  key: string;
}

type WordClass = "given" | "person" | "surname" | "common";

/** compromise's lexicon as word classes: given names, ambiguous person words, surnames, everything else. */
function buildLexicon(): { words: Map<string, WordClass>; multi: Map<string, WordClass> } {
  const model = nlp.model() as { one: { lexicon: Record<string, string | string[]> } };
  const words = new Map<string, WordClass>();
  const multi = new Map<string, WordClass>();
  for (const [word, tags] of Object.entries(model.one.lexicon)) {
    const t = Array.isArray(tags) ? tags.join(",") : tags;
    const cls: WordClass = /FirstName|MaleName|FemaleName/.test(t)
      ? "given"
      : /LastName/.test(t)
        ? "surname"
        : t === "Person"
          ? "person"
          : "common";
    (word.includes(" ") ? multi : words).set(word, cls);
  }
  return { words, multi };
}

const { words: LEXICON, multi: MULTI_WORD } = buildLexicon();

/**
 * Words that are never part of a person's name and veto a name they follow: organisations,
 * places and facilities, streets, interface and software words. compromise's lexicon knows verbs
 * and adjectives well but few nouns, hence this list.
 */
const VETO = new Set(
  `inc llc ltd gmbh ag sa sas sarl srl bv nv plc corp corporation company co group holdings partners associates foundation
  institute university college school academy hospital clinic bank trust fund capital ventures labs lab systems technologies
  technology software solutions services service consulting studios studio media press publishing records entertainment games
  pictures productions network networks communications telecom airlines airways motors industries industrial enterprises
  international global worldwide team teams department dept office support management administration agency authority council
  committee club society association union church cathedral museum gallery library theatre theater cinema restaurant bistro
  cafe café coffee bakery bar pub grill kitchen pizza pizzeria deli diner trattoria brasserie hotel inn motel hostel resort shop
  store stores market mart mall pharmacy salon spa gym fitness center centre plaza tower building house hall park garden gardens
  square bridge station airport terminal harbor harbour beach lake river mountain valley island islands bay county city state
  province district village town street st road rd avenue ave boulevard blvd lane ln drive dr way court ct place pl terrace
  circle highway hwy parkway pkwy expressway route memorial monument stadium arena field fields zoo aquarium
  account accounts settings profile profiles search message messages inbox mail email edit delete save cancel submit login logout
  register help details overview dashboard report reports review reviews summary notes release releases version update updates
  download downloads upload file files folder folders document documents photos images videos music preferences privacy terms
  policy cart checkout order orders payment payments billing shipping address delivery tracking invoice product products item
  items price total sale offer deal news blog events calendar schedule meeting meetings tasks projects issues request requests
  merge branch commit build tests error errors warning warnings info debug trace status health server client api app apps
  application data database cache queue worker job jobs node cluster cloud platform engine framework module package plugin
  extension component manager engineer developer designer director officer assistant specialist analyst consultant coordinator
  lead head chief senior junior staff principal intern customer customers user users guest guests member members admin
  administrator owner editor viewer information family friends people person everyone chat channel room floor unit suite
  apartment flat box pro max mini plus ultra air lite edition series model models type types class object value string number
  integer list map array table view page pages site web online digital mobile smart open source free best top next previous back
  forward more less show hide daily weekly monthly annual yearly quarterly today tomorrow yesterday morning evening night week
  month year day time date spring summer autumn winter christmas easter holiday period regards thanks greetings welcome hello
  sir madam all none default null undefined true false new old main master test demo sample example examples guide tutorial
  docs documentation reference manual handbook notice notification notifications alert alerts reminder reminders invitation
  invitations property estate agents agent properties wealth finance financial insurance health care medical dental legal law
  firm bros brothers sons kids baby home homes image video audio text token tokens language schema json xml html css sql http
  https url uri id uuid key keys bucket stream buffer handler config options params context provider factory builder adapter
  wrapper helper utils parser compiler runtime sdk cli tool tools pipeline dataset datasets feature features segment function
  method property interface enum struct script shell command terminal console window dialog button menu tab panel widget form
  field input output label icon logo theme layout style font color`.split(/\s+/),
);

/** Surnames that are also English words: kept after a given name, where another English word ends the name. */
const WORD_SURNAMES = new Set(
  `brown white black green gray grey young king baker hunter cook wood hill turner carter cooper ward price bell rose hall wright
  moore long fox fisher miller taylor walker hughes lane page parker mason palmer rich stone webb wells banks bishop cross
  knight butler porter shepherd marsh frost snow rice mills little small short strong sharp swift noble bond chase day
  hope gold silver steel love bush pope burns rivers woods brooks lake ford bridges church castle french english
  freeman newman goodman chamberlain marshall sterling`.split(/\s+/),
);

for (const w of WORD_SURNAMES) VETO.delete(w);

/** Endings of English nouns and adjectives that surnames rarely have (Classification, Segmentation, Retries). */
const ENGLISH_ENDING = /(?:tion|sion|ment|ness|ity|ance|ence|ics|ism|ogy|ous|ful|less|able|ible|ings|ies|ware|ization|isation)$/;

/** Lower-case name particles between given name and surname (Ludwig van Beethoven, María de la Cruz). */
const PARTICLE = "(?:van|von|der|den|de|del|della|di|da|du|dos|das|do|le|la|bin|binti|ibn|al|el|ter|ten|zu|y)";
/** One capitalised name word: O'Neill, McDonald, DeLuca, Mei-Ling, Vogel-Brandt, Nguyễn. CamelCase identifiers are not. */
const WORD = "(?:(?:Mc|Mac|O['’]|D['’]|De|Di|Da|La|Le|Van|Von|Al-|El-)?\\p{Lu}[\\p{Ll}\\p{M}]+(?:-\\p{Lu}?[\\p{Ll}\\p{M}]+)*)";
const INITIAL = "(?:\\p{Lu}\\.?)";
/** A run of up to eight name-shaped words (with particles and middle initials), matched where a candidate starts. */
const RUN_AT = new RegExp(
  `(?<![\\p{L}\\p{N}_@./\\\\'’-])${WORD}\\.?(?:[ \\u00A0]+(?:${PARTICLE}[ ]+){0,2}(?:${INITIAL}[ ]+)?${WORD}\\.?){0,7}(?![\\p{L}\\p{N}_@/\\\\]|[.’'-][\\p{Lu}\\p{N}])`,
  "uy",
);
/** Latin capitals and letters, without /u: the fast first pass. */
const UP = "A-ZÀ-ÖØ-ÞĀ-ſḀ-ỿ";
const LOW = "a-zß-öø-ÿĀ-ſḀ-ỿ";
/** Two capitalised words in a row (perhaps with particles or an initial between): where a free-text name may be. */
const PAIR = new RegExp(`[${UP}][${LOW}'’-]+\\.?[ \\u00A0]+(?:[a-z]{1,6} ){0,2}(?:[A-Z]\\.? )?[${UP}][${LOW}'’]`, "g");
const WORD_RE = new RegExp(`^${WORD}$`, "u");
const INITIAL_RE = new RegExp(`^${INITIAL}$`, "u");
const PARTICLE_RE = new RegExp(`^${PARTICLE}$`);

function lookup(word: string): WordClass | undefined {
  const lower = word.toLowerCase();
  if (VETO.has(lower)) return "common";
  const found = LEXICON.get(lower) ?? (NON_ASCII.test(lower) ? LEXICON.get(fold(lower)) : undefined);
  if (found) return found;
  // Jean-Luc, John-David: a hyphenated given name.
  const hyphen = lower.indexOf("-");
  if (hyphen > 0 && LEXICON.get(lower.slice(0, hyphen)) === "given") return "given";
  return ENGLISH_ENDING.test(lower) ? "common" : undefined;
}

const NON_ASCII = /[\u0080-\uffff]/;
/** Without diacritics: the lexicon has Chloe, not Chloé. */
const fold = (word: string) => word.normalize("NFD").replace(/\p{M}/gu, "");

const isKnownName = (c: WordClass | undefined) => c === "given" || c === "surname";

interface Token {
  text: string;
  start: number;
  end: number;
  kind: "word" | "initial" | "particle";
}

function tokenize(text: string, offset: number): Token[] | null {
  const tokens: Token[] = [];
  for (const m of text.matchAll(/\S+/g)) {
    const t = m[0];
    const kind = WORD_RE.test(t) ? "word" : INITIAL_RE.test(t) ? "initial" : PARTICLE_RE.test(t) ? "particle" : null;
    if (!kind) return null;
    tokens.push({ text: t, start: offset + m.index, end: offset + m.index + t.length, kind });
  }
  return tokens;
}

/**
 * How much the context vouches for a name: a key for part of a name (`first_name`), a key or
 * label that holds a whole one (`full_name`, `Author:`), or a weaker hint (`name`, `To:`, a
 * display name) that needs the lexicon to know one of its words as a name.
 */
type Strength = "part" | "strong" | "generic";

/** Found spans: start, end, priority (which wins an overlap), whether its words may be propagated. */
type Span = [start: number, end: number, priority: number, propagate: boolean];

/** The name in `text[start, end)` if the context's strength allows it, trimmed, or null. */
function acceptValue(text: string, start: number, end: number, strength: Strength): [number, number, boolean] | null {
  // Trailing punctuation and possessives are not part of the name.
  let e = end;
  while (e > start && /[\s,.;:!?)'’]/.test(text[e - 1] ?? "")) e--;
  if (/['’]s$/.test(text.slice(start, e))) e -= 2;
  let s = start;
  while (s < e && /\s/.test(text[s] ?? "")) s++;
  if (e - s < 2 || e - s > 60) return null;
  const value = text.slice(s, e);
  // "Martin, Alice": surname first.
  const parts = strength !== "generic" && /^[^,]+, [^,]+$/.test(value) ? value.replace(",", " ") : value;
  const tokens = tokenize(parts, s);
  if (!tokens || tokens.length === 0 || tokens.length > 5) return null;
  const first = tokens[0] as Token;
  const last = tokens[tokens.length - 1] as Token;
  if (first.kind !== "word" || last.kind !== "word") return null;
  const words = tokens.filter((t) => t.kind === "word");
  if (words.some((w) => VETO.has(w.text.toLowerCase()))) return null;
  const multi = MULTI_WORD.get(value.toLowerCase());
  if (multi && multi !== "person") return null;
  const classes = words.map((w) => lookup(w.text));
  const named = classes.filter(isKnownName).length;
  const common = classes.filter((c) => c === "common").length;
  if (words.length === 1) {
    if (strength === "part") return common === 0 ? [s, e, true] : null;
    return classes[0] === "given" ? [s, e, true] : null;
  }
  if (common === words.length) return null;
  if (strength === "generic" && named === 0) return null;
  return [s, e, true];
}

/** Keys, normalised (lower case, no `_`, `-` or spaces), whose value is part of a name. */
const PART_KEYS = new Set(["firstname", "lastname", "givenname", "familyname", "surname", "middlename", "preferredname", "maidenname"]);
/** Keys whose value is a whole name. */
const STRONG_KEY =
  /^(?:full|display|real|legal|contact|customer|billing|shipping|recipient|cardholder|accountholder|holder|author|owner|employee|patient|person|sender|attendee|emergencycontact|primarycontact|signer|buyer|seller|tenant|landlord|guest|passenger|driver|member|your|committer|reviewer|assignee|reporter|manager)name$|^nameoncard$/;
/** Keys whose value is often a name, and often not (`"name": "lodash"`, `"author": "Acme"`). */
const GENERIC_KEYS = new Set(
  "name author contact customer owner assignee reporter manager recipient sender from to attendee organizer organiser landlord tenant agent cardholder committer maintainer creator signer user member employee patient client person".split(
    " ",
  ),
);

function keyStrength(rawKey: string): Strength | null {
  const key = rawKey.toLowerCase().replace(/[\s_-]/g, "");
  if (PART_KEYS.has(key)) return "part";
  if (STRONG_KEY.test(key)) return "strong";
  if (GENERIC_KEYS.has(key)) return "generic";
  return null;
}

/**
 * `"key": "Value"`, `key='Value'`, `key == "Value"`, `"Label" value="Value"`: found at the
 * separator before a capitalised quoted value; the key is read backwards from there.
 */
const KEY_SEPARATOR = new RegExp(`[:=]=?[ \\t]*(["'])(?=[${UP}])`, "g");
const KEY_BEFORE = /([A-Za-z][A-Za-z_ -]{0,28}[A-Za-z])["']?(?:[ \t]+value)?[ \t]*$/;

/** Labels before a colon whose value is one or more names (lower case, as looked up). */
const STRONG_LABELS = new Set(
  "author authors commit committer signed-off-by co-authored-by reviewed-by acked-by tested-by reported-by suggested-by helped-by name full name contact person customer client patient assignee reporter owner agent landlord tenant recipient attendee attendees organizer organiser speaker presenter interviewer candidate applicant maintainer maintainers geschäftsführer geschäftsführerin inhaber inhaberin ansprechpartner ansprechpartnerin vorstand gérant responsable".split(
    " ",
  ),
);
const GENERIC_LABELS = new Set("from to cc bcc reply-to sender contact manager host by".split(" "));
/** A colon (and spaces) before a capital: where a labelled value may start. */
const LABEL_COLON = new RegExp(`:[ \\t]+(?=[${UP}])`, "g");
/** The label before a colon at `at`: its last one or two words, lower-cased, as a label the sets know, or null. */
function labelBefore(text: string, at: number): Strength | null {
  let i = at;
  while (i > 0 && at - i < 40 && isLabelChar(text.charCodeAt(i - 1))) i--;
  const one = text.slice(i, at).toLowerCase();
  if (STRONG_LABELS.has(one)) return "strong";
  if (GENERIC_LABELS.has(one)) return "generic";
  if (text[i - 1] === " ") {
    let j = i - 1;
    while (j > 0 && i - j < 20 && isLabelChar(text.charCodeAt(j - 1))) j--;
    if (STRONG_LABELS.has(text.slice(j, at).toLowerCase())) return "strong";
  }
  // `Verantwortlich für den Inhalt nach § 55 Abs. 2 RStV: Klaus Vogel`.
  const line = text.lastIndexOf("\n", at) + 1;
  return at - line < 80 && text.slice(line, at).includes("Verantwortlich") ? "strong" : null;
}

function isLabelChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 45 || (c >= 0xc0 && c <= 0xff);
}

/** The value after a label: names, each perhaps with `<address>` or `(note)`, separated by commas, `and`, `&`. */
const LABEL_VALUE =
  /^(?:[^\n<>",;:()[\]{}|]{2,60}(?:[ \t]*<[^>\n]{1,80}>)?(?:[ \t]*\([^)\n]{0,60}\))?(?:[ \t]*(?:,|;|\band\b|&|\bund\b|\bet\b)[ \t]*|(?=[\n"<>;:()[\]{}|·]|$)))+/;

/** `Sarah Kim <sarah@…>`: an address in angle brackets, then the display name before it. */
const ANGLE_ADDRESS = /<[^>\s@]{1,64}@[^>\s]{1,255}>/g;
const DISPLAY_BEFORE = /(?:^|[\s"'(,;:[{=])["']?([A-ZÀ-ÖØ-Þ][^\n<>"',;:()[\]{}@=]{0,60}?)["']?[ \t]*$/;

/** Titles and bylines that start a run of capitalised words: the words after them are a name. */
const TITLES = new Set(
  "mr mrs ms mx dr prof rev hon sgt capt lt col sr sra mme mlle miss sir dame lady lord herr frau professor doctor supervisor senator judge justice mayor governor president detective officer captain coach councilmember councillor representative ambassador minister chancellor by".split(
    " ",
  ),
);
/** Greetings that start a run: `Hi Laura`, `Dear Ms. Thompson`. */
const GREETING_WORDS = new Set("hi hello hey dear thanks cheers welcome congrats congratulations".split(" "));

/** Sign-offs and greetings with a comma before the name: `Best, Elena`, `Thanks,\nElena`, `Hi, Laura`. */
const SIGN_OFF = new RegExp(
  `\\b(?:Best|Thanks|Cheers|Regards|Sincerely|Yours|Love|Bye|Hi|Hello|Hey|Dear)[ \\t]*,[ \\t]*\\n?[ \\t]*([${UP}][${LOW}'’-]+(?:[ \\t][${UP}][${LOW}'’-]+)?)(?=[ \\t]*[,!.:;"\\n]|[ \\t]*$)`,
  "g",
);

/** git blame: `8a1b2c3d (Mei-Ling Chou  2024-05-02 14:11:09 +0800 40)`. */
const BLAME = /^\^?[0-9a-f]{7,40}[ \t]+(?:\S+[ \t]+)?\(([^()\n\d]{2,60}?)[ \t]+\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}/gm;
/** git shortlog -sn: a count, a tab, a name. */
const SHORTLOG = /^[ \t]*\d+\t([^\t\n]{2,60})$/gm;
/** passwd: `user:x:1003:1003:Dana Whitfield,Room 214,…:/home/…`. */
const GECOS = /^[a-z_][\w.-]*:[^:\n]*:\d+:\d+:([^,:\n]{2,60})[,:]/gm;

function add(text: string, out: Span[], start: number, end: number, strength: Strength, priority: number): void {
  const r = acceptValue(text, start, end, strength);
  if (r) out.push([r[0], r[1], priority, r[2]]);
}

/** Each name of a list (`Klaus Vogel, Sabine Vogel-Brandt`, `Rebecca Liu and Omar Haddad`), without addresses and notes. */
function addList(text: string, out: Span[], start: number, list: string, strength: Strength): void {
  for (const m of list.matchAll(/[^,;&<>()]+?(?=[ \t]*(?:<[^>]*>|\([^)]*\)|,|;|&|\band\b|\bund\b|\bet\b|$))/g)) {
    if (/^\s*(?:and|und|et)\s*$/.test(m[0])) continue;
    const s = start + m.index;
    add(text, out, s, s + m[0].length, strength, 2);
  }
}

/** Free-text runs: a given name followed by surnames or by words the English lexicon doesn't know. */
function freeRuns(text: string, out: Span[]): void {
  PAIR.lastIndex = 0;
  for (let p = PAIR.exec(text); p; p = PAIR.exec(text)) {
    let s = p.index;
    while (s > 0 && /[\p{L}\p{M}'’-]/u.test(text[s - 1] ?? "")) s--;
    RUN_AT.lastIndex = s;
    const m = RUN_AT.exec(text);
    if (!m) {
      PAIR.lastIndex = p.index + 1;
      continue;
    }
    PAIR.lastIndex = s + m[0].length;
    if (!m[0].split(/[\s\u00A0]+/).some(mayStartName)) continue;
    // A word with a full stop ends a sentence unless it is a title (`Paris. Alice Martin`, `Dr. Samuel Okonkwo`).
    let tokens: Token[] = [];
    for (const t of m[0].matchAll(/\S+/g)) {
      const word = t[0];
      const start = s + t.index;
      const title = word.endsWith(".") && TITLES.has(word.slice(0, -1).toLowerCase());
      const bare = word.endsWith(".") && !title && !INITIAL_RE.test(word) ? word.slice(0, -1) : word;
      const clean = title ? word.slice(0, -1) : bare;
      const kind = title || WORD_RE.test(bare) ? "word" : INITIAL_RE.test(bare) ? "initial" : PARTICLE_RE.test(bare) ? "particle" : null;
      if (kind) tokens.push({ text: clean, start, end: start + clean.length, kind });
      if (!kind || bare !== word) {
        if (tokens.length > 1) analyseRun(text, tokens, out);
        tokens = [];
      }
    }
    if (tokens.length > 1) analyseRun(text, tokens, out);
  }
}

/** A word a name may start with or follow: a given name, an ambiguous person word, a title or a greeting. */
function mayStartName(word: string): boolean {
  const w = (word.endsWith(".") ? word.slice(0, -1) : word).toLowerCase();
  if (TITLES.has(w) || GREETING_WORDS.has(w)) return true;
  const c = LEXICON.get(w) ?? (NON_ASCII.test(w) ? LEXICON.get(fold(w)) : undefined);
  return c === "given" || c === "person";
}

function analyseRun(text: string, tokens: Token[], out: Span[]): void {
  const head = (tokens[0] as Token).text.replace(/\.$/, "").toLowerCase();
  if (tokens.length > 1 && (TITLES.has(head) || GREETING_WORDS.has(head))) {
    // `Dr. Samuel Okonkwo`, `Supervisor Ana Morales`, `Dear Ms. Thompson`, `Hi Laura`, `By Rebecca Liu`.
    let rest = 1;
    const second = (tokens[1] as Token).text.replace(/\.$/, "").toLowerCase();
    if (GREETING_WORDS.has(head) && TITLES.has(second) && second !== "by") rest = 2;
    const named = tokens.slice(rest, rest + 4);
    const lastWord = named.findLastIndex((t) => t.kind === "word");
    if (lastWord >= 0) {
      const first = named[0] as Token;
      const last = named[lastWord] as Token;
      const strength = rest === 2 || (TITLES.has(head) && head !== "by") ? "part" : "generic";
      add(text, out, first.start, last.end, strength, 2);
    }
    return;
  }
  const words = tokens.filter((t) => t.kind === "word");
  const classes = words.map((w) => lookup(w.text));
  for (let i = 0; i < words.length; i++) {
    const c = classes[i];
    if (c !== "given" && c !== "person") continue;
    let j = i + 1;
    while (
      j < words.length &&
      j - i < 4 &&
      (classes[j] !== "common" || WORD_SURNAMES.has((words[j] as Token).text.toLowerCase())) &&
      !VETO.has((words[j] as Token).text.toLowerCase())
    )
      j++;
    // (A word the lexicon doesn't know before the given name is not taken: São Paulo, Vijenac Ivana Mažuranića.)
    const b = i;
    if (j - b < 2) continue;
    // A weak first word (Austin, Jordan, Virginia) needs a known name after it.
    if (c === "person" && !classes.slice(i + 1, j).some(isKnownName)) continue;
    const first = words[b] as Token;
    const last = words[j - 1] as Token;
    // Names that an organisation's or a street's name continues (Morgan Stanley Wealth Management, Colin P Kelly Jr St).
    const after = words[j];
    if (after && VETO.has(after.text.toLowerCase())) return;
    if (/^[ \t]+(?:Jr|Sr)\.?[ \t]+(?:St|Ave|Rd|Blvd|Dr|Street|Avenue|Road|Way)\b/.test(text.slice(last.end, last.end + 12))) return;
    // After a house number: a street.
    if (/\d[ \t]*$/.test(text.slice(Math.max(0, first.start - 3), first.start))) return;
    const value = text.slice(first.start, last.end).toLowerCase();
    const multi = MULTI_WORD.get(value);
    if (multi && multi !== "person") return;
    out.push([first.start, last.end, 1, true]);
    i = j - 1;
  }
}

export function findPersonNames(text: string): PersonNameSpan[] {
  const found: Span[] = [];
  KEY_SEPARATOR.lastIndex = 0;
  for (let m = KEY_SEPARATOR.exec(text); m; m = KEY_SEPARATOR.exec(text)) {
    const key = KEY_BEFORE.exec(text.slice(Math.max(0, m.index - 31), m.index))?.[1];
    const strength = key ? keyStrength(key) : null;
    if (!strength) continue;
    const start = m.index + m[0].length;
    const quote = m[1] as string;
    let end = start;
    while (end < text.length && end - start < 120 && text[end] !== quote && text[end] !== "\n" && text[end] !== "\\" && text[end] !== "<")
      end++;
    if (text[end] === quote || text[end] === "<") add(text, found, start, end, strength, 3);
  }
  LABEL_COLON.lastIndex = 0;
  for (let m = LABEL_COLON.exec(text); m; m = LABEL_COLON.exec(text)) {
    const strength = labelBefore(text, m.index);
    if (!strength) continue;
    const start = m.index + m[0].length;
    const list = LABEL_VALUE.exec(text.slice(start, start + 400))?.[0];
    if (list) addList(text, found, start, list, strength);
  }
  if (text.includes("@")) {
    ANGLE_ADDRESS.lastIndex = 0;
    for (let m = ANGLE_ADDRESS.exec(text); m; m = ANGLE_ADDRESS.exec(text)) {
      const from = Math.max(0, m.index - 70);
      const d = DISPLAY_BEFORE.exec(text.slice(from, m.index));
      const name = d?.[1];
      if (!d || !name) continue;
      const start = from + d.index + d[0].indexOf(name);
      add(text, found, start, start + name.length, "generic", 2);
    }
  }
  if (text.includes(",")) {
    for (const m of text.matchAll(SIGN_OFF)) {
      const name = m[1] as string;
      const start = m.index + m[0].length - name.length;
      add(text, found, start, start + name.length, "generic", 2);
    }
  }
  if (text.includes("(")) {
    for (const m of text.matchAll(BLAME)) {
      const name = (m[1] as string).trimEnd();
      const start = m.index + m[0].indexOf(name);
      add(text, found, start, start + name.length, "strong", 3);
    }
  }
  if (text.includes("\t")) {
    for (const m of text.matchAll(SHORTLOG)) {
      const name = m[1] as string;
      const start = m.index + m[0].length - name.length;
      add(text, found, start, start + name.length, "strong", 3);
    }
  }
  if (text.includes(":x:") || text.includes(":*:")) {
    for (const m of text.matchAll(GECOS)) {
      const name = m[1] as string;
      const start = m.index + m[0].length - name.length - 1;
      add(text, found, start, start + name.length, "strong", 3);
    }
  }
  freeRuns(text, found);
  if (found.length === 0) return [];
  propagate(text, found);
  return resolve(text, found);
}

const NEXT_WORD = /^[ \t](\p{L}+)/u;
/** The name-shaped word before `at` and one space or tab, if there is one. */
function wordBefore(text: string, at: number): string | undefined {
  if (text[at - 1] !== " " && text[at - 1] !== "\t") return undefined;
  let i = at - 1;
  while (i > 0 && at - i < 40 && isWordChar(text.charCodeAt(i - 1))) i--;
  if (i > 0 && /[\p{N}_@./-]/u.test(text[i - 1] as string)) return undefined;
  const word = text.slice(i, at - 1);
  return WORD_RE.test(word) ? word : undefined;
}

/** Letters (ASCII, and anything past Latin-1 punctuation), apostrophes and hyphens: what a name word is made of. */
function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 39 || c === 0x2019 || c === 45 || (c >= 0xc0 && c !== 0xd7 && c !== 0xf7);
}

/** Other occurrences, in the same text, of the names found and of their words the lexicon knows as names. */
function propagate(text: string, found: Span[]): void {
  const seen = new Set<string>();
  const values: string[] = [];
  for (const [s, e, , words] of found) {
    const v = text.slice(s, e);
    if (!seen.has(v)) {
      seen.add(v);
      values.push(v);
    }
    if (!words || v.includes(",")) continue;
    const parts = v.split(/\s+/);
    for (const [i, w] of parts.entries()) {
      if (w.length < 3 || seen.has(w)) continue;
      // Words the lexicon knows as names, and the surname of a name (Okafor, after Margaret Okafor).
      const c = lookup(w);
      if (!isKnownName(c) && !(i === parts.length - 1 && i > 0 && c === undefined && w.length >= 4)) continue;
      seen.add(w);
      values.push(w);
    }
  }
  const known = new Set(found.map(([s, e]) => s * 67108864 + e));
  for (const v of values) {
    const single = !/\s/.test(v);
    let at = text.indexOf(v);
    while (at >= 0) {
      let s = at;
      let e = at + v.length;
      at = text.indexOf(v, e);
      if (
        /[\p{L}\p{N}_@./-]/u.test(text[s - 1] ?? "") ||
        /[\p{L}\p{N}_@/-]/u.test(text[e] ?? "") ||
        /^\.[\p{L}\p{N}]/u.test(text.slice(e, e + 2))
      )
        continue;
      // Part of an organisation's name: Bäckerei Vogel GmbH.
      const next = NEXT_WORD.exec(text.slice(e, e + 40))?.[1];
      if (next && VETO.has(next.toLowerCase())) continue;
      if (single) {
        // A known surname after a capitalised word that is not English, a known given name before one: the rest of the name.
        const prev = wordBefore(text, s);
        if (prev && lookup(prev) !== "common") s -= prev.length + 1;
        else if (next && WORD_RE.test(next) && lookup(v) === "given" && lookup(next) !== "common") e += next.length + 1;
      }
      if (!known.has(s * 67108864 + e)) found.push([s, e, 0, false]);
    }
  }
}

/** Overlaps resolved: the stronger evidence, then the longer span, then the earlier. */
function resolve(text: string, found: Span[]): PersonNameSpan[] {
  found.sort((a, b) => b[2] - a[2] || b[1] - b[0] - (a[1] - a[0]) || a[0] - b[0]);
  const chosen: Span[] = [];
  for (const span of found) if (!chosen.some((c) => span[0] < c[1] && span[1] > c[0])) chosen.push(span);
  chosen.sort((a, b) => a[0] - b[0]);
  return chosen.map(([start, end]) => ({
    kind: "person_name",
    start,
    end,
    key: text.slice(start, end).toLowerCase().replace(/\s+/g, " "),
  }));
}

/**
 * Street addresses, by rules: there is no libpostal for Node, and the npm parsers (parse-address:
 * US only) split a string already known to be an address rather than find one in text. An
 * address here is a house number and a street name ending in a street type word, or for the
 * continental formats a street type word or compound and a number after it, optionally followed
 * on the same line (or, in a plain-text block, the next) by unit, city, state or region and
 * postcode:
 *
 * - US/Canada: `1600 Pennsylvania Ave NW, Washington, DC 20500`, `500 W Madison St #1200`,
 *   `123 Queen St W, Suite 500, Toronto, ON M5H 2M9` (USPS Publication 28 suffixes, directionals,
 *   unit designators, state and province codes, ZIP and Canadian postcodes);
 * - UK/Ireland: `10 Downing Street, London SW1A 2AA`, `Flat 4, 27 Kingsley Road, Manchester M21 9GH`;
 * - France: `12 rue de Rivoli, 75001 Paris`;
 * - German, Dutch, Nordic: `Friedrichstraße 43, 10117 Berlin`, `Unter den Linden 77, 10117 Berlin`,
 *   `Prinsengracht 263, 1016 GV Amsterdam`, `Nørregade 10, 1165 København`;
 * - Spanish, Italian, Portuguese: `Calle de Alcalá 42, 28014 Madrid`, `Via del Corso 12, 00186 Roma`,
 *   `Av. Paulista 1578, 01310-200 São Paulo`;
 * - PO boxes.
 *
 * The street name must be capitalised words (`3 files changed`, `200 OK`, `8080 port` are not
 * streets), and a type word that is also a common English word (Way, Park, Square, Loop) needs a
 * city, postcode, unit or directional after it to count.
 */
export interface PostalAddressSpan {
  kind: "postal_address";
  start: number;
  end: number;
  /** The address lower-cased, whitespace and punctuation collapsed. */
  key: string;
}

/** USPS Publication 28 street suffixes (and UK ones) that are rarely anything else after `<number> <Name>`. */
const STRONG_TYPES =
  "Street|St|Str|Avenue|Ave|Av|Boulevard|Blvd|Road|Rd|Drive|Dr|Lane|Ln|Court|Ct|Place|Pl|Terrace|Ter|Terr|Circle|Cir|Parkway|Pkwy|Pky|Highway|Hwy|Expressway|Expy|Freeway|Fwy|Turnpike|Tpke|Crescent|Cres|Alley|Aly|Trail|Trl|Avenida|Boulevard|Causeway|Cswy";
/** Suffixes that are also everyday words: they need a locality, unit or directional after them. */
const WEAK_TYPES =
  "Way|Square|Sq|Plaza|Plz|Park|Hill|Green|Grn|View|Walk|Row|Path|Pass|Run|Point|Pt|Loop|Close|Mews|Rise|Gardens|Gdns|Grove|Grv|Vale|Yard|Gate|Ridge|Rdg|Heights|Hts|Landing|Lndg|Crossing|Xing|Commons|Center|Ctr|Centre|Cove|Cv|Pike|Quay|Wharf|Parade|Esplanade|Embankment|Hollow|Creek|Crk|Glen|Meadows|Mdws|Manor|Trace|Bend|Bluff|Knoll|Summit";
/** Streets whose name is their type word: `200 Broadway, Cambridge`. */
const BARE_STREETS = "Broadway|Bowery|Kingsway";
const DIRECTIONAL = "(?:N|S|E|W|NE|NW|SE|SW|North|South|East|West)";
/** A street-name word: capitalised (Pennsylvania, O'Farrell, St, Mt), or an ordinal (1st, 42nd). */
const NAME_WORD = "(?:\\p{Lu}[\\p{L}\\p{M}'’-]*\\.?|\\d{1,3}(?:st|nd|rd|th))";
const UNIT =
  "(?:(?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|Rm|Room|Bldg|Building|Lot|Dept)\\.?\\s?#?\\s?[A-Za-z0-9-]{1,6}|#\\s?[A-Za-z0-9-]{1,6})";

const US_REGIONS =
  "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR|VI|GU|AS|MP|AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT";
const CITY = "\\p{Lu}[\\p{L}\\p{M}'’.-]*(?:[ -](?:(?:de|du|la|le|am|an|der|sur|en|di|del)[ -])?\\p{Lu}[\\p{L}\\p{M}'’.-]*){0,3}";
const ZIP = "(?:\\d{5}(?:-\\d{4})?|[A-Z]\\d[A-Z] ?\\d[A-Z]\\d)";
const UK_POSTCODE = "(?:[A-Z]{1,2}\\d[A-Z\\d]? ?\\d[A-Z]{2}|[AC-FHKNPRTV-Y]\\d{2} ?[AC-FHKNPRTV-Y\\d]{4})";
const EU_POSTCODE = "(?:[A-Z]{1,2}-)?(?:\\d{5}-\\d{3}|\\d{4}-\\d{3}|\\d{2}-\\d{3}|\\d{4} ?[A-Z]{2}|\\d{3} \\d{2}|\\d{4,5})";

/** `, City, ST 12345`, `, City ST`, `, City, ON M5H 2M9`, `, London SW1A 2AA`, `, St John's Wood, London NW8 9AY`. */
const EN_LOCALITY = `(?:,[ \\t]*(?:${CITY},[ \\t]*){0,2}${CITY},?[ \\t]+(?:(?:${US_REGIONS})(?:[ \\t]+${ZIP})?|${UK_POSTCODE})(?![\\p{L}\\p{N}])|,[ \\t]*${UK_POSTCODE}(?![\\p{L}\\p{N}]))`;
/** `, 75001 Paris`, `, 1016 GV Amsterdam`, `, 01310-200 São Paulo`. */
const EU_LOCALITY = `(?:,?[ \\t]+${EU_POSTCODE}[ \\t]+${CITY})`;

const HOUSE = "(?<![\\p{L}\\p{N}_.,:/#@$€£%+=-])\\d{1,6}(?:[A-Za-z](?![\\p{L}\\p{N}]))?(?:[-–]\\d{1,5})?";

/** Number first: `1600 Pennsylvania Ave NW, Washington, DC 20500`, matched where a candidate starts. */
const NUMBER_FIRST = new RegExp(
  `${HOUSE}[ \\t]+(?:${DIRECTIONAL}\\.?[ \\t]+)?((?:${NAME_WORD}[ \\t]+){1,4}|)(${STRONG_TYPES}|${WEAK_TYPES}|${BARE_STREETS})\\.?(?![\\p{L}\\p{N}'’-])((?:[ \\t]+${DIRECTIONAL}(?![\\p{L}\\p{N}]))?)((?:,?[ \\t]+${UNIT}(?![\\p{L}\\p{N}]))?)(${EN_LOCALITY}?)`,
  "uy",
);
/** Where a number-first address may start: a number, a space, a capital or an ordinal (without /u: fast). */
const NUMBER_FIRST_CANDIDATE =
  /\d[A-Za-z]?(?:[-–]\d{1,5})?[ \t]+(?:(?:[NSEW]|NE|NW|SE|SW|North|South|East|West)\.?[ \t]+)?(?:[A-Z]|\d{1,3}(?:st|nd|rd|th)[ \t])/g;
/** A unit before the number: `Flat 4, 27 Kingsley Road`. */
const UNIT_BEFORE = /(?:^|[^\p{L}\p{N}])((?:Flat|Apartment|Apt|Unit|Suite)[ \t]+[A-Za-z0-9]{1,5},?[ \t]+)$/u;

const WEAK_TYPE_SET = new Set(WEAK_TYPES.split("|"));
const BARE_STREET_SET = new Set(BARE_STREETS.split("|"));
/**
 * NUMBER_FIRST's type word as it matches it, after a space or tab: every number-first address has
 * one after its number, on its line. (Not after a letter: `android.widget.TextView`.)
 */
const TYPE_WORD = new RegExp(`(?<=[ \\t])(?:${STRONG_TYPES}|${WEAK_TYPES}|${BARE_STREETS})\\.?(?![\\p{L}\\p{N}'’-])`, "gu");

/** French: `12 rue de Rivoli, 75004 Paris`, `3 place de la Bourse`. */
const FRENCH_TYPES =
  "rue|avenue|av\\.|boulevard|bd|place|quai|chemin|allée|impasse|cours|route|square|passage|faubourg|promenade|esplanade|voie|parvis|rond-point";
const FRENCH = new RegExp(
  `${HOUSE}(?:[ \\t]?(?:bis|ter))?,?[ \\t]+(?:${FRENCH_TYPES})[ \\t]+(?:(?:de la|de l['’]|du|des|de|d['’])[ \\t]?)?\\p{Lu}[\\p{L}\\p{M}'’-]*(?:[ \\t](?:(?:de la|de l['’]|du|des|de|d['’]|la|le|les)[ \\t]?)?\\p{Lu}[\\p{L}\\p{M}'’-]*){0,4}(${EU_LOCALITY}?)`,
  "uy",
);
const FRENCH_CANDIDATE = new RegExp(`\\d(?:[ \\t]?(?:bis|ter))?,?[ \\t]+(?:${FRENCH_TYPES})[ \\t]`, "g");
/** The end of every FRENCH_CANDIDATE. */
const FRENCH_TYPE_WORD = new RegExp(`[ \\t](?:${FRENCH_TYPES})[ \\t]`, "g");

/** Compound street words that need no postcode (Friedrichstraße, Herrengasse, Prinsengracht, Nørregade). */
const STRONG_COMPOUND = "straße|strasse|str\\.|gasse|allee|gracht|straat|vej|gade|gatan|vägen|katu|chaussee";
/** Compound endings that are also English word endings (Spring, Offering): only with a postcode after. */
const WEAK_COMPOUND = "weg|platz|ring|damm|ufer|steig|pfad|kade|laan|plein|singel|dijk|gata|veien|gate|tie|markt|berg";
const SEPARATE_TYPE =
  "Calle|C/|Avenida|Avda\\.?|Av\\.|Paseo|Plaza|Carrer|Rua|Via|Viale|Corso|Piazza|Largo|Vicolo|Strada|Rambla|Travessa|Alameda|Praça|Rue";
const GERMAN_PREPOSITION = "Am|An der|An den|Auf der|Auf dem|Im|In der|In den|Unter den|Zum|Zur|Alt-";
const EU_WORDS = `\\p{Lu}[\\p{L}\\p{M}'’.-]*(?:[ \\t](?:(?:de|del|de la|dei|della|delle|degli|do|da|dos|das|di|du|des|von|van)[ \\t])?\\p{Lu}[\\p{L}\\p{M}'’.-]*){0,3}`;
const EU_HOUSE = "\\d{1,5}[a-zA-Z]?(?:[-–/]\\d{1,5}[a-zA-Z]?)?(?![\\p{L}\\p{N}.,]\\d|[\\p{L}\\p{N}])";

/** Street first, number after: compound street words, separate type words, German prepositional names. */
const STREET_FIRST = new RegExp(
  `(?<![\\p{L}\\p{N}_])(?:(\\p{Lu}[\\p{L}\\p{M}-]{2,}?(?:${STRONG_COMPOUND}))|(\\p{Lu}[\\p{L}\\p{M}-]{2,}?(?:${WEAK_COMPOUND}))|(?:${SEPARATE_TYPE})[ \\t]+(?:(?:de|del|de la|dei|della|delle|degli|do|da|dos|das|di)[ \\t]+)?${EU_WORDS}|((?:${GERMAN_PREPOSITION})[ \\t]?${EU_WORDS}))[ \\t]+${EU_HOUSE}((?:,?[ \\t]+|,?[ \\t]*\\n[ \\t]*)${EU_POSTCODE}[ \\t]+${CITY})?`,
  "gu",
);

/** Where a street-first address may end: a house number, then a postcode and a capitalised city. */
const POSTCODE_AFTER_NUMBER =
  /\d[a-zA-Z]?,?[ \t]*\n?[ \t]*(?:[A-Z]{1,2}-)?(?:\d{4,5}(?:-\d{3})?(?: ?[A-Z]{2})?|\d{2}-\d{3}|\d{3} \d{2})[ \t]+[A-ZÀ-Þ]/g;
/** ...or a compound street word that needs no postcode, then its number. */
const STRONG_COMPOUND_NUMBER = new RegExp(`(?:${STRONG_COMPOUND})[ \\t]+\\d`, "g");
/**
 * The space before the number of every STRONG_COMPOUND_NUMBER, looking back for the word: V8
 * tries a lower-case alternation (straße|gasse|...) at every letter, twice as slow.
 */
const STRONG_COMPOUND_SPACE = new RegExp(`[ \\t]\\d(?<=(?:${STRONG_COMPOUND})[ \\t]+\\d)`, "g");
/**
 * A piece every STREET_FIRST match has before its number: a compound street word's space before
 * the number, a separate type word, a German preposition.
 */
const STREET_FIRST_KEYWORD = new RegExp(
  `(?:${SEPARATE_TYPE})[ \\t]|(?:${GERMAN_PREPOSITION})[ \\t]?\\p{Lu}|[ \\t]\\d(?<=(?:${STRONG_COMPOUND}|${WEAK_COMPOUND})[ \\t]+\\d)`,
  "gu",
);

/** PO boxes: `PO Box 1234`, `P.O. Box 77, Austin, TX 78701`, `Postfach 10 01 23`. */
const PO_BOX = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:P\\.? ?O\\.? ?Box|Post Office Box|Postfach|Apartado|Casilla)[ \\t]+\\d[\\d ]{0,9}\\d?(${EN_LOCALITY}?)`,
  "gu",
);

/** A line that finishes an address block: `Austin, TX 78701`, `80331 München`, `London SW1A 2AA`. */
const LOCALITY_LINE = new RegExp(
  `^\\n[ \\t]*(?:${CITY},?[ \\t]+(?:(?:${US_REGIONS})[ \\t]+${ZIP}|${UK_POSTCODE})|${EU_POSTCODE}[ \\t]+${CITY})[ \\t]*(?=\\n|$)`,
  "u",
);

/**
 * Two whole-text tests that almost every text fails, in place of the five candidate scans below
 * for such a text. Every address has a capitalised street word (a type word after a space, a
 * separate type word, a German preposition, a PO box's word: capitals are rare enough for V8 to
 * look for these fast), or else, French and compound-word ones, a French type word after its
 * number or a compound street word before it (looked for from the digit: V8 tries a lower-case
 * alternation at every letter).
 */
const CAPITALISED_WORD = new RegExp(
  `${TYPE_WORD.source}|(?:${SEPARATE_TYPE})[ \\t]|(?:${GERMAN_PREPOSITION})[ \\t]?\\p{Lu}|Box|Postfach|Apartado|Casilla`,
  "u",
);
const LOWER_CASE_WORD = new RegExp(
  `\\d(?:(?:[ \\t]?(?:bis|ter))?,?[ \\t]+(?:${FRENCH_TYPES})[ \\t]|(?<=(?:${STRONG_COMPOUND}|${WEAK_COMPOUND})[ \\t]+\\d))`,
);

/**
 * The matches of `candidate` (a /g regex, from its lastIndex, which the caller may move on), less
 * those on lines before the next match of `marker`: for a candidate that can only be an address
 * with a marker match at or after its start on its line, one on an earlier line cannot be, and
 * the scan jumps to the marker's line.
 */
function onMarkedLines(text: string, candidate: RegExp, marker: RegExp): () => RegExpExecArray | null {
  let markerAt = -1;
  let lineStart = 0;
  candidate.lastIndex = 0;
  return () => {
    const from = candidate.lastIndex;
    if (markerAt < from) {
      marker.lastIndex = from;
      const m = marker.exec(text);
      if (!m) return null;
      markerAt = m.index;
      lineStart = text.lastIndexOf("\n", markerAt) + 1;
    }
    if (lineStart > from) candidate.lastIndex = lineStart;
    return candidate.exec(text);
  };
}

type Span = [number, number];

/** `[start, end)` extended by the next line when that line is the block's city and postcode. */
function withLocalityLine(text: string, start: number, end: number): Span {
  const rest = text.slice(end, end + 80);
  const m = LOCALITY_LINE.exec(rest);
  if (m) return [start, end + m[0].length];
  return [start, end];
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function trimEnd(text: string, start: number, end: number): number {
  let e = end;
  while (e > start && /[\s,.]/.test(text[e - 1] ?? "")) e--;
  // Keep the dot of an abbreviation (`Ave.`, `Str.`), drop a sentence's.
  if (text[e] === "." && /(?:^|[^\p{L}])(?:St|Ave|Av|Blvd|Rd|Dr|Ln|Ct|Pl|Str|Pkwy|Hwy)$/u.test(text.slice(Math.max(start, e - 6), e))) e++;
  return e;
}

export function findPostalAddresses(text: string): PostalAddressSpan[] {
  const capitalised = CAPITALISED_WORD.test(text);
  const lowerCase = LOWER_CASE_WORD.test(text);
  if (!capitalised && !lowerCase) return [];
  const found: Span[] = [];
  if (capitalised) {
    const next = onMarkedLines(text, NUMBER_FIRST_CANDIDATE, TYPE_WORD);
    for (let c = next(); c; c = next()) {
      let start = c.index;
      while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
      NUMBER_FIRST.lastIndex = start;
      const m = NUMBER_FIRST.exec(text);
      if (!m) {
        NUMBER_FIRST_CANDIDATE.lastIndex = c.index + 1;
        continue;
      }
      NUMBER_FIRST_CANDIDATE.lastIndex = start + m[0].length;
      const type = (m[2] as string).replace(/\.$/, "");
      const dir = m[3] as string;
      const unit = m[4] as string;
      const locality = m[5] as string;
      const bare = m[1] === "";
      if (bare !== BARE_STREET_SET.has(type)) continue;
      let end = trimEnd(text, start, start + m[0].length);
      if ((bare || WEAK_TYPE_SET.has(type)) && !dir && !unit && !locality) {
        // A weak type needs its locality, here on the next line.
        const e = withLocalityLine(text, start, end)[1];
        if (e === end) continue;
      }
      // The street name is capitalised words, not a heading's "3 The Best" or a log's "Step 3 Of".
      if (/^(?:The|A|An|Of|In|On|At|To|For|And|Or|By|From|With)\s/.test(m[1] as string)) continue;
      if (!locality) end = withLocalityLine(text, start, end)[1];
      const unitBefore = UNIT_BEFORE.exec(text.slice(Math.max(0, start - 24), start))?.[1];
      found.push([start - (unitBefore?.length ?? 0), end]);
    }
  }
  if (lowerCase) {
    const next = onMarkedLines(text, FRENCH_CANDIDATE, FRENCH_TYPE_WORD);
    for (let c = next(); c; c = next()) {
      let start = c.index;
      while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
      FRENCH.lastIndex = start;
      const m = FRENCH.exec(text);
      if (!m) continue;
      FRENCH_CANDIDATE.lastIndex = start + m[0].length;
      const end = trimEnd(text, start, start + m[0].length);
      found.push(m[1] ? [start, end] : withLocalityLine(text, start, end));
    }
  }
  // The street is before the number: look in a window around it.
  const streetFirst = (c: RegExpExecArray) => {
    const from = Math.max(0, c.index - 80);
    const window = text.slice(from, c.index + 120);
    for (const m of window.matchAll(STREET_FIRST)) {
      const start = from + m.index;
      if (start > c.index || start + m[0].length <= c.index) continue;
      const weak = m[2] !== undefined || m[3] !== undefined;
      if (weak && !m[4]) continue;
      found.push([start, trimEnd(text, start, start + m[0].length)]);
    }
  };
  // A match around a postcode has a keyword between the window's start and the postcode: the
  // first keyword from the window's start, looked up again only once the windows pass it.
  const keywordAfter = (from: number) => {
    STREET_FIRST_KEYWORD.lastIndex = from;
    return STREET_FIRST_KEYWORD.exec(text)?.index ?? -1;
  };
  let keywordAt = keywordAfter(0);
  if (keywordAt >= 0) {
    POSTCODE_AFTER_NUMBER.lastIndex = 0;
    for (let c = POSTCODE_AFTER_NUMBER.exec(text); c; c = POSTCODE_AFTER_NUMBER.exec(text)) {
      const from = Math.max(0, c.index - 80);
      if (keywordAt < from) {
        keywordAt = keywordAfter(from);
        if (keywordAt < 0) break;
      }
      if (keywordAt < c.index) streetFirst(c);
    }
  }
  if (lowerCase) {
    const next = onMarkedLines(text, STRONG_COMPOUND_NUMBER, STRONG_COMPOUND_SPACE);
    for (let c = next(); c; c = next()) streetFirst(c);
  }
  if (capitalised && /Box|Postfach|Apartado|Casilla/.test(text)) {
    for (const m of text.matchAll(PO_BOX)) {
      const end = trimEnd(text, m.index, m.index + m[0].length);
      found.push(m[1] ? [m.index, end] : withLocalityLine(text, m.index, end));
    }
  }
  if (found.length === 0) return [];
  found.sort((a, b) => b[1] - b[0] - (a[1] - a[0]) || a[0] - b[0]);
  const chosen: Span[] = [];
  for (const span of found) if (!chosen.some((c) => span[0] < c[1] && span[1] > c[0])) chosen.push(span);
  chosen.sort((a, b) => a[0] - b[0]);
  return chosen.map(([start, end]) => ({
    kind: "postal_address",
    start,
    end,
    key: text
      .slice(start, end)
      .toLowerCase()
      .replace(/[\s,.#]+/g, " ")
      .trim(),
  }));
}

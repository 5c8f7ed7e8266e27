/**
 * Deterministic FineWeb-style text documents for bench/mixture.bench.ts: web pages as text
 * (articles, how-tos, forum threads, product pages, the odd page of code or a table), one JSON
 * object per line `{"text", "id", "url"}` — the columns of a FineWeb shard.
 *
 * The vocabulary is what a tokenizer benchmark needs it to be: Zipf-distributed (rank r drawn
 * with probability ∝ 1/r, so "the" is ~6% of the words as in English) over ~40k words, the first
 * few hundred real function and common words, the rest made of real stems, prefixes and suffixes
 * (the long tail a word-piece cache misses on, as it misses on real web text's rare words). Numbers,
 * years, prices, percentages, dates, names, punctuation, headings, lists and some code-ish lines
 * (Python, shell, key = value, CSV rows) mixed in. Document lengths follow FineWeb's rough shape
 * (median ~2.5k characters, a long tail to ~80k).
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { Rng, seedOf } from "../synthetic/random.ts";
import { pythonFunction } from "../synthetic/text.ts";

const COMMON = `the of and to a in is that for it as was with be by on not he this are or his from at which but
have an they you were her she all their there been one has would will more if can when we who so no
what about up out into them some than time other only its new could these two may first then do any
like my now over such our man me even most made after also did many before must through back years
where much your way well down should because each just those people how too little state good very
make world still own see men work long get here between both life being under never day same another
know while last might us great old year off come since against go came right used take three states
himself few house use during without again place american around however home small found thought went
say part once general high upon school every does got united left number course war until always away
something fact though water less public put think almost hand enough far took head yet government system
better set told nothing night end why called didn find going look asked later knew point next program
city business give group toward young days let room president side social given present several order
national second possible rather per face among form important often things looked early white case john
become large big need four within felt along children saw best church ever least power development light
thing seemed family interest want members mind country area others done turned although open god service
certain kind problem began different door thus help sense means whole matter perhaps itself york times
human law line above name example company hands local show whether five history gave today either act
feet across taken past quite anything seen having death experience body word half really week car field
money information market price data research study report energy health water climate food music market`
  .split(/\s+/)
  .filter(Boolean);

/** Stems, prefixes and suffixes the long tail is made of: real morphemes, so the tail tokenizes
 * like real rare words (a few pieces each), not like random letters. */
const STEMS = `form act port struct nation press graph light work play land water stone wood iron gold field
farm trade craft ship build found ground mark stand hold keep bank book print paint sound voice word
speak write read count measure weigh plant grow seed root leaf flower fruit grain bread salt sugar milk
cook heat cool freeze burn power drive ride walk run move turn shift change place station store market
price cost pay sell buy lend loan tax rate fund stock share bond trust claim right law court judge rule
order govern elect vote serve guard arm fight war peace treaty border state region city town village
river lake sea coast island mountain valley forest desert storm rain snow wind cloud season harvest
engine motor wheel gear machine tool wire cable signal code program system network server process
data record file table index chart map plan design model pattern frame scale balance weight volume
health care cure treat heal doctor nurse patient clinic blood bone heart brain nerve muscle skin cell
gene virus germ drug dose test trial study learn teach school class lesson student scholar science
chemist physic biolog ecolog geolog astronom mathemat statist econom politic histor philosoph
music song dance art film theater story novel poem letter paper news report press journal camera
house home room wall roof floor door window garden street road bridge tower castle church temple
friend family parent child brother sister mother father marriage birth death life youth age
color shape size length height depth speed force energy charge current field wave particle atom
protect direct connect construct collect select reflect respect expect project inspect correct
inform perform reform transform conform deform develop envelop install instruct invent prevent`
  .split(/\s+/)
  .filter(Boolean);
const PREFIXES = [
  "",
  "",
  "",
  "",
  "",
  "",
  "",
  "",
  "",
  "",
  "",
  "",
  "",
  "",
  "re",
  "un",
  "in",
  "pre",
  "dis",
  "over",
  "under",
  "inter",
  "sub",
  "co",
  "counter",
  "multi",
  "non",
  "self-",
];
const SUFFIXES = [
  "",
  "",
  "",
  "s",
  "s",
  "ed",
  "ing",
  "er",
  "ers",
  "ion",
  "ions",
  "ment",
  "able",
  "ly",
  "ness",
  "ful",
  "less",
  "al",
  "ic",
  "ist",
  "ity",
  "ive",
  "ous",
  "y",
  "ize",
  "ical",
];
const TLDS = [".com", ".com", ".com", ".org", ".net", ".co.uk", ".de", ".io", ".edu", ".gov", ".info"];

const VOCAB_SIZE = 40_000;

/** The vocabulary by frequency rank: common English first, then made-up words (same every run). */
const VOCAB: string[] = (() => {
  const rng = new Rng(seedOf("mixture-bench-vocabulary"));
  const seen = new Set<string>(COMMON);
  const out = [...seen];
  while (out.length < VOCAB_SIZE) {
    const w = rng.pick(PREFIXES) + rng.pick(STEMS) + (rng.chance(0.08) ? rng.pick(STEMS) : "") + rng.pick(SUFFIXES);
    if (seen.has(w)) continue;
    seen.add(w);
    out.push(w);
  }
  return out;
})();

/** A word of Zipf rank r with probability ∝ 1/r: the inverse of the CDF ln(r)/ln(N). */
function zipfWord(rng: Rng): string {
  const rank = Math.floor((VOCAB.length + 1) ** rng.next()) - 1;
  return VOCAB[Math.min(rank, VOCAB.length - 1)] as string;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** A proper name: a made-up word from the tail, capitalized. */
const properName = (rng: Rng) => cap(VOCAB[rng.int(2000, VOCAB.length - 1)] as string);
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A number as web text writes one. */
function numberToken(rng: Rng): string {
  return rng.weighted<() => string>([
    [() => String(rng.int(1800, 2025)), 4],
    [() => String(rng.int(2, 99)), 5],
    [() => `${rng.int(1, 99)}.${rng.int(0, 9)}%`, 2],
    [() => `$${thousands(rng.int(1, 250000))}`, 2],
    [() => `${MONTHS[rng.int(0, 11)]} ${rng.int(1, 28)}, ${rng.int(1990, 2025)}`, 2],
    [() => `${rng.int(1, 500)} ${rng.pick(["km", "kg", "mg", "ml", "miles", "feet", "hours", "minutes", "GB", "MB"])}`, 2],
    [() => thousands(rng.int(1000, 9_999_999)), 1],
    [() => `${rng.int(0, 23)}:${String(rng.int(0, 59)).padStart(2, "0")}`, 1],
  ])();
}

function sentence(rng: Rng): string {
  const n = rng.quantiles({ min: 3, p10: 7, p50: 17, p90: 32, max: 60 });
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let w = rng.chance(0.025) ? numberToken(rng) : rng.chance(0.03) ? properName(rng) : zipfWord(rng);
    if (i > 2 && i < n - 2 && rng.chance(0.07)) w += rng.pick([",", ",", ",", ";", " -", ":"]);
    out.push(w);
  }
  if (rng.chance(0.05) && n > 6) {
    const at = rng.int(1, n - 3);
    out[at] = `(${out[at]}`;
    out[at + 1] = `${out[at + 1]})`;
  }
  if (rng.chance(0.04)) {
    out[0] = `"${out[0]}`;
    out[n - 1] = `${out[n - 1]}"`;
  }
  return `${cap(out.join(" "))}${rng.weighted([
    [".", 20],
    ["?", 1],
    ["!", 1],
  ] as const)}`;
}

function paragraph(rng: Rng): string {
  const n = rng.quantiles({ min: 1, p10: 1, p50: 4, p90: 9, max: 16 });
  return Array.from({ length: n }, () => sentence(rng)).join(" ");
}

function heading(rng: Rng): string {
  const n = rng.int(2, 8);
  return Array.from({ length: n }, (_, i) => (i === 0 || rng.chance(0.4) ? cap(zipfWord(rng)) : zipfWord(rng))).join(" ");
}

function list(rng: Rng): string {
  const marker = rng.pick(["- ", "* ", "• ", "#. "]);
  return Array.from({ length: rng.int(3, 9) }, (_, i) => {
    const item = rng.chance(0.5) ? heading(rng) : sentence(rng);
    return `${marker === "#. " ? `${i + 1}. ` : marker}${item}`;
  }).join("\n");
}

/** Code-ish lines: Python, a shell session, a config file, a CSV table. */
function codeBlock(rng: Rng): string {
  const kind = rng.weighted([
    ["python", 3],
    ["shell", 2],
    ["config", 2],
    ["csv", 2],
  ] as const);
  if (kind === "python") return pythonFunction(rng, rng.int(5, 20));
  if (kind === "shell")
    return Array.from({ length: rng.int(2, 8) }, () =>
      rng.weighted<() => string>([
        [() => `$ pip install ${zipfWord(rng)}==${rng.int(0, 9)}.${rng.int(0, 30)}.${rng.int(0, 9)}`, 1],
        [() => `$ cd ~/${zipfWord(rng)}/${zipfWord(rng)}`, 1],
        [() => `$ ls -la ${zipfWord(rng)}`, 1],
        [() => `$ curl -s https://api.${zipfWord(rng)}.com/v${rng.int(1, 3)}/${zipfWord(rng)}?id=${rng.int(1, 99999)}`, 1],
        [
          () =>
            `drwxr-xr-x  ${rng.int(2, 9)} user staff  ${rng.int(64, 4096)} ${MONTHS[rng.int(0, 11)]?.slice(0, 3)} ${rng.int(1, 28)} ${zipfWord(rng)}`,
          2,
        ],
      ])(),
    ).join("\n");
  if (kind === "config")
    return Array.from({ length: rng.int(3, 12) }, (_, i) =>
      i === 0 ? `[${zipfWord(rng)}]` : `${zipfWord(rng)}_${zipfWord(rng)} = ${rng.chance(0.5) ? rng.int(0, 9000) : `"${zipfWord(rng)}"`}`,
    ).join("\n");
  const columns = rng.int(3, 6);
  const header = Array.from({ length: columns }, () => cap(zipfWord(rng))).join(",");
  const rows = Array.from({ length: rng.int(3, 15) }, () =>
    Array.from({ length: columns }, (_, c) =>
      c === 0 ? properName(rng) : rng.chance(0.5) ? rng.int(0, 99999) : `${rng.int(0, 999)}.${rng.int(0, 99)}`,
    ).join(","),
  );
  return [header, ...rows].join("\n");
}

export interface TextDocumentRow {
  text: string;
  id: string;
  url: string;
}

/** One web page's text of about `chars` characters (rng decides its style). */
export function textDocument(rng: Rng, id: string): TextDocumentRow {
  const chars = rng.quantiles({ min: 150, p10: 500, p50: 2500, p90: 9000, max: 80000 });
  const style = rng.weighted([
    ["article", 6],
    ["howto", 2],
    ["forum", 2],
    ["technical", 1],
  ] as const);
  const blocks: string[] = [];
  let length = 0;
  const push = (block: string) => {
    blocks.push(block);
    length += block.length + 2;
  };
  if (style !== "forum" && rng.chance(0.7)) push(heading(rng));
  while (length < chars) {
    if (style === "forum") push(`${rng.chance(0.5) ? properName(rng) : `${zipfWord(rng)}_${rng.int(1, 999)}`} wrote:\n${paragraph(rng)}`);
    else if (style === "howto" && rng.chance(0.3)) push(list(rng));
    else if (style === "technical" && rng.chance(0.35)) push(codeBlock(rng));
    else if (rng.chance(0.04)) push(codeBlock(rng));
    else if (rng.chance(0.08)) push(heading(rng));
    else if (rng.chance(0.05)) push(list(rng));
    else push(paragraph(rng));
  }
  const host = `${rng.chance(0.5) ? "www." : ""}${zipfWord(rng)}${rng.chance(0.3) ? zipfWord(rng) : ""}${rng.pick(TLDS)}`;
  const slug = Array.from({ length: rng.int(1, 6) }, () => zipfWord(rng)).join("-");
  return { text: blocks.join("\n\n"), id, url: `https://${host}/${rng.chance(0.4) ? `${rng.int(2005, 2025)}/` : ""}${slug}` };
}

/** A FineWeb-style id (`<urn:uuid:…>`) drawn from the rng. */
export function urnId(rng: Rng): string {
  const h = rng.hex(32);
  return `<urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}>`;
}

export interface TextCorpus {
  path: string;
  /** Bytes of the JSONL file. */
  bytes: number;
  /** UTF-8 bytes of the documents' text alone. */
  textBytes: number;
  documents: number;
}

/**
 * Writes documents as JSONL (`{"text","id","url"}` per line) until their text reaches
 * `textBytes` UTF-8 bytes; same arguments → same bytes. `stream` keeps corpora apart (the 10×
 * corpus and the mixture's text are other documents than the 1× corpus, never its repeats).
 */
export function writeTextJsonl(path: string, textBytes: number, seed: number, stream: string): TextCorpus {
  const rng = new Rng(seedOf(seed, "mixture-bench-text", stream));
  const fd = openSync(path, "w");
  const result: TextCorpus = { path, bytes: 0, textBytes: 0, documents: 0 };
  let pending: string[] = [];
  let pendingBytes = 0;
  try {
    while (result.textBytes < textBytes) {
      const row = textDocument(rng, urnId(rng));
      const line = `${JSON.stringify(row)}\n`;
      const size = Buffer.byteLength(line);
      pending.push(line);
      pendingBytes += size;
      result.bytes += size;
      result.textBytes += Buffer.byteLength(row.text);
      result.documents += 1;
      if (pendingBytes >= 4 << 20) {
        writeSync(fd, pending.join(""));
        pending = [];
        pendingBytes = 0;
      }
    }
    writeSync(fd, pending.join(""));
  } finally {
    closeSync(fd);
  }
  return result;
}

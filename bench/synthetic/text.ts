/**
 * Word pools and small text builders shared by the domain generators. Picks are Zipf-skewed so
 * common words repeat the way they do in real tool output, while the long tail keeps most
 * observations mostly new relative to their action (what the masking statistics look at).
 */
import type { Rng } from "./random.ts";

const ENGLISH = `the of and to in is for that on with as it by this are be from at or an was have not you
which but all can has more will one their also other about new if we its been when there use may
into only time these such some data than any should after most first two where file value system
user set used each would between under output number error line name type default support version
function return list result test case object string check update change build path issue request
server client table field record key config option model state event page item query source target
module package service process message response report image link access option session account
device window button menu view form input format code text local remote network storage memory
level start stop open close read write load save delete create find match parse run call handle
support current previous next total count size length index range block node tree task step order
group status level mode flag limit timeout retry cache token stream buffer batch shard worker job
quick brown simple example sample main common public private global local internal external
history weather city price market product customer invoice payment shipping address company team
project release feature bug fix patch commit branch merge review comment author date month year
science research paper study result method analysis dataset training evaluation benchmark score
energy climate water food health music movie book game sport travel hotel flight ticket school`.split(/\s+/);

const TECH = `config parser handler manager client server session request response cache store loader
reader writer buffer stream token encoder decoder schema validator router controller service
utils helpers models views tests fixtures settings registry plugin adapter backend frontend core
api cli io db auth user admin item order payment queue worker scheduler logger metrics tracer
index search query filter mapper reducer builder factory context runtime kernel driver channel`.split(/\s+/);

const NAMES = `alice bob carol dave erin frank grace heidi ivan judy mallory oscar peggy trent victor walter
olivia liam emma noah ava mia lucas ethan sofia mateo chen wei yuki hiro priya arjun fatima omar`.split(/\s+/);

export const SITES = [
  "en.wikipedia.org",
  "github.com",
  "stackoverflow.com",
  "docs.python.org",
  "developer.mozilla.org",
  "www.reddit.com",
  "medium.com",
  "www.nytimes.com",
  "arxiv.org",
  "www.bbc.com",
  "news.ycombinator.com",
  "www.youtube.com",
  "learn.microsoft.com",
  "www.geeksforgeeks.org",
  "pypi.org",
  "www.npmjs.com",
];

export const word = (rng: Rng) => rng.zipf(ENGLISH);
export const techWord = (rng: Rng) => rng.zipf(TECH);
export const personName = (rng: Rng) => rng.pick(NAMES);
export const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function words(rng: Rng, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(word(rng));
  return out.join(" ");
}

export function sentence(rng: Rng, min = 6, max = 18): string {
  return `${capitalize(words(rng, rng.int(min, max)))}.`;
}

export function paragraph(rng: Rng, sentences = rng.int(2, 5)): string {
  return Array.from({ length: sentences }, () => sentence(rng)).join(" ");
}

export function identifier(rng: Rng): string {
  return rng.chance(0.5) ? `${techWord(rng)}_${word(rng)}` : `${word(rng)}_${techWord(rng)}`;
}

export function className(rng: Rng): string {
  return capitalize(word(rng)) + capitalize(techWord(rng));
}

/** A Python function of about `lines` lines, the kind SWE observations are full of. */
export function pythonFunction(rng: Rng, lines: number): string {
  const name = identifier(rng);
  const args = Array.from({ length: rng.int(1, 3) }, () => word(rng)).join(", ");
  const out = [`def ${name}(${args}):`, `    """${sentence(rng, 4, 10)}"""`];
  const vars = [word(rng), identifier(rng), word(rng)];
  for (let i = 2; i < lines - 1; i++) {
    const v = rng.pick(vars);
    out.push(
      rng.weighted([
        [`    ${v} = ${rng.pick(vars)}.${techWord(rng)}(${rng.int(0, 99)})`, 4],
        [`    if ${v} is None:`, 2],
        [`        raise ValueError("${words(rng, rng.int(2, 6))}")`, 1],
        [`    for ${word(rng)} in ${v}:`, 1],
        [`        ${v}.append(${identifier(rng)}(${word(rng)}))`, 2],
        [`    # ${sentence(rng, 3, 9)}`, 1],
        [`    logger.debug("${word(rng)} %s", ${v})`, 1],
      ]),
    );
  }
  out.push(`    return ${rng.pick(vars)}`);
  return out.join("\n");
}

/** A Python source file of about `chars` characters. */
export function pythonFile(rng: Rng, chars: number): string {
  const head = [
    `"""${sentence(rng, 4, 9)}"""`,
    "import logging",
    `from .${techWord(rng)} import ${className(rng)}`,
    "",
    "logger = logging.getLogger(__name__)",
    "",
  ];
  const parts = [head.join("\n")];
  let length = parts[0]?.length ?? 0;
  while (length < chars) {
    const fn = pythonFunction(rng, rng.int(5, 18));
    parts.push(fn);
    length += fn.length + 2;
  }
  return `${parts.join("\n\n")}\n`;
}

export function repoPath(rng: Rng, pkg: string, ext = ".py"): string {
  const dir = rng.weighted([
    [`${pkg}`, 3],
    [`${pkg}/${techWord(rng)}`, 3],
    ["tests", 2],
    [`${pkg}/_internal`, 1],
  ]);
  return `${dir}/${rng.chance(0.3) && dir === "tests" ? `test_${techWord(rng)}` : techWord(rng)}${ext}`;
}

export function isoDate(rng: Rng): string {
  const d = new Date(Date.UTC(2024, 0, 1) + rng.int(0, 700 * 86400) * 1000);
  return d.toISOString().slice(0, 19);
}

/** Cuts `text` to about `chars` characters at a line break when there is one. */
export function cutAt(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const cut = text.lastIndexOf("\n", chars);
  return text.slice(0, cut > chars / 2 ? cut : chars);
}

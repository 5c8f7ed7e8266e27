/**
 * Cost of near-dedup signatures: documents/s and MB/s of
 * `new MinHasher({ ngram: 5, bands: 14, rows: 8, seed: 0 }).bandKeys(hashWords(canonicalForHashing(text)))`
 * over ~20 MB of synthetic trajectories (bench/synthetic, all domains in their corpus shares), one
 * core, with each step timed on its own too. Times are CPU time (process.cpuUsage), best of
 * --repeat, so other load on the machine moves them less. Not a test.
 *
 * When .venv-bench has datatrove (bench/datatrove/setup.sh), its MinHash signature step runs on the
 * same documents for comparison: `MinhashDedupSignature.get_signature(get_shingles(text))`, same
 * 5-grams × 14 bands × 8 rows, with a str.split word tokenizer (its default English tokenizer
 * needs spaCy, which the venv lacks; spaCy would only be slower).
 *
 *   node bench/curate/minhash-speed.ts [--mb 20] [--repeat 3] [--no-datatrove]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DOMAINS, type Domain } from "../../src/core/trajectory.ts";
import { canonicalForHashing, hashWords } from "../../src/curate/canonical-text.ts";
import { MinHasher } from "../../src/curate/minhash.ts";
import { androidTrajectory } from "../synthetic/domains/android.ts";
import { mcpTrajectory } from "../synthetic/domains/mcp.ts";
import { osTrajectory } from "../synthetic/domains/os.ts";
import { searchTrajectory } from "../synthetic/domains/search.ts";
import { sweTrajectory } from "../synthetic/domains/swe.ts";
import { terminalTrajectory } from "../synthetic/domains/terminal.ts";
import { webTrajectory } from "../synthetic/domains/web.ts";
import { type CanonicalRecord, type DomainParams, PARAMS } from "../synthetic/params.ts";
import { Rng, seedOf } from "../synthetic/random.ts";

const GENERATORS: Record<Domain, (rng: Rng, id: string, p: DomainParams) => CanonicalRecord> = {
  swe: sweTrajectory,
  terminal: terminalTrajectory,
  web: webTrajectory,
  search: searchTrajectory,
  mcp: mcpTrajectory,
  android: androidTrajectory,
  os: osTrajectory,
};

const { values } = parseArgs({
  options: { mb: { type: "string", default: "20" }, repeat: { type: "string", default: "3" }, "no-datatrove": { type: "boolean" } },
});
const targetBytes = Number(values.mb) * 1e6;
const repeat = Number(values.repeat);

// One document per trajectory: its turns' text, as the signatures stage hashes it.
const docs: string[] = [];
let bytes = 0;
for (const domain of DOMAINS) {
  const rng = new Rng(seedOf(7, domain));
  let domainBytes = 0;
  for (let i = 0; domainBytes < targetBytes * PARAMS[domain].share; i++) {
    const record = GENERATORS[domain](rng, `${domain}-${i}`, PARAMS[domain]);
    const text = record.turns.map((t) => `${t.action}\n${t.observation}`).join("\n");
    docs.push(text);
    domainBytes += Buffer.byteLength(text);
  }
  bytes += domainBytes;
}
const mb = bytes / 1e6;

const hasher = new MinHasher({ ngram: 5, bands: 14, rows: 8, seed: 0 });
const canonical = docs.map(canonicalForHashing);
const words = canonical.map(hashWords);
const wordCount = words.reduce((sum, w) => sum + w.length, 0);

function report(label: string, seconds: number): void {
  const rate = `${(docs.length / seconds).toFixed(0).padStart(8)} docs/s  ${(mb / seconds).toFixed(1).padStart(6)} MB/s`;
  console.log(`${label.padEnd(48)} ${seconds.toFixed(3).padStart(7)} s  ${rate}`);
}

/** Best CPU seconds of `repeat` runs after a warm-up. */
function best(label: string, run: () => void): number {
  run();
  let seconds = Number.POSITIVE_INFINITY;
  for (let r = 0; r < repeat; r++) {
    const started = process.cpuUsage();
    run();
    const used = process.cpuUsage(started);
    seconds = Math.min(seconds, (used.user + used.system) / 1e6);
  }
  report(label, seconds);
  return seconds;
}

const DATATROVE = `
import json, sys, time
import numpy as np
from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupSignature
from datatrove.utils.word_tokenizers import WordTokenizer

class Split(WordTokenizer):
    def word_tokenize(self, text): return text.split()
    def sent_tokenize(self, text): return [text]
    def span_tokenize(self, text): return [(0, len(text))]

docs = json.load(open(sys.argv[1]))
repeat = int(sys.argv[2])
step = MinhashDedupSignature(sys.argv[3], config=MinhashConfig(n_grams=5, num_buckets=14, hashes_per_bucket=8), language=Split())
def run():
    for doc in docs:
        shingles = step.get_shingles(doc)
        if shingles.size: step.get_signature(shingles)
run()
best = float("inf")
for _ in range(repeat):
    started = time.process_time()
    run()
    best = min(best, time.process_time() - started)
print(best)
`;

console.log(
  `${docs.length} documents, ${mb.toFixed(1)} MB, ${(wordCount / 1e6).toFixed(2)}M words (${(bytes / wordCount).toFixed(1)} bytes/word); best of ${repeat}, one core`,
);
let sink = 0;
best("canonicalForHashing", () => {
  for (const doc of docs) sink += canonicalForHashing(doc).length;
});
best("hashWords (of canonical text)", () => {
  for (const text of canonical) sink += hashWords(text).length;
});
best("MinHasher.signature (of words)", () => {
  for (const w of words) sink += hasher.signature(w)?.[0] ?? 0;
});
best("MinHasher.bandKeys (of words)", () => {
  for (const w of words) sink += hasher.bandKeys(w)?.length ?? 0;
});
best("all: bandKeys(hashWords(canonicalForHashing))", () => {
  for (const doc of docs) sink += hasher.bandKeys(hashWords(canonicalForHashing(doc)))?.length ?? 0;
});
if (sink === 0.5) console.log(sink);

const python = join(import.meta.dirname, "../../.venv-bench/bin/python");
if (!values["no-datatrove"] && existsSync(python)) {
  const dir = mkdtempSync(join(tmpdir(), "minhash-speed-"));
  try {
    writeFileSync(join(dir, "docs.json"), JSON.stringify(docs));
    const run = spawnSync(python, ["-c", DATATROVE, join(dir, "docs.json"), String(repeat), join(dir, "out")], {
      encoding: "utf8",
      env: { ...process.env, OMP_NUM_THREADS: "1", OPENBLAS_NUM_THREADS: "1", MKL_NUM_THREADS: "1" },
    });
    const seconds = Number(run.stdout.trim().split("\n").at(-1));
    if (run.status === 0 && Number.isFinite(seconds)) report("datatrove get_signature(get_shingles(text))", seconds);
    else console.log(`datatrove comparison failed: ${run.stderr.trim().split("\n").at(-1)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else if (!values["no-datatrove"]) console.log("datatrove comparison skipped: no .venv-bench (bash bench/datatrove/setup.sh)");

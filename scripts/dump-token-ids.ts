/**
 * Writes {text, ids} JSON lines: our tokenizer's ids for each text of a corpus, so the Python
 * reference (test/python/check_tokenizer_parity.py) can compare them with `tokenizers`.
 *   node scripts/dump-token-ids.ts <tokenizer> <out.jsonl> <file>...
 * Each file is cut into pieces at blank lines, plus the whole file, to vary the contexts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { loadTokenizer } from "../src/tokenize/load-tokenizer.ts";

const [name, out, ...files] = process.argv.slice(2);
if (!name || !out || files.length === 0) {
  console.error("usage: node scripts/dump-token-ids.ts <tokenizer> <out.jsonl> <file>...");
  process.exit(2);
}
const tokenizer = loadTokenizer({ name });
const lines: string[] = [];
for (const file of files) {
  const text = readFileSync(file, "utf8");
  for (const piece of [text, ...text.split(/\n\s*\n/)]) {
    if (piece === "") continue;
    const ids = Array.from(tokenizer.encodeOrdinary(tokenizer.normalize(piece)));
    lines.push(JSON.stringify({ file, text: piece, ids }));
  }
}
writeFileSync(out, `${lines.join("\n")}\n`);
console.log(`${lines.length} texts from ${files.length} files → ${out}`);

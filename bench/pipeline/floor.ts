/**
 * The tokenizer-only floor: the pipeline's own tokenizer (src/tokenize/load-tokenizer.ts)
 * encoding exactly the text a run tokenizes — each trajectory read, normalized and turned into
 * its chat messages as the pipeline does — and nothing else. Preparing the text is not timed;
 * only `encodeOrdinary(normalize(text))` is. No tokenizing pipeline can consume this input
 * faster per core, so end-to-end / floor says how much the rest of the pipeline costs.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load-config.ts";
import { normalizeTrajectory } from "../../src/normalize/normalize-trajectory.ts";
import { canonicalJsonlReader } from "../../src/read/canonical-jsonl.ts";
import { loadSystemPrompts } from "../../src/render/system-prompts.ts";
import { trajectoryMessages } from "../../src/render/trajectory-messages.ts";
import { loadTokenizer } from "../../src/tokenize/load-tokenizer.ts";

export interface FloorResult {
  inputBytes: number;
  /** UTF-8 bytes of message text encoded (after normalization and rendering into messages). */
  textBytes: number;
  tokens: number;
  wallS: number;
  /** CPU seconds (user + system) of this process while encoding. */
  cpuS: number;
}

/** Encodes the corpus's message text file by file (memory stays at one file's text). */
export async function tokenizerFloor(configPath: string, corpusDir: string): Promise<FloorResult> {
  const { config } = loadConfig(configPath);
  // The bare tiktoken core, as the floor defines it; the pipeline adds a piece cache.
  const tokenizer = loadTokenizer(config.tokenizer, { pieceCache: false });
  const prompts = loadSystemPrompts(config.render.system_prompts_dir);
  const result: FloorResult = { inputBytes: 0, textBytes: 0, tokens: 0, wallS: 0, cpuS: 0 };
  tokenizer.encodeOrdinary(tokenizer.normalize("warm up the encoder once")); // not timed
  for (const name of readdirSync(corpusDir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()) {
    const path = join(corpusDir, name);
    result.inputBytes += statSync(path).size;
    const texts: string[] = [];
    for await (const item of canonicalJsonlReader.read(path, { maxLineBytes: config.input.max_line_bytes })) {
      if (item.kind !== "trajectory") continue;
      const trajectory = await normalizeTrajectory(item.trajectory, config.normalize, new Map());
      for (const message of trajectoryMessages(trajectory, prompts)) texts.push(message.content);
    }
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (const text of texts) result.tokens += tokenizer.encodeOrdinary(tokenizer.normalize(text)).length;
    result.wallS += (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    result.cpuS += (used.user + used.system) / 1e6;
    for (const text of texts) result.textBytes += Buffer.byteLength(text);
  }
  return result;
}

/**
 * The job config the benchmark runs: configs/defaults.yaml (Qwen3, turn-stats masking, zstd
 * Parquet) over the synthetic corpus, with the format named rather than detected and, when this
 * checkout's config has the key, tasks of ~1/16 of the corpus so two workers share many tasks as
 * they do on a real corpus (the default, 256 MiB, would make a small corpus a single task).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./runners.ts";

export function benchTaskBytes(corpusBytes: number): number | undefined {
  const defaults = readFileSync(join(ROOT, "configs/defaults.yaml"), "utf8");
  return /^\s+task_bytes:/m.test(defaults) ? Math.max(1 << 20, Math.ceil(corpusBytes / 16)) : undefined;
}

export function writeJobConfig(path: string, corpusDir: string, outputDir: string, taskBytes: number | undefined): string {
  const lines = [
    "# Written by bench/pipeline.bench.ts: the synthetic corpus, Qwen3 tokenizer, turn-stats masking.",
    "inputs:",
    `  - path: ${corpusDir}/*.jsonl`,
    "    format: canonical-jsonl",
    ...(taskBytes ? ["input:", `  task_bytes: ${taskBytes}`] : []),
    "tokenizer:",
    "  name: qwen3",
    "mask:",
    "  policy: turn-stats",
    "output:",
    `  dir: ${outputDir}`,
  ];
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

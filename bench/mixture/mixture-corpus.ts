/**
 * The synthetic mixture of bench/mixture.bench.ts: canonical JSONL trajectories of three domains
 * (swe, terminal, mcp; bench/synthetic's generators and measured shapes) and FineWeb-style text
 * documents as JSONL (bench/mixture/text-corpus.ts), several files each so the job has tasks,
 * and the job config that mixes them with target shares and a fixed factor.
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { mcpTrajectory } from "../synthetic/domains/mcp.ts";
import { sweTrajectory } from "../synthetic/domains/swe.ts";
import { terminalTrajectory } from "../synthetic/domains/terminal.ts";
import { type CanonicalRecord, type DomainParams, PARAMS } from "../synthetic/params.ts";
import { Rng, seedOf } from "../synthetic/random.ts";
import { writeTextJsonl } from "./text-corpus.ts";

type TrajectoryDomain = "swe" | "terminal" | "mcp";
const GENERATORS: Record<TrajectoryDomain, (rng: Rng, id: string, p: DomainParams) => CanonicalRecord> = {
  swe: sweTrajectory,
  terminal: terminalTrajectory,
  mcp: mcpTrajectory,
};

/** Share of the corpus bytes per part (a choice: text the largest part, as in a CPT mix). */
export const PARTS: Record<TrajectoryDomain | "knowledge", number> = { knowledge: 0.4, swe: 0.2, terminal: 0.15, mcp: 0.25 };

/** A source's weight in the job config, as `mixture.sources.<name>` takes it. */
export type SourceWeight = { share: number } | { factor: number };

/** The stated mix: two target shares of trained tokens and a fixed factor; swe keeps factor 1. */
export const WEIGHTS: Record<string, SourceWeight> = { knowledge: { share: 0.3 }, mcp: { share: 0.2 }, terminal: { factor: 1.5 } };

export interface MixtureCorpus {
  dir: string;
  bytes: number;
  files: number;
  /** Records written per part (trajectories; documents for knowledge). */
  records: Record<string, number>;
  partBytes: Record<string, number>;
}

/** About 8 files per part; never files under 256 KiB. */
function filesFor(bytes: number): number {
  return Math.max(1, Math.min(8, Math.round(bytes / (256 << 10))));
}

function writeTrajectories(path: string, domain: TrajectoryDomain, target: number, rng: Rng, idPrefix: string) {
  const fd = openSync(path, "w");
  let bytes = 0;
  let records = 0;
  try {
    let pending: string[] = [];
    let pendingBytes = 0;
    while (bytes < target) {
      const line = `${JSON.stringify(GENERATORS[domain](rng, `${idPrefix}-${records}`, PARAMS[domain]))}\n`;
      const size = Buffer.byteLength(line);
      pending.push(line);
      pendingBytes += size;
      bytes += size;
      records += 1;
      if (pendingBytes >= 1 << 20) {
        writeSync(fd, pending.join(""));
        pending = [];
        pendingBytes = 0;
      }
    }
    writeSync(fd, pending.join(""));
  } finally {
    closeSync(fd);
  }
  return { bytes, records };
}

/** Writes `<part>-NNNNN.jsonl` files into `dir`; same options → same bytes. */
export function generateMixtureCorpus(dir: string, bytes: number, seed: number): MixtureCorpus {
  mkdirSync(dir, { recursive: true });
  const corpus: MixtureCorpus = { dir, bytes: 0, files: 0, records: {}, partBytes: {} };
  for (const [part, share] of Object.entries(PARTS)) {
    const partBytes = bytes * share;
    const count = filesFor(partBytes);
    corpus.records[part] = 0;
    corpus.partBytes[part] = 0;
    for (let i = 0; i < count; i++) {
      const path = join(dir, `${part}-${String(i).padStart(5, "0")}.jsonl`);
      let written: { bytes: number; records: number };
      if (part === "knowledge") {
        const text = writeTextJsonl(path, partBytes / count, seed, `mixture-${i}`);
        written = { bytes: text.bytes, records: text.documents };
      } else {
        const rng = new Rng(seedOf(seed, "mixture-bench", part, i));
        written = writeTrajectories(path, part as TrajectoryDomain, partBytes / count, rng, `mix-${seed}-${part}-${i}`);
      }
      corpus.bytes += written.bytes;
      corpus.files += 1;
      corpus.records[part] = (corpus.records[part] ?? 0) + written.records;
      corpus.partBytes[part] = (corpus.partBytes[part] ?? 0) + written.bytes;
    }
  }
  return corpus;
}

/**
 * The mixture job: trajectories (canonical-jsonl) and documents (text-jsonl) named by format,
 * tasks of ~1/16 of the corpus, configs/defaults.yaml otherwise (turn-stats masking, unpacked).
 */
export function writeMixtureConfig(
  path: string,
  corpus: MixtureCorpus,
  outputDir: string,
  seed: number,
  weights: Record<string, SourceWeight> = WEIGHTS,
): string {
  const taskBytes = Math.max(1 << 20, Math.ceil(corpus.bytes / 16));
  const weight = (w: SourceWeight) => ("share" in w ? `{ share: ${w.share} }` : `{ factor: ${w.factor} }`);
  const lines = [
    "# Written by bench/mixture.bench.ts: three trajectory domains and FineWeb-style text, mixed by target shares.",
    "inputs:",
    ...Object.keys(PARTS).flatMap((part) => [
      `  - path: ${corpus.dir}/${part}-*.jsonl`,
      `    format: ${part === "knowledge" ? "text-jsonl" : "canonical-jsonl"}`,
    ]),
    "input:",
    `  task_bytes: ${taskBytes}`,
    "tokenizer:",
    "  name: qwen3",
    "mixture:",
    `  seed: ${seed}`,
    "  sources:",
    ...Object.entries(weights).map(([name, w]) => `    ${name}: ${weight(w)}`),
    "output:",
    `  dir: ${outputDir}`,
  ];
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}
